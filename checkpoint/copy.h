/*  checkpoint/copy.h - a private copy of a checkpoint store's directory,
    to read it without taking its lock or changing anything of it.

    LevelDB has no read-only open: opening a store rewrites it (and fails
    while a job holds it), so inspecting one opens a copy instead.  Its
    tables, which LevelDB never changes, are hard links where the file
    system allows, but only those older than the job's manifest: the
    copy's LevelDB writes tables of its own, under numbers the job may
    have used since, and a shared one would be emptied.  The rest is
    copied.  The copy lives under $TMPDIR (or
    /tmp) and is the caller's until weir__copy_destroy removes it.  */
#ifndef WEIR_COPY_H_INCLUDED
#define WEIR_COPY_H_INCLUDED

#include "lib/error.h"

/*  Copy the store in DIR, without its lock, its logs and weir's own files
    beside it.  The path of the copy, malloc'ed, or NULL with ERR
    (WEIR_ENOMEM, WEIR_EIO naming DIR).  A job writing meanwhile may leave
    a copy whose manifest and tables disagree: opening it then fails, and
    the caller tries again with a new copy.  */
char *weir__copy_new (const char *dir, weir__err *err);

/*  Remove the copy *COPY_P and everything in it, free the path and set
 *COPY_P to NULL.  Nothing on NULL.  */
void weir__copy_destroy (char **copy_p);

#endif
