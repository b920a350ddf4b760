/*  checkpoint/copy.c - a private copy of a store's directory, to read.  */
#include "config.h"
#include "checkpoint/copy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint/keys.h"

//  Copy the file SRC to DST; tables, which LevelDB never changes, are
//  linked instead when they can be.
static int s_copy_file (const char *src, const char *dst, int immutable)
{
    if (immutable && link (src, dst) == 0)
        return 0;
    int in = open (src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno == ENOENT ? 0 : -1;  //  removed meanwhile: the retry sees
    int out = open (dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char buf[65536];
    ssize_t n = 0;
    while (out >= 0 && (n = read (in, buf, sizeof buf)) > 0)
        if (write (out, buf, (size_t) n) != n) {
            n = -1;
            break;
        }
    close (in);
    if (out < 0 || close (out) || n < 0)
        return -1;
    return 0;
}

char *weir__copy_new (const char *dir, weir__err *err)
{
    const char *tmp = getenv ("TMPDIR");
    char *copy = malloc (4200);
    if (!copy) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf (copy, 4200, "%s/weir-checkpoints-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    DIR *d = mkdtemp (copy) ? opendir (dir) : NULL;
    int rc = d ? 0 : -1;
    struct dirent *e;
    char src[4200], dst[4200];
    while (!rc && (e = readdir (d))) {
        const char *n = e->d_name;
        size_t len = strlen (n);
        if (!strcmp (n, ".") || !strcmp (n, "..") || !strcmp (n, "LOCK") || !strncmp (n, "LOG", 3)
            || !strcmp (n, WEIR__STORE_PID_FILE) || !strcmp (n, WEIR__STORE_LATEST_FILE))
            continue;
        snprintf (src, sizeof src, "%s/%s", dir, n);
        snprintf (dst, sizeof dst, "%s/%s", copy, n);
        rc = s_copy_file (src, dst, len > 4 && !strcmp (n + len - 4, ".ldb"));
    }
    if (d)
        closedir (d);
    if (rc) {
        weir__err_set (err, WEIR_EIO, "cannot copy the checkpoints of '%s' to read them: %s", dir,
                       strerror (errno));
        weir__copy_destroy (&copy);
        return NULL;
    }
    return copy;
}

void weir__copy_destroy (char **copy_p)
{
    char *copy = *copy_p;
    if (!copy)
        return;
    DIR *d = opendir (copy);
    struct dirent *e;
    char path[4200];
    while (d && (e = readdir (d)))
        if (strcmp (e->d_name, ".") && strcmp (e->d_name, "..")) {
            snprintf (path, sizeof path, "%s/%s", copy, e->d_name);
            unlink (path);
        }
    if (d)
        closedir (d);
    rmdir (copy);
    free (copy);
    *copy_p = NULL;
}
