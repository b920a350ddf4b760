/*  cmd/main.c - the weir command: which subcommand, and the overall help.  */
#include "config.h"
#include "cmd.h"

#include <string.h>

static const char s_usage[] =
    "usage: weir run [OPTIONS] 'READER [key=value ...] ! PROCESSOR ... ! WRITER [key=value ...]'\n"
    "       weir elements      list the builtin elements and their properties\n"
    "       weir plugin PATH|NAME   describe a processor plugin\n"
    "       weir checkpoints DIR [--epoch E [--blob NAME]]   list and inspect checkpoints\n"
    "       weir --help | --version\n";

int main (int argc, char **argv)
{
    if (argc < 2) {
        fputs (s_usage, stderr);
        return CMD_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp (cmd, "run") == 0)
        return cmd_run (argc - 1, argv + 1);
    if (strcmp (cmd, "elements") == 0)
        return cmd_elements (argc - 1, argv + 1);
    if (strcmp (cmd, "plugin") == 0)
        return cmd_plugin (argc - 1, argv + 1);
    if (strcmp (cmd, "checkpoints") == 0)
        return cmd_checkpoints (argc - 1, argv + 1);
    if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0 || strcmp (cmd, "help") == 0) {
        printf ("%s\n%s", s_usage, cmd_run_help);
        return CMD_EXIT_OK;
    }
    if (strcmp (cmd, "--version") == 0 || strcmp (cmd, "-V") == 0) {
        printf ("weir %s\n", weir_version ());
        return CMD_EXIT_OK;
    }
    fprintf (stderr, "weir: unknown command '%s'\n%s", cmd, s_usage);
    return CMD_EXIT_USAGE;
}
