/*  cmd/manual.c - the manual page, weir(1), as roff: made from the same
    tables as --help (the subcommands and their options), the engine's
    element tables and the exit codes, so that it cannot miss any of them.
    The build writes it with 'weir help --man' and installs it.  */
#include "cmd.h"

#include <string.h>

//  What the page says before the commands: the ideas every command uses
static const char s_description[] =
    "weir runs pipes: readers, any number of processors and writers, in a line or a graph.  Records are "
    "msgpack objects.  "
    "They travel in batches over bounded in-process queues, and every stage runs as many threads as its "
    "threads= property asks.  A full queue blocks its producer; nothing is ever dropped.\n"
    "\n"
    "A pipe is described in one string.  Elements are separated by '!', and each element takes key=value "
    "properties:\n"
    "\n"
    "  weir run 'range count=1M ! identity threads=2 ! lines path=ints.txt'\n"
    "\n"
    "The first element reads and the last one writes; the elements between them process records.  Quote "
    "a value with '...' or \"...\" when it holds blanks or '!'.  Numbers take k, M and G suffixes "
    "(thousand, million, billion).\n"
    "\n"
    "A description may be a graph: name=NAME names an element, and NAME. refers to it (after '!' it ends a "
    "branch there, a merge; elsewhere it starts one from it), and an element's name after another's "
    "properties, without '!', starts an independent chain ('a ! b  c ! d').  tee sends every record down "
    "every branch, "
    "route each record down the branch of the first condition true of it (r.BRANCH), and several readers "
    "may feed one stage:\n"
    "\n"
    "  weir run 'json path=app.jsonl ! m.  lines path=access.log ! m.  identity name=m ! json "
    "path=all.jsonl'\n"
    "\n"
    "Every output of a graph commits in the one checkpoint; 'weir graph' draws a description as DOT.\n"
    "\n"
    "Files are read as shards: each file of a glob is a shard, and a large file is cut at line boundaries "
    "(msgpack: at record boundaries, found by reading it through once when the job starts) into several.  "
    "Reader threads take shards one at a time.  Order is kept only with one thread per "
    "stage; with more, the output holds the same records in another order.  A gzip or zstd file, told by "
    "its first bytes, is read decompressed as one shard, its offsets counting decompressed bytes; a resume "
    "decompresses it again up to where it stopped.  The writers of files write gzip or zstd with "
    "compress=, one member or frame per epoch.\n"
    "\n"
    "Jobs run in epochs.  With --checkpoint, the pipe is quiesced at the end of each epoch and checkpointed "
    "into LevelDB: the reader offsets of every shard, the writers' committed lengths and the processors' "
    "blobs, in one atomic synced write.  A job killed at any instant goes on with --resume, with nothing "
    "lost and nothing written twice.\n"
    "\n"
    "A processor that is no builtin is a plugin: a shared object that exports weir_plugin_processor() "
    "(see <weir/plugin.h>).  An element that contains '/' or ends in .so is loaded from that path; another "
    "name is looked up as NAME.so in the folders of WEIR_PLUGIN_PATH, then in the installed plugin folder.";

//  TEXT[0..LEN) escaped for roff: a backslash, a minus (so that options
//  copy as typed), a control character at a line's start, anything past
//  ASCII as its code point.
static void s_escape (FILE *out, const char *text, size_t len, int line_start)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) text[i];
        if (line_start && (c == '.' || c == '\''))
            fputs ("\\&", out);
        line_start = 0;
        if (c == '\\')
            fputs ("\\e", out);
        else if (c == '-')
            fputs ("\\-", out);
        else if (c == '\n') {
            fputc ('\n', out);
            line_start = 1;
        }
        else if (c >= 0x80) {
            //  A UTF-8 sequence as \[uXXXX]; a broken one as the bytes' code points
            unsigned cp = c, n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
            cp &= n == 3 ? 0x07 : n == 2 ? 0x0f : n == 1 ? 0x1f : 0xff;
            for (; n && i + 1 < len && ((unsigned char) text[i + 1] & 0xc0) == 0x80; n--)
                cp = cp << 6 | ((unsigned char) text[++i] & 0x3f);
            fprintf (out, "\\[u%04X]", cp);
        }
        else
            fputc (c, out);
    }
}

static void s_text (FILE *out, const char *text)
{
    s_escape (out, text, strlen (text), 0);
}

//  TEXT's paragraphs, each after .PP (FIRST: the first one needs none);
//  those whose lines start with two blanks as they are.
static void s_paragraphs (FILE *out, const char *text, int first)
{
    const char *p = text;
    while (*p) {
        const char *end = strstr (p, "\n\n");
        size_t len = end ? (size_t) (end - p) : strlen (p);
        if (!first)
            fputs (".PP\n", out);
        first = 0;
        if (len >= 2 && p[0] == ' ' && p[1] == ' ') {
            fputs (".RS\n.nf\n", out);
            s_escape (out, p, len, 1);
            fputs ("\n.fi\n.RE\n", out);
        }
        else {
            //  One line per paragraph: roff fills it
            for (size_t i = 0; i < len; i++) {
                const char *nl = memchr (p + i, '\n', len - i);
                size_t n = nl ? (size_t) (nl - (p + i)) : len - i;
                if (i)
                    fputc (' ', out);
                s_escape (out, p + i, n, i == 0);
                i += n;
            }
            fputc ('\n', out);
        }
        p += end ? len + 2 : len;
    }
}

static void s_option (FILE *out, const cmd_option *o)
{
    fputs (".TP\n", out);
    if (o->key < 256)
        fprintf (out, "\\fB\\-%c\\fR, ", o->key);
    fputs ("\\fB\\-\\-", out);
    s_text (out, o->name);
    fputs ("\\fR", out);
    if (o->arg) {
        fputs (" \\fI", out);
        s_text (out, o->arg);
        fputs ("\\fR", out);
    }
    fputc ('\n', out);
    s_escape (out, o->summary, strlen (o->summary), 1);
    fputs (".", out);
    if (o->details) {
        //  Two blanks: roff's space between sentences
        fputs ("  ", out);
        s_text (out, o->details);
    }
    fputc ('\n', out);
}

static void s_command (FILE *out, const cmd_command *c)
{
    fprintf (out, ".SS \"weir %s\"\n", c->name);
    const char *form = c->usage;
    fputs (".nf\n", out);
    while (form) {
        const char *nl = strchr (form, '\n');
        size_t len = nl ? (size_t) (nl - form) : strlen (form);
        fprintf (out, "\\fBweir %s\\fR ", c->name);
        s_escape (out, form, len, 0);
        fputc ('\n', out);
        form = nl ? nl + 1 : NULL;
    }
    fputs (".fi\n.PP\n", out);
    s_paragraphs (out, c->description, 1);
    if (c->options && c->options->name) {
        const char *group = "";
        for (const cmd_option *o = c->options; o->name; o++) {
            const char *heading = o->group ? o->group : "Options";
            if (strcmp (heading, group) != 0) {
                fputs (".PP\n", out);
                s_text (out, heading);
                fputs (":\n", out);
                group = heading;
            }
            s_option (out, o);
        }
    }
    if (c->notes)
        s_paragraphs (out, c->notes, 0);
}

static void s_property (FILE *out, const weir_property_info *p)
{
    fputs (".TP\n\\fB", out);
    s_text (out, p->name);
    if (p->fallback && !*p->fallback)
        fputs ("\\fR (optional, no default)\n", out);
    else if (p->fallback) {
        fputs ("\\fR=", out);
        s_text (out, p->fallback);
        fputs ("\n", out);
    }
    else
        fputs ("\\fR (required)\n", out);
    s_escape (out, p->description, strlen (p->description), 1);
    fputc ('\n', out);
}

static void s_elements (FILE *out)
{
    fputs (".SH ELEMENTS\n"
           "Each element is listed with its properties, and each property with its default or as "
           "required.  The same list is what \\fBweir elements\\fR prints.\n",
           out);
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    const char *titles[] = {"Readers", "Processors", "Writers"};
    for (size_t k = 0; k < 3; k++) {
        fprintf (out, ".SS %s\n", titles[k]);
        for (const weir_element_info *e = weir_elements (); e->name; e++) {
            if (e->kind != kinds[k])
                continue;
            fputs (".TP\n.B ", out);
            s_text (out, e->name);
            fputc ('\n', out);
            s_escape (out, e->description, strlen (e->description), 1);
            fputc ('\n', out);
            if (e->props && e->props->name) {
                fputs (".RS\n", out);
                for (const weir_property_info *p = e->props; p->name; p++)
                    s_property (out, p);
                fputs (".RE\n", out);
            }
        }
    }
    fputs (".SS \"Properties of every element\"\n", out);
    for (const weir_property_info *p = weir_common_properties (); p->name; p++)
        s_property (out, p);
    fputs (".SS \"Properties of every reader\"\n", out);
    for (const weir_property_info *p = cmd_kind_extra (WEIR_ELEMENT_READER); p->name; p++)
        s_property (out, p);
    fputs (".SS \"Properties of every processor\"\n", out);
    for (const weir_property_info *p = cmd_kind_extra (WEIR_ELEMENT_PROCESSOR); p->name; p++)
        s_property (out, p);
    fputs (".SS \"Properties of every writer\"\n", out);
    for (const weir_property_info *p = cmd_kind_extra (WEIR_ELEMENT_WRITER); p->name; p++)
        s_property (out, p);
}

void cmd_manual_print (FILE *out)
{
    //  No date: the page is the same for every build of a version
    fprintf (out, ".TH WEIR 1 \"\" \"weir %s\" \"User Commands\"\n", weir_version ());
    fputs (".SH NAME\nweir \\- run dataflow pipelines of msgpack records, with checkpoints\n", out);
    fputs (".SH SYNOPSIS\n.nf\n", out);
    for (size_t i = 0; cmd_commands[i]; i++) {
        const cmd_command *c = cmd_commands[i];
        if (c->hidden)
            continue;
        fprintf (out, "\\fBweir %s\\fR ", c->name);
        s_escape (out, c->usage, strcspn (c->usage, "\n"), 0);
        fputc ('\n', out);
    }
    fputs ("\\fBweir \\-\\-help\\fR | \\fB\\-\\-version\\fR\n.fi\n", out);
    fputs (".SH DESCRIPTION\n", out);
    s_paragraphs (out, s_description, 1);
    fputs (".SH COMMANDS\n", out);
    for (size_t i = 0; cmd_commands[i]; i++)
        if (!cmd_commands[i]->hidden)
            s_command (out, cmd_commands[i]);
    s_elements (out);
    fputs (".SH \"EXIT STATUS\"\n", out);
    for (const cmd_exit_code *e = cmd_exit_codes; e->name; e++) {
        fprintf (out, ".TP\n.B %d\n", e->code);
        s_text (out, e->name);
        if (e->meaning) {
            fputs (": ", out);
            s_text (out, e->meaning);
        }
        fputs (".\n", out);
    }
    fputs (".SH ENVIRONMENT\n.TP\n.B WEIR_PLUGIN_PATH\n"
           "Folders, separated by colons, where a plugin named without a path is looked up as NAME.so "
           "before the installed plugin folder.\n",
           out);
    fputs (
        ".TP\n\\fBOMPI_COMM_WORLD_SIZE\\fR, \\fBPMI_SIZE\\fR, \\fBSLURM_NTASKS\\fR with \\fBPMIX_RANK\\fR\n"
        "Set by \\fBmpirun\\fR(1) or Slurm's \\fBsrun\\fR: \\fBweir run\\fR is then one rank of a job of "
        "several (a weir built with MPI).  Each rank reads the shards whose number modulo the ranks is its "
        "own, \\fB{rank}\\fR in a writer's path= and in \\fB\\-\\-stats\\fR becomes its number, and rank 0 "
        "writes the job's one checkpoint at every epoch end.  A job may resume with another number of "
        "ranks.  A keyed stage (key=) sends each record to the rank that owns its key, over TCP.\n",
        out);
    fputs (".TP\n.B WEIR_EXCHANGE_NET\n"
           "In a job of several ranks, the IPv4 network (as 10.1.0.0/16) on which the ranks send each other "
           "the records of keyed stages; each rank listens on its address in it alone.  Without it, ranks of "
           "one host use the loopback, and ranks of several hosts pick an address on a network both hosts "
           "have, listening on every interface.\n",
           out);
    fputs (".SH FILES\n.TP\n.I ", out);
    s_text (out, weir_plugin_dir ());
    fputs ("\nThe installed plugin folder: processor plugins found by name (NAME.so), such as the example "
           "plugins \\fBtokenize\\fR, \\fBcount\\fR and \\fBsoftmax\\fR.  "
           "\\fBpkg\\-config \\-\\-variable=pkglibdir weir\\fR prints it.\n",
           out);
    fputs (".SH \"SEE ALSO\"\n\\fBpkg\\-config\\fR(1); <weir/weir.h> and <weir/plugin.h> for the C API; "
           "README.md and docs/plugins.md in the source.\n",
           out);
}
