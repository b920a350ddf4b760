/*  cmd/cmd.h - the weir command: what its files share.

    The command is a client of <weir/weir.h> and nothing else: whatever it
    needs of the engine is public API.  Library code never prints; this is
    where messages reach the user, each after "weir COMMAND: ".  Exit
    codes: 0 success, 1 runtime failure, 2 usage error (cmd_exit_codes
    says what gives each).  */
#ifndef WEIR_CMD_H_INCLUDED
#define WEIR_CMD_H_INCLUDED

#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <weir/weir.h>

#define CMD_EXIT_OK 0
#define CMD_EXIT_FAILURE 1
#define CMD_EXIT_USAGE 2

/*  What completes an option's argument (see cmd/complete.c).  */
typedef enum { CMD_VALUE_ANY, CMD_VALUE_FILE, CMD_VALUE_DIR } cmd_value_kind;

/*  One option of a subcommand, named and described in this one place:
    getopt's long options, the --help text, the man page and the bash
    completion are all made from the tables (cmd/options.c), so none of
    them can miss an option or disagree about it.  A table ends with a
    NULL name.  */
typedef struct cmd_option {
    const char *name;      //  the long name, without "--"
    int key;               //  getopt's value: the short letter, or >= 256 for none
    const char *arg;       //  the argument's name ("FILE"), NULL for a flag
    cmd_value_kind value;  //  what completes the argument
    const char *group;     //  the heading it is listed under, NULL for the first group
    const char *summary;   //  what it does, one sentence or two, for --help
    const char *details;   //  what the man page adds to the summary, or NULL
} cmd_option;

/*  A subcommand: how it is called, what it does, its options.  Texts are
    paragraphs separated by blank lines; --help wraps them to the terminal's
    80 columns and the man page lets roff fill them.  A paragraph whose
    lines start with two blanks is shown as it is (examples).  */
typedef struct cmd_command {
    const char *name;                     //  "run"
    int (*main) (int argc, char **argv);  //  ARGV[0] is the subcommand's name
    const char *usage;                    //  the arguments after "weir NAME", one line per form
    const char *summary;                  //  one line for the overview
    const char *description;              //  before the options
    const cmd_option *options;
    const char *notes;  //  after the options, or NULL
    int in_order;       //  options end at the first operand, which may start with '-'
    int hidden;         //  an internal command, for the completion script only
} cmd_command;

/*  The subcommands in the order of the overview, NULL-terminated: the
    table of cmd/main.c, which sets this before anything runs
    (cmd/commands.c).  */
extern const cmd_command *const *cmd_commands;
extern const cmd_command cmd_run_command;
extern const cmd_command cmd_elements_command;
extern const cmd_command cmd_plugin_command;
extern const cmd_command cmd_graph_command;
extern const cmd_command cmd_checkpoints_command;
extern const cmd_command cmd_help_command;
extern const cmd_command cmd_complete_command;

/*  The subcommand called NAME, hidden ones included, or NULL
    (cmd/commands.c).  */
const cmd_command *cmd_command_find (const char *name);

/*  The exit codes and what each means, for the help and the man page,
    ended by a NULL meaning (cmd/help.c).  */
typedef struct {
    int code;
    const char *name;     //  "usage error"; NULL ends the table
    const char *meaning;  //  what gives it, or NULL
} cmd_exit_code;
extern const cmd_exit_code cmd_exit_codes[];

/*  The overview of the subcommands (cmd/help.c) and the manual page as
    roff (cmd/manual.c) into OUT.  */
void cmd_overview_print (FILE *out);
void cmd_manual_print (FILE *out);

/*  getopt_long's arguments for COMMAND's table (cmd/options.c).  */
#define CMD_MAX_OPTIONS 32
typedef struct {
    struct option longs[CMD_MAX_OPTIONS + 1];
    char shorts[2 * CMD_MAX_OPTIONS + 2];
} cmd_getopt;
void cmd_getopt_init (cmd_getopt *self, const cmd_command *command);

/*  COMMAND's --help text into OUT.  */
void cmd_help_print (const cmd_command *command, FILE *out);

/*  "weir COMMAND: " and the message on stderr, with a newline.  */
void cmd_error (const char *command, const char *format, ...) WEIR_PRINTF (2, 3);

/*  TEXT's words into OUT from COLUMN, where the cursor is, lines going on
    at column INDENT and none past column 79; ends the last line.  */
void cmd_fill (FILE *out, const char *text, int column, int indent);

/*  TEXT's paragraphs into OUT, each line starting at column INDENT and
    none past column 79 (cmd/options.c).  */
void cmd_wrap (FILE *out, const char *text, int indent);

/*  "reader", "processor" or "writer".  */
const char *cmd_kind_name (weir_element_kind kind);

/*  The properties every element of KIND takes beyond the common ones
    (passes, linger, on-error, dead-letter), terminated by a NULL name.  */
const weir_property_info *cmd_kind_extra (weir_element_kind kind);

/*  The progress line on stderr (cmd/progress.c), for weir_pipe_set_progress.
    TTY: redraw one line in place.  */
typedef struct cmd_progress cmd_progress;
/*  EPOCHS: the job counts epochs (show which one runs).  */
cmd_progress *cmd_progress_new (weir_pipe *pipe, int tty, int epochs);
void cmd_progress_destroy (cmd_progress **self_p);
void cmd_progress_draw (weir_pipe *pipe, void *self, int final);

/*  The bound on an abort that does not end (cmd/watchdog.c): once PIPE
    has been ending without a checkpoint (weir_pipe_failed_for) for
    SECONDS, say so and _exit with 128 + *SIGNAL, or 1 when no signal
    came.  NULL when SECONDS is 0 (no bound), or when the thread cannot be
    started.  */
/*  --metrics (cmd/metrics.c): the running job's figures over HTTP, in
    the Prometheus text format, at SPEC (PORT on 127.0.0.1, or
    ADDRESS:PORT; a job's rank R listens on PORT + R).  _check says
    whether SPEC is well-formed (0, or -1 said); _new listens (NULL
    said); _update makes the text scrapes get, from the progress tick.  */
typedef struct cmd_metrics cmd_metrics;
int cmd_metrics_check (const char *spec);
cmd_metrics *cmd_metrics_new (const char *spec, int rank);
const char *cmd_metrics_url (const cmd_metrics *self);
void cmd_metrics_update (cmd_metrics *self, weir_pipe *pipe);
void cmd_metrics_destroy (cmd_metrics **self_p);

typedef struct cmd_watchdog cmd_watchdog;
cmd_watchdog *cmd_watchdog_new (weir_pipe *pipe, double seconds, const atomic_int *signal);
void cmd_watchdog_destroy (cmd_watchdog **self_p);

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

/*  The description of weir COMMAND: with FILE (-f; '-' for standard
    input), *LINES the file as written and *TEXT the description the
    engine reads (comments and line breaks blanked, every byte where it
    was); else the ARGC arguments ARGV joined with blanks (the shell may
    have split the description) and *LINES NULL.  0, or the exit code
    after saying why: CMD_EXIT_USAGE for a file that cannot be read,
    CMD_EXIT_FAILURE when out of memory.  */
int cmd_description_read (const char *command, const char *file, int argc, char **argv, char **text,
                          char **lines);

/*  A mistake at OFFSET of the description (TEXT, read from FILE when
    LINES is not NULL) on stderr: the description, or the file's line with
    its number and column, and a caret under it.  Nothing when OFFSET < 0.  */
void cmd_description_caret (const char *file, const char *text, const char *lines, long offset);

/*  The records of the stages of KIND summed into *SUM (records_*,
    job_records_*, total_records_*): what the readers read, what the
    writers wrote.  0, or -1 when the pipe has no such stage.  */
int cmd_stats_kind (weir_pipe *pipe, weir_element_kind kind, weir_stage_stats *sum);



#endif
