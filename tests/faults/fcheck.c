/*  tests/faults/fcheck.c - the checker of the fault-injection suite.

        fcheck output REF GOT
            REF and GOT hold one record per line (the scripts turn msgpack
            and LevelDB outputs into lines with weir itself).  Compared as
            multisets: prints "records=N lost=L duplicated=D extra=X", where
            lost counts the records of REF missing from GOT, duplicated the
            copies in GOT beyond REF's count of a record REF has, extra
            the records REF does not have at all.  Exit 0 when all three
            are 0, else 1.

        fcheck state DIR [EPOCH|all] [BLOB [SLOTS]]
            The state of checkpoint EPOCH of DIR (default: the latest; all:
            every one) against the state recomputed from the checkpoint's
            own reader offsets: the int64 blob BLOB (default sum, SLOTS
            slots, default 4) must hold, in slot V % SLOTS, the sum of every
            value V read before the offsets, as tests/faults/faultproc.c
            adds them; and records_out:0 must be the number of records
            before the offsets.  A shard "#A-B" is the range A..B-1 of the
            range reader, its offset the next integer; "PATH@A-B" is bytes
            A..B-1 of a text file of decimal integers, its offset a byte.
            Prints one line per checkpoint; exit 0 when every one matches,
            1 on a mismatch, 2 when a checkpoint cannot be read.

        fcheck flip FILE OFFSET
            Inverts every bit of the byte at OFFSET of FILE (a negative
            OFFSET counts from the end): a damaged checkpoint file.  */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

//  ---------------------------------------------------------------------
//  Outputs as multisets

typedef struct {
    char **lines;
    size_t count;
    char *data;
} s_file;

static int s_load (const char *path, s_file *f)
{
    FILE *in = fopen (path, "rb");
    if (!in) {
        perror (path);
        return -1;
    }
    fseek (in, 0, SEEK_END);
    long size = ftell (in);
    fseek (in, 0, SEEK_SET);
    f->data = malloc ((size_t) size + 1);
    if (!f->data || fread (f->data, 1, (size_t) size, in) != (size_t) size) {
        fclose (in);
        fprintf (stderr, "fcheck: cannot read '%s'\n", path);
        return -1;
    }
    fclose (in);
    f->data[size] = '\0';
    size_t n = 0;
    for (long i = 0; i < size; i++)
        n += f->data[i] == '\n';
    f->lines = malloc ((n + 1) * sizeof *f->lines);
    f->count = 0;
    char *p = f->data, *end = f->data + size;
    while (p < end) {
        char *nl = memchr (p, '\n', (size_t) (end - p));
        if (nl)
            *nl = '\0';
        f->lines[f->count++] = p;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

static int s_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static int s_output (const char *ref_path, const char *got_path)
{
    s_file ref = {0}, got = {0};
    if (s_load (ref_path, &ref) || s_load (got_path, &got))
        return 2;
    qsort (ref.lines, ref.count, sizeof *ref.lines, s_cmp);
    qsort (got.lines, got.count, sizeof *got.lines, s_cmp);
    uint64_t lost = 0, dup = 0, extra = 0;
    size_t i = 0, j = 0;
    const char *first = NULL;
    while (i < ref.count || j < got.count) {
        int c = i == ref.count ? 1 : j == got.count ? -1 : strcmp (ref.lines[i], got.lines[j]);
        if (c == 0) {
            //  The runs of one record in both
            const char *r = ref.lines[i];
            size_t a = 0, b = 0;
            while (i < ref.count && !strcmp (ref.lines[i], r))
                i++, a++;
            while (j < got.count && !strcmp (got.lines[j], r))
                j++, b++;
            if (a > b)
                lost += a - b;
            if (b > a)
                dup += b - a;
            if (a != b && !first)
                first = r;
        }
        else if (c < 0) {
            if (!first)
                first = ref.lines[i];
            lost++, i++;
        }
        else {
            if (!first)
                first = got.lines[j];
            extra++, j++;
        }
    }
    printf ("records=%zu lost=%" PRIu64 " duplicated=%" PRIu64 " extra=%" PRIu64 "%s%s\n", ref.count, lost,
            dup, extra, first ? " first-difference=" : "", first ? first : "");
    free (ref.lines);
    free (ref.data);
    free (got.lines);
    free (got.data);
    return lost || dup || extra ? 1 : 0;
}

//  ---------------------------------------------------------------------
//  Checkpoints against their offsets

static uint64_t s_u64 (const void *data, size_t len)
{
    char text[32];
    if (!data || len == 0 || len >= sizeof text)
        return UINT64_MAX;
    memcpy (text, data, len);
    text[len] = '\0';
    return strtoull (text, NULL, 10);
}

static void s_add (int64_t *expect, uint64_t slots, uint64_t v)
{
    expect[v % slots] += (int64_t) v;
}

//  Add the records of shard NAME before OFFSET into EXPECT; their count
//  into *RECORDS.  -1 when the shard cannot be read.
static int s_shard (const char *name, uint64_t offset, int64_t *expect, uint64_t slots, uint64_t *records)
{
    unsigned long long a, b;
    if (name[0] == '#') {
        if (sscanf (name, "#%llu-%llu", &a, &b) != 2 || offset < a || offset > b)
            return -1;
        for (uint64_t v = a; v < offset; v++)
            s_add (expect, slots, v);
        *records += offset - a;
        return 0;
    }
    const char *at = strrchr (name, '@');
    if (!at || sscanf (at + 1, "%llu-%llu", &a, &b) != 2 || offset < a)
        return -1;
    char *path = strndup (name, (size_t) (at - name));
    FILE *f = path ? fopen (path, "rb") : NULL;
    if (!f) {
        fprintf (stderr, "fcheck: cannot open shard '%s'\n", path ? path : name);
        free (path);
        return -1;
    }
    free (path);
    fseeko (f, (off_t) a, SEEK_SET);
    uint64_t pos = a, v = 0;
    int digits = 0, c;
    while (pos < offset && (c = getc (f)) != EOF) {
        pos++;
        if (c == '\n') {
            if (digits) {
                s_add (expect, slots, v);
                ++*records;
            }
            v = 0;
            digits = 0;
        }
        else if (c >= '0' && c <= '9') {
            v = v * 10 + (uint64_t) (c - '0');
            digits = 1;
        }
    }
    fclose (f);
    //  An offset inside a line would be a reader's bug: say so
    return pos == offset && !digits ? 0 : -1;
}

static int s_state_one (const char *dir, int64_t which, const char *blob, uint64_t slots)
{
    char *error = NULL;
    weir_checkpoint *ck;
    if (weir_checkpoint_new (dir, which, &ck, &error)) {
        printf ("epoch %" PRId64 ": cannot be read: %s\n", which, error);
        weir_free (error);
        return 2;
    }
    uint64_t epoch = weir_checkpoint_epoch (ck);
    int64_t *expect = calloc (slots, sizeof *expect);
    uint64_t records = 0;
    int rc = 0;
    size_t n = weir_checkpoint_count (ck, WEIR_CHECKPOINT_OFFSETS);
    for (size_t i = 0; i < n && !rc; i++) {
        const void *data;
        size_t len;
        const char *name = weir_checkpoint_item (ck, WEIR_CHECKPOINT_OFFSETS, i, &data, &len);
        if (s_shard (name, s_u64 (data, len), expect, slots, &records)) {
            printf ("epoch %" PRIu64 ": shard '%s' at offset %.*s cannot be recomputed\n", epoch, name,
                    (int) len, (const char *) data);
            rc = 2;
        }
    }
    size_t len;
    const void *read = weir_checkpoint_get (ck, WEIR_CHECKPOINT_META, WEIR_META_RECORDS_OUT "0", &len);
    uint64_t said = s_u64 (read, len);
    if (!rc && said != records) {
        printf ("epoch %" PRIu64 ": records_out:0 is %" PRIu64 ", the offsets say %" PRIu64 "\n", epoch, said,
                records);
        rc = 1;
    }
    const int64_t *got = weir_checkpoint_get (ck, WEIR_CHECKPOINT_BLOBS, blob, &len);
    //  Checkpoint 0 of a job may have no blob yet only if nothing was read
    if (!rc && !got && records) {
        printf ("epoch %" PRIu64 ": no blob '%s'\n", epoch, blob);
        rc = 1;
    }
    else if (!rc && got && len != slots * sizeof (int64_t)) {
        printf ("epoch %" PRIu64 ": blob '%s' is %zu bytes, wanted %" PRIu64 "\n", epoch, blob, len,
                slots * sizeof (int64_t));
        rc = 1;
    }
    for (uint64_t s = 0; !rc && s < slots; s++) {
        int64_t g;
        if (got)
            memcpy (&g, (const char *) got + s * sizeof g, sizeof g);
        else
            g = 0;
        if (g != expect[s]) {
            printf ("epoch %" PRIu64 ": blob '%s' slot %" PRIu64 " is %" PRId64 ", the offsets (%" PRIu64
                    " records) give %" PRId64 "\n",
                    epoch, blob, s, g, records, expect[s]);
            rc = 1;
        }
    }
    if (!rc)
        printf ("epoch %" PRIu64 ": ok, %" PRIu64 " records\n", epoch, records);
    free (expect);
    weir_checkpoint_destroy (&ck);
    return rc;
}

static int s_state (const char *dir, const char *which, const char *blob, uint64_t slots)
{
    //  One checkpoint is read without listing the others, which a store
    //  damaged elsewhere may refuse
    if (strcmp (which, "all"))
        return s_state_one (dir, strcmp (which, "latest") ? strtoll (which, NULL, 10) : -1, blob, slots);
    char *error = NULL;
    uint64_t *epochs;
    size_t count;
    if (weir_checkpoint_list (dir, &epochs, &count, &error)) {
        printf ("cannot list the checkpoints of '%s': %s\n", dir, error);
        weir_free (error);
        return 2;
    }
    if (count == 0) {
        printf ("'%s' holds no checkpoint\n", dir);
        weir_free (epochs);
        return 2;
    }
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        int r = s_state_one (dir, (int64_t) epochs[i], blob, slots);
        rc = r > rc ? r : rc;
    }
    weir_free (epochs);
    return rc;
}

static int s_flip (const char *path, long long offset)
{
    FILE *f = fopen (path, "r+b");
    if (!f || fseeko (f, 0, SEEK_END)) {
        perror (path);
        return 2;
    }
    long long size = (long long) ftello (f);
    if (offset < 0)
        offset += size;
    if (offset < 0 || offset >= size) {
        fprintf (stderr, "fcheck: '%s' has no byte %lld\n", path, offset);
        fclose (f);
        return 2;
    }
    fseeko (f, (off_t) offset, SEEK_SET);
    int c = getc (f);
    fseeko (f, (off_t) offset, SEEK_SET);
    putc (c ^ 0xff, f);
    return fclose (f) ? 2 : 0;
}

int main (int argc, char **argv)
{
    if (argc == 4 && !strcmp (argv[1], "flip"))
        return s_flip (argv[2], strtoll (argv[3], NULL, 10));
    if (argc == 4 && !strcmp (argv[1], "output"))
        return s_output (argv[2], argv[3]);
    if (argc >= 3 && argc <= 6 && !strcmp (argv[1], "state"))
        return s_state (argv[2], argc > 3 ? argv[3] : "latest", argc > 4 ? argv[4] : "sum",
                        argc > 5 ? strtoull (argv[5], NULL, 10) : 4);
    fprintf (stderr, "usage: fcheck output REF GOT\n"
                     "       fcheck state DIR [EPOCH|latest|all] [BLOB [SLOTS]]\n"
                     "       fcheck flip FILE OFFSET\n");
    return 2;
}
