/*  cmd/elements.c - weir elements: the builtin elements and their
    properties, from the engine's own tables, and the processor plugins
    on the search path, from theirs.  */
#include "cmd.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

static int s_elements (int argc, char **argv);

static const cmd_option s_options[] = {
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_elements_command = {
    .name = "elements",
    .main = s_elements,
    .usage = "[NAME]",
    .summary = "list the elements, builtin and plugins, or show one with its properties",
    .description = "Without NAME, list the builtin readers, processors and writers with their properties "
                   "and defaults, the processor plugins found as NAME.so in the folders of $WEIR_PLUGIN_PATH "
                   "and the installed plugin folder (marked as plugins, with the properties they declare), "
                   "and the properties every element takes.  With NAME, show that element "
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

static int s_builtin (const char *name)
{
    for (const weir_element_info *e = weir_elements (); e->name; e++)
        if (!strcmp (e->name, name))
            return 1;
    return 0;
}

static int s_so (const struct dirent *d)
{
    size_t n = strlen (d->d_name);
    return n > 3 && !strcmp (d->d_name + n - 3, ".so") && d->d_name[0] != '.';
}

//  Call SEE with each plugin a bare name would load: NAME.so in the
//  folders of $WEIR_PLUGIN_PATH, then the installed folder, the first of
//  a name only (the one 'weir run' takes), builtins' names left out as
//  'weir run' never looks them up.
static void s_plugins (void (*see) (const char *name, const char *path))
{
    const char *env = getenv ("WEIR_PLUGIN_PATH");
    size_t size = (env ? strlen (env) : 0) + strlen (weir_plugin_dir ()) + 2;
    char *dirs = malloc (size), *save = NULL;
    char **seen = NULL;
    size_t nseen = 0;
    if (!dirs)
        return;
    snprintf (dirs, size, "%s%s%s", env ? env : "", env && *env ? ":" : "", weir_plugin_dir ());
    for (char *dir = strtok_r (dirs, ":", &save); dir; dir = strtok_r (NULL, ":", &save)) {
        struct dirent **list;
        int n = scandir (dir, &list, s_so, alphasort);
        for (int i = 0; i < n; i++) {
            char *name = list[i]->d_name;
            name[strlen (name) - 3] = '\0';
            int known = s_builtin (name);
            for (size_t k = 0; k < nseen && !known; k++)
                known = !strcmp (seen[k], name);
            char **more = known ? NULL : realloc (seen, (nseen + 1) * sizeof *seen);
            if (more && (more[nseen] = strdup (name))) {
                seen = more;
                nseen++;
                char path[4096];
                snprintf (path, sizeof path, "%s/%s.so", dir, name);
                see (name, path);
            }
            else if (more)
                seen = more;
            free (list[i]);
        }
        if (n >= 0)
            free (list);
    }
    for (size_t k = 0; k < nseen; k++)
        free (seen[k]);
    free (seen);
    free (dirs);
}

//  One plugin in the list: what it says of itself, or why it does not
//  load (a stray .so in a plugin folder is worth knowing about)
static void s_list_plugin (const char *name, const char *path)
{
    weir_plugin *plugin;
    char *error = NULL;
    if (weir_plugin_new (path, &plugin, &error)) {
        printf ("  %s  (plugin %s, does not load: %s)\n", name, path, error ? error : "out of memory");
        weir_free (error);
        return;
    }
    const weir_processor *table = weir_plugin_table (plugin);
    printf ("  %s  %s  (plugin %s)\n", name, table->description ? table->description : "", path);
    if (table->props && !table->props->name)
        printf ("      %-20s %s\n", "", "(no properties of its own)");
    else if (table->props)
        s_print_props (table->props);
    else
        printf ("      %-20s %s\n", "", "(its properties are not declared: see its documentation)");
    weir_plugin_destroy (&plugin);
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
        if (kinds[k] == WEIR_ELEMENT_PROCESSOR)
            s_plugins (s_list_plugin);
        printf ("\n");
    }
    printf ("every element also takes:\n");
    s_print_props (weir_common_properties ());
    printf ("readers also take:\n");
    s_print_props (cmd_kind_extra (WEIR_ELEMENT_READER));
    printf ("processors also take:\n");
    s_print_props (cmd_kind_extra (WEIR_ELEMENT_PROCESSOR));
    printf ("writers also take:\n");
    s_print_props (cmd_kind_extra (WEIR_ELEMENT_WRITER));
    printf ("\nNumbers take k, M and G suffixes (thousand, million, billion).\n");
}

//  Whether OWN (an element's properties) declares NAME
static int s_declares (const weir_property_info *own, const char *name)
{
    for (; own && own->name; own++)
        if (!strcmp (own->name, name))
            return 1;
    return 0;
}

//  One property a line: its name, its default or "required", what it is;
//  those the element declares itself (OWN) once, as it declares them.
static void s_show_props (const weir_property_info *p, const weir_property_info *own)
{
    for (; p && p->name; p++) {
        if (own && s_declares (own, p->name))
            continue;
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
    s_show_props (e->props, NULL);
    s_show_props (cmd_kind_extra (e->kind), e->props);
    s_show_props (weir_common_properties (), e->props);
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
    //  A plugin a bare name loads, as 'weir run' would find it
    weir_plugin *plugin;
    char *error = NULL;
    if (!strchr (name, '/') && weir_plugin_new (name, &plugin, &error) == 0) {
        const weir_processor *table = weir_plugin_table (plugin);
        weir_element_info e = {name, WEIR_ELEMENT_PROCESSOR, table->description ? table->description : "",
                               table->props};
        s_show (&e);
        printf ("\n  a processor plugin: %s\n", weir_plugin_path (plugin));
        if (!table->props)
            printf ("  its own properties are not declared: see its documentation\n");
        weir_plugin_destroy (&plugin);
        return CMD_EXIT_OK;
    }
    weir_free (error);
    fprintf (stderr, "weir elements: unknown element '%s' (", name);
    s_names (stderr);
    fprintf (stderr, ")\nRun 'weir plugin %s' for a processor plugin.\n", name);
    return CMD_EXIT_USAGE;
}
