/*  checkpoint/ckpt.h - one checkpoint in memory: named items in sections.

    The engine fills one from a quiescent pipe (checkpoint/snapshot.h),
    the store writes it to LevelDB and reads it back (checkpoint/store.h),
    and the public weir_checkpoint is this object seen through
    <weir/weir.h>.  Sections and item names are in checkpoint/keys.h.

    Items keep their section and name; lookups sort the items once, so a
    checkpoint is built in any order and read in name order.  */
#ifndef WEIR_CKPT_H_INCLUDED
#define WEIR_CKPT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct weir__ckpt weir__ckpt;

/*  The longest item name a packed checkpoint carries.  */
#define WEIR__CKPT_NAME_MAX 8192

/*  An empty checkpoint of EPOCH; NULL when out of memory.  */
weir__ckpt *weir__ckpt_new (uint64_t epoch);
void weir__ckpt_destroy (weir__ckpt **self_p);
uint64_t weir__ckpt_epoch (const weir__ckpt *self);

/*  Add an item.  With COPY the bytes are copied; without, they are
    borrowed and must stay valid as long as the checkpoint.  0 or
    WEIR_ENOMEM.  */
int weir__ckpt_put (weir__ckpt *self, char section, const char *name, const void *data, size_t len, int copy);
int weir__ckpt_put_text (weir__ckpt *self, char section, const char *name, const char *text);
int weir__ckpt_put_u64 (weir__ckpt *self, char section, const char *name, uint64_t value);

/*  Give item NAME of SECTION new bytes: DATA, malloc'ed, is taken over.
    0, or -1 when there is no such item (DATA is freed then).  */
int weir__ckpt_replace (weir__ckpt *self, char section, const char *name, void *data, size_t len);

/*  Remove every item of SECTION.  */
void weir__ckpt_drop (weir__ckpt *self, char section);

/*  The item or NULL; *LEN its size.  */
const void *weir__ckpt_get (const weir__ckpt *self, char section, const char *name, size_t *len);

/*  An item holding a decimal integer; 0 and *VALUE, or -1 when it is
    missing or not one.  */
int weir__ckpt_get_u64 (const weir__ckpt *self, char section, const char *name, uint64_t *value);

/*  The decimal integer of an item's value, TEXT of LEN bytes, as
    weir__ckpt_get_u64 reads it: 0 and *VALUE, or -1.  */
int weir__ckpt_parse_u64 (const char *text, size_t len, uint64_t *value);

/*  Every item of every section, into one malloc'ed buffer, to hand the
    checkpoint to another process (the other ranks of a job); and back.
    0 or WEIR_ENOMEM; unpack says WEIR_ECORRUPT for bytes that are not a
    packed checkpoint.  */
int weir__ckpt_pack (const weir__ckpt *self, char **buf, size_t *len);
int weir__ckpt_unpack (const char *buf, size_t len, weir__ckpt **out);

/*  Items of a section, in name order: COUNT, then each by index.  */
size_t weir__ckpt_count (const weir__ckpt *self, char section);
const char *weir__ckpt_item (const weir__ckpt *self, char section, size_t index, const void **data,
                             size_t *len);

#endif
