/*  tests/check_scan.c - weir__scan: extents, truncation, bad bytes, depth.

    The scan is what lets a reader take untrusted bytes and hand them to
    msgpack-c: whatever it accepts must decode, and whatever it refuses
    must be refused before anything is allocated.  So besides the exact
    extent of every type, these tests hold its depth limit against
    msgpack_unpack itself.  */
#include "config.h"

#include <msgpack.h>
#include <stdint.h>
#include <time.h>

#include "lib/scan.h"
#include "testutil.h"

//  Payload for the str, bin and ext cases; its content does not matter
static char s_bytes[70000];

//  msgpack_unpack of BUF[0..LEN): its result, and in *OFF where it stopped
static msgpack_unpack_return s_unpack (const void *buf, size_t len, size_t *off)
{
    msgpack_zone zone;
    ck_assert (msgpack_zone_init (&zone, 4096));
    msgpack_object obj;
    *off = 0;
    msgpack_unpack_return rc = msgpack_unpack (buf, len, off, &zone, &obj);
    msgpack_zone_destroy (&zone);
    return rc;
}

//  Every strict prefix of a whole object is incomplete.  Large containers
//  cost a pass per prefix, so they are sampled: both ends and a stride.
static void s_check_prefixes (const char *data, size_t len)
{
    for (size_t n = 0; n < len; n++) {
        if (len > 4096 && n > 512 && n + 512 < len && n % 1009)
            continue;
        size_t size = 12345, where = 12345;
        weir__scan_result rc = weir__scan (data, n, &size, &where);
        ck_assert_msg (rc == WEIR__SCAN_INCOMPLETE, "prefix %zu of %zu (type 0x%02x): %d", n, len,
                       (unsigned char) data[0], rc);
    }
}

//  One case per msgpack format: how to pack it and the type byte it must
//  produce (so that the test covers the format it claims to).
typedef struct {
    const char *name;
    unsigned char type;
    void (*pack) (msgpack_packer *pk);
} s_case;

static void s_fixint (msgpack_packer *pk)
{
    msgpack_pack_int (pk, 5);
}
static void s_negfixint (msgpack_packer *pk)
{
    msgpack_pack_int (pk, -5);
}
static void s_nil (msgpack_packer *pk)
{
    msgpack_pack_nil (pk);
}
static void s_false (msgpack_packer *pk)
{
    msgpack_pack_false (pk);
}
static void s_true (msgpack_packer *pk)
{
    msgpack_pack_true (pk);
}
static void s_uint8 (msgpack_packer *pk)
{
    msgpack_pack_fix_uint8 (pk, 200);
}
static void s_uint16 (msgpack_packer *pk)
{
    msgpack_pack_fix_uint16 (pk, 60000);
}
static void s_uint32 (msgpack_packer *pk)
{
    msgpack_pack_fix_uint32 (pk, 4000000000u);
}
static void s_uint64 (msgpack_packer *pk)
{
    msgpack_pack_fix_uint64 (pk, UINT64_MAX);
}
static void s_int8 (msgpack_packer *pk)
{
    msgpack_pack_fix_int8 (pk, -100);
}
static void s_int16 (msgpack_packer *pk)
{
    msgpack_pack_fix_int16 (pk, -30000);
}
static void s_int32 (msgpack_packer *pk)
{
    msgpack_pack_fix_int32 (pk, INT32_MIN);
}
static void s_int64 (msgpack_packer *pk)
{
    msgpack_pack_fix_int64 (pk, INT64_MIN);
}
static void s_float32 (msgpack_packer *pk)
{
    msgpack_pack_float (pk, 1.5f);
}
static void s_float64 (msgpack_packer *pk)
{
    msgpack_pack_double (pk, 0.1);
}
static void s_fixstr (msgpack_packer *pk)
{
    msgpack_pack_str_with_body (pk, "hello", 5);
}
static void s_fixstr0 (msgpack_packer *pk)
{
    msgpack_pack_str_with_body (pk, "", 0);
}
static void s_str8 (msgpack_packer *pk)
{
    msgpack_pack_str_with_body (pk, s_bytes, 32);
}
static void s_str16 (msgpack_packer *pk)
{
    msgpack_pack_str_with_body (pk, s_bytes, 256);
}
static void s_str32 (msgpack_packer *pk)
{
    msgpack_pack_str_with_body (pk, s_bytes, 65536);
}
static void s_bin8 (msgpack_packer *pk)
{
    msgpack_pack_bin_with_body (pk, s_bytes, 5);
}
static void s_bin16 (msgpack_packer *pk)
{
    msgpack_pack_bin_with_body (pk, s_bytes, 256);
}
static void s_bin32 (msgpack_packer *pk)
{
    msgpack_pack_bin_with_body (pk, s_bytes, 65536);
}
static void s_fixext1 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 1, 7);
}
static void s_fixext2 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 2, 7);
}
static void s_fixext4 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 4, -1);
}
static void s_fixext8 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 8, 7);
}
static void s_fixext16 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 16, 7);
}
static void s_ext8 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 3, 7);
}
static void s_ext8_0 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 0, 7);
}
static void s_ext16 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 256, 7);
}
static void s_ext32 (msgpack_packer *pk)
{
    msgpack_pack_ext_with_body (pk, s_bytes, 65536, 7);
}

static void s_fixarray (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 3);
    msgpack_pack_int (pk, 1);
    msgpack_pack_str_with_body (pk, "two", 3);
    msgpack_pack_double (pk, 3.0);
}

static void s_fixarray0 (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 0);
}

static void s_array16 (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 16);
    for (int i = 0; i < 16; i++)
        msgpack_pack_int (pk, i * 1000);
}

static void s_array32 (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 65536);
    for (int i = 0; i < 65536; i++)
        msgpack_pack_int (pk, i % 100);
}

static void s_fixmap (msgpack_packer *pk)
{
    msgpack_pack_map (pk, 2);
    msgpack_pack_str_with_body (pk, "a", 1);
    msgpack_pack_array (pk, 2);
    msgpack_pack_nil (pk);
    msgpack_pack_true (pk);
    msgpack_pack_int (pk, 7);  //  a key that is not a string
    msgpack_pack_map (pk, 0);
}

static void s_map16 (msgpack_packer *pk)
{
    msgpack_pack_map (pk, 16);
    for (int i = 0; i < 16; i++) {
        msgpack_pack_int (pk, i);
        msgpack_pack_str_with_body (pk, "v", 1);
    }
}

static void s_map32 (msgpack_packer *pk)
{
    msgpack_pack_map (pk, 65536);
    for (int i = 0; i < 65536; i++) {
        msgpack_pack_uint32 (pk, (uint32_t) i);
        msgpack_pack_int (pk, -1);
    }
}

static const s_case s_cases[] = {
    {"positive fixint", 0x05, s_fixint},
    {"negative fixint", 0xfb, s_negfixint},
    {"nil", 0xc0, s_nil},
    {"false", 0xc2, s_false},
    {"true", 0xc3, s_true},
    {"uint8", 0xcc, s_uint8},
    {"uint16", 0xcd, s_uint16},
    {"uint32", 0xce, s_uint32},
    {"uint64", 0xcf, s_uint64},
    {"int8", 0xd0, s_int8},
    {"int16", 0xd1, s_int16},
    {"int32", 0xd2, s_int32},
    {"int64", 0xd3, s_int64},
    {"float32", 0xca, s_float32},
    {"float64", 0xcb, s_float64},
    {"fixstr", 0xa5, s_fixstr},
    {"empty fixstr", 0xa0, s_fixstr0},
    {"str8", 0xd9, s_str8},
    {"str16", 0xda, s_str16},
    {"str32", 0xdb, s_str32},
    {"bin8", 0xc4, s_bin8},
    {"bin16", 0xc5, s_bin16},
    {"bin32", 0xc6, s_bin32},
    {"fixext1", 0xd4, s_fixext1},
    {"fixext2", 0xd5, s_fixext2},
    {"fixext4", 0xd6, s_fixext4},
    {"fixext8", 0xd7, s_fixext8},
    {"fixext16", 0xd8, s_fixext16},
    {"ext8", 0xc7, s_ext8},
    {"empty ext8", 0xc7, s_ext8_0},
    {"ext16", 0xc8, s_ext16},
    {"ext32", 0xc9, s_ext32},
    {"fixarray", 0x93, s_fixarray},
    {"empty fixarray", 0x90, s_fixarray0},
    {"array16", 0xdc, s_array16},
    {"array32", 0xdd, s_array32},
    {"fixmap", 0x82, s_fixmap},
    {"map16", 0xde, s_map16},
    {"map32", 0xdf, s_map32},
};

#define S_NCASES ((int) (sizeof s_cases / sizeof s_cases[0]))

//  Each format: OK with exactly the packed size, msgpack-c agrees on the
//  extent, and every strict prefix is incomplete.
START_TEST (test_scan_type)
{
    const s_case *c = &s_cases[_i];
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    c->pack (&pk);
    ck_assert_msg ((unsigned char) sb.data[0] == c->type, "%s packed as 0x%02x", c->name,
                   (unsigned char) sb.data[0]);

    size_t size = 0, where = 12345;
    ck_assert_int_eq (weir__scan (sb.data, sb.size, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, sb.size);
    ck_assert_uint_eq (where, 12345);  //  untouched on success

    size_t off;
    ck_assert_int_eq (s_unpack (sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    ck_assert_uint_eq (off, size);

    s_check_prefixes (sb.data, sb.size);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  Empty array16/32 and map16/32 are legal (msgpack-c's packer never makes
//  them, other packers may): a header and nothing else.
START_TEST (test_scan_empty_wide_containers)
{
    static const unsigned char a16[] = {0xdc, 0, 0}, a32[] = {0xdd, 0, 0, 0, 0};
    static const unsigned char m16[] = {0xde, 0, 0}, m32[] = {0xdf, 0, 0, 0, 0};
    const unsigned char *objs[] = {a16, a32, m16, m32};
    size_t lens[] = {sizeof a16, sizeof a32, sizeof m16, sizeof m32};
    for (int i = 0; i < 4; i++) {
        size_t size = 0, where, off;
        ck_assert_int_eq (weir__scan (objs[i], lens[i], &size, &where), WEIR__SCAN_OK);
        ck_assert_uint_eq (size, lens[i]);
        ck_assert_int_eq (s_unpack (objs[i], lens[i], &off), MSGPACK_UNPACK_SUCCESS);
        s_check_prefixes ((const char *) objs[i], lens[i]);
    }
}
END_TEST

START_TEST (test_scan_empty_input)
{
    size_t size = 7, where = 7;
    ck_assert_int_eq (weir__scan ("", 0, &size, &where), WEIR__SCAN_INCOMPLETE);
}
END_TEST

START_TEST (test_scan_invalid_byte)
{
    size_t size = 0, where = 12345;
    ck_assert_int_eq (weir__scan ("\xc1", 1, &size, &where), WEIR__SCAN_INVALID);
    ck_assert_uint_eq (where, 0);

    //  Inside an array, after two good elements: *where is its own offset
    static const unsigned char arr[] = {0x93, 0x01, 0xa1, 'x', 0xc1};
    where = 12345;
    ck_assert_int_eq (weir__scan (arr, sizeof arr, &size, &where), WEIR__SCAN_INVALID);
    ck_assert_uint_eq (where, 4);

    //  As a map value, two levels down
    static const unsigned char map[] = {0x81, 0xa1, 'k', 0x92, 0xc0, 0xc1, 0x00};
    where = 12345;
    ck_assert_int_eq (weir__scan (map, sizeof map, &size, &where), WEIR__SCAN_INVALID);
    ck_assert_uint_eq (where, 5);

    //  Found even when the array declares more than the bytes hold: the
    //  bad byte is seen before the end is reached
    static const unsigned char cut[] = {0x95, 0x01, 0xc1};
    where = 12345;
    ck_assert_int_eq (weir__scan (cut, sizeof cut, &size, &where), WEIR__SCAN_INVALID);
    ck_assert_uint_eq (where, 2);

    //  0xc1 inside a string's bytes is data, not a type byte
    static const unsigned char str[] = {0xa2, 0xc1, 0xc1};
    ck_assert_int_eq (weir__scan (str, sizeof str, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, 3);

    ck_assert_str_eq (weir__scan_strerror (WEIR__SCAN_INVALID), "invalid msgpack type byte 0xc1");
}
END_TEST

//  Declared counts and lengths are never trusted: a header claiming four
//  billion elements (or bytes) over three bytes of data is incomplete at
//  once, without walking or allocating anything for the missing part.
START_TEST (test_scan_huge_declared_sizes)
{
    static const unsigned char arr[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03};
    static const unsigned char map[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03};
    static const unsigned char str[] = {0xdb, 0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c'};
    static const unsigned char bin[] = {0xc6, 0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c'};
    static const unsigned char ext[] = {0xc9, 0xff, 0xff, 0xff, 0xff, 0x07, 'a', 'b'};
    static const unsigned char nested[] = {0x91, 0xdd, 0xff, 0xff, 0xff, 0xff,
                                           0xdf, 0xff, 0xff, 0xff, 0xff, 0x01};
    const unsigned char *objs[] = {arr, map, str, bin, ext, nested};
    size_t lens[] = {sizeof arr, sizeof map, sizeof str, sizeof bin, sizeof ext, sizeof nested};

    clock_t start = clock ();
    for (int round = 0; round < 1000; round++)
        for (int i = 0; i < 6; i++) {
            size_t size = 0, where = 0;
            ck_assert_int_eq (weir__scan (objs[i], lens[i], &size, &where), WEIR__SCAN_INCOMPLETE);
        }
    //  6000 scans of a dozen bytes each: far below a second unless a scan
    //  walked the declared counts
    ck_assert_msg ((double) (clock () - start) / CLOCKS_PER_SEC < 1.0, "scans too slow");
}
END_TEST

//  N arrays nested one in the other, the innermost holding INNER (one byte)
static size_t s_nest (unsigned char *buf, int n, unsigned char header, unsigned char inner)
{
    memset (buf, header, (size_t) n);
    buf[n] = inner;
    return (size_t) n + 1;
}

//  N maps nested as values: {0: {0: ... {0: 1}}}
static size_t s_nest_maps (unsigned char *buf, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        buf[len++] = 0x81;
        buf[len++] = 0x00;  //  the key; the value is the next map
    }
    buf[len++] = 0x01;  //  the innermost map's value
    return len;
}

START_TEST (test_scan_depth_32_ok)
{
    unsigned char buf[128];
    size_t len = s_nest (buf, WEIR__SCAN_MAX_DEPTH, 0x91, 0x01);
    size_t size = 0, where = 12345, off;
    ck_assert_int_eq (weir__scan (buf, len, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, len);
    //  ... and msgpack-c, whose limit the scan claims to mirror, agrees
    ck_assert_int_eq (s_unpack (buf, len, &off), MSGPACK_UNPACK_SUCCESS);
    ck_assert_uint_eq (off, len);

    len = s_nest_maps (buf, WEIR__SCAN_MAX_DEPTH);
    ck_assert_uint_eq (len, 2 * WEIR__SCAN_MAX_DEPTH + 1);
    ck_assert_int_eq (weir__scan (buf, len, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, len);
    ck_assert_int_eq (s_unpack (buf, len, &off), MSGPACK_UNPACK_SUCCESS);

    //  Depth is nesting, not the number of containers: one array holding
    //  two siblings each 31 deep is 32 deep, though it has 63 containers
    len = 0;
    buf[len++] = 0x92;
    for (int k = 0; k < 2; k++) {
        memset (buf + len, 0x91, 31);
        len += 31;
        buf[len++] = 0x01;
    }
    ck_assert_int_eq (weir__scan (buf, len, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, len);
    ck_assert_int_eq (s_unpack (buf, len, &off), MSGPACK_UNPACK_SUCCESS);
}
END_TEST

START_TEST (test_scan_depth_33_too_deep)
{
    unsigned char buf[128];
    size_t len = s_nest (buf, WEIR__SCAN_MAX_DEPTH + 1, 0x91, 0x01);
    size_t size = 0, where = 12345, off;
    ck_assert_int_eq (weir__scan (buf, len, &size, &where), WEIR__SCAN_TOO_DEEP);
    ck_assert_uint_eq (where, 32);  //  the 33rd array header
    //  msgpack-c refuses it too (MSGPACK_UNPACK_NOMEM_ERROR in 4.0): the
    //  limits match
    ck_assert_int_lt (s_unpack (buf, len, &off), 0);

    len = s_nest_maps (buf, WEIR__SCAN_MAX_DEPTH + 1);
    where = 12345;
    ck_assert_int_eq (weir__scan (buf, len, &size, &where), WEIR__SCAN_TOO_DEEP);
    ck_assert_uint_eq (where, 64);  //  the 33rd map header, after 32 headers and keys
    ck_assert_int_lt (s_unpack (buf, len, &off), 0);

    ck_assert_str_eq (weir__scan_strerror (WEIR__SCAN_TOO_DEEP), "record nested deeper than 32 levels");
}
END_TEST

//  msgpack-c checks its depth before it looks at the count, so an EMPTY
//  container at depth 33 fails to decode as surely as a full one: the scan
//  must refuse it, or a record it passed would not decode.
START_TEST (test_scan_depth_33_empty_innermost)
{
    static const unsigned char empties[] = {0x90, 0x80};
    for (int i = 0; i < 2; i++) {
        unsigned char buf[128];
        memset (buf, 0x91, WEIR__SCAN_MAX_DEPTH);
        buf[WEIR__SCAN_MAX_DEPTH] = empties[i];
        size_t len = WEIR__SCAN_MAX_DEPTH + 1, size = 0, where = 12345, off;
        ck_assert_int_lt (s_unpack (buf, len, &off), 0);
        ck_assert_msg (weir__scan (buf, len, &size, &where) == WEIR__SCAN_TOO_DEEP,
                       "32 arrays around an empty 0x%02x: scan accepts what msgpack_unpack refuses",
                       empties[i]);
        ck_assert_uint_eq (where, 32);
    }
}
END_TEST

//  Packs [1, {i * 3: value}] for i below 300 into SB (indexes fixint
//  below 128, then uint8 and uint16), the values of KIND: 0 float32s,
//  1 counts (fixints and uint8s mixed), 2 float64s and float32s in turn,
//  3 float64s with a pair of another shape among them (a float32 at
//  150).  *LAST: where the last value starts.
static void s_pack_pairs (msgpack_sbuffer *sb, int kind, size_t *last)
{
    msgpack_sbuffer_init (sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_int (&pk, 1);
    msgpack_pack_map (&pk, 300);
    for (int i = 0; i < 300; i++) {
        msgpack_pack_uint16 (&pk, (uint16_t) (i * 3));
        *last = sb->size;
        if (kind == 0)
            msgpack_pack_float (&pk, (float) i / 7);
        else if (kind == 1)
            msgpack_pack_uint8 (&pk, (uint8_t) (i * 37));
        else if (kind == 2 && i % 2)
            msgpack_pack_double (&pk, i);
        else if (kind == 2)
            msgpack_pack_float (&pk, (float) i);
        else if (i == 150)
            msgpack_pack_float (&pk, 0.5f);
        else
            msgpack_pack_double (&pk, i / 255.0);
    }
}

//  The map of pairs in SB, whose last value starts at LAST: its exact
//  size, every prefix short, max-elements met exactly or missed by one
//  at the last value, and damage in that value's type byte found, not
//  skipped
static void s_check_pairs (const msgpack_sbuffer *sb, size_t last)
{
    size_t size = 0, where = 0;
    ck_assert_int_eq (weir__scan (sb->data, sb->size, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, sb->size);
    s_check_prefixes (sb->data, sb->size);
    //  The array, its label, the map and its 600 keys and values
    uint64_t objects = 3 + 600;
    ck_assert_int_eq (weir__scan_limited (sb->data, sb->size, objects, &size, &where), WEIR__SCAN_OK);
    ck_assert_int_eq (weir__scan_limited (sb->data, sb->size, objects - 1, &size, &where),
                      WEIR__SCAN_TOO_LARGE);
    ck_assert_uint_eq (where, last);
    //  0xc1 is never valid: no pair's shape, the general walk's to judge
    char *copy = malloc (sb->size);
    memcpy (copy, sb->data, sb->size);
    copy[last] = (char) 0xc1;
    ck_assert_int_eq (weir__scan (copy, sb->size, &size, &where), WEIR__SCAN_INVALID);
    ck_assert_uint_eq (where, last);
    free (copy);
}

//  A sparse example's map of indexes (fixint, uint8, uint16) to float64s,
//  which the scan takes a pair at a time; two short of max-elements, the
//  last index is the first past it
START_TEST (test_scan_sparse_pairs)
{
    msgpack_sbuffer sb;
    size_t last;
    s_pack_pairs (&sb, 3, &last);
    ck_assert_uint_eq (last, sb.size - 9);
    s_check_pairs (&sb, last);
    size_t size = 0, where = 0;
    ck_assert_int_eq (weir__scan_limited (sb.data, sb.size, 3 + 600 - 2, &size, &where),
                      WEIR__SCAN_TOO_LARGE);
    ck_assert_uint_eq (where, last - 3);
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

//  The pairs of other common shapes the walk takes in its run: float32
//  values, counts (fixints and uint8s), float64s and float32s in turn;
//  and a truncated record is truncated, whatever its last pair
START_TEST (test_scan_sparse_pair_kinds)
{
    for (int kind = 0; kind < 3; kind++) {
        msgpack_sbuffer sb;
        size_t last, size, where;
        s_pack_pairs (&sb, kind, &last);
        s_check_pairs (&sb, last);
        ck_assert_int_eq (weir__scan (sb.data, sb.size - 1, &size, &where), WEIR__SCAN_INCOMPLETE);
        msgpack_sbuffer_destroy (&sb);
    }
}
END_TEST

START_TEST (test_scan_trailing_bytes)
{
    size_t size = 0, where;
    ck_assert_int_eq (weir__scan ("\x01\x02", 2, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, 1);

    //  Whatever follows is not looked at, not even a bad byte
    static const unsigned char arr[] = {0x92, 0x01, 0xa1, 'x', 0xc1, 0xdd, 0xff};
    ck_assert_int_eq (weir__scan (arr, sizeof arr, &size, &where), WEIR__SCAN_OK);
    ck_assert_uint_eq (size, 4);
}
END_TEST

//  xorshift64: the same sequence on every platform, unlike rand ()
static uint64_t s_next (uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

//  One fuzz input: what the scan says must hold for msgpack-c too.
//  Returns the result, and in *SIZE the extent when OK.
static weir__scan_result s_fuzz_one (const unsigned char *buf, size_t len, size_t *extent)
{
    size_t size = 0, where = 0, off;
    weir__scan_result rc = weir__scan (buf, len, &size, &where);
    *extent = size;
    switch (rc) {
    case WEIR__SCAN_OK:
        ck_assert_uint_le (size, len);
        ck_assert_uint_gt (size, 0);
        ck_assert_msg (s_unpack (buf, size, &off) == MSGPACK_UNPACK_SUCCESS && off == size,
                       "scan accepted %zu bytes starting 0x%02x that msgpack_unpack refuses", size, buf[0]);
        break;
    case WEIR__SCAN_INCOMPLETE: break;
    case WEIR__SCAN_INVALID:
        ck_assert_uint_lt (where, len);
        ck_assert_uint_eq (buf[where], 0xc1);
        break;
    case WEIR__SCAN_TOO_DEEP:
        ck_assert_uint_lt (where, len);
        ck_assert_uint_ge (where, WEIR__SCAN_MAX_DEPTH);
        break;
    default: ck_abort_msg ("unknown scan result %d", rc);
    }
    return rc;
}

START_TEST (test_scan_fuzz_random)
{
    uint64_t state = 0x9e3779b97f4a7c15ull;
    unsigned char buf[256];
    size_t size;
    int seen[4] = {0}, nested = 0;  //  results by kind; OK records of 8+ bytes
    //  Uniform bytes: mostly one-byte scalars and wild lengths
    for (int round = 0; round < 20000; round++) {
        size_t len = s_next (&state) % sizeof buf;
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char) s_next (&state);
        s_fuzz_one (buf, len, &size);
    }
    //  Biased towards small containers and scalars, so that inputs nest
    //  deep and complete often
    static const unsigned char palette[] = {0x91, 0x92, 0x93, 0x81, 0x82, 0x90, 0x80, 0x01,
                                            0xc0, 0xc3, 0xa1, 0xd4, 0xcc, 0xdc, 0x00, 0xc1};
    for (int round = 0; round < 20000; round++) {
        size_t len = s_next (&state) % sizeof buf;
        //  A quarter start nested 20 to 39 deep, around the limit
        size_t i = 0;
        if (s_next (&state) % 4 == 0)
            for (size_t run = 20 + s_next (&state) % 20; i < run && i < len; i++)
                buf[i] = 0x91;
        for (; i < len; i++) {
            uint64_t r = s_next (&state);
            buf[i] = r % 3            ? palette[(r >> 8) % (sizeof palette - 1)]  //  0xc1 rarely
                     : (r >> 16) % 64 ? (unsigned char) (r >> 24)
                                      : 0xc1;
        }
        weir__scan_result rc = s_fuzz_one (buf, len, &size);
        seen[rc + 2]++;
        nested += rc == WEIR__SCAN_OK && size >= 8;
    }
    //  The biased inputs reach every outcome, deep records included
    ck_assert_int_gt (seen[WEIR__SCAN_OK + 2], 100);
    ck_assert_int_gt (seen[WEIR__SCAN_INCOMPLETE + 2], 100);
    ck_assert_int_gt (seen[WEIR__SCAN_INVALID + 2], 100);
    ck_assert_int_gt (seen[WEIR__SCAN_TOO_DEEP + 2], 100);
    ck_assert_int_gt (nested, 100);
}
END_TEST

//  Mutations of a valid record: flipped bytes and cut tails
START_TEST (test_scan_fuzz_mutations)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 3);
    s_fixmap (&pk);
    s_array16 (&pk);
    s_fixstr (&pk);
    s_ext8 (&pk);
    msgpack_pack_int (&pk, -70000);
    s_str8 (&pk);

    uint64_t state = 42;
    unsigned char buf[1024];
    ck_assert_uint_le (sb.size, sizeof buf);
    for (int round = 0; round < 20000; round++) {
        memcpy (buf, sb.data, sb.size);
        int flips = 1 + (int) (s_next (&state) % 4);
        for (int f = 0; f < flips; f++)
            buf[s_next (&state) % sb.size] = (unsigned char) s_next (&state);
        size_t size;
        s_fuzz_one (buf, sb.size - s_next (&state) % 8, &size);
    }
    msgpack_sbuffer_destroy (&sb);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("scan");
    TCase *tc = tcase_create ("types");
    //  Sampled prefixes of the 64k-element containers take a while under valgrind
    tcase_set_timeout (tc, 60);
    tcase_add_loop_test (tc, test_scan_type, 0, S_NCASES);
    tcase_add_test (tc, test_scan_empty_wide_containers);
    tcase_add_test (tc, test_scan_empty_input);
    tcase_add_test (tc, test_scan_trailing_bytes);
    tcase_add_test (tc, test_scan_sparse_pairs);
    tcase_add_test (tc, test_scan_sparse_pair_kinds);
    suite_add_tcase (s, tc);

    tc = tcase_create ("refusals");
    tcase_add_test (tc, test_scan_invalid_byte);
    tcase_add_test (tc, test_scan_huge_declared_sizes);
    suite_add_tcase (s, tc);

    tc = tcase_create ("depth");
    tcase_add_test (tc, test_scan_depth_32_ok);
    tcase_add_test (tc, test_scan_depth_33_too_deep);
    tcase_add_test (tc, test_scan_depth_33_empty_innermost);
    suite_add_tcase (s, tc);

    tc = tcase_create ("fuzz");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_scan_fuzz_random);
    tcase_add_test (tc, test_scan_fuzz_mutations);
    suite_add_tcase (s, tc);
    return s;
}
