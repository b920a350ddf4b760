/*  cmd/main.c - the weir command: which subcommand.  */
#include "cmd.h"

#include <string.h>

static const cmd_command *const s_commands[] = {
    &cmd_run_command,
    &cmd_elements_command,
    &cmd_graph_command,
    &cmd_plugin_command,
    &cmd_checkpoints_command,
    &cmd_help_command,
    &cmd_complete_command,
    NULL,
};

int main (int argc, char **argv)
{
    cmd_commands = s_commands;
    if (argc < 2) {
        cmd_overview_print (stderr);
        return CMD_EXIT_USAGE;
    }
    const char *name = argv[1];
    const cmd_command *command = cmd_command_find (name);
    if (command)
        return command->main (argc - 1, argv + 1);
    if (strcmp (name, "--help") == 0 || strcmp (name, "-h") == 0) {
        cmd_overview_print (stdout);
        return CMD_EXIT_OK;
    }
    if (strcmp (name, "--version") == 0 || strcmp (name, "-V") == 0) {
        printf ("weir %s\n", weir_version ());
        return CMD_EXIT_OK;
    }
    fprintf (stderr, "weir: unknown command '%s'\n", name);
    cmd_overview_print (stderr);
    return CMD_EXIT_USAGE;
}
