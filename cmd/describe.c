/*  cmd/describe.c - weir plugin: describe a processor plugin.  */
#include "config.h"
#include "cmd.h"

#include <stdlib.h>
#include <weir/plugin.h>

const char cmd_plugin_help[] = "usage: weir plugin PATH|NAME\n"
                               "\n"
                               "Load a processor plugin as 'weir run' would and describe it: its name,\n"
                               "description, ABI, path and callbacks.  A NAME without '/' is looked up\n"
                               "as NAME.so in $WEIR_PLUGIN_PATH, then in the installed plugin folder.\n";

int cmd_plugin (int argc, char **argv)
{
    if (argc != 2) {
        fputs (cmd_plugin_help, stderr);
        return CMD_EXIT_USAGE;
    }
    char *error = NULL;
    weir_plugin *plugin;
    if (weir_plugin_new (argv[1], &plugin, &error)) {
        fprintf (stderr, "weir: %s\n", error ? error : "out of memory");
        free (error);
        return CMD_EXIT_FAILURE;
    }
    const weir_processor *table = weir_plugin_table (plugin);
    printf ("name:        %s\n", table->name ? table->name : "(none)");
    printf ("description: %s\n", table->description ? table->description : "(none)");
    printf ("abi:         %d\n", table->abi);
    printf ("weir:        built for processor ABI %d; this weir %s\n", WEIR_PLUGIN_ABI, weir_version ());
    printf ("path:        %s\n", weir_plugin_path (plugin));
    printf ("callbacks:  %s%s%s process%s%s%s\n", table->open ? " open" : "", table->init ? " init" : "",
            table->thread_open ? " thread_open" : "", table->epoch_end ? " epoch_end" : "",
            table->thread_close ? " thread_close" : "", table->close ? " close" : "");
    weir_plugin_destroy (&plugin);
    return CMD_EXIT_OK;
}
