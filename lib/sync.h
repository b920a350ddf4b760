/*  lib/sync.h - making names durable.

    fsync on a file makes its bytes durable, not its name: the directory
    entry that a create, a rename or a truncation changed is durable only
    once the directory itself is synced.  After a power cut, a file whose
    directory was not synced may be gone, however well its bytes were.  */
#ifndef WEIR_SYNC_H_INCLUDED
#define WEIR_SYNC_H_INCLUDED

/*  fsync the directory DIR.  0, or -1 with errno.  */
int weir__sync_dir (const char *dir);

/*  fsync the directory that holds PATH (its entry for PATH).  0, or -1
    with errno.  */
int weir__sync_parent (const char *path);

#endif
