/*  lib/hash.h - a 64-bit checksum of bytes.

    Not cryptographic: it guards checkpoints against lost or mixed-up keys
    and values (LevelDB's own CRCs guard the bytes on disk), so it must be
    fast enough for gigabytes of model blobs.  */
#ifndef WEIR_HASH_H_INCLUDED
#define WEIR_HASH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  Mix LEN bytes of DATA into SEED.  Chained calls hash a sequence.  */
uint64_t weir__hash64 (uint64_t seed, const void *data, size_t len);

#endif
