/*  lib/leveldb.h - LevelDB as every LevelDB of weir opens it: the
    checkpoint store, and the leveldb reader and writer.

    Paranoid checks are on: without them LevelDB drops corrupt log records
    silently and opens anyway, possibly rolled back.  Reads verify
    checksums and leave the block cache to hot data.  */
#ifndef WEIR_LEVELDB_H_INCLUDED
#define WEIR_LEVELDB_H_INCLUDED

#include <leveldb/c.h>
#include <stddef.h>

/*  Options for leveldb_open; with CREATE, a missing database is created.
    The caller destroys them.  */
leveldb_options_t *weir__leveldb_options (int create);

/*  LevelDB's error MSG (NULL allowed) in words for people, into OUT:
    "Invalid argument: db: does not exist (create_if_missing is false)"
    becomes "no LevelDB database there", a held lock "in use by another
    process", a system error its strerror text.  Other messages (corruption)
    are kept whole: their details matter.  Returns OUT.  */
const char *weir__leveldb_why (const char *msg, char *out, size_t size);

/*  Options for reads.  The caller destroys them.  */
leveldb_readoptions_t *weir__leveldb_readoptions (void);

#endif
