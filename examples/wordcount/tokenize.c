/*  examples/wordcount/tokenize.c - splits text records into words.

        ... ! tokenize [lowercase=1] [min-length=1] ! ...

    Every str record is cut at anything that is not a letter, a digit, an
    apostrophe or a byte of a multi-byte UTF-8 character; each word is
    emitted as a str record.  Records of other types are passed on
    unchanged, since dropping what we cannot judge would lose data silently.

    Build: cc -shared -fPIC $(pkg-config --cflags weir) tokenize.c -o tokenize.so  */
#include <ctype.h>
#include <stdlib.h>
#include <weir/plugin.h>

typedef struct {
    int lowercase;
    size_t min_length;
    char *word;  //  scratch for lowercasing, per thread
    size_t cap;
} tokenize_state;

static int tokenize_open (weir_stage *st, void **state)
{
    (void) state;
    const char *lower = weir_prop (st, "lowercase", "0");
    const char *min = weir_prop (st, "min-length", "1");
    if ((lower[0] != '0' && lower[0] != '1') || lower[1])
        return weir_fail (st, "lowercase=%s: expected 0 or 1", lower);
    if (atoi (min) < 1)
        return weir_fail (st, "min-length=%s: expected a positive integer", min);
    return 0;
}

static int tokenize_thread_open (weir_stage *st, void *state, void **tstate)
{
    (void) state;
    tokenize_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->lowercase = weir_prop (st, "lowercase", "0")[0] == '1';
    self->min_length = (size_t) atoi (weir_prop (st, "min-length", "1"));
    *tstate = self;
    return 0;
}

static int s_word_byte (unsigned char c)
{
    return isalnum (c) || c == '\'' || c >= 0x80;
}

static int s_emit (weir_stage *st, tokenize_state *self, const char *p, size_t n)
{
    if (n < self->min_length)
        return 0;
    if (self->lowercase) {
        if (n > self->cap) {
            char *word = realloc (self->word, n);
            if (!word)
                return weir_fail (st, "out of memory");
            self->word = word;
            self->cap = n;
        }
        for (size_t i = 0; i < n; i++)
            self->word[i] = (char) tolower ((unsigned char) p[i]);
        p = self->word;
    }
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_str (pk, n);
    msgpack_pack_str_body (pk, p, n);
    return weir_emit_packed (st);
}

static int tokenize_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    tokenize_state *self = tstate;
    if (rec->type != MSGPACK_OBJECT_STR)
        return weir_emit (st, rec);
    const char *p = rec->via.str.ptr, *end = p + rec->via.str.size;
    while (p < end) {
        while (p < end && !s_word_byte ((unsigned char) *p))
            p++;
        const char *start = p;
        while (p < end && s_word_byte ((unsigned char) *p))
            p++;
        if (p > start && s_emit (st, self, start, (size_t) (p - start)))
            return -1;
    }
    return 0;
}

static void tokenize_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    tokenize_state *self = tstate;
    free (self->word);
    free (self);
}

//  What 'weir elements' and 'weir plugin' show of it
static const weir_property_info tokenize_props[] = {
    {"lowercase", "0", "1 folds ASCII letters to lower case"},
    {"min-length", "1", "words shorter than this many bytes are dropped"},
    {NULL, NULL, NULL},
};

static const weir_processor tokenize = {
    WEIR_PROCESSOR_INIT,
    .name = "tokenize",
    .description = "splits text records into words (lowercase=1 folds ASCII case, min-length=N)",
    .open = tokenize_open,
    .thread_open = tokenize_thread_open,
    .process = tokenize_process,
    .thread_close = tokenize_thread_close,
    .props = tokenize_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &tokenize;
}
