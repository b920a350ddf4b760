/*  readers/follow.h - following growing files (follow=1), as tail -F does.

    A followed reader watches the folder of its glob with inotify: a file
    that grows, a new file, a rename or a deletion there wakes it.  Each
    file of the glob is one shard, read from its offset to its current end,
    then again when it grows.  The shard remembers which file its offset is
    in (weir__identity: device, inode and a fingerprint of the first bytes,
    which catches an inode reused by another file), so that a rotation
    (the file renamed, a new one created under its name) is read to the end
    of the old file, then from the start of the new, and a resume finds a
    file rotated while weir was not running.  A file is read by one shard
    whatever its names: a rotated copy the glob matches (app.log*) is not
    a new file (readers/known.h, weir__known_has).  The readers of files use it
    through their skeleton (readers/filereader.h), which reads follow=
    and rotate-wait=.  */
#ifndef WEIR_FOLLOW_H_INCLUDED
#define WEIR_FOLLOW_H_INCLUDED

#include <sys/stat.h>

#include "readers/reader.h"

typedef struct weir__follow weir__follow;

/*  Watch the folder of PATTERN (wildcards only in its last part; not
    standard input, which is no file), for ELEMENT's messages.  */
int weir__follow_new (const char *element, const char *pattern, weir__follow **out, weir__err *err);
void weir__follow_destroy (weir__follow **self_p);

/*  Add to SHARDS the files matching the pattern now that are not shards
    yet, each from its start.  */
int weir__follow_discover (weir__follow *self, weir__shards *shards, weir__err *err);

/*  Wait until something in the folder changed (or a second passed, to
    catch a rotated file written in another folder), asking SINK's idle in
    between: 0, or what idle said.  */
int weir__follow_wait (weir__follow *self, weir__sink *sink);

#endif
