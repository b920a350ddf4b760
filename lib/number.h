/*  lib/number.h - integers as people write them: decimal, with an
    optional k, M or G suffix (thousand, million, billion), as in
    count=10M or --epoch-records 100k.  Shared by properties and the
    command's options.  */
#ifndef WEIR_NUMBER_H_INCLUDED
#define WEIR_NUMBER_H_INCLUDED

#include <stdint.h>

/*  Parse TEXT (the number alone, no blanks); 0 and *OUT, or -1.  */
int weir__parse_int (const char *text, int64_t *out);

#endif
