/*  tests/check_key.c - keys and key groups: a value is one key however it
    was packed, and values of other kinds are other keys; every group has
    one owner and the owners' runs of groups meet end to end; a key
    group's table finds, grows, saves and loads back what it holds, and
    refuses a malformed save; a str's key hashed from its bytes alone is
    the key's hash; a producer's table of partial aggregates finds what
    it holds, short keys and long, in the order they came.  */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/key.h"
#include "lib/keytable.h"
#include "lib/pack.h"
#include "lib/partials.h"
#include "tests/testutil.h"

//  The canonical bytes of the key PATH of the record in the N bytes at P
static void s_key_of (const char *path, const char *p, size_t n, weir__buf *out, uint64_t *hash)
{
    weir__err err;
    weir__err_init (&err);
    weir__key *k = weir__key_new (path, &err);
    ck_assert_ptr_nonnull (k);
    msgpack_zone zone;
    msgpack_zone_init (&zone, 256);
    msgpack_object rec;
    size_t off = 0;
    ck_assert_int_eq (msgpack_unpack (p, n, &off, &zone, &rec), MSGPACK_UNPACK_SUCCESS);
    const char *key;
    size_t len;
    weir__buf scratch;
    weir__buf_init (&scratch);
    ck_assert_int_eq (weir__key_of (k, &rec, &scratch, &key, &len, hash), 0);
    //  The key is the record's own bytes, or a copy in the scratch
    ck_assert (key == scratch.data || (key >= p && key + len <= p + n));
    out->len = 0;
    ck_assert_int_eq (weir__buf_append (out, key, len), 0);
    weir__buf_release (&scratch);
    msgpack_zone_destroy (&zone);
    weir__key_destroy (&k);
}

START_TEST (test_one_value_one_key)
{
    weir__buf a, b;
    weir__buf_init (&a);
    weir__buf_init (&b);
    uint64_t ha, hb;
    //  7 as a fixint and as a uint16; "ab" as a fixstr and as a str8
    s_key_of (".", "\x07", 1, &a, &ha);
    s_key_of (".", "\xcd\x00\x07", 3, &b, &hb);
    ck_assert_uint_eq (a.len, b.len);
    ck_assert_int_eq (memcmp (a.data, b.data, a.len), 0);
    ck_assert_uint_eq (ha, hb);
    s_key_of (".",
              "\xa2"
              "ab",
              3, &a, &ha);
    s_key_of (".",
              "\xd9\x02"
              "ab",
              4, &b, &hb);
    ck_assert_uint_eq (ha, hb);
    //  A str and a bin of the same bytes are two keys, as are 7 and 7.0
    s_key_of (".",
              "\xc4\x02"
              "ab",
              4, &b, &hb);
    ck_assert_uint_ne (ha, hb);
    s_key_of (".", "\x07", 1, &a, &ha);
    s_key_of (".", "\xcb\x40\x1c\x00\x00\x00\x00\x00\x00", 9, &b, &hb);
    ck_assert_uint_ne (ha, hb);
    //  A path into a map; a key that is absent is nil
    s_key_of (".u", "\x81\xa1u\x05", 4, &a, &ha);
    ck_assert_uint_eq (a.len, 1);
    ck_assert_uint_eq ((unsigned char) a.data[0], 5);
    s_key_of (".v", "\x81\xa1u\x05", 4, &a, &ha);
    ck_assert_uint_eq ((unsigned char) a.data[0], 0xc0);
    weir__buf_release (&a);
    weir__buf_release (&b);
}
END_TEST

START_TEST (test_bad_paths_name_their_column)
{
    weir__err err;
    weir__err_init (&err);
    ck_assert_ptr_null (weir__key_new ("", &err));
    ck_assert_int_eq (err.code, WEIR_EPROPERTY);
    ck_assert_ptr_null (weir__key_new (".a.[", &err));
    ck_assert_int_eq (err.code, WEIR_EPROPERTY);
    ck_assert_int_eq (err.offset, 2);
    ck_assert_ptr_nonnull (strstr (err.msg, "column 3"));
    weir__key *k = weir__key_new ("[0].u", &err);
    ck_assert_ptr_nonnull (k);
    ck_assert_str_eq (weir__key_path (k), "[0].u");
    weir__key_destroy (&k);
}
END_TEST

START_TEST (test_groups_have_one_owner_each)
{
    unsigned counts[] = {1, 7, 128, 1000, 65536};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        unsigned groups = counts[c];
        for (unsigned threads = 1; threads <= groups && threads <= 300; threads += threads < 10 ? 1 : 37) {
            //  Thread t's run starts where t-1's ended, every group's
            //  owner is the thread whose run holds it
            ck_assert_uint_eq (weir__key_first_group (0, groups, threads), 0);
            ck_assert_uint_eq (weir__key_first_group (threads, groups, threads), groups);
            for (unsigned t = 0; t < threads; t++) {
                unsigned first = weir__key_first_group (t, groups, threads),
                         end = weir__key_first_group (t + 1, groups, threads);
                ck_assert_uint_lt (first, end);
                ck_assert_uint_eq (weir__key_owner (first, groups, threads), t);
                ck_assert_uint_eq (weir__key_owner (end - 1, groups, threads), t);
            }
        }
    }
    //  Hashes spread over the groups
    unsigned seen[128] = {0};
    for (uint64_t i = 0; i < 128000; i++) {
        uint64_t h = weir__key_hash (&i, sizeof i);
        unsigned g = weir__key_group (h, 128);
        ck_assert_uint_lt (g, 128);
        seen[g]++;
    }
    for (unsigned g = 0; g < 128; g++)
        ck_assert_msg (seen[g] > 800 && seen[g] < 1200, "group %u got %u of 128000", g, seen[g]);
}
END_TEST

START_TEST (test_table_grows_saves_and_loads)
{
    weir__keytable *t = weir__keytable_new (sizeof (uint64_t));
    ck_assert_ptr_nonnull (t);
    char key[32];
    for (uint64_t i = 0; i < 100000; i++) {
        int n = snprintf (key, sizeof key, "key%llu", (unsigned long long) (i % 50000)), fresh;
        uint64_t *v = weir__keytable_upsert (t, key, (size_t) n, weir__key_hash (key, (size_t) n), &fresh);
        ck_assert_ptr_nonnull (v);
        ck_assert_int_eq (fresh, i < 50000);
        *v += i;
    }
    ck_assert_uint_eq (weir__keytable_count (t), 50000);
    ck_assert_ptr_null (weir__keytable_find (t, "nokey", 5, weir__key_hash ("nokey", 5)));
    uint64_t *v = weir__keytable_find (t, "key7", 4, weir__key_hash ("key7", 4));
    ck_assert_ptr_nonnull (v);
    ck_assert_uint_eq (*v, 7 + 50007);
    //  Entries keep the order they came in
    const char *k;
    size_t len;
    weir__keytable_entry (t, 3, &k, &len);
    ck_assert_uint_eq (len, 4);
    ck_assert_int_eq (memcmp (k, "key3", 4), 0);
    ck_assert_uint_gt (weir__keytable_memory (t), 50000 * (16 + 8 + 4));

    weir__buf saved;
    weir__buf_init (&saved);
    ck_assert_int_eq (weir__keytable_save (t, &saved), 0);
    weir__keytable *back = weir__keytable_new (sizeof (uint64_t));
    ck_assert_int_eq (weir__keytable_load (back, saved.data, saved.len, weir__key_hash), 0);
    ck_assert_uint_eq (weir__keytable_count (back), 50000);
    v = weir__keytable_find (back, "key49999", 8, weir__key_hash ("key49999", 8));
    ck_assert_ptr_nonnull (v);
    ck_assert_uint_eq (*v, 49999 + 99999);
    //  Cut short, or a key twice: malformed, not loaded as if whole
    weir__keytable *cut = weir__keytable_new (sizeof (uint64_t));
    ck_assert_int_eq (weir__keytable_load (cut, saved.data, saved.len - 3, weir__key_hash), -1);
    weir__keytable_destroy (&cut);
    ck_assert_int_eq (weir__keytable_load (back, saved.data, 16, weir__key_hash), -1);
    weir__buf_release (&saved);
    weir__keytable_destroy (&back);
    weir__keytable_destroy (&t);
    ck_assert_ptr_null (t);
}
END_TEST

START_TEST (test_table_deletes)
{
    //  Small slots and many keys: deletions must shift the probe chains,
    //  or keys after a hole would be lost
    weir__keytable *t = weir__keytable_new (sizeof (uint32_t));
    char key[32];
    enum { N = 5000 };
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf (key, sizeof key, "k%u", i), fresh;
        uint32_t *v = weir__keytable_upsert (t, key, (size_t) n, weir__key_hash (key, (size_t) n), &fresh);
        ck_assert_ptr_nonnull (v);
        *v = i;
    }
    //  Every third key, in a scattered order
    for (uint32_t j = 0; j < N; j++) {
        uint32_t i = (j * 7919) % N;
        if (i % 3)
            continue;
        int n = snprintf (key, sizeof key, "k%u", i);
        ck_assert_int_eq (weir__keytable_delete (t, key, (size_t) n, weir__key_hash (key, (size_t) n)), 1);
        ck_assert_int_eq (weir__keytable_delete (t, key, (size_t) n, weir__key_hash (key, (size_t) n)), 0);
    }
    ck_assert_uint_eq (weir__keytable_count (t), N - (N + 2) / 3);
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf (key, sizeof key, "k%u", i);
        uint32_t *v = weir__keytable_find (t, key, (size_t) n, weir__key_hash (key, (size_t) n));
        if (i % 3 == 0)
            ck_assert_ptr_null (v);
        else {
            ck_assert_ptr_nonnull (v);
            ck_assert_uint_eq (*v, i);
        }
    }
    //  A deleted key comes back fresh
    int fresh;
    ck_assert_ptr_nonnull (weir__keytable_upsert (t, "k0", 2, weir__key_hash ("k0", 2), &fresh));
    ck_assert_int_eq (fresh, 1);
    weir__keytable_destroy (&t);
}
END_TEST

//  A table of bytes: values of any length, grown, shrunk, set from the
//  table's own bytes, deleted, compacted, saved and loaded
START_TEST (test_table_of_bytes)
{
    weir__keytable *t = weir__keytable_new (WEIR__KEYTABLE_BYTES);
    ck_assert_ptr_nonnull (t);
    char key[32], value[600];
    enum { N = 3000 };
    //  Each key's value grows by rounds, so values move to the arena's
    //  end and leave garbage the table compacts
    for (unsigned round = 1; round <= 6; round++)
        for (unsigned i = 0; i < N; i++) {
            int n = snprintf (key, sizeof key, "k%u", i), fresh;
            size_t vlen = (i % 7 + 1) * round * 13;
            memset (value, 'a' + (int) (i % 26), vlen);
            ck_assert_int_eq (weir__keytable_put_bytes (t, key, (size_t) n, weir__key_hash (key, (size_t) n),
                                                        value, vlen, &fresh),
                              0);
            ck_assert_int_eq (fresh, round == 1);
        }
    ck_assert_uint_eq (weir__keytable_count (t), N);
    //  Shrunk, in place
    int fresh;
    ck_assert_int_eq (weir__keytable_put_bytes (t, "k5", 2, weir__key_hash ("k5", 2), "xyz", 3, &fresh), 0);
    size_t vlen;
    const char *got = weir__keytable_get_bytes (t, "k5", 2, weir__key_hash ("k5", 2), &vlen);
    ck_assert_uint_eq (vlen, 3);
    ck_assert_int_eq (memcmp (got, "xyz", 3), 0);
    //  Set from its own bytes, to something longer than their room
    got = weir__keytable_get_bytes (t, "k6", 2, weir__key_hash ("k6", 2), &vlen);
    ck_assert_uint_eq (vlen, 7 * 6 * 13);
    ck_assert_int_eq (weir__keytable_put_bytes (t, "k7", 2, weir__key_hash ("k7", 2), got, vlen, &fresh), 0);
    got = weir__keytable_get_bytes (t, "k7", 2, weir__key_hash ("k7", 2), &vlen);
    ck_assert_uint_eq (vlen, 7 * 6 * 13);
    ck_assert_int_eq (got[0], 'a' + 6);
    ck_assert_int_eq (got[vlen - 1], 'a' + 6);
    //  Every third key gone
    for (unsigned i = 0; i < N; i += 3) {
        int n = snprintf (key, sizeof key, "k%u", i);
        ck_assert_int_eq (weir__keytable_delete (t, key, (size_t) n, weir__key_hash (key, (size_t) n)), 1);
    }
    //  Garbage is given back: the arena holds little more than the keys
    //  and values left (about 2,000 keys of 546 bytes on average)
    ck_assert_uint_lt (weir__keytable_memory (t), 4 * 2000 * 600);
    weir__buf saved;
    weir__buf_init (&saved);
    ck_assert_int_eq (weir__keytable_save (t, &saved), 0);
    size_t size;
    ck_assert_int_eq (weir__keytable_saved_size (saved.data, saved.len, &size), 0);
    ck_assert_uint_eq (size, WEIR__KEYTABLE_BYTES);
    weir__keytable *back = weir__keytable_new (WEIR__KEYTABLE_BYTES);
    ck_assert_int_eq (weir__keytable_load (back, saved.data, saved.len, weir__key_hash), 0);
    ck_assert_uint_eq (weir__keytable_count (back), weir__keytable_count (t));
    for (unsigned i = 0; i < N; i++) {
        int n = snprintf (key, sizeof key, "k%u", i);
        const char *v =
            weir__keytable_get_bytes (back, key, (size_t) n, weir__key_hash (key, (size_t) n), &vlen);
        if (i % 3 == 0) {
            ck_assert_ptr_null (v);
            continue;
        }
        ck_assert_ptr_nonnull (v);
        if (i == 5)
            ck_assert_uint_eq (vlen, 3);
        else if (i == 7)
            ck_assert_uint_eq (vlen, 7 * 6 * 13);
        else {
            ck_assert_uint_eq (vlen, (i % 7 + 1) * 6 * 13);
            ck_assert_int_eq (v[vlen / 2], 'a' + (int) (i % 26));
        }
    }
    //  A table of fixed values does not load it, nor it theirs; cut short,
    //  it is malformed
    weir__keytable *fixed = weir__keytable_new (8);
    ck_assert_int_eq (weir__keytable_load (fixed, saved.data, saved.len, weir__key_hash), -1);
    weir__keytable *cut = weir__keytable_new (WEIR__KEYTABLE_BYTES);
    ck_assert_int_eq (weir__keytable_load (cut, saved.data, saved.len - 5, weir__key_hash), -1);
    weir__keytable_destroy (&cut);
    weir__keytable_destroy (&fixed);
    weir__buf_release (&saved);
    weir__keytable_destroy (&back);
    weir__keytable_destroy (&t);
}
END_TEST

//  The canonical key of the str S of N bytes, packed by the engine's
//  packer (the shortest header), into B
static void s_str_key (const char *s, size_t n, weir__batch *b)
{
    weir__batch_clear (b);
    b->len = 0;
    ck_assert_int_eq (weir__pack_str (b, s, n), 0);
}

START_TEST (test_str_key_in_partials)
{
    //  Every length a short str may have, bytes of every value: the str
    //  given as its bytes and the str packed are one key of a producer's
    //  table, its canonical bytes those the packer writes
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 64), 0);
    char s[WEIR__KEY_STR_SHORT + 1];
    uint64_t seed = 7;
    weir__partials *t = weir__partials_new (8);
    ck_assert_ptr_nonnull (t);
    for (size_t n = 0; n <= WEIR__KEY_STR_SHORT; n++)
        for (int round = 0; round < 200; round++) {
            for (size_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                s[i] = (char) (seed >> 56);
            }
            s_str_key (s, n, &b);
            ck_assert_uint_eq (b.len, n + 1);
            int fresh, again;
            uint64_t *v = weir__partials_upsert_str (t, s, n, &fresh);
            ck_assert_ptr_nonnull (v);
            ++*v;
            uint64_t *w = weir__partials_upsert (t, b.data, b.len, &again);
            ck_assert_msg (w == v && !again, "a str of %zu bytes is another key from its bytes", n);
            ++*w;
            if (fresh) {
                const char *key;
                size_t len;
                weir__partials_entry (t, weir__partials_count (t) - 1, &key, &len);
                ck_assert_uint_eq (len, b.len);
                ck_assert_int_eq (memcmp (key, b.data, len), 0);
            }
        }
    weir__partials_destroy (&t);
    //  Words at every place near a page's end, where their bytes are not
    //  read 16 at a time, and just after, where they are: the same hash,
    //  and the same key for a table
    static char big[70000];
    for (size_t i = 0; i < WEIR__KEY_STR_SHORT; i++)
        big[i] = (char) ("Words' bytes\xc3\xa9"[i]);
    char *page = aligned_alloc (4096, 8192);
    ck_assert_ptr_nonnull (page);
    for (size_t i = 0; i < 8192; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        page[i] = (char) (seed >> 56);
    }
    t = weir__partials_new (8);
    ck_assert_ptr_nonnull (t);
    for (size_t n = 0; n <= WEIR__KEY_STR_SHORT; n++)
        for (size_t at = 4096 - 20; at <= 4096 + 4; at++) {
            //  The same word at every place, random bytes after it
            char *w = page + at;
            memcpy (w, big, n);
#if defined(__x86_64__)
            ck_assert_int_eq (weir__key_str_readable (w, n), n && (at <= 4096 - 16 || at >= 4096));
#else
            ck_assert_int_eq (weir__key_str_readable (w, n), 0);
#endif
            int fresh;
            uint64_t *v = weir__partials_upsert_str (t, w, n, &fresh);
            ck_assert_ptr_nonnull (v);
            ck_assert_msg (fresh == (at == 4096 - 20), "a str of %zu bytes at %zu from a page's end", n,
                           4096 - at);
            ++*v;
        }
    ck_assert_uint_eq (weir__partials_count (t), WEIR__KEY_STR_SHORT + 1);
    free (page);
    //  An empty str may come with no bytes at all
    {
        int fresh;
        uint64_t *v = weir__partials_upsert (t, "\xa0", 1, &fresh);
        ck_assert_ptr_nonnull (v);
        ck_assert_int_eq (fresh, 0);
        ck_assert_ptr_eq (weir__partials_upsert_str (t, NULL, 0, &fresh), v);
        ck_assert_int_eq (fresh, 0);
    }
    weir__partials_destroy (&t);
    //  A str of every header length, given as its bytes, is the key the
    //  str packed is, in a producer's table
    memset (big, 'x', sizeof big);
    size_t lens[] = {0, 31, 32, 255, 256, 65535, 65536, 69999};
    weir__partials *heads = weir__partials_new (8);
    ck_assert_ptr_nonnull (heads);
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        s_str_key (big, lens[k], &b);
        int fresh;
        uint64_t *v = weir__partials_upsert_str (heads, big, lens[k], &fresh);
        ck_assert_ptr_nonnull (v);
        ck_assert_int_eq (fresh, 1);
        *v = lens[k] + 1;
        v = weir__partials_upsert (heads, b.data, b.len, &fresh);
        ck_assert_ptr_nonnull (v);
        ck_assert_int_eq (fresh, 0);
        ck_assert_uint_eq (*v, lens[k] + 1);
    }
    weir__partials_destroy (&heads);
    weir__batch_release (&b);
}
END_TEST

//  A word of 10 bytes made from SEED, and the table's hash of its key
typedef struct {
    uint32_t hash;
    uint32_t seed;
} s_word_hash;

static void s_word_of (uint32_t seed, char *word)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < 10; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        word[i] = (char) ('a' + (x >> 59));
    }
}

static int s_by_hash (const void *a, const void *b)
{
    const s_word_hash *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

START_TEST (test_partials_keys_of_one_hash)
{
    //  Two words whose keys share the table's hash (the low 32 bits it
    //  keeps), found among 200,000: each is its own key, through the
    //  look-up of words and through canonical bytes alike
    enum { N = 200000 };
    s_word_hash *all = malloc (N * sizeof *all);
    ck_assert_ptr_nonnull (all);
    for (uint32_t i = 0; i < N; i++) {
        char key[16] = {(char) 0xaa};
        s_word_of (i, key + 1);
        uint64_t lo, hi;
        memcpy (&lo, key, 8);
        memcpy (&hi, key + 8, 8);
        all[i].hash = (uint32_t) weir__partials_hash16 (lo, hi, 0, 11);
        all[i].seed = i;
    }
    qsort (all, N, sizeof *all, s_by_hash);
    size_t i = 1;
    while (i < N && all[i].hash != all[i - 1].hash)
        i++;
    ck_assert_msg (i < N, "no two keys of one hash among %d", N);
    //  In a 64-byte buffer: read 16 bytes at a time
    char *words = aligned_alloc (64, 64);
    ck_assert_ptr_nonnull (words);
    s_word_of (all[i - 1].seed, words);
    s_word_of (all[i].seed, words + 32);
    ck_assert_int_ne (memcmp (words, words + 32, 10), 0);
    weir__partials *t = weir__partials_new (8);
    ck_assert_ptr_nonnull (t);
    int fresh;
    uint64_t *a = weir__partials_upsert_str (t, words, 10, &fresh);
    ck_assert_ptr_nonnull (a);
    ck_assert_int_eq (fresh, 1);
    *a = 1;
    uint64_t *b = weir__partials_upsert_str (t, words + 32, 10, &fresh);
    ck_assert_ptr_nonnull (b);
    ck_assert_int_eq (fresh, 1);
    ck_assert_ptr_ne (a, b);
    *b = 2;
    ck_assert_ptr_eq (weir__partials_find_str (t, words, 10), a);
    ck_assert_ptr_eq (weir__partials_find_str (t, words + 32, 10), b);
    char key[11] = {(char) 0xaa};
    memcpy (key + 1, words + 32, 10);
    ck_assert_ptr_eq (weir__partials_upsert (t, key, 11, &fresh), b);
    ck_assert_int_eq (fresh, 0);
    ck_assert_uint_eq (weir__partials_count (t), 2);
    weir__partials_destroy (&t);
    free (words);
    free (all);
}
END_TEST

START_TEST (test_partials)
{
    ck_assert_ptr_null (weir__partials_new (WEIR__PARTIALS_VALUE_MAX + 1));
    weir__partials *t = weir__partials_new (16);
    ck_assert_ptr_nonnull (t);
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 64), 0);
    //  Short keys kept in their slot and long ones in the arena, one
    //  table grown many times over, then emptied and used again
    for (int pass = 0; pass < 2; pass++) {
        char word[64];
        for (uint64_t i = 0; i < 30000; i++) {
            uint64_t k = i % 10000;
            //  Keys 0-4999 short, the rest past the room in a slot
            int n = k < 5000 ? snprintf (word, sizeof word, "w%llu", (unsigned long long) k)
                             : snprintf (word, sizeof word, "a long key, longer than a slot holds: %llu",
                                         (unsigned long long) k);
            int fresh;
            uint64_t *v;
            //  Each key in both forms: a str's bytes, and canonical bytes
            if (i % 2 == 0 && n <= WEIR__KEY_STR_SHORT)
                v = weir__partials_upsert_str (t, word, (size_t) n, &fresh);
            else {
                s_str_key (word, (size_t) n, &b);
                v = i % 3 ? weir__partials_upsert (t, b.data, b.len, &fresh)
                          : weir__partials_upsert_str (t, word, (size_t) n, &fresh);
            }
            ck_assert_ptr_nonnull (v);
            ck_assert_int_eq (fresh, i < 10000);
            v[0] += 1;
            v[1] += k;
        }
        ck_assert_uint_eq (weir__partials_count (t), 10000);
        for (size_t i = 0; i < 10000; i++) {
            const char *key;
            size_t len;
            uint64_t *v = weir__partials_entry (t, i, &key, &len);
            int n = i < 5000 ? snprintf (word, sizeof word, "w%zu", i)
                             : snprintf (word, sizeof word, "a long key, longer than a slot holds: %zu", i);
            s_str_key (word, (size_t) n, &b);
            ck_assert_uint_eq (len, b.len);
            ck_assert_int_eq (memcmp (key, b.data, len), 0);
            ck_assert_uint_eq (v[0], 3);
            ck_assert_uint_eq (v[1], 3 * i);
        }
        weir__partials_clear (t);
        ck_assert_uint_eq (weir__partials_count (t), 0);
    }
    //  Keys of every length from 1 to 40 bytes (kept in their slot, past
    //  the 16 bytes a word's look-up compares, and in the arena), each a
    //  prefix of the next, that differ only by zeros past their end: each
    //  its own
    weir__partials_clear (t);
    char pattern[40];
    memset (pattern, 0, sizeof pattern);
    memcpy (pattern,
            "\xae"
            "zeros after me",
            15);
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < sizeof pattern; k++) {
            //  Longest first: a key, then the same with fewer zeros after
            //  it
            size_t len = round == 0 ? sizeof pattern - k : k + 1;
            int fresh;
            uint64_t *v = weir__partials_upsert (t, pattern, len, &fresh);
            ck_assert_ptr_nonnull (v);
            ck_assert_int_eq (fresh, round == 0);
            if (round == 0)
                *v = len;
            ck_assert_uint_eq (*v, len);
        }
    ck_assert_uint_eq (weir__partials_count (t), sizeof pattern);
    //  The word of the first 15 bytes' key, looked up as a str, is the
    //  key of 15 bytes and no other
    {
        int fresh;
        uint64_t *v = weir__partials_upsert_str (t, "zeros after me", 14, &fresh);
        ck_assert_ptr_nonnull (v);
        ck_assert_int_eq (fresh, 0);
        ck_assert_uint_eq (*v, 15);
    }
    weir__partials_clear (t);
    //  A few keys after many: the clear slot by slot leaves none behind
    int fresh;
    for (int round = 0; round < 3; round++) {
        ck_assert_ptr_nonnull (weir__partials_upsert (t, "\xa1x", 2, &fresh));
        ck_assert_int_eq (fresh, 1);
        ck_assert_ptr_nonnull (weir__partials_upsert_str (t, "x", 1, &fresh));
        ck_assert_int_eq (fresh, 0);
        ck_assert_uint_eq (weir__partials_count (t), 1);
        weir__partials_clear (t);
    }
    weir__batch_release (&b);
    weir__partials_destroy (&t);
    ck_assert_ptr_null (t);
    weir__partials_destroy (&t);
}
END_TEST

Suite *check_suite (void)
{

    Suite *s = suite_create ("key");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_one_value_one_key);
    tcase_add_test (tc, test_bad_paths_name_their_column);
    tcase_add_test (tc, test_groups_have_one_owner_each);
    tcase_add_test (tc, test_table_grows_saves_and_loads);
    tcase_add_test (tc, test_table_deletes);
    tcase_add_test (tc, test_table_of_bytes);
    tcase_add_test (tc, test_str_key_in_partials);
    tcase_add_test (tc, test_partials);
    tcase_add_test (tc, test_partials_keys_of_one_hash);
    suite_add_tcase (s, tc);
    return s;
}
