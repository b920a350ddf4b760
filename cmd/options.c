/*  cmd/options.c - the subcommands' tables turned into getopt's arguments
    and --help texts.  The man page (cmd/manual.c) and the completion
    (cmd/complete.c) read the same tables.  */
#include "cmd.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

//  --help is read in a terminal: nothing goes past this column
#define S_WIDTH 79
//  Where an option's summary starts
#define S_SUMMARY_COLUMN 20

void cmd_getopt_init (cmd_getopt *self, const cmd_command *command)
{
    memset (self, 0, sizeof *self);
    char *s = self->shorts;
    //  '+': stop at the first operand, so that a description word such as
    //  "-" is not taken for an option
    if (command->in_order)
        *s++ = '+';
    size_t n = 0;
    for (const cmd_option *o = command->options; o && o->name; o++, n++) {
        assert (n < CMD_MAX_OPTIONS);
        self->longs[n].name = o->name;
        self->longs[n].has_arg = o->arg ? required_argument : no_argument;
        self->longs[n].val = o->key;
        if (o->key < 256) {
            *s++ = (char) o->key;
            if (o->arg)
                *s++ = ':';
        }
    }
}

void cmd_error (const char *command, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    //  The line in one write: stderr is unbuffered, and a line written in
    //  three parts was cut by what another process wrote between them
    //  (mpirun's banner when a rank aborts), losing its prefix
    char line[8192];
    int n = snprintf (line, sizeof line, "weir %s: ", command);
    if (n > 0 && (size_t) n < sizeof line)
        vsnprintf (line + n, sizeof line - (size_t) n, format, args);
    va_end (args);
    fprintf (stderr, "%s\n", line);
}

//  The words of TEXT[0..LEN) filled from column COLUMN, where the cursor
//  is, going on at column INDENT; ends the last line.
static void s_fill (FILE *out, const char *text, size_t len, int column, int indent)
{
    const char *p = text, *end = text + len;
    int first = 1;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\n'))
            p++;
        if (p == end)
            break;
        const char *word = p;
        while (p < end && *p != ' ' && *p != '\n')
            p++;
        int wlen = (int) (p - word);
        //  Two blanks after a full stop, as the texts are typed
        int gap = first ? 0 : word - text >= 2 && word[-2] == ' ' ? 2 : 1;
        if (!first && column + gap + wlen > S_WIDTH) {
            fprintf (out, "\n%*s", indent, "");
            column = indent;
            gap = 0;
        }
        fprintf (out, "%*s%.*s", gap, "", wlen, word);
        column += gap + wlen;
        first = 0;
    }
    fputc ('\n', out);
}

void cmd_fill (FILE *out, const char *text, int column, int indent)
{
    s_fill (out, text, strlen (text), column, indent);
}

//  A paragraph of TEXT[0..LEN) at INDENT: filled, or as it is when its
//  lines start with two blanks.
static void s_paragraph (FILE *out, const char *text, size_t len, int indent)
{
    if (len >= 2 && text[0] == ' ' && text[1] == ' ') {
        fprintf (out, "%*s%.*s\n", indent, "", (int) len, text);
        return;
    }
    fprintf (out, "%*s", indent, "");
    s_fill (out, text, len, indent, indent);
}

void cmd_wrap (FILE *out, const char *text, int indent)
{
    const char *p = text;
    while (*p) {
        const char *end = strstr (p, "\n\n");
        size_t len = end ? (size_t) (end - p) : strlen (p);
        while (len && p[len - 1] == '\n')
            len--;
        if (p != text)
            fputc ('\n', out);
        s_paragraph (out, p, len, indent);
        p += end ? (size_t) (end - p) + 2 : strlen (p);
    }
}

//  "-q, --quiet" or "--stats FILE".
static int s_label (char *buf, size_t size, const cmd_option *o)
{
    if (o->key < 256)
        return snprintf (buf, size, "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
    return snprintf (buf, size, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void cmd_help_print (const cmd_command *command, FILE *out)
{
    //  One line per form of the usage, each after "weir NAME"
    const char *form = command->usage;
    for (int first = 1; form; first = 0) {
        const char *nl = strchr (form, '\n');
        int len = nl ? (int) (nl - form) : (int) strlen (form);
        fprintf (out, "%s weir %s%s%.*s\n", first ? "usage:" : "      ", command->name, len ? " " : "", len,
                 form);
        form = nl ? nl + 1 : NULL;
    }
    fputc ('\n', out);
    cmd_wrap (out, command->description, 0);
    const char *group = "";
    for (const cmd_option *o = command->options; o && o->name; o++) {
        const char *heading = o->group ? o->group : "Options";
        if (strcmp (heading, group) != 0) {
            fprintf (out, "\n%s:\n", heading);
            group = heading;
        }
        char label[64];
        int len = s_label (label, sizeof label, o);
        fprintf (out, "  %s", label);
        if (2 + len + 2 > S_SUMMARY_COLUMN)
            fprintf (out, "\n%*s", S_SUMMARY_COLUMN, "");
        else
            fprintf (out, "%*s", S_SUMMARY_COLUMN - 2 - len, "");
        s_fill (out, o->summary, strlen (o->summary), S_SUMMARY_COLUMN, S_SUMMARY_COLUMN);
    }
    if (command->notes) {
        fputc ('\n', out);
        cmd_wrap (out, command->notes, 0);
    }
    fprintf (out, "\nExit codes:");
    for (const cmd_exit_code *e = cmd_exit_codes; e->name; e++)
        fprintf (out, "%s %d %s", e == cmd_exit_codes ? "" : ",", e->code, e->name);
    fprintf (out, " ('weir help' says more).\n");
}
