/*  tests/check_hogwild_record.c - the softmax plugin's reading of record
    bytes (examples/hogwild/record.h): the numbers are those the msgpack
    objects give, every other form is left to the objects, and no prefix
    of a record is read past its end.  */
#include <math.h>
#include <msgpack.h>
#include <stdint.h>
#include <string.h>

#include "examples/hogwild/record.h"
#include "testutil.h"
#include "tests/sparsebins.h"

//  A number as softmax makes it of a decoded msgpack object
static float s_object_number (const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return (float) (double) o->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (float) (double) o->via.i64;
    default: return (float) o->via.f64;
    }
}

//  Every prefix of a record is read within its bytes: refused, or, for a
//  bin, a head whose bytes lie inside (a copy of exactly LEN bytes, so
//  that a read past it shows under the sanitizers)
static void s_check_prefixes (const char *data, size_t len)
{
    uint64_t indexes[64];
    float values[64];
    for (size_t cut = 0; cut < len; cut++) {
        char *copy = malloc (cut ? cut : 1);
        memcpy (copy, data, cut);
        record_head h;
        if (record_head_parse (copy, cut, &h)) {
            if (h.form == RECORD_PAIRS) {
                ck_assert_uint_le (h.n, 64);
                ck_assert_int_eq (record_pairs (&h, indexes, values), 0);
            }
            else if (h.form == RECORD_NUMBERS) {
                ck_assert_uint_le (h.n, 64);
                ck_assert_int_eq (record_numbers (&h, values), 0);
            }
            else if (h.form == RECORD_SPARSE) {
                //  Both bins whole inside: reading them cannot over-read
                ck_assert_uint_le (h.n, 64);
                ck_assert (h.bytes + 4 * h.n <= (const uint8_t *) copy + cut);
                ck_assert (h.items + 4 * h.n <= (const uint8_t *) copy + cut);
                model_sparse_le32 (h.bytes, h.items, h.n, indexes, values);
            }
            else
                ck_assert (h.bytes + h.n <= (const uint8_t *) copy + cut);
        }
        free (copy);
    }
}

//  The N numbers (and indexes, for a map) read from the record in SB are
//  those of its decoded objects, to the bit
static void s_same_as_objects (const msgpack_sbuffer *sb, const uint64_t *indexes, const float *values,
                               size_t n)
{
    msgpack_zone zone;
    msgpack_zone_init (&zone, 4096);
    msgpack_object rec;
    size_t off = 0;
    ck_assert_int_eq (msgpack_unpack (sb->data, sb->size, &off, &zone, &rec), MSGPACK_UNPACK_SUCCESS);
    const msgpack_object *features = &rec.via.array.ptr[1];
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *o;
        if (features->type == MSGPACK_OBJECT_MAP) {
            ck_assert_uint_eq (indexes[i], features->via.map.ptr[i].key.via.u64);
            o = &features->via.map.ptr[i].val;
        }
        else
            o = &features->via.array.ptr[i];
        float want = s_object_number (o);
        ck_assert_msg (!memcmp (&values[i], &want, sizeof want), "item %zu: %a, the objects give %a", i,
                       (double) values[i], (double) want);
    }
    msgpack_zone_destroy (&zone);
}

//  Packs [LABEL, {i * 3: value}] for i below 300 into SB, the values of
//  KIND: 0 float32s, 1 counts (fixints and uint8s mixed), 2 float64s and
//  float32s in turn, 3 float64s with one float32 among them (at 150)
static void s_pack_pairs (msgpack_sbuffer *sb, uint64_t label, int kind)
{
    msgpack_sbuffer_init (sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_uint64 (&pk, label);
    msgpack_pack_map (&pk, 300);
    for (unsigned i = 0; i < 300; i++) {
        msgpack_pack_uint64 (&pk, i * 3);
        if (kind == 0)
            msgpack_pack_float (&pk, (float) i / 7);
        else if (kind == 1)
            msgpack_pack_uint8 (&pk, (uint8_t) (i * 37));
        else if (kind == 2 && i % 2)
            msgpack_pack_double (&pk, i / 3.0);
        else if (kind == 2)
            msgpack_pack_float (&pk, (float) i / 3);
        else if (i == 150)
            msgpack_pack_float (&pk, 0.5f);
        else
            msgpack_pack_double (&pk, i / 255.0);
    }
}

//  Packs [LABEL, {index: value}] with every width of index and every
//  encoding of number the packer makes, and compares the pairs read with
//  the decoded objects'
START_TEST (test_pairs_as_objects)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_uint64 (&pk, 300);  //  a label as a uint16
    const uint64_t keys[] = {0,          5,   127, 128, 255, 256, 65535, 65536, 4294967295ull, 4294967296ull,
                             UINT64_MAX, 700, 701, 702, 703, 704, 705,   706,   707,           708,
                             709,        710};
    size_t n = sizeof keys / sizeof *keys;
    msgpack_pack_map (&pk, (uint32_t) n);
    for (size_t i = 0; i < n; i++) {
        msgpack_pack_uint64 (&pk, keys[i]);
        switch (i % 11) {
        case 0: msgpack_pack_double (&pk, 0.1 * (double) i + 1e-9); break;
        case 1: msgpack_pack_float (&pk, 0.25f * (float) i); break;
        case 2: msgpack_pack_int64 (&pk, -1); break;  //  a negative fixint
        case 3: msgpack_pack_int64 (&pk, -100); break;
        case 4: msgpack_pack_int64 (&pk, -30000); break;
        case 5: msgpack_pack_int64 (&pk, -2000000000); break;
        case 6: msgpack_pack_int64 (&pk, INT64_MIN); break;
        case 7: msgpack_pack_uint64 (&pk, 200); break;
        case 8: msgpack_pack_uint64 (&pk, 60000); break;
        case 9: msgpack_pack_uint64 (&pk, 16777217); break;  //  rounds as double, then float
        default: msgpack_pack_uint64 (&pk, UINT64_MAX); break;
        }
    }
    record_head h;
    ck_assert_int_eq (record_head_parse (sb.data, sb.size, &h), 1);
    ck_assert_int_eq (h.labeled, 1);
    ck_assert_uint_eq (h.label, 300);
    ck_assert_int_eq (h.form, RECORD_PAIRS);
    ck_assert_uint_eq (h.n, n);
    uint64_t indexes[64];
    float values[64];
    ck_assert_int_eq (record_pairs (&h, indexes, values), 1);

    s_same_as_objects (&sb, indexes, values, n);
    s_check_prefixes (sb.data, sb.size);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  An array of numbers in every encoding: the objects' numbers
START_TEST (test_numbers_as_objects)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_uint64 (&pk, 4);
    msgpack_pack_array (&pk, 20);  //  an array16
    for (int i = 0; i < 20; i++)
        switch (i % 10) {
        case 0: msgpack_pack_double (&pk, 1.0 / 3 + i); break;
        case 1: msgpack_pack_float (&pk, 0.75f * (float) i); break;
        case 2: msgpack_pack_int64 (&pk, -7); break;
        case 3: msgpack_pack_int64 (&pk, -129); break;
        case 4: msgpack_pack_int64 (&pk, -70000); break;
        case 5: msgpack_pack_int64 (&pk, INT64_MIN + 1); break;
        case 6: msgpack_pack_uint64 (&pk, (uint64_t) i); break;
        case 7: msgpack_pack_uint64 (&pk, 255); break;
        case 8: msgpack_pack_uint64 (&pk, 1ull << 40); break;
        default: msgpack_pack_uint64 (&pk, UINT64_MAX - 1); break;
        }
    record_head h;
    ck_assert_int_eq (record_head_parse (sb.data, sb.size, &h), 1);
    ck_assert_int_eq (h.form, RECORD_NUMBERS);
    ck_assert_uint_eq (h.label, 4);
    ck_assert_uint_eq (h.n, 20);
    float values[20];
    ck_assert_int_eq (record_numbers (&h, values), 1);
    s_same_as_objects (&sb, NULL, values, 20);
    s_check_prefixes (sb.data, sb.size);
    msgpack_sbuffer_destroy (&sb);

    //  A fixarray, and numbers of another type refused
    const uint8_t fix[] = {0x92, 0x00, 0x93, 0x01, 0xff, 0xcc, 0xc8};
    ck_assert_int_eq (record_head_parse (fix, sizeof fix, &h), 1);
    ck_assert_int_eq (h.form, RECORD_NUMBERS);
    ck_assert_int_eq (record_numbers (&h, values), 1);
    ck_assert (values[0] == 1.0f && values[1] == -1.0f && values[2] == 200.0f);
    const uint8_t str[] = {0x92, 0x00, 0x92, 0x01, 0xa1, 'x'};
    ck_assert_int_eq (record_head_parse (str, sizeof str, &h), 1);
    ck_assert_int_eq (record_numbers (&h, values), 0);
    const uint8_t nil[] = {0x92, 0x00, 0x91, 0xc0};
    ck_assert_int_eq (record_head_parse (nil, sizeof nil, &h), 1);
    ck_assert_int_eq (record_numbers (&h, values), 0);
}
END_TEST

//  The libsvm reader's pairs, fixint, uint8 and uint16 indexes with
//  float64 values, taken by the fast loop, and a pair of another shape
//  among them
START_TEST (test_reader_pairs)
{
    msgpack_sbuffer sb;
    s_pack_pairs (&sb, 9, 3);
    record_head h;
    ck_assert_int_eq (record_head_parse (sb.data, sb.size, &h), 1);
    ck_assert_uint_eq (h.label, 9);
    static uint64_t indexes[300];
    static float values[300];
    ck_assert_int_eq (record_pairs (&h, indexes, values), 1);
    for (unsigned i = 0; i < 300; i++) {
        ck_assert_uint_eq (indexes[i], i * 3);
        ck_assert (values[i] == (i == 150 ? 0.5f : (float) (i / 255.0)));
    }
    //  A value of another type at the end of the fast loop's reach
    char *copy = malloc (sb.size);
    memcpy (copy, sb.data, sb.size);
    copy[sb.size - 9] = (char) 0xc0;  //  nil in place of the last float64's type
    ck_assert_int_eq (record_head_parse (copy, sb.size, &h), 1);
    ck_assert_int_eq (record_pairs (&h, indexes, values), 0);
    free (copy);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  The other shapes the fast loop takes: float32 values, counts as
//  fixints and uint8s mixed, float64 and float32 mixed; the numbers are
//  the objects'
START_TEST (test_reader_pair_kinds)
{
    for (int kind = 0; kind < 3; kind++) {
        msgpack_sbuffer sb;
        s_pack_pairs (&sb, 2, kind);
        record_head h;
        ck_assert_int_eq (record_head_parse (sb.data, sb.size, &h), 1);
        static uint64_t indexes[300];
        static float values[300];
        ck_assert_int_eq (record_pairs (&h, indexes, values), 1);
        for (unsigned i = 0; i < 300; i++)
            ck_assert_uint_eq (indexes[i], i * 3);
        s_same_as_objects (&sb, indexes, values, 300);
        msgpack_sbuffer_destroy (&sb);
    }
}
END_TEST

START_TEST (test_bin_and_nil_label)
{
    const uint8_t fix[] = {0x92, 0x07, 0xc4, 3, 10, 20, 30};
    record_head h;
    ck_assert_int_eq (record_head_parse (fix, sizeof fix, &h), 1);
    ck_assert_int_eq (h.form, RECORD_BYTES);
    ck_assert_uint_eq (h.label, 7);
    ck_assert_uint_eq (h.n, 3);
    ck_assert_ptr_eq (h.bytes, fix + 4);
    s_check_prefixes ((const char *) fix, sizeof fix);

    const uint8_t nil[] = {0x92, 0xc0, 0xc5, 0, 2, 1, 2};
    ck_assert_int_eq (record_head_parse (nil, sizeof nil, &h), 1);
    ck_assert_int_eq (h.labeled, 0);
    ck_assert_uint_eq (h.n, 2);
    ck_assert_ptr_eq (h.bytes, nil + 5);
    s_check_prefixes ((const char *) nil, sizeof nil);

    const uint8_t bin32[] = {0x92, 0xcd, 1, 0, 0xc6, 0, 0, 0, 1, 0xff};
    ck_assert_int_eq (record_head_parse (bin32, sizeof bin32, &h), 1);
    ck_assert_uint_eq (h.label, 256);
    ck_assert_uint_eq (h.n, 1);
    ck_assert_uint_eq (h.bytes[0], 0xff);
    s_check_prefixes ((const char *) bin32, sizeof bin32);

    const uint8_t empty[] = {0x92, 0x01, 0x80};
    ck_assert_int_eq (record_head_parse (empty, sizeof empty, &h), 1);
    ck_assert_int_eq (h.form, RECORD_PAIRS);
    ck_assert_uint_eq (h.n, 0);
    ck_assert_int_eq (record_pairs (&h, NULL, NULL), 1);
}
END_TEST

//  [label, [indexes, values]] of N features as two bins of little-endian
//  words into SB
static void s_pack_sparse (msgpack_sbuffer *sb, uint64_t label, const uint32_t *index, const float *value,
                           size_t n)
{
    msgpack_sbuffer_init (sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_uint64 (&pk, label);
    sparsebins_pack (&pk, index, value, n);
}

//  [indexes, values]: the words' values to the bit, whatever the host's
//  byte order, in bins 8 and 16
START_TEST (test_sparse_bins)
{
    uint32_t index[200];
    float value[200];
    const float odd[] = {-0.0f, 1e-45f, NAN, 3.4028235e38f, -INFINITY, 0.1f};
    for (size_t i = 0; i < 200; i++) {
        index[i] = i == 1 ? 4294967295u : (uint32_t) (i * 70001);
        value[i] = i < 6 ? odd[i] : (float) i / 3;
    }
    for (size_t n = 0; n <= 200; n += 50) {
        msgpack_sbuffer sb;
        s_pack_sparse (&sb, 9, index, value, n ? n : 5);
        size_t want = n ? n : 5;
        record_head h;
        ck_assert_int_eq (record_head_parse (sb.data, sb.size, &h), 1);
        ck_assert_int_eq (h.form, RECORD_SPARSE);
        ck_assert_uint_eq (h.label, 9);
        ck_assert_uint_eq (h.n, want);
        uint64_t indexes[200];
        float values[200];
        model_sparse_le32 (h.bytes, h.items, h.n, indexes, values);
        for (size_t i = 0; i < want; i++) {
            ck_assert_uint_eq (indexes[i], index[i]);
            ck_assert_msg (!memcmp (&values[i], &value[i], sizeof value[i]), "value %zu: %a, not %a", i,
                           (double) values[i], (double) value[i]);
        }
        if (want <= 50)
            s_check_prefixes (sb.data, sb.size);
        msgpack_sbuffer_destroy (&sb);
    }
    //  No features: two empty bins
    const uint8_t empty[] = {0x92, 0x03, 0x92, 0xc4, 0, 0xc4, 0};
    record_head h;
    ck_assert_int_eq (record_head_parse (empty, sizeof empty, &h), 1);
    ck_assert_int_eq (h.form, RECORD_SPARSE);
    ck_assert_uint_eq (h.n, 0);
    //  Before any room is made its arrays are NULL: nothing is copied
    model_sparse_le32 (h.bytes, h.items, h.n, NULL, NULL);
    size_t n;
    ck_assert_int_eq (record_sparse_count (8, 8, &n), 1);
    ck_assert_uint_eq (n, 2);
    ck_assert_int_eq (record_sparse_count (8, 4, &n), 0);
    ck_assert_int_eq (record_sparse_count (6, 6, &n), 0);
}
END_TEST

//  Every other form is left to the objects, which name what is wrong
START_TEST (test_other_forms)
{
    static const struct {
        const char *why;
        uint8_t bytes[16];
        size_t len;
    } cases[] = {
        {"not an array", {0x07}, 1},
        {"an array of three", {0x93, 0x01, 0x80, 0x01}, 4},
        {"an array16 of two", {0xdc, 0, 2, 0x01, 0x80}, 5},
        {"a negative label", {0x92, 0xff, 0x80}, 3},
        {"a label as an int8", {0x92, 0xd0, 0x05, 0x80}, 4},
        {"a float label", {0x92, 0xca, 0x3f, 0x80, 0, 0, 0x80}, 7},
        {"a str label", {0x92, 0xa1, 'a', 0x80}, 4},
        {"str features", {0x92, 0x01, 0xa1, 'a'}, 4},
        {"a bin longer than the record", {0x92, 0x01, 0xc4, 5, 1, 2}, 6},
        {"a map that says more pairs than its bytes hold", {0x92, 0x01, 0xde, 0x01, 0x00, 0x01, 0x02}, 7},
        {"an array that says more numbers than its bytes hold",
         {0x92, 0x01, 0xdc, 0x00, 0x03, 0x01, 0x02},
         7},
        {"no features", {0x92, 0x01}, 2},
        {"[indexes, values] of 0 and 4 bytes", {0x92, 0x01, 0x92, 0xc4, 0, 0xc4, 4, 0, 0, 0, 0}, 11},
        {"[indexes, values] of 3 bytes each", {0x92, 0x01, 0x92, 0xc4, 3, 1, 0, 0, 0xc4, 3, 0, 0, 0}, 13},
        {"[indexes, a number]", {0x92, 0x01, 0x92, 0xc4, 0, 0x01}, 6},
        {"[indexes, values] whose values are cut", {0x92, 0x01, 0x92, 0xc4, 4, 1, 0, 0, 0, 0xc4, 4, 0}, 12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        record_head h;
        ck_assert_msg (!record_head_parse (cases[i].bytes, cases[i].len, &h), "%s was read", cases[i].why);
    }
    //  Pairs refused: a negative index, a str index, an int8 index, a nil
    //  value, a str value, a bool value
    static const struct {
        const char *why;
        uint8_t bytes[8];
        size_t len;
    } pairs[] = {
        {"a negative index", {0x92, 0x01, 0x81, 0xff, 0x01}, 5},
        {"a str index", {0x92, 0x01, 0x81, 0xa1, 'a', 0x01}, 6},
        {"an int8 index", {0x92, 0x01, 0x81, 0xd0, 0x01, 0x01}, 6},
        {"a nil value", {0x92, 0x01, 0x81, 0x01, 0xc0}, 5},
        {"a str value", {0x92, 0x01, 0x81, 0x01, 0xa1, 'a'}, 6},
        {"a true value", {0x92, 0x01, 0x81, 0x01, 0xc3}, 5},
    };
    uint64_t indexes[4];
    float values[4];
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        record_head h;
        ck_assert_int_eq (record_head_parse (pairs[i].bytes, pairs[i].len, &h), 1);
        ck_assert_msg (!record_pairs (&h, indexes, values), "%s was read", pairs[i].why);
    }
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("hogwild_record");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_pairs_as_objects);
    tcase_add_test (tc, test_reader_pairs);
    tcase_add_test (tc, test_reader_pair_kinds);
    tcase_add_test (tc, test_numbers_as_objects);
    tcase_add_test (tc, test_bin_and_nil_label);
    tcase_add_test (tc, test_other_forms);
    tcase_add_test (tc, test_sparse_bins);
    suite_add_tcase (s, tc);
    return s;
}
