/*  readers/lines.c - each line of text files as a msgpack str.

    Every file of the glob is a shard; a file larger than split= bytes is
    cut into several, each cut moved forward to just after a newline so
    that no line is split.  A shard holds the lines that start inside it.
    The newline is dropped; a final line without one is still a line.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pack.h"
#include "readers/reader.h"

typedef struct {
    size_t max_line;
} s_lines;

static const weir_property_info s_props[] = {
    {"path", NULL, "file or glob of files to read (required); each file is a shard"},
    {"split", "64M", "cut files larger than this many bytes into shards at line boundaries"},
    {"max-line", "64M", "refuse lines longer than this many bytes"},
    {NULL, NULL, NULL},
};

//  The offset just after the first newline at or after AT, or SIZE.
static int s_next_line (int fd, const char *path, uint64_t at, uint64_t size, uint64_t *out, weir__err *err)
{
    char buf[4096];
    while (at < size) {
        ssize_t n = pread (fd, buf, sizeof buf, (off_t) at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return weir__err_set (err, WEIR_EIO, "lines: cannot read '%s' at byte %llu: %s", path,
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

static int s_plan_file (const char *path, uint64_t split, weir__shards *shards, weir__err *err)
{
    //  stat, not open: opening a FIFO here would take its writer's data
    //  and then drop it on close, before the reading thread gets there
    struct stat st;
    if (stat (path, &st))
        return weir__err_set (err, WEIR_EIO, "lines: cannot open '%s': %s", path, strerror (errno));
    if (S_ISDIR (st.st_mode))
        return weir__err_set (err, WEIR_EIO, "lines: cannot read '%s': %s", path, strerror (EISDIR));
    if (!S_ISREG (st.st_mode)) {
        //  A pipe or device: one shard, read to its end
        if (weir__shards_add (shards, path, 0, UINT64_MAX))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return 0;
    }
    uint64_t size = (uint64_t) st.st_size, start = 0;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return weir__err_set (err, WEIR_EIO, "lines: cannot open '%s': %s", path, strerror (errno));
    int rc = 0;
    while (start < size) {
        uint64_t end = size;
        if (size - start > split && (rc = s_next_line (fd, path, start + split - 1, size, &end, err)))
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

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    const char *pattern = weir__props_get (props, "path", NULL);
    if (!pattern)
        return weir__err_set (err, WEIR_EPROPERTY, "lines: property 'path' is required");
    int64_t split, max_line;
    int rc = weir__props_int (props, "lines", "split", 64000000, 1, INT64_MAX, &split, err);
    if (!rc)
        rc = weir__props_int (props, "lines", "max-line", 64000000, 1, SIZE_MAX / 4, &max_line, err);
    if (rc)
        return rc;
    char **paths;
    size_t count;
    if ((rc = weir__files_glob ("lines", pattern, &paths, &count, err)))
        return rc;
    for (size_t i = 0; i < count && !rc; i++)
        rc = s_plan_file (paths[i], (uint64_t) split, shards, err);
    weir__files_free (paths, count);
    if (rc)
        return rc;
    s_lines *self = malloc (sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    //  One more byte for the newline that ends the longest line
    self->max_line = (size_t) max_line + 1;
    *state = self;
    return 0;
}

static int s_read (void *state, const weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    const s_lines *self = state;
    weir__window w;
    int rc = weir__window_open (&w, "lines", shard->path, *offset, shard->end, self->max_line, err);
    if (rc)
        return rc;
    for (;;) {
        char *nl = memchr (w.buf + w.lo, '\n', w.hi - w.lo);
        if (nl) {
            size_t n = (size_t) (nl - (w.buf + w.lo));
            //  The record is in the batch, and the offset past it, before
            //  the sink may pause the epoch
            if (weir__pack_str (&sink->batch, w.buf + w.lo, n)) {
                rc = WEIR_ENOMEM;
                break;
            }
            w.lo += n + 1;
            *offset = weir__window_offset (&w, w.lo);
            if ((rc = weir__sink_add (sink)))
                break;
            continue;
        }
        if (w.eof) {
            //  A last line without its newline
            if (w.hi > w.lo) {
                if (weir__pack_str (&sink->batch, w.buf + w.lo, w.hi - w.lo)) {
                    rc = WEIR_ENOMEM;
                    break;
                }
                *offset = weir__window_offset (&w, w.hi);
                w.lo = w.hi;
                rc = weir__sink_add (sink);
            }
            break;
        }
        rc = weir__window_fill (&w, "lines", err);
        if (rc == 1) {
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "lines: '%s' at byte %llu: line longer than max-line=%zu bytes", shard->path,
                                (unsigned long long) weir__window_offset (&w, w.lo), self->max_line - 1);
            break;
        }
        if (rc)
            break;
    }
    if (rc == WEIR_ENOMEM)
        weir__err_set (err, rc, "lines: out of memory");
    weir__window_close (&w);
    return rc;
}

static void s_close (void *state)
{
    free (state);
}

const weir__reader_class weir__reader_lines = {
    "lines", "each line of text files as a msgpack string, without its newline", s_props, s_open, s_read,
    s_close,
};
