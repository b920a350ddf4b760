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

//  Plan the shards of the file of lines PATH (weir__files_plan).
static int s_plan_lines (const char *element, const char *path, uint64_t split, weir__shards *shards,
                         weir__err *err)
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
    while (start < size) {
        uint64_t end = size;
        if (size - start > split
            && (rc = s_next_line (fd, element, path, start + split - 1, size, &end, err)))
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
            rc = s_plan_lines (element, paths[i], split, shards, err);
        else
            rc = s_plan_whole (paths[i], shards, err);
    s_free (paths, count);
    return rc;
}
