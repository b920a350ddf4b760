/*  tests/check_unpack.c - weir__unpack against msgpack_unpack itself.

    weir__unpack stands in for msgpack-c's unpacker where batches are
    decoded, so every plugin sees what msgpack_unpack would have given:
    these tests decode the same bytes with both and compare the objects,
    type for type and byte for byte (strings pointing at the same place),
    over every format, random nested records, every prefix of some, the
    depth limit, and random damage.  */
#include "config.h"

#include <math.h>
#include <msgpack.h>
#include <stdint.h>

#include "lib/scan.h"
#include "lib/unpack.h"
#include "testutil.h"

static char s_payload[70000];

//  Whether A and B are the same object; strings and the like must point
//  at the same bytes (both decoders point into the input), but for empty
//  ones, where msgpack-c's pointer is an accident of its state machine
static int s_same (const msgpack_object *a, const msgpack_object *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case MSGPACK_OBJECT_NIL: return 1;
    case MSGPACK_OBJECT_BOOLEAN: return a->via.boolean == b->via.boolean;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return a->via.u64 == b->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return a->via.i64 == b->via.i64;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return memcmp (&a->via.f64, &b->via.f64, sizeof a->via.f64) == 0;
    case MSGPACK_OBJECT_STR:
        return a->via.str.size == b->via.str.size && (!a->via.str.size || a->via.str.ptr == b->via.str.ptr);
    case MSGPACK_OBJECT_BIN:
        return a->via.bin.size == b->via.bin.size && (!a->via.bin.size || a->via.bin.ptr == b->via.bin.ptr);
    case MSGPACK_OBJECT_EXT:
        return a->via.ext.type == b->via.ext.type && a->via.ext.size == b->via.ext.size
               && (!a->via.ext.size || a->via.ext.ptr == b->via.ext.ptr);
    case MSGPACK_OBJECT_ARRAY:
        if (a->via.array.size != b->via.array.size)
            return 0;
        for (uint32_t i = 0; i < a->via.array.size; i++)
            if (!s_same (&a->via.array.ptr[i], &b->via.array.ptr[i]))
                return 0;
        return 1;
    case MSGPACK_OBJECT_MAP:
        if (a->via.map.size != b->via.map.size)
            return 0;
        for (uint32_t i = 0; i < a->via.map.size; i++)
            if (!s_same (&a->via.map.ptr[i].key, &b->via.map.ptr[i].key)
                || !s_same (&a->via.map.ptr[i].val, &b->via.map.ptr[i].val))
                return 0;
        return 1;
    }
    return 0;
}

//  Both decoders over DATA[0..LEN): the same result, the same end, and
//  when they succeed the same object.  STRICT: the same failure too (a
//  decoder may refuse damaged bytes for another reason than the other)
static void s_compare (const char *data, size_t len, int strict)
{
    //  Damaged bytes may declare a container of billions of elements,
    //  which msgpack-c tries to allocate (and AddressSanitizer aborts on):
    //  they go to msgpack-c only once the scan, which allocates nothing,
    //  took them; what the scan refuses weir__unpack must refuse too
    size_t extent, where;
    if (!strict && weir__scan (data, len, &extent, &where) != WEIR__SCAN_OK) {
        msgpack_zone z;
        ck_assert (msgpack_zone_init (&z, 2048));
        msgpack_object o;
        size_t off = 0;
        msgpack_unpack_return rc = weir__unpack (data, len, &off, &z, &o);
        ck_assert_msg (rc != MSGPACK_UNPACK_SUCCESS && rc != MSGPACK_UNPACK_EXTRA_BYTES,
                       "%zu bytes the scan refuses, decoded", len);
        ck_assert_uint_eq (off, 0);
        msgpack_zone_destroy (&z);
        return;
    }
    msgpack_zone za, zb;
    ck_assert (msgpack_zone_init (&za, 2048));
    ck_assert (msgpack_zone_init (&zb, 2048));
    msgpack_object a, b;
    size_t oa = 0, ob = 0;
    msgpack_unpack_return ra = msgpack_unpack (data, len, &oa, &za, &a);
    msgpack_unpack_return rb = weir__unpack (data, len, &ob, &zb, &b);
    int oka = ra == MSGPACK_UNPACK_SUCCESS || ra == MSGPACK_UNPACK_EXTRA_BYTES;
    int okb = rb == MSGPACK_UNPACK_SUCCESS || rb == MSGPACK_UNPACK_EXTRA_BYTES;
    ck_assert_msg (oka == okb, "%zu bytes, type 0x%02x: msgpack_unpack %d, weir__unpack %d", len,
                   len ? (unsigned char) data[0] : 0, ra, rb);
    if (oka) {
        ck_assert_int_eq (ra, rb);
        ck_assert_uint_eq (oa, ob);
        ck_assert_msg (s_same (&a, &b), "%zu bytes, type 0x%02x: the objects differ", len,
                       (unsigned char) data[0]);
    }
    else {
        if (strict)
            ck_assert_msg (ra == rb, "%zu bytes, type 0x%02x: msgpack_unpack %d, weir__unpack %d", len,
                           len ? (unsigned char) data[0] : 0, ra, rb);
        ck_assert_uint_eq (ob, 0);
    }
    msgpack_zone_destroy (&za);
    msgpack_zone_destroy (&zb);
}

typedef void (*s_packer) (msgpack_packer *pk);

#define S_PACK(name, body)                                                                                   \
    static void name (msgpack_packer *pk)                                                                    \
    {                                                                                                        \
        body;                                                                                                \
    }
S_PACK (p_fixint, msgpack_pack_int (pk, 5))
S_PACK (p_fixint_max, msgpack_pack_int (pk, 127))
S_PACK (p_negfixint, msgpack_pack_int (pk, -5))
S_PACK (p_negfixint_min, msgpack_pack_int (pk, -32))
S_PACK (p_nil, msgpack_pack_nil (pk))
S_PACK (p_false, msgpack_pack_false (pk))
S_PACK (p_true, msgpack_pack_true (pk))
S_PACK (p_uint8, msgpack_pack_fix_uint8 (pk, 200))
S_PACK (p_uint16, msgpack_pack_fix_uint16 (pk, 60000))
S_PACK (p_uint32, msgpack_pack_fix_uint32 (pk, 4000000000u))
S_PACK (p_uint64, msgpack_pack_fix_uint64 (pk, UINT64_MAX))
S_PACK (p_int8_neg, msgpack_pack_fix_int8 (pk, -100))
S_PACK (p_int8_pos, msgpack_pack_fix_int8 (pk, 100))
S_PACK (p_int8_zero, msgpack_pack_fix_int8 (pk, 0))
S_PACK (p_int16_neg, msgpack_pack_fix_int16 (pk, -30000))
S_PACK (p_int16_pos, msgpack_pack_fix_int16 (pk, 30000))
S_PACK (p_int32_min, msgpack_pack_fix_int32 (pk, INT32_MIN))
S_PACK (p_int32_pos, msgpack_pack_fix_int32 (pk, 7))
S_PACK (p_int64_min, msgpack_pack_fix_int64 (pk, INT64_MIN))
S_PACK (p_int64_max, msgpack_pack_fix_int64 (pk, INT64_MAX))
S_PACK (p_float32, msgpack_pack_float (pk, 1.5f))
S_PACK (p_float32_nan, msgpack_pack_float (pk, NAN))
S_PACK (p_float32_tiny, msgpack_pack_float (pk, 1e-45f))
S_PACK (p_float64, msgpack_pack_double (pk, 0.1))
S_PACK (p_float64_neg0, msgpack_pack_double (pk, -0.0))
S_PACK (p_float64_inf, msgpack_pack_double (pk, -INFINITY))
S_PACK (p_fixstr, msgpack_pack_str_with_body (pk, "hello", 5))
S_PACK (p_fixstr0, msgpack_pack_str_with_body (pk, "", 0))
S_PACK (p_fixstr31, msgpack_pack_str_with_body (pk, s_payload, 31))
S_PACK (p_str8, msgpack_pack_str_with_body (pk, s_payload, 32))
S_PACK (p_str16, msgpack_pack_str_with_body (pk, s_payload, 256))
S_PACK (p_str32, msgpack_pack_str_with_body (pk, s_payload, 65536))
S_PACK (p_bin8, msgpack_pack_bin_with_body (pk, s_payload, 3))
S_PACK (p_bin0, msgpack_pack_bin_with_body (pk, s_payload, 0))
S_PACK (p_bin16, msgpack_pack_bin_with_body (pk, s_payload, 300))
S_PACK (p_bin32, msgpack_pack_bin_with_body (pk, s_payload, 65537))
S_PACK (p_fixext1, msgpack_pack_ext_with_body (pk, s_payload, 1, 7))
S_PACK (p_fixext2, msgpack_pack_ext_with_body (pk, s_payload, 2, -3))
S_PACK (p_fixext4, msgpack_pack_ext_with_body (pk, s_payload, 4, -1))
S_PACK (p_fixext8, msgpack_pack_ext_with_body (pk, s_payload, 8, 127))
S_PACK (p_fixext16, msgpack_pack_ext_with_body (pk, s_payload, 16, -128))
S_PACK (p_ext8, msgpack_pack_ext_with_body (pk, s_payload, 3, 1))
S_PACK (p_ext8_0, msgpack_pack_ext_with_body (pk, s_payload, 0, 1))
S_PACK (p_ext16, msgpack_pack_ext_with_body (pk, s_payload, 1000, 2))
S_PACK (p_ext32, msgpack_pack_ext_with_body (pk, s_payload, 70000, 3))
S_PACK (p_fixarray0, msgpack_pack_array (pk, 0))
S_PACK (p_fixmap0, msgpack_pack_map (pk, 0))
S_PACK (p_fixarray, {
    msgpack_pack_array (pk, 3);
    msgpack_pack_int (pk, 1);
    msgpack_pack_str_with_body (pk, "a", 1);
    msgpack_pack_nil (pk);
})
S_PACK (p_array16, {
    msgpack_pack_array (pk, 300);
    for (int i = 0; i < 300; i++)
        msgpack_pack_int (pk, i * 1000 - 7000);
})
S_PACK (p_array32, {
    msgpack_pack_array (pk, 70000);
    for (int i = 0; i < 70000; i++)
        msgpack_pack_double (pk, i / 7.0);
})
S_PACK (p_fixmap, {
    msgpack_pack_map (pk, 2);
    msgpack_pack_str_with_body (pk, "k", 1);
    msgpack_pack_float (pk, 2.5f);
    msgpack_pack_int (pk, 3);
    msgpack_pack_true (pk);
})
S_PACK (p_map16, {
    //  A sparse example: indexes to values
    msgpack_pack_map (pk, 380);
    for (int i = 0; i < 380; i++) {
        msgpack_pack_int (pk, i * 2);
        msgpack_pack_double (pk, i / 255.0);
    }
})
S_PACK (p_map32, {
    msgpack_pack_map (pk, 66000);
    for (int i = 0; i < 66000; i++) {
        msgpack_pack_uint32 (pk, (uint32_t) i);
        msgpack_pack_nil (pk);
    }
})
S_PACK (p_nested, {
    msgpack_pack_map (pk, 2);
    msgpack_pack_str_with_body (pk, "label", 5);
    msgpack_pack_int (pk, 9);
    msgpack_pack_str_with_body (pk, "x", 1);
    msgpack_pack_array (pk, 2);
    msgpack_pack_map (pk, 0);
    msgpack_pack_array (pk, 1);
    msgpack_pack_bin_with_body (pk, "zz", 2);
})
//  A sparse example as the libsvm reader gives it: pairs of every index
//  width the one-step way takes (fixint, uint8, uint16), and pairs it
//  leaves to the general way (a uint32 index, a float32 or an integer
//  value), mixed
S_PACK (p_sparse, {
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, 3);
    msgpack_pack_map (pk, 9);
    msgpack_pack_fix_uint8 (pk, 5);
    msgpack_pack_double (pk, 0.25);
    msgpack_pack_int (pk, 127);
    msgpack_pack_double (pk, -1.5);
    msgpack_pack_fix_uint8 (pk, 200);
    msgpack_pack_double (pk, 1e300);
    msgpack_pack_fix_uint16 (pk, 65535);
    msgpack_pack_double (pk, -0.0);
    msgpack_pack_fix_uint16 (pk, 300);
    msgpack_pack_float (pk, 2.5f);
    msgpack_pack_fix_uint32 (pk, 70000);
    msgpack_pack_double (pk, 3);
    msgpack_pack_int (pk, 7);
    msgpack_pack_int (pk, 1);
    msgpack_pack_int (pk, -3);
    msgpack_pack_double (pk, 4);
    msgpack_pack_fix_uint16 (pk, 1000);
    msgpack_pack_double (pk, NAN);
})

static const struct {
    const char *name;
    unsigned char type;  //  the format it covers
    s_packer pack;
} s_cases[] = {
    {"fixint", 0x05, p_fixint},
    {"fixint 127", 0x7f, p_fixint_max},
    {"negfixint", 0xfb, p_negfixint},
    {"negfixint -32", 0xe0, p_negfixint_min},
    {"nil", 0xc0, p_nil},
    {"false", 0xc2, p_false},
    {"true", 0xc3, p_true},
    {"uint8", 0xcc, p_uint8},
    {"uint16", 0xcd, p_uint16},
    {"uint32", 0xce, p_uint32},
    {"uint64", 0xcf, p_uint64},
    {"int8 -", 0xd0, p_int8_neg},
    {"int8 +", 0xd0, p_int8_pos},
    {"int8 0", 0xd0, p_int8_zero},
    {"int16 -", 0xd1, p_int16_neg},
    {"int16 +", 0xd1, p_int16_pos},
    {"int32 min", 0xd2, p_int32_min},
    {"int32 +", 0xd2, p_int32_pos},
    {"int64 min", 0xd3, p_int64_min},
    {"int64 max", 0xd3, p_int64_max},
    {"float32", 0xca, p_float32},
    {"float32 nan", 0xca, p_float32_nan},
    {"float32 tiny", 0xca, p_float32_tiny},
    {"float64", 0xcb, p_float64},
    {"float64 -0", 0xcb, p_float64_neg0},
    {"float64 -inf", 0xcb, p_float64_inf},
    {"fixstr", 0xa5, p_fixstr},
    {"fixstr 0", 0xa0, p_fixstr0},
    {"fixstr 31", 0xbf, p_fixstr31},
    {"str8", 0xd9, p_str8},
    {"str16", 0xda, p_str16},
    {"str32", 0xdb, p_str32},
    {"bin8", 0xc4, p_bin8},
    {"bin8 0", 0xc4, p_bin0},
    {"bin16", 0xc5, p_bin16},
    {"bin32", 0xc6, p_bin32},
    {"fixext1", 0xd4, p_fixext1},
    {"fixext2", 0xd5, p_fixext2},
    {"fixext4", 0xd6, p_fixext4},
    {"fixext8", 0xd7, p_fixext8},
    {"fixext16", 0xd8, p_fixext16},
    {"ext8", 0xc7, p_ext8},
    {"ext8 0", 0xc7, p_ext8_0},
    {"ext16", 0xc8, p_ext16},
    {"ext32", 0xc9, p_ext32},
    {"fixarray 0", 0x90, p_fixarray0},
    {"fixmap 0", 0x80, p_fixmap0},
    {"fixarray", 0x93, p_fixarray},
    {"array16", 0xdc, p_array16},
    {"array32", 0xdd, p_array32},
    {"fixmap", 0x82, p_fixmap},
    {"map16", 0xde, p_map16},
    {"map32", 0xdf, p_map32},
    {"nested", 0x82, p_nested},
    {"sparse example", 0x92, p_sparse},
};
#define S_NCASES ((int) (sizeof s_cases / sizeof s_cases[0]))

//  Every format alone, with bytes after it, and every prefix of it (a
//  stride of the prefixes of the largest)
START_TEST (test_unpack_format)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    s_cases[_i].pack (&pk);
    ck_assert_msg ((unsigned char) sb.data[0] == s_cases[_i].type, "%s packs as 0x%02x", s_cases[_i].name,
                   (unsigned char) sb.data[0]);
    size_t len = sb.size;
    s_compare (sb.data, len, 1);
    for (size_t n = 0; n<len; n += len> 4096 && n > 300 && n + 300 < len ? 997 : 1)
        s_compare (sb.data, n, 1);
    msgpack_pack_int (&pk, 1);
    s_compare (sb.data, sb.size, 1);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  The depth limit is msgpack-c's: 32 nested containers decode, 33 do not
static void s_nest (int depth, int empty_inner)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    for (int d = 0; d < depth; d++)
        msgpack_pack_array (&pk, d + 1 < depth || !empty_inner ? 1 : 0);
    if (!empty_inner)
        msgpack_pack_int (&pk, 1);
    //  msgpack-c says it ran out of memory past its depth: not strict
    s_compare (sb.data, sb.size, 0);
    msgpack_zone z;
    ck_assert (msgpack_zone_init (&z, 1024));
    msgpack_object o;
    size_t off = 0;
    msgpack_unpack_return rc = weir__unpack (sb.data, sb.size, &off, &z, &o);
    ck_assert_int_eq (rc, depth <= 32 ? MSGPACK_UNPACK_SUCCESS : MSGPACK_UNPACK_PARSE_ERROR);
    msgpack_zone_destroy (&z);
    msgpack_sbuffer_destroy (&sb);
}

START_TEST (test_unpack_depth)
{
    for (int d = 1; d <= 34; d++) {
        s_nest (d, 0);
        s_nest (d, 1);
    }
}
END_TEST

START_TEST (test_unpack_invalid)
{
    const char bad[] = {(char) 0xc1};
    s_compare (bad, 1, 1);
    const char in_array[] = {(char) 0x92, 0x01, (char) 0xc1};
    s_compare (in_array, sizeof in_array, 1);
    //  A count far past the bytes allocates nothing and is refused
    const char huge[] = {(char) 0xdf, (char) 0xff, (char) 0xff, (char) 0xff, (char) 0xff, 0x01};
    msgpack_zone z;
    ck_assert (msgpack_zone_init (&z, 1024));
    msgpack_object o;
    size_t off = 0;
    ck_assert_int_ne (weir__unpack (huge, sizeof huge, &off, &z, &o), MSGPACK_UNPACK_SUCCESS);
    ck_assert_uint_eq (off, 0);
    msgpack_zone_destroy (&z);
}
END_TEST

static uint64_t s_next (uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

//  A random object of every kind, nested DEPTH more levels at most
static void s_random (msgpack_packer *pk, uint64_t *st, int depth)
{
    unsigned kind = (unsigned) (s_next (st) % (depth > 0 ? 14 : 11));
    uint64_t r = s_next (st);
    switch (kind) {
    case 0: msgpack_pack_int64 (pk, (int64_t) r >> (r % 64)); break;
    case 1: msgpack_pack_uint64 (pk, r >> (r % 64)); break;
    case 2: msgpack_pack_double (pk, (double) (int64_t) r / 1e9); break;
    case 3: msgpack_pack_float (pk, (float) (int32_t) r / 1e3f); break;
    case 4: msgpack_pack_str_with_body (pk, s_payload, r % 300); break;
    case 5: msgpack_pack_bin_with_body (pk, s_payload, r % 300); break;
    case 6: msgpack_pack_ext_with_body (pk, s_payload, r % 40, (int8_t) (r >> 8)); break;
    case 7: msgpack_pack_nil (pk); break;
    case 8: (r & 1) ? msgpack_pack_true (pk) : msgpack_pack_false (pk); break;
    case 9: msgpack_pack_int (pk, (int) (r % 200) - 100); break;
    case 10: msgpack_pack_fix_int16 (pk, (int16_t) r); break;
    case 11:
    case 12: {
        uint32_t n = (uint32_t) (r % 20);
        msgpack_pack_array (pk, n);
        for (uint32_t i = 0; i < n; i++)
            s_random (pk, st, depth - 1);
        break;
    }
    default: {
        uint32_t n = (uint32_t) (r % 20);
        msgpack_pack_map (pk, n);
        for (uint32_t i = 0; i < n; i++) {
            s_random (pk, st, 0);
            s_random (pk, st, depth - 1);
        }
        break;
    }
    }
}

START_TEST (test_unpack_random)
{
    uint64_t st = 0x9e3779b97f4a7c15u;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    for (int round = 0; round < 5000; round++) {
        msgpack_sbuffer_clear (&sb);
        s_random (&pk, &st, 6);
        s_compare (sb.data, sb.size, 1);
        //  Cut short, and damaged: both agree on whether it decodes, and
        //  on what when it does
        s_compare (sb.data, sb.size - s_next (&st) % sb.size, 1);
        char *copy = malloc (sb.size);
        memcpy (copy, sb.data, sb.size);
        for (int f = 0; f < 3; f++)
            copy[s_next (&st) % sb.size] = (char) s_next (&st);
        s_compare (copy, sb.size, 0);
        free (copy);
    }
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  Records one after another, as in a batch: each from where the last ended
START_TEST (test_unpack_sequence)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    for (int i = 0; i < S_NCASES; i++)
        s_cases[i].pack (&pk);
    msgpack_zone z;
    ck_assert (msgpack_zone_init (&z, 1024));
    size_t off = 0, n = 0;
    msgpack_unpack_return rc;
    msgpack_object o;
    while ((rc = weir__unpack (sb.data, sb.size, &off, &z, &o)) == MSGPACK_UNPACK_EXTRA_BYTES)
        n++;
    ck_assert_int_eq (rc, MSGPACK_UNPACK_SUCCESS);
    ck_assert_uint_eq (n + 1, (size_t) S_NCASES);
    ck_assert_uint_eq (off, sb.size);
    msgpack_zone_destroy (&z);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

Suite *check_suite (void)
{
    for (size_t i = 0; i < sizeof s_payload; i++)
        s_payload[i] = (char) ('a' + i % 26);
    Suite *s = suite_create ("unpack");
    TCase *tc = tcase_create ("formats");
    tcase_set_timeout (tc, 60);
    tcase_add_loop_test (tc, test_unpack_format, 0, S_NCASES);
    tcase_add_test (tc, test_unpack_depth);
    tcase_add_test (tc, test_unpack_invalid);
    tcase_add_test (tc, test_unpack_sequence);
    suite_add_tcase (s, tc);
    tc = tcase_create ("random");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_unpack_random);
    suite_add_tcase (s, tc);
    return s;
}
