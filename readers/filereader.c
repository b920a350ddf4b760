/*  readers/filereader.c - the skeleton of the readers of files.  */
#include "config.h"
#include "readers/filereader.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weir/weir.h>

#include "lib/number.h"
#include "readers/files.h"
#include "readers/follow.h"
#include "lib/codec.h"
#include "readers/sniff.h"

//  sniff=: what the first bytes of a file that look wrong do
enum { S_SNIFF_OFF, S_SNIFF_WARN, S_SNIFF_FAIL };

//  The state of a reader of files
typedef struct {
    const weir__filereader_class *kind;
    size_t max;            //  max-line= or max-record=
    long follow_ms;        //  rotate-wait= when following, else WEIR__NOT_FOLLOWED
    weir__shards *shards;  //  the input's, for a followed file's window
    weir__follow *follow;  //  follow=1, else NULL
    int sniff;             //  S_SNIFF_*
    void *own;             //  the reader's own state
} s_reader;

int weir__filereader_int (const weir__reader_class *reader, weir__props *props, const char *key, int64_t min,
                          int64_t max, int64_t *out, weir__err *err)
{
    const weir_property_info *row = reader->props;
    while (row->name && strcmp (row->name, key) != 0)
        row++;
    int64_t fallback = 0;
    //  A property the skeleton reads is in the reader's table, with a default
    assert (row->name && row->fallback);
    int bad = weir__parse_int (row->fallback, &fallback);
    assert (!bad);
    (void) bad;
    return weir__props_int (props, reader->name, key, fallback, min, max, out, err);
}

//  split= and max-line=, or max-record=: *SPLIT, self->max.
static int s_sizes (s_reader *self, weir__props *props, uint64_t *split, weir__err *err)
{
    const weir__filereader_class *kind = self->kind;
    int64_t value = WEIR__FILES_WHOLE, largest = kind->largest ? kind->largest : (int64_t) (SIZE_MAX / 4);
    int rc = kind->lines || kind->scan
                 ? weir__filereader_int (kind->reader, props, "split", 1, INT64_MAX, &value, err)
                 : 0;
    *split = (uint64_t) value;
    if (!rc)
        rc = weir__filereader_int (kind->reader, props, kind->lines ? "max-line" : "max-record", 1, largest,
                                   &value, err);
    self->max = (size_t) value;
    return rc;
}

//  follow= and rotate-wait=; following, the folder of PATTERN watched and
//  the files matching now as SHARDS, each whole.
static int s_follow (s_reader *self, weir__props *props, const char *pattern, weir__shards *shards,
                     weir__err *err)
{
    const weir__reader_class *reader = self->kind->reader;
    int64_t follow, wait;
    int rc = weir__filereader_int (reader, props, "follow", 0, 1, &follow, err);
    if (!rc)
        rc = weir__filereader_int (reader, props, "rotate-wait", 0, 3600000, &wait, err);
    if (rc)
        return rc;
    if (!follow) {
        weir__prop *p = weir__props_find (props, "rotate-wait");
        return p ? weir__err_at (err, WEIR_EPROPERTY, p->key_offset, "%s: rotate-wait= applies with follow=1",
                                 reader->name)
                 : 0;
    }
    if ((rc = weir__follow_new (reader->name, pattern, &self->follow, err)))
        return rc;
    self->follow_ms = (long) wait;
    shards->follow = 1;
    return weir__follow_discover (self->follow, shards, err);
}

//  sniff=warn|fail|off into self->sniff.
static int s_sniff_mode (s_reader *self, weir__props *props, weir__err *err)
{
    const char *name = self->kind->reader->name;
    weir__prop *p = weir__props_find (props, "sniff");
    const char *mode = p ? p->value : "warn";
    self->sniff = !strcmp (mode, "warn") ? S_SNIFF_WARN : !strcmp (mode, "fail") ? S_SNIFF_FAIL
                : !strcmp (mode, "off")  ? S_SNIFF_OFF
                                         : -1;
    if (self->sniff < 0)
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset, "%s: sniff=%s is none of warn, fail, off", name,
                             mode);
    return 0;
}

//  The first bytes of the file of SHARD, open as W at its start: a file
//  compressed as weir cannot read is refused (unless sniff=off); text
//  given to msgpack, or binary to a reader of text, is said (sniff=warn)
//  or refused (sniff=fail).  A gzip or zstd file is judged by the bytes
//  it stands for, read into W.  Only a regular file is looked at: a
//  pipe's bytes cannot be read twice.
static int s_sniff (const s_reader *self, weir__window *w, const weir__shard *shard, weir__sink *sink,
                    weir__err *err)
{
    const char *name = self->kind->reader->name;
    unsigned char head[WEIR__SNIFF_BYTES];
    ssize_t n;
    int whole;
    if (w->z) {
        int rc = weir__window_fill (w, name, err);
        if (rc < 0)
            return rc;
        n = (ssize_t) (w->hi - w->lo < sizeof head ? w->hi - w->lo : sizeof head);
        memcpy (head, w->buf + w->lo, (size_t) n);
        whole = w->eof && w->hi - w->lo <= sizeof head;
    }
    else {
        n = pread (w->fd, head, sizeof head, 0);
        whole = shard->end <= (uint64_t) n;
    }
    if (n <= 0)
        return 0;
    const char *cat, *packed = w->z ? NULL : weir__sniff_compressed (head, (size_t) n, &cat);
    char message[512];
    if (packed && self->follow && weir__codec_of (head, (size_t) n))
        return weir__err_set (err, WEIR_ECORRUPT,
                              "%s: '%s' is %s-compressed (its first bytes say so): follow=1 reads files as "
                              "they grow, not compressed ones; give a path that leaves it out, or read it "
                              "without follow=1 (sniff=off reads it as it is)",
                              name, shard->path, packed);
    if (packed)
        return weir__err_set (err, WEIR_ECORRUPT,
                              "%s: '%s' is %s-compressed (its first bytes say so): weir reads gzip and zstd "
                              "files, not %s ones; decompress it first, or feed it decompressed: %s '%s' | "
                              "weir run '%s path=- ...' (sniff=off reads it as it is)",
                              name, shard->path, packed, packed, cat, shard->path, name);
    //  The sink's warning names the element itself
    if (self->kind->lines && weir__sniff_binary (head, (size_t) n))
        snprintf (message, sizeof message,
                  "'%s' does not look like text (NUL or control characters in its first bytes; "
                  "msgpack path=... reads msgpack)",
                  shard->path);
    else if (!self->kind->lines && weir__sniff_text (head, (size_t) n, whole))
        snprintf (message, sizeof message, "'%s' looks like %s, not msgpack", shard->path,
                  weir__sniff_text_kind (head, (size_t) n));
    else
        return 0;
    if (self->sniff == S_SNIFF_FAIL)
        return weir__err_set (err, WEIR_ECORRUPT, "%s: %s: sniff=fail refuses it (sniff=off reads it as it is)",
                              name, message);
    if (sink->warn) {
        size_t used = strlen (message);
        snprintf (message + used, sizeof message - used, "; read as it is (sniff=fail would refuse it)");
        sink->warn (sink, message);
    }
    return 0;
}

int weir__filereader_open (const weir__filereader_class *kind, weir__props *props, void **state,
                           weir__shards *shards, weir__err *err)
{
    const char *name = kind->reader->name;
    const char *pattern = weir__props_get (props, "path", NULL);
    if (!pattern)
        return weir__err_set (err, WEIR_EPROPERTY, "%s: property 'path' is required", name);
    s_reader *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->kind = kind;
    self->follow_ms = WEIR__NOT_FOLLOWED;
    self->shards = shards;
    uint64_t split;
    int rc = s_sizes (self, props, &split, err);
    if (!rc)
        rc = s_sniff_mode (self, props, err);
    if (!rc && kind->open)
        rc = kind->open (props, &self->own, err);
    if (!rc && kind->follows)
        rc = s_follow (self, props, pattern, shards, err);
    if (!rc && !self->follow && kind->scan)
        rc = weir__files_plan_records (name, pattern, split, self->max, kind->scan, self->own, shards, err);
    else if (!rc && !self->follow)
        rc = weir__files_plan (name, pattern, split, shards, err);
    //  sniff=off reads every file as it is, a compressed one too
    for (size_t i = 0; !rc && self->sniff == S_SNIFF_OFF && i < shards->count; i++)
        shards->items[i].codec = WEIR__CODEC_NONE;
    if (rc) {
        weir__filereader_close (self);
        return rc;
    }
    *state = self;
    return 0;
}

int weir__filereader_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink,
                           weir__err *err)
{
    const s_reader *self = state;
    const weir__filereader_class *kind = self->kind;
    //  One more byte for the newline that ends the longest line
    size_t window = kind->lines ? self->max + 1 : self->max;
    weir__window w;
    int rc = weir__window_open (&w, kind->reader->name, self->shards, shard, offset, window, self->follow_ms,
                                sink, err);
    if (rc == WEIR__WINDOW_DRY)
        return WEIR__READ_DRY;
    if (rc)
        return rc;
    if (self->sniff != S_SNIFF_OFF && *offset == 0 && shard->start == 0 && !w.stream && shard->path
        && (rc = s_sniff (self, &w, shard, sink, err))) {
        weir__window_close (&w);
        return rc;
    }
    rc = kind->read (self->own, self->max, shard, &w, offset, sink, err);
    if (rc == WEIR__WINDOW_IDLE)
        rc = w.idle;
    //  A followed file's end is only its end for now
    if (self->follow && (rc == 0 || rc == WEIR__WINDOW_DRY))
        rc = WEIR__READ_DRY;
    weir__window_leave (&w, shard);
    return rc;
}

void weir__filereader_close (void *state)
{
    s_reader *self = state;
    if (self->own && self->kind->close)
        self->kind->close (self->own);
    weir__follow_destroy (&self->follow);
    free (self);
}

int weir__filereader_discover (void *state, weir__shards *shards, weir__err *err)
{
    s_reader *self = state;
    return self->follow ? weir__follow_discover (self->follow, shards, err) : 0;
}

int weir__filereader_wait (void *state, weir__sink *sink)
{
    s_reader *self = state;
    return self->follow ? weir__follow_wait (self->follow, sink) : 0;
}
