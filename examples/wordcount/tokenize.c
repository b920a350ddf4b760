/*  examples/wordcount/tokenize.c - splits text records into words.

        ... ! tokenize [lowercase=1] [min-length=1] ! ...

    Every str record is cut at anything that is not a letter, a digit, an
    apostrophe or a byte of a multi-byte UTF-8 character; each word is
    emitted as a str record.  Records of other types are passed on
    unchanged, since dropping what we cannot judge would lose data silently.

    Build: cc -shared -fPIC $(pkg-config --cflags weir) tokenize.c -o tokenize.so  */
#include <stdlib.h>
#include <string.h>

#include <weir/plugin.h>

typedef struct {
    int lowercase;
    size_t min_length;
    char *word;  //  scratch for lowercasing, per thread
    size_t cap;
} tokenize_state;

static int tokenize_open (weir_stage *st, void **state)
{
    (void) state;
    const char *lower = weir_prop (st, "lowercase", "0");
    const char *min = weir_prop (st, "min-length", "1");
    if ((lower[0] != '0' && lower[0] != '1') || lower[1])
        return weir_fail (st, "lowercase=%s: expected 0 or 1", lower);
    if (atoi (min) < 1)
        return weir_fail (st, "min-length=%s: expected a positive integer", min);
    return 0;
}

static int tokenize_thread_open (weir_stage *st, void *state, void **tstate)
{
    (void) state;
    tokenize_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->lowercase = weir_prop (st, "lowercase", "0")[0] == '1';
    self->min_length = (size_t) atoi (weir_prop (st, "min-length", "1"));
    *tstate = self;
    return 0;
}

//  Emits the word of N bytes at P, unless it is shorter than min-length.
static inline int s_word (weir_stage *st, const tokenize_state *self, const char *p, size_t n)
{
    return n >= self->min_length ? weir_emit_str (st, p, n) : 0;
}

//  On x86-64 (SSE2 is in every such CPU) 16 bytes are judged at a time;
//  elsewhere, or built with -DTOKENIZE_BYTEWISE (as a test builds it, to
//  hold one against the other), byte by byte through a table.
#if defined(__SSE2__) && !defined(TOKENIZE_BYTEWISE)
#include "scan.h"

//  The record's words, 64 bytes at a time: a word starts where the mask
//  of word bytes turns on and ends where it turns off, so each word
//  costs two trips round a loop over the set bits of the mask's edges,
//  not one branch per byte.  CARRY says the previous 64 ended in a word.
static int s_words (weir_stage *st, tokenize_state *self, const unsigned char *p, size_t n)
{
    unsigned char *out = self->lowercase ? (unsigned char *) self->word : NULL;
    const char *text = out ? (const char *) out : (const char *) p;
    uint64_t carry = 0;
    size_t start = 0;
    for (size_t at = 0; at < n; at += 64) {
        uint64_t m = wordcount_scan64 (p + at, n - at, out ? out + at : NULL, at > 0);
        uint64_t edges = m ^ (m << 1 | carry);
        while (edges) {
            size_t b = at + (size_t) __builtin_ctzll (edges);
            if (m >> (b - at) & 1)
                start = b;
            else if (s_word (st, self, text + start, b - start))
                return -1;
            edges &= edges - 1;
        }
        carry = m >> 63;
    }
    //  A word to the record's last byte, which was the 64th of a block
    return carry ? s_word (st, self, text + start, n - start) : 0;
}

#else

//  Each byte of a word (a letter, a digit, an apostrophe or a byte of a
//  multi-byte UTF-8 character) as lowercase=1 writes it: ASCII letters
//  folded; 0 for every other byte, which ends a word.  A table rather
//  than isalnum and tolower, two calls a byte that were a tenth of the job.
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

//  The record's words, byte by byte, through the table.  Folded, each
//  word is written to the scratch as it is scanned: one pass over its
//  bytes, as a hand-written loop makes it.
static int s_words (weir_stage *st, tokenize_state *self, const unsigned char *p, size_t n)
{
    const unsigned char *end = p + n;
    while (p < end) {
        while (p < end && !s_fold[*p])
            p++;
        const unsigned char *start = p;
        size_t len = 0;
        if (self->lowercase) {
            char *word = self->word;  //  a local: no reload after each store
            unsigned char c;
            while (p < end && (c = s_fold[*p])) {
                word[len++] = (char) c;
                p++;
            }
        }
        else {
            while (p < end && s_fold[*p])
                p++;
            len = (size_t) (p - start);
        }
        if (len && s_word (st, self, self->lowercase ? self->word : (const char *) start, len))
            return -1;
    }
    return 0;
}

#endif

static int tokenize_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    tokenize_state *self = tstate;
    if (rec->type != MSGPACK_OBJECT_STR)
        return weir_emit (st, rec);
    //  The scratch for folded words holds the whole record
    if (self->lowercase && rec->via.str.size > self->cap) {
        char *word = realloc (self->word, rec->via.str.size);
        if (!word)
            return weir_fail (st, "out of memory");
        self->word = word;
        self->cap = rec->via.str.size;
    }
    return s_words (st, self, (const unsigned char *) rec->via.str.ptr, rec->via.str.size);
}

static void tokenize_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    tokenize_state *self = tstate;
    free (self->word);
    free (self);
}

//  What 'weir elements' and 'weir plugin' show of it
static const weir_property_info tokenize_props[] = {
    {"lowercase", "0", "1 folds ASCII letters to lower case"},
    {"min-length", "1", "words shorter than this many bytes are dropped"},
    {NULL, NULL, NULL},
};

static const weir_processor tokenize = {
    WEIR_PROCESSOR_INIT,
    .name = "tokenize",
    .description = "splits text records into words (lowercase=1 folds ASCII case, min-length=N)",
    .open = tokenize_open,
    .thread_open = tokenize_thread_open,
    .process = tokenize_process,
    .thread_close = tokenize_thread_close,
    .props = tokenize_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &tokenize;
}
