/*  lib/suggest.c - edit distances between short words.  */
#include "config.h"
#include "lib/suggest.h"

#include <string.h>

//  Words longer than this are not compared (names are short)
#define S_MAX 64

size_t weir__suggest_distance (const char *a, const char *b)
{
    size_t n = strlen (a), m = strlen (b);
    if (n >= S_MAX || m >= S_MAX)
        return (size_t) -1;
    //  Three rows of the optimal-string-alignment table
    size_t before[S_MAX + 1], prev[S_MAX + 1], row[S_MAX + 1];
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = prev[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (prev[j - 1] + cost < best)
                best = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && before[j - 2] + 1 < best)
                best = before[j - 2] + 1;
            row[j] = best;
        }
        memcpy (before, prev, sizeof prev);
        memcpy (prev, row, sizeof row);
    }
    return prev[m];
}

void weir__suggest_consider (const char *word, const char *candidate, const char **best, size_t *distance)
{
    size_t d = weir__suggest_distance (word, candidate);
    size_t len = strlen (word);
    if (d == 0 || d > 2 || 2 * d >= len)
        return;
    if (!*best || d < *distance) {
        *best = candidate;
        *distance = d;
    }
}
