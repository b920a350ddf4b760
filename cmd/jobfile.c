/*  cmd/jobfile.c - a description: read from a file (weir run -f), or
    joined from the arguments, and a caret under what an error points at.

    A long job is easier to read on several lines with comments.  The
    file's text goes to the engine with its comments and line breaks
    blanked, byte for byte, so that every offset an error points at is
    the same in the file: a caret is drawn under the file's line.  */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

//  The description language's limit (pipeline/parse.h): a larger file
//  is refused as it is read
#define S_MAX (1 << 20)

static int s_blank (char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

//  TEXT with its comments and line breaks turned into blanks: '#' at the
//  start of a word, outside quotes, to the end of its line.  Quotes are
//  read as the description language reads them.
static void s_blank_out (char *text)
{
    char quote = 0;
    for (char *p = text; *p; p++) {
        if (quote) {
            if (quote == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
                p++;
            else if (*p == quote)
                quote = 0;
            continue;
        }
        if (*p == '\'' || *p == '"')
            quote = *p;
        else if (*p == '#' && (p == text || s_blank (p[-1]) || p[-1] == '!'))
            while (*p && *p != '\n')
                *p++ = ' ';
        if (s_blank (*p))
            *p = ' ';
        if (!*p)
            break;
    }
}

//  FILE's description for weir COMMAND: see cmd_description_read
static int s_read (const char *command, const char *path, char **text, char **lines)
{
    *text = *lines = NULL;
    int stdin_ = strcmp (path, "-") == 0;
    FILE *f = stdin_ ? stdin : fopen (path, "rb");
    if (!f) {
        cmd_error (command, "cannot open the description '%s': %s", path, strerror (errno));
        return -1;
    }
    char *buf = malloc (S_MAX + 1);
    size_t n = buf ? fread (buf, 1, S_MAX + 1, f) : 0;
    int failed = buf && ferror (f);
    if (!stdin_)
        fclose (f);
    if (!buf || failed || n > S_MAX || memchr (buf, '\0', n)) {
        if (!buf)
            cmd_error (command, "out of memory");
        else if (failed)
            cmd_error (command, "cannot read the description '%s'", path);
        else if (n > S_MAX)
            cmd_error (command, "the description '%s' is larger than %d bytes", path, S_MAX);
        else
            cmd_error (command, "the description '%s' holds a NUL byte at byte %zu: it is no text",
                       stdin_ ? "(standard input)" : path, (size_t) ((char *) memchr (buf, '\0', n) - buf));
        free (buf);
        return -1;
    }
    buf[n] = '\0';
    *lines = buf;
    if (!(*text = strdup (buf))) {
        cmd_error (command, "out of memory");
        free (buf);
        *lines = NULL;
        return -1;
    }
    s_blank_out (*text);
    return 0;
}

//  The line of LINES (read from PATH) that OFFSET is in, with its number
//  and column, and a caret under it
static void s_file_caret (const char *path, const char *lines, long offset)
{
    size_t len = strlen (lines);
    if (offset < 0)
        return;
    if ((size_t) offset > len)
        offset = (long) len;
    //  The line of OFFSET, and its column
    const char *start = lines;
    unsigned line = 1;
    for (const char *p = lines; p < lines + offset; p++)
        if (*p == '\n') {
            start = p + 1;
            line++;
        }
    const char *end = strchr (start, '\n');
    int width = (int) (end ? end - start : (long) strlen (start));
    if (width > 0 && start[width - 1] == '\r')
        width--;
    long column = offset - (long) (start - lines);
    if (column > width)
        column = width;
    fprintf (stderr, "  %s:%u:%ld:\n  ", strcmp (path, "-") ? path : "(standard input)", line, column + 1);
    for (int i = 0; i < width; i++)
        fputc (start[i] == '\t' ? ' ' : start[i], stderr);
    fprintf (stderr, "\n  %*s^\n", (int) column, "");
}

//  The arguments joined with blanks: the shell may have split the
//  description.  NULL when out of memory.
static char *s_join (int argc, char **argv)
{
    size_t size = 1;
    for (int i = 0; i < argc; i++)
        size += strlen (argv[i]) + 1;
    char *text = malloc (size), *p = text;
    if (!text)
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (i)
            *p++ = ' ';
        size_t n = strlen (argv[i]);
        memcpy (p, argv[i], n);
        p += n;
    }
    *p = '\0';
    return text;
}

void cmd_description_caret (const char *file, const char *text, const char *lines, long offset)
{
    if (lines) {
        s_file_caret (file, lines, offset);
        return;
    }
    if (offset < 0 || !text)
        return;
    if ((size_t) offset > strlen (text))
        offset = (long) strlen (text);
    fprintf (stderr, "  ");
    for (const char *p = text; *p; p++)
        fputc (*p == '\n' || *p == '\t' ? ' ' : *p, stderr);
    fprintf (stderr, "\n  %*s^\n", (int) offset, "");
}

int cmd_description_read (const char *command, const char *file, int argc, char **argv, char **text,
                          char **lines)
{
    *text = *lines = NULL;
    if (file)
        return s_read (command, file, text, lines) ? CMD_EXIT_USAGE : 0;
    if (!(*text = s_join (argc, argv))) {
        cmd_error (command, "out of memory");
        return CMD_EXIT_FAILURE;
    }
    return 0;
}
