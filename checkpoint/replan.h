/*  checkpoint/replan.h - a batch reader's shards on resume: what carries
    over from the checkpoint, what is new.

    Daily ingestion runs one job again and again over a glob whose files
    grow and come: each resume must read exactly what was added.  The
    shards planned now (readers/files.h) are matched with the
    checkpoint's, file by file:
      - a file the checkpoint knew keeps its shards and their offsets,
        finished neighbours merged into one (a file appended to daily would
        otherwise gain a shard a day);
      - what was appended to it past the end it was planned to becomes
        new shards, cut where the plan of now cuts it;
      - a file new to the glob keeps the shards planned now;
      - a file read to its end and gone now is dropped.
    A file is the checkpoint's when it has the same device, inode and first
    bytes, is no shorter, and holds the same bytes before its old end
    (readers/identity.h).  Anything else would lose or repeat records and
    is refused, saying what to do: a file that shrank or was written
    again, another file under the name, a file gone before it was read to
    its end, and inputs that are no files (ranges, pipes) planned otherwise
    than checkpointed.  A shard that appears (a Kafka partition added to
    its topic since) is read from its start.  */
#ifndef WEIR_REPLAN_H_INCLUDED
#define WEIR_REPLAN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "checkpoint/ckpt.h"
#include "lib/error.h"
#include "readers/shards.h"

typedef struct weir__replan {
    //  The input, its reader's name, and whether it is read several times
    //  (passes=): then every pass must read the same, and any change is
    //  refused
    const char *element;
    unsigned passes;
    //  The prefix of the reader's keys in the checkpoint (checkpoint/keys.h)
    const char *prefix;
    //  Says what goes on but deserves a word
    void (*warn) (void *arg, const char *message);
    void *arg;
    //  Out: where reading goes on in each shard (malloc'd, one per shard
    //  of the shards afterwards), the files that grew, the files that
    //  are new (with something to read), and the shards that appeared
    //  (readers/shards.h)
    uint64_t *offsets;
    size_t grown, added, appeared;
} weir__replan;

/*  Make SHARDS, as planned now, go on from checkpoint CK.  0, or
    WEIR_ECORRUPT (WEIR_ENOMEM, WEIR_EIO) with ERR filled.  */
int weir__replan_files (const weir__ckpt *ck, weir__replan *how, weir__shards *shards, weir__err *err);

#endif
