/*  lib/expr.c - conditions on a record: a parser to a tree of nodes, and
    an evaluator that walks it for every record.  */
#include "config.h"
#include "lib/expr.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

#include "lib/fieldpath.h"

//  Deeper nesting than this is refused: the parser and the evaluator
//  recurse, and a description is no place for a thousand parentheses
#define S_DEPTH 100

typedef enum { S_OR, S_AND, S_NOT, S_EXISTS, S_TRUTHY, S_CMP, S_MATCH } s_kind;
typedef enum { S_EQ, S_NE, S_LT, S_LE, S_GT, S_GE, S_RE } s_op;

//  A path (its steps, or none for the whole record) or a literal
typedef struct {
    int is_path;
    size_t first, count;  //  the path's steps in weir__expr.steps
    msgpack_object value;  //  the literal; a text's bytes owned by the node
} s_operand;

typedef struct {
    s_kind kind;
    s_op op;
    int a, b;  //  children (S_OR, S_AND; S_NOT uses a)
    s_operand x, y;
    pcre2_code *re;  //  S_MATCH
} s_node;

struct weir__expr {
    char *text;  //  the steps point into it
    s_node *nodes;
    size_t count, cap;
    weir__step *steps;
    size_t nsteps, steps_cap;
    int root;
    //  The whole expression is PATH == "text", the commonest filter: the
    //  switch of it alone, which skips the walk of the tree
    weir__expr_switch *equality;
};

typedef struct {
    weir__expr *e;
    const char *p;
    int depth;
    weir__err *err;
} s_parser;

static int s_fail (s_parser *ps, const char *at, const char *fmt, const char *what)
{
    weir__err_set (ps->err, WEIR_ESYNTAX, fmt, what);
    ps->err->offset = (long) (at - ps->e->text);
    return -1;
}

static void s_blanks (s_parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static int s_word_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

//  The keyword WORD at the parser's place: taken, 1; else 0
static int s_keyword (s_parser *ps, const char *word)
{
    size_t n = strlen (word);
    if (strncmp (ps->p, word, n) || s_word_char (ps->p[n]))
        return 0;
    ps->p += n;
    s_blanks (ps);
    return 1;
}

//  Room in *ITEMS (of *CAP items of SIZE bytes) for item COUNT, the
//  array doubled when full: 0, or -1 (out of memory, said)
static int s_room (s_parser *ps, void **items, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return 0;
    size_t more_cap = *cap ? *cap * 2 : 8;
    void *more = realloc (*items, more_cap * size);
    if (!more) {
        weir__err_set (ps->err, WEIR_ENOMEM, "out of memory");
        return -1;
    }
    *items = more;
    *cap = more_cap;
    return 0;
}

//  A new node, or -1 (out of memory)
static int s_node_new (s_parser *ps, s_kind kind)
{
    weir__expr *e = ps->e;
    if (s_room (ps, (void **) &e->nodes, &e->cap, e->count, sizeof *e->nodes))
        return -1;
    memset (&e->nodes[e->count], 0, sizeof e->nodes[e->count]);
    e->nodes[e->count].kind = kind;
    return (int) e->count++;
}

//  What a malformed key is told
#define S_KEY_CHARS "a key is letters, digits, '_' and '-'; quote others, as in .\"a b\""

//  The path at the parser's place into X
static int s_path (s_parser *ps, s_operand *x)
{
    weir__expr *e = ps->e;
    const char *at = ps->p;
    x->is_path = 1;
    x->first = e->nsteps;
    if (*ps->p == '.' && !weir__step_starts (ps->p)) {
        ps->p++;  //  '.': the whole record
        if (s_word_char (*ps->p) || *ps->p == '.' || *ps->p == '[')
            return s_fail (ps, at, "malformed path: %s", S_KEY_CHARS);
        s_blanks (ps);
        return 0;
    }
    while (weir__step_starts (ps->p)) {
        if (s_room (ps, (void **) &e->steps, &e->steps_cap, e->nsteps, sizeof *e->steps))
            return -1;
        const char *step = ps->p;
        if (weir__step_read (&ps->p, &e->steps[e->nsteps]))
            return s_fail (ps, step, "malformed path step: %s",
                           *step == '[' ? "an index is [N], N a number from 0" : "unterminated quoted key");
        e->nsteps++;
        x->count++;
    }
    if (*ps->p == '.' || *ps->p == '[' || s_word_char (*ps->p))
        return s_fail (ps, ps->p, "malformed path: %s", S_KEY_CHARS);
    s_blanks (ps);
    return 0;
}

//  A quoted text at the parser's place, unquoted into X (owned)
static int s_text (s_parser *ps, s_operand *x)
{
    const char *at = ps->p;
    char quote = *ps->p++;
    size_t len = 0;
    char *out = malloc (strlen (ps->p) + 1);
    if (!out) {
        weir__err_set (ps->err, WEIR_ENOMEM, "out of memory");
        return -1;
    }
    while (*ps->p && *ps->p != quote) {
        char c = *ps->p++;
        if (c == '\\' && quote == '"' && *ps->p) {
            c = *ps->p++;
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
        out[len++] = c;
    }
    if (!*ps->p) {
        free (out);
        return s_fail (ps, at, "unterminated %s quote", quote == '"' ? "double" : "single");
    }
    ps->p++;
    s_blanks (ps);
    x->value.type = MSGPACK_OBJECT_STR;
    x->value.via.str.ptr = out;
    x->value.via.str.size = (uint32_t) len;
    return 0;
}

//  A number at the parser's place into X
static int s_number (s_parser *ps, s_operand *x)
{
    const char *at = ps->p;
    char *end;
    int real = 0;
    for (const char *q = ps->p + (*ps->p == '-' || *ps->p == '+'); *q; q++)
        if (*q == '.' || *q == 'e' || *q == 'E')
            real = 1;
        else if (*q < '0' || *q > '9')
            break;
    errno = 0;
    if (real) {
        x->value.type = MSGPACK_OBJECT_FLOAT64;
        x->value.via.f64 = strtod (ps->p, &end);
    }
    else if (*ps->p == '-') {
        x->value.type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
        x->value.via.i64 = strtoll (ps->p, &end, 10);
        if (x->value.via.i64 >= 0)
            x->value.type = MSGPACK_OBJECT_POSITIVE_INTEGER;  //  -0
    }
    else {
        x->value.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        x->value.via.u64 = strtoull (ps->p + (*ps->p == '+'), &end, 10);
    }
    if (end == ps->p || errno == ERANGE || s_word_char (*end) || *end == '.')
        return s_fail (ps, at, "malformed number%s", errno == ERANGE ? " (out of range)" : "");
    ps->p = end;
    s_blanks (ps);
    return 0;
}

//  An operand: a path or a literal
static int s_operand_read (s_parser *ps, s_operand *x)
{
    char c = *ps->p;
    if (c == '.' || c == '[')
        return s_path (ps, x);
    if (c == '"' || c == '\'')
        return s_text (ps, x);
    if ((c >= '0' && c <= '9') || ((c == '-' || c == '+') && ps->p[1] >= '0' && ps->p[1] <= '9'))
        return s_number (ps, x);
    int yes = s_keyword (ps, "true");
    if (yes || s_keyword (ps, "false")) {
        x->value.type = MSGPACK_OBJECT_BOOLEAN;
        x->value.via.boolean = yes;
        return 0;
    }
    if (s_keyword (ps, "null")) {
        x->value.type = MSGPACK_OBJECT_NIL;
        return 0;
    }
    return s_fail (ps, ps->p, "expected %s", *ps->p ? "a path (.field), a number, a quoted text, true, false, null, 'not', 'exists' or '('" : "more: the expression ends too soon");
}

//  The comparison operator at the parser's place, or -1
static int s_op_read (s_parser *ps)
{
    static const struct {
        const char *text;
        s_op op;
    } ops[] = {{"==", S_EQ}, {"!=", S_NE}, {"<=", S_LE}, {">=", S_GE}, {"=~", S_RE}, {"<", S_LT}, {">", S_GT}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen (ops[i].text);
        if (strncmp (ps->p, ops[i].text, n) == 0) {
            ps->p += n;
            s_blanks (ps);
            return (int) ops[i].op;
        }
    }
    return -1;
}

//  The regular expression of the text operand Y of node N, compiled
static int s_regex (s_parser *ps, int n, const char *at)
{
    s_node *node = &ps->e->nodes[n];
    if (node->y.is_path || node->y.value.type != MSGPACK_OBJECT_STR)
        return s_fail (ps, at, "%s", "'=~' takes a quoted regular expression on its right, as in .msg =~ \"^GET \"");
    int code;
    PCRE2_SIZE where;
    node->re = pcre2_compile ((PCRE2_SPTR) node->y.value.via.str.ptr, node->y.value.via.str.size,
                              PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &where, NULL);
    if (!node->re) {
        PCRE2_UCHAR message[160];
        pcre2_get_error_message (code, message, sizeof message);
        char what[240];
        snprintf (what, sizeof what, "%s, at its byte %zu", (const char *) message, (size_t) where);
        return s_fail (ps, at, "bad regular expression: %s", what);
    }
    pcre2_jit_compile (node->re, PCRE2_JIT_COMPLETE);  //  where there is no JIT, it is interpreted
    return 0;
}

static int s_or (s_parser *ps);

//  A condition: 'exists' PATH, '(' expr ')', or operands
static int s_primary (s_parser *ps)
{
    const char *at = ps->p;
    if (s_keyword (ps, "exists")) {
        int n = s_node_new (ps, S_EXISTS);
        if (n < 0)
            return -1;
        if (*ps->p != '.' && *ps->p != '[')
            return s_fail (ps, ps->p, "%s", "'exists' takes a path, as in exists .user");
        return s_path (ps, &ps->e->nodes[n].x) ? -1 : n;
    }
    if (*ps->p == '(') {
        ps->p++;
        s_blanks (ps);
        int n = s_or (ps);
        if (n < 0)
            return -1;
        if (*ps->p != ')')
            return s_fail (ps, *ps->p ? ps->p : at, "%s", *ps->p ? "expected ')'" : "this '(' is never closed");
        ps->p++;
        s_blanks (ps);
        return n;
    }
    s_operand x = {0};
    if (s_operand_read (ps, &x))
        return -1;
    int op = s_op_read (ps);
    int n = s_node_new (ps, op < 0 ? S_TRUTHY : op == S_RE ? S_MATCH : S_CMP);
    if (n < 0) {
        if (!x.is_path && x.value.type == MSGPACK_OBJECT_STR)
            free ((char *) x.value.via.str.ptr);
        return -1;
    }
    ps->e->nodes[n].x = x;
    if (op < 0)
        return n;
    ps->e->nodes[n].op = (s_op) op;
    const char *y_at = ps->p;
    if (s_operand_read (ps, &ps->e->nodes[n].y))
        return -1;
    return op == S_RE && s_regex (ps, n, y_at) ? -1 : n;
}

static int s_not (s_parser *ps)
{
    if (++ps->depth > S_DEPTH)
        return s_fail (ps, ps->p, "the expression nests deeper than %s", "100 levels");
    int n;
    if (s_keyword (ps, "not")) {
        int a = s_not (ps);
        if (a < 0 || (n = s_node_new (ps, S_NOT)) < 0)
            return -1;
        ps->e->nodes[n].a = a;
    }
    else
        n = s_primary (ps);
    ps->depth--;
    return n;
}

static int s_and (s_parser *ps)
{
    int a = s_not (ps);
    while (a >= 0 && s_keyword (ps, "and")) {
        int b = s_not (ps), n;
        if (b < 0 || (n = s_node_new (ps, S_AND)) < 0)
            return -1;
        ps->e->nodes[n].a = a;
        ps->e->nodes[n].b = b;
        a = n;
    }
    return a;
}

static int s_or (s_parser *ps)
{
    if (++ps->depth > S_DEPTH)
        return s_fail (ps, ps->p, "the expression nests deeper than %s", "100 levels");
    int a = s_and (ps);
    while (a >= 0 && s_keyword (ps, "or")) {
        int b = s_and (ps), n;
        if (b < 0 || (n = s_node_new (ps, S_OR)) < 0)
            return -1;
        ps->e->nodes[n].a = a;
        ps->e->nodes[n].b = b;
        a = n;
    }
    ps->depth--;
    return a;
}

void weir__expr_destroy (weir__expr **self_p)
{
    weir__expr *self = *self_p;
    if (!self)
        return;
    weir__expr_switch_destroy (&self->equality);
    for (size_t i = 0; i < self->count; i++) {
        s_node *n = &self->nodes[i];
        if (n->re)
            pcre2_code_free (n->re);
        if (!n->x.is_path && n->x.value.type == MSGPACK_OBJECT_STR)
            free ((char *) n->x.value.via.str.ptr);
        if (!n->y.is_path && n->y.value.type == MSGPACK_OBJECT_STR)
            free ((char *) n->y.value.via.str.ptr);
    }
    free (self->nodes);
    free (self->steps);
    free (self->text);
    free (self);
    *self_p = NULL;
}

int weir__expr_new (const char *text, weir__expr **out, weir__err *err)
{
    *out = NULL;
    weir__expr *self = calloc (1, sizeof *self);
    if (!self || !(self->text = strdup (text))) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    s_parser ps = {.e = self, .p = self->text, .err = err};
    s_blanks (&ps);
    if (!*ps.p) {
        s_fail (&ps, ps.p, "%s", "empty expression: give a condition, as in .level == \"error\"");
        weir__expr_destroy (&self);
        return WEIR_ESYNTAX;
    }
    self->root = s_or (&ps);
    if (self->root >= 0 && *ps.p)
        s_fail (&ps, ps.p, "unexpected '%s' after a whole condition (join conditions with 'and' or 'or')",
                (char[2]){*ps.p, 0});
    if (self->root < 0 || *ps.p) {
        int rc = err->code ? err->code : WEIR_ESYNTAX;
        weir__expr_destroy (&self);
        return rc;
    }
    //  NULL when it is something else, or out of memory: the tree then
    const weir__expr *one = self;
    self->equality = weir__expr_switch_new (&one, 1);
    *out = self;
    return 0;
}

int weir__expr_scratch_init (const weir__expr *self, weir__expr_scratch *scratch)
{
    (void) self;
    scratch->mismatch = 0;
    scratch->match = pcre2_match_data_create (1, NULL);
    return scratch->match ? 0 : WEIR_ENOMEM;
}

void weir__expr_scratch_release (weir__expr_scratch *scratch)
{
    if (scratch->match)
        pcre2_match_data_free (scratch->match);
    scratch->match = NULL;
}

//  The value of operand X in REC, or NULL when it is absent
static inline const msgpack_object *s_value (const weir__expr *self, const s_operand *x, const msgpack_object *rec)
{
    if (!x->is_path)
        return &x->value;
    const msgpack_object *at = rec;
    for (size_t i = 0; i < x->count && at; i++)
        at = weir__step_take (&self->steps[x->first + i], at);
    return at;
}

//  The kinds values compare within
enum { K_NUMBER, K_TEXT, K_BOOL, K_NIL, K_OTHER };

//  The kind of each msgpack type, by its number (msgpack/object.h: NIL 0
//  to EXT 9, FLOAT32 10): a load, not a switch, in the loop of every record
static const unsigned char s_kinds[16] = {
    K_NIL, K_BOOL, K_NUMBER, K_NUMBER, K_NUMBER, K_TEXT, K_OTHER, K_OTHER,
    K_TEXT, K_OTHER, K_NUMBER, K_OTHER, K_OTHER, K_OTHER, K_OTHER, K_OTHER,
};

static inline int s_kind_of (const msgpack_object *o)
{
    return s_kinds[(unsigned) o->type & 15];
}

//  -1, 0, 1 as A is below, equal to or above B (numbers), or 2 when they
//  are unordered (NaN)
static int s_order_numbers (const msgpack_object *a, const msgpack_object *b)
{
    int ai = a->type == MSGPACK_OBJECT_POSITIVE_INTEGER || a->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
    int bi = b->type == MSGPACK_OBJECT_POSITIVE_INTEGER || b->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
    if (ai && bi) {
        int an = a->type == MSGPACK_OBJECT_NEGATIVE_INTEGER, bn = b->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
        if (an != bn)
            return an ? -1 : 1;
        if (an)
            return a->via.i64 < b->via.i64 ? -1 : a->via.i64 > b->via.i64;
        return a->via.u64 < b->via.u64 ? -1 : a->via.u64 > b->via.u64;
    }
    double x = a->type == MSGPACK_OBJECT_POSITIVE_INTEGER   ? (double) a->via.u64
               : a->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? (double) a->via.i64
                                                            : a->via.f64;
    double y = b->type == MSGPACK_OBJECT_POSITIVE_INTEGER   ? (double) b->via.u64
               : b->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? (double) b->via.i64
                                                            : b->via.f64;
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
}

static int s_order_texts (const msgpack_object *a, const msgpack_object *b)
{
    uint32_t al = a->via.str.size, bl = b->via.str.size;  //  bin's size and ptr sit where str's do
    int c = memcmp (a->via.str.ptr, b->via.str.ptr, al < bl ? al : bl);
    return c ? (c < 0 ? -1 : 1) : al < bl ? -1 : al > bl;
}

static inline int s_compare (const msgpack_object *a, const msgpack_object *b, s_op op, weir__expr_scratch *scratch)
{
    int ka = s_kind_of (a), kb = s_kind_of (b), order;
    if (ka != kb || ka == K_OTHER) {
        scratch->mismatch++;
        return 0;
    }
    if (ka == K_TEXT && (op == S_EQ || op == S_NE)) {
        //  Equality needs no order: lengths first
        int same = a->via.str.size == b->via.str.size
                   && weir__same_bytes (a->via.str.ptr, b->via.str.ptr, a->via.str.size);
        return op == S_EQ ? same : !same;
    }
    if (ka == K_NUMBER)
        order = s_order_numbers (a, b);
    else if (ka == K_TEXT)
        order = s_order_texts (a, b);
    else if (op == S_EQ || op == S_NE)
        order = ka == K_NIL || a->via.boolean == b->via.boolean ? 0 : 1;
    else {
        scratch->mismatch++;  //  true < false means nothing
        return 0;
    }
    switch (op) {
    case S_EQ: return order == 0;
    case S_NE: return order != 0;
    case S_LT: return order == -1;
    case S_LE: return order == -1 || order == 0;
    case S_GT: return order == 1;
    case S_GE: return order == 1 || order == 0;
    default: return 0;
    }
}

static int s_eval (const weir__expr *self, int i, const msgpack_object *rec, weir__expr_scratch *scratch)
{
    const s_node *n = &self->nodes[i];
    switch (n->kind) {
    case S_OR: return s_eval (self, n->a, rec, scratch) || s_eval (self, n->b, rec, scratch);
    case S_AND: return s_eval (self, n->a, rec, scratch) && s_eval (self, n->b, rec, scratch);
    case S_NOT: return !s_eval (self, n->a, rec, scratch);
    case S_EXISTS: return s_value (self, &n->x, rec) != NULL;
    case S_TRUTHY: {
        const msgpack_object *v = s_value (self, &n->x, rec);
        return v && v->type != MSGPACK_OBJECT_NIL && !(v->type == MSGPACK_OBJECT_BOOLEAN && !v->via.boolean);
    }
    case S_CMP: {
        const msgpack_object *a = s_value (self, &n->x, rec);
        if (!a)
            return 0;
        const msgpack_object *b = s_value (self, &n->y, rec);
        return b && s_compare (a, b, n->op, scratch);
    }
    case S_MATCH: {
        const msgpack_object *a = s_value (self, &n->x, rec);
        if (!a)
            return 0;
        if (s_kind_of (a) != K_TEXT) {
            scratch->mismatch++;
            return 0;
        }
        return pcre2_match (n->re, (PCRE2_SPTR) a->via.str.ptr, a->via.str.size, 0, 0, scratch->match, NULL) >= 0;
    }
    }
    return 0;
}

struct weir__expr_switch {
    const weir__step *steps;  //  the path, the first expression's
    size_t nsteps;
    const msgpack_object **texts;  //  [count]
    size_t count;
};

//  Whether expression E is PATH == "text": its path operand and its text
static int s_equality (const weir__expr *e, const s_operand **path, const msgpack_object **text)
{
    const s_node *n = &e->nodes[e->root];
    if (n->kind != S_CMP || n->op != S_EQ || n->x.is_path == n->y.is_path)
        return 0;
    const s_operand *lit = n->x.is_path ? &n->y : &n->x;
    if (lit->value.type != MSGPACK_OBJECT_STR)
        return 0;
    *path = n->x.is_path ? &n->x : &n->y;
    *text = &lit->value;
    return 1;
}

//  Whether the COUNT steps A and B are one path
static int s_same_steps (const weir__step *a, const weir__step *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (a[i].index != b[i].index || a[i].escaped != b[i].escaped
            || (a[i].index ? a[i].n != b[i].n : a[i].len != b[i].len || memcmp (a[i].key, b[i].key, a[i].len)))
            return 0;
    return 1;
}

weir__expr_switch *weir__expr_switch_new (const weir__expr *const *exprs, size_t count)
{
    const s_operand *first = NULL;
    for (size_t i = 0; i < count; i++) {
        const s_operand *path;
        const msgpack_object *text;
        if (!s_equality (exprs[i], &path, &text))
            return NULL;
        if (i && (path->count != first->count
                  || !s_same_steps (&exprs[0]->steps[first->first], &exprs[i]->steps[path->first], path->count)))
            return NULL;
        if (!i)
            first = path;
    }
    weir__expr_switch *self = count ? calloc (1, sizeof *self) : NULL;
    if (self && !(self->texts = calloc (count, sizeof *self->texts))) {
        free (self);
        return NULL;
    }
    for (size_t i = 0; self && i < count; i++) {
        const s_operand *path;
        s_equality (exprs[i], &path, &self->texts[i]);
    }
    if (self) {
        self->steps = &exprs[0]->steps[first->first];
        self->nsteps = first->count;
        self->count = count;
    }
    return self;
}

void weir__expr_switch_destroy (weir__expr_switch **self_p)
{
    weir__expr_switch *self = *self_p;
    if (!self)
        return;
    free (self->texts);
    free (self);
    *self_p = NULL;
}

//  weir__expr_switch_eval, and weir__expr_eval's for an equality: a
//  call between two exported functions of a shared library goes through
//  its PLT and is never inlined, which cost a third of a filter's time
static inline size_t s_switch_eval (const weir__expr_switch *self, const msgpack_object *rec, uint64_t *mismatch)
{
    const msgpack_object *v = rec;
    for (size_t i = 0; i < self->nsteps && v; i++)
        v = weir__step_take (&self->steps[i], v);
    //  Absent: every comparison false, none a mismatch
    if (!v)
        return self->count;
    //  Of another kind than text: every comparison a mismatch (s_compare)
    if (s_kind_of (v) != K_TEXT) {
        *mismatch += self->count;
        return self->count;
    }
    for (size_t i = 0; i < self->count; i++) {
        const msgpack_object *t = self->texts[i];
        if (t->via.str.size == v->via.str.size && weir__same_bytes (t->via.str.ptr, v->via.str.ptr, t->via.str.size))
            return i;
    }
    return self->count;
}

size_t weir__expr_switch_eval (const weir__expr_switch *self, const msgpack_object *rec, uint64_t *mismatch)
{
    return s_switch_eval (self, rec, mismatch);
}

int weir__expr_eval (const weir__expr *self, const msgpack_object *rec, weir__expr_scratch *scratch)
{
    if (self->equality)
        return s_switch_eval (self->equality, rec, &scratch->mismatch) == 0;
    return s_eval (self, self->root, rec, scratch);
}
