/*  readers/source.c - a path, or '-' for standard input.  */
#include "config.h"
#include "readers/source.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int weir__source_is_stdin (const char *path)
{
    return strcmp (path, "-") == 0;
}

int weir__source_open (const char *path)
{
    //  A duplicate, so that closing it leaves the process's stdin alone
    if (weir__source_is_stdin (path))
        return fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
    return open (path, O_RDONLY | O_CLOEXEC);
}

int weir__source_stat (const char *path, struct stat *st)
{
    return weir__source_is_stdin (path) ? fstat (STDIN_FILENO, st) : stat (path, st);
}
