/*  pipeline/deadletter.h - where a stage with on-error=skip puts the
    records it skips.

    A dead letter is a msgpack stream file, one map per bad record:
      element  the stage's element, as written
      reason   why the record was refused
      epoch    the epoch it was met in
      file, offset
               for a reader: the input file and the byte the record starts at
      size     for a reader: the record's length in bytes, as far as it was
               read (the rest of a shard, for a msgpack stream that cannot be
               resynchronised)
      record   for a reader: its bytes (bin; only the first 64 KiB of a
               longer one); for a processor: the record itself
    It is an output like any writer's: committed at each epoch with the
    checkpoint and cut back to that on resume, so each bad record is in it
    exactly once.  Bad records are rare: one lock serialises the threads.  */
#ifndef WEIR_DEADLETTER_H_INCLUDED
#define WEIR_DEADLETTER_H_INCLUDED

#include <msgpack.h>
#include <stdint.h>

#include "lib/error.h"
#include "readers/reader.h"

typedef struct weir__deadletter weir__deadletter;

/*  Open PATH for ELEMENT's dead letters; RESUME as for a writer's open
    (NULL: a fresh, empty file; else the committed length to go back to).  */
int weir__deadletter_open (const char *element, const char *path, const char *resume, weir__deadletter **out,
                           weir__err *err);

/*  A bad record of a reader, met in EPOCH.  */
int weir__deadletter_input (weir__deadletter *self, uint64_t epoch, const weir__bad *bad, weir__err *err);

/*  A record a processor rejected in EPOCH, for REASON.  */
int weir__deadletter_record (weir__deadletter *self, uint64_t epoch, const msgpack_object *record,
                             const char *reason, weir__err *err);

/*  At quiescence: make what was written durable; its committed state (a
    length) as text into OUT (WEIR__WRITER_STATE_MAX bytes).  */
int weir__deadletter_commit (weir__deadletter *self, char *out, weir__err *err);

/*  Write what is pending, close, free; the first failure is returned.  */
int weir__deadletter_close (weir__deadletter **self_p, weir__err *err);

#endif
