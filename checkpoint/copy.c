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

//  The number of the manifest DIR's CURRENT names, or 0 when unknown.
static unsigned long long s_manifest (const char *dir)
{
    char path[4200], text[64] = "";
    snprintf (path, sizeof path, "%s/CURRENT", dir);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read (fd, text, sizeof text - 1) : -1;
    if (fd >= 0)
        close (fd);
    unsigned long long number = 0;
    if (n <= 0 || sscanf (text, "MANIFEST-%llu", &number) != 1)
        return 0;
    return number;
}

//  Whether NAME is a table the copy may share with the store: one made
//  before the manifest of FIRST_NEW, the number the job's LevelDB took
//  when it opened.  The copy's LevelDB, opening, writes new tables under
//  numbers its manifest has not given yet, all above FIRST_NEW, and
//  truncates a file of that name: had the copy linked a table the job
//  wrote since (a number past what the copied manifest says), the
//  truncation would empty the job's own table.  Those are copied.
static int s_shareable (const char *name, unsigned long long first_new)
{
    size_t len = strlen (name);
    char *end;
    unsigned long long number = strtoull (name, &end, 10);
    return len > 4 && !strcmp (name + len - 4, ".ldb") && end == name + len - 4 && number < first_new;
}

//  Copy the file SRC to DST; tables, which LevelDB never changes, are
//  linked instead when SHARE says they can be.
static int s_copy_file (const char *src, const char *dst, int share)
{
    if (share && link (src, dst) == 0)
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
    //  Read before anything is copied: see s_shareable
    unsigned long long first_new = s_manifest (dir);
    DIR *d = mkdtemp (copy) ? opendir (dir) : NULL;
    int rc = d ? 0 : -1;
    struct dirent *e;
    char src[4200], dst[4200];
    while (!rc && (e = readdir (d))) {
        const char *n = e->d_name;
        if (!strcmp (n, ".") || !strcmp (n, "..") || !strcmp (n, "LOCK") || !strncmp (n, "LOG", 3)
            || !strcmp (n, WEIR__STORE_PID_FILE) || !strcmp (n, WEIR__STORE_LATEST_FILE))
            continue;
        snprintf (src, sizeof src, "%s/%s", dir, n);
        snprintf (dst, sizeof dst, "%s/%s", copy, n);
        rc = s_copy_file (src, dst, s_shareable (n, first_new));
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
