/*  lib/leveldb.c - the LevelDB options weir opens and reads with.  */
#include "config.h"
#include "lib/leveldb.h"

#include <stdio.h>
#include <string.h>

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

const char *weir__leveldb_why (const char *msg, char *out, size_t size)
{
    static const char *const errnos[] = {"No such file or directory", "Permission denied", "Not a directory",
                                         "No space left on device", "Read-only file system"};
    if (!msg)
        snprintf (out, size, "unknown error");
    else if (strstr (msg, "does not exist (create_if_missing is false)"))
        snprintf (out, size, "no LevelDB database there");
    else if (strstr (msg, "lock") && strstr (msg, "Resource temporarily unavailable"))
        snprintf (out, size, "in use by another process");
    else {
        snprintf (out, size, "%s", msg);
        for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
            if (strstr (msg, errnos[i]))
                snprintf (out, size, "%s", errnos[i]);
    }
    return out;
}
