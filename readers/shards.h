/*  readers/shards.h - the pieces a reader's input is cut into.

    A reader plans its shards when its stage opens (the files of a glob,
    byte ranges of a large file cut at record boundaries, ranges of
    integers); reader threads then take them one at a time.  Shards are
    cut the same way whatever the thread count, because offsets are kept
    per shard: a job must be able to resume with a different number of
    threads.  The checkpoint keeps each shard's offset, and a followed
    file's identity (checkpoint/keys.h).

    The shards own their paths and the windows kept in them; a reader
    adds shards, the stage releases them.  */
#ifndef WEIR_SHARDS_H_INCLUDED
#define WEIR_SHARDS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/codec.h"
#include "readers/identity.h"
#include "readers/lineno.h"

struct weir__window;

typedef struct weir__shard {
    char *path;      //  NULL for inputs that are not files
    uint64_t start;  //  byte offset, or first integer
    uint64_t end;    //  one past the last byte or integer
    //  A pipe or terminal cannot be read again from an offset: its window,
    //  read-ahead included, is kept here when a read pauses, and the next
    //  read of the shard goes on from it (readers/window.h)
    struct weir__window *kept;
    //  Followed files (follow=1): the file the offset is in, whether it
    //  must be looked for (a resume: it may have been rotated meanwhile),
    //  and whether it is gone: deleted once read to its end, or read to
    //  its end while its name came to hold a file read under another name
    //  (a rotation renaming every copy along); a new file under the name
    //  is read from its start
    weir__identity id;
    int check;
    int gone;
    //  A pipe or terminal opened by this process: what was read from it
    //  cannot be read again.  Until then, an offset in it is a resume's,
    //  and the same input fed again is read past it (readers/window.c)
    int streamed;
    //  A gzip or zstd file (lib/codec.h): one shard, read decompressed, its
    //  offsets counting the bytes it stands for
    weir__codec codec;
    //  Lines counted for messages about bad records: skipped records are
    //  found in file order, so each count goes on from the last
    weir__lineno lines;
    //  A stream that comes into being with nothing of it read yet (a
    //  Kafka partition added to its topic): a resume whose checkpoint has
    //  no such shard reads it from its start, where any other shard the
    //  checkpoint does not know is refused
    int appears;
} weir__shard;

typedef struct weir__shards {
    weir__shard *items;
    size_t count;
    size_t cap;  //  items allocated: they grow by half again, not one by one
    int follow;  //  follow=1: the files grow and come and go
    //  follow=1: files a shard read to their end and left for the new file
    //  under its name.  A rotation gives them other names, which the glob
    //  may match (app.log*): they are never read again as new files.  Kept
    //  while a name of the glob holds them, and checkpointed
    weir__identity *read;
    size_t nread, read_cap;
} weir__shards;

void weir__shards_init (weir__shards *self);

/*  Free every shard, its path and the window kept in it.  */
void weir__shards_release (weir__shards *self);

/*  Append the shard [START, END) of PATH (copied; NULL for an input that
    is not a file).  0 or WEIR_ENOMEM.  Pointers to shards are valid until
    the next add.  */
int weir__shards_add (weir__shards *self, const char *path, uint64_t start, uint64_t end);

/*  Drop the shards whose FIXED[i] is 0 and whose file is one that a
    shard with FIXED[k] set reads, or one read and left: a copy a rotation
    made, found by the glob.  0 or WEIR_ENOMEM.  */
int weir__shards_drop_copies (weir__shards *self, const unsigned char *fixed);

#endif
