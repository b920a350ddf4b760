/*  pipeline/parse.c - tokenizer and parser of pipeline descriptions.  */
#include "config.h"
#include "pipeline/parse.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"

void weir__spec_init (weir__spec *self)
{
    self->items = NULL;
    self->count = 0;
    self->links = NULL;
    self->nlinks = 0;
    self->starts_with_element = 0;
    self->last = SIZE_MAX;
}

static void s_end_release (weir__spec_end *end)
{
    free (end->ref);
    free (end->port);
    end->ref = end->port = NULL;
}

void weir__spec_release (weir__spec *self)
{
    for (size_t i = 0; i < self->count; i++) {
        free (self->items[i].name);
        weir__props_release (&self->items[i].props);
    }
    for (size_t i = 0; i < self->nlinks; i++) {
        s_end_release (&self->links[i].from);
        s_end_release (&self->links[i].to);
    }
    free (self->items);
    free (self->links);
    weir__spec_init (self);
}

static int s_name_char (char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
           || (!first && ((c >= '0' && c <= '9') || c == '-'));
}

//  The length of the name at S (0: none)
static size_t s_name_len (const char *s)
{
    size_t n = 0;
    while (s_name_char (s[n], n == 0))
        n++;
    return n;
}

int weir__parse_is_name (const char *name)
{
    size_t n = s_name_len (name);
    return n > 0 && name[n] == '\0';
}

int weir__parse_is_ref (const char *word)
{
    size_t n = s_name_len (word);
    if (n == 0 || word[n] != '.')
        return 0;
    const char *port = word + n + 1;
    size_t m = s_name_len (port);
    return port[m] == '\0' && strcmp (port, "so") != 0;
}

static int s_blank (char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

//  One word at TEXT[*POS], unquoted into OUT (NUL-terminated).  *EQ is the
//  index in OUT of the first '=' outside quotes, or -1; *EQ_OFFSET the byte
//  offset in TEXT just after it.
static int s_word (const char *text, size_t *pos, weir__buf *out, long *eq, long *eq_offset, weir__err *err)
{
    size_t i = *pos;
    out->len = 0;
    *eq = -1;
    *eq_offset = -1;
    while (text[i] && !s_blank (text[i]) && text[i] != '!') {
        char c = text[i];
        if (c == '\'' || c == '"') {
            size_t open = i++;
            while (text[i] && text[i] != c) {
                if (c == '"' && text[i] == '\\' && (text[i + 1] == '"' || text[i + 1] == '\\'))
                    i++;
                if (weir__buf_putc (out, text[i++]))
                    return weir__err_set (err, WEIR_ENOMEM, "out of memory");
            }
            if (!text[i])
                return weir__err_at (err, WEIR_ESYNTAX, (long) open, "unterminated %s quote",
                                     c == '"' ? "double" : "single");
            i++;
            continue;
        }
        if (c == '=' && *eq < 0) {
            *eq = (long) out->len;
            *eq_offset = (long) i + 1;
        }
        if (weir__buf_putc (out, c))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        i++;
    }
    if (weir__buf_putc (out, '\0'))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    *pos = i;
    return 0;
}

static int s_new_element (weir__spec *spec, const char *name, long offset, weir__err *err)
{
    weir__element_spec *items = realloc (spec->items, (spec->count + 1) * sizeof *items);
    if (!items)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    spec->items = items;
    weir__element_spec *e = &items[spec->count];
    if (!(e->name = strdup (name)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    e->name_offset = offset;
    e->glued = -1;
    e->follows = SIZE_MAX;
    weir__props_init (&e->props);
    spec->count++;
    return 0;
}

//  Where the parser is in a description, and what it has seen
typedef struct {
    const char *text;
    size_t pos;
    weir__spec *spec;
    size_t first;     //  the elements SPEC had before this description
    weir__buf word;   //  the word just read
    int open;         //  0: nothing to link from; 1: an element has its name
                      //  and may take properties; 2: a reference was placed
    int pending;      //  a '!' waits for what it links to
    int placed;       //  items placed from this text
    weir__spec_end prev;  //  the item before, when open (a reference's names borrowed)
    long lone;        //  a reference that starts a branch and is not yet followed by '!', or -1
    long bang;        //  offset of the last '!'
    long glued;       //  that '!' stuck to a property's value and to what follows
    int after_value;  //  the last word was key=value
} s_parser;

//  A reference that starts a branch and goes nowhere
static int s_lone (const s_parser *p, weir__err *err)
{
    const char *ref = p->text + p->lone;
    int n = 0;
    while (ref[n] && !s_blank (ref[n]) && ref[n] != '!')
        n++;
    return weir__err_at (err, WEIR_ESYNTAX, p->lone,
                         "the branch that '%.*s' starts goes nowhere: follow it with '!' and an element",
                         n, ref);
}

//  The end of the text: wrong where an element is still wanted
static int s_end (const s_parser *p, weir__err *err)
{
    if (!p->open && p->spec->count == p->first && p->bang < 0)
        return weir__err_at (err, WEIR_ESYNTAX, (long) p->pos, "empty pipeline description");
    if (!p->open)
        return weir__err_at (err, WEIR_ESYNTAX, (long) p->pos, "expected an element after '!'");
    if (p->lone >= 0)
        return s_lone (p, err);
    return 0;
}

static int s_copy_end (weir__spec_end *to, const weir__spec_end *from)
{
    *to = *from;
    to->ref = to->port = NULL;
    if ((from->ref && !(to->ref = strdup (from->ref))) || (from->port && !(to->port = strdup (from->port)))) {
        s_end_release (to);
        return -1;
    }
    return 0;
}

//  Item END was placed: linked from the one before when a '!' was
//  pending, else the start of a branch.  END's names are copied.
static int s_place (s_parser *p, const weir__spec_end *end, weir__err *err)
{
    if (p->placed++ == 0)
        p->spec->starts_with_element = end->ref == NULL;
    p->spec->last = end->ref ? SIZE_MAX : end->element;
    if (p->pending) {
        weir__spec *spec = p->spec;
        weir__spec_link *links = realloc (spec->links, (spec->nlinks + 1) * sizeof *links);
        if (!links)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        spec->links = links;
        weir__spec_link *link = &links[spec->nlinks];
        memset (link, 0, sizeof *link);
        if (s_copy_end (&link->from, &p->prev) || s_copy_end (&link->to, end)) {
            s_end_release (&link->from);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
        link->bang = p->bang;
        spec->nlinks++;
    }
    p->pending = 0;
    return 0;
}

//  The word just read, at offset AT, is a reference NAME. or NAME.PORT
static int s_reference (s_parser *p, long at, weir__err *err)
{
    if (p->lone >= 0 && !p->pending)
        return s_lone (p, err);
    char *word = p->word.data;
    //  'path=/tmp/a!b.txt': the '!' was meant as part of the value
    if (p->pending && p->glued >= 0)
        return weir__err_at (err, WEIR_ESYNTAX, p->glued,
                             "expected an element after '!', not '%s'; '!' separates elements: if it is part "
                             "of a value, quote the value, as in path='/tmp/a!b.txt'",
                             word);
    char *dot = strchr (word, '.');
    weir__spec_end end = {SIZE_MAX, word, dot[1] ? dot + 1 : NULL, at};
    *dot = '\0';
    //  Not after '!': it starts a branch from that element's output
    p->lone = p->pending ? -1 : at;
    int rc = s_place (p, &end, err);
    if (rc)
        return rc;
    s_end_release (&p->prev);
    if (s_copy_end (&p->prev, &end))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    p->open = 2;
    p->after_value = 0;
    return 0;
}

//  The '!' at the parser's place, which ends an element
static int s_bang (s_parser *p, weir__err *err)
{
    const char *text = p->text;
    size_t pos = p->pos;
    if (!p->open)
        return weir__err_at (err, WEIR_ESYNTAX, (long) pos, "expected an element before '!'");
    p->open = 0;
    p->pending = 1;
    p->lone = -1;
    //  'path=/tmp/a!b.txt' splits there: the user may have meant the '!'
    //  as part of the value
    p->glued =
        p->after_value && pos > 0 && !s_blank (text[pos - 1]) && text[pos + 1] && !s_blank (text[pos + 1])
            ? (long) pos
            : -1;
    p->bang = (long) p->pos++;
    return 0;
}

//  The word just read, at offset AT, as the name of a new element; EQ is
//  where its first '=' is, or -1
static int s_element_name (s_parser *p, long at, long eq, weir__err *err)
{
    if (eq >= 0)
        return weir__err_at (err, WEIR_ESYNTAX, at, "expected an element name, not the property '%s'",
                             p->word.data);
    if (!p->word.data[0])
        return weir__err_at (err, WEIR_ESYNTAX, at, "empty element name");
    if (p->lone >= 0)
        return s_lone (p, err);
    int rc = s_new_element (p->spec, p->word.data, at, err);
    weir__spec_end end = {p->spec->count - 1, NULL, NULL, -1};
    if (rc || (rc = s_place (p, &end, err)))
        return rc;
    s_end_release (&p->prev);
    p->prev = end;
    p->spec->items[p->spec->count - 1].glued = p->glued;
    p->open = 1;
    p->after_value = 0;
    return 0;
}

//  The word just read, at offset AT, as a property key=value of the open
//  element; EQ is where its '=' is in the word (-1: none), EQ_OFFSET the
//  offset of the value in the text
static int s_property (s_parser *p, long at, long eq, long eq_offset, weir__err *err)
{
    weir__element_spec *e = &p->spec->items[p->spec->count - 1];
    char *word = p->word.data;
    const char *text = p->text;
    if (eq < 0 && e->props.count == 0 && (text[at] == '\'' || text[at] == '"')) {
        //  A quoted word right after the element's name is its expression,
        //  as in filter '.level == "error"': the property expr
        if (weir__props_add (&e->props, "expr", word, at, at))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        e->props.items[0].quoted = 1;
        p->after_value = 1;
        return 0;
    }
    //  A bare word starts a new chain, as in gst-launch's 'a ! b  c ! d'
    //  (the builder says what else it may have been: a key without its
    //  value); a quoted one is no element's name
    if (eq < 0 && text[at] != '\'' && text[at] != '"') {
        size_t before = p->spec->count - 1;
        p->open = 0;
        int rc = s_element_name (p, at, eq, err);
        if (!rc)
            p->spec->items[p->spec->count - 1].follows = before;
        return rc;
    }
    if (eq < 0)
        return weir__err_at (err, WEIR_ESYNTAX, at, "expected key=value or '!' after element '%s', not '%s'",
                             e->name, word);
    if (eq == 0)
        return weir__err_at (err, WEIR_ESYNTAX, at, "property without a name before '='");
    word[eq] = '\0';
    //  Checking for a repeated key is quadratic: a description with a
    //  hundred thousand properties is refused here, not after minutes
    if (e->props.count >= WEIR__MAX_PROPERTIES)
        return weir__err_at (err, WEIR_ESYNTAX, at, "'%s' has more than %d properties", e->name,
                             WEIR__MAX_PROPERTIES);
    for (size_t i = 0; i < e->props.count; i++)
        if (strcmp (e->props.items[i].key, word) == 0)
            return weir__err_at (err, WEIR_ESYNTAX, at, "property '%s' given twice to '%s'", word, e->name);
    if (weir__props_add (&e->props, word, word + eq + 1, at, eq_offset))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    e->props.items[e->props.count - 1].quoted = text[eq_offset] == '\'' || text[eq_offset] == '"';
    p->after_value = 1;
    return 0;
}

//  The word at the parser's place: an element's name, or a property of
//  the open element
static int s_next_word (s_parser *p, weir__err *err)
{
    long at = (long) p->pos, eq, eq_offset;
    int rc = s_word (p->text, &p->pos, &p->word, &eq, &eq_offset, err);
    if (rc)
        return rc;
    //  Quoted, a word is never a reference: its length says so
    if (p->word.len - 1 == p->pos - (size_t) at && weir__parse_is_ref (p->word.data))
        return s_reference (p, at, err);
    return p->open == 1 ? s_property (p, at, eq, eq_offset, err) : s_element_name (p, at, eq, err);
}

int weir__parse (const char *text, weir__spec *spec, weir__err *err)
{
    if (strlen (text) > WEIR__MAX_DESCRIPTION)
        return weir__err_at (err, WEIR_ESYNTAX, WEIR__MAX_DESCRIPTION,
                             "the description is longer than %d bytes", WEIR__MAX_DESCRIPTION);
    s_parser p = {.text = text, .spec = spec, .first = spec->count, .lone = -1, .bang = -1, .glued = -1};
    weir__buf_init (&p.word);
    int rc;
    for (;;) {
        while (s_blank (text[p.pos]))
            p.pos++;
        if (!text[p.pos]) {
            rc = s_end (&p, err);
            break;
        }
        rc = text[p.pos] == '!' ? s_bang (&p, err) : s_next_word (&p, err);
        if (rc)
            break;
    }
    s_end_release (&p.prev);
    weir__buf_release (&p.word);
    return rc;
}
