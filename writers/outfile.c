/*  writers/outfile.c - an output file written by several threads.  */
#include "config.h"
#include "writers/outfile.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/killpoint.h"
#include "lib/sync.h"

//  Large enough that the lock and the system call are rare per record
#define S_FLUSH_AT (256 * 1024)

//  Names of the process's standard output
static int s_is_stdout (const char *path)
{
    return !strcmp (path, "-") || !strcmp (path, "/dev/stdout") || !strcmp (path, "/dev/fd/1")
           || !strcmp (path, "/proc/self/fd/1");
}

int weir__outfile_is_stream (const char *path)
{
    struct stat st;
    return s_is_stdout (path) || (stat (path, &st) == 0 && !S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode));
}

//  Open PATH for writing: standard output is the process's own descriptor,
//  shared (so '>>' appends and a file around it keeps what came before);
//  a pipe, FIFO, terminal or device is opened as it is, never truncated;
//  a regular file is created, or truncated on a fresh start.
static int s_open (weir__outfile *of, const char *path, int resume)
{
    of->stream = weir__outfile_is_stream (path);
    if (s_is_stdout (path))
        return fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    if (of->stream)
        return open (path, O_WRONLY | O_CLOEXEC);
    return open (path, O_WRONLY | O_CREAT | (resume ? 0 : O_TRUNC) | O_CLOEXEC, 0666);
}

//  The file beside PATH that a job without a checkpoint writes, renamed
//  over PATH when it succeeds: in PATH's folder (a rename does not cross
//  file systems), hidden, named for the process.  A symbolic link's target
//  is replaced, not the link.  -1 with errno when the folder takes no new
//  file: PATH is then written in place, as before this existed.
static int s_open_beside (weir__outfile *of, const char *path)
{
    static atomic_uint s_serial;
    struct stat st;
    char *real = NULL;
    if (lstat (path, &st) == 0 && S_ISLNK (st.st_mode) && !(real = realpath (path, NULL)))
        return -1;  //  a dangling link: written through, in place
    const char *target = real ? real : path;
    //  What cannot be written in place is refused as it was: a folder, a
    //  file without write permission
    int exists = stat (target, &st) == 0;
    if (exists && (!S_ISREG (st.st_mode) || access (target, W_OK))) {
        free (real);
        errno = 0;
        return -1;
    }
    const char *slash = strrchr (target, '/');
    int dirlen = slash ? (int) (slash - target + 1) : 0;
    const char *base = slash ? slash + 1 : target;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        unsigned serial = atomic_fetch_add_explicit (&s_serial, 1, memory_order_relaxed);
        free (of->temp);
        if (asprintf (&of->temp, "%.*s.%s.weir-%ld-%u", dirlen, target, base, (long) getpid (), serial) < 0) {
            of->temp = NULL;
            errno = ENOMEM;
            break;
        }
        fd = open (of->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd >= 0 && exists)
        (void) fchmod (fd, st.st_mode & 07777);  //  the file keeps its mode, as sed -i keeps it
    if (fd >= 0 && real) {
        //  The rename goes to the link's target
        free (of->path);
        of->path = real;
        real = NULL;
    }
    if (fd < 0) {
        int e = errno;
        free (of->temp);
        of->temp = NULL;
        errno = e;
    }
    free (real);
    return fd;
}

int weir__outfile_open (weir__outfile *of, const char *element, const char *path, unsigned threads,
                        const char *resume, unsigned flags, weir__err *err)
{
    memset (of, 0, sizeof *of);
    of->element = element;
    of->threads = threads;
    of->fd = -1;
    of->path = strdup (path);
    of->pending = calloc (threads, sizeof *of->pending);
    if (!of->path || !of->pending) {
        free (of->path);
        free (of->pending);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    of->fd = -1;
    if ((flags & WEIR__WRITER_REPLACE) && !resume && !weir__outfile_is_stream (path)) {
        of->fd = s_open_beside (of, path);
        if (of->fd < 0 && errno == ENOMEM) {
            free (of->path);
            free (of->pending);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
    }
    if (of->fd < 0)
        of->fd = s_open (of, path, resume != NULL);
    if (of->fd < 0) {
        int e = errno;
        free (of->path);
        free (of->pending);
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s' for writing: %s", element, path,
                              strerror (e));
    }
    if (resume) {
        //  Whatever was written after the checkpoint is not committed: the
        //  records that made it are read again
        char *end;
        unsigned long long committed = strtoull (resume, &end, 10);
        struct stat st;
        int rc = 0;
        if (of->stream)
            rc = weir__err_set (err, WEIR_ESTRUCTURE,
                                "%s: '%s' is not a regular file: it cannot go back to a checkpoint's length",
                                element, path);
        else if (*end || end == resume)
            rc = weir__err_set (err, WEIR_ECORRUPT, "%s: the checkpoint's length of '%s' is malformed: '%s'",
                                element, path, resume);
        else if (fstat (of->fd, &st))
            rc = weir__err_set (err, WEIR_EIO, "%s: cannot stat '%s': %s", element, path, strerror (errno));
        else if (S_ISREG (st.st_mode) && (unsigned long long) st.st_size < committed)
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "%s: '%s' is %llu bytes, shorter than the %llu bytes the checkpoint "
                                "committed: it was changed since, and resuming would lose records",
                                element, path, (unsigned long long) st.st_size, committed);
        else if (S_ISREG (st.st_mode)
                 && (ftruncate (of->fd, (off_t) committed) || lseek (of->fd, 0, SEEK_END) < 0))
            rc = weir__err_set (err, WEIR_EIO, "%s: cannot truncate '%s' to %llu bytes: %s", element, path,
                                committed, strerror (errno));
        if (rc) {
            close (of->fd);
            free (of->path);
            free (of->pending);
            return rc;
        }
        of->bytes = committed;
    }
    pthread_mutex_init (&of->lock, NULL);
    return 0;
}

//  LEN bytes at DATA to the file, under its lock
static int s_put (weir__outfile *of, const char *data, size_t len, weir__err *err)
{
    size_t done = 0;
    int rc = 0;
    while (done < len) {
        ssize_t n = write (of->fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = weir__err_set (err, WEIR_EIO, "%s: cannot write '%s' at byte %llu: %s", of->element,
                                of->path, (unsigned long long) (of->bytes + done), strerror (errno));
            break;
        }
        done += (size_t) n;
    }
    of->bytes += done;
    return rc;
}

//  What ZOUT holds to the file, under its lock
static int s_put_compressed (weir__outfile *of, weir__err *err)
{
    int rc = s_put (of, of->zout.data, of->zout.len, err);
    of->zout.len = 0;
    return rc;
}

static int s_write (weir__outfile *of, weir__buf *b, weir__err *err)
{
    if (b->len == 0)
        return 0;
    int rc = 0;
    pthread_mutex_lock (&of->lock);
    if (!of->z)
        rc = s_put (of, b->data, b->len, err);
    else if (weir__compress_add (of->z, b->data, b->len, of->stream, &of->zout))
        rc = weir__err_set (err, WEIR_ENOMEM, "%s: out of memory compressing '%s'", of->element, of->path);
    else
        rc = s_put_compressed (of, err);
    pthread_mutex_unlock (&of->lock);
    b->len = 0;
    return rc;
}

//  End the compressed member open, if any, and write its end: under the
//  file's lock
static int s_end_member (weir__outfile *of, weir__err *err)
{
    if (!of->z)
        return 0;
    if (weir__compress_end (of->z, &of->zout))
        return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory compressing '%s'", of->element, of->path);
    return s_put_compressed (of, err);
}

int weir__outfile_compress (weir__outfile *of, weir__codec codec, int level, weir__err *err)
{
    weir__buf_init (&of->zout);
    if (!(of->z = weir__compress_new (codec, level)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    return 0;
}

int weir__outfile_spill (weir__outfile *of, unsigned thread, weir__err *err)
{
    weir__buf *b = &of->pending[thread];
    //  Whoever reads a pipe or a terminal is waiting for each batch
    return b->len >= S_FLUSH_AT || (of->stream && b->len) ? s_write (of, b, err) : 0;
}

int weir__outfile_flush (weir__outfile *of, unsigned thread, weir__err *err)
{
    return s_write (of, &of->pending[thread], err);
}

int weir__outfile_commit (weir__outfile *of, char *out, weir__err *err)
{
    pthread_mutex_lock (&of->lock);
    //  A compressed file is whole at each commit: its member ends first
    int rc = s_end_member (of, err);
    //  A pipe or a terminal cannot be synced, and need not be; a regular
    //  file that says so (EINVAL, ENOTSUP, EROFS) holds bytes that may
    //  never reach the disk, and a commit must not count them
    if (!rc && fsync (of->fd) && !(of->stream && (errno == EINVAL || errno == ENOTSUP || errno == EROFS)))
        rc = weir__err_set (err, WEIR_EIO, "%s: cannot sync '%s': %s", of->element, of->path,
                            strerror (errno));
    //  The file's name too, once: a file created (or truncated) at open
    //  may vanish in a power cut with its directory entry, while the
    //  checkpoint that counts on its length survives
    else if (!rc && !of->named && !of->stream && !of->temp) {
        if (weir__sync_parent (of->path))
            rc = weir__err_set (err, WEIR_EIO, "%s: cannot sync the folder of '%s': %s", of->element,
                                of->path, strerror (errno));
        else
            of->named = 1;
    }
    snprintf (out, WEIR__WRITER_STATE_MAX, "%llu", (unsigned long long) of->bytes);
    pthread_mutex_unlock (&of->lock);
    return rc;
}

void weir__outfile_discard (weir__outfile *of)
{
    of->discard = 1;
}

//  Put the file written beside PATH in its place.  Its bytes are durable
//  before its name replaces the old file's, so a power cut finds either
//  the whole old file or the whole new one; the rename is durable once
//  the folder is synced.
static int s_put_in_place (weir__outfile *of, weir__err *err)
{
    if (fsync (of->fd))
        return weir__err_set (err, WEIR_EIO, "%s: cannot sync '%s': %s", of->element, of->path,
                              strerror (errno));
    WEIR_KILL_POINT ("output-synced");
    if (rename (of->temp, of->path))
        return weir__err_set (err, WEIR_EIO, "%s: cannot put the new '%s' in place of the old one: %s",
                              of->element, of->path, strerror (errno));
    free (of->temp);
    of->temp = NULL;
    WEIR_KILL_POINT ("output-renamed");
    if (weir__sync_parent (of->path))
        return weir__err_set (err, WEIR_EIO, "%s: cannot sync the folder of '%s': %s", of->element, of->path,
                              strerror (errno));
    return 0;
}

int weir__outfile_close (weir__outfile *of, weir__err *err)
{
    int rc = 0;
    weir__err e;
    weir__err_init (&e);
    for (unsigned t = 0; t < of->threads; t++) {
        if (!rc && !of->discard)
            rc = s_write (of, &of->pending[t], &e);
        weir__buf_release (&of->pending[t]);
    }
    if (!rc && !of->discard)
        rc = s_end_member (of, &e);
    if (of->temp && !of->discard && !rc)
        rc = s_put_in_place (of, &e);
    //  Failed, or not put in place: the old file stays as it was
    if (of->temp)
        (void) unlink (of->temp);
    if (close (of->fd) && !rc)
        rc = weir__err_set (&e, WEIR_EIO, "%s: cannot close '%s': %s", of->element, of->path,
                            strerror (errno));
    if (rc)
        *err = e;
    pthread_mutex_destroy (&of->lock);
    weir__compress_destroy (&of->z);
    weir__buf_release (&of->zout);
    free (of->pending);
    free (of->path);
    free (of->temp);
    return rc;
}
