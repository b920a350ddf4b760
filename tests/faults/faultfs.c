/*  tests/faults/faultfs.c - an LD_PRELOAD shim for power cuts and full
    disks, for the files under one folder.

    FAULTFS_ROOT=DIR         only files and folders under DIR are looked at
    FAULTFS_JOURNAL=FILE     the power-cut journal, appended to
    FAULTFS_GRAVES=DIR       where replaced and removed files are kept (a
                             hard link, so on the same file system as DIR)
    FAULTFS_FAIL=KIND:K      the K-th call of KIND under DIR fails with
                             ENOSPC: write (write, pwrite, writev),
                             sync (fsync, fdatasync) or create (open of a
                             file that does not exist yet, with O_CREAT)
    FAULTFS_FAIL_STICKY=1    and every later call of KIND too (a disk that
                             stays full)
    FAULTFS_ERRNO=NAME       the failure is NAME, not ENOSPC: EROFS, EINVAL,
                             ENOTSUP or EIO (what a file system says when
                             it cannot sync)
    FAULTFS_KILL=KIND:K      SIGKILL the process just before the K-th call
                             of KIND under DIR: write, sync, create, rename
                             (rename, renameat) or unlink (unlink, unlinkat)
    FAULTFS_COUNT=1          at exit, append "C write=N sync=M create=P
                             rename=Q unlink=R" to the journal: how many
                             calls of each kind a run makes

    The journal (text, one event a line) is what tests/faults/powercut.c
    needs to put the files back as a power cut would leave them, under a
    strict model: a file's bytes are durable up to its length at its last
    fsync or fdatasync; a folder's entries are durable as they were at its
    last fsync.  So a file created, renamed or removed after its folder
    was last synced is, after the cut, not there, not renamed, still there.

      F INO SIZE                 a file was synced at SIZE bytes
      D PATH NAME:INO ...        a folder was synced holding these entries
      G INO GRAVE                a file about to be replaced or removed is
                                 kept at GRAVE (its bytes as they are)
      W WHAT                     a call the model does not cover was used
                                 (msync, sync_file_range, sync, syncfs):
                                 the test fails on it

    LevelDB does its own I/O with these very libc calls (open, write,
    fdatasync on files and folders, rename, unlink), so it is seen too.
    Calls inside libc itself (fopen's open, fclose's write) are not: such a
    file, never synced, has no durable bytes in the model.  */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *s_root, *s_journal, *s_graves;
static size_t s_root_len;

enum { K_WRITE, K_SYNC, K_CREATE, K_RENAME, K_UNLINK, K_KINDS };
static const char *const s_kinds[K_KINDS] = {"write", "sync", "create", "rename", "unlink"};

static int s_fail_kind = -1, s_kill_kind = -1;
static unsigned long s_fail_at, s_kill_at;
static int s_sticky, s_count;
static int s_errno = ENOSPC;
static const char *s_errno_name = "ENOSPC";
//  Calls are looked at (and counted) only when one of these is asked for
static int s_active;
static _Atomic unsigned long s_calls[K_KINDS];

#define REAL(type, name, args) static type (*real_##name) args
REAL (int, fsync, (int) );
REAL (int, fdatasync, (int) );
REAL (ssize_t, write, (int, const void *, size_t));
REAL (ssize_t, pwrite, (int, const void *, size_t, off_t));
REAL (ssize_t, pwrite64, (int, const void *, size_t, off_t));
REAL (ssize_t, writev, (int, const struct iovec *, int) );
REAL (int, open, (const char *, int, ...));
REAL (int, open64, (const char *, int, ...));
REAL (int, openat, (int, const char *, int, ...));
REAL (int, rename, (const char *, const char *) );
REAL (int, renameat, (int, const char *, int, const char *) );
REAL (int, renameat2, (int, const char *, int, const char *, unsigned) );
REAL (int, unlink, (const char *) );
REAL (int, unlinkat, (int, const char *, int) );
REAL (int, msync, (void *, size_t, int) );
REAL (int, sync_file_range, (int, off64_t, off64_t, unsigned) );
REAL (void, sync, (void) );
REAL (int, syncfs, (int) );

#define RESOLVE(name)                                                                                        \
    do {                                                                                                     \
        if (!real_##name)                                                                                    \
            *(void **) &real_##name = dlsym (RTLD_NEXT, #name);                                              \
    } while (0)

static void s_journal_line (const char *text, size_t len);

//  KIND:K from the variable NAME into *KIND and *AT; exit 2 when malformed.
static void s_parse (const char *name, int *kind, unsigned long *at)
{
    const char *value = getenv (name);
    if (!value || !*value)
        return;
    const char *colon = strchr (value, ':');
    for (int k = 0; colon && k < K_KINDS; k++)
        if (strlen (s_kinds[k]) == (size_t) (colon - value)
            && !strncmp (value, s_kinds[k], strlen (s_kinds[k])))
            *kind = k;
    *at = colon ? strtoul (colon + 1, NULL, 10) : 0;
    if (*kind < 0 || *at == 0) {
        fprintf (stderr, "faultfs: %s='%s' wants KIND:K, KIND one of write sync create rename unlink\n", name,
                 value);
        _exit (2);
    }
    s_active = 1;
}

__attribute__ ((constructor)) static void s_setup (void)
{
    s_root = getenv ("FAULTFS_ROOT");
    s_root_len = s_root ? strlen (s_root) : 0;
    s_journal = getenv ("FAULTFS_JOURNAL");
    s_graves = getenv ("FAULTFS_GRAVES");
    s_parse ("FAULTFS_FAIL", &s_fail_kind, &s_fail_at);
    s_parse ("FAULTFS_KILL", &s_kill_kind, &s_kill_at);
    s_sticky = getenv ("FAULTFS_FAIL_STICKY") && !strcmp (getenv ("FAULTFS_FAIL_STICKY"), "1");
    s_count = getenv ("FAULTFS_COUNT") && !strcmp (getenv ("FAULTFS_COUNT"), "1");
    static const struct {
        const char *name;
        int code;
    } errnos[] = {{"EROFS", EROFS}, {"EINVAL", EINVAL}, {"ENOTSUP", ENOTSUP}, {"EIO", EIO}};
    const char *e = getenv ("FAULTFS_ERRNO");
    for (size_t i = 0; e && i < sizeof errnos / sizeof errnos[0]; i++)
        if (!strcmp (e, errnos[i].name)) {
            s_errno = errnos[i].code;
            s_errno_name = errnos[i].name;
        }
    s_active |= s_count;
    if (!s_root)
        s_active = 0;
}

__attribute__ ((destructor)) static void s_report (void)
{
    if (!s_count)
        return;
    char line[160];
    int n = snprintf (line, sizeof line, "C write=%lu sync=%lu create=%lu rename=%lu unlink=%lu\n",
                      atomic_load (&s_calls[K_WRITE]), atomic_load (&s_calls[K_SYNC]),
                      atomic_load (&s_calls[K_CREATE]), atomic_load (&s_calls[K_RENAME]),
                      atomic_load (&s_calls[K_UNLINK]));
    s_journal_line (line, (size_t) n);
}

static int s_under_root (const char *path)
{
    return s_root && !strncmp (path, s_root, s_root_len) && (path[s_root_len] == '/' || !path[s_root_len]);
}

//  The absolute path of FD into BUF, or NULL.
static const char *s_fd_path (int fd, char *buf, size_t size)
{
    char link[64];
    snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink (link, buf, size - 1);
    if (n < 0)
        return NULL;
    buf[n] = '\0';
    return buf;
}

//  The absolute path of PATH relative to DIRFD into BUF, or NULL.
static const char *s_at_path (int dirfd, const char *path, char *buf, size_t size)
{
    if (path[0] == '/') {
        snprintf (buf, size, "%s", path);
        return buf;
    }
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
        if (!getcwd (base, sizeof base))
            return NULL;
    }
    else if (!s_fd_path (dirfd, base, sizeof base))
        return NULL;
    return (size_t) snprintf (buf, size, "%s/%s", base, path) < size ? buf : NULL;
}

static int s_fd_tracked (int fd)
{
    char path[PATH_MAX];
    return s_root && s_fd_path (fd, path, sizeof path) && s_under_root (path);
}

static void s_journal_line (const char *text, size_t len)
{
    if (!s_journal)
        return;
    RESOLVE (write);
    RESOLVE (open);
    pthread_mutex_lock (&s_lock);
    int fd = real_open (s_journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        while (len > 0) {
            ssize_t n = real_write (fd, text, len);
            if (n <= 0)
                break;
            text += n;
            len -= (size_t) n;
        }
        close (fd);
    }
    pthread_mutex_unlock (&s_lock);
}

//  A call of KIND on PATH, under the root: count it, kill the process
//  when it is the one to kill at, and say whether it is to fail (the
//  failure is said on stderr, so that a test's log shows it).
static int s_event (int kind, const char *path)
{
    unsigned long n = atomic_fetch_add (&s_calls[kind], 1) + 1;
    int kill_now = kind == s_kill_kind && n == s_kill_at;
    int fail_now = kind == s_fail_kind && (n == s_fail_at || (s_sticky && n > s_fail_at));
    if (kill_now || fail_now) {
        char said[PATH_MAX + 96];
        int len = snprintf (said, sizeof said, "faultfs: %s%s %s call %lu (%s)\n",
                            kill_now ? "killed before" : s_errno_name, kill_now ? "" : " for", s_kinds[kind],
                            n, path);
        RESOLVE (write);
        if (real_write (STDERR_FILENO, said, (size_t) len) < 0) {
            //  Only a message
        }
    }
    if (kill_now) {
        kill (getpid (), SIGKILL);
        for (;;)
            pause ();
    }
    return fail_now;
}

//  The same for a call on FD, or on the path PATH relative to DIRFD.
static int s_fd_event (int kind, int fd)
{
    char path[PATH_MAX];
    return s_active && s_fd_path (fd, path, sizeof path) && s_under_root (path) && s_event (kind, path);
}

static int s_path_event (int kind, int dirfd, const char *path)
{
    char abs[PATH_MAX];
    return s_active && s_at_path (dirfd, path, abs, sizeof abs) && s_under_root (abs) && s_event (kind, abs);
}

//  After a successful sync of FD: its size, or a folder's entries.
static void s_synced (int fd)
{
    char path[PATH_MAX];
    struct stat st;
    if (!s_root || !s_fd_path (fd, path, sizeof path) || !s_under_root (path) || fstat (fd, &st))
        return;
    if (S_ISREG (st.st_mode)) {
        char line[128];
        int n = snprintf (line, sizeof line, "F %llu %lld\n", (unsigned long long) st.st_ino,
                          (long long) st.st_size);
        s_journal_line (line, (size_t) n);
        return;
    }
    if (!S_ISDIR (st.st_mode))
        return;
    DIR *d = opendir (path);
    if (!d)
        return;
    size_t cap = 4096, len = 0;
    char *line = malloc (cap);
    len = (size_t) snprintf (line, cap, "D %s", path);
    struct dirent *e;
    while ((e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        size_t need = strlen (e->d_name) + 32;
        if (len + need + 2 > cap) {
            cap = 2 * cap + need;
            line = realloc (line, cap);
        }
        len +=
            (size_t) snprintf (line + len, cap - len, " %s:%llu", e->d_name, (unsigned long long) e->d_ino);
    }
    closedir (d);
    line[len++] = '\n';
    s_journal_line (line, len);
    free (line);
}

//  PATH (absolute) is about to be replaced or removed: keep its bytes.
static void s_bury (const char *path)
{
    struct stat st;
    if (!s_graves || !s_under_root (path) || lstat (path, &st) || !S_ISREG (st.st_mode))
        return;
    char grave[PATH_MAX], line[PATH_MAX + 64];
    snprintf (grave, sizeof grave, "%s/%llu", s_graves, (unsigned long long) st.st_ino);
    if (link (path, grave) && errno != EEXIST)
        return;
    int n = snprintf (line, sizeof line, "G %llu %s\n", (unsigned long long) st.st_ino, grave);
    s_journal_line (line, (size_t) n);
}

static void s_unmodelled (const char *what)
{
    char line[128];
    int n = snprintf (line, sizeof line, "W %s\n", what);
    s_journal_line (line, (size_t) n);
}

//  ---------------------------------------------------------------------

int fsync (int fd)
{
    RESOLVE (fsync);
    if (s_fd_event (K_SYNC, fd)) {
        errno = s_errno;
        return -1;
    }
    int rc = real_fsync (fd);
    if (rc == 0)
        s_synced (fd);
    return rc;
}

int fdatasync (int fd)
{
    RESOLVE (fdatasync);
    if (s_fd_event (K_SYNC, fd)) {
        errno = s_errno;
        return -1;
    }
    int rc = real_fdatasync (fd);
    if (rc == 0)
        s_synced (fd);
    return rc;
}

ssize_t write (int fd, const void *buf, size_t count)
{
    RESOLVE (write);
    if (fd > 2 && s_fd_event (K_WRITE, fd)) {
        errno = s_errno;
        return -1;
    }
    return real_write (fd, buf, count);
}

ssize_t pwrite (int fd, const void *buf, size_t count, off_t offset)
{
    RESOLVE (pwrite);
    if (s_fd_event (K_WRITE, fd)) {
        errno = s_errno;
        return -1;
    }
    return real_pwrite (fd, buf, count, offset);
}

ssize_t pwrite64 (int fd, const void *buf, size_t count, off_t offset)
{
    RESOLVE (pwrite64);
    if (s_fd_event (K_WRITE, fd)) {
        errno = s_errno;
        return -1;
    }
    return real_pwrite64 (fd, buf, count, offset);
}

ssize_t writev (int fd, const struct iovec *iov, int iovcnt)
{
    RESOLVE (writev);
    if (s_fd_event (K_WRITE, fd)) {
        errno = s_errno;
        return -1;
    }
    return real_writev (fd, iov, iovcnt);
}

//  An open that would create a file under the root: to fail?
static int s_create_fails (int dirfd, const char *path, int flags)
{
    struct stat st;
    return s_active && (flags & O_CREAT) && fstatat (dirfd, path, &st, 0)
           && s_path_event (K_CREATE, dirfd, path);
}

int open (const char *path, int flags, ...)
{
    RESOLVE (open);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start (ap, flags);
        mode = (mode_t) va_arg (ap, int);
        va_end (ap);
    }
    if (s_create_fails (AT_FDCWD, path, flags)) {
        errno = s_errno;
        return -1;
    }
    return real_open (path, flags, mode);
}

int open64 (const char *path, int flags, ...)
{
    RESOLVE (open64);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start (ap, flags);
        mode = (mode_t) va_arg (ap, int);
        va_end (ap);
    }
    if (s_create_fails (AT_FDCWD, path, flags)) {
        errno = s_errno;
        return -1;
    }
    return real_open64 (path, flags, mode);
}

int openat (int dirfd, const char *path, int flags, ...)
{
    RESOLVE (openat);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start (ap, flags);
        mode = (mode_t) va_arg (ap, int);
        va_end (ap);
    }
    if (s_create_fails (dirfd, path, flags)) {
        errno = s_errno;
        return -1;
    }
    return real_openat (dirfd, path, flags, mode);
}

int rename (const char *from, const char *to)
{
    RESOLVE (rename);
    char abs[PATH_MAX];
    if (s_path_event (K_RENAME, AT_FDCWD, from)) {
        errno = s_errno;
        return -1;
    }
    if (s_root && s_at_path (AT_FDCWD, to, abs, sizeof abs))
        s_bury (abs);
    return real_rename (from, to);
}

int renameat (int fromfd, const char *from, int tofd, const char *to)
{
    RESOLVE (renameat);
    char abs[PATH_MAX];
    if (s_path_event (K_RENAME, fromfd, from)) {
        errno = s_errno;
        return -1;
    }
    if (s_root && s_at_path (tofd, to, abs, sizeof abs))
        s_bury (abs);
    return real_renameat (fromfd, from, tofd, to);
}

int renameat2 (int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
    RESOLVE (renameat2);
    char abs[PATH_MAX];
    if (s_path_event (K_RENAME, fromfd, from)) {
        errno = s_errno;
        return -1;
    }
    if (s_root && s_at_path (tofd, to, abs, sizeof abs))
        s_bury (abs);
    return real_renameat2 (fromfd, from, tofd, to, flags);
}

int unlink (const char *path)
{
    RESOLVE (unlink);
    char abs[PATH_MAX];
    if (s_path_event (K_UNLINK, AT_FDCWD, path)) {
        errno = s_errno;
        return -1;
    }
    if (s_root && s_at_path (AT_FDCWD, path, abs, sizeof abs))
        s_bury (abs);
    return real_unlink (path);
}

int unlinkat (int dirfd, const char *path, int flags)
{
    RESOLVE (unlinkat);
    if (s_path_event (K_UNLINK, dirfd, path)) {
        errno = s_errno;
        return -1;
    }
    char abs[PATH_MAX];
    if (s_root && s_at_path (dirfd, path, abs, sizeof abs)) {
        if (flags & AT_REMOVEDIR) {
            if (s_under_root (abs))
                s_unmodelled ("rmdir");
        }
        else
            s_bury (abs);
    }
    return real_unlinkat (dirfd, path, flags);
}

int msync (void *addr, size_t length, int flags)
{
    RESOLVE (msync);
    s_unmodelled ("msync");
    return real_msync (addr, length, flags);
}

int sync_file_range (int fd, off64_t offset, off64_t nbytes, unsigned flags)
{
    RESOLVE (sync_file_range);
    if (s_fd_tracked (fd))
        s_unmodelled ("sync_file_range");
    return real_sync_file_range (fd, offset, nbytes, flags);
}

void sync (void)
{
    RESOLVE (sync);
    s_unmodelled ("sync");
    real_sync ();
}

int syncfs (int fd)
{
    RESOLVE (syncfs);
    s_unmodelled ("syncfs");
    return real_syncfs (fd);
}
