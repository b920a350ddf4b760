/*  lib/scan.c - walk one msgpack object, checking structure and depth.  */
#include "config.h"
#include "lib/scan.h"

#include <stdint.h>

static uint64_t s_be (const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

weir__scan_result weir__scan (const void *buf, size_t len, size_t *size, size_t *where)
{
    const unsigned char *p = buf;
    //  left[d]: objects still to walk at nesting level d
    uint64_t left[WEIR__SCAN_MAX_DEPTH + 1];
    int depth = 0;
    size_t pos = 0;
    left[0] = 1;

    for (;;) {
        while (left[depth] == 0) {
            if (depth == 0) {
                *size = pos;
                return WEIR__SCAN_OK;
            }
            depth--;
        }
        left[depth]--;
        if (pos >= len)
            return WEIR__SCAN_INCOMPLETE;

        unsigned c = p[pos];
        size_t head = 1;        //  type byte plus length field
        int lenbytes = 0;       //  size of the big-endian length field
        uint64_t payload = 0;   //  bytes after the head
        uint64_t children = 0;  //  objects nested in it
        int per_len = 0;        //  0: length is bytes; 1: elements; 2: pairs
        int container = (c >= 0x80 && c <= 0x9f) || (c >= 0xdc && c <= 0xdf);

        if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
            ;  //  fixint, nil, false, true
        else if (c >= 0x80 && c <= 0x8f)
            children = 2 * (uint64_t) (c & 0x0f);
        else if (c >= 0x90 && c <= 0x9f)
            children = c & 0x0f;
        else if (c >= 0xa0 && c <= 0xbf)
            payload = c & 0x1f;
        else
            switch (c) {
            case 0xc4:
            case 0xd9: lenbytes = 1; break;  //  bin8, str8
            case 0xc5:
            case 0xda: lenbytes = 2; break;  //  bin16, str16
            case 0xc6:
            case 0xdb: lenbytes = 4; break;  //  bin32, str32
            case 0xc7:
                lenbytes = 1;
                head = 2;
                break;  //  ext8: + type byte
            case 0xc8:
                lenbytes = 2;
                head = 2;
                break;
            case 0xc9:
                lenbytes = 4;
                head = 2;
                break;
            case 0xca: payload = 4; break;  //  float32
            case 0xcb: payload = 8; break;  //  float64
            case 0xcc:
            case 0xd0: payload = 1; break;
            case 0xcd:
            case 0xd1: payload = 2; break;
            case 0xce:
            case 0xd2: payload = 4; break;
            case 0xcf:
            case 0xd3: payload = 8; break;
            case 0xd4: payload = 2; break;  //  fixext1: type + 1
            case 0xd5: payload = 3; break;
            case 0xd6: payload = 5; break;
            case 0xd7: payload = 9; break;
            case 0xd8: payload = 17; break;
            case 0xdc:
                lenbytes = 2;
                per_len = 1;
                break;  //  array16
            case 0xdd:
                lenbytes = 4;
                per_len = 1;
                break;  //  array32
            case 0xde:
                lenbytes = 2;
                per_len = 2;
                break;  //  map16
            case 0xdf:
                lenbytes = 4;
                per_len = 2;
                break;  //  map32
            default:
                *where = pos;  //  0xc1 is never used
                return WEIR__SCAN_INVALID;
            }

        if (lenbytes) {
            if (len - pos < 1 + (size_t) lenbytes + (head - 1))
                return WEIR__SCAN_INCOMPLETE;
            uint64_t n = s_be (p + pos + 1, lenbytes);
            head = 1 + (size_t) lenbytes + (head - 1);
            if (per_len == 1)
                children = n;
            else if (per_len == 2)
                children = 2 * n;
            else
                payload = n;
        }
        if (len - pos < head || len - pos - head < payload)
            return WEIR__SCAN_INCOMPLETE;
        //  msgpack-c refuses a container past its depth limit even when it is
        //  empty, so the check comes before looking at the count
        if (container && depth == WEIR__SCAN_MAX_DEPTH) {
            *where = pos;
            return WEIR__SCAN_TOO_DEEP;
        }
        if (children)
            left[++depth] = children;
        pos += head + (size_t) payload;
    }
}

const char *weir__scan_strerror (weir__scan_result r)
{
    switch (r) {
    case WEIR__SCAN_OK: return "valid record";
    case WEIR__SCAN_INCOMPLETE: return "truncated record";
    case WEIR__SCAN_INVALID: return "invalid msgpack type byte 0xc1";
    case WEIR__SCAN_TOO_DEEP: return "record nested deeper than 32 levels";
    }
    return "unknown scan result";
}
