/*  pipeline/elements.c - builtin elements and their documentation.  */
#include "config.h"
#include "pipeline/elements.h"

#include "lib/suggest.h"
#include "pipeline/aggregate.h"
#include "pipeline/filter.h"
#include "pipeline/shufflebuffer.h"
#include "pipeline/route.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define S_NAME                                                                                               \
    {                                                                                                        \
        "name", "", "names the element, so that other branches refer to it as NAME. (graphs)"                \
    }

#define S_KEY                                                                                                \
    {                                                                                                        \
        "key", "",                                                                                           \
            "partition this stage's input by the value at a path ('.user', '[0]', '.' for the whole "       \
            "record): every record of one key goes to the same thread"                                       \
    }

const weir_property_info weir__common_props[] = {
    {"threads", "1", "runtime threads of this stage"},
    {"capacity", "16", "batches in flight in the queue that feeds this stage (a full queue blocks)"},
    {"batch", "256", "records per batch this stage sends on"},
    S_NAME,
    {NULL, NULL, NULL},
};

//  A stage with an input may partition it by key; a reader has none
static const weir_property_info s_writer_common_props[] = {
    {"threads", "1", "runtime threads of this stage"},
    {"capacity", "16", "batches in flight in the queue that feeds this stage (a full queue blocks)"},
    {"batch", "256", "records per batch this stage sends on"},
    S_NAME,
    S_KEY,
    {NULL, NULL, NULL},
};

#define S_ON_ERROR                                                                                           \
    {                                                                                                        \
        "on-error", "fail",                                                                                  \
            "fail: a bad record fails the job, naming it; skip: it is counted, kept in the dead letter and " \
            "skipped"                                                                                        \
    }
#define S_LINGER                                                                                             \
    {                                                                                                        \
        "linger", "5",                                                                                       \
            "milliseconds a partial batch waits for more records when the input is idle before it is sent "  \
            "on"                                                                                             \
    }
#define S_DEAD_LETTER                                                                                        \
    {                                                                                                        \
        "dead-letter", "",                                                                                   \
            "msgpack file for the bad records skipped, each with its reason (implies on-error=skip; "        \
            "committed "                                                                                     \
            "with each epoch like an output)"                                                                \
    }

//  Readers also take passes=P: read the input P times, each pass an epoch
//  of its own at least.  The common ones come first, in the same order,
//  in each kind's table.
const weir_property_info weir__reader_common_props[] = {
    {"threads", "1", "runtime threads of this stage"},
    {"capacity", "16", "batches in flight in the queue that feeds this stage (a full queue blocks)"},
    {"batch", "256", "records per batch this stage sends on"},
    S_NAME,
    {"passes", "1", "read the input this many times; each pass ends an epoch"},
    S_LINGER,
    S_ON_ERROR,
    S_DEAD_LETTER,
    {"cache", "0",
     "with passes=N: keep up to this many bytes of the records read in memory, and give them again in "
     "the passes after the first instead of reading the input again (0: none)"},
    {NULL, NULL, NULL},
};

const weir_property_info weir__processor_common_props[] = {
    {"threads", "1", "runtime threads of this stage"},
    {"capacity", "16", "batches in flight in the queue that feeds this stage (a full queue blocks)"},
    {"batch", "256", "records per batch this stage sends on"},
    S_NAME,
    S_KEY,
    S_LINGER,
    S_ON_ERROR,
    S_DEAD_LETTER,
    {"fuse", "auto",
     "1: run in the threads of the reader that feeds it, which hand it each batch they fill (one input, "
     "the reader's threads=, no key=); 0: threads of its own; auto: fused when the two stages' threads "
     "outnumber the CPUs"},
    {NULL, NULL, NULL},
};

//  identity forwards batches untouched (see weir__element.passthrough), so
//  its process callback only runs if someone embeds it as a callback table.
static int s_identity_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    return weir_emit (st, rec);
}

static const weir_processor s_identity = {
    WEIR_PROCESSOR_INIT,
    .name = "identity",
    .description = "passes every record on unchanged (whole batches, without decoding)",
    .process = s_identity_process,
};

//  tee is identity that fans out (weir__element.fans_out): the path sends
//  each batch it forwards down every branch, the buffer shared
static const weir_processor s_tee = {
    WEIR_PROCESSOR_INIT,
    .name = "tee",
    .description = "sends every record down every branch that starts from it (NAME. in the description); "
                   "the slowest branch paces them all",
    .process = s_identity_process,
};

static const weir_property_info s_no_props[] = {{NULL, NULL, NULL}};

static const weir__element s_elements[] = {
    {"range", WEIR_ELEMENT_READER, &weir__reader_range, NULL, NULL, 0, NULL, 0, NULL},
    {"lines", WEIR_ELEMENT_READER, &weir__reader_lines, NULL, NULL, 0, NULL, 0, NULL},
    {"msgpack", WEIR_ELEMENT_READER, &weir__reader_msgpack, NULL, NULL, 0, NULL, 0, NULL},
    {"leveldb", WEIR_ELEMENT_READER, &weir__reader_leveldb, NULL, NULL, 0, NULL, 0, NULL},
    {"libsvm", WEIR_ELEMENT_READER, &weir__reader_libsvm, NULL, NULL, 0, NULL, 0, NULL},
    {"json", WEIR_ELEMENT_READER, &weir__reader_json, NULL, NULL, 0, NULL, 0, NULL},
    {"kafka", WEIR_ELEMENT_READER, &weir__reader_kafka, NULL, NULL, 0, NULL, 0, NULL},
    {"identity", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &s_identity, 1, NULL, 0, NULL},
    {"filter", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_filter, 0, weir__filter_check, 0, NULL},
    {"shuffle", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_shuffle, 0, weir__shufflebuffer_check, 0,
     NULL},
    {"tee", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &s_tee, 1, NULL, 1, NULL},
    {"route", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_route, 0, weir__route_check, 0,
     weir__route_ports},
    {"count", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_count, 0, weir__aggregate_check, 0, NULL},
    {"sum", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_sum, 0, weir__aggregate_check, 0, NULL},
    {"min", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_min, 0, weir__aggregate_check, 0, NULL},
    {"max", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_max, 0, weir__aggregate_check, 0, NULL},
    {"mean", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_mean, 0, weir__aggregate_check, 0, NULL},
    {"distinct", WEIR_ELEMENT_PROCESSOR, NULL, NULL, &weir__processor_distinct, 0, weir__aggregate_check, 0,
     NULL},
    {"null", WEIR_ELEMENT_WRITER, NULL, &weir__writer_null, NULL, 0, NULL, 0, NULL},
    {"lines", WEIR_ELEMENT_WRITER, NULL, &weir__writer_lines, NULL, 0, NULL, 0, NULL},
    {"msgpack", WEIR_ELEMENT_WRITER, NULL, &weir__writer_msgpack, NULL, 0, NULL, 0, NULL},
    {"leveldb", WEIR_ELEMENT_WRITER, NULL, &weir__writer_leveldb, NULL, 0, NULL, 0, NULL},
    {"libsvm", WEIR_ELEMENT_WRITER, NULL, &weir__writer_libsvm, NULL, 0, NULL, 0, NULL},
    {"json", WEIR_ELEMENT_WRITER, NULL, &weir__writer_json, NULL, 0, NULL, 0, NULL},
    {"postgres", WEIR_ELEMENT_WRITER, NULL, &weir__writer_postgres, NULL, 0, NULL, 0, NULL},
    {"kafka", WEIR_ELEMENT_WRITER, NULL, &weir__writer_kafka, NULL, 0, NULL, 0, NULL},
};

#define S_COUNT (sizeof s_elements / sizeof s_elements[0])

const weir__element *weir__element_find (const char *name, int kind)
{
    for (size_t i = 0; i < S_COUNT; i++)
        if ((kind < 0 || (int) s_elements[i].kind == kind) && strcmp (s_elements[i].name, name) == 0)
            return &s_elements[i];
    return NULL;
}

const char *weir__element_suggest (const char *name, int kind)
{
    const char *best = NULL;
    size_t distance = 0;
    for (size_t i = 0; i < S_COUNT; i++)
        if (kind < 0 || (int) s_elements[i].kind == kind)
            weir__suggest_consider (name, s_elements[i].name, &best, &distance);
    return best;
}

static weir_element_info s_info[S_COUNT + 1];
static char s_names[3][256];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void s_build (void)
{
    for (size_t i = 0; i < S_COUNT; i++) {
        const weir__element *e = &s_elements[i];
        weir_element_info *info = &s_info[i];
        info->name = e->name;
        info->kind = e->kind;
        if (e->reader) {
            info->description = e->reader->description;
            info->props = e->reader->props;
        }
        else if (e->writer) {
            info->description = e->writer->description;
            info->props = e->writer->props;
        }
        else {
            info->description = e->processor->description;
            info->props = e->processor->props ? e->processor->props : s_no_props;
        }
        char *names = s_names[e->kind];
        size_t used = strlen (names);
        snprintf (names + used, sizeof s_names[0] - used, "%s%s", used ? ", " : "", e->name);
    }
}

const weir_element_info *weir_elements (void)
{
    pthread_once (&s_once, s_build);
    return s_info;
}

const weir_property_info *weir_common_properties (void)
{
    return weir__common_props;
}

const weir_property_info *weir_kind_properties (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER      ? weir__reader_common_props
           : kind == WEIR_ELEMENT_PROCESSOR ? weir__processor_common_props
                                            : s_writer_common_props;
}

const char *weir__element_names (weir_element_kind kind)
{
    pthread_once (&s_once, s_build);
    return s_names[kind];
}
