/*  lib/jsonparse.cc - JSON into msgpack with simdjson, behind a C
    interface.  The one C++ file of weir: nothing C++ crosses its edge,
    no exception leaves it.

    Each text is copied into a buffer of this parser's with the zero
    padding simdjson reads past the end (SIMDJSON_PADDING bytes), then
    parsed whole by simdjson's DOM parser (runtime dispatch to the best
    SIMD kernels of the machine), then its tape walked into msgpack.  */
#include "config.h"

#include <new>
#include <simdjson.h>

//  weir's C headers, with C linkage (lib/jsonparse.h includes batch.h)
extern "C" {
#include "lib/batch.h"
#include "lib/jsonwhere.h"
#include "lib/pack.h"
#include "lib/scan.h"
}
#include "lib/jsonparse.h"

struct weir__jsonparse {
    simdjson::dom::parser parser;
    char *copy = nullptr;  //  the text, padded
    size_t cap = 0;
    weir__buf wide;  //  the text with integers beyond 64 bits made floats
    char problem[160];
};

extern "C" weir__jsonparse *weir__jsonparse_new (void)
{
    weir__jsonparse *self = new (std::nothrow) weir__jsonparse;
    if (!self)
        return nullptr;
    weir__buf_init (&self->wide);
    //  simdjson's limit is a guard: it counts an empty container as no
    //  level, so the walk below checks the depth that msgpack-c counts
    if (self->parser.allocate (64 * 1024, WEIR__SCAN_MAX_DEPTH + 2) != simdjson::SUCCESS) {
        delete self;
        return nullptr;
    }
    return self;
}

extern "C" void weir__jsonparse_destroy (weir__jsonparse *self)
{
    if (!self)
        return;
    free (self->copy);
    weir__buf_release (&self->wide);
    delete self;
}

static int s_byte (weir__batch *b, unsigned char c)
{
    char *p = weir__pack_room (b, 1);
    if (!p)
        return -1;
    *p = (char) c;
    b->len++;
    return 0;
}

//  0, -1 out of memory, or S_TOO_DEEP
#define S_TOO_DEEP -2

static int s_pack (weir__batch *b, simdjson::dom::element e, int depth)
{
    using namespace simdjson::dom;
    switch (e.type ()) {
    case element_type::OBJECT: {
        if (depth == WEIR__SCAN_MAX_DEPTH)
            return S_TOO_DEEP;
        object o = e.get_object ().value_unsafe ();
        size_t n = o.size ();
        if (n > UINT32_MAX || weir__pack_map (b, (uint32_t) n))
            return -1;
        for (key_value_pair kv : o) {
            if (weir__pack_str (b, kv.key.data (), kv.key.size ()))
                return -1;
            if (int rc = s_pack (b, kv.value, depth + 1))
                return rc;
        }
        return 0;
    }
    case element_type::ARRAY: {
        if (depth == WEIR__SCAN_MAX_DEPTH)
            return S_TOO_DEEP;
        array a = e.get_array ().value_unsafe ();
        size_t n = a.size ();
        if (n > UINT32_MAX || weir__pack_array (b, (uint32_t) n))
            return -1;
        for (element v : a)
            if (int rc = s_pack (b, v, depth + 1))
                return rc;
        return 0;
    }
    case element_type::STRING: {
        std::string_view s = e.get_string ().value_unsafe ();
        return weir__pack_str (b, s.data (), s.size ());
    }
    case element_type::INT64: return weir__pack_int64 (b, e.get_int64 ().value_unsafe ());
    case element_type::UINT64: return weir__pack_uint64 (b, e.get_uint64 ().value_unsafe ());
    case element_type::DOUBLE: return weir__pack_double (b, e.get_double ().value_unsafe ());
    case element_type::BOOL: return s_byte (b, e.get_bool ().value_unsafe () ? 0xc3 : 0xc2);
    case element_type::NULL_VALUE: return s_byte (b, 0xc0);
    }
    return -1;
}

//  Parse the N bytes at TEXT into *ROOT, through the padded copy
static simdjson::error_code s_parse (weir__jsonparse *self, const char *text, size_t n,
                                     simdjson::dom::element *root)
{
    size_t need = n + simdjson::SIMDJSON_PADDING;
    if (need > self->cap) {
        size_t cap = self->cap ? self->cap : 4096;
        while (cap < need)
            cap *= 2;
        char *copy = static_cast<char *> (realloc (self->copy, cap));
        if (!copy)
            return simdjson::MEMALLOC;
        self->copy = copy;
        self->cap = cap;
    }
    memcpy (self->copy, text, n);
    memset (self->copy + n, 0, simdjson::SIMDJSON_PADDING);
    return self->parser.parse (self->copy, n, false).get (*root);
}

extern "C" int weir__jsonparse_pack (weir__jsonparse *self, const char *text, size_t n, weir__batch *b,
                                     size_t *where, const char **problem)
{
    try {
        simdjson::dom::element root;
        simdjson::error_code error = s_parse (self, text, n, &root);
        if (error == simdjson::NUMBER_ERROR) {
            //  Perhaps an integer beyond 64 bits: JSON has it, and it
            //  becomes the nearest double, as other tools read it
            int widened = weir__jsonwhere_widen (text, n, &self->wide);
            if (widened < 0)
                return -1;
            if (widened)
                error = s_parse (self, self->wide.data, self->wide.len, &root);
        }
        if (!error) {
            size_t mark = b->len;
            int rc = s_pack (b, root, 0);
            if (!rc)
                return 0;
            b->len = mark;
            if (rc != S_TOO_DEEP)
                return -1;
            error = simdjson::DEPTH_ERROR;
        }
        if (error == simdjson::MEMALLOC)
            return -1;
        if (weir__jsonwhere (text, n, WEIR__SCAN_MAX_DEPTH, where, problem))
            return WEIR__JSONPARSE_MALFORMED;
        //  The recognizer found nothing wrong: say what simdjson said
        snprintf (self->problem, sizeof self->problem, "%s", simdjson::error_message (error));
        *where = WEIR__JSONPARSE_NOWHERE;
        *problem = self->problem;
        return WEIR__JSONPARSE_MALFORMED;
    } catch (...) {
        return -1;
    }
}
