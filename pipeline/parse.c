/*  pipeline/parse.c - tokenizer and parser of pipeline descriptions.  */
#include "config.h"
#include "pipeline/parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"

void weir__spec_init (weir__spec *self)
{
    self->items = NULL;
    self->count = 0;
}

void weir__spec_release (weir__spec *self)
{
    for (size_t i = 0; i < self->count; i++) {
        free (self->items[i].name);
        weir__props_release (&self->items[i].props);
    }
    free (self->items);
    weir__spec_init (self);
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
    int open;         //  an element has its name and may take properties
    long bang;        //  offset of the last '!'
    long glued;       //  that '!' stuck to a property's value and to what follows
    int after_value;  //  the last word was key=value
} s_parser;

//  The end of the text: wrong where an element is still wanted
static int s_end (const s_parser *p, weir__err *err)
{
    if (!p->open && p->spec->count == p->first && p->bang < 0)
        return weir__err_at (err, WEIR_ESYNTAX, (long) p->pos, "empty pipeline description");
    if (!p->open)
        return weir__err_at (err, WEIR_ESYNTAX, (long) p->pos, "expected an element after '!'");
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
    int rc = s_new_element (p->spec, p->word.data, at, err);
    if (rc)
        return rc;
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
    return p->open ? s_property (p, at, eq, eq_offset, err) : s_element_name (p, at, eq, err);
}

int weir__parse (const char *text, weir__spec *spec, weir__err *err)
{
    if (strlen (text) > WEIR__MAX_DESCRIPTION)
        return weir__err_at (err, WEIR_ESYNTAX, WEIR__MAX_DESCRIPTION,
                             "the description is longer than %d bytes", WEIR__MAX_DESCRIPTION);
    s_parser p = {.text = text, .spec = spec, .first = spec->count, .bang = -1, .glued = -1};
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
    weir__buf_release (&p.word);
    return rc;
}
