/*  bench/wordcount_c.c - word count as one would write it by hand in C,
    single-threaded: the peer of 'lines ! tokenize lowercase=1 ! count
    key=.' in bench/wordcount_bench.

        wordcount_c FILE > counts

    The same words as examples/wordcount/tokenize.c cuts, found the same
    way (runs of ASCII letters and digits, apostrophes and bytes of
    multi-byte UTF-8 characters; ASCII letters folded to lower case;
    judged 16 bytes at a time with SSE2), counted in an
    open-addressing table with FNV-1a hashes, the file read in 1 MiB
    blocks.  Prints one ["word",count] line per word, in the order the
    words were first seen, as weir's lines writer prints weir's records
    (the words hold no character JSON escapes).

    Build: cc -std=gnu11 -O2 wordcount_c.c  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t hash;
    uint32_t off, len;
    uint64_t count;
} s_entry;

static s_entry *s_entries;
static size_t s_count, s_room;
static uint32_t *s_slots;
static size_t s_nslots;
static char *s_arena;
static size_t s_used, s_cap;

static void s_out_of_memory (void)
{
    fprintf (stderr, "wordcount_c: out of memory\n");
    exit (1);
}

static void *s_grown (void *p, size_t size)
{
    void *q = realloc (p, size);
    if (!q)
        s_out_of_memory ();
    return q;
}

static void s_rehash (void)
{
    size_t n = s_nslots ? s_nslots * 2 : 1024;
    uint32_t *slots = calloc (n, sizeof *slots);
    if (!slots)
        s_out_of_memory ();
    for (size_t k = 0; k < s_count; k++) {
        size_t i = s_entries[k].hash & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = (uint32_t) k + 1;
    }
    free (s_slots);
    s_slots = slots;
    s_nslots = n;
}

static void s_add (const char *w, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char) w[i]) * 1099511628211ull;
    if ((s_count + 1) * 4 > s_nslots * 3)
        s_rehash ();
    size_t i = h & (s_nslots - 1);
    for (; s_slots[i]; i = (i + 1) & (s_nslots - 1)) {
        s_entry *e = &s_entries[s_slots[i] - 1];
        if (e->hash == h && e->len == n && memcmp (s_arena + e->off, w, n) == 0) {
            e->count++;
            return;
        }
    }
    if (s_count == s_room) {
        s_room = s_room ? s_room * 2 : 1024;
        s_entries = s_grown (s_entries, s_room * sizeof *s_entries);
    }
    if (s_used + n > s_cap) {
        s_cap = (s_cap + n) * 2;
        s_arena = s_grown (s_arena, s_cap);
    }
    memcpy (s_arena + s_used, w, n);
    s_entries[s_count] = (s_entry){h, (uint32_t) s_used, (uint32_t) n, 1};
    s_used += n;
    s_slots[i] = (uint32_t) ++s_count;
}

//  The tokenize plugin's scan, the same code (examples/wordcount/scan.h):
//  16 bytes judged at a time with range compares (SSE2), ASCII letters
//  folded in the same pass, and the words found by the edges of a 64-bit
//  mask of word bytes
#if defined(__SSE2__)
#include "examples/wordcount/scan.h"

//  The mask of word bytes among the up to 64 at P of which N are there,
//  folded into OUT; BACK: 16 bytes of the block come before P
static uint64_t s_scan64 (const unsigned char *p, size_t n, unsigned char *out, int back)
{
    return wordcount_scan64 (p, n, out, back);
}
#else

//  Without SSE2, byte by byte: the same classes, the same folding
static uint64_t s_scan64 (const unsigned char *p, size_t n, unsigned char *out, int back)
{
    (void) back;
    uint64_t m = 0;
    for (size_t i = 0; i < 64 && i < n; i++) {
        unsigned char c = p[i];
        int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\''
                   || c >= 0x80;
        out[i] = (unsigned char) (c >= 'A' && c <= 'Z' ? c | 0x20 : c);
        m |= (uint64_t) word << i;
    }
    return m;
}

#endif

//  N more bytes at P of the word in hand, *WORD of *LEN bytes
static void s_hold (char **word, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n > *cap)
        *word = s_grown (*word, *cap = (*len + n) * 2);
    memcpy (*word + *len, p, n);
    *len += n;
}

int main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: wordcount_c FILE\n");
        return 2;
    }
    FILE *f = fopen (argv[1], "rb");
    if (!f) {
        perror (argv[1]);
        return 1;
    }
    enum { S_BLOCK = 1 << 20 };
    unsigned char *buf = s_grown (NULL, S_BLOCK), *low = s_grown (NULL, S_BLOCK);
    char *word = NULL;  //  the start of a word that runs across blocks
    size_t wlen = 0, wcap = 0;
    size_t got;
    while ((got = fread (buf, 1, S_BLOCK, f)) > 0) {
        uint64_t carry = wlen > 0;
        size_t start = 0;
        for (size_t at = 0; at < got; at += 64) {
            uint64_t m = s_scan64 (buf + at, got - at, low + at, at > 0);
            for (uint64_t edges = m ^ (m << 1 | carry); edges; edges &= edges - 1) {
                size_t b = at + (size_t) __builtin_ctzll (edges);
                if (m >> (b - at) & 1)
                    start = b;
                else if (wlen) {  //  the end of the word the last block ended in
                    s_hold (&word, &wlen, &wcap, (const char *) low, b);
                    s_add (word, wlen);
                    wlen = 0;
                }
                else
                    s_add ((const char *) low + start, b - start);
            }
            carry = m >> 63;
        }
        if (carry)  //  a word to the block's end: held for the next
            s_hold (&word, &wlen, &wcap, (const char *) low + start, got - start);
    }
    if (wlen)
        s_add (word, wlen);
    fclose (f);
    for (size_t k = 0; k < s_count; k++)
        printf ("[\"%.*s\",%llu]\n", (int) s_entries[k].len, s_arena + s_entries[k].off,
                (unsigned long long) s_entries[k].count);
    return 0;
}
