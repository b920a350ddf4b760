/*  bench/text_gen.c - a text classification data set with the hashing
    trick, made at run time from what Debian ships: every package apt
    knows, its section as the label, the words of its name and its short
    description as features.

        apt-cache dumpavail | text_gen [--bits B] [--test-every N] TRAIN TEST LABELS

    Writes libsvm files TRAIN and TEST (every Nth package, default 5, goes
    to TEST) and LABELS, one section a line, its label the line number
    from 0.  A word is lower-cased letters and digits; its feature index
    is 1 + FNV-1a of it modulo 2^B (default 20), its value 1/sqrt(words
    of the package), so every example has norm 1.  Indices ascend, each
    once (a word twice counts once).  Sections with fewer than 200
    packages are left out, so every class has examples to learn from.
    weir and liblinear read the very same files.  */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MIN_PER_SECTION 200

typedef struct {
    char *section;
    uint64_t *index;
    size_t n;
} s_package;

static uint64_t s_fnv (const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char) p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int s_cmp (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

//  The words of TEXT, hashed into P's indices
static void s_words (s_package *p, const char *text, unsigned bits, size_t *cap)
{
    char word[256];
    size_t w = 0;
    for (const char *c = text;; c++) {
        if (*c && isalnum ((unsigned char) *c)) {
            if (w < sizeof word)
                word[w++] = (char) tolower ((unsigned char) *c);
            continue;
        }
        if (w) {
            if (p->n == *cap) {
                *cap = *cap ? *cap * 2 : 32;
                p->index = realloc (p->index, *cap * sizeof *p->index);
                if (!p->index)
                    exit (1);
            }
            p->index[p->n++] = 1 + (s_fnv (word, w) & ((UINT64_C (1) << bits) - 1));
            w = 0;
        }
        if (!*c)
            break;
    }
}

int main (int argc, char **argv)
{
    unsigned bits = 20, every = 5;
    int a = 1;
    for (; a + 1 < argc && argv[a][0] == '-' && argv[a][1] == '-'; a += 2) {
        if (!strcmp (argv[a], "--bits"))
            bits = (unsigned) atoi (argv[a + 1]);
        else if (!strcmp (argv[a], "--test-every"))
            every = (unsigned) atoi (argv[a + 1]);
        else
            break;
    }
    if (argc - a != 3 || bits < 1 || bits > 40 || every < 2) {
        fprintf (stderr, "usage: apt-cache dumpavail | text_gen [--bits B] [--test-every N] TRAIN TEST LABELS\n");
        return 2;
    }
    s_package *pkgs = NULL;
    size_t count = 0, cap = 0, wcap = 0;
    s_package cur = {0};
    char line[65536];
    //  One stanza per package: Package, Description and Section lines
    //  matter; a blank line ends it
    for (;;) {
        char *got = fgets (line, sizeof line, stdin);
        if (!got || line[0] == '\n') {
            if (cur.section && cur.n) {
                if (count == cap) {
                    cap = cap ? cap * 2 : 4096;
                    if (!(pkgs = realloc (pkgs, cap * sizeof *pkgs)))
                        return 1;
                }
                pkgs[count++] = cur;
                wcap = 0;
            }
            else {
                free (cur.section);
                free (cur.index);
            }
            memset (&cur, 0, sizeof cur);
            if (!got)
                break;
            continue;
        }
        line[strcspn (line, "\n")] = '\0';
        if (!strncmp (line, "Package: ", 9))
            s_words (&cur, line + 9, bits, &wcap);
        else if (!strncmp (line, "Description: ", 13))
            s_words (&cur, line + 13, bits, &wcap);
        else if (!strncmp (line, "Section: ", 9)) {
            //  contrib/games and games are one section
            const char *s = strrchr (line + 9, '/');
            free (cur.section);
            cur.section = strdup (s ? s + 1 : line + 9);
        }
    }
    //  Sections, and how many packages each has
    char **names = NULL;
    size_t *sizes = NULL, nsections = 0;
    for (size_t i = 0; i < count; i++) {
        size_t k = 0;
        while (k < nsections && strcmp (names[k], pkgs[i].section))
            k++;
        if (k == nsections) {
            names = realloc (names, (nsections + 1) * sizeof *names);
            sizes = realloc (sizes, (nsections + 1) * sizeof *sizes);
            names[nsections] = pkgs[i].section;
            sizes[nsections++] = 0;
        }
        sizes[k]++;
    }
    FILE *train = fopen (argv[a], "w"), *test = fopen (argv[a + 1], "w"), *labels = fopen (argv[a + 2], "w");
    if (!train || !test || !labels) {
        perror ("text_gen");
        return 1;
    }
    long *label = malloc (nsections * sizeof *label);
    long classes = 0;
    for (size_t k = 0; k < nsections; k++) {
        label[k] = sizes[k] >= S_MIN_PER_SECTION ? classes++ : -1;
        if (label[k] >= 0)
            fprintf (labels, "%s\n", names[k]);
    }
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        size_t k = 0;
        while (strcmp (names[k], pkgs[i].section))
            k++;
        if (label[k] < 0)
            continue;
        s_package *p = &pkgs[i];
        qsort (p->index, p->n, sizeof *p->index, s_cmp);
        size_t u = 0;
        for (size_t j = 0; j < p->n; j++)
            if (!u || p->index[j] != p->index[u - 1])
                p->index[u++] = p->index[j];
        FILE *out = kept++ % every == every - 1 ? test : train;
        fprintf (out, "%ld", label[k]);
        double v = 1 / sqrt ((double) u);
        for (size_t j = 0; j < u; j++)
            fprintf (out, " %llu:%.6g", (unsigned long long) p->index[j], v);
        fputc ('\n', out);
    }
    fprintf (stderr, "text_gen: %zu packages in %ld sections of %d or more (of %zu packages, %zu sections)\n",
             kept, classes, S_MIN_PER_SECTION, count, nsections);
    return fclose (train) || fclose (test) || fclose (labels) ? 1 : 0;
}
