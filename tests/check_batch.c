/*  tests/check_batch.c - building batches, taking them, decoding them.  */
#include "config.h"

#include <msgpack.h>
#include <stdint.h>

#include "lib/batch.h"
#include "testutil.h"

//  Does [P, P+N) lie inside [BASE, BASE+LEN)?  Compared as integers: the
//  pointers may belong to different objects when the test fails.
static int s_inside (const void *p, size_t n, const void *base, size_t len)
{
    uintptr_t a = (uintptr_t) p, b = (uintptr_t) base;
    return a >= b && a + n <= b + len;
}

START_TEST (test_batch_init)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 4096), 0);
    ck_assert_ptr_nonnull (b.data);
    ck_assert_uint_eq (b.cap, 4096);
    ck_assert_uint_eq (b.len, WEIR__BATCH_HEADER);
    ck_assert_uint_eq (weir__batch_payload (&b), 0);
    ck_assert_uint_eq (b.count, 0);
    ck_assert_int_eq (b.oom, 0);
    weir__batch_release (&b);
    ck_assert_ptr_null (b.data);

    //  A tiny capacity is raised to room for the header and some records
    ck_assert_int_eq (weir__batch_init (&b, 0), 0);
    ck_assert_uint_eq (b.cap, WEIR__BATCH_HEADER + 64);
    ck_assert_uint_eq (b.len, WEIR__BATCH_HEADER);
    weir__batch_release (&b);
    //  Kind and count, then the origin: its stage and runs
    ck_assert_uint_eq (WEIR__BATCH_HEADER, 16 + WEIR__BATCH_ORIGINS * 24);
}
END_TEST

//  A reader's batch carries where its records were read: the runs as
//  marked, the open one counting every record added since it began; a
//  taken or cleared batch starts with none
START_TEST (test_batch_origin)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 256), 0);
    b.origin_stage = 3;
    b.origins = 2;
    b.origin[0] = (weir__batch_origin){.offset = 100, .shard = 4, .first = 0, .count = 2};
    b.origin[1] = (weir__batch_origin){.offset = 0, .shard = 5, .first = 2};
    b.origin_open = 1;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq (weir__batch_append (&b, "\x01", 1), 0);
        b.count++;
    }
    size_t len;
    char *data = weir__batch_take (&b, &len);
    ck_assert_ptr_nonnull (data);
    weir__batch_header h;
    ck_assert_int_eq (weir__batch_header_read (data, len, &h), 0);
    ck_assert_uint_eq (h.kind, WEIR__BATCH_DATA);
    ck_assert_uint_eq (h.count, 5);
    ck_assert_uint_eq (h.origin_stage, 3);
    ck_assert_uint_eq (h.origins, 2);
    ck_assert_uint_eq (h.origin[0].offset, 100);
    ck_assert_uint_eq (h.origin[0].count, 2);
    ck_assert_uint_eq (h.origin[1].shard, 5);
    ck_assert_uint_eq (h.origin[1].first, 2);
    ck_assert_uint_eq (h.origin[1].count, 3);
    free (data);
    ck_assert_uint_eq (b.origins, 0);
    ck_assert_uint_eq (b.origin_stage, 0);
    ck_assert_int_eq (b.origin_open, 0);

    //  A closed run keeps its count; no stage, no origin at all
    b.origin_stage = 1;
    b.origins = 1;
    b.origin[0] = (weir__batch_origin){.offset = 7, .shard = 0, .first = 0, .count = 1};
    ck_assert_int_eq (weir__batch_append (&b, "\x01\x02", 2), 0);
    b.count = 2;
    weir__batch_header_of (&b, &h);
    ck_assert_uint_eq (h.origins, 1);
    ck_assert_uint_eq (h.origin[0].count, 1);
    b.origin_stage = 0;
    weir__batch_header_of (&b, &h);
    ck_assert_uint_eq (h.origins, 0);
    ck_assert_uint_eq (h.origin_stage, 0);
    weir__batch_clear (&b);
    ck_assert_uint_eq (b.origins, 0);
    weir__batch_release (&b);
}
END_TEST

//  Raw records and packed ones side by side, taken, then decoded back
START_TEST (test_batch_build_take_decode)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 256), 0);

    //  Record 1: raw bytes of {"a": 1}
    static const char raw[] = {(char) 0x81, (char) 0xa1, 'a', 0x01};
    ck_assert_int_eq (weir__batch_append (&b, raw, sizeof raw), 0);
    b.count++;
    //  Record 2: ["hello", -7, true] through the batch's packer
    ck_assert_int_eq (msgpack_pack_array (&b.pk, 3), 0);
    ck_assert_int_eq (msgpack_pack_str_with_body (&b.pk, "hello", 5), 0);
    ck_assert_int_eq (msgpack_pack_int (&b.pk, -7), 0);
    ck_assert_int_eq (msgpack_pack_true (&b.pk), 0);
    b.count++;
    //  Record 3: a lone nil, raw
    ck_assert_int_eq (weir__batch_append (&b, "\xc0", 1), 0);
    b.count++;
    size_t payload = weir__batch_payload (&b);
    ck_assert_uint_eq (payload, sizeof raw + 1 + 6 + 1 + 1 + 1);
    ck_assert_mem_eq (b.data + WEIR__BATCH_HEADER, raw, sizeof raw);

    size_t cap = b.cap, len = 0;
    char *msg = weir__batch_take (&b, &len);
    ck_assert_ptr_nonnull (msg);
    ck_assert_uint_eq (len, WEIR__BATCH_HEADER + payload);

    //  The header: kind and count, readable without decoding
    weir__batch_header h;
    ck_assert_int_eq (weir__batch_header_read (msg, len, &h), 0);
    ck_assert_uint_eq (h.kind, WEIR__BATCH_DATA);
    ck_assert_uint_eq (h.count, 3);

    //  The batch starts over in a buffer of its own, as large as before
    ck_assert_ptr_ne (b.data, msg);
    ck_assert_ptr_nonnull (b.data);
    ck_assert_uint_eq (b.cap, cap);
    ck_assert_uint_eq (b.len, WEIR__BATCH_HEADER);
    ck_assert_uint_eq (b.count, 0);
    //  ... and its packer writes there, not into the message given away
    ck_assert_int_eq (msgpack_pack_int (&b.pk, 9), 0);
    ck_assert_uint_eq (b.len, WEIR__BATCH_HEADER + 1);
    ck_assert_int_eq (b.data[WEIR__BATCH_HEADER], 9);
    ck_assert_mem_eq (msg + WEIR__BATCH_HEADER, raw, sizeof raw);

    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    const char *p = msg + WEIR__BATCH_HEADER;
    weir__records_reset (&it, p, payload);
    msgpack_object o;

    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_MAP);
    ck_assert_uint_eq (o.via.map.size, 1);
    ck_assert_int_eq (o.via.map.ptr[0].key.type, MSGPACK_OBJECT_STR);
    ck_assert_uint_eq (o.via.map.ptr[0].key.via.str.size, 1);
    ck_assert_int_eq (o.via.map.ptr[0].key.via.str.ptr[0], 'a');
    //  Zero copy: the key is the byte in the batch, not a copy of it
    ck_assert_ptr_eq (o.via.map.ptr[0].key.via.str.ptr, p + 2);
    ck_assert_int_eq (o.via.map.ptr[0].val.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    ck_assert_uint_eq (o.via.map.ptr[0].val.via.u64, 1);

    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_ARRAY);
    ck_assert_uint_eq (o.via.array.size, 3);
    const msgpack_object *s = &o.via.array.ptr[0];
    ck_assert_int_eq (s->type, MSGPACK_OBJECT_STR);
    ck_assert_uint_eq (s->via.str.size, 5);
    ck_assert_mem_eq (s->via.str.ptr, "hello", 5);
    ck_assert_msg (s_inside (s->via.str.ptr, 5, p, payload), "string copied out of the batch");
    ck_assert_int_eq (o.via.array.ptr[1].type, MSGPACK_OBJECT_NEGATIVE_INTEGER);
    ck_assert_int_eq (o.via.array.ptr[1].via.i64, -7);
    ck_assert_int_eq (o.via.array.ptr[2].type, MSGPACK_OBJECT_BOOLEAN);
    ck_assert (o.via.array.ptr[2].via.boolean);

    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_NIL);

    //  The end, and it stays the end
    ck_assert_int_eq (weir__records_next (&it, &o), 0);
    ck_assert_int_eq (weir__records_next (&it, &o), 0);

    //  Reset rewinds: the same batch decodes again from the start
    weir__records_reset (&it, p, payload);
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_MAP);

    weir__records_release (&it);
    free (msg);  //  what zmq_msg_init_data's release function will do
    weir__batch_release (&b);
}
END_TEST

//  Many records come back equal and in order
START_TEST (test_batch_many_in_order)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 64), 0);
    enum { N = 5000 };
    for (int i = 0; i < N; i++) {
        char key[16];
        int n = snprintf (key, sizeof key, "k%d", i);
        msgpack_pack_map (&b.pk, 1);
        msgpack_pack_str_with_body (&b.pk, key, (size_t) n);
        msgpack_pack_int64 (&b.pk, (int64_t) i * 1000003 - 2000000000);
        b.count++;
    }
    ck_assert_int_eq (b.oom, 0);
    size_t len;
    char *msg = weir__batch_take (&b, &len);
    ck_assert_ptr_nonnull (msg);
    weir__batch_header h;
    ck_assert_int_eq (weir__batch_header_read (msg, len, &h), 0);
    ck_assert_uint_eq (h.count, N);

    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    weir__records_reset (&it, msg + WEIR__BATCH_HEADER, len - WEIR__BATCH_HEADER);
    msgpack_object o;
    int i = 0;
    while (weir__records_next (&it, &o) == 1) {
        char key[16];
        int n = snprintf (key, sizeof key, "k%d", i);
        ck_assert_int_eq (o.type, MSGPACK_OBJECT_MAP);
        ck_assert_uint_eq (o.via.map.ptr[0].key.via.str.size, (size_t) n);
        ck_assert_mem_eq (o.via.map.ptr[0].key.via.str.ptr, key, (size_t) n);
        int64_t want = (int64_t) i * 1000003 - 2000000000;
        const msgpack_object *v = &o.via.map.ptr[0].val;
        ck_assert_int_eq (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? v->via.i64 : (int64_t) v->via.u64,
                          want);
        i++;
    }
    ck_assert_int_eq (i, N);
    weir__records_release (&it);
    free (msg);
    weir__batch_release (&b);
}
END_TEST

//  One record much larger than the buffer: it grows, the record survives
START_TEST (test_batch_grow_large_record)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 128), 0);
    msgpack_pack_int (&b.pk, 1);
    b.count++;

    enum { BIG = 100 * 1000 };
    char *big = malloc (BIG);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (char) ('a' + i % 26);
    ck_assert_int_eq (msgpack_pack_str_with_body (&b.pk, big, BIG), 0);
    b.count++;
    msgpack_pack_int (&b.pk, 2);
    b.count++;
    ck_assert_int_eq (b.oom, 0);
    ck_assert_uint_ge (b.cap, b.len);
    ck_assert_uint_eq (b.len, WEIR__BATCH_HEADER + 1 + 5 + BIG + 1);

    size_t cap = b.cap, len;
    char *msg = weir__batch_take (&b, &len);
    ck_assert_ptr_nonnull (msg);
    //  The next batch of the stream is expected to be as large
    ck_assert_uint_eq (b.cap, cap);

    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    const char *p = msg + WEIR__BATCH_HEADER;
    size_t payload = len - WEIR__BATCH_HEADER;
    weir__records_reset (&it, p, payload);
    msgpack_object o;
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_uint_eq (o.via.u64, 1);
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_STR);
    ck_assert_uint_eq (o.via.str.size, BIG);
    ck_assert_mem_eq (o.via.str.ptr, big, BIG);
    ck_assert_ptr_eq (o.via.str.ptr, p + 1 + 5);
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_uint_eq (o.via.u64, 2);
    ck_assert_int_eq (weir__records_next (&it, &o), 0);

    weir__records_release (&it);
    free (msg);
    free (big);
    weir__batch_release (&b);
}
END_TEST

//  Raw appends grow the buffer too
START_TEST (test_batch_grow_raw)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 0), 0);
    char rec[300];
    rec[0] = (char) 0xda;  //  str16 of 297 bytes
    rec[1] = 0x01;
    rec[2] = 0x29;
    memset (rec + 3, 'z', sizeof rec - 3);
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq (weir__batch_append (&b, rec, sizeof rec), 0);
        b.count++;
    }
    ck_assert_uint_eq (weir__batch_payload (&b), 10 * sizeof rec);
    ck_assert_uint_ge (b.cap, b.len);
    for (int i = 0; i < 10; i++)
        ck_assert_mem_eq (b.data + WEIR__BATCH_HEADER + i * sizeof rec, rec, sizeof rec);

    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    weir__records_reset (&it, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b));
    msgpack_object o;
    int n = 0;
    while (weir__records_next (&it, &o) == 1) {
        ck_assert_uint_eq (o.via.str.size, 297);
        n++;
    }
    ck_assert_int_eq (n, 10);
    weir__records_release (&it);
    weir__batch_release (&b);
}
END_TEST

START_TEST (test_batch_clear)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 256), 0);
    msgpack_pack_int (&b.pk, 1);
    b.count++;
    char *data = b.data;
    weir__batch_clear (&b);
    ck_assert_ptr_eq (b.data, data);
    ck_assert_uint_eq (b.len, WEIR__BATCH_HEADER);
    ck_assert_uint_eq (b.count, 0);
    weir__batch_release (&b);
}
END_TEST

START_TEST (test_batch_header_read_short)
{
    weir__batch_header h;
    char bytes[WEIR__BATCH_HEADER] = {0};
    ck_assert_int_eq (weir__batch_header_read (bytes, WEIR__BATCH_HEADER - 1, &h), -1);
    ck_assert_int_eq (weir__batch_header_read (bytes, 0, &h), -1);

    //  An end-of-stream marker is a header alone
    weir__batch_header eos = {.kind = WEIR__BATCH_EOS, .count = 0};
    memcpy (bytes, &eos, sizeof eos);
    ck_assert_int_eq (weir__batch_header_read (bytes, sizeof bytes, &h), 0);
    ck_assert_uint_eq (h.kind, WEIR__BATCH_EOS);
    ck_assert_uint_eq (h.count, 0);
}
END_TEST

//  An empty take: a header with a count of zero
START_TEST (test_batch_take_empty)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 256), 0);
    size_t len = 99;
    char *msg = weir__batch_take (&b, &len);
    ck_assert_ptr_nonnull (msg);
    ck_assert_uint_eq (len, WEIR__BATCH_HEADER);
    weir__batch_header h;
    ck_assert_int_eq (weir__batch_header_read (msg, len, &h), 0);
    ck_assert_uint_eq (h.kind, WEIR__BATCH_DATA);
    ck_assert_uint_eq (h.count, 0);

    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    weir__records_reset (&it, msg + WEIR__BATCH_HEADER, 0);
    msgpack_object o;
    ck_assert_int_eq (weir__records_next (&it, &o), 0);
    weir__records_release (&it);
    free (msg);
    weir__batch_release (&b);
}
END_TEST

START_TEST (test_records_malformed)
{
    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    msgpack_object o;

    //  0xc1 is never a valid type byte
    weir__records_reset (&it, "\xc1", 1);
    ck_assert_int_eq (weir__records_next (&it, &o), -1);

    //  An array of two holding only one element
    weir__records_reset (&it, "\x92\x01", 2);
    ck_assert_int_eq (weir__records_next (&it, &o), -1);

    //  A string cut short
    weir__records_reset (&it, "\xa5hel", 4);
    ck_assert_int_eq (weir__records_next (&it, &o), -1);

    //  Good records before the bad one come out first
    static const char mixed[] = {0x01, (char) 0x91, 0x02, (char) 0xc1};
    weir__records_reset (&it, mixed, sizeof mixed);
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_uint_eq (o.via.u64, 1);
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_ARRAY);
    ck_assert_uint_eq (o.via.array.ptr[0].via.u64, 2);
    ck_assert_int_eq (weir__records_next (&it, &o), -1);

    weir__records_release (&it);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("batch");
    TCase *tc = tcase_create ("build");
    tcase_add_test (tc, test_batch_init);
    tcase_add_test (tc, test_batch_origin);
    tcase_add_test (tc, test_batch_build_take_decode);
    tcase_add_test (tc, test_batch_many_in_order);
    tcase_add_test (tc, test_batch_grow_large_record);
    tcase_add_test (tc, test_batch_grow_raw);
    tcase_add_test (tc, test_batch_clear);
    tcase_add_test (tc, test_batch_header_read_short);
    tcase_add_test (tc, test_batch_take_empty);
    suite_add_tcase (s, tc);

    tc = tcase_create ("decode");
    tcase_add_test (tc, test_records_malformed);
    suite_add_tcase (s, tc);
    return s;
}
