/*  readers/known.h - the files a followed glob's shards already know.

    A file is read by one shard at most, whatever names it has: a rotation
    renames it (app.log becomes app.log.1) and a glob such as app.log* may
    match it under its new name.  These ask whether a file is one a shard
    is reading or has read to its end and left (weir__shards.read), and
    remember one read and left.  They sit below readers/window.c and
    readers/follow.c, which ask, and beside readers/shards.c, which owns
    the arrays and frees them.  */
#ifndef WEIR_KNOWN_H_INCLUDED
#define WEIR_KNOWN_H_INCLUDED

#include <sys/stat.h>

#include "readers/identity.h"
#include "readers/shards.h"

/*  Remember ID as a file read to its end and left.  0 or WEIR_ENOMEM.  */
int weir__known_add (weir__shards *shards, const weir__identity *id);

/*  Is the file open at FD (status ST) one SHARDS know under another name:
    the file a shard other than EXCEPT (or NULL) is reading, or one read to
    its end and left?  A shard of a deleted file (gone) knows none: its
    inode may hold a new file.  */
int weir__known_has (const weir__shards *shards, int fd, const struct stat *st, const weir__shard *except);

#endif
