/*  bench/wordcount_c.c - word count as one would write it by hand in C,
    single-threaded: the peer of 'lines ! tokenize lowercase=1 ! count
    key=.' in bench/wordcount_bench.

        wordcount_c FILE > counts

    The same words as examples/wordcount/tokenize.c cuts (runs of ASCII
    letters and digits, apostrophes and bytes of multi-byte UTF-8
    characters; ASCII letters folded to lower case), counted in an
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

//  Each byte of a word (a letter, a digit, an apostrophe or a byte of a
//  multi-byte UTF-8 character) as the tokenize plugin's lowercase=1
//  writes it: ASCII letters
//  folded; 0 for every other byte, which ends a word.  The plugin's
//  table (examples/wordcount/tokenize.c).
static const unsigned char s_fold[256] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x27, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
    0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
    0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
    0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf,
    0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf,
    0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
};

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
    char *buf = s_grown (NULL, S_BLOCK);
    char *word = NULL;  //  the word in hand, which may run across blocks
    size_t wlen = 0, wcap = 0;
    size_t got;
    while ((got = fread (buf, 1, S_BLOCK, f)) > 0)
        for (size_t i = 0; i < got; i++) {
            unsigned char c = s_fold[(unsigned char) buf[i]];
            if (c) {
                if (wlen == wcap)
                    word = s_grown (word, wcap = wcap ? wcap * 2 : 256);
                word[wlen++] = (char) c;
            }
            else if (wlen) {
                s_add (word, wlen);
                wlen = 0;
            }
        }
    if (wlen)
        s_add (word, wlen);
    fclose (f);
    for (size_t k = 0; k < s_count; k++)
        printf ("[\"%.*s\",%llu]\n", (int) s_entries[k].len, s_arena + s_entries[k].off,
                (unsigned long long) s_entries[k].count);
    return 0;
}
