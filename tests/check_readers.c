/*  tests/check_readers.c - the builtin readers, driven directly: their
    shards and the records they push into a sink.  */
#include <fcntl.h>
#include <unistd.h>

#include "readers/follow.h"
#include "readers/known.h"
#include "readers/reader.h"
#include "readers/shards.h"
#include "tests/testutil.h"

/*  A sink that keeps every batch's records in one buffer.  */
typedef struct {
    weir__sink sink;
    char *all;
    size_t len;
    uint64_t records;
    int sends;
    uint64_t budget;  //  records to allow before pausing (0: no limit)
} s_collector;

//  Like the engine's: collect full batches; when the quota runs out, grant
//  more until the budget is spent, then pause the reader.
static int s_send (weir__sink *sink)
{
    s_collector *c = (s_collector *) sink;
    if (sink->batch.count >= sink->limit || sink->quota == 0) {
        size_t n = weir__batch_payload (&sink->batch);
        c->all = realloc (c->all, c->len + n + 1);
        memcpy (c->all + c->len, sink->batch.data + WEIR__BATCH_HEADER, n);
        c->len += n;
        c->records += sink->batch.count;
        c->sends++;
        weir__batch_clear (&sink->batch);
    }
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

//  Open CLASS with the "k=v" properties, read every shard; returns the
//  first error code, the shards in *SHARDS.
static int s_read_all (const weir__reader_class *cls, const char *const *kv, s_collector *c,
                       weir__shards *shards, weir__err *err)
{
    weir__props props;
    weir__props_init (&props);
    for (size_t i = 0; kv[i]; i++)
        ck_assert_int_eq (weir__props_add_text (&props, kv[i], err), 0);
    weir__shards_init (shards);
    void *state = NULL;
    int rc = cls->open (&props, &state, shards, err);
    for (size_t i = 0; rc == 0 && i < shards->count; i++) {
        uint64_t offset = shards->items[i].start;
        rc = cls->read (state, &shards->items[i], &offset, &c->sink, err);
        if (rc == 0)
            ck_assert_uint_eq (offset, shards->items[i].end == UINT64_MAX ? offset : shards->items[i].end);
    }
    if (rc == 0 && c->sink.batch.count) {
        c->sink.quota = 0;
        c->budget = 0;
        rc = c->sink.send (&c->sink);
    }
    if (state)
        cls->close (state);
    weir__props_release (&props);
    return rc;
}

//  Decode the collected records as integers / strings.
static void s_expect_ints (const s_collector *c, int64_t first, uint64_t count)
{
    weir__records it;
    weir__records_init (&it);
    weir__records_reset (&it, c->all, c->len);
    msgpack_object o;
    uint64_t n = 0;
    while (weir__records_next (&it, &o) == 1) {
        ck_assert (o.type == MSGPACK_OBJECT_POSITIVE_INTEGER || o.type == MSGPACK_OBJECT_NEGATIVE_INTEGER);
        ck_assert_int_eq (o.via.i64, first + (int64_t) n);
        n++;
    }
    ck_assert_uint_eq (n, count);
    ck_assert_uint_eq (c->records, count);
    weir__records_release (&it);
}

START_TEST (test_range_shards_and_values)
{
    s_collector c;
    s_collector_init (&c, 1000);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    const char *kv[] = {"count=200000", "start=-5", NULL};
    ck_assert_int_eq (s_read_all (&weir__reader_range, kv, &c, &shards, &err), 0);
    //  Fixed-size shards: the same cut whatever the thread count
    ck_assert_uint_eq (shards.count, 4);
    ck_assert_uint_eq (shards.items[0].start, 0);
    ck_assert_uint_eq (shards.items[0].end, 65536);
    ck_assert_uint_eq (shards.items[3].start, 196608);
    ck_assert_uint_eq (shards.items[3].end, 200000);
    s_expect_ints (&c, -5, 200000);
    weir__shards_release (&shards);
    s_collector_release (&c);
}
END_TEST

START_TEST (test_range_errors)
{
    const char *cases[][3] = {
        {"start=1", NULL, "range: property 'count' is required"},
        {"count=-1", NULL, "range: property 'count': -1 is out of range"},
        {"count=9223372036854775807", "start=2", "overflows"},
        {"count=12q", NULL, "'12q' is not an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s_collector c;
        s_collector_init (&c, 10);
        weir__shards shards;
        weir__err err;
        weir__err_init (&err);
        const char *kv[] = {cases[i][0], cases[i][1], NULL};
        ck_assert_int_eq (s_read_all (&weir__reader_range, kv, &c, &shards, &err), WEIR_EPROPERTY);
        ck_assert_msg (strstr (err.msg, cases[i][2]), "'%s' lacks '%s'", err.msg, cases[i][2]);
        weir__shards_release (&shards);
        s_collector_release (&c);
    }
}
END_TEST

//  Pausing mid-shard and going on from the offset gives every record once,
//  in order: what an epoch boundary does to a reader.
static void s_pause_and_continue (const weir__reader_class *cls, const char *prop, uint64_t total)
{
    weir__props props;
    weir__props_init (&props);
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (weir__props_add_text (&props, prop, &err), 0);
    weir__shards shards;
    weir__shards_init (&shards);
    void *state;
    ck_assert_int_eq (cls->open (&props, &state, &shards, &err), 0);
    s_collector whole, parts;
    s_collector_init (&whole, 64);
    s_collector_init (&parts, 64);
    for (size_t i = 0; i < shards.count; i++) {
        uint64_t offset = shards.items[i].start;
        ck_assert_int_eq (cls->read (state, &shards.items[i], &offset, &whole.sink, &err), 0);
        offset = shards.items[i].start;
        //  Epochs of 37 records: pause, then go on from the offset
        for (;;) {
            parts.budget = parts.records + parts.sink.batch.count + 37;
            parts.sink.quota = 37;
            int rc = cls->read (state, &shards.items[i], &offset, &parts.sink, &err);
            if (rc == 0)
                break;
            ck_assert_int_eq (rc, WEIR__SINK_PAUSE);
            ck_assert_uint_eq (parts.records, parts.budget);
        }
    }
    whole.sink.quota = 0;
    whole.sink.send (&whole.sink);
    parts.sink.quota = 0;
    parts.budget = 0;
    parts.sink.send (&parts.sink);
    ck_assert_uint_eq (whole.records, total);
    ck_assert_uint_eq (parts.records, total);
    ck_assert_uint_eq (parts.len, whole.len);
    ck_assert (memcmp (parts.all, whole.all, whole.len) == 0);
    cls->close (state);
    weir__shards_release (&shards);
    weir__props_release (&props);
    s_collector_release (&whole);
    s_collector_release (&parts);
}

START_TEST (test_readers_pause_and_continue)
{
    s_pause_and_continue (&weir__reader_range, "count=100000", 100000);
    char *dir = testutil_mkdtemp ();
    char path[4200], prop[4300];
    snprintf (path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen (path, "w");
    for (int i = 0; i < 5000; i++)
        fprintf (f, "line %d%s\n", i, i % 7 ? "" : " with more words");
    fprintf (f, "no newline");
    fclose (f);
    snprintf (prop, sizeof prop, "path=%s", path);
    s_pause_and_continue (&weir__reader_lines, prop, 5001);
    snprintf (path, sizeof path, "%s/in.mp", dir);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    for (int i = 0; i < 3000; i++) {
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, i);
        msgpack_pack_str_with_body (&pk, "x", 1);
    }
    testutil_write (path, sb.data, sb.size);
    msgpack_sbuffer_destroy (&sb);
    snprintf (prop, sizeof prop, "path=%s", path);
    s_pause_and_continue (&weir__reader_msgpack, prop, 3000);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_lines_split_at_line_boundaries)
{
    char *dir = testutil_mkdtemp ();
    char path[4200], prop[4300];
    snprintf (path, sizeof path, "%s/in.txt", dir);
    //  Lines of varying length, one of them longer than the split size
    char text[20000];
    size_t len = 0;
    for (int i = 0; i < 500; i++)
        len += (size_t) snprintf (text + len, sizeof text - len, "%0*d\n", 1 + (i * 7) % 23, i);
    len += (size_t) snprintf (text + len, sizeof text - len, "%0300d\nlast", 7);
    testutil_write (path, text, len);
    snprintf (prop, sizeof prop, "path=%s", path);

    const char *splits[] = {"split=1", "split=10", "split=64", "split=100000"};
    for (size_t k = 0; k < 4; k++) {
        s_collector c;
        s_collector_init (&c, 7);
        weir__shards shards;
        weir__err err;
        weir__err_init (&err);
        const char *kv[] = {prop, splits[k], NULL};
        ck_assert_int_eq (s_read_all (&weir__reader_lines, kv, &c, &shards, &err), 0);
        //  Shards tile the file, and each starts at the start of a line
        ck_assert_uint_eq (shards.items[0].start, 0);
        for (size_t i = 0; i < shards.count; i++) {
            if (i)
                ck_assert_uint_eq (shards.items[i].start, shards.items[i - 1].end);
            ck_assert (shards.items[i].start == 0 || text[shards.items[i].start - 1] == '\n');
        }
        ck_assert_uint_eq (shards.items[shards.count - 1].end, len);
        //  Lines come back whole and in order: joined with newlines they
        //  are the file (plus the newline the last line lacked)
        weir__records it;
        weir__records_init (&it);
        weir__records_reset (&it, c.all, c.len);
        msgpack_object o;
        char *joined = malloc (len + 2);
        size_t jl = 0;
        while (weir__records_next (&it, &o) == 1) {
            ck_assert_int_eq (o.type, MSGPACK_OBJECT_STR);
            memcpy (joined + jl, o.via.str.ptr, o.via.str.size);
            jl += o.via.str.size;
            joined[jl++] = '\n';
        }
        ck_assert_uint_eq (jl, len + 1);
        ck_assert (memcmp (joined, text, len) == 0);
        ck_assert_uint_eq (c.records, 502);
        free (joined);
        weir__records_release (&it);
        weir__shards_release (&shards);
        s_collector_release (&c);
    }
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_lines_glob_sorted_and_errors)
{
    char *dir = testutil_mkdtemp ();
    char path[4200], prop[4300];
    for (int i = 3; i > 0; i--) {
        snprintf (path, sizeof path, "%s/f%d.txt", dir, i);
        char line[16];
        int n = snprintf (line, sizeof line, "file %d\n", i);
        testutil_write (path, line, (size_t) n);
    }
    snprintf (prop, sizeof prop, "path=%s/f*.txt", dir);
    s_collector c;
    s_collector_init (&c, 100);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    const char *kv[] = {prop, NULL};
    ck_assert_int_eq (s_read_all (&weir__reader_lines, kv, &c, &shards, &err), 0);
    ck_assert_uint_eq (shards.count, 3);
    ck_assert (strstr (shards.items[0].path, "f1.txt"));
    ck_assert (strstr (shards.items[2].path, "f3.txt"));
    ck_assert_uint_eq (c.records, 3);
    weir__shards_release (&shards);
    s_collector_release (&c);

    snprintf (prop, sizeof prop, "path=%s/none*.txt", dir);
    s_collector_init (&c, 100);
    const char *kv2[] = {prop, NULL};
    ck_assert_int_eq (s_read_all (&weir__reader_lines, kv2, &c, &shards, &err), WEIR_EIO);
    ck_assert_msg (strstr (err.msg, "lines: no file matches"), "%s", err.msg);
    weir__shards_release (&shards);
    s_collector_release (&c);
    testutil_rmdir (dir);
}
END_TEST

//  The identity of the file at PATH now.
static weir__identity s_identity (const char *path)
{
    weir__identity id;
    int fd = open (path, O_RDONLY);
    struct stat st;
    ck_assert (fd >= 0 && fstat (fd, &st) == 0);
    weir__identity_of (fd, &st, &id);
    close (fd);
    return id;
}

START_TEST (test_follow_never_takes_a_rotated_copy_for_a_new_file)
{
    char *dir = testutil_mkdtemp ();
    char live[4200], one[4200], two[4200], other[4200], pattern[4200];
    snprintf (live, sizeof live, "%s/app.log", dir);
    snprintf (one, sizeof one, "%s/app.log.1", dir);
    snprintf (two, sizeof two, "%s/app.log.2", dir);
    snprintf (other, sizeof other, "%s/app.log.other", dir);
    snprintf (pattern, sizeof pattern, "%s/app.log*", dir);
    testutil_write (live, "a\nb\n", 4);
    weir__err err;
    weir__err_init (&err);
    weir__follow *follow;
    ck_assert_int_eq (weir__follow_new ("lines", pattern, &follow, &err), 0);
    weir__shards shards;
    weir__shards_init (&shards);
    shards.follow = 1;
    ck_assert_int_eq (weir__follow_discover (follow, &shards, &err), 0);
    ck_assert_uint_eq (shards.count, 1);
    ck_assert (shards.items[0].id.known && shards.items[0].check);

    //  Rotated, the shard still in the old file: its copy is no new file
    ck_assert_int_eq (rename (live, one), 0);
    testutil_write (live, "c\n", 2);
    ck_assert_int_eq (weir__follow_discover (follow, &shards, &err), 0);
    ck_assert_uint_eq (shards.count, 1);
    //  Left for the new file: still none
    ck_assert_int_eq (weir__known_add (&shards, &shards.items[0].id), 0);
    shards.items[0].id = s_identity (live);
    ck_assert_int_eq (weir__follow_discover (follow, &shards, &err), 0);
    ck_assert_uint_eq (shards.count, 1);
    ck_assert_uint_eq (shards.nread, 1);
    //  A file never read is one, whatever its name
    testutil_write (other, "d\n", 2);
    ck_assert_int_eq (weir__follow_discover (follow, &shards, &err), 0);
    ck_assert_uint_eq (shards.count, 2);
    ck_assert (strstr (shards.items[1].path, "app.log.other"));
    //  The copy deleted: forgotten, its inode free for a new file
    ck_assert_int_eq (unlink (one), 0);
    ck_assert_int_eq (weir__follow_discover (follow, &shards, &err), 0);
    ck_assert_uint_eq (shards.nread, 0);
    weir__shards_release (&shards);
    weir__follow_destroy (&follow);
    ck_assert_int_eq (unlink (other), 0);

    //  A resume: the glob found app.log.1 and app.log.2 first, the
    //  checkpoint's shard for app.log comes last.  app.log.1, the file
    //  the checkpoint was in, was renamed to app.log.2 since the glob
    //  (logrotate renaming every copy along): found by identity, dropped;
    //  app.log.other, never read, stays
    testutil_write (one, "old\n", 4);
    testutil_write (other, "new\n", 4);
    weir__shards_init (&shards);
    shards.follow = 1;
    ck_assert_int_eq (weir__shards_add (&shards, one, 0, UINT64_MAX), 0);
    shards.items[0].id = s_identity (one);
    ck_assert_int_eq (weir__shards_add (&shards, other, 0, UINT64_MAX), 0);
    shards.items[1].id = s_identity (other);
    ck_assert_int_eq (weir__shards_add (&shards, live, 0, UINT64_MAX), 0);
    shards.items[2].id = s_identity (one);
    ck_assert_int_eq (rename (one, two), 0);
    unsigned char fixed[] = {0, 0, 1};
    ck_assert_int_eq (weir__shards_drop_copies (&shards, fixed), 0);
    ck_assert_uint_eq (shards.count, 2);
    ck_assert (strstr (shards.items[0].path, "app.log.other"));
    ck_assert (strstr (shards.items[1].path, "/app.log") && !strstr (shards.items[1].path, "app.log."));
    weir__shards_release (&shards);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_msgpack_reader_copies_records_raw)
{
    char *dir = testutil_mkdtemp ();
    char path[4200], prop[4300];
    snprintf (path, sizeof path, "%s/in.mp", dir);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    for (int i = 0; i < 3000; i++) {
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, i);
        msgpack_pack_str_with_body (&pk, "abc", 3);
    }
    //  One record larger than the reader's first buffer (1 MiB)
    char *big = calloc (1, 3u << 20);
    msgpack_pack_bin_with_body (&pk, big, 3u << 20);
    free (big);
    testutil_write (path, sb.data, sb.size);
    snprintf (prop, sizeof prop, "path=%s", path);
    s_collector c;
    s_collector_init (&c, 64);
    weir__shards shards;
    weir__err err;
    weir__err_init (&err);
    const char *kv[] = {prop, NULL};
    ck_assert_int_eq (s_read_all (&weir__reader_msgpack, kv, &c, &shards, &err), 0);
    ck_assert_uint_eq (c.records, 3001);
    ck_assert_uint_eq (c.len, sb.size);
    ck_assert (memcmp (c.all, sb.data, sb.size) == 0);
    weir__shards_release (&shards);
    s_collector_release (&c);
    msgpack_sbuffer_destroy (&sb);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_msgpack_reader_names_file_and_offset)
{
    char *dir = testutil_mkdtemp ();
    char path[4200], prop[4300];
    snprintf (path, sizeof path, "%s/bad.mp", dir);
    struct {
        const char *bytes;
        size_t len;
        const char *message;
    } cases[] = {
        {"\x01\x02\xc1", 3, "at byte 2: invalid msgpack type byte 0xc1"},
        {"\x01\x92\x01\xc1", 4, "at byte 3: invalid msgpack type byte 0xc1"},
        {"\x01\xdd\xff\xff\xff\xff\x01", 7, "at byte 1: truncated record"},
        {"\x01\xdb\x00\x00\x00\x10"
         "abc",
         9, "at byte 1: truncated record"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        testutil_write (path, cases[i].bytes, cases[i].len);
        snprintf (prop, sizeof prop, "path=%s", path);
        s_collector c;
        s_collector_init (&c, 64);
        weir__shards shards;
        weir__err err;
        weir__err_init (&err);
        const char *kv[] = {prop, NULL};
        ck_assert_int_eq (s_read_all (&weir__reader_msgpack, kv, &c, &shards, &err), WEIR_ECORRUPT);
        ck_assert_msg (strstr (err.msg, cases[i].message) && strstr (err.msg, path), "case %zu: %s", i,
                       err.msg);
        weir__shards_release (&shards);
        s_collector_release (&c);
    }
    testutil_rmdir (dir);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("readers");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_range_shards_and_values);
    tcase_add_test (tc, test_range_errors);
    tcase_add_test (tc, test_readers_pause_and_continue);
    tcase_add_test (tc, test_lines_split_at_line_boundaries);
    tcase_add_test (tc, test_lines_glob_sorted_and_errors);
    tcase_add_test (tc, test_follow_never_takes_a_rotated_copy_for_a_new_file);
    tcase_add_test (tc, test_msgpack_reader_copies_records_raw);
    tcase_add_test (tc, test_msgpack_reader_names_file_and_offset);
    suite_add_tcase (s, tc);
    return s;
}
