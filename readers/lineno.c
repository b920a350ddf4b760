/*  readers/lineno.c - line numbers for messages.  */
#include "config.h"
#include "readers/lineno.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weir/weir.h>

#include "readers/source.h"

//  The newlines in bytes START to END of PATH into *LINES.
static int s_count (const char *element, const char *path, uint64_t start, uint64_t end, uint64_t *lines,
                    weir__err *err)
{
    *lines = 0;
    if (end <= start)
        return 0;
    int fd = weir__source_open (path);
    if (fd < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot open '%s': %s", element, path, strerror (errno));
    const size_t size = 1u << 20;
    char *buf = malloc (size);
    if (!buf) {
        close (fd);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    int rc = 0;
    uint64_t at = start, count = 0;
    while (at < end) {
        size_t want = end - at < size ? (size_t) (end - at) : size;
        ssize_t n = pread (fd, buf, want, (off_t) at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at byte %llu: %s", element, path,
                                (unsigned long long) at, n < 0 ? strerror (errno) : "the file is shorter");
            break;
        }
        for (const char *p = buf, *stop = buf + n; (p = memchr (p, '\n', (size_t) (stop - p))); p++)
            count++;
        at += (uint64_t) n;
    }
    free (buf);
    close (fd);
    if (!rc)
        *lines = count;
    return rc;
}

int weir__lineno_count (const char *element, const char *path, uint64_t end, uint64_t *lines, weir__err *err)
{
    return s_count (element, path, 0, end, lines, err);
}

uint64_t weir__lineno_at (const char *path, weir__lineno *memo, uint64_t first, uint64_t lines)
{
    if (!path || weir__source_is_stdin (path))
        return 0;
    //  A count that went past FIRST (a resume read the shard again from
    //  an earlier offset) starts over
    if (memo->at > first)
        memo->at = memo->before = 0;
    uint64_t more;
    weir__err ignored;
    weir__err_init (&ignored);
    if (s_count ("", path, memo->at, first, &more, &ignored))
        return 0;
    memo->before += more;
    memo->at = first;
    return memo->before + lines + 1;
}
