/*  readers/follow.c - following growing files: the folder of a glob
    watched, its new files found.  */
#include "config.h"
#include "readers/follow.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "readers/known.h"
#include "readers/source.h"

//  How long a wait sleeps between looks at the sink, and how long at most
//  before every file is looked at again whatever inotify said
#define S_SLICE_MS 20
#define S_RESCAN_MS 1000

struct weir__follow {
    char *pattern;
    int inotify;
};

int weir__follow_new (const char *element, const char *pattern, weir__follow **out, weir__err *err)
{
    *out = NULL;
    if (weir__source_is_stdin (pattern))
        return weir__err_set (err, WEIR_EPROPERTY,
                              "%s: follow=1 follows files, and standard input is no file: it is read to its "
                              "end (or until a stop) without follow",
                              element);
    char *copy = strdup (pattern);
    weir__follow *self = calloc (1, sizeof *self);
    if (!copy || !self || !(self->pattern = strdup (pattern))) {
        free (copy);
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    const char *dir = dirname (copy);
    int rc = 0;
    if (strpbrk (dir, "*?["))
        rc = weir__err_set (err, WEIR_EPROPERTY,
                            "%s: follow=1 watches one folder: wildcards may only be in the file name, not in "
                            "'%s'",
                            element, dir);
    else if ((self->inotify = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC)) < 0)
        rc = weir__err_set (err, WEIR_ESYSTEM, "%s: cannot watch '%s': %s", element, dir, strerror (errno));
    else if (inotify_add_watch (self->inotify, dir,
                                IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB
                                    | IN_CLOSE_WRITE)
             < 0)
        rc = weir__err_set (err, WEIR_EIO, "%s: cannot watch the folder '%s': %s", element, dir,
                            strerror (errno));
    free (copy);
    if (rc) {
        weir__follow_destroy (&self);
        return rc;
    }
    *out = self;
    return 0;
}

void weir__follow_destroy (weir__follow **self_p)
{
    weir__follow *self = *self_p;
    if (!self)
        return;
    if (self->inotify > 0)
        close (self->inotify);
    free (self->pattern);
    free (self);
    *self_p = NULL;
}

//  Forget the files read and left that no name of the glob G holds now
//  (deleted, or renamed out of it): their inodes may go to new files.
static void s_forget (weir__shards *shards, const glob_t *g)
{
    if (!shards->nread)
        return;
    struct stat *sts = calloc (g->gl_pathc + 1, sizeof *sts);
    if (!sts)
        return;  //  kept for now: forgotten at a later look
    for (size_t i = 0; i < g->gl_pathc; i++)
        if (stat (g->gl_pathv[i], &sts[i]))
            sts[i].st_nlink = 0;
    size_t kept = 0;
    for (size_t k = 0; k < shards->nread; k++) {
        const weir__identity *id = &shards->read[k];
        int held = 0;
        for (size_t i = 0; i < g->gl_pathc && !held; i++) {
            if (!sts[i].st_nlink || (uint64_t) sts[i].st_dev != id->dev || (uint64_t) sts[i].st_ino != id->ino)
                continue;
            struct stat st;
            int fd = open (g->gl_pathv[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
            held = fd >= 0 && fstat (fd, &st) == 0 && weir__identity_is (fd, &st, id);
            if (fd >= 0)
                close (fd);
        }
        if (held)
            shards->read[kept++] = *id;
    }
    shards->nread = kept;
    free (sts);
}

int weir__follow_discover (weir__follow *self, weir__shards *shards, weir__err *err)
{
    glob_t g;
    int rc = glob (self->pattern, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        shards->nread = 0;
        return 0;
    }
    if (rc)
        return 0;  //  the folder is watched: a passing failure is tried again
    s_forget (shards, &g);
    for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
        int known = 0;
        for (size_t k = 0; k < shards->count && !known; k++)
            known = shards->items[k].path && strcmp (shards->items[k].path, g.gl_pathv[i]) == 0;
        if (known)
            continue;
        struct stat st;
        if (stat (g.gl_pathv[i], &st) || S_ISDIR (st.st_mode))
            continue;
        int fd = S_ISREG (st.st_mode) ? open (g.gl_pathv[i], O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0 && S_ISREG (st.st_mode) && errno == ENOENT)
            continue;  //  renamed since the glob: found again at the next look
        if (fd >= 0 && (fstat (fd, &st) || weir__known_has (shards, fd, &st, NULL))) {
            //  A file already read, or being read, under another name: a
            //  rotated copy the glob matches (app.log*), never read again
            close (fd);
            continue;
        }
        if (weir__shards_add (shards, g.gl_pathv[i], 0, UINT64_MAX)) {
            if (fd >= 0)
                close (fd);
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            break;
        }
        //  The file is known from here on, not from its first read: a
        //  checkpoint taken before that read, or a rotation before it, must
        //  still lead to this file wherever its name then is
        if (fd >= 0) {
            weir__shard *shard = &shards->items[shards->count - 1];
            weir__identity_of (fd, &st, &shard->id);
            shard->check = 1;
            close (fd);
        }
    }
    globfree (&g);
    return rc;
}

int weir__follow_wait (weir__follow *self, weir__sink *sink)
{
    for (int waited = 0; waited < S_RESCAN_MS; waited += S_SLICE_MS) {
        struct pollfd ready = {self->inotify, POLLIN, 0};
        int n = poll (&ready, 1, S_SLICE_MS);
        if (n > 0) {
            //  Drain the events: they only say that something changed
            char events[4096] __attribute__ ((aligned (__alignof__(struct inotify_event))));
            while (read (self->inotify, events, sizeof events) > 0)
                ;
            //  A file written to more often than a slice still has its
            //  partial batch sent after linger=, and its epoch ended on
            //  time: the sink hears of every wait, not only of the quiet ones
            return sink->idle ? sink->idle (sink) : 0;
        }
        int said = sink->idle ? sink->idle (sink) : 0;
        if (said)
            return said;
    }
    return 0;
}
