/*  tests/fuzz/fuzz_scan.c - the record scanner and decoder on any bytes.

    Whatever the input, the scanner must answer without reading past it;
    what it accepts must decode, and what decodes must pack again into
    bytes the scanner accepts, with the same number of objects.  */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/pack.h"
#include "lib/scan.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
    //  A small limit too: the element count must be checked early
    for (int pass = 0; pass < 2; pass++) {
        size_t size = 0, where = 0;
        weir__scan_result r = weir__scan_limited (data, len, pass ? 16 : 8000000, &size, &where);
        if (r != WEIR__SCAN_OK) {
            assert (where <= len);
            continue;
        }
        assert (size > 0 && size <= len);
        //  Decode the one record the scanner accepted
        weir__records it;
        if (weir__records_init (&it))
            return 0;
        weir__records_reset (&it, (const char *) data, size);
        msgpack_object obj;
        int got = weir__records_next (&it, &obj);
        assert (got == 1 || got == WEIR__RECORDS_NOMEM);
        if (got == 1) {
            weir__batch b;
            if (weir__batch_init (&b, 64) == 0) {
                if (weir__pack_object (&b, &obj) == 0 && !b.oom) {
                    size_t again = 0, at = 0;
                    assert (weir__scan (b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b), &again, &at)
                            == WEIR__SCAN_OK);
                    assert (again == weir__batch_payload (&b));
                }
                weir__batch_release (&b);
            }
            assert (weir__records_next (&it, &obj) == 0);
        }
        weir__records_release (&it);
    }
    return 0;
}
