/*  lib/pack.c - msgpack encoding of whole objects into a batch.  */
#include "config.h"
#include "lib/pack.h"

#include <weir/plugin.h>

int weir__pack_bytes (weir__batch *b, const char *data, size_t n, int bin)
{
    if (n > UINT32_MAX)
        return -1;
    char *p = weir__pack_room (b, 5 + n);
    if (!p)
        return -1;
    size_t head = weir__pack_bytes_header (p, (uint32_t) n, bin);
    if (n)
        memcpy (p + head, data, n);
    b->len += head + n;
    return 0;
}

static int s_ext (weir__batch *b, int8_t type, const char *data, uint32_t n)
{
    char *p = weir__pack_room (b, 6 + (size_t) n);
    if (!p)
        return -1;
    size_t head;
    switch (n) {
    case 1:
        p[0] = (char) 0xd4;
        head = 1;
        break;
    case 2:
        p[0] = (char) 0xd5;
        head = 1;
        break;
    case 4:
        p[0] = (char) 0xd6;
        head = 1;
        break;
    case 8:
        p[0] = (char) 0xd7;
        head = 1;
        break;
    case 16:
        p[0] = (char) 0xd8;
        head = 1;
        break;
    default:
        if (n < 256) {
            p[0] = (char) 0xc7;
            p[1] = (char) n;
            head = 2;
        }
        else if (n < 65536) {
            p[0] = (char) 0xc8;
            weir__pack_be16 (p + 1, (uint16_t) n);
            head = 3;
        }
        else {
            p[0] = (char) 0xc9;
            weir__pack_be32 (p + 1, n);
            head = 5;
        }
    }
    p[head] = (char) type;
    if (n)
        memcpy (p + head + 1, data, n);
    b->len += head + 1 + n;
    return 0;
}

int weir__pack_object (weir__batch *b, const msgpack_object *o)
{
    char *p;
    switch (o->type) {
    case MSGPACK_OBJECT_NIL:
    case MSGPACK_OBJECT_BOOLEAN:
        if (!(p = weir__pack_room (b, 1)))
            return -1;
        p[0] = (char) (o->type == MSGPACK_OBJECT_NIL ? 0xc0 : o->via.boolean ? 0xc3 : 0xc2);
        b->len += 1;
        return 0;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return weir__pack_uint64 (b, o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return weir__pack_int64 (b, o->via.i64);
    case MSGPACK_OBJECT_FLOAT32: {
        if (!(p = weir__pack_room (b, 5)))
            return -1;
        float f = (float) o->via.f64;
        uint32_t bits;
        memcpy (&bits, &f, 4);
        p[0] = (char) 0xca;
        weir__pack_be32 (p + 1, bits);
        b->len += 5;
        return 0;
    }
    case MSGPACK_OBJECT_FLOAT64: return weir__pack_double (b, o->via.f64);
    case MSGPACK_OBJECT_STR: return weir__pack_str (b, o->via.str.ptr, o->via.str.size);
    case MSGPACK_OBJECT_BIN: return weir__pack_bytes (b, o->via.bin.ptr, o->via.bin.size, 1);
    case MSGPACK_OBJECT_EXT: return s_ext (b, o->via.ext.type, o->via.ext.ptr, o->via.ext.size);
    case MSGPACK_OBJECT_ARRAY:
        if (weir__pack_array (b, o->via.array.size))
            return -1;
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if (weir__pack_object (b, &o->via.array.ptr[i]))
                return -1;
        return 0;
    case MSGPACK_OBJECT_MAP:
        if (weir__pack_map (b, o->via.map.size))
            return -1;
        for (uint32_t i = 0; i < o->via.map.size; i++)
            if (weir__pack_object (b, &o->via.map.ptr[i].key)
                || weir__pack_object (b, &o->via.map.ptr[i].val))
                return -1;
        return 0;
    }
    return -1;
}

//  Public (<weir/plugin.h>), here with the other msgpack helpers
const char *weir_type_name (const msgpack_object *o)
{
    switch (o ? o->type : (msgpack_object_type) -1) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return "positive integer";
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "negative integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "float";
    case MSGPACK_OBJECT_STR: return "str";
    case MSGPACK_OBJECT_BIN: return "bin";
    case MSGPACK_OBJECT_ARRAY: return "array";
    case MSGPACK_OBJECT_MAP: return "map";
    case MSGPACK_OBJECT_EXT: return "ext";
    default: return "unknown";
    }
}
