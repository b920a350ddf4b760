/*  readers/window.h - sequential reading of one shard of a file through a
    buffer that grows up to a limit, for records that must be seen whole.

    A window reads files, pipes, terminals and followed files alike: a
    read of a pipe waits in slices, asking the sink whether to go on; a
    pipe's window is kept in its shard when a read pauses, because a pipe
    cannot be read again from an offset; a followed file's window notices
    truncation, rotation and deletion at the file's end for now.

    Functions that can fail return 0, one of the WEIR__WINDOW_* results
    they name, or a WEIR_E* code with ERR filled (messages start with
    ELEMENT, the reader's name).  */
#ifndef WEIR_WINDOW_H_INCLUDED
#define WEIR_WINDOW_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/decompress.h"
#include "lib/error.h"
#include "readers/reader.h"
#include "readers/shards.h"

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
    int dry;                  //  a followed file's last read found its end
    weir__shard *shard;
    weir__shards *shards;  //  a followed file's: the files read under other names
    uint64_t *offset;      //  the reader's, reset when a followed file starts over
    weir__sink *sink;      //  asked, while a read waits, whether to go on waiting
    int idle;              //  what the sink said when it ended a wait
    uint64_t read_ns;      //  when a stream's last read returned
    //  A gzip or zstd file (shard->codec): read through this, the offsets
    //  counting the bytes it stands for; kept in the shard when a read
    //  pauses, as a stream's window is, or the next epoch would
    //  decompress the file again from its start
    weir__decompress *z;
} weir__window;

#define WEIR__WINDOW_FULL 1  //  the buffer is at its maximum, full of one record
#define WEIR__WINDOW_IDLE 2  //  a wait for input was ended by the sink (see idle)
#define WEIR__WINDOW_DRY 3   //  a followed file has nothing more for now

/*  Open SHARD for reading from byte *OFFSET, or take back the window its
    last read left there.  A compressed SHARD (its codec) is read
    decompressed, and a read from an offset decompresses the bytes before
    it and drops them: a resume of a compressed file costs reading it up
    to the checkpoint's offset again.  SINK (or NULL) is asked while reads wait.  A
    followed file keeps *OFFSET right when it starts over (rotated,
    truncated); FOLLOW_MS is how long a rotated followed file must be quiet
    before it is left (its reader's rotate-wait=), or WEIR__NOT_FOLLOWED.
    A followed SHARD is one of SHARDS: a file that one of them reads, or
    read and left, is never taken as the new file under SHARD's name.  */
#define WEIR__NOT_FOLLOWED (-1L)
int weir__window_open (weir__window *w, const char *element, weir__shards *shards, weir__shard *shard,
                       uint64_t *offset, size_t max, long follow_ms, weir__sink *sink, weir__err *err);

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
    for REASON: give it to the sink's reject() (its first 64 KiB, the
    newline left out, however few the buffer holds), skip it
    and move *OFFSET past it.  0, WEIR__SINK_ABORT, WEIR_EIO or
    WEIR_ENOMEM.  */
int weir__window_reject_line (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err);

/*  With sink->skip: the whole line LINE (N bytes, its newline left out)
    that the last weir__window_line gave is bad for REASON: give it to
    reject(), numbered LINES lines after byte FIRST where the read began,
    and move *OFFSET past it.  0 or what reject() said.  */
int weir__window_reject_read (weir__window *w, const char *line, size_t n, uint64_t first, uint64_t lines,
                              const char *reason, uint64_t *offset);

/*  File offset of buf[i].  */
static inline uint64_t weir__window_offset (const weir__window *w, size_t i)
{
    return w->base + i;
}

#endif
