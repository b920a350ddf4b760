/*  cmd/describe.c - weir plugin: describe a processor plugin.  */
#include "cmd.h"

#include <stdlib.h>
#include <weir/plugin.h>

static int s_plugin (int argc, char **argv);

static const cmd_option s_options[] = {
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_plugin_command = {
    .name = "plugin",
    .main = s_plugin,
    .usage = "PATH|NAME",
    .summary = "describe a processor plugin",
    .description = "Load a processor plugin as 'weir run' would and describe it: its name, description, "
                   "ABI, path, callbacks and the properties it declares.  A NAME without '/' is looked up as NAME.so in "
                   "$WEIR_PLUGIN_PATH, then in the installed plugin folder.",
    .options = s_options,
};

static int s_plugin (int argc, char **argv)
{
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_plugin_command);
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        if (c != 'h') {
            fprintf (stderr, "Try 'weir plugin --help'.\n");
            return CMD_EXIT_USAGE;
        }
        cmd_help_print (&cmd_plugin_command, stdout);
        return CMD_EXIT_OK;
    }
    if (optind != argc - 1) {
        cmd_help_print (&cmd_plugin_command, stderr);
        return CMD_EXIT_USAGE;
    }
    const char *name = argv[optind];
    char *error = NULL;
    weir_plugin *plugin;
    if (weir_plugin_new (name, &plugin, &error)) {
        cmd_error ("plugin", "%s", error ? error : "out of memory");
        weir_free (error);
        return CMD_EXIT_FAILURE;
    }
    const weir_processor *table = weir_plugin_table (plugin);
    printf ("name:        %s\n", table->name ? table->name : "(none)");
    printf ("description: %s\n", table->description ? table->description : "(none)");
    printf ("abi:         %d\n", table->abi);
    printf ("weir:        built for processor ABI %d; this weir %s\n", WEIR_PLUGIN_ABI, weir_version ());
    printf ("path:        %s\n", weir_plugin_path (plugin));
    printf ("callbacks:  %s%s%s process%s%s%s%s\n", table->open ? " open" : "", table->init ? " init" : "",
            table->thread_open ? " thread_open" : "", table->process_bytes ? " process_bytes" : "",
            table->epoch_end ? " epoch_end" : "", table->thread_close ? " thread_close" : "",
            table->close ? " close" : "");
    //  Named outputs: each a branch the description starts with NAME.PORT
    if (table->ports && table->ports[0]) {
        printf ("outputs:    ");
        for (size_t i = 0; table->ports[i]; i++)
            printf (" %s%s", table->ports[i], table->ports[i + 1] ? "," : "\n");
    }
    else
        printf ("outputs:     one (weir_emit)\n");
    if (!table->props)
        printf ("properties:  not declared (see its documentation)\n");
    else if (!table->props->name)
        printf ("properties:  none of its own\n");
    else {
        printf ("properties:\n");
        for (const weir_property_info *p = table->props; p->name; p++)
            printf ("  %-12s %-9s %s\n", p->name, !p->fallback ? "required" : *p->fallback ? p->fallback : "(none)",
                    p->description ? p->description : "");
    }
    weir_plugin_destroy (&plugin);
    return CMD_EXIT_OK;
}
