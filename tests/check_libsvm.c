/*  tests/check_libsvm.c - the libsvm reader, driven directly: what each
    line becomes, every malformed line and its message (file, line number,
    byte), shards and resumed reads that still count lines right, and the
    round trip through the writer.  The writer alone is
    tests/check_libsvm_writer.c.  */
#include <math.h>

#include "lib/batch.h"
#include "readers/reader.h"
#include "readers/shards.h"
#include "tests/libsvmutil.h"
#include "tests/sparsebins.h"

/*  A sink that keeps every record, pausing after BUDGET records when set
    (as the engine does at the end of an epoch).  */
typedef struct {
    weir__sink sink;
    char *all;
    size_t len;
    uint64_t records;
    uint64_t budget;
} s_collector;

static int s_send (weir__sink *sink)
{
    s_collector *c = (s_collector *) sink;
    size_t n = weir__batch_payload (&sink->batch);
    c->all = realloc (c->all, c->len + n + 1);
    memcpy (c->all + c->len, sink->batch.data + WEIR__BATCH_HEADER, n);
    c->len += n;
    c->records += sink->batch.count;
    weir__batch_clear (&sink->batch);
    if (sink->quota == 0) {
        if (c->budget && c->records >= c->budget)
            return WEIR__SINK_PAUSE;
        sink->quota = c->budget ? c->budget - c->records : UINT64_MAX;
    }
    return 0;
}

static void s_collector_init (s_collector *c, uint32_t limit)
{
    memset (c, 0, sizeof *c);
    ck_assert_int_eq (weir__batch_init (&c->sink.batch, 64), 0);
    c->sink.limit = limit;
    c->sink.quota = UINT64_MAX;
    c->sink.send = s_send;
}

static void s_collector_release (s_collector *c)
{
    weir__batch_release (&c->sink.batch);
    free (c->all);
}

static void s_collector_drain (s_collector *c)
{
    if (c->sink.batch.count) {
        c->sink.quota = 0;
        c->budget = 0;
        c->sink.send (&c->sink);
    }
}

//  Open the reader on PATH with more properties (EXTRA: NULL, or
//  key=value separated by spaces), read every shard in order; the first
//  error code.
static int s_read_file (const char *path, const char *extra, s_collector *c, weir__shards *shards,
                        weir__err *err)
{
    weir__props props;
    weir__props_init (&props);
    weir__props_add (&props, "path", path, -1, -1);
    char more[256];
    snprintf (more, sizeof more, "%s", extra ? extra : "");
    for (char *save = NULL, *kv = strtok_r (more, " ", &save); kv; kv = strtok_r (NULL, " ", &save))
        ck_assert_int_eq (weir__props_add_text (&props, kv, err), 0);
    weir__shards_init (shards);
    void *state = NULL;
    int rc = weir__reader_libsvm.open (&props, &state, shards, err);
    for (size_t i = 0; rc == 0 && i < shards->count; i++) {
        uint64_t offset = shards->items[i].start;
        rc = weir__reader_libsvm.read (state, &shards->items[i], &offset, &c->sink, err);
        if (rc == 0)
            ck_assert_uint_eq (offset, shards->items[i].end);
    }
    if (rc == 0)
        s_collector_drain (c);
    if (state)
        weir__reader_libsvm.close (state);
    weir__props_release (&props);
    return rc;
}

static uint64_t s_bits (double v)
{
    uint64_t bits;
    memcpy (&bits, &v, sizeof bits);
    return bits;
}

//  Check one record against a label (when INTEGRAL, the integer ILABEL,
//  else the float64 LABEL) and pairs.
static void s_expect_exact (const msgpack_object *o, int integral, int64_t ilabel, double label, size_t n,
                            const uint64_t *index, const double *value)
{
    ck_assert_int_eq (o->type, MSGPACK_OBJECT_ARRAY);
    ck_assert_uint_eq (o->via.array.size, 2);
    const msgpack_object *l = &o->via.array.ptr[0], *m = &o->via.array.ptr[1];
    if (integral) {
        ck_assert (l->type == MSGPACK_OBJECT_POSITIVE_INTEGER || l->type == MSGPACK_OBJECT_NEGATIVE_INTEGER);
        ck_assert_int_eq (l->via.i64, ilabel);
    }
    else {
        ck_assert_int_eq (l->type, MSGPACK_OBJECT_FLOAT64);
        ck_assert (s_bits (l->via.f64) == s_bits (label));
    }
    ck_assert_int_eq (m->type, MSGPACK_OBJECT_MAP);
    ck_assert_uint_eq (m->via.map.size, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq (m->via.map.ptr[i].key.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
        ck_assert_uint_eq (m->via.map.ptr[i].key.via.u64, index[i]);
        ck_assert_int_eq (m->via.map.ptr[i].val.type, MSGPACK_OBJECT_FLOAT64);
        ck_assert_msg (s_bits (m->via.map.ptr[i].val.via.f64) == s_bits (value[i]), "%.17g, wanted %.17g",
                       m->via.map.ptr[i].val.via.f64, value[i]);
    }
}

static void s_expect (const msgpack_object *o, int integral, double label, size_t n, const uint64_t *index,
                      const double *value)
{
    s_expect_exact (o, integral, integral ? (int64_t) label : 0, label, n, index, value);
}

START_TEST (test_reader_records)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/in.txt", dir);
    const char text[] = "+1 1:0.5 3:-2 10:1e-05\n"  //  a sign, an exponent
                        "-1\n"                      //  a label alone: no features
                        "  2\t4:0.1  \t 5:7 \r\n"   //  blanks anywhere, CRLF
                        "1.0 1:0\n"                 //  an integral label is an integer; explicit 0 kept
                        "1e3 2:.5\n"
                        "2.5 1:3.\n"              //  a label that is not integral
                        "9007199254740993 7:1\n"  //  beyond 2^53, still exact
                        "1e300 1:123456789012345678901234567890\n"
                        "-0 007:1";  //  no final newline; leading zeros of an index
    testutil_write (path, text, sizeof text - 1);
    s_collector c;
    s_collector_init (&c, 3);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (s_read_file (path, NULL, &c, &shards, &err), 0);
    ck_assert_uint_eq (c.records, 9);
    weir__records it;
    weir__records_init (&it);
    weir__records_reset (&it, c.all, c.len);
    msgpack_object o[9];
    //  The zone is reused per record: check each as it comes
    const uint64_t i1[] = {1, 3, 10}, i3[] = {4, 5}, i4[] = {1}, i5[] = {2}, i7[] = {7};
    const double v1[] = {0.5, -2, 1e-05}, v3[] = {0.1, 7}, v4[] = {0}, v5[] = {0.5}, v6[] = {3}, v7[] = {1},
                 v8[] = {123456789012345678901234567890.0};
    for (int k = 0; k < 9; k++) {
        ck_assert_int_eq (weir__records_next (&it, &o[k]), 1);
        switch (k) {
        case 0: s_expect (&o[k], 1, 1, 3, i1, v1); break;
        case 1: s_expect (&o[k], 1, -1, 0, NULL, NULL); break;
        case 2: s_expect (&o[k], 1, 2, 2, i3, v3); break;
        case 3: s_expect (&o[k], 1, 1, 1, i4, v4); break;
        case 4: s_expect (&o[k], 1, 1000, 1, i5, v5); break;
        case 5: s_expect (&o[k], 0, 2.5, 1, i4, v6); break;
        case 6: s_expect_exact (&o[k], 1, 9007199254740993ll, 0, 1, i7, v7); break;
        case 7: s_expect (&o[k], 0, 1e300, 1, i4, v8); break;
        case 8: s_expect (&o[k], 1, 0, 1, i7, v7); break;
        }
    }
    ck_assert_int_eq (weir__records_next (&it, &o[0]), 0);
    weir__records_release (&it);
    weir__shards_release (&shards);
    s_collector_release (&c);
    testutil_rmdir (dir);
}
END_TEST

//  Every malformed line: the message names the file, the line, the byte of
//  the offending text, and what is wrong.  Two good lines come first.
START_TEST (test_reader_malformed_lines)
{
    struct {
        const char *line;
        const char *message;
    } cases[] = {
        {"", "line 3 (byte 12): the line is empty"},
        {" \t ", "line 3 (byte 12): the line is empty"},
        {"# a comment", "line 3 (byte 12): '#' comments are not part of the libsvm format"},
        {"1 2:1 # trailing", "line 3 (byte 18): '#' comments are not part of the libsvm format"},
        {"3:1 4:2", "line 3 (byte 12): the line has no label: it starts with the feature '3:1'"},
        {"abc 1:2", "line 3 (byte 12): label 'abc' is not a number"},
        {"inf 1:2", "line 3 (byte 12): label 'inf' is not a number"},
        {"0x10 1:2", "line 3 (byte 12): label '0x10' is not a number"},
        {"1e999 1:2", "line 3 (byte 12): label '1e999' is out of range"},
        {"1 abc", "line 3 (byte 14): feature 'abc' is not index:value"},
        {"1 abc:1", "line 3 (byte 14): index 'abc' is not a positive integer"},
        {"1 0:1", "line 3 (byte 14): index '0' is not a positive integer"},
        {"1 -3:1", "line 3 (byte 14): index '-3' is not a positive integer"},
        {"1 +3:1", "line 3 (byte 14): index '+3' is not a positive integer"},
        {"1 2.0:1", "line 3 (byte 14): index '2.0' is not a positive integer"},
        {"1 qid:4 1:1", "line 3 (byte 14): index 'qid' is not a positive integer"},
        {"1 :1", "line 3 (byte 14): feature ':1' has no index"},
        {"1 9223372036854775808:1", "line 3 (byte 14): index '9223372036854775808' is too large"},
        {"1 3:", "line 3 (byte 14): index 3 has no value"},
        {"1 3:x", "line 3 (byte 16): value 'x' of index 3 is not a number"},
        {"1 3:0.5x", "line 3 (byte 16): value '0.5x' of index 3 is not a number"},
        {"1 3:1:2", "line 3 (byte 16): value '1:2' of index 3 is not a number"},
        //  Numbers that start well and end badly: the one-pass reading of
        //  a feature hands them to the careful one
        {"1 3:1e", "line 3 (byte 16): value '1e' of index 3 is not a number"},
        {"1 3:1.5.2", "line 3 (byte 16): value '1.5.2' of index 3 is not a number"},
        {"1 3:-", "line 3 (byte 16): value '-' of index 3 is not a number"},
        {"1 3:0.0509803921568627440x", "value '0.0509803921568627440x' of index 3 is not a number"},
        {"1 2:1\t2:3", "line 3 (byte 18): index 2 appears twice"},
        {"1 3:nan", "line 3 (byte 16): value 'nan' of index 3 is not a number"},
        {"1 3:1e400", "line 3 (byte 16): value '1e400' of index 3 is out of range"},
        {"1 3 :1", "line 3 (byte 14): feature '3' is not index:value"},
        {"1 3: 1", "line 3 (byte 14): index 3 has no value"},
        {"1 3:1 3:2", "line 3 (byte 18): index 3 appears twice"},
        {"1 5:1 3:2", "line 3 (byte 18): index 3 comes after index 5: indices must ascend"},
        {"1 3:\x01\xff", "line 3 (byte 16): value '\\x01\\xff' of index 3 is not a number"},
        {"1 1:0123456789012345678901234567890123456789abc",
         "value '0123456789012345678901234567890123456789...' of index 1"},
        {"1\r2 1:1", "line 3 (byte 12): label '1\\x0d2' is not a number"},
    };
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/bad.txt", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        int n = snprintf (text, sizeof text, "1 1:1\n2 2:2\n%s\n4 4:4\n", cases[i].line);
        testutil_write (path, text, (size_t) n);
        s_collector c;
        s_collector_init (&c, 64);
        weir__shards shards;
        weir__err err;
        weir__err_init (&err);
        ck_assert_int_eq (s_read_file (path, NULL, &c, &shards, &err), WEIR_ECORRUPT);
        char prefix[4300];
        snprintf (prefix, sizeof prefix, "libsvm: '%s' line ", path);
        ck_assert_msg (strncmp (err.msg, prefix, strlen (prefix)) == 0 && strstr (err.msg, cases[i].message),
                       "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].message);
        weir__shards_release (&shards);
        s_collector_release (&c);
    }
    //  Longer than max-line
    testutil_write (path, "1 1:1\n1 1:1 2:2 3:3\n", 20);
    s_collector c;
    s_collector_init (&c, 64);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (s_read_file (path, "max-line=12", &c, &shards, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "line 2 (byte 6): line longer than max-line=12 bytes"), "%s", err.msg);
    weir__shards_release (&shards);
    s_collector_release (&c);
    testutil_rmdir (dir);
}
END_TEST

//  features=bins: the records' bytes, exactly: [label, [indexes, values]]
//  with little-endian uint32 indices and float32 values (the double
//  rounded); what they cannot hold is an error naming the line and byte
START_TEST (test_reader_bins)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/in.txt", dir);
    const char text[] = "+1 1:0.5 3:-2 10:0.1\n"
                        "-1\n"
                        "2.5 4294967295:1e-30 4294967294:0\n";  //  out of order: an error, as for maps
    testutil_write (path, text, sizeof text - 1);
    s_collector c;
    s_collector_init (&c, 64);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (s_read_file (path, "features=bins", &c, &shards, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "line 3 (byte 45): index 4294967294 comes after index 4294967295"), "%s",
                   err.msg);
    weir__shards_release (&shards);
    s_collector_release (&c);

    const char good[] = "+1 1:0.5 3:-2 10:0.1\n"
                        "-1\n"
                        "2.5 7:3.4028234e38 4294967295:1e-30\n";
    testutil_write (path, good, sizeof good - 1);
    s_collector_init (&c, 2);
    ck_assert_int_eq (s_read_file (path, "features=bins", &c, &shards, &err), 0);
    ck_assert_uint_eq (c.records, 3);
    msgpack_sbuffer want;
    msgpack_sbuffer_init (&want);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &want, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_int (&pk, 1);
    sparsebins_pack (&pk, (const uint32_t[]){1, 3, 10}, (const float[]){0.5f, -2.0f, 0.1f}, 3);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_int (&pk, -1);
    sparsebins_pack (&pk, NULL, NULL, 0);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_double (&pk, 2.5);
    sparsebins_pack (&pk, (const uint32_t[]){7, 4294967295u}, (const float[]){3.4028234e38f, 1e-30f}, 2);
    ck_assert_uint_eq (c.len, want.size);
    ck_assert (memcmp (c.all, want.data, want.size) == 0);
    msgpack_sbuffer_destroy (&want);
    weir__shards_release (&shards);
    s_collector_release (&c);

    struct {
        const char *line, *message;
    } cases[] = {
        {"1 4294967296:1", "line 2 (byte 8): index 4294967296 is too large for features=bins"},
        {"1 1:1 9223372036854775807:1", "line 2 (byte 12): index 9223372036854775807 is too large"},
        {"1 3:1e39", "line 2 (byte 10): value '1e39' of index 3 is beyond a float32's range"},
        {"1 3:-3.5e38", "line 2 (byte 10): value '-3.5e38' of index 3 is beyond a float32's range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[128];
        int n = snprintf (line, sizeof line, "0 1:1\n%s\n", cases[i].line);
        testutil_write (path, line, (size_t) n);
        s_collector_init (&c, 64);
        ck_assert_int_eq (s_read_file (path, "features=bins", &c, &shards, &err), WEIR_ECORRUPT);
        ck_assert_msg (strstr (err.msg, cases[i].message), "case %zu: '%s' lacks '%s'", i, err.msg,
                       cases[i].message);
        weir__shards_release (&shards);
        s_collector_release (&c);
        //  The same lines are fine as maps
        s_collector_init (&c, 64);
        ck_assert_int_eq (s_read_file (path, NULL, &c, &shards, &err), 0);
        ck_assert_uint_eq (c.records, 2);
        weir__shards_release (&shards);
        s_collector_release (&c);
    }
    s_collector_init (&c, 64);
    ck_assert_int_eq (s_read_file (path, "features=bits", &c, &shards, &err), WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "libsvm: features=bits is neither map nor bins");
    s_collector_release (&c);
    testutil_rmdir (dir);
}
END_TEST

//  Features as bins, through the writer and back: random float32 values
//  (subnormals and extremes among them) and indices up to 2^32 - 1 come
//  back to the bit, across shards
START_TEST (test_round_trip_bins)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/a.txt", dir);
    weir__batch b;
    weir__batch_init (&b, 64);
    uint64_t seed = 777;
    enum { EXAMPLES = 2000 };
    for (int e = 0; e < EXAMPLES; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = (size_t) ((seed >> 20) % 9);
        uint32_t index[8];
        float value[8];
        uint64_t at = 0;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            at += 1 + (seed >> 36);  //  up to 2^28 apart: some reach 2^31
            uint32_t bits = (uint32_t) (seed >> 17);
            memcpy (&value[i], &bits, 4);
            if (!isfinite (value[i]))
                value[i] = (float) (seed >> 40);
            index[i] = i == 7 ? 4294967295u : (uint32_t) at;
        }
        msgpack_pack_array (&b.pk, 2);
        msgpack_pack_int (&b.pk, e % 10);
        sparsebins_pack (&b.pk, index, value, n);
        b.count++;
    }
    libsvmutil_write_file (path, NULL, &b);
    s_collector c;
    s_collector_init (&c, 100);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    int rc = s_read_file (path, "split=10000 features=bins", &c, &shards, &err);
    ck_assert_msg (rc == 0, "%s", err.msg);
    ck_assert_uint_eq (c.records, EXAMPLES);
    size_t payload = weir__batch_payload (&b);
    ck_assert_uint_eq (c.len, payload);
    ck_assert (memcmp (c.all, b.data + WEIR__BATCH_HEADER, payload) == 0);
    weir__shards_release (&shards);
    s_collector_release (&c);
    weir__batch_release (&b);
    testutil_rmdir (dir);
}
END_TEST

//  A file cut into many shards, and reads paused and resumed inside
//  shards: the error still names the right line, though no read starts
//  at the top of the file.
START_TEST (test_reader_line_numbers_across_shards)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/in.txt", dir);
    size_t cap = 1 << 20, len = 0;
    char *text = malloc (cap);
    uint64_t bad_at = 0;
    for (int i = 1; i <= 5000; i++) {
        if (i == 4321) {
            bad_at = len + 2;
            len += (size_t) snprintf (text + len, cap - len, "1 x:1\n");
        }
        else
            len += (size_t) snprintf (text + len, cap - len, "%d %d:%d.5 %d:1\n", i % 3, i % 7 + 1, i,
                                      9 + i % 5);
    }
    testutil_write (path, text, len);
    char expected[128];
    snprintf (expected, sizeof expected, "line 4321 (byte %llu): index 'x' is not a positive integer",
              (unsigned long long) bad_at);
    const char *splits[] = {"split=1", "split=100", "split=4096", "split=100000"};
    for (size_t k = 0; k < 4; k++) {
        s_collector c;
        s_collector_init (&c, 16);
        weir__shards shards;
        weir__err err;
        weir__err_init (&err);
        ck_assert_int_eq (s_read_file (path, splits[k], &c, &shards, &err), WEIR_ECORRUPT);
        ck_assert_msg (strstr (err.msg, expected), "%s: '%s' lacks '%s'", splits[k], err.msg, expected);
        ck_assert_uint_eq (c.records, 4320);
        weir__shards_release (&shards);
        s_collector_release (&c);
    }

    //  Epochs of 37 records: every read after the first starts inside a shard
    weir__props props;
    weir__props_init (&props);
    weir__props_add (&props, "path", path, -1, -1);
    weir__props_add (&props, "split", "30000", -1, -1);
    weir__shards shards;
    weir__shards_init (&shards);
    weir__err err;
    weir__err_init (&err);
    void *state;
    ck_assert_int_eq (weir__reader_libsvm.open (&props, &state, &shards, &err), 0);
    ck_assert_uint_gt (shards.count, 2);
    s_collector c;
    s_collector_init (&c, 16);
    int rc = 0;
    for (size_t i = 0; i < shards.count && rc != WEIR_ECORRUPT; i++) {
        uint64_t offset = shards.items[i].start;
        for (;;) {
            c.budget = c.records + c.sink.batch.count + 37;
            c.sink.quota = 37;
            rc = weir__reader_libsvm.read (state, &shards.items[i], &offset, &c.sink, &err);
            if (rc != WEIR__SINK_PAUSE)
                break;
        }
    }
    ck_assert_int_eq (rc, WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, expected), "'%s' lacks '%s'", err.msg, expected);
    weir__reader_libsvm.close (state);
    weir__shards_release (&shards);
    weir__props_release (&props);
    s_collector_release (&c);
    free (text);
    testutil_rmdir (dir);
}
END_TEST

//  Pausing and going on from the offset gives every record once, in
//  order, the same bytes as one read.
START_TEST (test_reader_pause_and_continue)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen (path, "w");
    for (int i = 0; i < 3000; i++)
        fprintf (f, "%d 1:%d 2:0.25 %d:-%d.125\n", i % 10, i, 3 + i % 100, i);
    fprintf (f, "7 1:1");
    fclose (f);
    s_collector whole;
    s_collector_init (&whole, 64);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (s_read_file (path, "split=5000", &whole, &shards, &err), 0);
    ck_assert_uint_eq (whole.records, 3001);
    weir__shards_release (&shards);

    weir__props props;
    weir__props_init (&props);
    weir__props_add (&props, "path", path, -1, -1);
    weir__props_add (&props, "split", "5000", -1, -1);
    void *state;
    ck_assert_int_eq (weir__reader_libsvm.open (&props, &state, &shards, &err), 0);
    s_collector parts;
    s_collector_init (&parts, 64);
    for (size_t i = 0; i < shards.count; i++) {
        uint64_t offset = shards.items[i].start;
        for (;;) {
            parts.budget = parts.records + parts.sink.batch.count + 37;
            parts.sink.quota = 37;
            int rc = weir__reader_libsvm.read (state, &shards.items[i], &offset, &parts.sink, &err);
            if (rc == 0)
                break;
            ck_assert_int_eq (rc, WEIR__SINK_PAUSE);
        }
        ck_assert_uint_eq (offset, shards.items[i].end);
    }
    s_collector_drain (&parts);
    ck_assert_uint_eq (parts.records, 3001);
    ck_assert_uint_eq (parts.len, whole.len);
    ck_assert (memcmp (parts.all, whole.all, whole.len) == 0);
    weir__reader_libsvm.close (state);
    weir__shards_release (&shards);
    weir__props_release (&props);
    s_collector_release (&whole);
    s_collector_release (&parts);
    testutil_rmdir (dir);
}
END_TEST

//  Random examples through the writer and back through the reader: the
//  same labels, indices and values, bit for bit; and the reader's records
//  through the writer give the same text again.
START_TEST (test_round_trip)
{
    char *dir = testutil_mkdtemp ();
    char path[4200], path2[4200];
    snprintf (path, sizeof path, "%s/a.txt", dir);
    snprintf (path2, sizeof path2, "%s/b.txt", dir);
    weir__batch b;
    weir__batch_init (&b, 64);
    uint64_t seed = 12345;
    enum { EXAMPLES = 2000 };
    static double labels[EXAMPLES], values[EXAMPLES][20];
    static uint64_t indices[EXAMPLES][20];
    static int counts[EXAMPLES];
    for (int e = 0; e < EXAMPLES; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        labels[e] = e % 3 ? (double) (int) (seed >> 60) - 8 : (double) (seed >> 11) / 9007199254740992.0;
        counts[e] = (int) ((seed >> 20) % 20);
        uint64_t index = 0;
        msgpack_pack_array (&b.pk, 2);
        msgpack_pack_double (&b.pk, labels[e]);
        msgpack_pack_map (&b.pk, (size_t) counts[e]);
        for (int i = 0; i < counts[e]; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            index += 1 + (seed >> 58);
            indices[e][i] = index;
            //  Any finite double
            uint64_t bits = seed ^ (seed >> 29);
            memcpy (&values[e][i], &bits, 8);
            if (!isfinite (values[e][i]))
                values[e][i] = (double) (seed >> 40) / 1024;
            msgpack_pack_uint64 (&b.pk, index);
            msgpack_pack_double (&b.pk, values[e][i]);
        }
        b.count++;
    }
    libsvmutil_write_file (path, NULL, &b);

    weir__err err;
    weir__err_init (&err);
    s_collector c;
    s_collector_init (&c, 100);
    weir__shards shards;
    ck_assert_int_eq (s_read_file (path, "split=10000", &c, &shards, &err), 0);
    ck_assert_uint_eq (c.records, EXAMPLES);
    weir__records it;
    weir__records_init (&it);
    weir__records_reset (&it, c.all, c.len);
    msgpack_object o;
    for (int e = 0; e < EXAMPLES; e++) {
        ck_assert_int_eq (weir__records_next (&it, &o), 1);
        s_expect (&o, e % 3 != 0, labels[e], (size_t) counts[e], indices[e], values[e]);
    }
    weir__records_release (&it);

    int rc;
    void *w = libsvmutil_writer_open (path2, NULL, 1, NULL, &err, &rc);
    ck_assert_int_eq (rc, 0);
    ck_assert_int_eq (weir__writer_libsvm.write (w, 0, c.all, c.len, (uint32_t) c.records, &err), 0);
    ck_assert_int_eq (weir__writer_libsvm.close (w, &err), 0);
    size_t la, lb;
    char *a = testutil_read (path, &la), *bb = testutil_read (path2, &lb);
    ck_assert_uint_eq (la, lb);
    ck_assert (memcmp (a, bb, la) == 0);
    free (a);
    free (bb);
    weir__shards_release (&shards);
    s_collector_release (&c);
    weir__batch_release (&b);
    testutil_rmdir (dir);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("libsvm");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_reader_records);
    tcase_add_test (tc, test_reader_malformed_lines);
    tcase_add_test (tc, test_reader_line_numbers_across_shards);
    tcase_add_test (tc, test_reader_pause_and_continue);
    tcase_add_test (tc, test_round_trip);
    tcase_add_test (tc, test_reader_bins);
    tcase_add_test (tc, test_round_trip_bins);
    suite_add_tcase (s, tc);
    return s;
}
