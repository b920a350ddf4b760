/*  examples/wordcount/scan.h - which bytes of a text are a word's, 16 at a
    time: the tokenize plugin's scan, and the C loop's in
    bench/wordcount_c.c, which must tokenise as the plugin does.

    A word's bytes are letters, digits, apostrophes and bytes of
    multi-byte UTF-8 characters (0x80 and up).  SSE2 only (every x86-64
    CPU has it): a build without it scans otherwise.  */
#ifndef WORDCOUNT_SCAN_H_INCLUDED
#define WORDCOUNT_SCAN_H_INCLUDED

#include <emmintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

//  Which of the 16 bytes at P are a word's (bit i for byte i): letters,
//  digits, apostrophes and bytes of multi-byte characters; with OUT, the
//  16 bytes go there with ASCII letters in lower case.  Four
//  compares of ranges instead of 16 look-ups: signed compares, under
//  which the bytes of multi-byte characters (0x80 and up) are negative,
//  below every ASCII range.
static inline unsigned wordcount_scan16 (const unsigned char *p, unsigned char *out)
{
    const __m128i v = _mm_loadu_si128 ((const __m128i *) p);
    //  A letter is one once 0x20 is set: A-Z and a-z become a-z, and no
    //  other byte does
    const __m128i low = _mm_or_si128 (v, _mm_set1_epi8 (0x20));
    const __m128i letter = _mm_and_si128 (_mm_cmpgt_epi8 (low, _mm_set1_epi8 ('a' - 1)),
                                          _mm_cmplt_epi8 (low, _mm_set1_epi8 ('z' + 1)));
    const __m128i digit = _mm_and_si128 (_mm_cmpgt_epi8 (v, _mm_set1_epi8 ('0' - 1)),
                                         _mm_cmplt_epi8 (v, _mm_set1_epi8 ('9' + 1)));
    const __m128i other =
        _mm_or_si128 (_mm_cmpeq_epi8 (v, _mm_set1_epi8 ('\'')), _mm_cmplt_epi8 (v, _mm_setzero_si128 ()));
    if (out)
        _mm_storeu_si128 ((__m128i *) out, _mm_or_si128 (v, _mm_and_si128 (letter, _mm_set1_epi8 (0x20))));
    return (unsigned) _mm_movemask_epi8 (_mm_or_si128 (_mm_or_si128 (letter, digit), other));
}

//  The word bytes among the up to 64 bytes at P of which N are the
//  record's, folded into OUT when it is not NULL; BACK says that the
//  record has 16 bytes before P.  Bytes past the record are never read:
//  a last part-filled 16 is read as the 16 bytes that end the record,
//  the first of them judged again, or when the record is shorter than
//  16, copied into a zeroed buffer (0 is no word's byte, so a word
//  running to the end has its end in the mask), as copying every
//  record's last bytes cost a call of memcpy per line.
static inline uint64_t wordcount_scan64 (const unsigned char *p, size_t n, unsigned char *out, int back)
{
    uint64_t m = 0;
    for (size_t i = 0; i < 64 && i < n; i += 16) {
        uint64_t part;
        if (n - i >= 16)
            part = wordcount_scan16 (p + i, out ? out + i : NULL);
        else if (i || back) {
            size_t again = 16 - (n - i);
            part = wordcount_scan16 (p + i - again, out ? out + i - again : NULL) >> again;
        }
        else {
            unsigned char pad[16] = {0}, folded[16];
            memcpy (pad, p + i, n - i);
            part = wordcount_scan16 (pad, folded);
            if (out)
                memcpy (out + i, folded, n - i);
        }
        m |= part << i;
    }
    return m;
}

#endif
