/*  cmd/elements.c - weir elements: the builtin elements and their
    properties, from the engine's own tables.  */
#include "cmd.h"

#include <string.h>

static int s_elements (int argc, char **argv);

static const cmd_option s_options[] = {
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_elements_command = {
    .name = "elements",
    .main = s_elements,
    .usage = "[NAME]",
    .summary = "list the builtin elements, or show one with its properties",
    .description = "Without NAME, list the builtin readers, processors and writers with their properties "
                   "and defaults, and the properties every element takes.  With NAME, show that element "
                   "(both, when a reader and a writer share the name): its kind, what it does, and every "
                   "property it takes with its default or 'required'.",
    .options = s_options,
    .notes = "Numbers take k, M and G suffixes (thousand, million, billion).  Run 'weir plugin NAME' "
             "to describe a processor plugin.",
};

const char *cmd_kind_name (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

const weir_property_info *cmd_kind_extra (weir_element_kind kind)
{
    //  Each kind's table starts with the common properties, in their order
    const weir_property_info *all = weir_kind_properties (kind), *common = weir_common_properties ();
    while (all->name && common->name && !strcmp (all->name, common->name)) {
        all++;
        common++;
    }
    return all;
}

static void s_print_props (const weir_property_info *p)
{
    for (; p && p->name; p++) {
        char head[64];
        if (p->fallback)
            snprintf (head, sizeof head, "%s=%s", p->name, p->fallback);
        else
            snprintf (head, sizeof head, "%s=...", p->name);
        printf ("      %-20s %s\n", head, p->description);
    }
}

static void s_list (void)
{
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    for (size_t k = 0; k < 3; k++) {
        printf ("%ss:\n", cmd_kind_name (kinds[k]));
        for (const weir_element_info *e = weir_elements (); e->name; e++) {
            if (e->kind != kinds[k])
                continue;
            printf ("  %s  %s\n", e->name, e->description);
            s_print_props (e->props);
        }
        printf ("\n");
    }
    printf ("every element also takes:\n");
    s_print_props (weir_common_properties ());
    printf ("readers also take:\n");
    s_print_props (cmd_kind_extra (WEIR_ELEMENT_READER));
    printf ("processors also take:\n");
    s_print_props (cmd_kind_extra (WEIR_ELEMENT_PROCESSOR));
    printf ("\nNumbers take k, M and G suffixes (thousand, million, billion).\n");
}

//  One property a line: its name, its default or "required", what it is.
static void s_show_props (const weir_property_info *p)
{
    for (; p && p->name; p++) {
        const char *value = !p->fallback ? "required" : *p->fallback ? p->fallback : "(none)";
        int column = printf ("  %-11s %-9s ", p->name, value);
        cmd_fill (stdout, p->description, column, 24);
    }
}

static void s_show (const weir_element_info *e)
{
    printf ("%s (%s)\n", e->name, cmd_kind_name (e->kind));
    cmd_wrap (stdout, e->description, 2);
    printf ("\n  %-11s %-9s %s\n", "property", "default", "meaning");
    s_show_props (e->props);
    s_show_props (cmd_kind_extra (e->kind));
    s_show_props (weir_common_properties ());
}

//  "readers: range, lines; processors: identity; writers: null, lines".
static void s_names (FILE *out)
{
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    for (size_t k = 0; k < 3; k++) {
        fprintf (out, "%s%ss:", k ? "; " : "", cmd_kind_name (kinds[k]));
        const char *sep = " ";
        for (const weir_element_info *e = weir_elements (); e->name; e++)
            if (e->kind == kinds[k]) {
                fprintf (out, "%s%s", sep, e->name);
                sep = ", ";
            }
    }
}

static int s_elements (int argc, char **argv)
{
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_elements_command);
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        if (c != 'h') {
            fprintf (stderr, "Try 'weir elements --help'.\n");
            return CMD_EXIT_USAGE;
        }
        cmd_help_print (&cmd_elements_command, stdout);
        return CMD_EXIT_OK;
    }
    if (optind == argc) {
        s_list ();
        return CMD_EXIT_OK;
    }
    if (optind + 1 < argc) {
        cmd_help_print (&cmd_elements_command, stderr);
        return CMD_EXIT_USAGE;
    }
    const char *name = argv[optind];
    int found = 0;
    for (const weir_element_info *e = weir_elements (); e->name; e++)
        if (strcmp (e->name, name) == 0) {
            if (found++)
                printf ("\n");
            s_show (e);
        }
    if (found)
        return CMD_EXIT_OK;
    fprintf (stderr, "weir elements: unknown element '%s' (", name);
    s_names (stderr);
    fprintf (stderr, ")\nRun 'weir plugin %s' for a processor plugin.\n", name);
    return CMD_EXIT_USAGE;
}
