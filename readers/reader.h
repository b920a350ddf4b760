/*  readers/reader.h - what a builtin reader is.

    A reader splits its input into shards when the stage opens (the files
    of a glob, byte ranges of a large file cut at record boundaries, ranges
    of integers), then reader threads take shards one at a time and push
    their records into a sink.  Shards are cut the same way whatever the
    thread count, because offsets are to be kept per shard: a job must be
    able to resume with a different number of threads.  */
#ifndef WEIR_READER_H_INCLUDED
#define WEIR_READER_H_INCLUDED

#include <stdint.h>
#include <weir/weir.h>

#include "lib/batch.h"
#include "lib/error.h"
#include "lib/props.h"

struct weir__window;

/*  Which file a followed shard's offset is in: a path may name another
    file after a rotation, and an inode may be reused, so the first bytes
    are compared too.  */
typedef struct weir__identity {
    int known;
    uint64_t dev, ino;
    uint32_t fp_len;   //  bytes fingerprinted (up to WEIR__FINGERPRINT)
    uint64_t fp_hash;  //  of the first fp_len bytes
} weir__identity;

#define WEIR__FINGERPRINT 64

typedef struct weir__shard {
    char *path;      //  NULL for inputs that are not files
    uint64_t start;  //  byte offset, or first integer
    uint64_t end;    //  one past the last byte or integer
    //  A pipe or terminal cannot be read again from an offset: its window,
    //  read-ahead included, is kept here when a read pauses, and the next
    //  read of the shard goes on from it
    struct weir__window *kept;
    //  Followed files (follow=1): the file the offset is in, whether it
    //  must be looked for (a resume: it may have been rotated meanwhile),
    //  and whether it is gone (deleted once read to its end)
    weir__identity id;
    int check;
    int gone;
} weir__shard;

typedef struct weir__shards {
    weir__shard *items;
    size_t count;
    int follow;  //  follow=1: the files grow and come and go
} weir__shards;

void weir__shards_init (weir__shards *self);
void weir__shards_release (weir__shards *self);
int weir__shards_add (weir__shards *self, const char *path, uint64_t start, uint64_t end);

/*  Where a reader thread puts records.  Append a record's bytes to
    'batch' (raw, or with weir__pack_*), record the offset just past it,
    then call weir__sink_add.

    The quota is how many more records this thread may read in the current
    epoch; it is never 0 while read() runs or after weir__sink_add returned
    0.  When the batch is full or the quota used up, 'send' sends the batch
    on and claims more quota, or returns WEIR__SINK_PAUSE: the epoch is
    full, and read() must return at once (its offset already says where to
    go on from).  The engine implements it (pipeline/path.c).  */
typedef struct weir__sink weir__sink;

/*  A bad record of the input, as a reader met it.  */
typedef struct weir__bad {
    const char *path;    //  the file, or NULL
    uint64_t offset;     //  the byte it starts at
    const char *bytes;   //  its bytes as read: perhaps only the first ones
    size_t len;          //  of them
    uint64_t size;       //  its length in bytes
    const char *reason;  //  what is wrong with it
} weir__bad;

struct weir__sink {
    weir__batch batch;
    uint32_t limit;                  //  records per batch
    uint64_t quota;                  //  records this thread may still read this epoch
    int (*send) (weir__sink *sink);  //  0, WEIR__SINK_PAUSE, or WEIR__SINK_ABORT
    //  Called every few tens of milliseconds while a read waits for input
    //  that has not come (a pipe, a terminal), the first time after
    //  linger_ms when the batch holds records, which it then sends on.
    //  0 to wait on, or
    //  WEIR__SINK_PAUSE (a stop, the epoch's time is up) or
    //  WEIR__SINK_ABORT, which read() returns.  May be NULL.
    int (*idle) (weir__sink *sink);
    //  on-error=skip: a bad record is given to reject(), which keeps it in
    //  the dead letter, and skipped; the reader moves its offset past it
    //  and goes on.  Otherwise (0) the reader fails, naming it.  reject()
    //  returns 0, or WEIR__SINK_ABORT, which read() returns.
    int skip;
    int (*reject) (weir__sink *sink, const weir__bad *bad);
    //  Something the job's log should say (a followed file truncated,
    //  records that cannot be found after a rotation)
    void (*warn) (weir__sink *sink, const char *message);
    void (*truncated) (weir__sink *sink);  //  counts a followed file truncated in place
    //  linger=: how long a read waiting for input holds a partial batch
    //  before idle() sends it on
    unsigned linger_ms;
    uint64_t first_ns;  //  when the batch's first record came (0: not known yet)
};

#define WEIR__SINK_PAUSE 1  //  the epoch is full: return, go on next epoch
#define WEIR__SINK_ABORT 2  //  the job is being torn down
#define WEIR__READ_DRY 3    //  follow=1: nothing more in this file for now

/*  The record just appended is added: count it, send the batch on when it
    is full, claim more quota when it runs out.  A non-zero result must be
    returned by read().  */
static inline int weir__sink_add (weir__sink *s)
{
    s->batch.count++;
    if (--s->quota == 0 || s->batch.count >= s->limit)
        return s->send (s);
    return 0;
}

typedef struct weir__reader_class {
    const char *name;
    const char *description;
    const weir_property_info *props;
    /*  Read the properties, plan the shards.  */
    int (*open) (weir__props *props, void **state, weir__shards *shards, weir__err *err);
    /*  Read SHARD from *OFFSET into SINK, keeping *OFFSET just past the
        last record committed: 0 at the shard's end, what the sink returned
        (pause, abort), or a WEIR_E* code with ERR filled.  Called
        concurrently from several threads on different shards.  */
    int (*read) (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err);
    void (*close) (void *state);
    /*  Readers that follow files (shards->follow): add the files that
        match now and are not shards yet; and wait until a file may have
        more, asking the sink's idle() meanwhile (0, or what idle said).
        read() then returns WEIR__READ_DRY at the end of a file for now,
        and 0 only once the file is gone.  */
    int (*discover) (void *state, weir__shards *shards, weir__err *err);
    int (*wait) (void *state, weir__sink *sink);
} weir__reader_class;

extern const weir__reader_class weir__reader_range;
extern const weir__reader_class weir__reader_lines;
extern const weir__reader_class weir__reader_msgpack;
extern const weir__reader_class weir__reader_leveldb;
extern const weir__reader_class weir__reader_libsvm;
extern const weir__reader_class weir__reader_json;

/*  Shared by the file readers (readers/files.c).  */

/*  '-' names standard input, as Unix tools have it: a glob of '-' is
    itself, weir__files_open gives a duplicate of descriptor 0 (read-only,
    close-on-exec) and weir__files_stat its status.  */
struct stat;
int weir__files_is_stdin (const char *path);
int weir__files_open (const char *path);
int weir__files_stat (const char *path, struct stat *st);

/*  The files matching PATTERN, sorted; an error names ELEMENT and the
    pattern when nothing matches.  Free with weir__files_free.  */
int weir__files_glob (const char *element, const char *pattern, char ***paths, size_t *count, weir__err *err);
void weir__files_free (char **paths, size_t count);

/*  Plan the shards of a line-oriented file: one, or pieces of about SPLIT
    bytes when it is larger, each cut moved forward to just after a
    newline; a pipe or device is one shard read to its end.  Errors name
    ELEMENT and PATH.  */
int weir__files_plan_lines (const char *element, const char *path, uint64_t split, weir__shards *shards,
                            weir__err *err);

/*  The newlines in the first END bytes of PATH: a shard that starts
    inside a file knows its byte offset but not its line number, so error
    messages count them, only when they need them.  */
int weir__files_count_lines (const char *element, const char *path, uint64_t end, uint64_t *lines,
                             weir__err *err);

/*  Sequential reading of one byte range of a file through a buffer that
    grows up to a limit, for records that must be seen whole.  */
typedef struct weir__window {
    int fd;
    const char *path;
    char *buf;
    size_t cap, max;          //  current and largest buffer
    size_t lo, hi;            //  unconsumed bytes are buf[lo, hi)
    uint64_t base;            //  file offset of buf[0]
    uint64_t end;             //  stop reading here
    int eof;                  //  nothing more to read
    int stream;               //  a pipe, socket or device: reads may wait, no seeking back
    int follow;               //  a followed file: its end is only where it ends for now
    int next_fd;              //  a followed file's successor after a rotation, or -1
    unsigned rotate_wait_ms;  //  how long a rotated file must be quiet before it is left
    uint64_t rotated_ns;      //  when it was seen rotated (0: it was not)
    uint64_t rotated_size;    //  its size then
    weir__shard *shard;
    uint64_t *offset;  //  the reader's, reset when a followed file starts over
    weir__sink *sink;  //  asked, while a read waits, whether to go on waiting
    int idle;          //  what the sink said when it ended a wait
    uint64_t read_ns;  //  when a stream's last read returned
} weir__window;

#define WEIR__WINDOW_FULL 1  //  the buffer is at its maximum, full of one record
#define WEIR__WINDOW_IDLE 2  //  a wait for input was ended by the sink (see idle)
#define WEIR__WINDOW_DRY 3   //  a followed file has nothing more for now

/*  Open SHARD for reading from byte *OFFSET, or take back the window its
    last read left there.  SINK (or NULL) is asked while reads wait.  A
    followed file keeps *OFFSET right when it starts over (rotated,
    truncated); FOLLOW_MS is how long a rotated followed file must be quiet
    before it is left (weir__follow_rotate_wait), or WEIR__NOT_FOLLOWED.  */
#define WEIR__NOT_FOLLOWED (-1L)
int weir__window_open (weir__window *w, const char *element, weir__shard *shard, uint64_t *offset, size_t max,
                       long follow_ms, weir__sink *sink, weir__err *err);

/*  At the end (eof) of a followed file that was rotated: go on with the
    new file under its name, from its start.  1 if so, else 0.  */
int weir__window_next_file (weir__window *w);

/*  Done reading SHARD for now: keep a stream's window in the shard when
    there is more to read, else close it.  */
void weir__window_leave (weir__window *w, weir__shard *shard);
void weir__window_close (weir__window *w);

/*  Read more bytes after buf[hi], growing the buffer when it is full of
    one unfinished record.  0, WEIR__WINDOW_FULL, WEIR__WINDOW_IDLE (what
    the sink said is in idle), or WEIR_EIO.  */
int weir__window_fill (weir__window *w, const char *element, weir__err *err);

/*  The next line: 0 and *LINE pointing at it in the buffer (without its
    newline; a last line without one counts) with buf[lo] just past it, or
    *LINE NULL at the end of the range; WEIR__WINDOW_FULL when the line
    starting at buf[lo] is longer than the buffer's maximum;
    WEIR__WINDOW_IDLE; or WEIR_EIO / WEIR_ENOMEM.  *LINE
    is valid until the next call.  */
int weir__window_line (weir__window *w, const char *element, const char **line, size_t *len, weir__err *err);

/*  Read on past the next newline, for a line longer than the buffer may
    hold: buf[lo] is just after it (or at the end of the range), and
    *SKIPPED counts the bytes passed over, newline included.  0 or
    WEIR_EIO; a wait for input is not cut short.  */
int weir__window_skip_line (weir__window *w, const char *element, uint64_t *skipped, weir__err *err);

/*  With sink->skip: everything from buf[lo] to the end of the range is
    bad for REASON (a stream of records without boundaries cannot be
    resynchronised): give it to reject() (its first bytes), skip it and
    move *OFFSET to the end.  Results as weir__window_reject_line.  */
int weir__window_reject_rest (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err);

/*  With sink->skip: the line at buf[lo], too long for the buffer, is bad
    for REASON: give it to the sink's reject() (its first bytes), skip it
    and move *OFFSET past it.  0, WEIR__SINK_ABORT, WEIR_EIO or
    WEIR_ENOMEM.  */
int weir__window_reject_line (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err);

/*  File offset of buf[i].  */
static inline uint64_t weir__window_offset (const weir__window *w, size_t i)
{
    return w->base + i;
}

#endif
