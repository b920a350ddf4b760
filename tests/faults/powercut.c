/*  tests/faults/powercut.c - puts the files under a folder back as a power
    cut would leave them, from the journal of tests/faults/faultfs.c.

        powercut baseline ROOT JOURNAL GRAVES
            Start a new journal: everything under ROOT is durable as it is
            (a machine that came back up).  GRAVES is emptied.
        powercut restore ROOT JOURNAL GRAVES
            After the process was killed: every folder under ROOT gets back
            the entries it had at its last sync (names created since go,
            names removed or renamed since come back from GRAVES or from
            where they are now), and every file is cut to its length at its
            last sync (a file never synced since the baseline keeps no
            byte).  Prints what it did; then starts a new baseline.  Exit 0;
            1 when the journal shows a call the model does not cover or a
            name cannot be put back; 2 on a usage or system error.

    The model is strict and simple: bytes written in place below a synced
    length are not rolled back (no file of weir or LevelDB overwrites
    synced bytes; a truncation to a checkpoint's length keeps what the
    checkpoint counts on), and a file shorter than its synced length stays
    as it is.  */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    unsigned long long ino;
    long long size;
} s_size;

typedef struct {
    char *path;
    char *entries;  //  " name:ino name:ino ..."
} s_dir;

typedef struct {
    unsigned long long ino;
    char *path;
} s_grave;

static s_size *s_sizes;
static size_t s_nsizes;
static s_dir *s_dirs;
static size_t s_ndirs;
static s_grave *s_graves;
static size_t s_ngraves;
static unsigned s_unmodelled, s_unrestorable, s_cut, s_removed, s_restored;
static const char *s_graves_dir;

#define PUSH(array, n, item)                                                                                 \
    do {                                                                                                     \
        array = realloc (array, (n + 1) * sizeof *array);                                                    \
        array[n++] = item;                                                                                   \
    } while (0)

static long long s_durable_size (unsigned long long ino)
{
    //  The last record wins
    for (size_t i = s_nsizes; i-- > 0;)
        if (s_sizes[i].ino == ino)
            return s_sizes[i].size;
    return 0;
}

static const char *s_durable_entries (const char *path)
{
    for (size_t i = s_ndirs; i-- > 0;)
        if (!strcmp (s_dirs[i].path, path))
            return s_dirs[i].entries;
    return NULL;
}

static int s_read_journal (const char *journal)
{
    FILE *f = fopen (journal, "r");
    if (!f) {
        perror (journal);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline (&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (line[0] == 'F') {
            s_size s;
            if (sscanf (line, "F %llu %lld", &s.ino, &s.size) == 2)
                PUSH (s_sizes, s_nsizes, s);
        }
        else if (line[0] == 'D') {
            char *sp = strchr (line + 2, ' ');
            s_dir d = {strndup (line + 2, sp ? (size_t) (sp - line - 2) : strlen (line + 2)),
                       strdup (sp ? sp : "")};
            PUSH (s_dirs, s_ndirs, d);
        }
        else if (line[0] == 'G') {
            s_grave g;
            char path[PATH_MAX];
            if (sscanf (line, "G %llu %4095s", &g.ino, path) == 2) {
                g.path = strdup (path);
                PUSH (s_graves, s_ngraves, g);
            }
        }
        else if (line[0] == 'W') {
            printf ("powercut: the run used %s, which the model does not cover\n", line + 2);
            s_unmodelled++;
        }
    }
    free (line);
    fclose (f);
    return 0;
}

//  Where inode INO can be linked from: its grave, or its place now.
static const char *s_find_ino (const char *root, unsigned long long ino, char *buf, size_t size);

static int s_find_in (const char *dir, unsigned long long ino, char *buf, size_t size)
{
    DIR *d = opendir (dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        char path[PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat (path, &st))
            continue;
        if (S_ISREG (st.st_mode) && st.st_ino == ino) {
            snprintf (buf, size, "%s", path);
            found = 1;
        }
        else if (S_ISDIR (st.st_mode))
            found = s_find_in (path, ino, buf, size);
    }
    closedir (d);
    return found;
}

static const char *s_find_ino (const char *root, unsigned long long ino, char *buf, size_t size)
{
    for (size_t i = s_ngraves; i-- > 0;)
        if (s_graves[i].ino == ino && access (s_graves[i].path, F_OK) == 0)
            return s_graves[i].path;
    return s_find_in (root, ino, buf, size) ? buf : NULL;
}

static void s_remove_tree (const char *path)
{
    struct stat st;
    if (lstat (path, &st))
        return;
    if (S_ISDIR (st.st_mode)) {
        DIR *d = opendir (path);
        struct dirent *e;
        while (d && (e = readdir (d)))
            if (strcmp (e->d_name, ".") && strcmp (e->d_name, "..")) {
                char sub[PATH_MAX];
                snprintf (sub, sizeof sub, "%s/%s", path, e->d_name);
                s_remove_tree (sub);
            }
        if (d)
            closedir (d);
        rmdir (path);
    }
    else
        unlink (path);
}

//  Does the durable ENTRIES list hold NAME, and as which inode?
static int s_durable_has (const char *entries, const char *name, unsigned long long *ino)
{
    size_t len = strlen (name);
    for (const char *p = entries; p && (p = strchr (p, ' ')); p++) {
        const char *colon = strrchr (p + 1, ':');
        const char *next = strchr (p + 1, ' ');
        //  The colon of this entry: the last one before the next blank
        const char *c = p + 1;
        const char *last = NULL;
        while (*c && c != next) {
            if (*c == ':')
                last = c;
            c++;
        }
        colon = last;
        if (colon && (size_t) (colon - p - 1) == len && !strncmp (p + 1, name, len)) {
            *ino = strtoull (colon + 1, NULL, 10);
            return 1;
        }
    }
    return 0;
}

//  Secure, in GRAVES, every inode a durable entry of DIR (and below)
//  needs that is not under its durable name now: removals come next.
static void s_secure (const char *root, const char *dir)
{
    const char *entries = s_durable_entries (dir);
    if (!entries)
        return;
    for (const char *p = entries; (p = strchr (p, ' ')); p++) {
        const char *next = strchr (p + 1, ' ');
        size_t len = next ? (size_t) (next - p - 1) : strlen (p + 1);
        char item[PATH_MAX];
        snprintf (item, sizeof item, "%.*s", (int) len, p + 1);
        char *colon = strrchr (item, ':');
        if (!colon)
            continue;
        *colon = '\0';
        unsigned long long ino = strtoull (colon + 1, NULL, 10);
        char path[2 * PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, item);
        struct stat st;
        if (lstat (path, &st) == 0 && st.st_ino == ino) {
            if (S_ISDIR (st.st_mode))
                s_secure (root, path);
            continue;
        }
        char buf[PATH_MAX], grave[PATH_MAX];
        const char *from = s_find_ino (root, ino, buf, sizeof buf);
        snprintf (grave, sizeof grave, "%s/%llu", s_graves_dir, ino);
        if (from && strcmp (from, grave) && link (from, grave) == 0) {
            s_grave g = {ino, strdup (grave)};
            PUSH (s_graves, s_ngraves, g);
        }
    }
}

static void s_fix_dir (const char *root, const char *dir)
{
    const char *entries = s_durable_entries (dir);
    //  Names now that are not durable go
    DIR *d = opendir (dir);
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        char path[PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        unsigned long long ino;
        if (lstat (path, &st))
            continue;
        if (!entries || !s_durable_has (entries, e->d_name, &ino) || ino != st.st_ino) {
            s_remove_tree (path);
            printf ("powercut: removed %s (its name was not durable)\n", path);
            s_removed++;
        }
    }
    if (d)
        closedir (d);
    if (!entries)
        return;
    //  Durable names that are not there come back; folders are fixed below
    for (const char *p = entries; (p = strchr (p, ' ')); p++) {
        const char *next = strchr (p + 1, ' ');
        size_t len = next ? (size_t) (next - p - 1) : strlen (p + 1);
        char item[PATH_MAX];
        snprintf (item, sizeof item, "%.*s", (int) len, p + 1);
        char *colon = strrchr (item, ':');
        if (!colon)
            continue;
        *colon = '\0';
        unsigned long long ino = strtoull (colon + 1, NULL, 10);
        char path[2 * PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, item);
        struct stat st;
        if (lstat (path, &st) == 0) {
            if (S_ISDIR (st.st_mode))
                s_fix_dir (root, path);
            continue;
        }
        char grave[PATH_MAX];
        snprintf (grave, sizeof grave, "%s/%llu", s_graves_dir, ino);
        if (link (grave, path)) {
            printf ("powercut: cannot put back %s (inode %llu): %s\n", path, ino, strerror (errno));
            s_unrestorable++;
            continue;
        }
        printf ("powercut: put back %s (removed or renamed after its folder's last sync)\n", path);
        s_restored++;
    }
}

//  Every file under DIR cut to its durable length.
static void s_cut_files (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        char path[PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat (path, &st))
            continue;
        if (S_ISDIR (st.st_mode))
            s_cut_files (path);
        else if (S_ISREG (st.st_mode)) {
            long long keep = s_durable_size (st.st_ino);
            if (st.st_size > keep) {
                if (truncate (path, keep)) {
                    printf ("powercut: cannot cut %s: %s\n", path, strerror (errno));
                    s_unrestorable++;
                }
                else {
                    printf ("powercut: cut %s from %lld to %lld bytes\n", path, (long long) st.st_size, keep);
                    s_cut++;
                }
            }
        }
    }
    if (d)
        closedir (d);
}

static void s_baseline_dir (FILE *out, const char *dir)
{
    DIR *d = opendir (dir);
    if (!d)
        return;
    fprintf (out, "D %s", dir);
    struct dirent *e;
    char **subdirs = NULL;
    size_t nsub = 0;
    while ((e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        char path[PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat (path, &st))
            continue;
        fprintf (out, " %s:%llu", e->d_name, (unsigned long long) st.st_ino);
        if (S_ISDIR (st.st_mode)) {
            char *copy = strdup (path);
            PUSH (subdirs, nsub, copy);
        }
    }
    closedir (d);
    fprintf (out, "\n");
    //  Sizes after the folder's line, so that the lines stay short
    d = opendir (dir);
    while (d && (e = readdir (d))) {
        char path[PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (strcmp (e->d_name, ".") && strcmp (e->d_name, "..") && !lstat (path, &st) && S_ISREG (st.st_mode))
            fprintf (out, "F %llu %lld\n", (unsigned long long) st.st_ino, (long long) st.st_size);
    }
    if (d)
        closedir (d);
    for (size_t i = 0; i < nsub; i++) {
        s_baseline_dir (out, subdirs[i]);
        free (subdirs[i]);
    }
    free (subdirs);
}

static int s_baseline (const char *root, const char *journal, const char *graves)
{
    s_remove_tree (graves);
    if (mkdir (graves, 0777) && errno != EEXIST) {
        perror (graves);
        return 2;
    }
    FILE *out = fopen (journal, "w");
    if (!out) {
        perror (journal);
        return 2;
    }
    s_baseline_dir (out, root);
    return fclose (out) ? 2 : 0;
}

int main (int argc, char **argv)
{
    if (argc != 5 || (strcmp (argv[1], "baseline") && strcmp (argv[1], "restore"))) {
        fprintf (stderr, "usage: powercut baseline|restore ROOT JOURNAL GRAVES\n");
        return 2;
    }
    char root[PATH_MAX], graves[PATH_MAX];
    if (!realpath (argv[2], root) || (mkdir (argv[4], 0777) && errno != EEXIST)
        || !realpath (argv[4], graves)) {
        perror (argv[2]);
        return 2;
    }
    s_graves_dir = graves;
    if (!strcmp (argv[1], "baseline"))
        return s_baseline (root, argv[3], graves);
    if (s_read_journal (argv[3]))
        return 2;
    if (!s_durable_entries (root)) {
        fprintf (stderr, "powercut: the journal has no baseline of '%s'\n", root);
        return 2;
    }
    s_secure (root, root);
    s_fix_dir (root, root);
    s_cut_files (root);
    printf ("powercut: %u files cut, %u names removed, %u names put back, %u unrestorable, %u unmodelled\n",
            s_cut, s_removed, s_restored, s_unrestorable, s_unmodelled);
    int rc = s_unmodelled || s_unrestorable ? 1 : 0;
    int b = s_baseline (root, argv[3], graves);
    return b ? b : rc;
}
