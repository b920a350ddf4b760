/*  readers/window.c - windowed reads of a shard: files, pipes, followed
    files.  */
#include "config.h"
#include "readers/window.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "readers/identity.h"
#include "readers/lineno.h"
#include "readers/known.h"
#include "readers/source.h"

//  How long a read waits for a pipe before asking the sink again
#define S_IDLE_MS 20

static void s_warn (weir__window *w, const char *fmt, ...) WEIR_PRINTF (2, 3);

static void s_warn (weir__window *w, const char *fmt, ...)
{
    if (!w->sink || !w->sink->warn)
        return;
    char message[900];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    w->sink->warn (w->sink, message);
}

//  Which file a followed shard's *OFFSET is in, opened: the file at its
//  path, or after a resume the one the checkpoint was in wherever a
//  rotation put it.  -1 (errno set) when there is none for now.
static int s_follow_open (weir__window *w, weir__shard *shard, uint64_t *offset)
{
    int fd = open (shard->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int e = errno;
    if (fd >= 0 && fstat (fd, &st)) {
        e = errno;
        close (fd);
        fd = -1;
    }
    int same = fd >= 0 && weir__identity_is (fd, &st, &shard->id);
    if (shard->id.known && !same && !shard->gone && shard->check) {
        //  Resumed, and the path holds another file, or none: the
        //  checkpoint's file was rotated while weir was not running
        int old = weir__identity_find (shard->path, &shard->id);
        if (old >= 0) {
            if (fd >= 0)
                close (fd);
            fd = old;
            same = fstat (fd, &st) == 0;
        }
        else if (*offset > 0 && fd >= 0 && (uint64_t) st.st_dev == shard->id.dev
                 && (uint64_t) st.st_ino == shard->id.ino) {
            //  The very inode, other first bytes: truncated and written
            //  again past the offset (or the inode given to a new file)
            s_warn (w,
                    "'%s' is the file checkpointed at byte %llu, but its first bytes changed: it was truncated "
                    "and written again while weir was not running (or its inode went to a new file); reading "
                    "it again from its start",
                    shard->path, (unsigned long long) *offset);
            if (w->sink && w->sink->truncated)
                w->sink->truncated (w->sink);
        }
        else if (*offset > 0)
            s_warn (w,
                    "'%s' is not the file checkpointed at byte %llu (inode %llu), which is nowhere in its "
                    "folder: what was written to it after that byte is lost; reading '%s' from its start",
                    shard->path, (unsigned long long) *offset, (unsigned long long) shard->id.ino,
                    shard->path);
    }
    shard->check = 0;
    if (fd < 0) {
        errno = e;
        return -1;
    }
    if (!same && w->shards && weir__known_has (w->shards, fd, &st, shard)) {
        //  The name holds a file read under another name (every copy
        //  renamed along by a rotation): no new file for this shard yet
        close (fd);
        shard->gone = 1;
        errno = ENOENT;
        return -1;
    }
    if (!same) {
        //  A new file: from its start
        *offset = 0;
        shard->gone = 0;
        weir__identity_of (fd, &st, &shard->id);
    }
    else if ((uint64_t) st.st_size < *offset) {
        s_warn (w,
                "'%s' is shorter (%llu bytes) than where reading it stopped (byte %llu): it was truncated; "
                "reading it again from its start",
                shard->path, (unsigned long long) st.st_size, (unsigned long long) *offset);
        if (w->sink && w->sink->truncated)
            w->sink->truncated (w->sink);
        *offset = 0;
    }
    if (shard->gone) {
        //  Read to its end and deleted; its name not taken again yet
        close (fd);
        errno = ENOENT;
        return -1;
    }
    return fd;
}

//  A resume from a pipe: the checkpoint's offset in it counts the bytes
//  its first run committed, and a pipe cannot be read again, so the input
//  must be fed again from its start (zcat big.gz | weir run --resume ...):
//  its first START bytes are read and dropped.  A pipe that ends before
//  them is not the input the checkpoint was taken from.
static int s_skip (weir__window *w, const char *element, uint64_t start, weir__err *err)
{
    char scrap[65536];
    uint64_t done = 0;
    while (done < start) {
        size_t want = start - done < sizeof scrap ? (size_t) (start - done) : sizeof scrap;
        ssize_t n = read (w->fd, scrap, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, w->path,
                                  (unsigned long long) done, strerror (errno));
        if (n == 0)
            return weir__err_set (err, WEIR_ECORRUPT,
                                  "%s: '%s' ended at byte %llu, before byte %llu where the checkpoint goes on: "
                                  "it is not the input the checkpoint was taken from.  A pipe cannot be read "
                                  "again, so a resume needs the same input fed again from its start",
                                  element, w->path, (unsigned long long) done, (unsigned long long) start);
        done += (uint64_t) n;
    }
    s_warn (w,
            "'%s' is not a file (a pipe or a terminal): its first %llu bytes, which the checkpoint committed, "
            "were read and dropped; this takes the input to be the one the checkpoint was taken from, fed "
            "again from its start",
            w->path, (unsigned long long) start);
    return 0;
}

int weir__window_open (weir__window *w, const char *element, weir__shards *shards, weir__shard *shard,
                       uint64_t *offset, size_t max, long follow_ms, weir__sink *sink, weir__err *err)
{
    uint64_t start = *offset;
    weir__window *kept = shard->kept;
    if (kept) {
        shard->kept = NULL;
        int same = kept->base + kept->lo == start;
        if (same)
            *w = *kept;
        else
            weir__window_close (kept);
        free (kept);
        if (same) {
            //  The shards may have moved since (new files were added)
            w->sink = sink;
            w->offset = offset;
            w->shard = shard;
            w->shards = shards;
            return 0;
        }
    }
    const char *path = shard->path;
    memset (w, 0, sizeof *w);
    w->fd = -1;
    w->next_fd = -1;
    w->path = path;
    w->max = max;
    w->cap = max < (1u << 20) ? max : (1u << 20);
    w->end = shard->end;
    w->sink = sink;
    int follow = follow_ms != WEIR__NOT_FOLLOWED;
    w->follow = follow;
    w->rotate_wait_ms = follow ? (unsigned) follow_ms : 0;
    w->shard = shard;
    w->shards = follow ? shards : NULL;
    w->offset = offset;
    if (follow) {
        w->fd = s_follow_open (w, shard, offset);
        if (w->fd < 0 && errno == ENOENT)
            return WEIR__WINDOW_DRY;
        start = *offset;
    }
    else
        w->fd = weir__source_open (path);
    w->base = start;
    if (w->fd < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    struct stat st;
    if (fstat (w->fd, &st) != 0)
        st.st_mode = S_IFREG;  //  read() will tell what is wrong
    if (S_ISDIR (st.st_mode)) {
        weir__window_close (w);
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s': %s", element, path, strerror (EISDIR));
    }
    w->stream = !S_ISREG (st.st_mode);
    int first = w->stream && !shard->streamed;
    shard->streamed |= w->stream;
    if (shard->codec && !w->stream && !follow) {
        if (!(w->z = weir__decompress_new (shard->codec, w->fd, element, path))) {
            weir__window_close (w);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
        if (start && weir__decompress_skip (w->z, start, err)) {
            weir__window_close (w);
            return err->code;
        }
    }
    else if (start && first) {
        int rc = s_skip (w, element, start, err);
        if (rc) {
            weir__window_close (w);
            return rc;
        }
    }
    else if (start && lseek (w->fd, (off_t) start, SEEK_SET) < 0) {
        int e = errno;
        weir__window_close (w);
        return weir__err_set (err, WEIR_EIO, "%s: cannot seek '%s' to byte %llu: %s", element, path,
                              (unsigned long long) start, strerror (e));
    }
    w->buf = malloc (w->cap);
    if (!w->buf) {
        weir__window_close (w);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    return 0;
}

//  Has the rotated file of HERE been quiet for rotate-wait= ms: neither
//  written nor renamed?  Its change time (a write and a rename both set
//  it) says so at once, however recently this process started: a job
//  killed and started again often must not wait afresh each time, or it
//  never leaves the file while the new one is rotated away in turn.  A
//  clock the file's time disagrees with (a time ahead of ours) falls back
//  on how long this process has seen the size unchanged.
static int s_quiet (weir__window *w, const struct stat *here)
{
    uint64_t wait = (uint64_t) w->rotate_wait_ms * 1000000u;
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    int64_t since = ((int64_t) now.tv_sec - (int64_t) here->st_ctim.tv_sec) * 1000000000
                    + (now.tv_nsec - here->st_ctim.tv_nsec);
    if (since >= 0 && (uint64_t) since >= wait)
        return 1;
    uint64_t t = weir__now_ns ();
    if (!w->rotated_ns || (uint64_t) here->st_size != w->rotated_size) {
        w->rotated_ns = t;
        w->rotated_size = (uint64_t) here->st_size;
    }
    return t - w->rotated_ns >= wait;
}

//  A followed file truncated in place (HERE its state now): counted, and
//  read again from its start, what is in it now being new.  0, or -1 when
//  it cannot seek back.
static int s_start_over (weir__window *w, const struct stat *here)
{
    if (w->sink && w->sink->truncated)
        w->sink->truncated (w->sink);
    if (lseek (w->fd, 0, SEEK_SET) < 0)
        return -1;
    w->base = 0;
    w->lo = w->hi = 0;
    *w->offset = 0;
    weir__identity_of (w->fd, here, &w->shard->id);
    return 0;
}

//  A followed file that grows again after its end was reached: still the
//  file whose first bytes were read, or truncated and written again past
//  where reading had got before a read could find it shorter (copytruncate
//  and a burst of lines between two looks)?  Its fingerprint tells.  1
//  when it starts over, 0 when it is the same, -1 (errno set) when it
//  cannot seek back to its start.
static int s_rewritten (weir__window *w)
{
    struct stat here;
    if (!w->shard->id.known || fstat (w->fd, &here) || weir__identity_is (w->fd, &here, &w->shard->id))
        return 0;
    s_warn (w,
            "'%s' was truncated and written again past byte %llu, where reading had got (its first bytes "
            "changed); reading it again from its start",
            w->path, (unsigned long long) (w->base + w->hi));
    return s_start_over (w, &here) ? -1 : 1;
}

//  A followed file's size now, to the sink: with the offset, how far
//  reading is behind the writer
static void s_seen (weir__window *w)
{
    struct stat st;
    if (w->sink && w->sink->seen && fstat (w->fd, &st) == 0)
        w->sink->seen (w->sink, (uint64_t) st.st_size);
}

//  A followed file's end for now: has it been truncated, rotated or
//  deleted?  0 (read again, or the end: eof set), or WEIR__WINDOW_DRY.
static int s_follow_end (weir__window *w)
{
    struct stat here, now;
    if (fstat (w->fd, &here))
        return WEIR__WINDOW_DRY;
    if ((uint64_t) here.st_size < w->base + w->hi) {
        //  Truncated in place (copytruncate): what is in it now is new
        s_warn (w,
                "'%s' shrank to %llu bytes below byte %llu, where reading had got: it was truncated; "
                "reading it again from its start",
                w->path, (unsigned long long) here.st_size, (unsigned long long) (w->base + w->hi));
        return s_start_over (w, &here) ? WEIR__WINDOW_DRY : 0;
    }
    if (stat (w->path, &now) == 0) {
        if (now.st_dev == here.st_dev && now.st_ino == here.st_ino)
            return WEIR__WINDOW_DRY;
        //  The writer may not have moved to the new file yet: the old one
        //  must have been quiet for rotate-wait= ms before it is left
        if (!s_quiet (w, &here))
            return WEIR__WINDOW_DRY;
        //  Rotated: the name holds another file, and this one is read to
        //  its end.  It is remembered, so that the glob never takes it for
        //  a new file under its next name
        int fd = open (w->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return WEIR__WINDOW_DRY;
        if (w->shards && weir__known_add (w->shards, &w->shard->id)) {
            close (fd);
            return WEIR__WINDOW_DRY;  //  tried again at the next look
        }
        if (w->shards && (fstat (fd, &now) || weir__known_has (w->shards, fd, &now, w->shard))) {
            //  The name holds a file read under another name (a rotation
            //  renamed every copy along): this shard waits for a new file
            close (fd);
            w->eof = 1;
            w->shard->gone = 1;
            return 0;
        }
        //  A last record without its end is still one (eof); the new file
        //  comes after it (weir__window_next_file)
        w->next_fd = fd;
        if (w->hi > w->lo) {
            w->eof = 1;
            return 0;
        }
        weir__window_next_file (w);
        return 0;
    }
    if (errno == ENOENT && here.st_nlink == 0) {
        //  Deleted, and read to its end: finished, until the name is taken
        //  again by a new file
        w->eof = 1;
        w->shard->gone = 1;
        return 0;
    }
    //  Renamed away, no new file yet: more may still come to this one
    return WEIR__WINDOW_DRY;
}

void weir__window_leave (weir__window *w, weir__shard *shard)
{
    if ((w->stream || w->follow || w->z) && w->fd >= 0 && !(w->eof && w->lo == w->hi)) {
        //  Without memory for it, the next read fails to seek, saying so
        weir__window *kept = malloc (sizeof *kept);
        if (kept) {
            *kept = *w;
            kept->sink = NULL;
            shard->kept = kept;
            return;
        }
    }
    weir__window_close (w);
}

void weir__window_close (weir__window *w)
{
    if (w->fd >= 0)
        close (w->fd);
    if (w->next_fd >= 0)
        close (w->next_fd);
    w->next_fd = -1;
    free (w->buf);
    weir__decompress_destroy (&w->z);
    w->fd = -1;
    w->buf = NULL;
}

//  A pipe or terminal may have nothing for a long time: wait in short
//  slices, asking the sink in between whether the epoch must end.  0 when
//  there is something to read (data, the end, an error or a signal:
//  read() says which), or WEIR__WINDOW_IDLE with what the sink said in
//  w->idle.
static int s_wait (weir__window *w)
{
    //  Records in hand wait at most linger= ms, counted from the read that
    //  brought the first of them (as Kafka's linger.ms counts from a
    //  batch's first record): a steady trickle must not wait for a batch
    //  to fill
    weir__sink *sink = w->sink;
    for (;;) {
        int slice = S_IDLE_MS;
        if (sink->batch.count > 0) {
            if (!sink->first_ns)
                sink->first_ns = w->read_ns;
            uint64_t age = weir__now_ns () - sink->first_ns, linger = (uint64_t) sink->linger_ms * 1000000u;
            if (age < linger) {
                uint64_t left = (linger - age + 999999u) / 1000000u;
                slice = left < (uint64_t) slice ? (int) left : slice;
            }
            else
                slice = 0;
        }
        struct pollfd ready = {w->fd, POLLIN, 0};
        if (slice > 0 && poll (&ready, 1, slice) != 0)
            return 0;
        int said = sink->idle (sink);
        if (said) {
            w->idle = said;
            return WEIR__WINDOW_IDLE;
        }
        if (slice == 0 && poll (&ready, 1, 0) != 0)
            return 0;
    }
}

int weir__window_fill (weir__window *w, const char *element, weir__err *err)
{
    if (w->lo > 0) {
        //  Slide the unconsumed tail to the front
        memmove (w->buf, w->buf + w->lo, w->hi - w->lo);
        w->base += w->lo;
        w->hi -= w->lo;
        w->lo = 0;
    }
    if (w->hi == w->cap) {
        if (w->cap >= w->max)
            return 1;
        size_t cap = w->cap * 2 > w->max ? w->max : w->cap * 2;
        char *buf = realloc (w->buf, cap);
        if (!buf)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        w->buf = buf;
        w->cap = cap;
    }
    uint64_t at = w->base + w->hi;
    size_t want = w->cap - w->hi;
    if (w->end - at < want)
        want = (size_t) (w->end - at);
    if (want == 0) {
        w->eof = 1;
        return 0;
    }
    if (w->stream && w->sink && w->sink->idle && s_wait (w))
        return WEIR__WINDOW_IDLE;
    ssize_t n;
    if (w->z) {
        if ((n = weir__decompress_read (w->z, w->buf + w->hi, want, err)) < 0)
            return err->code;
    }
    else
        do
            n = read (w->fd, w->buf + w->hi, want);
        while (n < 0 && errno == EINTR);
    if (w->stream)
        w->read_ns = weir__now_ns ();
    if (n < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, w->path,
                              (unsigned long long) at, strerror (errno));
    if (n == 0 && w->follow) {
        int rc = s_follow_end (w);
        w->dry = rc == WEIR__WINDOW_DRY;
        if (w->dry)
            s_seen (w);
        return rc;
    }
    //  The writer may be gaining: its size, at each read that brings
    //  bytes (a system call per buffer's worth)
    if (n > 0 && w->follow)
        s_seen (w);
    if (n > 0 && w->dry) {
        w->dry = 0;
        int again = s_rewritten (w);
        if (again < 0)
            return weir__err_set (err, WEIR_EIO, "%s: cannot seek '%s' back to its start: %s", element, w->path,
                                  strerror (errno));
        if (again)
            return 0;
    }
    if (n == 0)
        w->eof = 1;
    w->hi += (size_t) n;
    if (w->follow && w->shard->id.fp_len < WEIR__FINGERPRINT && w->base + w->hi > w->shard->id.fp_len) {
        //  The fingerprint grows with a young file, up to its full length
        struct stat st;
        if (fstat (w->fd, &st) == 0)
            weir__identity_of (w->fd, &st, &w->shard->id);
    }
    return 0;
}

int weir__window_next_file (weir__window *w)
{
    if (w->next_fd < 0)
        return 0;
    close (w->fd);
    w->fd = w->next_fd;
    w->next_fd = -1;
    w->base = 0;
    w->lo = w->hi = 0;
    w->eof = 0;
    w->rotated_ns = 0;
    *w->offset = 0;
    struct stat st;
    if (fstat (w->fd, &st) == 0)
        weir__identity_of (w->fd, &st, &w->shard->id);
    return 1;
}

int weir__window_line (weir__window *w, const char *element, const char **line, size_t *len, weir__err *err)
{
    //  What was searched already is not searched again after a fill, so a
    //  long line costs one pass, not one per fill
    size_t searched = 0;
    for (;;) {
        char *start = w->buf + w->lo;
        char *nl = memchr (start + searched, '\n', w->hi - w->lo - searched);
        if (nl) {
            *line = start;
            *len = (size_t) (nl - start);
            w->lo += *len + 1;
            return 0;
        }
        if (w->eof && w->hi == w->lo && weir__window_next_file (w)) {
            searched = 0;
            continue;
        }
        if (w->eof) {
            //  A last line without its newline is still a line
            *line = w->hi > w->lo ? start : NULL;
            *len = w->hi - w->lo;
            w->lo = w->hi;
            return 0;
        }
        searched = w->hi - w->lo;
        int rc = weir__window_fill (w, element, err);
        if (rc)
            return rc;
        //  A followed file that started over (truncated, written again)
        //  holds none of what was searched
        if (searched > w->hi - w->lo)
            searched = 0;
    }
}

//  The first bytes of a record skipped over, for the dead letter: as many
//  as it keeps, however few the window held at once (max-line=20 keeps a
//  41-byte line whole)
#define S_KEEP_MAX ((size_t) 64 << 10)
typedef struct {
    char *bytes;  //  S_KEEP_MAX of them, or NULL: nothing kept
    size_t len;
} s_keep;

static void s_kept (s_keep *keep, const char *from, size_t n)
{
    if (!keep || !keep->bytes || keep->len >= S_KEEP_MAX)
        return;
    size_t room = S_KEEP_MAX - keep->len;
    memcpy (keep->bytes + keep->len, from, n < room ? n : room);
    keep->len += n < room ? n : room;
}

//  Skip the line at buf[lo], its newline included, keeping its first
//  bytes (without the newline) in KEEP.  As weir__window_skip_line.
static int s_skip_line (weir__window *w, const char *element, uint64_t *skipped, s_keep *keep, weir__err *err)
{
    //  The skip is one step: a pause in the middle of it would leave the
    //  offset and a kept window apart
    weir__sink *sink = w->sink;
    w->sink = NULL;
    *skipped = 0;
    int rc = 0;
    for (;;) {
        char *start = w->buf + w->lo;
        char *nl = memchr (start, '\n', w->hi - w->lo);
        if (nl) {
            s_kept (keep, start, (size_t) (nl - start));
            *skipped += (uint64_t) (nl - start) + 1;
            w->lo += (size_t) (nl - start) + 1;
            break;
        }
        s_kept (keep, start, w->hi - w->lo);
        *skipped += w->hi - w->lo;
        w->lo = w->hi;
        if (w->eof)
            break;
        if ((rc = weir__window_fill (w, element, err)))
            break;
    }
    w->sink = sink;
    return rc;
}

int weir__window_skip_line (weir__window *w, const char *element, uint64_t *skipped, weir__err *err)
{
    return s_skip_line (w, element, skipped, NULL, err);
}

//  Skip to the end of the range.  As s_skip_line.
static int s_skip_rest (weir__window *w, const char *element, uint64_t *skipped, s_keep *keep, weir__err *err)
{
    weir__sink *sink = w->sink;
    w->sink = NULL;
    *skipped = 0;
    int rc = 0;
    for (;;) {
        s_kept (keep, w->buf + w->lo, w->hi - w->lo);
        *skipped += w->hi - w->lo;
        w->lo = w->hi;
        if (w->eof || (rc = weir__window_fill (w, element, err)))
            break;
    }
    w->sink = sink;
    return rc;
}

//  Give the bad record at buf[lo] to the sink, after SKIP passed over it.
static int s_reject (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                     int (*skip) (weir__window *, const char *, uint64_t *, s_keep *, weir__err *),
                     weir__err *err)
{
    s_keep keep = {malloc (S_KEEP_MAX), 0};
    if (!keep.bytes)
        return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory", element);
    uint64_t at = weir__window_offset (w, w->lo);
    //  A line's number, for the readers of lines; the rest of a msgpack
    //  file has none
    uint64_t line = skip == s_skip_line && w->shard ? weir__lineno_at (w->path, &w->shard->lines, at, 0) : 0;
    weir__bad bad = {.path = w->path, .offset = at, .line = line, .bytes = keep.bytes, .reason = reason};
    int rc = skip (w, element, &bad.size, &keep, err);
    if (!rc) {
        bad.len = keep.len;
        *offset = weir__window_offset (w, w->lo);
        rc = w->sink->reject (w->sink, &bad);
    }
    free (keep.bytes);
    return rc;
}

int weir__window_reject_line (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err)
{
    return s_reject (w, element, reason, offset, s_skip_line, err);
}

int weir__window_reject_read (weir__window *w, const char *line, size_t n, uint64_t first, uint64_t lines,
                              const char *reason, uint64_t *offset)
{
    uint64_t at = weir__window_offset (w, (size_t) (line - w->buf));
    weir__bad bad = {.path = w->path,
                     .offset = at,
                     .line = weir__lineno_at (w->path, &w->shard->lines, first, lines),
                     .bytes = line,
                     .len = n,
                     .size = weir__window_offset (w, w->lo) - at,
                     .reason = reason};
    *offset = weir__window_offset (w, w->lo);
    return w->sink->reject (w->sink, &bad);
}

int weir__window_reject_rest (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err)
{
    return s_reject (w, element, reason, offset, s_skip_rest, err);
}
