/*  lib/hash.c - a multiply-and-shift mix over 8-byte words.  */
#include "config.h"
#include "lib/hash.h"

#include <string.h>

uint64_t weir__hash64 (uint64_t seed, const void *data, size_t len)
{
    //  One multiply per word: several GB/s, so that checksumming a large
    //  model costs little next to writing it
    const unsigned char *p = data;
    uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
    while (len >= 8) {
        uint64_t w;
        memcpy (&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy (&w, p, len);
    h = (h ^ w ^ len) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}
