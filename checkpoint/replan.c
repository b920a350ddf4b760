/*  checkpoint/replan.c - a batch reader's shards matched with a
    checkpoint's.  */
#include "config.h"
#include "checkpoint/replan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <weir/weir.h>

#include "checkpoint/keys.h"

//  What to do when a file is refused: said once, after what is wrong
#define S_NEXT                                                                                               \
    "; resuming would lose or repeat records. A new file is read in full under a name the job has not "      \
    "read (move the old one away first); to read everything again, start over with another --checkpoint "   \
    "directory and another output"

//  A shard of the checkpoint: its file (NULL for inputs that are no
//  files), its range, where reading goes on, and whether a shard of now
//  took it over
typedef struct {
    char *path;
    uint64_t start, end, offset;
    int used;
} s_old;

typedef struct {
    const weir__ckpt *ck;
    weir__replan *how;
    uint64_t epoch;
    s_old *old;
    size_t nold;
    weir__shards out;  //  the shards from now on
    size_t offsets_cap;
    weir__err *err;
} s_state;

//  Shard item NAME (checkpoint/keys.h: "PATH@START-END" or "#START-END")
//  with VALUE, its offset.
static int s_parse (const char *name, const char *value, size_t len, s_old *o)
{
    const char *at = strrchr (name, '@');
    if (!at && name[0] != '#')
        return -1;
    const char *range = at ? at + 1 : name + 1;
    int n = 0;
    if (sscanf (range, "%" SCNu64 "-%" SCNu64 "%n", &o->start, &o->end, &n) != 2 || range[n] != '\0'
        || weir__ckpt_parse_u64 (value, len, &o->offset))
        return -1;
    o->path = NULL;
    o->used = 0;
    if (at && !(o->path = strndup (name, (size_t) (at - name))))
        return WEIR_ENOMEM;
    return 0;
}

//  Files first, by name, then by range; inputs that are no files last
static int s_cmp (const void *a, const void *b)
{
    const s_old *x = a, *y = b;
    if (!x->path != !y->path)
        return x->path ? -1 : 1;
    int c = x->path ? strcmp (x->path, y->path) : 0;
    if (c)
        return c;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int s_load (s_state *st)
{
    size_t n = weir__ckpt_count (st->ck, WEIR__SECTION_OFFSETS);
    st->old = calloc (n ? n : 1, sizeof *st->old);
    if (!st->old)
        return weir__err_set (st->err, WEIR_ENOMEM, "out of memory");
    size_t skip = strlen (st->how->prefix);
    for (size_t k = 0; k < n; k++) {
        const void *value;
        size_t len;
        const char *name = weir__ckpt_item (st->ck, WEIR__SECTION_OFFSETS, k, &value, &len);
        //  Another reader's, in a graph of several
        if (strncmp (name, st->how->prefix, skip) != 0)
            continue;
        int rc = s_parse (name + skip, value, len, &st->old[st->nold]);
        if (rc == WEIR_ENOMEM)
            return weir__err_set (st->err, rc, "out of memory");
        if (rc)
            return weir__err_set (st->err, WEIR_ECORRUPT, "%s: checkpoint %" PRIu64 " holds a malformed shard '%s'",
                                  st->how->element, st->epoch, name);
        st->nold++;
    }
    qsort (st->old, st->nold, sizeof *st->old, s_cmp);
    return 0;
}

//  The first shard of the checkpoint of file PATH, or SIZE_MAX.
static size_t s_find (const s_state *st, const char *path)
{
    size_t lo = 0, hi = st->nold;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const s_old *o = &st->old[mid];
        if (o->path && strcmp (o->path, path) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->nold && st->old[lo].path && strcmp (st->old[lo].path, path) == 0 ? lo : SIZE_MAX;
}

//  The shard [START, END) of LIKE's file, read from OFFSET on.
static int s_emit (s_state *st, const weir__shard *like, uint64_t start, uint64_t end, uint64_t offset)
{
    if (weir__shards_add (&st->out, like->path, start, end))
        return weir__err_set (st->err, WEIR_ENOMEM, "out of memory");
    st->out.items[st->out.count - 1].id = like->id;
    st->out.items[st->out.count - 1].codec = like->codec;
    st->out.items[st->out.count - 1].appears = like->appears;
    if (st->out.count > st->offsets_cap) {
        size_t cap = st->out.cap;
        uint64_t *more = realloc (st->how->offsets, cap * sizeof *more);
        if (!more)
            return weir__err_set (st->err, WEIR_ENOMEM, "out of memory");
        st->how->offsets = more;
        st->offsets_cap = cap;
    }
    st->how->offsets[st->out.count - 1] = offset;
    return 0;
}

//  The checkpoint's shard of PATH (NULL: no file) starting at START, or
//  SIZE_MAX.
static size_t s_lookup (const s_state *st, const char *path, uint64_t start)
{
    s_old key = {.path = (char *) path, .start = start};
    size_t lo = 0, hi = st->nold;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s_cmp (&st->old[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->nold && s_cmp (&st->old[lo], &key) == 0 ? lo : SIZE_MAX;
}

//  A shard taken over only when the checkpoint has the very same: a range,
//  a pipe, a file of a checkpoint that did not note which file it read.
//  0, or 1 when the checkpoint has no such shard.
static int s_same_shard (s_state *st, const weir__shard *shard)
{
    size_t k = s_lookup (st, shard->path, shard->start);
    s_old *o = k == SIZE_MAX ? NULL : &st->old[k];
    if (!o || o->used || o->end != shard->end || o->offset < shard->start || o->offset > shard->end)
        return 1;
    o->used = 1;
    return s_emit (st, shard, shard->start, shard->end, o->offset);
}

static int s_exact (s_state *st, const weir__shard *shard)
{
    int rc = s_same_shard (st, shard);
    if (rc != 1)
        return rc;
    if (shard->appears && s_lookup (st, shard->path, shard->start) == SIZE_MAX) {
        st->how->appeared++;
        return s_emit (st, shard, shard->start, shard->end, shard->start);
    }
    char key[WEIR__KEY_MAX];
    weir__key_shard (st->how->prefix, shard, key, sizeof key);
    return weir__err_set (st->err, WEIR_ECORRUPT,
                          "%s: the input changed since checkpoint %" PRIu64
                          ": it has no place to go on from for '%s' (a range or a stream planned otherwise); "
                          "resuming would lose or repeat records",
                          st->how->element, st->epoch, key);
}

//  With passes=, every pass reads the same input: a file that WHAT since
//  the checkpoint is refused.
static int s_strict (s_state *st, const char *path, const char *what)
{
    return weir__err_set (st->err, WEIR_ECORRUPT,
                          "%s: '%s' %s since checkpoint %" PRIu64 ", but passes=%u reads the same input in every "
                          "pass; put the files back as they were, or start over with another --checkpoint directory",
                          st->how->element, path, what, st->epoch, st->how->passes);
}

//  Is the file at PATH, open as FD (status ST), the one checkpointed as
//  WAS, only appended to?  0, or the refusal.
static int s_same_file (s_state *st, const char *path, int fd, const struct stat *sb, const weir__identity *was,
                        uint64_t read)
{
    const char *element = st->how->element;
    uint64_t size = (uint64_t) sb->st_size;
    if ((uint64_t) sb->st_dev != was->dev || (uint64_t) sb->st_ino != was->ino)
        return weir__err_set (st->err, WEIR_ECORRUPT,
                              "%s: '%s' is another file than the one checkpoint %" PRIu64
                              " read (inode %" PRIu64 ", was %" PRIu64 "): it was replaced" S_NEXT,
                              element, path, st->epoch, (uint64_t) sb->st_ino, was->ino);
    uint64_t end = was->has_end ? was->end : read;  //  where it ended, or how far it was read
    if (size < end)
        return weir__err_set (st->err, WEIR_ECORRUPT,
                              "%s: '%s' shrank from %" PRIu64 " to %" PRIu64 " bytes since checkpoint %" PRIu64
                              " read it" S_NEXT,
                              element, path, end, size, st->epoch);
    if (!weir__identity_is (fd, sb, was))
        return weir__err_set (st->err, WEIR_ECORRUPT,
                              "%s: '%s' was written again since checkpoint %" PRIu64 " read it: its first %" PRIu32
                              " bytes changed" S_NEXT,
                              element, path, st->epoch, was->fp_len);
    if (!weir__identity_ends_as (fd, was))
        return weir__err_set (st->err, WEIR_ECORRUPT,
                              "%s: '%s' was written again since checkpoint %" PRIu64
                              " read it: the bytes before byte %" PRIu64 ", where it ended then, changed" S_NEXT,
                              element, path, st->epoch, was->end);
    return 0;
}

//  The checkpoint's shards of PATH, from FIRST: kept, finished neighbours
//  merged; how far the plan went into *PLANNED.
static int s_keep (s_state *st, const weir__shard *like, size_t first, uint64_t *planned)
{
    size_t k = first;
    while (k < st->nold && st->old[k].path && strcmp (st->old[k].path, like->path) == 0) {
        s_old *o = &st->old[k];
        uint64_t start = o->start, end = o->end, offset = o->offset;
        o->used = 1;
        k++;
        while (offset == end && k < st->nold && st->old[k].path && strcmp (st->old[k].path, like->path) == 0
               && st->old[k].start == end && st->old[k].offset == st->old[k].end) {
            end = offset = st->old[k].end;
            st->old[k++].used = 1;
        }
        int rc = s_emit (st, like, start, end, offset);
        if (rc)
            return rc;
        *planned = end;
    }
    return 0;
}

//  Warn when a file's old end was not a line's: its last line was read as
//  a record then, and what was appended since starts a record of its own.
static void s_torn (s_state *st, const char *path, int fd, uint64_t end)
{
    char last;
    if (end == 0 || !st->how->warn || pread (fd, &last, 1, (off_t) (end - 1)) != 1 || last == '\n')
        return;
    char message[600];
    snprintf (message, sizeof message,
              "%s: '%s' ended without a newline at byte %" PRIu64 " when checkpoint %" PRIu64
              " read it: its last line was a record then, and the bytes appended since begin a new record",
              st->how->element, path, end, st->epoch);
    st->how->warn (st->how->arg, message);
}

//  The shards of one file planned now, GROUP[0..COUNT), matched with the
//  checkpoint's.
static int s_file (s_state *st, const weir__shard *group, size_t count)
{
    const char *path = group[0].path;
    size_t first = s_find (st, path);
    if (first == SIZE_MAX) {
        //  New to the glob: read in full
        if (st->how->passes > 1)
            return s_strict (st, path, "is new");
        for (size_t i = 0; i < count; i++) {
            int rc = s_emit (st, &group[i], group[i].start, group[i].end, group[i].start);
            if (rc)
                return rc;
        }
        st->how->added += count > 0;
        return 0;
    }
    size_t len;
    char key[WEIR__KEY_MAX];
    weir__key_file (st->how->prefix, path, key, sizeof key);
    const char *text = weir__ckpt_get (st->ck, WEIR__SECTION_FILES, key, &len);
    weir__identity was;
    int gone;
    if (!text) {
        //  A checkpoint of a weir that did not note which file it read:
        //  only the same plan can go on
        int rc = 0;
        for (size_t i = 0; i < count && !rc; i++)
            rc = s_same_shard (st, &group[i]);
        for (size_t k = first; rc == 0 && k < st->nold && st->old[k].path && strcmp (st->old[k].path, path) == 0; k++)
            rc = !st->old[k].used;
        if (rc == 1)
            rc = weir__err_set (st->err, WEIR_ECORRUPT,
                                "%s: '%s' changed since checkpoint %" PRIu64
                                ", which does not say which file it read (an older weir wrote it), so what was "
                                "added cannot be told from what was read" S_NEXT,
                                st->how->element, path, st->epoch);
        return rc;
    }
    if (weir__identity_parse (text, len, &was, &gone))
        return weir__err_set (st->err, WEIR_ECORRUPT, "%s: checkpoint %" PRIu64 " holds a malformed identity for '%s'",
                              st->how->element, st->epoch, path);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat (fd, &sb)) {
        int e = errno;
        if (fd >= 0)
            close (fd);
        return weir__err_set (st->err, WEIR_EIO, "%s: cannot open '%s': %s", st->how->element, path, strerror (e));
    }
    int whole = st->old[first].end == UINT64_MAX;
    uint64_t read = whole ? st->old[first].offset : 0;
    for (size_t k = first; !whole && k < st->nold && st->old[k].path && strcmp (st->old[k].path, path) == 0; k++)
        read = st->old[k].end;
    int rc = s_same_file (st, path, fd, &sb, &was, read);
    uint64_t planned = 0;
    if (!rc && whole && group[0].end != UINT64_MAX) {
        //  Read whole by the checkpoint, planned in pieces now (a msgpack
        //  file, one shard before weir learned to cut them, or with a
        //  split= smaller than the file now): it goes on whole, as planned
        weir__shard like = group[0];
        like.start = 0;
        like.end = UINT64_MAX;
        rc = s_exact (st, &like);
        if (!rc && was.has_end && (uint64_t) sb.st_size > was.end)
            rc = st->how->passes > 1 ? s_strict (st, path, "grew") : (st->how->grown++, 0);
    }
    else if (!rc && whole != (group[0].end == UINT64_MAX))
        rc = s_exact (st, &group[0]);  //  refused: split= cannot change
    else if (!rc && whole) {
        //  One shard, the whole file: read on from its offset to its end.
        //  It grew when it is larger than when it was planned (its
        //  offset may be short of that end: not read yet)
        rc = s_exact (st, &group[0]);
        if (!rc && was.has_end && (uint64_t) sb.st_size > was.end)
            rc = st->how->passes > 1 ? s_strict (st, path, "grew") : (st->how->grown++, 0);
    }
    else if (!rc && !(rc = s_keep (st, &group[0], first, &planned))) {
        //  What was appended past the old plan's end: cut as now
        size_t added = 0;
        for (size_t i = 0; i < count && !rc; i++)
            if (group[i].end > planned) {
                uint64_t start = group[i].start > planned ? group[i].start : planned;
                rc = s_emit (st, &group[i], start, group[i].end, start);
                added++;
            }
        if (!rc && added && st->how->passes > 1)
            rc = s_strict (st, path, "grew");
        if (!rc && added) {
            s_torn (st, path, fd, planned);
            st->how->grown++;
        }
    }
    close (fd);
    return rc;
}

//  The checkpoint's shards no shard of now took over: the file was read
//  to its end, and may go; else refused.
static int s_left (s_state *st)
{
    int finished = 0;
    uint64_t flag = 0;
    if (weir__ckpt_get_u64 (st->ck, WEIR__SECTION_META, WEIR_META_FINISHED, &flag) == 0)
        finished = flag != 0;
    for (size_t k = 0; k < st->nold;) {
        const s_old *o = &st->old[k];
        if (o->used) {
            k++;
            continue;
        }
        if (!o->path)
            return weir__err_set (st->err, WEIR_ECORRUPT,
                                  "%s: the input changed since checkpoint %" PRIu64
                                  ": it had the range %" PRIu64 "-%" PRIu64
                                  ", which is planned otherwise now; resuming would lose or repeat records",
                                  st->how->element, st->epoch, o->start, o->end);
        //  The file's shards, judged together: the first not read to its
        //  end, if any
        const s_old *unread = NULL;
        size_t j = k;
        for (; j < st->nold && st->old[j].path && strcmp (st->old[j].path, o->path) == 0; j++) {
            const s_old *x = &st->old[j];
            int read = x->end == UINT64_MAX ? finished : x->offset == x->end;
            if (!x->used && !read && !unread)
                unread = x;
        }
        //  Its name holds a file with no shard: it shrank to nothing
        struct stat sb;
        if (stat (o->path, &sb) == 0 && S_ISREG (sb.st_mode) && o->end > 0)
            return weir__err_set (st->err, WEIR_ECORRUPT,
                                  "%s: '%s' shrank to 0 bytes since checkpoint %" PRIu64 " read it" S_NEXT,
                                  st->how->element, o->path, st->epoch);
        if (unread)
            return weir__err_set (st->err, WEIR_ECORRUPT,
                                  "%s: '%s' is gone (or no longer matches the path), and checkpoint %" PRIu64
                                  " had not read it to its end (byte %" PRIu64 " of bytes %" PRIu64 "-%" PRIu64
                                  "); put it back to read the rest, or start over with another --checkpoint "
                                  "directory and another output",
                                  st->how->element, o->path, st->epoch, unread->offset, unread->start,
                                  unread->end);
        if (st->how->passes > 1)
            return s_strict (st, o->path, "is gone");
        k = j;
    }
    return 0;
}

int weir__replan_files (const weir__ckpt *ck, weir__replan *how, weir__shards *shards, weir__err *err)
{
    if (!how->prefix)
        how->prefix = "";
    s_state st = {.ck = ck, .how = how, .epoch = weir__ckpt_epoch (ck), .err = err};
    weir__shards_init (&st.out);
    st.out.follow = shards->follow;
    how->offsets = NULL;
    how->grown = how->added = how->appeared = 0;
    int rc = s_load (&st);
    for (size_t i = 0; i < shards->count && !rc;) {
        const weir__shard *shard = &shards->items[i];
        size_t n = 1;
        if (!shard->path || !shard->id.known) {
            rc = s_exact (&st, shard);
            i++;
            continue;
        }
        while (i + n < shards->count && shards->items[i + n].path && shards->items[i + n].id.known
               && strcmp (shards->items[i + n].path, shard->path) == 0)
            n++;
        rc = s_file (&st, shard, n);
        i += n;
    }
    if (!rc)
        rc = s_left (&st);
    if (!rc && !how->offsets && !(how->offsets = calloc (1, sizeof *how->offsets)))
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t k = 0; k < st.nold; k++)
        free (st.old[k].path);
    free (st.old);
    if (rc) {
        weir__shards_release (&st.out);
        free (how->offsets);
        how->offsets = NULL;
        return rc;
    }
    weir__shards_release (shards);
    *shards = st.out;
    return 0;
}
