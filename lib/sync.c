/*  lib/sync.c - fsync of directories.  */
#include "config.h"
#include "lib/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int weir__sync_dir (const char *dir)
{
    int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    //  Some file systems cannot sync a directory and say so: nothing to do
    int rc = fsync (fd) && errno != EINVAL && errno != ENOTSUP ? -1 : 0;
    int e = errno;
    close (fd);
    errno = e;
    return rc;
}

int weir__sync_parent (const char *path)
{
    char *copy = strdup (path);
    if (!copy) {
        errno = ENOMEM;
        return -1;
    }
    int rc = weir__sync_dir (dirname (copy));
    int e = errno;
    free (copy);
    errno = e;
    return rc;
}
