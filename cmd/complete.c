/*  cmd/complete.c - weir complete: what the bash completion offers.

    The script (cmd/weir.bash) stays small: it hands the command line up
    to the cursor and readline's current word to 'weir complete', which
    answers one candidate a line from the same tables as --help (commands,
    options) and the engine's (elements, properties), and lists plugin
    folders and files itself.  Hidden: it is for the script.  */
#include "cmd.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int s_complete (int argc, char **argv);

static const cmd_option s_options[] = {
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_complete_command = {
    .name = "complete",
    .main = s_complete,
    .usage = "[--] LINE [WORD]",
    .summary = "the candidates of the bash completion",
    .description = "Print the candidates for the word being typed at the end of LINE, a weir command line "
                   "up to the cursor, one a line.  WORD is readline's current word (the text after an "
                   "opening quote, or after the last '='), which the candidates are made to replace; it "
                   "defaults to the last word of LINE.",
    .options = s_options,
    .in_order = 1,
    .hidden = 1,
};

//  A growing list of strings, each the list's own
typedef struct {
    char **items;
    size_t count, size;
    int failed;  //  out of memory: the answer is incomplete, never wrong
} s_list;

static void s_add (s_list *self, const char *text, size_t len)
{
    if (self->count == self->size) {
        size_t size = self->size ? self->size * 2 : 32;
        char **items = realloc (self->items, size * sizeof *items);
        if (!items) {
            self->failed = 1;
            return;
        }
        self->items = items;
        self->size = size;
    }
    char *copy = strndup (text, len);
    if (copy)
        self->items[self->count++] = copy;
    else
        self->failed = 1;
}

static void s_release (s_list *self)
{
    for (size_t i = 0; i < self->count; i++)
        free (self->items[i]);
    free (self->items);
    memset (self, 0, sizeof *self);
}

static int s_prefixed (const char *text, const char *prefix)
{
    return strncmp (text, prefix, strlen (prefix)) == 0;
}

//  CANDIDATE when it starts with CUR
static void s_offer (s_list *out, const char *cur, const char *candidate)
{
    if (s_prefixed (candidate, cur))
        s_add (out, candidate, strlen (candidate));
}

//  LINE split as the shell would: words without their quotes.  The last
//  word is the one being typed (empty after a blank).
static void s_shell_words (const char *line, s_list *words)
{
    char *word = malloc (strlen (line) + 1);
    if (!word) {
        words->failed = 1;
        return;
    }
    size_t len = 0;
    char quote = 0;
    for (const char *p = line; *p; p++) {
        if (quote == '\'') {
            if (*p == '\'')
                quote = 0;
            else
                word[len++] = *p;
        }
        else if (quote == '"') {
            if (*p == '"')
                quote = 0;
            else if (*p == '\\' && p[1] && strchr ("\"\\$`", p[1]))
                word[len++] = *++p;
            else
                word[len++] = *p;
        }
        else if (*p == '\'' || *p == '"')
            quote = *p;
        else if (*p == '\\' && p[1])
            word[len++] = *++p;
        else if (*p == ' ' || *p == '\t' || *p == '\n') {
            if (len || (p > line && (p[-1] == '\'' || p[-1] == '"')))
                s_add (words, word, len);
            len = 0;
        }
        else
            word[len++] = *p;
    }
    s_add (words, word, len);
    free (word);
}

//  The entries of the folder of PREFIX whose names start with its last
//  part, folders with a '/' after them; only folders when DIRS_ONLY.
//  Each candidate starts with PREFIX, after LEAD.
static void s_files (s_list *out, const char *lead, const char *prefix, int dirs_only)
{
    const char *slash = strrchr (prefix, '/');
    size_t dirlen = slash ? (size_t) (slash - prefix) + 1 : 0;
    char *dir = strndup (prefix, dirlen ? dirlen : 0);
    if (!dir)
        return;
    const char *base = prefix + dirlen;
    DIR *d = opendir (dirlen ? dir : ".");
    if (!d) {
        free (dir);
        return;
    }
    struct dirent *entry;
    while ((entry = readdir (d))) {
        const char *name = entry->d_name;
        if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0 || !s_prefixed (name, base)
            || (name[0] == '.' && base[0] != '.'))
            continue;
        size_t size = strlen (lead) + dirlen + strlen (name) + 2;
        char *path = malloc (size);
        if (!path)
            break;
        snprintf (path, size, "%s%s", dir, name);
        struct stat st;
        int is_dir = stat (path, &st) == 0 && S_ISDIR (st.st_mode);
        if (is_dir || !dirs_only) {
            snprintf (path, size, "%s%s%s%s", lead, dir, name, is_dir ? "/" : "");
            s_add (out, path, strlen (path));
        }
        free (path);
    }
    closedir (d);
    free (dir);
}

//  Plugins found by name: NAME.so in $WEIR_PLUGIN_PATH and the plugin folder
static void s_plugin_names (s_list *out, const char *cur)
{
    const char *env = getenv ("WEIR_PLUGIN_PATH");
    size_t envlen = env ? strlen (env) : 0, dirlen = strlen (weir_plugin_dir ());
    char *folders = malloc (envlen + dirlen + 2);
    if (!folders)
        return;
    snprintf (folders, envlen + dirlen + 2, "%s:%s", env ? env : "", weir_plugin_dir ());
    char *save = NULL;
    for (char *folder = strtok_r (folders, ":", &save); folder; folder = strtok_r (NULL, ":", &save)) {
        DIR *d = opendir (folder);
        if (!d)
            continue;
        struct dirent *entry;
        while ((entry = readdir (d))) {
            size_t len = strlen (entry->d_name);
            if (len > 3 && strcmp (entry->d_name + len - 3, ".so") == 0
                && strncmp (entry->d_name, cur, strlen (cur)) == 0)
                s_add (out, entry->d_name, len - 3);
        }
        closedir (d);
    }
    free (folders);
}

static const weir_element_info *s_element (const char *name, weir_element_kind kind)
{
    for (const weir_element_info *e = weir_elements (); e->name; e++)
        if (e->kind == kind && strcmp (e->name, name) == 0)
            return e;
    return NULL;
}

static void s_props (s_list *out, const weir_property_info *p, const char *cur, const s_list *given)
{
    for (; p && p->name; p++) {
        size_t len = strlen (p->name);
        int seen = 0;
        for (size_t i = 0; i < given->count; i++)
            seen |= strncmp (given->items[i], p->name, len) == 0 && given->items[i][len] == '=';
        char candidate[128];
        snprintf (candidate, sizeof candidate, "%s=", p->name);
        //  A name in capitals stands for names the user makes up (route's
        //  BRANCH=): nothing to offer
        int placeholder = isupper ((unsigned char) p->name[0]);
        if (!seen && !placeholder)
            s_offer (out, cur, candidate);
    }
}

//  The description typed so far, DESCRIPTION, its last token being typed
static void s_description (s_list *out, const char *description, const char **token)
{
    //  Tokens as the description's parser sees them: blanks outside quotes end one
    s_list tokens = {0};
    size_t start = 0;
    char quote = 0;
    for (size_t i = 0;; i++) {
        char c = description[i];
        if (quote && c == quote)
            quote = 0;
        else if (!quote && (c == '\'' || c == '"'))
            quote = c;
        else if (!c || (!quote && (c == ' ' || c == '\t' || c == '\n'))) {
            if (i > start || !c)
                s_add (&tokens, description + start, i - start);
            start = i + 1;
            if (!c)
                break;
        }
    }
    if (tokens.failed || !tokens.count) {
        s_release (&tokens);
        return;
    }
    //  The element of the segment being typed, and the properties it has
    size_t last = tokens.count - 1, first = last;
    while (first > 0 && strcmp (tokens.items[first - 1], "!") != 0)
        first--;
    int is_reader = 1;
    for (size_t i = 0; i < first; i++)
        is_reader &= strcmp (tokens.items[i], "!") != 0;
    const char *cur = tokens.items[last];
    *token = description + strlen (description) - strlen (cur);
    if (first == last) {
        for (const weir_element_info *e = weir_elements (); e->name; e++)
            if ((e->kind == WEIR_ELEMENT_READER) == is_reader)
                s_offer (out, cur, e->name);
        if (!is_reader)
            s_plugin_names (out, cur);
    }
    else if (s_prefixed (cur, "path=")) {
        s_files (out, "path=", cur + 5, 0);
    }
    else if (!strchr (cur, '=')) {
        const char *name = tokens.items[first];
        s_list given = {0};
        for (size_t i = first + 1; i < last; i++)
            s_add (&given, tokens.items[i], strlen (tokens.items[i]));
        //  A middle element may be a writer still: the next '!' says
        const weir_element_info *e = s_element (name, WEIR_ELEMENT_READER);
        if (!is_reader) {
            e = s_element (name, WEIR_ELEMENT_PROCESSOR);
            if (!e)
                e = s_element (name, WEIR_ELEMENT_WRITER);
        }
        if (e)
            s_props (out, e->props, cur, &given);
        if (is_reader)
            s_props (out, cmd_kind_extra (WEIR_ELEMENT_READER), cur, &given);
        else if (!e || e->kind == WEIR_ELEMENT_PROCESSOR)
            s_props (out, cmd_kind_extra (WEIR_ELEMENT_PROCESSOR), cur, &given);
        else
            s_props (out, cmd_kind_extra (WEIR_ELEMENT_WRITER), cur, &given);
        s_props (out, weir_common_properties (), cur, &given);
        s_release (&given);
        if (!*cur)
            s_add (out, "!", 1);
    }
    s_release (&tokens);
}

static const cmd_option *s_option_named (const cmd_command *c, const char *word)
{
    for (const cmd_option *o = c->options; o && o->name; o++) {
        size_t len = strlen (o->name);
        if (word[0] == '-' && word[1] == '-' && strncmp (word + 2, o->name, len) == 0
            && (word[2 + len] == '\0' || word[2 + len] == '='))
            return o;
        if (o->key < 256 && word[0] == '-' && word[1] == o->key && word[2] == '\0')
            return o;
    }
    return NULL;
}

static void s_value (s_list *out, const cmd_option *o, const char *lead, const char *cur)
{
    if (o->value != CMD_VALUE_ANY)
        s_files (out, lead, cur, o->value == CMD_VALUE_DIR);
}

//  The commands shown in --help
static void s_commands (s_list *out, const char *cur)
{
    for (size_t i = 0; cmd_commands[i]; i++)
        if (!cmd_commands[i]->hidden)
            s_offer (out, cur, cmd_commands[i]->name);
}

//  What the words before the one being typed say of command C
typedef struct {
    size_t operands;            //  where the first operand is, 0 when there is none
    int options_done;           //  "--", or an operand of a command whose options come first
    const cmd_option *pending;  //  the option whose value is being typed
} s_scan;

static void s_scan_words (const cmd_command *c, const s_list *words, s_scan *scan)
{
    memset (scan, 0, sizeof *scan);
    for (size_t i = 2; i + 1 < words->count; i++) {
        const char *w = words->items[i];
        if (scan->pending) {
            scan->pending = NULL;
            continue;
        }
        if (!scan->options_done && strcmp (w, "--") == 0) {
            scan->options_done = 1;
            continue;
        }
        if (!scan->options_done && w[0] == '-' && w[1]) {
            const cmd_option *o = s_option_named (c, w);
            if (o && o->arg && !strchr (w, '='))
                scan->pending = o;
            continue;
        }
        if (!scan->operands)
            scan->operands = i;
        scan->options_done |= c->in_order;
    }
}

//  CUR, an option of C: its value after a '=', else the options' names
static void s_options_of (s_list *out, const cmd_command *c, const char *cur)
{
    const cmd_option *o = strchr (cur, '=') ? s_option_named (c, cur) : NULL;
    if (o && o->arg) {
        size_t lead = (size_t) (strchr (cur, '=') - cur) + 1;
        char prefix[64];
        snprintf (prefix, sizeof prefix, "%.*s", (int) lead, cur);
        s_value (out, o, prefix, cur + lead);
        return;
    }
    for (o = c->options; o && o->name; o++) {
        char candidate[64];
        snprintf (candidate, sizeof candidate, "--%s", o->name);
        s_offer (out, cur, candidate);
        if (o->key < 256) {
            snprintf (candidate, sizeof candidate, "-%c", o->key);
            s_offer (out, cur, candidate);
        }
    }
}

//  The description of 'weir run': its operands, WORDS from FROM, joined
//  as 'weir run' joins them; *TOKEN is set as for s_candidates
static void s_run_description (s_list *out, const s_list *words, size_t from, const char **token)
{
    const char *cur = words->items[words->count - 1];
    size_t size = 1;
    for (size_t i = from; i < words->count; i++)
        size += strlen (words->items[i]) + 1;
    char *description = malloc (size), *p = description;
    if (!description)
        return;
    for (size_t i = from; i < words->count; i++)
        p += sprintf (p, "%s%s", i > from ? " " : "", words->items[i]);
    s_description (out, description, token);
    //  The token as it ends the current word; a token that began in an
    //  earlier word (a quote of the description spans blanks) is beyond
    //  completing
    size_t tlen = strlen (*token), clen = strlen (cur);
    *token = cur + (tlen <= clen ? clen - tlen : clen);
    if (tlen > clen)
        for (; out->count; out->count--)
            free (out->items[out->count - 1]);
    free (description);
}

//  The first operand of command C
static void s_first_operand (s_list *out, const cmd_command *c, const char *cur)
{
    if (c == &cmd_elements_command) {
        for (const weir_element_info *e = weir_elements (); e->name; e++)
            s_offer (out, cur, e->name);
    }
    else if (c == &cmd_plugin_command) {
        s_plugin_names (out, cur);
        if (strchr (cur, '/'))
            s_files (out, "", cur, 0);
    }
    else if (c == &cmd_checkpoints_command)
        s_files (out, "", cur, 1);
    else if (c == &cmd_help_command)
        s_commands (out, cur);
}

//  The candidates for the last of WORDS (WORDS[0] is "weir"); *TOKEN is
//  where the text they replace starts in it.
static void s_candidates (s_list *out, const s_list *words, const char **token)
{
    const char *cur = words->items[words->count - 1];
    *token = cur;
    if (words->count == 2) {
        s_commands (out, cur);
        if (cur[0] == '-') {
            const char *top[] = {"--help", "--version", "-h", "-V"};
            for (size_t i = 0; i < 4; i++)
                s_offer (out, cur, top[i]);
        }
        return;
    }
    const cmd_command *c = cmd_command_find (words->items[1]);
    if (!c || c->hidden)
        return;
    s_scan scan;
    s_scan_words (c, words, &scan);
    if (scan.pending)
        s_value (out, scan.pending, "", cur);
    else if (cur[0] == '-' && !scan.options_done)
        s_options_of (out, c, cur);
    else if (c == &cmd_run_command || c == &cmd_graph_command)
        s_run_description (out, words, scan.operands ? scan.operands : words->count - 1, token);
    else if (!scan.operands)
        s_first_operand (out, c, cur);
}

static int s_compare (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static int s_complete (int argc, char **argv)
{
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_complete_command);
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        if (c != 'h')
            return CMD_EXIT_USAGE;
        cmd_help_print (&cmd_complete_command, stdout);
        return CMD_EXIT_OK;
    }
    if (optind == argc || argc - optind > 2) {
        cmd_help_print (&cmd_complete_command, stderr);
        return CMD_EXIT_USAGE;
    }
    s_list words = {0}, out = {0};
    s_shell_words (argv[optind], &words);
    if (words.count == 1)
        s_add (&words, "", 0);
    const char *token = "";
    if (!words.failed)
        s_candidates (&out, &words, &token);
    //  Each candidate continues TOKEN; readline replaces its own word,
    //  which may hold more (the text after an opening quote) or less
    //  (what follows a '=')
    const char *word = argc - optind == 2 ? argv[optind + 1] : token;
    size_t tlen = strlen (token), wlen = strlen (word);
    qsort (out.items, out.count, sizeof *out.items, s_compare);
    for (size_t i = 0; i < out.count; i++) {
        if (i && strcmp (out.items[i], out.items[i - 1]) == 0)
            continue;
        if (wlen >= tlen && strcmp (word + wlen - tlen, token) == 0)
            printf ("%.*s%s\n", (int) (wlen - tlen), word, out.items[i]);
        else if (wlen < tlen && strcmp (token + tlen - wlen, word) == 0)
            printf ("%s\n", out.items[i] + (tlen - wlen));
        else
            printf ("%s\n", out.items[i]);
    }
    int failed = words.failed || out.failed;
    s_release (&words);
    s_release (&out);
    return failed ? CMD_EXIT_FAILURE : CMD_EXIT_OK;
}
