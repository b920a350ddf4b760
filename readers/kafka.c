/*  readers/kafka.c - the messages of a Kafka topic, exactly once.

    Every partition of the topic is a shard, "kafka:TOPIC/P", whose offset
    is the Kafka offset of the next message to read.  The offsets are
    kept in weir's checkpoint with the epoch's outputs (as Kafka's own
    design notes advise for exactly-once consumers), not committed to a
    consumer group: a job killed at any instant resumes at exactly the
    next message.  Partitions spread over reader threads and ranks as
    files do; a resume with other counts works as for files.

    Without follow=1 a job reads each partition up to the end it had when
    the job started (its high watermark then: a bounded read, for
    backfills); a resume reads up to the end at its own start.  With
    follow=1 the job runs until it is stopped: one thread visits every
    partition in turn, and waits when none has a message.

    Partitions added to the topic are shards that appear: a resume whose
    checkpoint does not know one reads it from its first message, and a
    follow=1 job asks the brokers for them every discover= seconds (at an
    epoch's end, so that the epoch's checkpoint knows each at its start).
    Kafka never takes a partition away.

    Reading uses librdkafka's partition consumer (rd_kafka_consume_start
    at the shard's offset; no group, no rebalancing: weir decides who
    reads what).  A partition goes on being fetched across epochs while
    its reads follow one another; a read from another offset (a resume, a
    pass) starts it again there.  Never more messages are taken from
    librdkafka than the epoch's quota allows, so none is fetched and then
    dropped at an epoch's end.

    group=NAME also commits the offsets of every checkpoint written to the
    consumer group NAME, for the tools that watch consumers' lag
    (kafka-consumer-groups, Burrow): after the checkpoint, asynchronously,
    never read back.  A commit that fails is a warning, not a failure.

    Brokers that cannot be reached: at start, the job fails after
    timeout= seconds naming the brokers; in the middle of a job, librdkafka
    retries, and once every broker has been down for timeout= seconds the
    job fails (a resume goes on from the last checkpoint).  */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/jsonparse.h"
#include "lib/pack.h"
#include "lib/scan.h"
#include "lib/librdkafka.h"
#include "readers/reader.h"

#define S_PREFIX "kafka:"
#define S_FETCH 1000  //  messages asked of librdkafka at once, at most

enum { S_BIN, S_STR, S_JSON, S_MSGPACK };

typedef struct {
    int started;            //  fetched by librdkafka from NEXT on
    int64_t next;           //  the offset the last read left off at
    int64_t low, end;       //  watermarks at open: the first offset kept, one past the last
    weir__jsonparse *json;  //  value=json, made at the first read
} s_partition;

typedef struct {
    const weir__librdkafka *rk;
    rd_kafka_t *client;
    rd_kafka_topic_t *topic;
    char *name, *brokers;
    char *group;           //  group=: the consumer group told the offsets, or NULL
    _Atomic int commits;   //  group commits not answered yet
    char commit_why[256];  //  the last commit's failure, "" if none, under LOCK
    int commit_ok;         //  a commit succeeded since the last settle, under LOCK
    int warned;            //  the failures since the last success were said
    //  The offsets of the last commit sent, and whether its answer (the
    //  last one served: answers come in order) was a refusal: the close
    //  sends them again, so that a refused or lost last commit does not
    //  leave the group behind what the job's last checkpoint holds
    rd_kafka_topic_partition_list_t *last;
    int last_failed;
    int32_t partitions;
    s_partition *parts;
    int value, meta, follow;
    int64_t timeout_ns;
    uint64_t discover_ns;         //  follow=1: how often to look for partitions added, 0 never
    uint64_t discovered;          //  when it was last done (ns)
    _Atomic uint64_t down_since;  //  when every broker went down (ns), 0 while one answers
    pthread_mutex_t lock;         //  serves librdkafka's callbacks from one thread at a time
    char why[256];                //  the last error librdkafka reported, under LOCK
    pthread_mutex_t log_lock;     //  librdkafka logs from its own threads
    char log[256];                //  its last error line, under LOG_LOCK
} s_kafka;

//  For the log callback, which is given no argument of ours
static const weir__librdkafka *s_librdkafka;

static const weir_property_info s_props[] = {
    {"brokers", NULL, "the bootstrap brokers, HOST:PORT[,HOST:PORT...] (required)"},
    {"topic", NULL, "the topic to read (required); every partition is a shard"},
    {"value", "bin",
     "what a message's value becomes: bin (its bytes), str, json (parsed: one JSON value) or msgpack (one "
     "msgpack object, checked)"},
    {"meta", "0",
     "1: each record is a map {topic, partition, offset, timestamp, key, value} (timestamp in ms since "
     "1970, or nil)"},
    {"follow", "0",
     "1: read until the job is stopped, waiting for new messages (one thread); 0: up to each partition's "
     "end when the job started"},
    {"timeout", "30",
     "seconds the brokers may be unreachable (at start, or all of them later) before the job fails"},
    {"discover", "30",
     "follow=1: every this many seconds, partitions added to the topic become shards, read from their "
     "first message (0: never; a resume always finds them)"},
    {"group", "",
     "a consumer group told the offsets of every checkpoint written, for monitoring (never read back: the "
     "checkpoint is what a resume goes on from)"},
    {"kafka.*", "",
     "any librdkafka consumer setting, passed through (kafka.security.protocol=ssl, "
     "kafka.fetch.max.bytes=...)"},
    {NULL, NULL, NULL},
};

static void s_error_cb (rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    s_kafka *self = opaque;
    snprintf (self->why, sizeof self->why, "%s", reason);
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
        uint64_t zero = 0;
        atomic_compare_exchange_strong (&self->down_since, &zero, weir__now_ns ());
    }
}

//  A group commit's answer (group=), served by rd_kafka_poll: a failure
//  is kept for the next settle to report
static void s_commit_cb (rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *offsets,
                         void *opaque)
{
    s_kafka *self = opaque;
    for (int i = 0; offsets && !err && i < offsets->cnt; i++)
        err = offsets->elems[i].err;
    if (err)
        snprintf (self->commit_why, sizeof self->commit_why, "%s", self->rk->rd_kafka_err2str (err));
    else
        self->commit_ok = 1;
    self->last_failed = err != RD_KAFKA_RESP_ERR_NO_ERROR;
    atomic_fetch_sub (&self->commits, 1);
}

//  librdkafka's log lines are not printed (library code prints nothing):
//  an error's is kept, for the message of a failure it explains
static void s_log_cb (const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    s_kafka *self = s_librdkafka->rd_kafka_opaque (rk);
    if (self && level <= 3) {
        pthread_mutex_lock (&self->log_lock);
        snprintf (self->log, sizeof self->log, "%s", buf);
        pthread_mutex_unlock (&self->log_lock);
    }
}

//  librdkafka's callbacks (errors), served now by whichever thread gets
//  there first
static void s_serve (s_kafka *self)
{
    if (pthread_mutex_trylock (&self->lock) == 0) {
        self->rk->rd_kafka_poll (self->client, 0);
        pthread_mutex_unlock (&self->lock);
    }
}

static void s_close (void *state)
{
    s_kafka *self = state;
    if (!self)
        return;
    //  The last checkpoint's commit, answered (5 s at most).  In practice
    //  rd_kafka_destroy sends what is queued too (a mutant dropping this
    //  wait survived cli_kafka.sh); the wait does not lean on that
    for (int i = 0; self->client && i < 50 && atomic_load (&self->commits) > 0; i++)
        self->rk->rd_kafka_poll (self->client, 100);
    //  Refused, or not answered in that time: sent again, and waited for
    //  5 s at most each time, three times at most; not at all while
    //  every broker is down (a synchronous commit would wait for
    //  librdkafka's own timeouts, a minute each).  Only a monitor reads
    //  the group; a failure here is no failure of the job, whose
    //  checkpoint is written
    for (int i = 0; self->client && self->last && i < 3 && !atomic_load (&self->down_since)
                    && (self->last_failed || atomic_load (&self->commits) > 0);
         i++) {
        atomic_store (&self->commits, 1);
        self->last_failed = 0;
        if (self->rk->rd_kafka_commit (self->client, self->last, 1) != RD_KAFKA_RESP_ERR_NO_ERROR)
            break;
        for (int j = 0; j < 50 && atomic_load (&self->commits) > 0; j++)
            self->rk->rd_kafka_poll (self->client, 100);
    }
    if (self->last)
        self->rk->rd_kafka_topic_partition_list_destroy (self->last);
    for (int32_t p = 0; self->parts && p < self->partitions; p++) {
        if (self->parts[p].started)
            self->rk->rd_kafka_consume_stop (self->topic, p);
        if (self->parts[p].json)
            weir__jsonparse_destroy (self->parts[p].json);
    }
    if (self->topic)
        self->rk->rd_kafka_topic_destroy (self->topic);
    if (self->client)
        self->rk->rd_kafka_destroy (self->client);
    pthread_mutex_destroy (&self->lock);
    pthread_mutex_destroy (&self->log_lock);
    free (self->parts);
    free (self->name);
    free (self->brokers);
    free (self->group);
    free (self);
}

//  Why librdkafka failed with E: what it said last, else E's words
static void s_why (s_kafka *self, rd_kafka_resp_err_t e, char *out, size_t size)
{
    pthread_mutex_lock (&self->lock);
    snprintf (out, size, "%s", self->why);
    pthread_mutex_unlock (&self->lock);
    if (!*out) {
        pthread_mutex_lock (&self->log_lock);
        snprintf (out, size, "%s", self->log);
        pthread_mutex_unlock (&self->log_lock);
    }
    if (!*out)
        snprintf (out, size, "%s", self->rk->rd_kafka_err2str (e));
}

//  Every property of the client: ours, then kafka.* as given
static rd_kafka_conf_t *s_conf (s_kafka *self, weir__props *props, weir__err *err)
{
    const char *const mine[][2] = {
        {"bootstrap.servers", self->brokers},
        //  End-of-partition events tell a bounded read it is done
        {"enable.partition.eof", "true"},
        {"log_level", "3"},
        {"client.id", "weir"},
        //  A topic that is not there is an error, not one made empty
        {"allow.auto.create.topics", "false"},
        //  A fetch that waits for partitions without messages holds back a
        //  partition started meanwhile (500 ms by default): a bounded read
        //  starts them one after another
        {"fetch.wait.max.ms", self->follow ? "100" : "10"},
        //  group=: offsets are committed as weir says, only those a
        //  checkpoint holds
        {"group.id", self->group ? self->group : ""},
        {"enable.auto.commit", "false"},
        {"enable.auto.offset.store", "false"},
    };
    size_t n = sizeof mine / sizeof mine[0];
    rd_kafka_conf_t *conf = weir__librdkafka_conf (self->rk, mine, self->group ? n : n - 3, props, err);
    if (!conf)
        return NULL;
    if (self->group)
        self->rk->rd_kafka_conf_set_offset_commit_cb (conf, s_commit_cb);
    self->rk->rd_kafka_conf_set_error_cb (conf, s_error_cb);
    self->rk->rd_kafka_conf_set_log_cb (conf, s_log_cb);
    self->rk->rd_kafka_conf_set_opaque (conf, self);
    return conf;
}

//  How many partitions the topic has, from the brokers, in *COUNT.  Every
//  topic is listed, and this one looked for among them: asking for it
//  alone may make a broker create it (auto.create.topics.enable)
static int s_partition_count (s_kafka *self, int ms, int32_t *count, weir__err *err)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = self->rk->rd_kafka_metadata (self->client, 1, NULL, &md, ms);
    if (e) {
        char why[256];
        s_why (self, e, why, sizeof why);
        return weir__err_set (err, WEIR_EIO, "kafka: cannot reach the brokers %s in %d s: %s", self->brokers,
                              ms / 1000, why);
    }
    const struct rd_kafka_metadata_topic *t = NULL;
    for (int i = 0; i < md->topic_cnt && !t; i++)
        if (!strcmp (md->topics[i].topic, self->name))
            t = &md->topics[i];
    int rc = 0;
    if (!t || t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        rc = weir__err_set (err, WEIR_EIO, "kafka: topic '%s' does not exist on the brokers %s", self->name,
                            self->brokers);
    else if (t->err)
        rc = weir__err_set (err, WEIR_EIO, "kafka: topic '%s' on the brokers %s: %s", self->name,
                            self->brokers, self->rk->rd_kafka_err2str (t->err));
    else if (t->partition_cnt <= 0)
        rc = weir__err_set (err, WEIR_EIO, "kafka: topic '%s' has no partitions", self->name);
    else
        *count = t->partition_cnt;
    self->rk->rd_kafka_metadata_destroy (md);
    return rc;
}

//  Partitions from the first one not known up to COUNT, with their
//  watermarks, each a shard of SHARDS that appears (readers/shards.h)
static int s_add_partitions (s_kafka *self, int32_t count, int ms, weir__shards *shards, weir__err *err)
{
    s_partition *parts = realloc (self->parts, (size_t) count * sizeof *parts);
    if (!parts)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->parts = parts;
    for (; self->partitions < count; self->partitions++) {
        int32_t p = self->partitions;
        s_partition *part = &parts[p];
        memset (part, 0, sizeof *part);
        rd_kafka_resp_err_t e = self->rk->rd_kafka_query_watermark_offsets (self->client, self->name, p,
                                                                            &part->low, &part->end, ms);
        if (e)
            return weir__err_set (err, WEIR_EIO,
                                  "kafka: topic '%s' partition %d: cannot learn its offsets: %s", self->name,
                                  (int) p, self->rk->rd_kafka_err2str (e));
        char path[512];
        snprintf (path, sizeof path, S_PREFIX "%s/%d", self->name, (int) p);
        //  A shard that never ends by its offset: a bounded read ends it at
        //  its watermark
        if (weir__shards_add (shards, path, 0, UINT64_MAX))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        shards->items[shards->count - 1].appears = 1;
    }
    return 0;
}

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    const char *brokers = weir__props_get (props, "brokers", NULL);
    const char *topic = weir__props_get (props, "topic", NULL);
    if (!brokers || !*brokers)
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: property 'brokers' is required (HOST:PORT)");
    if (!topic || !*topic)
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: property 'topic' is required");
    const char *value = weir__props_get (props, "value", "bin");
    static const char *const values[] = {"bin", "str", "json", "msgpack"};
    int kind = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp (value, values[i]))
            kind = i;
    if (kind < 0)
        return weir__err_at (err, WEIR_EPROPERTY, weir__props_find (props, "value")->value_offset,
                             "kafka: value=%s: wants bin, str, json or msgpack", value);
    int64_t meta, follow, timeout, discover;
    int rc;
    if ((rc = weir__props_int (props, "kafka", "meta", 0, 0, 1, &meta, err))
        || (rc = weir__props_int (props, "kafka", "follow", 0, 0, 1, &follow, err))
        || (rc = weir__props_int (props, "kafka", "timeout", 30, 1, 86400, &timeout, err))
        || (rc = weir__props_int (props, "kafka", "discover", 30, 0, 86400, &discover, err)))
        return rc;
    const weir__librdkafka *rk;
    if (weir__librdkafka_get (&rk, err))
        return err->code;
    s_kafka *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    pthread_mutex_init (&self->lock, NULL);
    pthread_mutex_init (&self->log_lock, NULL);
    s_librdkafka = rk;
    self->rk = rk;
    self->value = kind;
    self->meta = (int) meta;
    self->follow = (int) follow;
    self->timeout_ns = timeout * 1000000000;
    self->discover_ns = (uint64_t) discover * 1000000000;
    const char *group = weir__props_get (props, "group", NULL);
    if (group && !*group)
        group = NULL;
    if (!(self->name = strdup (topic)) || !(self->brokers = strdup (brokers))
        || (group && !(self->group = strdup (group)))) {
        s_close (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    rd_kafka_conf_t *conf = s_conf (self, props, err);
    char errstr[512];
    if (!conf) {
        s_close (self);
        return err->code;
    }
    if (!(self->client = rk->rd_kafka_new (RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr))) {
        rk->rd_kafka_conf_destroy (conf);
        s_close (self);
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: %s", errstr);
    }
    int ms = (int) (self->timeout_ns / 1000000);
    int32_t count = 0;
    if ((rc = s_partition_count (self, ms, &count, err))) {
        s_close (self);
        return rc;
    }
    if (!(self->topic = rk->rd_kafka_topic_new (self->client, topic, NULL))) {
        s_close (self);
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: topic '%s': %s", topic,
                              rk->rd_kafka_err2str (rk->rd_kafka_last_error ()));
    }
    //  One shard per partition
    if ((rc = s_add_partitions (self, count, ms, shards, err))) {
        s_close (self);
        return rc;
    }
    self->discovered = weir__now_ns ();
    shards->follow = self->follow;
    *state = self;
    return 0;
}

//  Which partition SHARD is
static int32_t s_partition_of (const weir__shard *shard)
{
    const char *slash = strrchr (shard->path, '/');
    return slash ? (int32_t) atoi (slash + 1) : 0;
}

static int s_nil (weir__batch *b)
{
    char *p = weir__pack_room (b, 1);
    if (!p)
        return -1;
    *p = (char) 0xc0;
    b->len++;
    return 0;
}

//  Record of message M into the sink's batch: 0, or 1 when its value is
//  not what value= says (WHY set), or -1 out of memory
static int s_record (s_kafka *self, s_partition *part, const rd_kafka_message_t *m, weir__batch *b,
                     const char **why, size_t *where)
{
    size_t at = b->len;
    int rc = 0;
    if (self->meta) {
        rd_kafka_timestamp_type_t type;
        int64_t ts = self->rk->rd_kafka_message_timestamp (m, &type);
        rc = weir__pack_map (b, 6) || weir__pack_str (b, "topic", 5)
             || weir__pack_str (b, self->name, strlen (self->name)) || weir__pack_str (b, "partition", 9)
             || weir__pack_int64 (b, m->partition) || weir__pack_str (b, "offset", 6)
             || weir__pack_int64 (b, m->offset) || weir__pack_str (b, "timestamp", 9)
             || (ts >= 0 ? weir__pack_int64 (b, ts) : s_nil (b)) || weir__pack_str (b, "key", 3)
             || (m->key ? weir__pack_bytes (b, m->key, m->key_len, self->value == S_BIN) : s_nil (b))
             || weir__pack_str (b, "value", 5);
        if (rc)
            return -1;
    }
    //  A tombstone: no value
    if (!m->payload)
        return s_nil (b);
    switch (self->value) {
    case S_BIN:
    case S_STR: return weir__pack_bytes (b, m->payload, m->len, self->value == S_BIN) ? -1 : 0;
    case S_JSON:
        if (!part->json && !(part->json = weir__jsonparse_new ()))
            return -1;
        rc = weir__jsonparse_pack (part->json, m->payload, m->len, b, where, why);
        if (rc == WEIR__JSONPARSE_MALFORMED) {
            b->len = at;
            return 1;
        }
        return rc ? -1 : 0;
    default: {
        size_t size;
        weir__scan_result r = weir__scan (m->payload, m->len, &size, where);
        if (r != WEIR__SCAN_OK || size != m->len) {
            *why = r != WEIR__SCAN_OK ? weir__scan_strerror (r) : "bytes after the msgpack object";
            if (r == WEIR__SCAN_OK)
                *where = size;
            b->len = at;
            return 1;
        }
        char *p = weir__pack_room (b, m->len);
        if (!p)
            return -1;
        memcpy (p, m->payload, m->len);
        b->len += m->len;
        return 0;
    }
    }
}

//  Every broker down for longer than timeout=: the job fails.  librdkafka
//  says once that all went down, and never that one came back: so once
//  the time is up the brokers are asked, and an answer clears it.
//  Messages are no sign: they may be ones fetched before
static int s_check_down (s_kafka *self, weir__err *err)
{
    uint64_t since = atomic_load (&self->down_since);
    if (!since || weir__now_ns () - since < (uint64_t) self->timeout_ns)
        return 0;
    const struct rd_kafka_metadata *md = NULL;
    if (!self->rk->rd_kafka_metadata (self->client, 0, self->topic, &md, 1000)) {
        self->rk->rd_kafka_metadata_destroy (md);
        atomic_store (&self->down_since, 0);
        return 0;
    }
    char why[256];
    s_why (self, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, why, sizeof why);
    return weir__err_set (err, WEIR_EIO,
                          "kafka: every broker of %s has been unreachable for %d s (timeout=): %s",
                          self->brokers, (int) (self->timeout_ns / 1000000000), why);
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    s_kafka *self = state;
    int32_t p = s_partition_of (shard);
    s_partition *part = &self->parts[p];
    const weir__librdkafka *rk = self->rk;
    if (*offset < (uint64_t) part->low && part->low > 0) {
        //  A fresh start reads from the first message kept; a checkpoint's
        //  offset that retention deleted since is records lost
        if (*offset > 0)
            return weir__err_set (err, WEIR_EIO,
                                  "kafka: topic '%s' partition %d: the checkpoint's offset %" PRIu64
                                  " is gone from the brokers (the first kept is %" PRId64 "): %" PRId64
                                  " messages were deleted before they were read",
                                  self->name, (int) p, *offset, part->low, part->low - (int64_t) *offset);
        *offset = (uint64_t) part->low;
    }
    if (!self->follow && (int64_t) *offset >= part->end) {
        if (part->started)
            rk->rd_kafka_consume_stop (self->topic, p);
        part->started = 0;
        return 0;
    }
    if (!part->started || part->next != (int64_t) *offset) {
        if (part->started)
            rk->rd_kafka_consume_stop (self->topic, p);
        if (rk->rd_kafka_consume_start (self->topic, p, (int64_t) *offset) == -1)
            return weir__err_set (
                err, WEIR_EIO,
                "kafka: topic '%s' partition %d: cannot start reading at offset %" PRIu64 ": %s", self->name,
                (int) p, *offset, rk->rd_kafka_err2str (rk->rd_kafka_last_error ()));
        part->started = 1;
        part->next = (int64_t) *offset;
    }
    rd_kafka_message_t *msgs[S_FETCH];
    for (;;) {
        s_serve (self);
        size_t want = sink->quota < S_FETCH ? (size_t) sink->quota : S_FETCH;
        //  What is there now; else, but when following (a partition without
        //  messages gives way to the next), a wait for the next one
        ssize_t n = rk->rd_kafka_consume_batch (self->topic, p, 0, msgs, want);
        if (n == 0 && !self->follow)
            n = rk->rd_kafka_consume_batch (self->topic, p, 100, msgs, 1);
        if (n < 0)
            return weir__err_set (err, WEIR_EIO, "kafka: topic '%s' partition %d: %s", self->name, (int) p,
                                  rk->rd_kafka_err2str (rk->rd_kafka_last_error ()));
        //  How far the partition goes, as the last fetch said: with the
        //  offset, the messages reading is behind (input_behind).  Only
        //  when following, as for files: the engine's figures per shard
        //  are kept for one reader thread, and several would grow them at
        //  once
        int64_t low, high;
        if (self->follow && sink->seen
            && !rk->rd_kafka_get_watermark_offsets (self->client, self->name, p, &low, &high) && high >= 0)
            sink->seen (sink, (uint64_t) high);
        if (n == 0) {
            if (s_check_down (self, err))
                return err->code;
            if (self->follow)
                return WEIR__READ_DRY;
            if (sink->idle) {
                int rc = sink->idle (sink);
                if (rc)
                    return rc;
            }
            continue;
        }
        int rc = 0;
        ssize_t i = 0;
        for (; i < n && !rc; i++) {
            rd_kafka_message_t *m = msgs[i];
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                //  At the end for now
                if (!self->follow && (int64_t) *offset >= part->end)
                    rc = -2;
                else if (self->follow)
                    rc = WEIR__READ_DRY;
                continue;
            }
            if (m->err) {
                rc = weir__err_set (err, WEIR_EIO, "kafka: topic '%s' partition %d at offset %" PRIu64 ": %s",
                                    self->name, (int) p, *offset, rk->rd_kafka_err2str (m->err));
                continue;
            }
            if (m->offset < (int64_t) *offset)
                continue;
            const char *why = NULL;
            size_t where = 0;
            int got = s_record (self, part, m, &sink->batch, &why, &where);
            if (got < 0)
                rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            else if (got > 0) {
                char path[300];
                snprintf (path, sizeof path, "%s", shard->path);
                weir__bad bad = {
                    path, (uint64_t) m->offset, 0, m->payload, m->len < 256 ? m->len : 256, m->len, why};
                if (!sink->skip)
                    rc = weir__err_set (err, WEIR_ECORRUPT,
                                        "kafka: topic '%s' partition %d, the message at offset %" PRId64
                                        ": its value is not %s (byte %zu: %s)" WEIR__SKIP_HINT,
                                        self->name, (int) p, m->offset,
                                        self->value == S_JSON ? "JSON" : "msgpack", where, why);
                else if (sink->reject (sink, &bad))
                    rc = WEIR__SINK_ABORT;
                *offset = (uint64_t) m->offset + 1;
                part->next = (int64_t) *offset;
            }
            else {
                *offset = (uint64_t) m->offset + 1;
                part->next = (int64_t) *offset;
                rc = weir__sink_add (sink);
            }
            if (!rc && !self->follow && (int64_t) *offset >= part->end)
                rc = -2;
        }
        //  What was fetched and not taken is fetched again from the offset
        //  (the next read starts over there)
        if (i < n)
            part->next = -1;
        for (ssize_t k = 0; k < n; k++)
            rk->rd_kafka_message_destroy (msgs[k]);
        if (rc == -2) {
            //  Done: no more fetches for it, which would hold the others'
            rk->rd_kafka_consume_stop (self->topic, p);
            part->started = 0;
            return 0;
        }
        if (rc)
            return rc;
    }
}

//  follow=1: no partition has a message; a short wait, the sink asked
//  meanwhile (it sends a lingering batch, and ends the epoch on time)
static int s_wait (void *state, weir__sink *sink)
{
    s_kafka *self = state;
    for (int i = 0; i < 5; i++) {
        s_serve (self);
        if (sink->idle) {
            int rc = sink->idle (sink);
            if (rc)
                return rc;
        }
        struct timespec ts = {0, 20 * 1000000};
        nanosleep (&ts, NULL);
    }
    return 0;
}

//  follow=1: partitions added to the topic since it was last asked (every
//  discover= seconds) become shards.  Brokers that do not answer now are
//  asked again next time: s_read says when they have been down too long
static int s_discover (void *state, weir__shards *shards, weir__err *err)
{
    s_kafka *self = state;
    uint64_t now = weir__now_ns ();
    if (!self->discover_ns || now - self->discovered < self->discover_ns)
        return 0;
    self->discovered = now;
    weir__err quiet;
    weir__err_init (&quiet);
    int32_t count = 0;
    if (s_partition_count (self, 1000, &count, &quiet) || count <= self->partitions)
        return 0;
    //  A partition whose offsets cannot be learnt now is looked at again
    //  next time; those before it are shards already
    if (s_add_partitions (self, count, 1000, shards, &quiet) == WEIR_ENOMEM)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    return 0;
}

//  A partition's messages past OFFSET, by its end at open
static int s_more (void *state, const weir__shard *shard, uint64_t offset)
{
    const s_kafka *self = state;
    return (int64_t) offset < self->parts[s_partition_of (shard)].end;
}

//  group=: the offsets of the checkpoint written, this rank's partitions,
//  committed to the group (asynchronously: the answer comes through
//  s_commit_cb).  A partition not read yet is at its first kept message
static int s_settle (void *state, const weir__shards *shards, const uint64_t *offsets, unsigned rank,
                     unsigned ranks, weir__err *err)
{
    s_kafka *self = state;
    if (!self->group)
        return 0;
    const weir__librdkafka *rk = self->rk;
    pthread_mutex_lock (&self->lock);
    rk->rd_kafka_poll (self->client, 0);
    //  Said once while commits fail, again after one succeeded
    char why[sizeof self->commit_why] = "";
    if (self->commit_ok && !*self->commit_why)
        self->warned = 0;
    if (*self->commit_why && !self->warned) {
        snprintf (why, sizeof why, "%s", self->commit_why);
        self->warned = 1;
    }
    self->commit_why[0] = '\0';
    self->commit_ok = 0;
    pthread_mutex_unlock (&self->lock);
    rd_kafka_topic_partition_list_t *list = rk->rd_kafka_topic_partition_list_new ((int) shards->count);
    if (!list)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < shards->count; i++) {
        if (ranks > 1 && i % ranks != rank)
            continue;
        int32_t p = s_partition_of (&shards->items[i]);
        if (p >= self->partitions)
            continue;
        int64_t at = (int64_t) offsets[i] > self->parts[p].low ? (int64_t) offsets[i] : self->parts[p].low;
        rk->rd_kafka_topic_partition_list_add (list, self->name, p)->offset = at;
    }
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (list->cnt > 0) {
        atomic_fetch_add (&self->commits, 1);
        if ((e = rk->rd_kafka_commit (self->client, list, 1)))
            atomic_fetch_sub (&self->commits, 1);
    }
    //  Kept for the close, which sends the last again if it was refused
    //  (the newest offsets, even when librdkafka refused to queue them)
    pthread_mutex_lock (&self->lock);
    if (list->cnt > 0) {
        if (self->last)
            rk->rd_kafka_topic_partition_list_destroy (self->last);
        self->last = list;
        list = NULL;
        if (e)
            self->last_failed = 1;
    }
    pthread_mutex_unlock (&self->lock);
    if (list)
        rk->rd_kafka_topic_partition_list_destroy (list);
    if (e)
        return weir__err_set (err, WEIR_EIO, "cannot commit the offsets to group '%s': %s", self->group,
                              rk->rd_kafka_err2str (e));
    if (*why)
        return weir__err_set (err, WEIR_EIO,
                              "group '%s' refused the offsets of a checkpoint: %s (said once until a "
                              "commit succeeds; the checkpoints, which a resume goes on from, are whole)",
                              self->group, why);
    return 0;
}

const weir__reader_class weir__reader_kafka = {
    "kafka",
    "the messages of a Kafka topic: every partition a shard, its offsets in the checkpoint (exactly once)",
    s_props,
    s_open,
    s_read,
    s_close,
    s_discover,
    s_wait,
    s_more,
    s_settle,
    WEIR__RECORDS_COUNTED,
};
