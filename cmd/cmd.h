/*  cmd/cmd.h - the weir command: what its files share.

    The command is a client of <weir/weir.h> and nothing else: whatever it
    needs of the engine is public API.  Library code never prints; this is
    where messages reach the user.  Exit codes: 0 success, 1 runtime
    failure, 2 usage error.  */
#ifndef WEIR_CMD_H_INCLUDED
#define WEIR_CMD_H_INCLUDED

#include <stdio.h>
#include <weir/weir.h>

#define CMD_EXIT_OK 0
#define CMD_EXIT_FAILURE 1
#define CMD_EXIT_USAGE 2

/*  The subcommands: ARGV[0] is the subcommand's name.  */
int cmd_run (int argc, char **argv);
int cmd_elements (int argc, char **argv);
int cmd_plugin (int argc, char **argv);
int cmd_checkpoints (int argc, char **argv);

/*  Each subcommand's help text.  */
extern const char cmd_run_help[];
extern const char cmd_elements_help[];
extern const char cmd_plugin_help[];
extern const char cmd_checkpoints_help[];

/*  "reader", "processor" or "writer".  */
const char *cmd_kind_name (weir_element_kind kind);

/*  The progress line on stderr (cmd/progress.c), for weir_pipe_set_progress.
    TTY: redraw one line in place.  */
typedef struct cmd_progress cmd_progress;
/*  EPOCHS: the job counts epochs (show which one runs).  */
cmd_progress *cmd_progress_new (weir_pipe *pipe, int tty, int epochs);
void cmd_progress_destroy (cmd_progress **self_p);
void cmd_progress_draw (weir_pipe *pipe, void *self, int final);

/*  V in human units: "1.2 k", "34.0 M", "12".  */
void cmd_human (char *out, size_t size, double v);

/*  The statistics of a finished job as JSON into PATH ("-": stdout)
    (cmd/stats.c).  RC is weir_pipe_run's result.  0, or -1 after saying
    why it could not be written.  */
/*  Can PATH be written?  0, or -1 after saying why not.  */
int cmd_stats_check (const char *path);

int cmd_stats_write (weir_pipe *pipe, const char *path, int rc, int exit_code);

/*  Bytes as a JSON string, quoted and escaped (cmd/json.c).  */
void cmd_json_string (FILE *out, const char *text);

#endif
