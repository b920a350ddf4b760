/*  lib/leveldb.c - the LevelDB options weir opens and reads with.  */
#include "config.h"
#include "lib/leveldb.h"

leveldb_options_t *weir__leveldb_options (int create)
{
    leveldb_options_t *options = leveldb_options_create ();
    leveldb_options_set_create_if_missing (options, (unsigned char) (create != 0));
    leveldb_options_set_paranoid_checks (options, 1);
    return options;
}

leveldb_readoptions_t *weir__leveldb_readoptions (void)
{
    leveldb_readoptions_t *read = leveldb_readoptions_create ();
    leveldb_readoptions_set_verify_checksums (read, 1);
    leveldb_readoptions_set_fill_cache (read, 0);
    return read;
}
