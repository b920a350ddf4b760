/*  tests/check_pack.c - our msgpack encoder writes the same bytes as
    msgpack-c's packer, for every kind of object and at every size
    boundary.  */
#include "lib/batch.h"
#include "lib/pack.h"
#include "tests/testutil.h"

//  Pack O both ways and compare the bytes.
static void s_same (const msgpack_object *o)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_object (&pk, *o);
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 16), 0);
    ck_assert_int_eq (weir__pack_object (&b, o), 0);
    ck_assert_uint_eq (weir__batch_payload (&b), sb.size);
    ck_assert (memcmp (b.data + WEIR__BATCH_HEADER, sb.data, sb.size) == 0);
    weir__batch_release (&b);
    msgpack_sbuffer_destroy (&sb);
}

START_TEST (test_integers_at_every_boundary)
{
    const int64_t edges[] = {0,
                             1,
                             31,
                             32,
                             127,
                             128,
                             255,
                             256,
                             65535,
                             65536,
                             4294967295ll,
                             4294967296ll,
                             INT64_MAX,
                             -1,
                             -31,
                             -32,
                             -33,
                             -127,
                             -128,
                             -129,
                             -32767,
                             -32768,
                             -32769,
                             INT32_MIN + 1ll,
                             INT32_MIN,
                             INT32_MIN - 1ll,
                             INT64_MIN};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        msgpack_object o;
        o.type = edges[i] < 0 ? MSGPACK_OBJECT_NEGATIVE_INTEGER : MSGPACK_OBJECT_POSITIVE_INTEGER;
        o.via.i64 = edges[i];
        s_same (&o);
        //  And through the int64 fast path used by readers
        msgpack_sbuffer sb;
        msgpack_sbuffer_init (&sb);
        msgpack_packer pk;
        msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
        msgpack_pack_int64 (&pk, edges[i]);
        weir__batch b;
        weir__batch_init (&b, 16);
        ck_assert_int_eq (weir__pack_int64 (&b, edges[i]), 0);
        ck_assert_uint_eq (weir__batch_payload (&b), sb.size);
        ck_assert (memcmp (b.data + WEIR__BATCH_HEADER, sb.data, sb.size) == 0);
        weir__batch_release (&b);
        msgpack_sbuffer_destroy (&sb);
    }
    msgpack_object o = {.type = MSGPACK_OBJECT_POSITIVE_INTEGER, .via.u64 = UINT64_MAX};
    s_same (&o);
}
END_TEST

START_TEST (test_strings_bins_exts_at_every_boundary)
{
    static char data[70000];
    memset (data, 'x', sizeof data);
    const uint32_t sizes[] = {0, 1, 2, 4, 8, 16, 17, 31, 32, 255, 256, 65535, 65536, 69999};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        msgpack_object o;
        o.type = MSGPACK_OBJECT_STR;
        o.via.str.ptr = data;
        o.via.str.size = sizes[i];
        s_same (&o);
        o.type = MSGPACK_OBJECT_BIN;
        o.via.bin.ptr = data;
        o.via.bin.size = sizes[i];
        s_same (&o);
        o.type = MSGPACK_OBJECT_EXT;
        o.via.ext.type = -3;
        o.via.ext.ptr = data;
        o.via.ext.size = sizes[i];
        s_same (&o);
    }
}
END_TEST

START_TEST (test_containers_floats_and_the_rest)
{
    //  Decode a record holding every kind, then re-encode it
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 3);
    msgpack_pack_str_with_body (&pk, "list", 4);
    msgpack_pack_array (&pk, 21);
    for (int i = 0; i < 16; i++)
        msgpack_pack_int (&pk, i - 8);
    msgpack_pack_nil (&pk);
    msgpack_pack_true (&pk);
    msgpack_pack_false (&pk);
    msgpack_pack_float (&pk, 1.25f);
    msgpack_pack_double (&pk, -0.1);
    msgpack_pack_str_with_body (&pk, "big", 3);
    msgpack_pack_array (&pk, 70000);
    for (int i = 0; i < 70000; i++)
        msgpack_pack_int (&pk, i);
    msgpack_pack_str_with_body (&pk, "m", 1);
    msgpack_pack_map (&pk, 17);
    for (int i = 0; i < 17; i++) {
        msgpack_pack_int (&pk, i);
        msgpack_pack_map (&pk, 0);
    }
    msgpack_zone zone;
    msgpack_zone_init (&zone, 4096);
    msgpack_object o;
    size_t off = 0;
    ck_assert_int_eq (msgpack_unpack (sb.data, sb.size, &off, &zone, &o), MSGPACK_UNPACK_SUCCESS);
    s_same (&o);
    //  The float32 stays a float32 (5 bytes), as msgpack-c keeps it
    weir__batch b;
    weir__batch_init (&b, 16);
    ck_assert_int_eq (weir__pack_object (&b, &o.via.map.ptr[0].val.via.array.ptr[19]), 0);
    ck_assert_uint_eq (weir__batch_payload (&b), 5);
    weir__batch_release (&b);
    msgpack_zone_destroy (&zone);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  weir__records_next decodes scalars itself; it must agree with
//  msgpack-c on every encoding, including signed encodings of
//  non-negative values and truncated input.
START_TEST (test_scalar_decoding_matches_msgpack_c)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    const int64_t values[] = {0,         5,         127,          -1,        -32,      -33,
                              -128,      -129,      200,          -32768,    40000,    -40000,
                              INT32_MIN, INT32_MAX, 5000000000ll, INT64_MIN, INT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        int64_t v = values[i];
        msgpack_pack_int64 (&pk, v);
        if (v >= INT8_MIN && v <= INT8_MAX)
            msgpack_pack_fix_int8 (&pk, (int8_t) v);
        if (v >= INT16_MIN && v <= INT16_MAX)
            msgpack_pack_fix_int16 (&pk, (int16_t) v);
        if (v >= INT32_MIN && v <= INT32_MAX)
            msgpack_pack_fix_int32 (&pk, (int32_t) v);
        msgpack_pack_fix_int64 (&pk, v);
        if (v >= 0) {
            msgpack_pack_fix_uint64 (&pk, (uint64_t) v);
            if (v <= UINT8_MAX)
                msgpack_pack_fix_uint8 (&pk, (uint8_t) v);
            if (v <= UINT16_MAX)
                msgpack_pack_fix_uint16 (&pk, (uint16_t) v);
            if (v <= UINT32_MAX)
                msgpack_pack_fix_uint32 (&pk, (uint32_t) v);
        }
    }
    msgpack_pack_uint64 (&pk, UINT64_MAX);
    msgpack_pack_nil (&pk);
    msgpack_pack_true (&pk);
    msgpack_pack_false (&pk);
    static char text[70000];
    memset (text, 'y', sizeof text);
    const size_t sizes[] = {0, 1, 31, 32, 255, 256, 65535, 65536, 70000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        msgpack_pack_str_with_body (&pk, text, sizes[i]);
    //  str8 written by hand: msgpack-c never uses it below 32 bytes
    msgpack_sbuffer_write (&sb,
                           "\xd9\x03"
                           "abc",
                           5);
    msgpack_pack_double (&pk, 2.5);

    weir__records it;
    weir__records_init (&it);
    weir__records_reset (&it, sb.data, sb.size);
    msgpack_zone zone;
    msgpack_zone_init (&zone, 4096);
    size_t off = 0;
    msgpack_object ours, theirs;
    int n = 0;
    while (weir__records_next (&it, &ours) == 1) {
        ck_assert_int_eq (msgpack_unpack (sb.data, sb.size, &off, &zone, &theirs),
                          off == sb.size ? MSGPACK_UNPACK_SUCCESS : MSGPACK_UNPACK_EXTRA_BYTES);
        ck_assert_msg (msgpack_object_equal (ours, theirs), "record %d differs", n);
        ck_assert_int_eq (ours.type, theirs.type);
        ck_assert_uint_eq (it.off, off);
        n++;
    }
    ck_assert_uint_eq (off, sb.size);
    ck_assert_int_gt (n, 80);

    //  Truncated scalars are errors, not reads past the end
    const char *cut[] = {"\xcd\x01", "\xd2\x00\x00",
                         "\xa5"
                         "ab",
                         "\xda\x00\x10"
                         "xyz",
                         "\xcf"};
    const size_t cut_len[] = {2, 3, 3, 6, 1};
    for (size_t i = 0; i < 5; i++) {
        weir__records_reset (&it, cut[i], cut_len[i]);
        ck_assert_int_eq (weir__records_next (&it, &ours), -1);
    }
    msgpack_zone_destroy (&zone);
    weir__records_release (&it);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("pack");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_integers_at_every_boundary);
    tcase_add_test (tc, test_strings_bins_exts_at_every_boundary);
    tcase_add_test (tc, test_containers_floats_and_the_rest);
    tcase_add_test (tc, test_scalar_decoding_matches_msgpack_c);
    suite_add_tcase (s, tc);
    return s;
}
