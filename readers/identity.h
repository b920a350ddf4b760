/*  readers/identity.h - which file a followed shard's offset is in.

    A path may name another file after a rotation, and an inode may be
    reused by another file, so a file is known by its device, its inode
    and a hash of its first bytes.  Each shard of a followed reader carries
    one (readers/shards.h), checkpointed with its offset; the windows of
    readers/window.c check it as they read, and a resume looks for a file
    rotated while weir was not running.  */
#ifndef WEIR_IDENTITY_H_INCLUDED
#define WEIR_IDENTITY_H_INCLUDED

#include <stdint.h>
#include <sys/stat.h>

/*  How many of a file's first bytes its identity hashes (fewer while
    the file is younger).  */
#define WEIR__FINGERPRINT 64

typedef struct weir__identity {
    int known;
    uint64_t dev, ino;
    uint32_t fp_len;   //  bytes fingerprinted (up to WEIR__FINGERPRINT)
    uint64_t fp_hash;  //  of the first fp_len bytes
    //  A file a batch reader planned (not followed): its size then,
    //  and a hash of the WEIR__FINGERPRINT bytes before it (fewer in a
    //  smaller file).  A resume reads what was appended past that end,
    //  once these bytes show the file was only appended to
    int has_end;
    uint64_t end;
    uint64_t end_hash;
} weir__identity;

/*  The identity of the file open at FD, whose status is ST.  */
void weir__identity_of (int fd, const struct stat *st, weir__identity *id);

/*  Is the file open at FD, whose status is ST, the one of ID?  */
int weir__identity_is (int fd, const struct stat *st, const weir__identity *id);

/*  Note in ID that the shards of the file open at FD were planned up to
    END, its size then.  */
void weir__identity_end (int fd, uint64_t end, weir__identity *id);

/*  Does the file open at FD still hold, before ID's end, the bytes it
    held when its shards were planned?  1 when it does (or ID has no end),
    0 when they differ or cannot be read.  */
int weir__identity_ends_as (int fd, const weir__identity *id);

/*  A file of the folder of PATH other than PATH whose identity is ID,
    opened read-only, or -1: where a rotation while weir was not running
    put the file a checkpoint was in.  */
int weir__identity_find (const char *path, const weir__identity *id);

#endif
