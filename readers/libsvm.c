/*  readers/libsvm.c - the text format of libsvm, liblinear and
    scikit-learn: one example per line, `label index:value index:value ...`.

    Each line becomes [label, {index: value, ...}]:

    - the label is a msgpack integer when its value is integral and fits
      an int64 (so "+1", "-1", "3", "1.0" and "1e3" are integers; a plain
      integer is read exactly, even beyond 2^53), else a float64;
    - the map's keys are the indices, positive integers up to INT64_MAX;
      its values are all float64, zeros included when the file has them.

    With features=bins the features are [indexes, values] instead: two
    bins, the indices as little-endian uint32 and the values as
    little-endian float32 (each value read as a double, then rounded to
    the nearest float32, as (float) does to the maps' doubles).  Why: a
    map spends a type byte or two on every index and value, and whoever
    reads it (the engine finding the record's end, a processor reading
    it) takes a step per pair; two bins are two steps, and their arrays
    are read as they are.  A Fashion-MNIST image is 4,555 bytes as a map
    and 3,132 as bins, and softmax learns it in about half the time.  An index
    above 4294967295, or a value beyond float32's range, is an error
    naming the line and byte.

    What is accepted is what liblinear's train accepts, made strict (it
    also takes "1 +2:0x10"), so that both can train on the same file.
    They differ only at the edges of the numbers: liblinear's indices are
    ints (below 2^31), and its strtod check refuses values that underflow
    (1e-400, most subnormals), which are read here as they round.  So:

    - blanks are spaces and tabs, any number, also before the label and
      after the last feature; a CR before the newline is dropped (CRLF);
    - a line with only a label is an example without features, but an
      empty (or blank) line is an error, as it is for liblinear;
    - indices must ascend strictly: a duplicate or a smaller index is an
      error, as it is for liblinear;
    - numbers are decimal (sign, digits, point, exponent: lib/decimal.h);
      inf, nan and hexadecimal are refused, and so is a value too large
      for a double;
    - '#' comments (which scikit-learn strips) are refused with a message
      that says so, and so is scikit-learn's qid:N (not a positive index).

    An error names the file, the line number and the byte offset of the
    offending text.  Shards and offsets are those of the lines reader: a
    file larger than split= is cut at line boundaries.  A shard that
    starts inside a file, or a read that resumes inside a shard, knows its
    byte offset but not its line number: the newlines before it are
    counted only when an error has to be reported.  */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/decimal.h"
#include "lib/pack.h"
#include "readers/filereader.h"
#include "readers/files.h"
#include "readers/lineno.h"

static const weir_property_info s_props[] = {
    WEIR__FILEREADER_PATH ("libsvm text files to read"),
    WEIR__FILEREADER_SPLIT,
    WEIR__FILEREADER_MAX_LINE (""),
    WEIR__FILEREADER_SNIFF,
    {"features", "map",
     "map: [label, {index: value}] with float64 values; bins: [label, [indexes, values]], two bins of "
     "little-endian uint32 indices and float32 values (indices up to 4294967295)"},
    {NULL, NULL, NULL},
};

typedef struct {
    uint64_t index;
    double value;
} s_feature;

//  One parsed line, and where it went wrong when it did.
typedef struct {
    int bins;  //  features=bins: indices must fit a uint32, values a float32
    int integral;
    int64_t label_int;
    double label;
    s_feature *items;
    size_t count, cap;
    size_t where;  //  offset of the offending text in the line
    char problem[256];
} s_example;

#define S_MALFORMED 1

//  Text of the file as it stands in a message: quoted by the caller,
//  cut after 40 bytes, bytes that are not printable ASCII as \xNN.
static const char *s_show (char *out, size_t size, const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < size; i++) {
        unsigned char c = (unsigned char) p[i];
        if (i == 40) {
            memcpy (out + o, "...", 3);
            o += 3;
            break;
        }
        if (c >= 0x20 && c < 0x7f)
            out[o++] = (char) c;
        else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

static int s_bad (s_example *ex, size_t where, const char *fmt, ...) WEIR_PRINTF (3, 4);

static int s_bad (s_example *ex, size_t where, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (ex->problem, sizeof ex->problem, fmt, ap);
    va_end (ap);
    ex->where = where;
    return S_MALFORMED;
}

static inline int s_blank (char c)
{
    return c == ' ' || c == '\t';
}

static int s_label (s_example *ex, const char *p, size_t n, size_t at)
{
    char shown[200];
    if (weir__decimal_parse_int (p, n, &ex->label_int) == 0) {
        ex->integral = 1;
        return 0;
    }
    int rc = weir__decimal_parse (p, n, &ex->label);
    if (rc == WEIR__DECIMAL_NOMEM)
        return WEIR_ENOMEM;
    if (rc == WEIR__DECIMAL_RANGE)
        return s_bad (ex, at, "label '%s' is out of range", s_show (shown, sizeof shown, p, n));
    if (rc)
        return s_bad (ex, at, "label '%s' is not a number", s_show (shown, sizeof shown, p, n));
    //  Integral values are integers, whatever their spelling: labels are
    //  class numbers far more often than they are measurements
    ex->integral = ex->label >= -9223372036854775808.0 && ex->label < 9223372036854775808.0
                   && (double) (int64_t) ex->label == ex->label;
    if (ex->integral)
        ex->label_int = (int64_t) ex->label;
    return 0;
}

static int s_feature_at (s_example *ex, const char *p, size_t n, size_t at)
{
    char shown[200];
    if (*p == '#')
        return s_bad (ex, at, "'#' comments are not part of the libsvm format");
    const char *colon = memchr (p, ':', n);
    if (!colon)
        return s_bad (ex, at, "feature '%s' is not index:value", s_show (shown, sizeof shown, p, n));
    size_t in = (size_t) (colon - p);
    //  Digits only: liblinear's strtol would also take a sign and blanks
    uint64_t index = 0;
    int digits = in > 0, large = 0;
    for (size_t i = 0; i < in && digits; i++) {
        if (p[i] < '0' || p[i] > '9')
            digits = 0;
        else if (index > (UINT64_C (9223372036854775807) - (uint64_t) (p[i] - '0')) / 10)
            large = 1;
        else
            index = index * 10 + (uint64_t) (p[i] - '0');
    }
    if (!digits || (!large && index == 0)) {
        if (in == 0)
            return s_bad (ex, at, "feature '%s' has no index", s_show (shown, sizeof shown, p, n));
        return s_bad (ex, at, "index '%s' is not a positive integer", s_show (shown, sizeof shown, p, in));
    }
    if (large)
        return s_bad (ex, at, "index '%s' is too large (the largest is 9223372036854775807)",
                      s_show (shown, sizeof shown, p, in));
    if (ex->bins && index > UINT32_MAX)
        return s_bad (ex, at, "index %llu is too large for features=bins (the largest is 4294967295)",
                      (unsigned long long) index);
    if (ex->count) {
        uint64_t last = ex->items[ex->count - 1].index;
        if (index == last)
            return s_bad (ex, at, "index %llu appears twice", (unsigned long long) index);
        if (index < last)
            return s_bad (ex, at, "index %llu comes after index %llu: indices must ascend",
                          (unsigned long long) index, (unsigned long long) last);
    }
    const char *v = colon + 1;
    size_t vn = n - in - 1;
    if (vn == 0)
        return s_bad (ex, at, "index %llu has no value", (unsigned long long) index);
    double value;
    int rc = weir__decimal_parse (v, vn, &value);
    if (rc == WEIR__DECIMAL_NOMEM)
        return WEIR_ENOMEM;
    if (rc)
        return s_bad (ex, at + in + 1, "value '%s' of index %llu is %s", s_show (shown, sizeof shown, v, vn),
                      (unsigned long long) index,
                      rc == WEIR__DECIMAL_RANGE ? "out of range" : "not a number");
    if (ex->bins && !(fabsf ((float) value) <= FLT_MAX))
        return s_bad (ex, at + in + 1, "value '%s' of index %llu is beyond a float32's range (features=bins)",
                      s_show (shown, sizeof shown, v, vn), (unsigned long long) index);
    if (ex->count == ex->cap) {
        size_t cap = ex->cap ? ex->cap * 2 : 256;
        s_feature *items = realloc (ex->items, cap * sizeof *items);
        if (!items)
            return WEIR_ENOMEM;
        ex->items = items;
        ex->cap = cap;
    }
    ex->items[ex->count].index = index;
    ex->items[ex->count].value = value;
    ex->count++;
    return 0;
}

//  The common feature, read in one pass: an index of at most 18 digits
//  (no overflow), ':', a number, then a blank or the line's end, the index
//  above the last one.  1 when it was that (the feature is in EX and *END
//  past it); 0 sends the feature to s_feature_at, which takes what is
//  unusual and names what is wrong
static int s_feature_fast (s_example *ex, const char *p, size_t i, size_t n, size_t *end)
{
    uint64_t index = 0;
    size_t k = i;
    while (k < n && k - i < 18 && p[k] >= '0' && p[k] <= '9')
        index = index * 10 + (uint64_t) (p[k++] - '0');
    if (k == i || k >= n || p[k] != ':' || index == 0 || ex->count == ex->cap
        || (ex->count && index <= ex->items[ex->count - 1].index))
        return 0;
    k++;
    double value;
    size_t used;
    if (weir__decimal_parse_prefix (p + k, n - k, &value, &used) || (k + used < n && !s_blank (p[k + used])))
        return 0;
    //  What features=bins cannot hold, s_feature_at names
    if (ex->bins && (index > UINT32_MAX || !(fabsf ((float) value) <= FLT_MAX)))
        return 0;
    ex->items[ex->count].index = index;
    ex->items[ex->count].value = value;
    ex->count++;
    *end = k + used;
    return 1;
}

//  Parse the N bytes of a line (without its newline): 0, S_MALFORMED with
//  EX's problem and where, or WEIR_ENOMEM.
static int s_parse (s_example *ex, const char *p, size_t n)
{
    ex->count = 0;
    if (n > 0 && p[n - 1] == '\r')
        n--;
    size_t i = 0, j;
    while (i < n && s_blank (p[i]))
        i++;
    if (i == n)
        return s_bad (ex, 0,
                      "the line is empty (each line must be an example: a label, then index:value "
                      "pairs)");
    for (j = i; j < n && !s_blank (p[j]); j++)
        ;
    if (p[i] == '#')
        return s_bad (ex, i, "'#' comments are not part of the libsvm format");
    if (memchr (p + i, ':', j - i)) {
        char shown[200];
        return s_bad (ex, i, "the line has no label: it starts with the feature '%s'",
                      s_show (shown, sizeof shown, p + i, j - i));
    }
    int rc = s_label (ex, p + i, j - i, i);
    while (!rc) {
        for (i = j; i < n && s_blank (p[i]); i++)
            ;
        if (i == n)
            break;
        if (s_feature_fast (ex, p, i, n, &j))
            continue;
        for (j = i; j < n && !s_blank (p[j]); j++)
            ;
        rc = s_feature_at (ex, p + i, j - i, i);
    }
    return rc;
}

//  The indices of EX's features, or with VALUES their values as float32,
//  as a bin of 4-byte little-endian words
static int s_pack_words (weir__batch *b, const s_example *ex, int values)
{
    size_t n = ex->count * 4;
    char *p = weir__pack_room (b, 5 + n);
    if (!p)
        return -1;
    p += weir__pack_bytes_header (p, (uint32_t) n, 1);
    for (size_t i = 0; i < ex->count; i++, p += 4) {
        uint32_t w = (uint32_t) ex->items[i].index;
        if (values) {
            float f = (float) ex->items[i].value;
            memcpy (&w, &f, sizeof w);
        }
        p[0] = (char) w;
        p[1] = (char) (w >> 8);
        p[2] = (char) (w >> 16);
        p[3] = (char) (w >> 24);
    }
    b->len = (size_t) (p - b->data);
    return 0;
}

static int s_pack (weir__batch *b, const s_example *ex)
{
    if (ex->bins) {
        //  A bin holds at most 4 GiB - 1: a line of a billion features
        if (ex->count > UINT32_MAX / 4 || weir__pack_array (b, 2)
            || (ex->integral ? weir__pack_int64 (b, ex->label_int) : weir__pack_double (b, ex->label))
            || weir__pack_array (b, 2))
            return -1;
        return s_pack_words (b, ex, 0) || s_pack_words (b, ex, 1);
    }
    if (ex->count > UINT32_MAX || weir__pack_array (b, 2)
        || (ex->integral ? weir__pack_int64 (b, ex->label_int) : weir__pack_double (b, ex->label))
        || weir__pack_map (b, (uint32_t) ex->count))
        return -1;
    for (size_t i = 0; i < ex->count; i++)
        if (weir__pack_uint64 (b, ex->items[i].index) || weir__pack_double (b, ex->items[i].value))
            return -1;
    return 0;
}

//  An error about the line that starts at byte LINE_AT of the shard's file,
//  LINES lines after the one that starts at FIRST, where this read began.
static int s_fail (const weir__shard *shard, uint64_t first, uint64_t lines, uint64_t at, weir__err *err,
                   const char *problem)
{
    uint64_t before;
    weir__err e;
    weir__err_init (&e);
    if (weir__lineno_count ("libsvm", shard->path, first, &before, &e))
        //  Without the line number, the byte offset still says where
        return weir__err_set (err, WEIR_ECORRUPT, "libsvm: '%s' at byte %llu: %s" WEIR__SKIP_HINT, shard->path,
                              (unsigned long long) at, problem);
    return weir__err_set (err, WEIR_ECORRUPT, "libsvm: '%s' line %llu (byte %llu): %s" WEIR__SKIP_HINT, shard->path,
                          (unsigned long long) (before + lines + 1), (unsigned long long) at, problem);
}

static int s_read (void *own, size_t max_line, weir__shard *shard, weir__window *w, uint64_t *offset,
                   weir__sink *sink, weir__err *err)
{
    int rc;
    const uint64_t first = *offset;
    uint64_t lines = 0;  //  lines read by this call
    s_example ex;
    memset (&ex, 0, sizeof ex);
    ex.bins = *(const int *) own;
    for (;;) {
        const char *line;
        size_t n;
        rc = weir__window_line (w, "libsvm", &line, &n, err);
        if (rc == WEIR__WINDOW_FULL) {
            char problem[64];
            snprintf (problem, sizeof problem, "line longer than max-line=%zu bytes", max_line);
            if (sink->skip) {
                if ((rc = weir__window_reject_line (w, "libsvm", problem, offset, err)))
                    break;
                lines++;
                continue;
            }
            rc = s_fail (shard, first, lines, weir__window_offset (w, w->lo), err, problem);
        }
        if (rc || !line)
            break;
        rc = s_parse (&ex, line, n);
        if (rc == S_MALFORMED && sink->skip) {
            //  The whole line goes, newline included
            char reason[320];
            snprintf (reason, sizeof reason, "%s (at byte %llu of the line)", ex.problem,
                      (unsigned long long) ex.where);
            rc = weir__window_reject_read (w, line, n, first, lines, reason, offset);
            lines++;
            if (rc)
                break;
            continue;
        }
        if (rc == S_MALFORMED) {
            uint64_t at = weir__window_offset (w, (size_t) (line - w->buf)) + ex.where;
            rc = s_fail (shard, first, lines, at, err, ex.problem);
            break;
        }
        //  The record is in the batch, and the offset past it, before the
        //  sink may pause the epoch
        if (rc || s_pack (&sink->batch, &ex)) {
            rc = WEIR_ENOMEM;
            break;
        }
        lines++;
        *offset = weir__window_offset (w, w->lo);
        if ((rc = weir__sink_add (sink)))
            break;
    }
    if (rc == WEIR_ENOMEM)
        weir__err_set (err, rc, "libsvm: out of memory");
    free (ex.items);
    return rc;
}

//  features=map|bins into *OWN, an int: 1 for bins
static int s_features_open (weir__props *props, void **own, weir__err *err)
{
    weir__prop *p = weir__props_find (props, "features");
    const char *form = p ? p->value : "map";
    if (strcmp (form, "map") && strcmp (form, "bins"))
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "libsvm: features=%s is neither map nor bins", form);
    int *bins = malloc (sizeof *bins);
    if (!bins)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    *bins = !strcmp (form, "bins");
    *own = bins;
    return 0;
}

static const weir__filereader_class s_files = {
    .reader = &weir__reader_libsvm,
    .lines = 1,
    .open = s_features_open,
    .read = s_read,
    .close = free,
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    return weir__filereader_open (&s_files, props, state, shards, err);
}

const weir__reader_class weir__reader_libsvm = WEIR__FILEREADER_READER (
    "libsvm",
    "libsvm / liblinear text files: each line `label index:value ...` as [label, {index: value}] (or, with "
    "features=bins, [label, [indexes, values]])",
    s_props, s_open, WEIR__RECORDS_LINES);
