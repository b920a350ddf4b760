/*  writers/kafka.c - records as the messages of a Kafka topic, at least
    once.

    Every record becomes one message of the topic (format=json: its JSON
    text, as the json writer writes it; msgpack: its bytes; raw: a str or
    bin record's own bytes).  key=PATH gives each message a key, the value
    PATH leads to (a str or bin as its bytes, nil or absent as no key,
    anything else as its JSON text); the partitioner is murmur2, as Java
    clients', so a key lands in the partition other producers put it in.
    Without a key librdkafka's partitioner spreads the messages.  Writer
    threads hand their messages to one producer; there is no order
    between threads, and within a thread's messages to one partition the
    order is kept.

    What it guarantees: at least once.  The producer is idempotent
    (enable.idempotence: librdkafka's own retries never write a message
    twice, and acks=all), and an epoch's commit waits until the brokers
    acknowledged every message of the epoch (rd_kafka_flush), failing the
    epoch if any was refused, before the checkpoint that records the epoch
    is written.  So a checkpoint never counts a message that is not in the
    topic.  But a crash after the flush and before the checkpoint has the
    resume produce that epoch's messages again: they are in the topic
    twice.  Exactly once into Kafka needs a transaction committed by the
    checkpoint, and a crash between the two would need a new producer to
    commit the old one's transaction, which Kafka's protocol (and
    librdkafka) does not offer: a transactional id's new producer aborts
    what the old one left open.  Consumers that need exactly once
    deduplicate, for instance by a key in the message.  */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

#include "lib/batch.h"
#include "lib/buf.h"
#include "lib/jsontext.h"
#include "lib/key.h"
#include "lib/librdkafka.h"
#include "lib/scan.h"
#include "lib/unpack.h"
#include "writers/writer.h"

enum { S_JSON, S_MSGPACK, S_RAW };

typedef struct {
    const weir__librdkafka *rk;
    rd_kafka_t *producer;
    rd_kafka_topic_t *topic;
    char *name, *brokers;
    int format;
    int timeout_ms;
    unsigned threads;
    weir__buf *text;  //  per thread, format=json
    weir__key *key;   //  key=, or NULL
    //  key=: per thread, the record decoded and the key's text
    msgpack_zone *zones;
    weir__buf *keys;
    _Atomic uint64_t sent, failed;
    pthread_mutex_t lock;  //  serves librdkafka's callbacks, one thread at a time
    char why[256];         //  the first delivery that failed, under LOCK
} s_kafka;

static const weir_property_info s_props[] = {
    {"brokers", NULL, "the bootstrap brokers, HOST:PORT[,HOST:PORT...] (required)"},
    {"topic", NULL, "the topic to write (required; it must exist)"},
    {"format", "json",
     "what a record becomes: json (its JSON text), msgpack (its bytes) or raw (a str or bin record's own "
     "bytes)"},
    {"key", "",
     "a path ('.user', '[0]', '.') to each message's key: a str or bin as its bytes, nil or absent as no "
     "key, anything else as its JSON text; murmur2 picks its partition, as Java clients do"},
    {"timeout", "30", "seconds an epoch's end waits for the brokers to acknowledge its messages"},
    {"kafka.*", "", "any librdkafka producer setting, passed through (kafka.compression.type=zstd, ...)"},
    {NULL, NULL, NULL},
};

static void s_delivered (rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    s_kafka *self = opaque;
    if (!m->err)
        return;
    if (atomic_fetch_add (&self->failed, 1) == 0)
        snprintf (self->why, sizeof self->why, "%s", self->rk->rd_kafka_err2str (m->err));
}

//  Delivery reports, served by whichever thread gets there first
static void s_serve (s_kafka *self, int timeout_ms)
{
    if (pthread_mutex_trylock (&self->lock) == 0) {
        self->rk->rd_kafka_poll (self->producer, timeout_ms);
        pthread_mutex_unlock (&self->lock);
    }
}

static void s_free (s_kafka *self)
{
    if (self->topic)
        self->rk->rd_kafka_topic_destroy (self->topic);
    if (self->producer)
        self->rk->rd_kafka_destroy (self->producer);
    for (unsigned t = 0; self->text && t < self->threads; t++)
        weir__buf_release (&self->text[t]);
    for (unsigned t = 0; self->keys && t < self->threads; t++)
        weir__buf_release (&self->keys[t]);
    for (unsigned t = 0; self->zones && t < self->threads; t++)
        msgpack_zone_destroy (&self->zones[t]);
    weir__key_destroy (&self->key);
    pthread_mutex_destroy (&self->lock);
    free (self->text);
    free (self->keys);
    free (self->zones);
    free (self->name);
    free (self->brokers);
    free (self);
}

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    const char *brokers = weir__props_get (props, "brokers", NULL);
    const char *topic = weir__props_get (props, "topic", NULL);
    const char *format = weir__props_get (props, "format", "json");
    if (!brokers || !*brokers)
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: property 'brokers' is required (HOST:PORT)");
    if (!topic || !*topic)
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: property 'topic' is required");
    int kind = !strcmp (format, "json")      ? S_JSON
               : !strcmp (format, "msgpack") ? S_MSGPACK
               : !strcmp (format, "raw")     ? S_RAW
                                             : -1;
    if (kind < 0)
        return weir__err_at (err, WEIR_EPROPERTY, weir__props_find (props, "format")->value_offset,
                             "kafka: format=%s: wants json, msgpack or raw", format);
    int64_t timeout;
    int rc = weir__props_int (props, "kafka", "timeout", 30, 1, 86400, &timeout, err);
    if (rc)
        return rc;
    const weir__librdkafka *rk;
    if (weir__librdkafka_get (&rk, err))
        return err->code;
    s_kafka *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    pthread_mutex_init (&self->lock, NULL);
    self->rk = rk;
    self->format = kind;
    self->timeout_ms = (int) timeout * 1000;
    self->threads = threads;
    if (!(self->name = strdup (topic)) || !(self->brokers = strdup (brokers))
        || !(self->text = calloc (threads, sizeof *self->text))) {
        s_free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    const weir__prop *key = weir__props_find (props, "key");
    if (key && *key->value) {
        weir__err why;
        weir__err_init (&why);
        if (!(self->key = weir__key_new (key->value, &why))) {
            s_free (self);
            return weir__err_at (err, why.code, key->value_offset + (why.offset > 0 ? why.offset : 0),
                                 "kafka: key=%s: %s", key->value, why.msg);
        }
        if (!(self->keys = calloc (threads, sizeof *self->keys))
            || !(self->zones = calloc (threads, sizeof *self->zones))) {
            s_free (self);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
        for (unsigned t = 0; t < threads; t++)
            msgpack_zone_init (&self->zones[t], 4096);
    }
    const char *const mine[][2] = {
        {"bootstrap.servers", brokers},
        {"enable.idempotence", "true"},
        {"log_level", "0"},
        {"client.id", "weir"},
        //  A key's partition as Java clients pick it (librdkafka's own
        //  default hashes with CRC32)
        {"partitioner", "murmur2_random"},
    };
    rd_kafka_conf_t *conf = weir__librdkafka_conf (rk, mine, sizeof mine / sizeof mine[0], props, err);
    if (!conf) {
        s_free (self);
        return err->code;
    }
    rk->rd_kafka_conf_set_dr_msg_cb (conf, s_delivered);
    rk->rd_kafka_conf_set_opaque (conf, self);
    char errstr[512];
    if (!(self->producer = rk->rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr))) {
        rk->rd_kafka_conf_destroy (conf);
        s_free (self);
        return weir__err_set (err, WEIR_EPROPERTY, "kafka: %s", errstr);
    }
    //  The topic must be there: asked of the brokers among all topics, so
    //  that the asking does not create it
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rk->rd_kafka_metadata (self->producer, 1, NULL, &md, self->timeout_ms);
    int found = 0;
    for (int i = 0; !e && i < md->topic_cnt; i++)
        found |= !strcmp (md->topics[i].topic, topic) && !md->topics[i].err;
    if (md)
        rk->rd_kafka_metadata_destroy (md);
    if (e)
        rc = weir__err_set (err, WEIR_EIO, "kafka: cannot reach the brokers %s in %d s: %s", brokers,
                            (int) timeout, rk->rd_kafka_err2str (e));
    else if (!found)
        rc = weir__err_set (err, WEIR_EIO, "kafka: topic '%s' does not exist on the brokers %s", topic,
                            brokers);
    else if (!(self->topic = rk->rd_kafka_topic_new (self->producer, topic, NULL)))
        rc = weir__err_set (err, WEIR_EPROPERTY, "kafka: topic '%s': %s", topic,
                            rk->rd_kafka_err2str (rk->rd_kafka_last_error ()));
    if (rc) {
        s_free (self);
        return rc;
    }
    *state = self;
    return 0;
}

//  One message of N bytes at P, with the key of KLEN bytes at K (NULL:
//  none), waiting while librdkafka's queue is full
static int s_produce (s_kafka *self, const char *p, size_t n, const char *k, size_t klen, weir__err *err)
{
    for (;;) {
        if (self->rk->rd_kafka_produce (self->topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, (void *) p,
                                        n, k, klen, NULL)
            == 0) {
            atomic_fetch_add_explicit (&self->sent, 1, memory_order_relaxed);
            return 0;
        }
        rd_kafka_resp_err_t e = self->rk->rd_kafka_last_error ();
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            return weir__err_set (err, WEIR_EIO, "kafka: producing into topic '%s': %s", self->name,
                                  self->rk->rd_kafka_err2str (e));
        s_serve (self, 50);
    }
}

//  key=: the key of the record of N bytes at P into *K and *KLEN (NULL:
//  none), valid until the thread's next record.  0, or a WEIR_E* code
static int s_key (s_kafka *self, unsigned thread, const char *p, size_t n, const char **k, size_t *klen,
                  weir__err *err)
{
    msgpack_zone *zone = &self->zones[thread];
    weir__buf *text = &self->keys[thread];
    msgpack_zone_clear (zone);
    msgpack_object rec;
    size_t off = 0;
    if (weir__unpack (p, n, &off, zone, &rec) != MSGPACK_UNPACK_SUCCESS)
        return weir__err_set (err, WEIR_ECORRUPT, "kafka: malformed record in a batch");
    const msgpack_object *v = weir__key_find (self->key, &rec);
    *k = NULL;
    *klen = 0;
    if (!v || v->type == MSGPACK_OBJECT_NIL)
        return 0;
    if (v->type == MSGPACK_OBJECT_STR || v->type == MSGPACK_OBJECT_BIN) {
        *k = v->via.str.ptr;
        *klen = v->via.str.size;
        return 0;
    }
    text->len = 0;
    if (weir__jsontext_append (text, v))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    *k = text->data;
    *klen = text->len;
    return 0;
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    s_kafka *self = state;
    weir__buf *text = &self->text[thread];
    const char *p = payload, *end = payload + len;
    for (uint32_t i = 0; i < count; i++) {
        size_t used, where;
        const char *k = NULL;
        size_t klen = 0;
        if (self->format == S_JSON) {
            text->len = 0;
            int rc = weir__jsontext_packed (text, p, (size_t) (end - p), &used);
            if (rc)
                return weir__err_set (err, rc == -2 ? WEIR_ECORRUPT : WEIR_ENOMEM, "kafka: %s",
                                      rc == -2 ? "malformed record in a batch" : "out of memory");
            if ((self->key && s_key (self, thread, p, used, &k, &klen, err))
                || s_produce (self, text->data, text->len, k, klen, err))
                return err->code;
        }
        else {
            if (weir__scan (p, (size_t) (end - p), &used, &where) != WEIR__SCAN_OK)
                return weir__err_set (err, WEIR_ECORRUPT, "kafka: malformed record in a batch");
            const char *bytes = p;
            size_t n = used;
            if (self->format == S_RAW) {
                //  A str or bin: its bytes, after the header
                unsigned char c = (unsigned char) *p;
                int bytes_like =
                    (c >= 0xa0 && c <= 0xbf) || (c >= 0xc4 && c <= 0xc6) || (c >= 0xd9 && c <= 0xdb);
                if (!bytes_like)
                    return weir__err_set (
                        err, WEIR_ECORRUPT,
                        "kafka: format=raw writes str and bin records as their bytes, and got "
                        "another kind; format=json or format=msgpack writes any record");
                size_t head = c <= 0xbf ? 1 : c == 0xc4 || c == 0xd9 ? 2 : c == 0xc5 || c == 0xda ? 3 : 5;
                bytes = p + head;
                n = used - head;
            }
            if ((self->key && s_key (self, thread, p, used, &k, &klen, err))
                || s_produce (self, bytes, n, k, klen, err))
                return err->code;
        }
        p += used;
    }
    s_serve (self, 0);
    return 0;
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    return 0;
}

//  Every message produced acknowledged, or the epoch fails
static int s_commit (void *state, char *out, weir__err *err)
{
    s_kafka *self = state;
    pthread_mutex_lock (&self->lock);
    rd_kafka_resp_err_t e = self->rk->rd_kafka_flush (self->producer, self->timeout_ms);
    pthread_mutex_unlock (&self->lock);
    if (e)
        return weir__err_set (
            err, WEIR_EIO,
            "kafka: %d messages into topic '%s' were not acknowledged by the brokers %s in %d s",
            self->rk->rd_kafka_outq_len (self->producer), self->name, self->brokers, self->timeout_ms / 1000);
    uint64_t failed = atomic_load (&self->failed);
    if (failed)
        return weir__err_set (err, WEIR_EIO,
                              "kafka: the brokers refused %" PRIu64 " messages into topic '%s': %s", failed,
                              self->name, self->why);
    snprintf (out, WEIR__WRITER_STATE_MAX, "sent:%" PRIu64, atomic_load (&self->sent));
    return 0;
}

static int s_close (void *state, weir__err *err)
{
    s_free (state);
    return 0;
}

const weir__writer_class weir__writer_kafka = {
    "kafka",
    "records as the messages of a Kafka topic, acknowledged before each epoch commits (at least once)",
    s_props,
    s_open,
    s_write,
    s_flush,
    s_commit,
    s_close,
    NULL,  //  what was produced is in the topic: nothing to take back
    NULL,  //  acknowledged at commit: nothing to settle
    NULL,  //  every record can be written
};
