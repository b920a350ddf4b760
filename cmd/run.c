/*  cmd/run.c - weir run: options, the run, its summary.  */
#include "cmd.h"

#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

//  The options of 'weir run'.
typedef struct {
    int progress, quiet;
    unsigned interval_ms;
    const char *stats;
    const char *metrics;  //  --metrics [ADDRESS:]PORT
    uint64_t epoch_records, epochs, resume_from;
    double epoch_seconds, stop_timeout, epoch_timeout, abort_timeout;
    const char *checkpoint;
    const char *file;  //  -f: the description's file
    char *load;        //  the directory of --load-blobs
    int64_t load_epoch;
    unsigned keep, failures;
    unsigned key_groups;  //  0: not given
    int resume;           //  WEIR_RESUME_*
    int async;
} s_options;

enum {
    S_PROGRESS = 256,
    S_NO_PROGRESS,
    S_STATS,
    S_INTERVAL,
    S_EPOCH_RECORDS,
    S_EPOCH_SECONDS,
    S_EPOCHS,
    S_CHECKPOINT,
    S_RESUME,
    S_RESUME_FROM,
    S_KEEP,
    S_ASYNC,
    S_FAILURES,
    S_LOAD_BLOBS,
    S_STOP_TIMEOUT,
    S_EPOCH_TIMEOUT,
    S_ABORT_TIMEOUT,
    S_KEY_GROUPS,
    S_METRICS,
};

#define S_CHECKPOINTS "Epochs and checkpoints"

static const cmd_option s_options_table[] = {
    {"progress", S_PROGRESS, NULL, CMD_VALUE_ANY, NULL,
     "a live line on stderr: records/s of each stage and the fill of the queue that feeds it (default when "
     "stderr is a terminal)",
     "With checkpoints or epochs the line also shows the epoch, and processors' metrics (a running loss) "
     "follow the stages."},
    {"no-progress", S_NO_PROGRESS, NULL, CMD_VALUE_ANY, NULL, "no progress line", NULL},
    {"progress-interval", S_INTERVAL, "MS", CMD_VALUE_ANY, NULL, "time between progress lines (default 500)",
     "From 1 to 3600000 milliseconds."},
    {"stats", S_STATS, "FILE", CMD_VALUE_FILE, NULL,
     "write statistics as JSON to FILE at exit ('-' for stdout): records in and out and busy time per stage, "
     "wall time, records/s",
     "The file is written for a failed job too, with its error and exit code, and holds the metrics the "
     "processors published."},
    {"metrics", S_METRICS, "[ADDRESS:]PORT", CMD_VALUE_ANY, NULL,
     "serve the running job's figures at http://ADDRESS:PORT/metrics in the Prometheus text format "
     "(ADDRESS 127.0.0.1 unless given; PORT 0 picks a free one, said at start)",
     "Per stage records in, out and rejected, batches, busy seconds, threads, the fill of the queue that "
     "feeds it, a reader's way through its input and how far a follower is behind its files' writers; the "
     "epoch, the pauses at epoch ends as a histogram, failed checkpoints, and the metrics processors "
     "publish: the names of --stats, prefixed weir_ (weir_stage_ for a stage's) and with _total for "
     "counters.  The figures are made at each progress tick "
     "(--progress-interval), whether the progress line is shown or not, and a scrape never waits on the "
     "pipe.  Only /metrics is served.  In a job of several ranks, rank R listens on PORT + R."},
    {"file", 'f', "FILE", CMD_VALUE_FILE, NULL,
     "read the description from FILE ('-' for standard input) instead of the arguments",
     "Line breaks are blanks there, and '#' at the start of a word (outside quotes) starts a comment that "
     "runs "
     "to the end of its line.  An error in it names the line and the column."},
    {"quiet", 'q', NULL, CMD_VALUE_ANY, NULL, "print nothing but errors and warnings", NULL},
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {"version", 'V', NULL, CMD_VALUE_ANY, NULL, "print the version", NULL},
    {"epoch-records", S_EPOCH_RECORDS, "N", CMD_VALUE_ANY, S_CHECKPOINTS,
     "end an epoch after exactly N records read (all reader threads together; k, M, G suffixes allowed); the "
     "end of each pass also ends one",
     "The last epoch may be shorter."},
    {"epoch-seconds", S_EPOCH_SECONDS, "T", CMD_VALUE_ANY, S_CHECKPOINTS,
     "end an epoch after T seconds of wall time", NULL},
    {"epochs", S_EPOCHS, "N", CMD_VALUE_ANY, S_CHECKPOINTS, "stop after epoch N",
     "A job stopped so goes on with --resume."},
    {"checkpoint", S_CHECKPOINT, "DIR", CMD_VALUE_DIR, S_CHECKPOINTS,
     "checkpoint into the LevelDB at DIR after init (epoch 0) and after every epoch: reader offsets, writer "
     "lengths, blobs, in one atomic synced write",
     "A job killed at any instant resumes from its latest checkpoint with nothing lost and nothing written "
     "twice."},
    {"resume", S_RESUME, NULL, CMD_VALUE_ANY, S_CHECKPOINTS,
     "go on from the latest checkpoint in DIR, or start fresh when it has none (safe in a restart loop)",
     "A job over files reads what was appended to them since, and the files new to its glob; a finished "
     "job with nothing new does nothing.  On resume the blobs are restored, every shard is sought, every "
     "file "
     "writer is truncated to its committed length, and the job goes on with the next epoch without running "
     "init."},
    {"resume-from", S_RESUME_FROM, "E", CMD_VALUE_ANY, S_CHECKPOINTS,
     "go back to checkpoint E (the newer ones are deleted) and go on from there", NULL},
    {"keep", S_KEEP, "K", CMD_VALUE_ANY, S_CHECKPOINTS, "keep the newest K checkpoints (default: all)", NULL},
    {"async-checkpoint", S_ASYNC, NULL, CMD_VALUE_ANY, S_CHECKPOINTS,
     "copy the blobs and write the checkpoint on a background thread while the pipe runs on",
     "One write is in flight at a time; a failed write is reported at the next checkpoint or at exit."},
    {"checkpoint-failures", S_FAILURES, "N", CMD_VALUE_ANY, S_CHECKPOINTS,
     "go on through N consecutive failed checkpoints (each reported) before failing the job", NULL},
    {"load-blobs", S_LOAD_BLOBS, "DIR[:E|:best]", CMD_VALUE_DIR, S_CHECKPOINTS,
     "before init, load the blobs of checkpoint E (default: latest; best: the one a processor marked the "
     "best, as softmax validate= does) of another job's directory",
     "To evaluate a trained model, for instance."},
    {"stop-timeout", S_STOP_TIMEOUT, "S", CMD_VALUE_ANY, S_CHECKPOINTS,
     "abort a stop (Ctrl-C, SIGTERM) whose drain takes longer than S seconds (default 5; 0: wait as long as "
     "it takes)",
     "The abort writes no new checkpoint: the last one stays valid."},
    {"abort-timeout", S_ABORT_TIMEOUT, "S", CMD_VALUE_ANY, S_CHECKPOINTS,
     "exit S seconds after an abort (a second signal, the stop timeout, a failure) if the run has not ended "
     "by then (default 10; 0: wait as long as it takes)",
     "Only a thread stuck where no abort reaches (a processor in its own code, a write blocked in the "
     "kernel) holds a run that long.  The exit code is the abort's; the last checkpoint stays valid."},
    {"epoch-timeout", S_EPOCH_TIMEOUT, "S", CMD_VALUE_ANY, S_CHECKPOINTS,
     "a job of several ranks (mpirun): abort every rank when one waits more than S seconds for the others at "
     "an epoch boundary (default 0: no limit)",
     "Rank 0 names the ranks that did not come. The last checkpoint stays valid: --resume goes on from it."},
    {"key-groups", S_KEY_GROUPS, "N", CMD_VALUE_ANY, S_CHECKPOINTS,
     "the key groups a new job hashes keys into (1 to 65536, default 128): the most threads a keyed stage "
     "(key=) can use, on all ranks together, fixed when the job is created",
     "A stage given key=PATH gets every record of one key in the same thread: each thread owns a run of "
     "key groups and keeps their state, which a resume with other thread or rank counts hands over group by "
     "group.  In a job of several ranks the stage's threads of every rank share the groups.  "
     "A resume takes the checkpoint's number; one that asks for another is refused."},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

static int s_run (int argc, char **argv);

const cmd_command cmd_run_command = {
    .name = "run",
    .main = s_run,
    .usage = "[OPTIONS] 'READER [key=value ...] ! PROCESSOR ... ! WRITER [key=value ...]' | -f FILE",
    .summary = "run a pipe: read records, process them, write them",
    .description =
        "Run a pipe: the first element reads records, the last writes them, those between process them.  "
        "Each element takes key=value properties; quote a value with '...' or \"...\" to put blanks or '!' "
        "in it.  The description may be one argument or several (they are joined with blanks).\n\n"
        "A description may be a graph: name=NAME names an element and NAME. refers to it; after '!' it ends "
        "the branch in that element (a merge), elsewhere it starts a new branch from it; an element's name "
        "after another's properties, without '!', starts an independent chain ('a ! b  c ! d').  tee sends "
        "every "
        "record down each branch that starts from it; nothing feeds a reader, a writer feeds nothing.  "
        "route sends each record down the branch of the first condition true of it: BRANCH='CONDITION' "
        "names a branch, a named output from which NAME.BRANCH starts it, and default=BRANCH takes what no "
        "condition is true of (plugins may have named outputs too).  Every output of a graph commits in the "
        "one checkpoint.  'weir graph' prints a description as DOT.\n\n"
        "  weir run 'json path=app.jsonl ! tee name=t  t. ! msgpack path=all.mp  "
        "t. ! filter '\\''.level == \"error\"'\\'' ! json path=errors.jsonl'\n"
        "  weir run 'json path=app.jsonl ! route name=r errors='\\''.level == \"error\"'\\'' default=rest  "
        "r.errors ! json path=errors.jsonl  r.rest ! json path=rest.jsonl'",
    .options = s_options_table,
    .notes =
        "Without --resume or --resume-from, a directory that holds checkpoints is refused.  Only "
        "threads=, capacity=, batch=, linger= and fuse=, where elements connect (brokers=, conninfo=: said "
        "when "
        "they change) and the order of properties may change on resume; another change is refused, "
        "showing the first difference.\n"
        "\n"
        "Ctrl-C (SIGINT) or SIGTERM ends the current epoch at once: what was read flows out, a "
        "checkpoint is written (with --checkpoint) and weir exits 128+signal (130, 143); --resume goes "
        "on exactly.  A second signal of either kind aborts at once without a new checkpoint (the same "
        "signal from the same process within 200 ms counts once, as timeout(1) sends it twice); the last "
        "one stays valid, and if a thread stuck where no abort reaches holds the run past --abort-timeout, "
        "weir exits without it.  A third signal ends the process as the signal would.\n"
        "\n"
        "Incremental ingest: on resume, a file of the glob that was only appended to (the same inode, "
        "the same first bytes and bytes before its old size) is read on past its old size, and a file new "
        "to the glob is read in full, whether the job had finished or not.  A file that shrank, was "
        "written again or replaced, or was deleted before it was read to its end, is refused, naming it.\n"
        "\n"
        "A pipe or standard input cannot be read again: to resume a job that reads one, feed it the same "
        "input again from its start; --resume reads past the bytes the checkpoint committed.\n"
        "\n"
        "Outputs when a run fails: without --checkpoint, a file that a job reading files writes is written "
        "beside it (.NAME.weir-PID-N) and renamed over it only when the job ends without failing (a stop "
        "by signal included), so a failed, aborted or killed run leaves the old file as it was.  With "
        "--checkpoint, the file itself is written: a failed run leaves what it wrote, and --resume goes on "
        "from the last checkpoint.  A job that follows its files (follow=1) or reads a pipe or a terminal "
        "writes in place, so its output can be watched as it grows; so do standard output, pipes, the "
        "leveldb writer and dead letters.\n"
        "\n"
        "An element that contains '/' or ends in .so is a processor plugin (a shared object); a name "
        "that is no builtin is looked up as NAME.so in the folders of $WEIR_PLUGIN_PATH "
        "(colon-separated), then in the installed plugin folder.\n"
        "\n"
        "Run 'weir elements' for the builtin elements.",
    .in_order = 1,
};

//  The pipe that signals stop, the signal that stopped it, and how many
//  came.  The first stops at the end of an epoch cut short, the second
//  aborts, the third (a pipe stuck where abort cannot reach, such as a
//  processor that never returns) ends the process as the signal would.
static weir_pipe *volatile s_pipe;
//  Atomics, lock-free: the handler may run on any thread, and the
//  watchdog's thread reads the signal too.
static atomic_int s_signal, s_signals;
//  Who sent the first signal, and when (ms, monotonic): see s_repeat
static atomic_int s_sender;
static atomic_llong s_first_ms;
//  Whether stderr is a terminal: only there does a line need ending
//  (after "^C", or the progress line) before a message
static int s_terminal;

static void s_say (const char *text)
{
    ssize_t n = write (STDERR_FILENO, text, strlen (text));
    (void) n;
}

static long long s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  The first signal delivered again: the same signal from the same
//  process within 200 ms.  timeout(1) sends its signal to weir and then
//  to weir's process group, which holds weir: one request, twice, a few
//  microseconds apart, that must not abort what the first asked to stop
//  cleanly.  A script that means to abort waits longer between its two
//  kills; a terminal's Ctrl-C comes from the kernel (no sender), and is
//  never merged.
static int s_repeat (int sig, const siginfo_t *info)
{
    return info && info->si_code == SI_USER && info->si_pid > 0 && sig == s_signal && info->si_pid == s_sender
           && s_now_ms () - s_first_ms < 200;
}

static void s_on_signal (int sig, siginfo_t *info, void *context)
{
    (void) context;
    if (s_signals >= 1 && s_repeat (sig, info))
        return;
    int count = ++s_signals;
    if (count == 1) {
        s_sender = info && info->si_code == SI_USER ? (int) info->si_pid : 0;
        s_first_ms = s_now_ms ();
        s_signal = sig;
        s_say (s_terminal ? "\nweir: stopping at the end of this epoch (signal again to abort)\n"
                          : "weir: stopping at the end of this epoch (signal again to abort)\n");
        if (s_pipe)
            weir_pipe_stop (s_pipe);
    }
    else if (count == 2) {
        //  Whether the abort comes in time, or the stop's checkpoint was
        //  already written, only the end of the run can say
        s_say ("weir: aborting (signal again to end at once)\n");
        if (s_pipe)
            weir_pipe_abort (s_pipe);
    }
    else {
        signal (sig, SIG_DFL);
        raise (sig);
    }
}

//  A timeout of OPTION: seconds, 0 (none) or more.  0, or -1 said.
static int s_timeout (const char *option, const char *text, double *out)
{
    char *end;
    *out = strtod (text, &end);
    if (*end || end == text || !(*out >= 0) || *out > 1e9) {
        fprintf (stderr, "weir run: %s wants a number of seconds (0 or more), not '%s'\n", option, text);
        return -1;
    }
    return 0;
}

static int s_count (const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    int64_t v;
    if (weir_number_parse (text, &v) || v < 0 || (uint64_t) v < min || (uint64_t) v > max) {
        if (max == UINT64_MAX)
            fprintf (stderr, "weir run: %s wants a whole number of at least %llu, not '%s'\n", option,
                     (unsigned long long) min, text);
        else
            fprintf (stderr, "weir run: %s wants a whole number from %llu to %llu, not '%s'\n", option,
                     (unsigned long long) min, (unsigned long long) max, text);
        return -1;
    }
    *out = (uint64_t) v;
    return 0;
}

//  --load-blobs DIR, DIR:E or DIR:best.
static int s_load_blobs (s_options *o, const char *arg)
{
    const char *colon = strrchr (arg, ':');
    size_t dirlen = strlen (arg);
    o->load_epoch = -1;
    if (colon && colon[1] && strspn (colon + 1, "0123456789") == strlen (colon + 1)) {
        dirlen = (size_t) (colon - arg);
        o->load_epoch = (int64_t) strtoull (colon + 1, NULL, 10);
    }
    else if (colon && !strcmp (colon + 1, "best")) {
        dirlen = (size_t) (colon - arg);
        o->load_epoch = WEIR_LOAD_BEST;
    }
    free (o->load);
    o->load = strndup (arg, dirlen);
    return o->load ? 0 : -1;
}

//  One option C with ARG: 0, or -1 after saying what was wrong.
static int s_option (s_options *o, int c, const char *arg)
{
    uint64_t v;
    char *end;
    switch (c) {
    case S_PROGRESS: o->progress = 1; return 0;
    case S_NO_PROGRESS: o->progress = 0; return 0;
    case S_STATS: o->stats = arg; return 0;
    case S_METRICS: o->metrics = arg; return cmd_metrics_check (arg);
    case 'q': o->quiet = 1; return 0;
    case 'f': o->file = arg; return 0;
    case S_INTERVAL: {
        long ms = strtol (arg, &end, 10);
        if (*end || end == arg || ms < 1 || ms > 3600000) {
            fprintf (stderr, "weir run: --progress-interval wants milliseconds (1 to 3600000), not '%s'\n",
                     arg);
            return -1;
        }
        o->interval_ms = (unsigned) ms;
        return 0;
    }
    case S_EPOCH_RECORDS: return s_count ("--epoch-records", arg, 1, UINT64_MAX, &o->epoch_records);
    case S_EPOCHS: return s_count ("--epochs", arg, 1, UINT64_MAX, &o->epochs);
    case S_RESUME_FROM:
        o->resume = WEIR_RESUME_EPOCH;
        return s_count ("--resume-from", arg, 0, UINT64_MAX, &o->resume_from);
    case S_RESUME:
        if (o->resume != WEIR_RESUME_EPOCH)
            o->resume = WEIR_RESUME_LATEST;
        return 0;
    case S_KEEP:
        if (s_count ("--keep", arg, 1, 1000000, &v))
            return -1;
        o->keep = (unsigned) v;
        return 0;
    case S_KEY_GROUPS:
        if (s_count ("--key-groups", arg, 1, 65536, &v))
            return -1;
        o->key_groups = (unsigned) v;
        return 0;
    case S_FAILURES:
        if (s_count ("--checkpoint-failures", arg, 0, 1000000, &v))
            return -1;
        o->failures = (unsigned) v;
        return 0;
    case S_EPOCH_SECONDS:
        o->epoch_seconds = strtod (arg, &end);
        if (*end || end == arg || !(o->epoch_seconds > 0)) {
            fprintf (stderr, "weir run: --epoch-seconds wants a positive number of seconds, not '%s'\n", arg);
            return -1;
        }
        return 0;
    case S_STOP_TIMEOUT: return s_timeout ("--stop-timeout", arg, &o->stop_timeout);
    case S_EPOCH_TIMEOUT: return s_timeout ("--epoch-timeout", arg, &o->epoch_timeout);
    case S_ABORT_TIMEOUT: return s_timeout ("--abort-timeout", arg, &o->abort_timeout);
    case S_CHECKPOINT: o->checkpoint = arg; return 0;
    case S_ASYNC: o->async = 1; return 0;
    case S_LOAD_BLOBS: return s_load_blobs (o, arg);
    }
    return -1;
}

static void s_on_log (weir_pipe *pipe, void *arg, int level, const char *message)
{
    (void) pipe;
    const s_options *o = arg;
    if (level == WEIR_LOG_WARNING)
        cmd_error ("run", "warning: %s", message);
    else if (!o->quiet)
        fprintf (stderr, "weir: %s\n", message);
}

static int s_apply (const s_options *o, weir_pipe *pipe)
{
    weir_pipe_set_log (pipe, s_on_log, (void *) o);
    weir_pipe_set_epoch_records (pipe, o->epoch_records);
    weir_pipe_set_epoch_seconds (pipe, o->epoch_seconds);
    weir_pipe_set_epochs (pipe, o->epochs);
    weir_pipe_set_stop_timeout (pipe, o->stop_timeout);
    weir_pipe_set_epoch_timeout (pipe, o->epoch_timeout);
    weir_pipe_set_keep (pipe, o->keep);
    weir_pipe_set_async_checkpoint (pipe, o->async);
    weir_pipe_set_checkpoint_failures (pipe, o->failures);
    weir_pipe_set_resume (pipe, o->resume, o->resume_from);
    if (o->key_groups)
        weir_pipe_set_key_groups (pipe, o->key_groups);
    int rc = weir_pipe_set_checkpoint (pipe, o->checkpoint);
    if (!rc && o->load)
        rc = weir_pipe_set_load_blobs (pipe, o->load, o->load_epoch);
    return rc;
}

//  "s" unless N is 1: "1 record", "2 records".
static const char *s_plural (uint64_t n)
{
    return n == 1 ? "" : "s";
}

//  Run PIPE with Ctrl-C and SIGTERM stopping it, an abort that does not
//  end bounded by ABORT_TIMEOUT seconds (0: none).
static int s_run_pipe (weir_pipe *pipe, double abort_timeout)
{
    s_pipe = pipe;
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_sigaction = s_on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset (&sa.sa_mask);
    s_terminal = isatty (STDERR_FILENO);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    cmd_watchdog *watchdog = cmd_watchdog_new (pipe, abort_timeout, &s_signal);
    int rc = weir_pipe_run (pipe);
    cmd_watchdog_destroy (&watchdog);
    signal (SIGINT, SIG_DFL);
    signal (SIGTERM, SIG_DFL);
    s_pipe = NULL;
    return rc;
}

//  What the user sees at the end, and the exit code.
static int s_report (weir_pipe *pipe, int rc, const char *text, const s_options *o, const char *lines)
{
    int quiet = o->quiet, checkpointing = o->checkpoint != NULL;
    int exit_code = CMD_EXIT_OK;
    for (size_t i = 0; i < weir_pipe_warning_count (pipe); i++)
        cmd_error ("run", "warning: %s", weir_pipe_warning (pipe, i));
    if (rc) {
        cmd_error ("run", "%s", weir_pipe_error (pipe));
        if (weir_is_usage_error (rc))
            cmd_description_caret (o->file, text, lines, weir_pipe_error_offset (pipe));
        exit_code = weir_is_usage_error (rc) ? CMD_EXIT_USAGE : CMD_EXIT_FAILURE;
    }
    weir_stage_stats first = WEIR_STAGE_STATS_INIT;
    if (weir_is_usage_error (rc) || cmd_stats_kind (pipe, WEIR_ELEMENT_READER, &first) != 0)
        return exit_code;
    double wall = weir_pipe_wall_seconds (pipe);
    if (s_signal && (rc == 0 || rc == WEIR_EABORTED)) {
        //  A second signal that came after the stop's checkpoint was
        //  written aborted nothing: say so, not only that it came
        if (rc == 0)
            fprintf (stderr, "weir: stopped by %s after %llu record%s read%s%s\n",
                     s_signal == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long) first.records_out,
                     s_plural (first.records_out),
                     checkpointing ? "; checkpoint written, --resume goes on from here" : "",
                     s_signals > 1 ? " (the stop had ended when the second signal came: nothing was aborted)"
                                   : "");
        exit_code = 128 + s_signal;
    }
    else if (!quiet && rc == 0) {
        //  Read and written differ when a processor drops or adds records.
        //  A job of several ranks: rank 0 says the job's totals, the
        //  others their own
        int ranks, rank = weir_pipe_rank (pipe, &ranks), job = ranks > 1 && rank == 0;
        weir_stage_stats last = WEIR_STAGE_STATS_INIT;
        cmd_stats_kind (pipe, WEIR_ELEMENT_WRITER, &last);
        uint64_t read = job ? first.job_records_out : first.records_out;
        uint64_t written = job ? last.job_records_out : last.records_out;
        char rate[32], bad[64] = "", who[48] = "", mine[64] = "";
        cmd_human (rate, sizeof rate, wall > 0 ? (double) read / wall : 0.0);
        uint64_t skipped = 0, skipped_total = 0;
        for (size_t i = 0; i < weir_pipe_stage_count (pipe); i++) {
            weir_stage_stats st = WEIR_STAGE_STATS_INIT;
            if (weir_pipe_stats (pipe, i, &st) == 0) {
                skipped += job ? st.job_records_rejected : st.records_rejected;
                skipped_total += st.total_records_rejected;
            }
        }
        if (skipped)
            snprintf (bad, sizeof bad, ", %llu bad skipped", (unsigned long long) skipped);
        //  A resumed job: this run's counts, then the job's since it began
        //  (rank 0 of several, or one rank alone, knows them)
        char since[160] = "", bad_total[64] = "";
        if (skipped_total)
            snprintf (bad_total, sizeof bad_total, ", %llu bad skipped", (unsigned long long) skipped_total);
        if ((job || ranks == 1) && first.total_records_out > read)
            snprintf (since, sizeof since, "; since the job began: %llu read, %llu written%s",
                      (unsigned long long) first.total_records_out,
                      (unsigned long long) last.total_records_out, bad_total);
        if (job)
            snprintf (mine, sizeof mine, " by %d ranks (rank 0 read %llu)", ranks,
                      (unsigned long long) first.records_out);
        else if (ranks > 1)
            snprintf (who, sizeof who, "rank %d of %d: ", rank, ranks);
        fprintf (stderr, "weir: %s%llu record%s read, %llu written%s in %.3f s (%s records/s)%s%s\n", who,
                 (unsigned long long) read, s_plural (read), (unsigned long long) written, bad, wall, rate,
                 mine, since);
    }
    //  What the processors published, as they left it
    size_t stage;
    const char *name;
    double value;
    for (size_t m = 0; !quiet && weir_pipe_metric (pipe, m, &stage, &name, &value) == 0; m++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir_pipe_stats (pipe, stage, &st);
        fprintf (stderr, "weir: %s: %s %.6g\n", st.name, name, value);
    }
    return exit_code;
}

//  PATH with "{rank}" replaced by this process's rank, into OUT: 1 if it
//  had one, else 0.
static int s_rank_path (const char *path, char *out, size_t size)
{
    const char *mark = strstr (path, "{rank}");
    if (!mark)
        return 0;
    int ranks, rank = weir_pipe_rank (NULL, &ranks);
    snprintf (out, size, "%.*s%d%s", (int) (mark - path), path, rank, mark + strlen ("{rank}"));
    return 1;
}

//  Defaults, then the options of ARGV into O; the description starts at
//  optind.  -1 to go on, or the exit code to leave with (--help,
//  --version, a usage error said).
static int s_parse (int argc, char **argv, s_options *o)
{
    memset (o, 0, sizeof *o);
    o->progress = isatty (STDERR_FILENO);
    o->interval_ms = 500;
    o->load_epoch = -1;
    o->stop_timeout = 5;
    o->abort_timeout = 10;
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_run_command);
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        if (c == 'h') {
            cmd_help_print (&cmd_run_command, stdout);
            return CMD_EXIT_OK;
        }
        if (c == 'V') {
            printf ("weir %s\n", weir_version ());
            return CMD_EXIT_OK;
        }
        if (c == '?' || s_option (o, c, optarg)) {
            if (c == '?')
                fprintf (stderr, "Try 'weir run --help'.\n");
            return CMD_EXIT_USAGE;
        }
    }
    if (o->file && optind < argc) {
        fprintf (stderr,
                 "weir run: a description in '%s' (-f) and one in the arguments ('%s'): give one\n"
                 "Try 'weir run --help'.\n",
                 o->file, argv[optind]);
        return CMD_EXIT_USAGE;
    }
    if (!o->file && optind >= argc) {
        fprintf (stderr, "weir run: no pipeline description\nTry 'weir run --help'.\n");
        return CMD_EXIT_USAGE;
    }
    if (o->quiet)
        o->progress = 0;
    return -1;
}

//  Where --stats writes, PATH of SIZE bytes holding the name when it is
//  made: in a job of several ranks, "{rank}" in the file's name gives
//  each rank its own; without it rank 0 alone writes it.  A file that
//  cannot be written is found now, not after the whole job ran.  -1 to
//  go on, or CMD_EXIT_USAGE (said).
static int s_stats_file (s_options *o, char *path, size_t size)
{
    if (o->stats && s_rank_path (o->stats, path, size))
        o->stats = path;
    else if (o->stats) {
        int ranks, rank = weir_pipe_rank (NULL, &ranks);
        if (ranks > 1 && rank != 0)
            o->stats = NULL;
    }
    return o->stats && cmd_stats_check (o->stats) ? CMD_EXIT_USAGE : -1;
}

//  What the progress tick feeds: the progress line, the --metrics text
typedef struct {
    cmd_progress *progress;
    cmd_metrics *metrics;
} s_ticked;

static void s_tick (weir_pipe *pipe, void *arg, int final)
{
    s_ticked *t = arg;
    if (t->progress)
        cmd_progress_draw (pipe, t->progress, final);
    if (t->metrics)
        cmd_metrics_update (t->metrics, pipe);
}

static int s_run (int argc, char **argv)
{
    s_options o;
    char stats_path[4096];
    int code = s_parse (argc, argv, &o);
    if (code < 0)
        code = s_stats_file (&o, stats_path, sizeof stats_path);
    if (code >= 0) {
        free (o.load);
        return code;
    }
    char *text, *lines;
    if ((code = cmd_description_read ("run", o.file, argc - optind, argv + optind, &text, &lines))) {
        free (o.load);
        return code;
    }
    weir_pipe *pipe = NULL;
    if (weir_pipe_new (&pipe)) {
        cmd_error ("run", "out of memory");
        free (text);
        free (lines);
        free (o.load);
        return CMD_EXIT_FAILURE;
    }
    s_ticked ticked = {NULL, NULL};
    int rc = weir_pipe_parse (pipe, text), metrics_failed = 0;
    if (!rc)
        rc = s_apply (&o, pipe);
    if (!rc && o.metrics) {
        int ranks, rank = weir_pipe_rank (NULL, &ranks);
        if (!(ticked.metrics = cmd_metrics_new (o.metrics, rank)))
            metrics_failed = 1;
        else if (!o.quiet)
            fprintf (stderr, "weir: metrics at %s\n", cmd_metrics_url (ticked.metrics));
    }
    if (!rc && !metrics_failed) {
        if (o.progress)
            ticked.progress = cmd_progress_new (pipe, isatty (STDERR_FILENO),
                                                o.epoch_records || o.epoch_seconds > 0 || o.checkpoint);
        if (ticked.progress || ticked.metrics)
            weir_pipe_set_progress (pipe, s_tick, &ticked, o.interval_ms);
        rc = s_run_pipe (pipe, o.abort_timeout);
    }
    if (metrics_failed) {
        weir_pipe_destroy (&pipe);
        free (text);
        free (lines);
        free (o.load);
        return CMD_EXIT_FAILURE;
    }
    int exit_code = s_report (pipe, rc, text, &o, lines);
    int stats_code = exit_code;
    if (o.stats && cmd_stats_write (pipe, o.stats, rc, stats_code) && exit_code == CMD_EXIT_OK)
        exit_code = CMD_EXIT_FAILURE;
    cmd_progress_destroy (&ticked.progress);
    cmd_metrics_destroy (&ticked.metrics);
    weir_pipe_destroy (&pipe);
    free (text);
    free (lines);
    free (o.load);
    return exit_code;
}
