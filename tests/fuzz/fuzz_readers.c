/*  tests/fuzz/fuzz_readers.c - the file readers on any file.

    The input becomes a file read by lines, libsvm (its features as maps
    and as bins), msgpack and json, each once failing on the first bad
    record and once skipping bad records; msgpack
    cut into shards of 16 bytes, and a gzip or zstd input read decompressed
    (without skip: sniff=off reads it as it is).  A
    reader must end with its records or an error that names a byte inside
    the file, never crash or read past it; with skip it must get through
    the whole file.  */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "readers/reader.h"
#include "readers/shards.h"

static int s_send (weir__sink *sink)
{
    weir__batch_clear (&sink->batch);
    sink->quota = UINT64_MAX;
    return 0;
}

static int s_reject (weir__sink *sink, const weir__bad *bad)
{
    (void) sink;
    assert (bad->reason && bad->reason[0]);
    return 0;
}

static void s_read_all (const weir__reader_class *reader, const char *path, const char *extra, int skip,
                        int bins)
{
    weir__props props;
    weir__props_init (&props);
    weir__err err;
    weir__err_init (&err);
    weir__props_add (&props, "path", path, -1, -1);
    if (extra)
        weir__props_add (&props, "max-line", extra, -1, -1);
    if (bins)
        weir__props_add (&props, "features", "bins", -1, -1);
    //  msgpack cuts a file larger than split= at the boundaries a scan
    //  finds: tiny shards, so that the scan of the plan is fuzzed too
    if (reader == &weir__reader_msgpack)
        weir__props_add (&props, "split", "16", -1, -1);
    //  With skip every byte is a record or part of a bad one, whatever the
    //  first bytes say (a compressed file is refused, not skipped: that
    //  is sniff's part, fuzzed in the pass without skip)
    if (skip)
        weir__props_add (&props, "sniff", "off", -1, -1);
    weir__shards shards;
    weir__shards_init (&shards);
    void *state = NULL;
    if (reader->open (&props, &state, &shards, &err) == 0) {
        weir__sink sink;
        memset (&sink, 0, sizeof sink);
        weir__batch_init (&sink.batch, 256);
        sink.limit = 1000000;
        sink.quota = UINT64_MAX;
        sink.send = s_send;
        sink.skip = skip;
        sink.reject = s_reject;
        for (size_t i = 0; i < shards.count; i++) {
            uint64_t offset = shards.items[i].start;
            int rc = reader->read (state, &shards.items[i], &offset, &sink, &err);
            assert (rc <= 0);
            if (skip)
                assert (rc == 0 || rc == WEIR_ENOMEM);
            assert (offset <= shards.items[i].end);
            weir__batch_clear (&sink.batch);
        }
        weir__batch_release (&sink.batch);
        reader->close (state);
    }
    weir__shards_release (&shards);
    weir__props_release (&props);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
    int fd = memfd_create ("fuzz", 0);
    if (fd < 0)
        return 0;
    if (write (fd, data, len) != (ssize_t) len) {
        close (fd);
        return 0;
    }
    char path[64];
    snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
    for (int skip = 0; skip < 2; skip++) {
        s_read_all (&weir__reader_lines, path, "64", skip, 0);
        s_read_all (&weir__reader_libsvm, path, NULL, skip, 0);
        s_read_all (&weir__reader_libsvm, path, NULL, skip, 1);
        s_read_all (&weir__reader_msgpack, path, NULL, skip, 0);
        s_read_all (&weir__reader_json, path, "64", skip, 0);
    }
    close (fd);
    return 0;
}
