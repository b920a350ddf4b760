/*  tests/kafka_mock.c - a Kafka cluster for the tests: librdkafka's mock
    cluster (the client library's in-process brokers, speaking the real
    protocol on 127.0.0.1), with its topics.

        kafka_mock TOPIC PARTITIONS [TOPIC PARTITIONS...]

    Prints the bootstrap servers on a line of their own, then takes
    commands on standard input, one a line, and answers each with a line
    "ok" (or "error: ..."):

        produce FILE [FIRST [N]]
                              every line of FILE, a message, into partition
                              (FIRST + line number) mod N of the first
                              topic (N: its PARTITIONS unless given); its
                              key "k" and the line number
        committed GROUP       the offsets consumer group GROUP committed
                              for the partitions of the first topic, on a
                              line "committed P:OFFSET ..." (-1001: none)
        refuse N              the next N offset commits fail (group
                              authorization failed)
        down                  every broker stops answering
        up                    and answers again

    At the end of its input it exits.  */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int s_brokers = 1;

static int s_produce (rd_kafka_t *producer, const char *topic, int partitions, const char *path, long first)
{
    FILE *f = fopen (path, "r");
    if (!f) {
        printf ("error: cannot open %s\n", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long i = 0;
    int rc = 0;
    while (!rc && (n = getline (&line, &cap, f)) >= 0) {
        if (n && line[n - 1] == '\n')
            n--;
        char key[32];
        int klen = snprintf (key, sizeof key, "k%ld", i);
        rd_kafka_resp_err_t err;
        while ((err = rd_kafka_producev (producer, RD_KAFKA_V_TOPIC (topic),
                                         RD_KAFKA_V_PARTITION ((int32_t) ((first + i) % partitions)),
                                         RD_KAFKA_V_VALUE (line, (size_t) n),
                                         RD_KAFKA_V_KEY (key, (size_t) klen),
                                         RD_KAFKA_V_MSGFLAGS (RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END))
               == RD_KAFKA_RESP_ERR__QUEUE_FULL)
            rd_kafka_poll (producer, 100);
        if (err) {
            printf ("error: %s\n", rd_kafka_err2str (err));
            rc = -1;
        }
        i++;
    }
    free (line);
    fclose (f);
    if (!rc && rd_kafka_flush (producer, 60000)) {
        printf ("error: the messages were not all delivered in 60 s\n");
        rc = -1;
    }
    return rc;
}

static int s_committed (const char *bootstraps, const char *topic, int partitions, const char *group)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new ();
    rd_kafka_conf_set (conf, "bootstrap.servers", bootstraps, errstr, sizeof errstr);
    rd_kafka_conf_set (conf, "log_level", "0", errstr, sizeof errstr);
    rd_kafka_conf_set (conf, "group.id", group, errstr, sizeof errstr);
    rd_kafka_t *consumer = rd_kafka_new (RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
    if (!consumer) {
        printf ("error: %s\n", errstr);
        return -1;
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new (partitions);
    for (int p = 0; p < partitions; p++)
        rd_kafka_topic_partition_list_add (list, topic, p);
    rd_kafka_resp_err_t err = rd_kafka_committed (consumer, list, 10000);
    if (err)
        printf ("error: %s\n", rd_kafka_err2str (err));
    else {
        printf ("committed");
        for (int i = 0; i < list->cnt; i++)
            printf (" %d:%lld", (int) list->elems[i].partition, (long long) list->elems[i].offset);
        printf ("\n");
    }
    rd_kafka_topic_partition_list_destroy (list);
    rd_kafka_destroy (consumer);
    return err ? -1 : 0;
}

int main (int argc, char **argv)
{
    if (argc < 3 || argc % 2 == 0) {
        fprintf (stderr, "usage: kafka_mock TOPIC PARTITIONS [TOPIC PARTITIONS...]\n");
        return 2;
    }
    const char *topic = argv[1];
    int partitions = atoi (argv[2]);
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new ();
    rd_kafka_conf_set (conf, "log_level", "0", errstr, sizeof errstr);
    rd_kafka_t *owner = rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!owner) {
        fprintf (stderr, "kafka_mock: %s\n", errstr);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new (owner, s_brokers);
    for (int i = 1; mc && i + 1 < argc; i += 2)
        if (rd_kafka_mock_topic_create (mc, argv[i], atoi (argv[i + 1]), 1))
            mc = NULL;
    if (!mc) {
        fprintf (stderr, "kafka_mock: cannot make the cluster and its topics\n");
        return 1;
    }
    const char *bootstraps = rd_kafka_mock_cluster_bootstraps (mc);
    conf = rd_kafka_conf_new ();
    rd_kafka_conf_set (conf, "bootstrap.servers", bootstraps, errstr, sizeof errstr);
    rd_kafka_conf_set (conf, "log_level", "0", errstr, sizeof errstr);
    rd_kafka_conf_set (conf, "linger.ms", "5", errstr, sizeof errstr);
    rd_kafka_t *producer = rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!producer) {
        fprintf (stderr, "kafka_mock: %s\n", errstr);
        return 1;
    }
    printf ("%s\n", bootstraps);
    fflush (stdout);
    char command[4200];
    while (fgets (command, sizeof command, stdin)) {
        command[strcspn (command, "\n")] = '\0';
        char path[4096];
        long first = 0;
        int n = partitions;
        if (sscanf (command, "produce %4095s %ld %d", path, &first, &n) >= 1) {
            if (n < 1 || n > partitions)
                printf ("error: %d partitions, of %d\n", n, partitions);
            else if (s_produce (producer, topic, n, path, first) == 0)
                printf ("ok\n");
        }
        else if (sscanf (command, "committed %4095s", path) == 1) {
            if (s_committed (bootstraps, topic, partitions, path) == 0)
                printf ("ok\n");
        }
        else if (sscanf (command, "refuse %ld", &first) == 1) {
            rd_kafka_resp_err_t errors[1000];
            size_t count = first < 0 ? 0 : first > 1000 ? 1000 : (size_t) first;
            for (size_t i = 0; i < count; i++)
                errors[i] = RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED;
            //  8: the OffsetCommit request's key in the Kafka protocol
            rd_kafka_mock_push_request_errors_array (mc, 8, count, errors);
            printf ("ok\n");
        }
        else if (!strcmp (command, "down") || !strcmp (command, "up")) {
            for (int b = 1; b <= s_brokers; b++)
                if (command[0] == 'd')
                    rd_kafka_mock_broker_set_down (mc, b);
                else
                    rd_kafka_mock_broker_set_up (mc, b);
            printf ("ok\n");
        }
        else
            printf ("error: unknown command '%s'\n", command);
        fflush (stdout);
    }
    rd_kafka_destroy (producer);
    rd_kafka_mock_cluster_destroy (mc);
    rd_kafka_destroy (owner);
    return 0;
}
