/*  checkpoint/keys.h - every name in a checkpoint, and every key the store
    writes.  The one place that knows them: the engine writes and reads
    checkpoints through these, the command through the public names they
    build on (WEIR_CHECKPOINT_* sections and WEIR_META_* items, in
    <weir/weir.h>).

    Items of a checkpoint, by section:
      meta     WEIR_META_* names; records_in:I and records_out:I per stage I;
               reduce:I per region of a blob combined across ranks,
               "OFFSET COUNT WIDTH TYPE OP NAME" (a resume declares them
               again: init, where they may be declared, does not run then)
      offsets  one per shard of the input: "PATH@START-END" for a byte range
               of a file, "#START-END" for other inputs; the value is where
               reading goes on, in decimal.  In a graph of several readers
               each reader's keys here and in files start with "INDEX|",
               its stage's index (a graph of one reader has no prefix, as
               every checkpoint before graphs)
      writers  "INDEX:ELEMENT" per writer stage; the value is the writer's
               committed state (a file's length); "INDEX:ELEMENT@SLOT" the
               same for the output of rank SLOT (from 1) of a job of several
               ranks; "INDEX:ELEMENT:dead-letter" for a stage's dead letter
      blobs    the workspace blob of that name, raw
      files    "PATH" per followed file (follow=1): "DEV INO FPLEN FPHASH
               GONE", which file the offset of the shard of PATH is in: its
               device and inode, a hash of its first FPLEN bytes (hex), and
               1 when it was deleted once read to its end; and per regular
               file a batch reader planned: "DEV INO FPLEN FPHASH 0 END
               ENDHASH", with its size when planned and a hash of the
               bytes before it, so that a resume reads what was appended
               since (checkpoint/replan.h)

    Keys of the store, one LevelDB per checkpoint directory (EPOCH is 20
    decimal digits, so that keys sort by epoch):
      latest                  the newest complete epoch, decimal
      best                    the newest epoch a processor marked the best
                              (weir_checkpoint_best), decimal; retention
                              keeps it
      e/EPOCH/m  e/EPOCH/o  e/EPOCH/w  e/EPOCH/f
                              the meta, offsets, writers and files sections,
                              each packed into one value (files only when
                              there are some)
      e/EPOCH/b               the blobs' entries, packed into one value as
                              the sections above: per blob NAME, "SIZE HELD
                              HASH", its size, the epoch whose write holds
                              its bytes (this one, or an earlier one when
                              the blob did not change since) and a hash of
                              them (weir__hash64 from 0, 16 hex digits)
      s/HELD/NAME#CHUNK       the bytes of blob NAME as the write of epoch
                              HELD (20 digits) put them, in chunks of
                              WEIR__STORE_CHUNK (CHUNK is 8 decimal
                              digits): kept while a checkpoint names them
      e/EPOCH/b/NAME  e/EPOCH/c/NAME#CHUNK
                              in stores written before blobs were kept
                              once: blob NAME's size alone, under a key of
                              its own, and the epoch's own chunks of it
      e/EPOCH/~sum            "COUNT HASH": how many other keys the epoch
                              has under e/EPOCH/ and a checksum over them
                              in key order; an epoch exists once this key
                              does

    Files of weir's own beside LevelDB's in that directory:
      WEIR-PID                the process id of the job that holds the
                              store, for the message another job gets on
                              its lock
      WEIR-LATEST             the newest epoch written, decimal: a hint
                              that survives what LevelDB may lose (a log
                              cut by a power failure rolls the store back
                              silently)  */
#ifndef WEIR_KEYS_H_INCLUDED
#define WEIR_KEYS_H_INCLUDED

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <weir/weir.h>

#include "readers/identity.h"
#include "readers/shards.h"

/*  The sections, as stored, and the store's own section of blob chunks.  */
#define WEIR__SECTION_META ((char) WEIR_CHECKPOINT_META)
#define WEIR__SECTION_OFFSETS ((char) WEIR_CHECKPOINT_OFFSETS)
#define WEIR__SECTION_WRITERS ((char) WEIR_CHECKPOINT_WRITERS)
#define WEIR__SECTION_BLOBS ((char) WEIR_CHECKPOINT_BLOBS)
#define WEIR__SECTION_FILES ((char) WEIR_CHECKPOINT_FILES)
#define WEIR__SECTION_CHUNKS 'c'

/*  Room for any item name these functions build from a path.  */
#define WEIR__KEY_MAX 4400

/*  The key of SHARD of a reader whose keys start with PREFIX: "" for the
    reader of a graph of one, "INDEX|" (its stage's index) for each reader
    of a graph of several, so that their shards and files never meet.  */
static inline void weir__key_shard (const char *prefix, const weir__shard *shard, char *out, size_t size)
{
    if (shard->path)
        snprintf (out, size, "%s%s@%" PRIu64 "-%" PRIu64, prefix, shard->path, shard->start, shard->end);
    else
        snprintf (out, size, "%s#%" PRIu64 "-%" PRIu64, prefix, shard->start, shard->end);
}

/*  The prefix of the keys of the reader of stage INDEX, in a graph of
    SEVERAL readers or not, into OUT (room for WEIR__PREFIX_MAX).  */
#define WEIR__PREFIX_MAX 24
static inline void weir__key_reader_prefix (size_t index, int several, char *out, size_t size)
{
    if (several)
        snprintf (out, size, "%zu|", index);
    else if (size)
        out[0] = '\0';
}

/*  The files item of PATH read by a reader whose keys start with PREFIX.  */
static inline void weir__key_file (const char *prefix, const char *path, char *out, size_t size)
{
    snprintf (out, size, "%s%s", prefix, path);
}

static inline void weir__key_writer (size_t stage, const char *element, char *out, size_t size)
{
    snprintf (out, size, "%zu:%s", stage, element);
}

/*  The output of writer stage STAGE that rank SLOT writes in a job of
    several ranks ("{rank}" in its path): slot 0 is "INDEX:ELEMENT", as in
    a job of one rank, slot S "INDEX:ELEMENT@S".  */
static inline void weir__key_writer_slot (size_t stage, const char *element, unsigned slot, char *out,
                                          size_t size)
{
    if (slot == 0)
        snprintf (out, size, "%zu:%s", stage, element);
    else
        snprintf (out, size, "%zu:%s@%u", stage, element, slot);
}

/*  The dead letter of a reader or processor stage: never a writer's key,
    which is "INDEX:ELEMENT" for the same ELEMENT.  */
static inline void weir__key_dead_letter (size_t stage, const char *element, char *out, size_t size)
{
    snprintf (out, size, "%zu:%s:dead-letter", stage, element);
}

/*  A file's identity, as the files section holds it: "DEV INO FPLEN
    FPHASH GONE", and for a file a batch reader planned " END ENDHASH"
    (readers/identity.h).  */
static inline void weir__identity_format (const weir__identity *id, int gone, char *out, size_t size)
{
    int n = snprintf (out, size, "%" PRIu64 " %" PRIu64 " %" PRIu32 " %016" PRIx64 " %d", id->dev, id->ino,
                      id->fp_len, id->fp_hash, gone);
    if (id->has_end && n > 0 && (size_t) n < size)
        snprintf (out + n, size - (size_t) n, " %" PRIu64 " %016" PRIx64, id->end, id->end_hash);
}

/*  0, or -1 for text that is no identity.  */
static inline int weir__identity_parse (const char *text, size_t len, weir__identity *id, int *gone)
{
    char buf[160];
    if (len >= sizeof buf)
        return -1;
    memcpy (buf, text, len);
    buf[len] = '\0';
    int n = 0, m = 0;
    if (sscanf (buf, "%" SCNu64 " %" SCNu64 " %" SCNu32 " %" SCNx64 " %d%n", &id->dev, &id->ino, &id->fp_len,
                &id->fp_hash, gone, &n)
            != 5
        || id->fp_len > WEIR__FINGERPRINT)
        return -1;
    id->has_end = 0;
    if ((size_t) n < len) {
        if (sscanf (buf + n, " %" SCNu64 " %" SCNx64 "%n", &id->end, &id->end_hash, &m) != 2
            || (size_t) (n + m) != len)
            return -1;
        id->has_end = 1;
    }
    id->known = 1;
    return 0;
}

/*  The INDEXth followed file read to its end and left (WEIR_META_READ)
    by a reader whose keys start with PREFIX.  */
static inline void weir__key_read (const char *prefix, size_t index, char *out, size_t size)
{
    snprintf (out, size, "%s%s%zu", WEIR_META_READ, prefix, index);
}

/*  Region INDEX of the blobs combined across ranks: its item's name, and
    its value.  */
static inline void weir__key_reduce (size_t index, char *out, size_t size)
{
    snprintf (out, size, "%s%zu", WEIR_META_REDUCE, index);
}

static inline void weir__region_format (const char *blob, size_t offset, size_t count, size_t width, int type,
                                        int op, char *out, size_t size)
{
    snprintf (out, size, "%zu %zu %zu %d %d %s", offset, count, width, type, op, blob);
}

/*  TEXT of LEN bytes into the fields and *BLOB (a pointer into TEXT, and
    its length *BLOB_LEN, which may be 0): 0, or -1 for text that is no
    region.  TYPE and OP count as weir_reduce_type and weir_reduce_op do
    (float32, float64, int64, then the engine's own uint64; sum, mean,
    min, max), and WIDTH is TYPE's:
    a region read back is combined over COUNT elements of TYPE, so the two
    must agree or the combining would pass the region's end.  */
static inline int weir__region_parse (const char *text, size_t len, size_t *offset, size_t *count,
                                      size_t *width, int *type, int *op, const char **blob, size_t *blob_len)
{
    char buf[128];
    size_t head = 0;
    int blanks = 0;
    //  The numbers are short; the name is what follows the fifth blank
    while (head < len && blanks < 5)
        blanks += text[head++] == ' ';
    if (blanks < 5 || head >= sizeof buf)
        return -1;
    memcpy (buf, text, head);
    buf[head] = '\0';
    int n = 0;
    if (sscanf (buf, "%zu %zu %zu %d %d %n", offset, count, width, type, op, &n) != 5 || (size_t) n != head
        || *type < 0 || *type > 3 || *op < 0 || *op > 3 || *width != (*type == 0 ? 4u : 8u))
        return -1;
    *blob = text + head;
    *blob_len = len - head;
    return 0;
}

/*  WHICH is WEIR_META_RECORDS_IN, WEIR_META_RECORDS_OUT or
    WEIR_META_REJECTED.  */
static inline void weir__key_records (const char *which, size_t stage, char *out, size_t size)
{
    snprintf (out, size, "%s%zu", which, stage);
}

#define WEIR__STORE_LATEST "latest"
#define WEIR__STORE_BEST "best"
#define WEIR__STORE_SUM "~sum"
#define WEIR__STORE_CHUNK ((size_t) 4 << 20)
#define WEIR__STORE_PREFIX_LEN 23 /*  "e/" + 20 digits + "/"  */
#define WEIR__STORE_PID_FILE "WEIR-PID"
#define WEIR__STORE_LATEST_FILE "WEIR-LATEST"

/*  "e/EPOCH/" into OUT (at least 24 bytes).  */
static inline void weir__store_prefix (char *out, size_t size, uint64_t epoch)
{
    snprintf (out, size, "e/%020" PRIu64 "/", epoch);
}

#endif
