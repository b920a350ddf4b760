/*  cmd/commands.c - the table of subcommands, as main.c hands it over,
    for the files that list or look up commands (help, the manual page,
    the completion).  main.c owns the table: it is the one file that names
    every subcommand, so none of them names main.c back.  */
#include "cmd.h"

#include <string.h>

const cmd_command *const *cmd_commands;

const cmd_command *cmd_command_find (const char *name)
{
    for (size_t i = 0; cmd_commands[i]; i++)
        if (strcmp (cmd_commands[i]->name, name) == 0)
            return cmd_commands[i];
    return NULL;
}
