/*  lib/librdkafka.c - the Kafka client library, loaded on first use.  */
#include "config.h"
#include "lib/librdkafka.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static weir__librdkafka s_rk;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static char s_why[512];  //  why it could not load; "" when it did

//  POSIX's way from a void pointer to a function pointer
#define S_LOAD(lib, name)                                                                                    \
    do {                                                                                                     \
        *(void **) &s_rk.name = dlsym (lib, #name);                                                          \
        if (!s_rk.name && !*s_why)                                                                           \
            snprintf (s_why, sizeof s_why, "librdkafka lacks %s, which weir calls", #name);                  \
    } while (0)

static void s_load (void)
{
    void *lib = dlopen ("librdkafka.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen ("librdkafka.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror ();
        snprintf (s_why, sizeof s_why,
                  "cannot load librdkafka, the Kafka client library (Debian: librdkafka1): %s",
                  why ? why : "not found");
        return;
    }
    S_LOAD (lib, rd_kafka_conf_new);
    S_LOAD (lib, rd_kafka_conf_set);
    S_LOAD (lib, rd_kafka_conf_set_error_cb);
    S_LOAD (lib, rd_kafka_conf_set_opaque);
    S_LOAD (lib, rd_kafka_conf_set_log_cb);
    S_LOAD (lib, rd_kafka_opaque);
    S_LOAD (lib, rd_kafka_conf_destroy);
    S_LOAD (lib, rd_kafka_new);
    S_LOAD (lib, rd_kafka_destroy);
    S_LOAD (lib, rd_kafka_topic_new);
    S_LOAD (lib, rd_kafka_topic_destroy);
    S_LOAD (lib, rd_kafka_metadata);
    S_LOAD (lib, rd_kafka_metadata_destroy);
    S_LOAD (lib, rd_kafka_query_watermark_offsets);
    S_LOAD (lib, rd_kafka_consume_start);
    S_LOAD (lib, rd_kafka_consume_stop);
    S_LOAD (lib, rd_kafka_consume_batch);
    S_LOAD (lib, rd_kafka_message_destroy);
    S_LOAD (lib, rd_kafka_message_timestamp);
    S_LOAD (lib, rd_kafka_err2str);
    S_LOAD (lib, rd_kafka_last_error);
    S_LOAD (lib, rd_kafka_poll);
    S_LOAD (lib, rd_kafka_get_watermark_offsets);
    S_LOAD (lib, rd_kafka_conf_set_dr_msg_cb);
    S_LOAD (lib, rd_kafka_produce);
    S_LOAD (lib, rd_kafka_flush);
    S_LOAD (lib, rd_kafka_outq_len);
    S_LOAD (lib, rd_kafka_topic_partition_list_new);
    S_LOAD (lib, rd_kafka_topic_partition_list_add);
    S_LOAD (lib, rd_kafka_topic_partition_list_destroy);
    S_LOAD (lib, rd_kafka_commit);
    S_LOAD (lib, rd_kafka_conf_set_offset_commit_cb);
}

rd_kafka_conf_t *weir__librdkafka_conf (const weir__librdkafka *rk, const char *const mine[][2], size_t n,
                                        const weir__props *props, weir__err *err)
{
    rd_kafka_conf_t *conf = rk->rd_kafka_conf_new ();
    char errstr[512];
    for (size_t i = 0; i < n; i++)
        if (rk->rd_kafka_conf_set (conf, mine[i][0], mine[i][1], errstr, sizeof errstr)) {
            weir__err_set (err, WEIR_EPROPERTY, "kafka: %s", errstr);
            rk->rd_kafka_conf_destroy (conf);
            return NULL;
        }
    for (size_t i = 0; i < props->count; i++) {
        const weir__prop *p = &props->items[i];
        if (!strncmp (p->key, "kafka.", 6)
            && rk->rd_kafka_conf_set (conf, p->key + 6, p->value, errstr, sizeof errstr)) {
            weir__err_at (err, WEIR_EPROPERTY, p->key_offset, "kafka: %s=%s: %s", p->key, p->value, errstr);
            rk->rd_kafka_conf_destroy (conf);
            return NULL;
        }
    }
    return conf;
}

int weir__librdkafka_get (const weir__librdkafka **out, weir__err *err)
{
    pthread_once (&s_once, s_load);
    if (*s_why)
        return weir__err_set (err, WEIR_ESYSTEM, "kafka: %s", s_why);
    *out = &s_rk;
    return 0;
}
