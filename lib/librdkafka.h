/*  lib/librdkafka.h - the Kafka client library, loaded when a kafka
    reader or writer needs it.

    librdkafka is opened with dlopen the first time a kafka element opens,
    not linked: it brings OpenSSL, SASL and threads of its own into the
    process, for elements most jobs never use (writers/libpq.h loads
    PostgreSQL's client the same way).  The functions keep librdkafka's
    names and types (rdkafka.h), reached through the table.  */
#ifndef WEIR_LIBRDKAFKA_H_INCLUDED
#define WEIR_LIBRDKAFKA_H_INCLUDED

#include <librdkafka/rdkafka.h>

#include "lib/error.h"
#include "lib/props.h"

typedef struct weir__librdkafka {
    rd_kafka_conf_t *(*rd_kafka_conf_new) (void);
    rd_kafka_conf_res_t (*rd_kafka_conf_set) (rd_kafka_conf_t *conf, const char *name, const char *value,
                                              char *errstr, size_t errstr_size);
    void (*rd_kafka_conf_set_error_cb) (rd_kafka_conf_t *conf,
                                        void (*error_cb) (rd_kafka_t *rk, int err, const char *reason,
                                                          void *opaque));
    void (*rd_kafka_conf_set_opaque) (rd_kafka_conf_t *conf, void *opaque);
    void (*rd_kafka_conf_set_log_cb) (rd_kafka_conf_t *conf,
                                      void (*log_cb) (const rd_kafka_t *rk, int level, const char *fac,
                                                      const char *buf));
    void *(*rd_kafka_opaque) (const rd_kafka_t *rk);
    void (*rd_kafka_conf_destroy) (rd_kafka_conf_t *conf);
    rd_kafka_t *(*rd_kafka_new) (rd_kafka_type_t type, rd_kafka_conf_t *conf, char *errstr,
                                 size_t errstr_size);
    void (*rd_kafka_destroy) (rd_kafka_t *rk);
    rd_kafka_topic_t *(*rd_kafka_topic_new) (rd_kafka_t *rk, const char *topic, rd_kafka_topic_conf_t *conf);
    void (*rd_kafka_topic_destroy) (rd_kafka_topic_t *rkt);
    rd_kafka_resp_err_t (*rd_kafka_metadata) (rd_kafka_t *rk, int all_topics, rd_kafka_topic_t *only_rkt,
                                              const struct rd_kafka_metadata **metadatap, int timeout_ms);
    void (*rd_kafka_metadata_destroy) (const struct rd_kafka_metadata *metadata);
    rd_kafka_resp_err_t (*rd_kafka_query_watermark_offsets) (rd_kafka_t *rk, const char *topic,
                                                             int32_t partition, int64_t *low, int64_t *high,
                                                             int timeout_ms);
    int (*rd_kafka_consume_start) (rd_kafka_topic_t *rkt, int32_t partition, int64_t offset);
    int (*rd_kafka_consume_stop) (rd_kafka_topic_t *rkt, int32_t partition);
    ssize_t (*rd_kafka_consume_batch) (rd_kafka_topic_t *rkt, int32_t partition, int timeout_ms,
                                       rd_kafka_message_t **rkmessages, size_t rkmessages_size);
    void (*rd_kafka_message_destroy) (rd_kafka_message_t *rkmessage);
    int64_t (*rd_kafka_message_timestamp) (const rd_kafka_message_t *rkmessage,
                                           rd_kafka_timestamp_type_t *tstype);
    const char *(*rd_kafka_err2str) (rd_kafka_resp_err_t err);
    rd_kafka_resp_err_t (*rd_kafka_last_error) (void);
    int (*rd_kafka_poll) (rd_kafka_t *rk, int timeout_ms);
    void (*rd_kafka_conf_set_dr_msg_cb) (rd_kafka_conf_t *conf,
                                         void (*dr_msg_cb) (rd_kafka_t *rk,
                                                            const rd_kafka_message_t *rkmessage,
                                                            void *opaque));
    int (*rd_kafka_produce) (rd_kafka_topic_t *rkt, int32_t partition, int msgflags, void *payload,
                             size_t len, const void *key, size_t keylen, void *msg_opaque);
    rd_kafka_resp_err_t (*rd_kafka_flush) (rd_kafka_t *rk, int timeout_ms);
    int (*rd_kafka_outq_len) (rd_kafka_t *rk);
    rd_kafka_resp_err_t (*rd_kafka_get_watermark_offsets) (rd_kafka_t *rk, const char *topic,
                                                           int32_t partition, int64_t *low, int64_t *high);
    //  Offsets committed to a consumer group (the kafka reader's group=)
    rd_kafka_topic_partition_list_t *(*rd_kafka_topic_partition_list_new) (int size);
    rd_kafka_topic_partition_t *(*rd_kafka_topic_partition_list_add) (
        rd_kafka_topic_partition_list_t *rktparlist, const char *topic, int32_t partition);
    void (*rd_kafka_topic_partition_list_destroy) (rd_kafka_topic_partition_list_t *rkparlist);
    rd_kafka_resp_err_t (*rd_kafka_commit) (rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *offsets,
                                            int async);
    void (*rd_kafka_conf_set_offset_commit_cb) (
        rd_kafka_conf_t *conf,
        void (*offset_commit_cb) (rd_kafka_t *rk, rd_kafka_resp_err_t err,
                                  rd_kafka_topic_partition_list_t *offsets, void *opaque));
} weir__librdkafka;

/*  A client's settings: the N pairs MINE ({name, value}), then every
    kafka.NAME=VALUE of PROPS as given, so that a user's setting wins.
    The settings, or NULL and ERR naming the one librdkafka refused.  */
rd_kafka_conf_t *weir__librdkafka_conf (const weir__librdkafka *rk, const char *const mine[][2], size_t n,
                                        const weir__props *props, weir__err *err);

/*  The library's functions, loaded once (thread-safe): 0 and *OUT, or
    WEIR_ESYSTEM saying what could not be loaded.  */
int weir__librdkafka_get (const weir__librdkafka **out, weir__err *err);

#endif
