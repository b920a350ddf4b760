/*  cmd/main.c - the weir command: which subcommand.  */
#include "config.h"
#include "cmd.h"

#include <string.h>

const cmd_command *const cmd_commands[] = {
    &cmd_run_command,
    &cmd_elements_command,
    &cmd_plugin_command,
    &cmd_checkpoints_command,
    &cmd_help_command,
    &cmd_complete_command,
    NULL,
};

const cmd_command *cmd_command_find (const char *name)
{
    for (size_t i = 0; cmd_commands[i]; i++)
        if (strcmp (cmd_commands[i]->name, name) == 0)
            return cmd_commands[i];
    return NULL;
}

int main (int argc, char **argv)
{
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
