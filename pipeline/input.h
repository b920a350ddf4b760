/*  pipeline/input.h - a reader stage's input: its reader, its shards and
    where reading goes on in each.

    The reader plans the shards when the input opens; the recovery then
    sets each shard's offset, from its start or from the checkpoint.
    Reader threads take shards one at a time (in a job of several ranks,
    only those of their rank's share) and read each from its offset;
    an offset is written only by the thread holding its shard, and read by
    the snapshot while the pipe is quiescent.  A followed input (follow=1)
    grows new shards between epochs, when nothing holds a shard.  The
    input also counts how far it went, for the progress line.  */
#ifndef WEIR_INPUT_H_INCLUDED
#define WEIR_INPUT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <weir/weir.h>

#include "lib/error.h"
#include "lib/props.h"
#include "readers/reader.h"
#include "readers/shards.h"

typedef struct weir__input weir__input;

/*  An input read by CLS (borrowed: a builtin's).  NULL when out of
    memory.  */
weir__input *weir__input_new (const weir__reader_class *cls);

/*  Free it, closing the reader if it is still open.  */
void weir__input_destroy (weir__input **self_p);

/*  Read passes= of PROPS (ELEMENT's): the input is read that many times
    over, each pass an epoch of its own at least; then open the reader
    with PROPS: it plans the shards.  An input that follows its files
    (follow=1) never ends, so it refuses passes, more than one of THREADS,
    and a job of several ranks (weir__input_share), pointing at the
    property or at WHERE, the element in the description.  */
int weir__input_open (weir__input *self, const char *element, long where, weir__props *props,
                      unsigned threads, weir__err *err);

/*  The passes over the input (1 until it opened).  */
unsigned weir__input_passes (const weir__input *self);

/*  How the reader's records stand in its files.  */
weir__records_kind weir__input_records (const weir__input *self);

/*  The reader follows its files (follow=1).  */
int weir__input_follows (const weir__input *self);

/*  Read only shard i with i mod RANKS == RANK (a job of several ranks).  */
void weir__input_share (weir__input *self, unsigned rank, unsigned ranks);

/*  The path of the first of its inputs that is no file and cannot be read
    again: a pipe, a terminal or a socket (standard input among them), or
    NULL.  */
const char *weir__input_stream (const weir__input *self);

/*  The input may never end: it follows its files, or reads a pipe, a
    terminal or a socket (standard input among them).  Its job's output
    is watched as it grows.  */
int weir__input_live (const weir__input *self);

/*  The shards, as planned (and, following, as found since).  */
weir__shards *weir__input_shards (weir__input *self);
const weir__shards *weir__input_shards_const (const weir__input *self);

/*  Once the shards are planned: an offset per shard, at its start.  Then
    the offsets themselves, to set from a checkpoint or to save.  */
int weir__input_start (weir__input *self, weir__err *err);
uint64_t *weir__input_offsets (weir__input *self);

/*  With the offsets set, in pass PASS of the passes: how large the input
    is and how far it went, for the statistics.  */
void weir__input_plan (weir__input *self, unsigned pass);

/*  Once planned: the bytes one pass reads, when the input is files read
    in several passes without cache= and a pass is MIN bytes or more,
    which cache= would spare the passes after the first; else 0.  */
uint64_t weir__input_uncached_pass (const weir__input *self, uint64_t min);

/*  A new pass: every offset back to its shard's start.  Quiescent.  */
void weir__input_rewind (weir__input *self);

/*  The next shard of this rank's share with something left to read, or
    SIZE_MAX.  Any reader thread.  */
size_t weir__input_take (weir__input *self);

/*  Read SHARD (taken) from its offset into SINK: what the reader's read
    returns.  */
int weir__input_read (weir__input *self, size_t shard, weir__sink *sink, weir__err *err);

/*  The offset of SHARD now; and count into how far the input went what
    its offset moved since *SEEN, which becomes the offset.  The thread
    holding SHARD.  */
uint64_t weir__input_offset (const weir__input *self, size_t shard);
void weir__input_count (weir__input *self, size_t shard, uint64_t *seen);

/*  How many shards have records past their offsets now, as the reader
    says (weir__reader_class's more): a resumed job that had finished has
    work again.  */
size_t weir__input_grown (weir__input *self);

/*  Following: new files become shards, from their start (between epochs);
    and wait until a file may have more, asking SINK's idle meanwhile.  */
size_t weir__input_count_shards (const weir__input *self);
int weir__input_discover (weir__input *self, weir__err *err);
int weir__input_wait (weir__input *self, weir__sink *sink);

/*  A followed file was found truncated in place.  Any thread.  */
void weir__input_truncated (weir__input *self);

/*  The followed file of SHARD was SIZE bytes when its window last looked
    (the reading thread, which alone calls it): its bytes past the offset,
    kept up to date as records are counted (weir__input_count), summed
    over the shards are the stage's input_behind.  */
void weir__input_seen (weir__input *self, size_t shard, uint64_t size);

/*  Its part of a stage's statistics: input_done, input_total and
    files_truncated.  Any thread.  */
void weir__input_stats (const weir__input *self, weir_stage_stats *stats);

/*  A checkpoint of EPOCH is being saved with the offsets of now: kept for
    settle, for readers that settle (readers/reader.h).  Quiescent.  0 or
    WEIR_ENOMEM.  */
int weir__input_saving (weir__input *self, uint64_t epoch, weir__err *err);

/*  Checkpoints up to DURABLE are written: the newest of those saved is
    told to the reader, once.  What the reader returned (a failure to
    warn of).  Quiescent.  */
int weir__input_settle (weir__input *self, uint64_t durable, weir__err *err);

/*  Close the reader.  */
void weir__input_close (weir__input *self);

#endif
