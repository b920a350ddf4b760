/*  cmd/checkpoints.c - weir checkpoints: list and inspect checkpoints.  */
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int s_checkpoints (int argc, char **argv);

//  --epoch and --blob have no short forms
enum { S_EPOCH = 256, S_BLOB };

static const cmd_option s_options[] = {
    {"epoch", S_EPOCH, "E", CMD_VALUE_ANY, NULL, "show everything in checkpoint E",
     "Its metadata, every shard's offset, every writer's committed state and every blob with its size."},
    {"blob", S_BLOB, "NAME", CMD_VALUE_ANY, NULL, "with --epoch: write blob NAME's raw bytes to stdout",
     NULL},
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_checkpoints_command = {
    .name = "checkpoints",
    .main = s_checkpoints,
    .usage = "DIR [--epoch E [--blob NAME]]",
    .summary = "list and inspect the checkpoints of a job",
    .description =
        "Without --epoch, list the checkpoints in DIR, one line each: the epoch, when it was "
        "taken, the records read, the blobs and their bytes, the latest and the best marked.  A checkpoint "
        "that cannot be read is listed with the reason.",
    .options = s_options,
    .notes = "Keep the checkpoint you inspect: with --keep K, only the newest K checkpoints are in DIR.",
};

static const struct {
    weir_checkpoint_section section;
    const char *title;
} s_sections[] = {
    {WEIR_CHECKPOINT_META, "metadata"},
    {WEIR_CHECKPOINT_OFFSETS, "reader offsets (shard: next offset)"},
    {WEIR_CHECKPOINT_WRITERS, "writers (stage: committed)"},
    {WEIR_CHECKPOINT_FILES, "files (path: device inode fingerprint-bytes fingerprint gone [planned-size end-hash])"},
    {WEIR_CHECKPOINT_BLOBS, "blobs (name: bytes)"},
};

//  Metadata item NAME as text into BUF, "-" when missing.
static const char *s_meta (const weir_checkpoint *ck, const char *name, char *buf, size_t size)
{
    size_t len;
    const char *v = weir_checkpoint_get (ck, WEIR_CHECKPOINT_META, name, &len);
    snprintf (buf, size, "%.*s", v ? (int) len : 1, v ? v : "-");
    return buf;
}

//  The records CK's job read: the records out of every reader, the stages
//  no link of the shape leads to (a line's: the first), into OUT
static const char *s_records_read (const weir_checkpoint *ck, char *out, size_t size)
{
    size_t len;
    const char *v = weir_checkpoint_get (ck, WEIR_CHECKPOINT_META, WEIR_META_SHAPE, &len);
    char *shape = v ? strndup (v, len) : NULL;
    //  The links end the shape of a graph: " ; links 0>2 1>2 2.port>3"
    const char *links = NULL;
    for (const char *at = shape; at && (at = strstr (at, " ; links ")); at++)
        links = at + 9;
    //  A line's stages are each fed by the one before
    unsigned char fed[1024];
    memset (fed, !links, sizeof fed);
    fed[0] = 0;
    while (links && *links) {
        char *end;
        strtoul (links, &end, 10);
        const char *arrow = strchr (end, '>');
        if (!arrow)
            break;
        unsigned long to = strtoul (arrow + 1, &end, 10);
        if (to < sizeof fed)
            fed[to] = 1;
        links = end + strspn (end, " ");
    }
    free (shape);
    uint64_t total = 0;
    int any = 0;
    for (size_t i = 0; i < sizeof fed; i++) {
        char key[64], buf[32];
        snprintf (key, sizeof key, "%s%zu", WEIR_META_RECORDS_OUT, i);
        if (!weir_checkpoint_get (ck, WEIR_CHECKPOINT_META, key, &len))
            break;
        if (!fed[i]) {
            total += strtoull (s_meta (ck, key, buf, sizeof buf), NULL, 10);
            any = 1;
        }
    }
    if (any)
        snprintf (out, size, "%llu", (unsigned long long) total);
    else
        snprintf (out, size, "-");
    return out;
}

//  SECONDS since 1970 as RFC 3339, in UTC, into OUT.
static void s_when (long long seconds, char *out, size_t size)
{
    time_t t = (time_t) seconds;
    struct tm tm;
    if (!gmtime_r (&t, &tm) || !strftime (out, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf (out, size, "?");
}

//  One line per checkpoint of DIR.
static int s_list (const char *dir)
{
    char *error = NULL;
    uint64_t *epochs;
    size_t count;
    weir_checkpoints *all;
    if (weir_checkpoints_new (dir, &all, &error) || weir_checkpoints_epochs (all, &epochs, &count, &error)) {
        cmd_error ("checkpoints", "%s", error);
        weir_free (error);
        weir_checkpoints_destroy (&all);
        return CMD_EXIT_FAILURE;
    }
    char a[64], b[64], when[64];
    //  The one --load-blobs DIR:best takes, if a processor marked one
    int64_t best = -1;
    weir_checkpoint *marked;
    if (weir_checkpoints_load (all, WEIR_LOAD_BEST, &marked, NULL) == 0) {
        best = (int64_t) weir_checkpoint_epoch (marked);
        weir_checkpoint_destroy (&marked);
    }
    printf ("%-8s %-20s %14s %6s %14s\n", "epoch", "time", "records", "blobs", "blob bytes");
    for (size_t i = 0; i < count; i++) {
        weir_checkpoint *ck;
        if (weir_checkpoints_load (all, (int64_t) epochs[i], &ck, &error)) {
            printf ("%-8llu refused: %s\n", (unsigned long long) epochs[i], error);
            weir_free (error);
            error = NULL;
            continue;
        }
        size_t nblobs = weir_checkpoint_count (ck, WEIR_CHECKPOINT_BLOBS), bytes = 0;
        for (size_t k = 0; k < nblobs; k++) {
            size_t size;
            weir_checkpoint_item (ck, WEIR_CHECKPOINT_BLOBS, k, NULL, &size);
            bytes += size;
        }
        s_when (strtoll (s_meta (ck, WEIR_META_TIME, a, sizeof a), NULL, 10), when, sizeof when);
        printf ("%-8llu %-20s %14s %6zu %14zu%s%s%s\n", (unsigned long long) epochs[i], when,
                s_records_read (ck, b, sizeof b), nblobs, bytes, i + 1 == count ? "  (latest)" : "",
                (int64_t) epochs[i] == best ? "  (best)" : "",
                strcmp (s_meta (ck, WEIR_META_FINISHED, a, sizeof a), "1") == 0 ? "  finished" : "");
        weir_checkpoint_destroy (&ck);
    }
    weir_free (epochs);
    weir_checkpoints_destroy (&all);
    return CMD_EXIT_OK;
}

//  Blob NAME of checkpoint CK on stdout.
static int s_blob (const weir_checkpoint *ck, const char *dir, const char *name)
{
    size_t size;
    const void *data = weir_checkpoint_get (ck, WEIR_CHECKPOINT_BLOBS, name, &size);
    if (!data) {
        cmd_error ("checkpoints", "checkpoint %llu of '%s' has no blob '%s'",
                   (unsigned long long) weir_checkpoint_epoch (ck), dir, name);
        return CMD_EXIT_FAILURE;
    }
    if (fwrite (data, 1, size, stdout) != size || fflush (stdout)) {
        cmd_error ("checkpoints", "cannot write the blob to stdout: %s", strerror (errno));
        return CMD_EXIT_FAILURE;
    }
    return CMD_EXIT_OK;
}

//  Everything in checkpoint CK.
static void s_show (const weir_checkpoint *ck, const char *dir)
{
    printf ("checkpoint %llu of %s\n", (unsigned long long) weir_checkpoint_epoch (ck), dir);
    for (size_t s = 0; s < sizeof s_sections / sizeof s_sections[0]; s++) {
        weir_checkpoint_section section = s_sections[s].section;
        printf ("%s:\n", s_sections[s].title);
        size_t n = weir_checkpoint_count (ck, section);
        for (size_t k = 0; k < n; k++) {
            const void *data;
            size_t size;
            const char *name = weir_checkpoint_item (ck, section, k, &data, &size);
            if (section == WEIR_CHECKPOINT_BLOBS)
                printf ("  %s: %zu\n", name, size);
            else if (section == WEIR_CHECKPOINT_META && !strcmp (name, WEIR_META_TIME)) {
                //  Seconds since 1970 are for programs; a person reads a date
                char text[32], when[32];
                snprintf (text, sizeof text, "%.*s", (int) size, (const char *) data);
                s_when (strtoll (text, NULL, 10), when, sizeof when);
                printf ("  %s: %s (%s)\n", name, when, text);
            }
            else
                printf ("  %s: %.*s\n", name, (int) size, (const char *) data);
        }
    }
}

static int s_checkpoints (int argc, char **argv)
{
    const char *blob = NULL;
    int64_t epoch = -1;
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_checkpoints_command);
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        switch (c) {
        case S_EPOCH: {
            char *end;
            epoch = (int64_t) strtoll (optarg, &end, 10);
            if (*end || end == optarg || epoch < 0) {
                cmd_error ("checkpoints", "--epoch wants an epoch number, not '%s'", optarg);
                return CMD_EXIT_USAGE;
            }
            break;
        }
        case S_BLOB: blob = optarg; break;
        case 'h': cmd_help_print (&cmd_checkpoints_command, stdout); return CMD_EXIT_OK;
        default: return CMD_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cmd_help_print (&cmd_checkpoints_command, stderr);
        return CMD_EXIT_USAGE;
    }
    const char *dir = argv[optind];
    if (epoch < 0) {
        if (blob) {
            cmd_error ("checkpoints", "--blob needs --epoch");
            return CMD_EXIT_USAGE;
        }
        return s_list (dir);
    }
    char *error = NULL;
    weir_checkpoint *ck;
    if (weir_checkpoint_new (dir, epoch, &ck, &error)) {
        cmd_error ("checkpoints", "%s", error);
        weir_free (error);
        return CMD_EXIT_FAILURE;
    }
    int rc = CMD_EXIT_OK;
    if (blob)
        rc = s_blob (ck, dir, blob);
    else
        s_show (ck, dir);
    weir_checkpoint_destroy (&ck);
    return rc;
}
