/*  readers/files.c - globbing, shards and windowed reads for file readers.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readers/reader.h"

void weir__shards_init (weir__shards *self)
{
    self->items = NULL;
    self->count = 0;
}

void weir__shards_release (weir__shards *self)
{
    for (size_t i = 0; i < self->count; i++)
        free (self->items[i].path);
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
    self->count++;
    return 0;
}

int weir__files_glob (const char *element, const char *pattern, char ***paths, size_t *count, weir__err *err)
{
    glob_t g;
    int rc = glob (pattern, GLOB_ERR, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        //  A plain name that does not exist deserves the system's words
        if (!strpbrk (pattern, "*?["))
            return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, pattern,
                                  strerror (ENOENT));
        return weir__err_set (err, WEIR_EIO, "%s: no file matches '%s'", element, pattern);
    }
    if (rc)
        return weir__err_set (err, WEIR_EIO, "%s: cannot read the files of '%s'", element, pattern);
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

int weir__window_open (weir__window *w, const char *element, const char *path, uint64_t start, uint64_t end,
                       size_t max, weir__err *err)
{
    memset (w, 0, sizeof *w);
    w->fd = -1;
    w->path = path;
    w->max = max;
    w->cap = max < (1u << 20) ? max : (1u << 20);
    w->base = start;
    w->end = end;
    w->fd = open (path, O_RDONLY | O_CLOEXEC);
    if (w->fd < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    struct stat st;
    if (fstat (w->fd, &st) == 0 && S_ISDIR (st.st_mode)) {
        weir__window_close (w);
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s': %s", element, path, strerror (EISDIR));
    }
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
    ssize_t n;
    do
        n = read (w->fd, w->buf + w->hi, want);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, w->path,
                              (unsigned long long) at, strerror (errno));
    if (n == 0)
        w->eof = 1;
    w->hi += (size_t) n;
    return 0;
}
