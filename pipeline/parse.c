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

int weir__parse (const char *text, weir__spec *spec, weir__err *err)
{
    weir__buf word;
    weir__buf_init (&word);
    size_t pos = 0;
    int rc = 0;
    int open = 0;  //  an element has its name and may take properties
    size_t first = spec->count;
    if (strlen (text) > WEIR__MAX_DESCRIPTION)
        return weir__err_at (err, WEIR_ESYNTAX, WEIR__MAX_DESCRIPTION,
                             "the description is longer than %d bytes", WEIR__MAX_DESCRIPTION);
    long bang = -1;       //  offset of the last '!'
    long glued = -1;      //  that '!' stuck to a property's value and to what follows
    int after_value = 0;  //  the last word was key=value

    for (;;) {
        while (s_blank (text[pos]))
            pos++;
        if (!text[pos]) {
            if (!open && spec->count == first && bang < 0)
                rc = weir__err_at (err, WEIR_ESYNTAX, (long) pos, "empty pipeline description");
            else if (!open)
                rc = weir__err_at (err, WEIR_ESYNTAX, (long) pos, "expected an element after '!'");
            break;
        }
        if (text[pos] == '!') {
            if (!open) {
                rc = weir__err_at (err, WEIR_ESYNTAX, (long) pos, "expected an element before '!'");
                break;
            }
            open = 0;
            //  'path=/tmp/a!b.txt' splits there: the user may have meant
            //  the '!' as part of the value
            glued = after_value && pos > 0 && !s_blank (text[pos - 1]) && text[pos + 1]
                            && !s_blank (text[pos + 1])
                        ? (long) pos
                        : -1;
            bang = (long) pos++;
            continue;
        }
        long at = (long) pos, eq, eq_offset;
        if ((rc = s_word (text, &pos, &word, &eq, &eq_offset, err)))
            break;
        if (!open) {
            if (eq >= 0) {
                rc = weir__err_at (err, WEIR_ESYNTAX, at, "expected an element name, not the property '%s'",
                                   word.data);
                break;
            }
            if (!word.data[0]) {
                rc = weir__err_at (err, WEIR_ESYNTAX, at, "empty element name");
                break;
            }
            if ((rc = s_new_element (spec, word.data, at, err)))
                break;
            spec->items[spec->count - 1].glued = glued;
            open = 1;
            after_value = 0;
            continue;
        }
        weir__element_spec *e = &spec->items[spec->count - 1];
        if (eq < 0) {
            rc = weir__err_at (err, WEIR_ESYNTAX, at,
                               "expected key=value or '!' after element '%s', not '%s'", e->name, word.data);
            break;
        }
        if (eq == 0) {
            rc = weir__err_at (err, WEIR_ESYNTAX, at, "property without a name before '='");
            break;
        }
        word.data[eq] = '\0';
        //  Checking for a repeated key is quadratic: a description with
        //  a hundred thousand properties is refused here, not after minutes
        if (e->props.count >= WEIR__MAX_PROPERTIES) {
            rc = weir__err_at (err, WEIR_ESYNTAX, at, "'%s' has more than %d properties", e->name,
                               WEIR__MAX_PROPERTIES);
            break;
        }
        for (size_t i = 0; i < e->props.count; i++)
            if (strcmp (e->props.items[i].key, word.data) == 0) {
                rc = weir__err_at (err, WEIR_ESYNTAX, at, "property '%s' given twice to '%s'", word.data,
                                   e->name);
                goto done;
            }
        if (weir__props_add (&e->props, word.data, word.data + eq + 1, at, eq_offset)) {
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            break;
        }
        after_value = 1;
    }
done:
    weir__buf_release (&word);
    return rc;
}
