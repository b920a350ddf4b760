/*  readers/identity.h - which file a followed shard's offset is in.

    A path may name another file after a rotation, and an inode may be
    reused by another file, so a file is known by its device, its inode
    and a hash of its first bytes (weir__identity, readers/reader.h).  The
    windows of readers/files.c check it as they read; a resume looks for
    a file rotated while weir was not running.  */
#ifndef WEIR_IDENTITY_H_INCLUDED
#define WEIR_IDENTITY_H_INCLUDED

#include <sys/stat.h>

#include "readers/reader.h"

/*  The identity of the file open at FD, whose status is ST.  */
void weir__identity_of (int fd, const struct stat *st, weir__identity *id);

/*  Is the file open at FD, whose status is ST, the one of ID?  */
int weir__identity_is (int fd, const struct stat *st, const weir__identity *id);

/*  A file of the folder of PATH other than PATH whose identity is ID,
    opened read-only, or -1: where a rotation while weir was not running
    put the file a checkpoint was in.  */
int weir__identity_find (const char *path, const weir__identity *id);

#endif
