/*  cmd/help.c - weir help: the overview of the subcommands, one
    subcommand's help, the manual page; and the exit codes they list.  */
#include "cmd.h"

#include <string.h>

//  The help and the man page list these.
const cmd_exit_code cmd_exit_codes[] = {
    {CMD_EXIT_OK, "success", NULL},
    {CMD_EXIT_FAILURE, "runtime failure",
     "a missing or unreadable input, an unwritable output or a full disk, corrupt input, a processor error, "
     "a plugin that cannot be loaded"},
    {CMD_EXIT_USAGE, "usage error",
     "a bad option, a malformed description, an unknown element or property, a bad property value"},
    {128 + 2, "stopped by SIGINT (Ctrl-C)",
     "after the epoch cut short was written out (and checkpointed with --checkpoint), or aborted by a second "
     "signal or --stop-timeout"},
    {128 + 15, "stopped by SIGTERM", "the same as for SIGINT"},
    {0, NULL, NULL},
};

static int s_help (int argc, char **argv);

enum { S_MAN = 256 };

static const cmd_option s_options[] = {
    {"man", S_MAN, NULL, CMD_VALUE_ANY, NULL, "print the manual page, weir(1), as roff",
     "The installed weir.1 is made so at build time: 'man weir' and 'weir help --man | man -l -' show the "
     "same page."},
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_help_command = {
    .name = "help",
    .main = s_help,
    .usage = "[COMMAND | --man]",
    .summary = "show the overview, a command's help, or the manual page",
    .description = "Without COMMAND, show the overview of the commands.  With COMMAND, show its help, as "
                   "'weir COMMAND --help' does.",
    .options = s_options,
};

void cmd_overview_print (FILE *out)
{
    int first = 1;
    for (size_t i = 0; cmd_commands[i]; i++) {
        const cmd_command *c = cmd_commands[i];
        if (c->hidden)
            continue;
        //  The first form of each; 'weir COMMAND --help' has them all
        int len = (int) strcspn (c->usage, "\n");
        fprintf (out, "%s weir %s %.*s\n", first ? "usage:" : "      ", c->name, len, c->usage);
        first = 0;
    }
    fprintf (out, "       weir --help | --version\n\nCommands:\n");
    for (size_t i = 0; cmd_commands[i]; i++)
        if (!cmd_commands[i]->hidden)
            fprintf (out, "  %-13s%s\n", cmd_commands[i]->name, cmd_commands[i]->summary);
    fprintf (out, "\n");
    cmd_wrap (out,
              "Run 'weir help COMMAND' or 'weir COMMAND --help' for a command's options, 'weir elements' for "
              "the builtin elements, and 'man weir' for the whole manual.",
              0);
    fprintf (out, "\n");
    cmd_wrap (out,
              "Processor plugins named without a path are found as NAME.so in the folders of "
              "$WEIR_PLUGIN_PATH (colon-separated), then in the plugin folder:",
              0);
    fprintf (out, "  %s\n", weir_plugin_dir ());
    fprintf (out, "\nExit codes:\n");
    for (const cmd_exit_code *e = cmd_exit_codes; e->name; e++) {
        int column = fprintf (out, "  %-5d%s%s", e->code, e->name, e->meaning ? ": " : "");
        if (e->meaning)
            cmd_fill (out, e->meaning, column, 7);
        else
            fputc ('\n', out);
    }
}

static int s_help (int argc, char **argv)
{
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_help_command);
    int c, man = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        if (c == 'h') {
            cmd_help_print (&cmd_help_command, stdout);
            return CMD_EXIT_OK;
        }
        if (c != S_MAN) {
            fprintf (stderr, "Try 'weir help --help'.\n");
            return CMD_EXIT_USAGE;
        }
        man = 1;
    }
    if (optind + 1 < argc || (man && optind < argc)) {
        cmd_help_print (&cmd_help_command, stderr);
        return CMD_EXIT_USAGE;
    }
    if (man) {
        cmd_manual_print (stdout);
        return fflush (stdout) ? CMD_EXIT_FAILURE : CMD_EXIT_OK;
    }
    if (optind == argc) {
        cmd_overview_print (stdout);
        return CMD_EXIT_OK;
    }
    const cmd_command *command = cmd_command_find (argv[optind]);
    if (!command || command->hidden) {
        fprintf (stderr, "weir help: unknown command '%s' (commands:", argv[optind]);
        const char *sep = " ";
        for (size_t i = 0; cmd_commands[i]; i++)
            if (!cmd_commands[i]->hidden) {
                fprintf (stderr, "%s%s", sep, cmd_commands[i]->name);
                sep = ", ";
            }
        fprintf (stderr, ")\n");
        return CMD_EXIT_USAGE;
    }
    cmd_help_print (command, stdout);
    return CMD_EXIT_OK;
}
