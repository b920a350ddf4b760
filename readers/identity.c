/*  readers/identity.c - which file a followed shard's offset is in.  */
#include "config.h"
#include "readers/identity.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"

void weir__identity_of (int fd, const struct stat *st, weir__identity *id)
{
    char head[WEIR__FINGERPRINT];
    ssize_t n = pread (fd, head, sizeof head, 0);
    id->known = 1;
    id->dev = (uint64_t) st->st_dev;
    id->ino = (uint64_t) st->st_ino;
    id->fp_len = n > 0 ? (uint32_t) n : 0;
    id->fp_hash = weir__hash64 (0, head, id->fp_len);
}

int weir__identity_is (int fd, const struct stat *st, const weir__identity *id)
{
    if (!id->known || (uint64_t) st->st_dev != id->dev || (uint64_t) st->st_ino != id->ino)
        return 0;
    char head[WEIR__FINGERPRINT];
    ssize_t n = id->fp_len ? pread (fd, head, id->fp_len, 0) : 0;
    return n == (ssize_t) id->fp_len && weir__hash64 (0, head, id->fp_len) == id->fp_hash;
}

//  The hash of the bytes of FD before END, up to WEIR__FINGERPRINT of
//  them; -1 when they cannot all be read.
static int s_end_hash (int fd, uint64_t end, uint64_t *hash)
{
    char tail[WEIR__FINGERPRINT];
    size_t len = end < sizeof tail ? (size_t) end : sizeof tail;
    ssize_t n = len ? pread (fd, tail, len, (off_t) (end - len)) : 0;
    if (n != (ssize_t) len)
        return -1;
    *hash = weir__hash64 (0, tail, len);
    return 0;
}

void weir__identity_end (int fd, uint64_t end, weir__identity *id)
{
    id->has_end = s_end_hash (fd, end, &id->end_hash) == 0;
    id->end = end;
}

int weir__identity_ends_as (int fd, const weir__identity *id)
{
    uint64_t hash;
    return !id->has_end || (s_end_hash (fd, id->end, &hash) == 0 && hash == id->end_hash);
}

int weir__identity_find (const char *path, const weir__identity *id)
{
    char *copy = strdup (path);
    if (!copy)
        return -1;
    const char *dir = dirname (copy);
    DIR *d = opendir (dir);
    int found = -1;
    struct dirent *e;
    while (d && found < 0 && (e = readdir (d))) {
        if (e->d_ino != (ino_t) id->ino)
            continue;
        char *other = NULL;
        if (asprintf (&other, "%s/%s", dir, e->d_name) < 0)
            break;
        int fd = strcmp (other, path) ? open (other, O_RDONLY | O_CLOEXEC) : -1;
        struct stat st;
        if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && weir__identity_is (fd, &st, id))
            found = fd;
        else if (fd >= 0)
            close (fd);
        free (other);
    }
    if (d)
        closedir (d);
    free (copy);
    return found;
}
