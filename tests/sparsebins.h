/*  tests/sparsebins.h - sparse features as [indexes, values], two bins of
    little-endian uint32 indices and float32 values (the libsvm reader's
    features=bins, which softmax and the libsvm writer take), packed by
    hand for the suites that check them byte for byte.  */
#ifndef WEIR_SPARSEBINS_H_INCLUDED
#define WEIR_SPARSEBINS_H_INCLUDED

#include <msgpack.h>
#include <stdint.h>
#include <string.h>

/*  The N 4-byte words W as a bin, each little-endian whatever the host's
    order.  */
static inline void sparsebins_pack_words (msgpack_packer *pk, const uint32_t *w, size_t n)
{
    msgpack_pack_bin (pk, n * 4);
    for (size_t i = 0; i < n; i++) {
        unsigned char le[4] = {(unsigned char) w[i], (unsigned char) (w[i] >> 8),
                               (unsigned char) (w[i] >> 16), (unsigned char) (w[i] >> 24)};
        msgpack_pack_bin_body (pk, le, 4);
    }
}

/*  [indexes, values] of N features (at most 256).  */
static inline void sparsebins_pack (msgpack_packer *pk, const uint32_t *index, const float *value, size_t n)
{
    uint32_t bits[256] = {0};
    if (n)
        memcpy (bits, value, n * sizeof *value);
    msgpack_pack_array (pk, 2);
    sparsebins_pack_words (pk, index, n);
    sparsebins_pack_words (pk, bits, n);
}

#endif
