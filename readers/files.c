/*  readers/files.c - globs, line-oriented shards, lines counted.  */
#include "config.h"
#include "readers/files.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <weir/weir.h>

#include "readers/source.h"

static void s_free (char **paths, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (paths[i]);
    free (paths);
}

//  The files matching PATTERN, sorted; an error names ELEMENT and the
//  pattern when nothing matches.  Free with s_free.

static int s_glob (const char *element, const char *pattern, char ***paths, size_t *count, weir__err *err)
{
    if (weir__source_is_stdin (pattern)) {
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
            s_free (out, i);
            globfree (&g);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
    *paths = out;
    *count = g.gl_pathc;
    globfree (&g);
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

//  The compression FD's first bytes say it is in (lib/codec.h).
static weir__codec s_codec (int fd)
{
    unsigned char head[WEIR__CODEC_MAGIC];
    ssize_t n = pread (fd, head, sizeof head, 0);
    return n > 0 ? weir__codec_of (head, (size_t) n) : WEIR__CODEC_NONE;
}

//  Records that only a scan from a file's start tells apart
//  (weir__files_plan_records): the scan of one file, record by record,
//  through a buffer of the file's bytes
typedef struct {
    weir__files_scan_fn *scan;
    void *arg;
    size_t max;  //  the largest record
    char *buf;   //  the file's bytes [base, base + len)
    size_t cap, len;
    uint64_t base;
    uint64_t pos;  //  the end of the last whole record: a boundary
    int stuck;     //  a record malformed, too large or cut by the end: no cut past it
} s_records;

//  The first record boundary at or after AT, or SIZE when there is none
//  (the file ends first, or holds no record there).  0, or an error.
static int s_next_record (s_records *r, int fd, const char *element, const char *path, uint64_t at,
                          uint64_t size, uint64_t *out, weir__err *err)
{
    while (!r->stuck && r->pos < at && r->pos < size) {
        size_t in = (size_t) (r->pos - r->base), have = r->len - in, record = 0;
        int got = have ? r->scan (r->arg, r->buf + in, have, &record) : 0;
        if (got > 0) {
            r->pos += record;
            continue;
        }
        if (got < 0 || have >= r->max || r->base + r->len >= size) {
            r->stuck = 1;
            break;
        }
        //  More bytes: what is unread to the front, the buffer grown when a
        //  record fills it
        memmove (r->buf, r->buf + in, have);
        r->base = r->pos;
        r->len = have;
        if (r->len == r->cap) {
            size_t cap = r->cap * 2 < r->max ? r->cap * 2 : r->max;
            char *buf = realloc (r->buf, cap);
            if (!buf)
                return weir__err_set (err, WEIR_ENOMEM, "out of memory");
            r->buf = buf;
            r->cap = cap;
        }
        ssize_t n;
        do
            n = pread (fd, r->buf + r->len, r->cap - r->len, (off_t) (r->base + r->len));
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, path,
                                  (unsigned long long) (r->base + r->len), strerror (errno));
        if (n == 0)
            r->stuck = 1;
        r->len += (size_t) n;
    }
    *out = !r->stuck && r->pos >= at && r->pos < size ? r->pos : size;
    return 0;
}

//  Plan the shards of the file PATH (weir__files_plan): of lines, or with
//  RECORDS of records a scan tells apart.
static int s_plan_cut (const char *element, const char *path, uint64_t split, s_records *records,
                       weir__shards *shards, weir__err *err)
{
    //  stat, not open: opening a FIFO here would take its writer's data
    //  and then drop it on close, before the reading thread gets there
    struct stat st;
    if (weir__source_stat (path, &st))
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    if (S_ISDIR (st.st_mode))
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s': %s", element, path, strerror (EISDIR));
    if (!S_ISREG (st.st_mode) || weir__source_is_stdin (path)) {
        //  A pipe or device: one shard, read to its end.  So is standard
        //  input even when it is a file: its descriptors share one offset.
        //  Such a file may be compressed; a pipe's first bytes cannot be
        //  looked at without taking them
        if (weir__shards_add (shards, path, 0, UINT64_MAX))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        if (S_ISREG (st.st_mode))
            shards->items[shards->count - 1].codec = s_codec (STDIN_FILENO);
        return 0;
    }
    uint64_t size = (uint64_t) st.st_size, start = 0;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    //  Which file, planned up to where: a resume goes on past that end
    //  when the file was only appended to since (checkpoint/resume.h)
    weir__identity id;
    weir__identity_of (fd, &st, &id);
    weir__identity_end (fd, size, &id);
    int rc = 0;
    //  A compressed file cannot be entered in the middle: one shard,
    //  whose offsets count the bytes it stands for, up to its end
    weir__codec codec = s_codec (fd);
    if (codec) {
        if (weir__shards_add (shards, path, 0, UINT64_MAX))
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
        else {
            shards->items[shards->count - 1].id = id;
            shards->items[shards->count - 1].codec = codec;
        }
        size = 0;
    }
    //  Records of a file no larger than split= are one shard to its end,
    //  as every file of records was before they were cut
    if (records && size <= split && !codec) {
        if (weir__shards_add (shards, path, 0, UINT64_MAX))
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
        else
            shards->items[shards->count - 1].id = id;
        size = 0;
    }
    if (records) {
        records->pos = records->base = 0;
        records->len = 0;
        records->stuck = 0;
    }
    while (start < size) {
        uint64_t end = size;
        if (size - start > split
            && (rc = records ? s_next_record (records, fd, element, path, start + split, size, &end, err)
                             : s_next_line (fd, element, path, start + split - 1, size, &end, err)))
            break;
        if (weir__shards_add (shards, path, start, end)) {
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            break;
        }
        shards->items[shards->count - 1].id = id;
        start = end;
    }
    close (fd);
    return rc;
}

//  Plan PATH as one shard, the whole file.  A regular file's identity and
//  size are noted (a resume checks it is still the file read, and whether
//  it grew); a pipe is not opened: its writer's data would go with the
//  descriptor.
static int s_plan_whole (const char *path, weir__shards *shards, weir__err *err)
{
    if (weir__shards_add (shards, path, 0, UINT64_MAX))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    struct stat st;
    if (weir__source_stat (path, &st) || !S_ISREG (st.st_mode))
        return 0;
    if (weir__source_is_stdin (path)) {
        shards->items[shards->count - 1].codec = s_codec (STDIN_FILENO);
        return 0;
    }
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat (fd, &st) == 0) {
        //  Its size now: a resume reads on past it only when it grew
        weir__shard *shard = &shards->items[shards->count - 1];
        weir__identity_of (fd, &st, &shard->id);
        weir__identity_end (fd, (uint64_t) st.st_size, &shard->id);
        shard->codec = s_codec (fd);
    }
    if (fd >= 0)
        close (fd);
    return 0;
}

int weir__files_plan_records (const char *element, const char *pattern, uint64_t split, size_t max,
                              weir__files_scan_fn *scan, void *arg, weir__shards *shards, weir__err *err)
{
    char **paths = NULL;
    size_t count = 0;
    int rc = s_glob (element, pattern, &paths, &count, err);
    if (rc)
        return rc;
    s_records records = {scan, arg, max, NULL, 0, 0, 0, 0, 0};
    records.cap = max < (1u << 20) ? max : (1u << 20);
    if (!(records.buf = malloc (records.cap)))
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < count && !rc; i++)
        rc = s_plan_cut (element, paths[i], split, &records, shards, err);
    free (records.buf);
    s_free (paths, count);
    return rc;
}

int weir__files_plan (const char *element, const char *pattern, uint64_t split, weir__shards *shards,
                      weir__err *err)
{
    char **paths = NULL;
    size_t count = 0;
    int rc = s_glob (element, pattern, &paths, &count, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < count && !rc; i++)
        if (split != WEIR__FILES_WHOLE)
            rc = s_plan_cut (element, paths[i], split, NULL, shards, err);
        else
            rc = s_plan_whole (paths[i], shards, err);
    s_free (paths, count);
    return rc;
}
