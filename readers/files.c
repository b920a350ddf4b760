/*  readers/files.c - globbing, shards and windowed reads for file readers,
    and what the line-oriented ones (lines, libsvm) share.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "readers/reader.h"

//  How long a read waits for a pipe before asking the sink again
#define S_IDLE_MS 20

void weir__shards_init (weir__shards *self)
{
    self->items = NULL;
    self->count = 0;
}

void weir__shards_release (weir__shards *self)
{
    for (size_t i = 0; i < self->count; i++) {
        if (self->items[i].kept) {
            weir__window_close (self->items[i].kept);
            free (self->items[i].kept);
        }
        free (self->items[i].path);
    }
    free (self->items);
    weir__shards_init (self);
}

int weir__shards_add (weir__shards *self, const char *path, uint64_t start, uint64_t end)
{
    weir__shard *items = realloc (self->items, (self->count + 1) * sizeof *items);
    if (!items)
        return WEIR_ENOMEM;
    self->items = items;
    items[self->count].path = NULL;
    if (path && !(items[self->count].path = strdup (path)))
        return WEIR_ENOMEM;
    items[self->count].start = start;
    items[self->count].end = end;
    items[self->count].kept = NULL;
    self->count++;
    return 0;
}

int weir__files_is_stdin (const char *path)
{
    return strcmp (path, "-") == 0;
}

int weir__files_open (const char *path)
{
    //  A duplicate, so that closing it leaves the process's stdin alone
    if (weir__files_is_stdin (path))
        return fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
    return open (path, O_RDONLY | O_CLOEXEC);
}

int weir__files_stat (const char *path, struct stat *st)
{
    return weir__files_is_stdin (path) ? fstat (STDIN_FILENO, st) : stat (path, st);
}

int weir__files_glob (const char *element, const char *pattern, char ***paths, size_t *count, weir__err *err)
{
    if (weir__files_is_stdin (pattern)) {
        //  The Unix convention: '-' is standard input
        char **out = calloc (1, sizeof *out);
        if (!out || !(out[0] = strdup (pattern))) {
            free (out);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
        *paths = out;
        *count = 1;
        return 0;
    }
    glob_t g;
    int rc = glob (pattern, GLOB_ERR, NULL, &g);
    if (rc == GLOB_NOMATCH || (rc == GLOB_ABORTED && errno == ENOENT)) {
        if (rc == GLOB_ABORTED)
            globfree (&g);
        //  A plain name that does not exist deserves the system's words
        if (!strpbrk (pattern, "*?["))
            return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, pattern,
                                  strerror (ENOENT));
        return weir__err_set (err, WEIR_EIO, "%s: no file matches '%s'%s", element, pattern,
                              rc == GLOB_ABORTED ? " (a folder in it does not exist)" : "");
    }
    if (rc) {
        int e = errno;
        globfree (&g);
        return weir__err_set (err, WEIR_EIO, "%s: cannot read the files of '%s': %s", element, pattern,
                              strerror (e));
    }
    char **out = calloc (g.gl_pathc, sizeof *out);
    if (!out) {
        globfree (&g);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (!(out[i] = strdup (g.gl_pathv[i]))) {
            weir__files_free (out, i);
            globfree (&g);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
    *paths = out;
    *count = g.gl_pathc;
    globfree (&g);
    return 0;
}

void weir__files_free (char **paths, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (paths[i]);
    free (paths);
}

int weir__window_open (weir__window *w, const char *element, weir__shard *shard, uint64_t start, size_t max,
                       weir__sink *sink, weir__err *err)
{
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
            w->sink = sink;
            return 0;
        }
    }
    const char *path = shard->path;
    memset (w, 0, sizeof *w);
    w->fd = -1;
    w->path = path;
    w->max = max;
    w->cap = max < (1u << 20) ? max : (1u << 20);
    w->base = start;
    w->end = shard->end;
    w->sink = sink;
    w->fd = weir__files_open (path);
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
    if (start && lseek (w->fd, (off_t) start, SEEK_SET) < 0) {
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

void weir__window_leave (weir__window *w, weir__shard *shard)
{
    if (w->stream && w->fd >= 0 && !(w->eof && w->lo == w->hi)) {
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
    free (w->buf);
    w->fd = -1;
    w->buf = NULL;
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
    //  A pipe or terminal may have nothing for a long time: wait in short
    //  slices, asking the sink in between whether the epoch must end
    //  Records in hand wait at most linger= ms, counted from the read that
    //  brought the first of them (as Kafka's linger.ms counts from a
    //  batch's first record): a steady trickle must not wait for a batch
    //  to fill
    while (w->stream && w->sink && w->sink->idle) {
        weir__sink *sink = w->sink;
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
            break;  //  data, the end, an error or a signal: read() says which
        int said = sink->idle (sink);
        if (said) {
            w->idle = said;
            return WEIR__WINDOW_IDLE;
        }
        if (slice == 0 && poll (&ready, 1, 0) != 0)
            break;
    }
    ssize_t n;
    do
        n = read (w->fd, w->buf + w->hi, want);
    while (n < 0 && errno == EINTR);
    if (w->stream)
        w->read_ns = weir__now_ns ();
    if (n < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, w->path,
                              (unsigned long long) at, strerror (errno));
    if (n == 0)
        w->eof = 1;
    w->hi += (size_t) n;
    return 0;
}

//  The offset just after the first newline at or after AT, or SIZE.
static int s_next_line (int fd, const char *element, const char *path, uint64_t at, uint64_t size,
                        uint64_t *out, weir__err *err)
{
    char buf[4096];
    while (at < size) {
        ssize_t n = pread (fd, buf, sizeof buf, (off_t) at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, path,
                                  (unsigned long long) at, strerror (errno));
        if (n == 0)
            break;
        char *nl = memchr (buf, '\n', (size_t) n);
        if (nl) {
            *out = at + (uint64_t) (nl - buf) + 1;
            return 0;
        }
        at += (uint64_t) n;
    }
    *out = size;
    return 0;
}

int weir__files_plan_lines (const char *element, const char *path, uint64_t split, weir__shards *shards,
                            weir__err *err)
{
    //  stat, not open: opening a FIFO here would take its writer's data
    //  and then drop it on close, before the reading thread gets there
    struct stat st;
    if (weir__files_stat (path, &st))
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    if (S_ISDIR (st.st_mode))
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s': %s", element, path, strerror (EISDIR));
    if (!S_ISREG (st.st_mode) || weir__files_is_stdin (path)) {
        //  A pipe or device: one shard, read to its end.  So is standard
        //  input even when it is a file: its descriptors share one offset
        if (weir__shards_add (shards, path, 0, UINT64_MAX))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return 0;
    }
    uint64_t size = (uint64_t) st.st_size, start = 0;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    int rc = 0;
    while (start < size) {
        uint64_t end = size;
        if (size - start > split
            && (rc = s_next_line (fd, element, path, start + split - 1, size, &end, err)))
            break;
        if (weir__shards_add (shards, path, start, end)) {
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            break;
        }
        start = end;
    }
    close (fd);
    return rc;
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
    }
}

int weir__window_skip_line (weir__window *w, const char *element, uint64_t *skipped, weir__err *err)
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
            *skipped += (uint64_t) (nl - start) + 1;
            w->lo += (size_t) (nl - start) + 1;
            break;
        }
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

//  Skip to the end of the range.  As weir__window_skip_line.
static int s_skip_rest (weir__window *w, const char *element, uint64_t *skipped, weir__err *err)
{
    weir__sink *sink = w->sink;
    w->sink = NULL;
    *skipped = 0;
    int rc = 0;
    for (;;) {
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
                     int (*skip) (weir__window *, const char *, uint64_t *, weir__err *), weir__err *err)
{
    //  What the dead letter keeps of it (it keeps no more)
    size_t keep = w->hi - w->lo < 65536 ? w->hi - w->lo : 65536;
    char *head = malloc (keep ? keep : 1);
    if (!head)
        return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory", element);
    memcpy (head, w->buf + w->lo, keep);
    weir__bad bad = {w->path, weir__window_offset (w, w->lo), head, keep, 0, reason};
    int rc = skip (w, element, &bad.size, err);
    if (!rc) {
        *offset = weir__window_offset (w, w->lo);
        rc = w->sink->reject (w->sink, &bad);
    }
    free (head);
    return rc;
}

int weir__window_reject_line (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err)
{
    return s_reject (w, element, reason, offset, weir__window_skip_line, err);
}

int weir__window_reject_rest (weir__window *w, const char *element, const char *reason, uint64_t *offset,
                              weir__err *err)
{
    return s_reject (w, element, reason, offset, s_skip_rest, err);
}

int weir__files_count_lines (const char *element, const char *path, uint64_t end, uint64_t *lines,
                             weir__err *err)
{
    *lines = 0;
    if (end == 0)
        return 0;
    int fd = weir__files_open (path);
    if (fd < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    const size_t size = 1u << 20;
    char *buf = malloc (size);
    if (!buf) {
        close (fd);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    int rc = 0;
    uint64_t at = 0, count = 0;
    while (at < end) {
        size_t want = end - at < size ? (size_t) (end - at) : size;
        ssize_t n = pread (fd, buf, want, (off_t) at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, path,
                                (unsigned long long) at, n < 0 ? strerror (errno) : "the file is shorter");
            break;
        }
        for (const char *p = buf, *stop = buf + n; (p = memchr (p, '\n', (size_t) (stop - p))); p++)
            count++;
        at += (uint64_t) n;
    }
    free (buf);
    close (fd);
    if (!rc)
        *lines = count;
    return rc;
}
