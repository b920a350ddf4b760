/*  writers/filewriter.c - the skeleton of the writers of a file.  */
#include "config.h"
#include "writers/filewriter.h"

#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

#include "lib/compress.h"

//  The state of a writer of a file
typedef struct {
    const weir__filewriter_class *kind;
    weir__outfile file;
    void *own;  //  the writer's own state
} s_writer;

//  compress= and level=: *CODEC and *LEVEL
static int s_compress (const char *name, weir__props *props, weir__codec *codec, int *level, weir__err *err)
{
    weir__prop *p = weir__props_find (props, "compress");
    const char *value = weir__props_get (props, "compress", "none");
    *codec = !strcmp (value, "gzip")   ? WEIR__CODEC_GZIP
             : !strcmp (value, "zstd") ? WEIR__CODEC_ZSTD
                                       : WEIR__CODEC_NONE;
    if (!*codec && strcmp (value, "none"))
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "%s: compress=%s is none of gzip, zstd, none", name, value);
    weir__prop *l = weir__props_find (props, "level");
    if (!*codec)
        return l ? weir__err_at (err, WEIR_EPROPERTY, l->key_offset,
                                 "%s: level= applies with compress=gzip or zstd", name)
                 : 0;
    int min, max, fallback;
    weir__compress_levels (*codec, &min, &max, &fallback);
    int64_t got;
    int rc = weir__props_int (props, name, "level", fallback, min, max, &got, err);
    *level = (int) got;
    return rc;
}

int weir__filewriter_open (const weir__filewriter_class *kind, weir__props *props, unsigned threads,
                           const char *resume, unsigned flags, void **state, weir__err *err)
{
    const char *name = kind->writer->name;
    const char *path = weir__props_get (props, "path", NULL);
    if (!path)
        return weir__err_set (err, WEIR_EPROPERTY, "%s: property 'path' is required", name);
    s_writer *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->kind = kind;
    weir__codec codec;
    int level = 0;
    int rc = s_compress (name, props, &codec, &level, err);
    if (!rc && kind->open)
        rc = kind->open (props, threads, &self->own, err);
    if (!rc)
        rc = weir__outfile_open (&self->file, name, path, threads, resume, flags, err);
    if (!rc && codec && (rc = weir__outfile_compress (&self->file, codec, level, err))) {
        weir__err ignored;
        weir__outfile_discard (&self->file);
        weir__outfile_close (&self->file, &ignored);
    }
    if (rc) {
        if (self->own)
            kind->close (self->own);
        free (self);
        return rc;
    }
    *state = self;
    return 0;
}

int weir__filewriter_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                            weir__err *err)
{
    s_writer *self = state;
    int rc = self->kind->write (self->own, &self->file, thread, payload, len, count, err);
    return rc ? rc : weir__outfile_spill (&self->file, thread, err);
}

int weir__filewriter_flush (void *state, unsigned thread, weir__err *err)
{
    return weir__outfile_flush (&((s_writer *) state)->file, thread, err);
}

int weir__filewriter_commit (void *state, char *out, weir__err *err)
{
    return weir__outfile_commit (&((s_writer *) state)->file, out, err);
}

void weir__filewriter_discard (void *state)
{
    weir__outfile_discard (&((s_writer *) state)->file);
}

int weir__filewriter_close (void *state, weir__err *err)
{
    s_writer *self = state;
    int rc = weir__outfile_close (&self->file, err);
    if (self->own)
        self->kind->close (self->own);
    free (self);
    return rc;
}
