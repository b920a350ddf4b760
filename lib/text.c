/*  lib/text.c - JSON-like text of msgpack objects.  */
#include "config.h"
#include "lib/text.h"

#include "lib/batch.h"
#include "lib/pack.h"

#include <inttypes.h>
#include <math.h>

int weir__text_append_string (weir__buf *b, const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (weir__buf_reserve (b, n + 2))
        return -1;
    b->data[b->len++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) p[i];
        char esc = 0;
        switch (c) {
        case '"': esc = '"'; break;
        case '\\': esc = '\\'; break;
        case '\n': esc = 'n'; break;
        case '\r': esc = 'r'; break;
        case '\t': esc = 't'; break;
        case '\b': esc = 'b'; break;
        case '\f': esc = 'f'; break;
        }
        if (esc) {
            char e[2] = {'\\', esc};
            if (weir__buf_append (b, e, 2))
                return -1;
        }
        else if (c < 0x20 || c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (weir__buf_append (b, e, 6))
                return -1;
        }
        else if (weir__buf_putc (b, (char) c))
            return -1;
    }
    return weir__buf_putc (b, '"');
}

static int s_float (weir__buf *b, double v)
{
    if (isnan (v))
        return weir__buf_append (b, "nan", 3);
    if (isinf (v))
        return v > 0 ? weir__buf_append (b, "inf", 3) : weir__buf_append (b, "-inf", 4);
    //  17 significant digits: the text reads back as the same double
    return weir__buf_printf (b, "%.17g", v);
}

//  A map key that is not a string, as a JSON string.  A scalar is its own
//  text ("1", "true"); anything else is "msgpack:" and the hex of its
//  msgpack bytes.  Quoting a container's JSON text would escape every
//  quote of it again at each level of keys within keys, doubling the
//  size per level: a 53-byte record became a 134 MB line.  Hex is linear.
static int s_key (weir__buf *b, const msgpack_object *key)
{
    weir__buf text;
    weir__buf_init (&text);
    int rc = 0;
    switch (key->type) {
    case MSGPACK_OBJECT_NIL:
    case MSGPACK_OBJECT_BOOLEAN:
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: rc = weir__text_append (&text, key); break;
    default: {
        static const char hex[] = "0123456789abcdef";
        weir__batch packed;
        rc = weir__batch_init (&packed, 64) || weir__pack_object (&packed, key)
             || weir__buf_append (&text, "msgpack:", 8);
        for (size_t i = WEIR__BATCH_HEADER; !rc && i < packed.len; i++) {
            unsigned char c = (unsigned char) packed.data[i];
            rc = weir__buf_putc (&text, hex[c >> 4]) || weir__buf_putc (&text, hex[c & 15]);
        }
        weir__batch_release (&packed);
    }
    }
    rc = rc || weir__text_append_string (b, text.data, text.len);
    weir__buf_release (&text);
    return rc ? -1 : 0;
}

int weir__text_append (weir__buf *b, const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return weir__buf_append (b, "null", 4);
    case MSGPACK_OBJECT_BOOLEAN:
        return o->via.boolean ? weir__buf_append (b, "true", 4) : weir__buf_append (b, "false", 5);
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return weir__buf_printf (b, "%" PRIu64, o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return weir__buf_printf (b, "%" PRId64, o->via.i64);
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return s_float (b, o->via.f64);
    case MSGPACK_OBJECT_STR: return weir__text_append_string (b, o->via.str.ptr, o->via.str.size);
    case MSGPACK_OBJECT_BIN: return weir__text_append_string (b, o->via.bin.ptr, o->via.bin.size);
    case MSGPACK_OBJECT_ARRAY:
        if (weir__buf_putc (b, '['))
            return -1;
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if ((i && weir__buf_putc (b, ',')) || weir__text_append (b, &o->via.array.ptr[i]))
                return -1;
        return weir__buf_putc (b, ']');
    case MSGPACK_OBJECT_MAP:
        if (weir__buf_putc (b, '{'))
            return -1;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object_kv *kv = &o->via.map.ptr[i];
            if (i && weir__buf_putc (b, ','))
                return -1;
            if (kv->key.type == MSGPACK_OBJECT_STR) {
                if (weir__text_append (b, &kv->key))
                    return -1;
            }
            else if (s_key (b, &kv->key))
                return -1;
            if (weir__buf_putc (b, ':') || weir__text_append (b, &kv->val))
                return -1;
        }
        return weir__buf_putc (b, '}');
    case MSGPACK_OBJECT_EXT: {
        static const char hex[] = "0123456789abcdef";
        if (weir__buf_printf (b, "{\"ext\":%d,\"hex\":\"", (int) o->via.ext.type))
            return -1;
        for (uint32_t i = 0; i < o->via.ext.size; i++) {
            unsigned char c = (unsigned char) o->via.ext.ptr[i];
            char h[2] = {hex[c >> 4], hex[c & 15]};
            if (weir__buf_append (b, h, 2))
                return -1;
        }
        return weir__buf_append (b, "\"}", 2);
    }
    }
    return weir__buf_append (b, "?", 1);
}
