/*  lib/memory.c - weir_free: what the library allocated for a caller goes
    back to the library's own allocator.  */
#include "config.h"

#include <stdlib.h>
#include <weir/weir.h>

void weir_free (void *p)
{
    free (p);
}
