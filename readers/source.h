/*  readers/source.h - a source of input as the user names it: the path
    of a file, or '-' for standard input, as Unix tools have it.

    A glob of '-' is itself, weir__source_open gives a duplicate of
    descriptor 0 (read-only, close-on-exec) and weir__source_stat its
    status.  Files, windows and following (readers/files.h, window.h,
    follow.h) all name inputs so; this file is below them and calls none
    of them.  Results are the system's: a descriptor or -1, 0 or -1, with
    errno set.  */
#ifndef WEIR_SOURCE_H_INCLUDED
#define WEIR_SOURCE_H_INCLUDED

struct stat;

/*  Does PATH name standard input?  */
int weir__source_is_stdin (const char *path);

/*  PATH opened read-only, close-on-exec.  */
int weir__source_open (const char *path);

/*  The status of PATH, without opening it.  */
int weir__source_stat (const char *path, struct stat *st);

#endif
