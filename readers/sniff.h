/*  readers/sniff.h - what the first bytes of a file say it is.

    A file given to the wrong reader is read as garbage without a word:
    ASCII bytes are valid msgpack (small integers), and a gzip file splits
    into binary "lines".  The readers of files look at the first bytes of
    each file they start and say so.  */
#ifndef WEIR_SNIFF_H_INCLUDED
#define WEIR_SNIFF_H_INCLUDED

#include <stddef.h>

/*  How many first bytes are looked at.  */
#define WEIR__SNIFF_BYTES 512

/*  The compression the N bytes at P start with ("gzip", "bzip2", "xz",
    "zstd"), and in *CAT the command that writes it out decompressed; NULL
    when none.  */
const char *weir__sniff_compressed (const unsigned char *p, size_t n, const char **cat);

/*  Whether the N bytes at P look like text: no NUL, no control character
    but tab, newline, carriage return and form feed, valid UTF-8 (a
    sequence cut by the end of the N bytes allowed), and a newline among
    them unless they are the whole file (WHOLE).  */
int weir__sniff_text (const unsigned char *p, size_t n, int whole);

/*  Whether the N bytes at P look like binary data, not text: a NUL, or
    more than one in ten of them control characters (but tab, newline,
    carriage return, form feed, escape).  Bytes of no valid UTF-8
    sequence do not count: a log in Latin-1 is still text.  */
int weir__sniff_binary (const unsigned char *p, size_t n);

/*  What text that is no msgpack looks like, for the warning: "JSON Lines
    (json path=...)" or "text (lines path=...)".  */
const char *weir__sniff_text_kind (const unsigned char *p, size_t n);

#endif
