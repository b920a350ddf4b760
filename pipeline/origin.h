/*  pipeline/origin.h - where a reader's records were read, carried with
    its batches, so that a failure further on names the file and the line
    of the record it met.

    A reader thread marks the batch it fills with the shard in hand and
    the offset its first record starts at; each record added after that
    is the next one of the shard, until the batch goes, the thread goes on
    to another shard, or a bad record is skipped (its bytes are not in the
    batch, so the count no longer says where what follows is).  The
    batch's header carries the mark (lib/batch.h).  A processor fed by
    the reader that fails in the j-th record of such a batch names it: by
    file and byte for a reader whose records are the file's bytes
    (msgpack), by file, line and byte for a reader of lines, found by
    reading the file again from the mark.  That reading is done only for
    a message, never on the way.

    Not marked: the batches of a followed input (its shards grow while
    processors run) and everything a processor emits; a failure there
    says what it says without a place.  */
#ifndef WEIR_ORIGIN_H_INCLUDED
#define WEIR_ORIGIN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/batch.h"
#include "pipeline/stage.h"

/*  Reader thread R is about to add records to its batch, or has just
    sent it: a batch that holds none is marked as starting at the offset
    of the shard in hand; one holding records read from another shard,
    or from none, is marked no further.  */
void weir__origin_mark (weir__worker *r);

/*  R's reader skipped a bad record: the records of R's batch after it
    are not where its mark would count them.  */
void weir__origin_cut (weir__worker *r);

/*  The place of the record W is processing, as the end of a sentence
    ("; the record at line 12 of 'train.svm' (byte 4410)") into BUF
    of SIZE bytes: empty when its batch was not marked that far.  Reads
    the file again for a reader of lines: call it only for a message.  */
#define WEIR__ORIGIN_WHERE 512
void weir__origin_where (const weir__worker *w, char *buf, size_t size);

#endif
