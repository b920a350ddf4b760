/*  tests/mkmsgpack.c - writes the msgpack fixtures the shell tests need,
    good and hostile, so that no binary file has to live in the repo.

        mkmsgpack ints N FILE        the integers 0..N-1
        mkmsgpack pairs N FILE       ["key000000", "value 0"] ... ["key<N-1>", "value <N-1>"]
        mkmsgpack mixed FILE         one record of every kind
        mkmsgpack deep D FILE        [[[...[1]...]]] nested D deep
        mkmsgpack bomb FILE          an array32 declaring 2^32-1 elements, then 3 bytes
        mkmsgpack truncated FILE     two records and half of a third
        mkmsgpack badbyte FILE       two records, then 0xc1
        mkmsgpack features FILE      [label, features] records, features of each form
        mkmsgpack pixels N FILE      N [label, 784-byte bin] records, like MNIST's
        mkmsgpack svmbad K FILE      a good [label, features] record, then bad one number K
        mkmsgpack jsonmap FILE       one record per rule of the JSON mapping (lib/jsontext.h)  */
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int s_save (const char *path, const msgpack_sbuffer *buf)
{
    FILE *f = fopen (path, "wb");
    if (!f || fwrite (buf->data, 1, buf->size, f) != buf->size || fclose (f)) {
        perror (path);
        return 1;
    }
    return 0;
}

int main (int argc, char **argv)
{
    if (argc < 3) {
        fprintf (stderr, "usage: mkmsgpack ints N FILE | mixed FILE | deep D FILE | bomb FILE | "
                         "truncated FILE | badbyte FILE\n");
        return 2;
    }
    const char *kind = argv[1], *path = argv[argc - 1];
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);

    if (strcmp (kind, "ints") == 0 && argc == 4) {
        long long n = atoll (argv[2]);
        for (long long i = 0; i < n; i++)
            msgpack_pack_int64 (&pk, i);
    }
    else if (strcmp (kind, "pairs") == 0 && argc == 4) {
        //  ["key000000", "value 0"], ... : records for the leveldb writer
        long long n = atoll (argv[2]);
        for (long long i = 0; i < n; i++) {
            char k[32], v[32];
            int kn = snprintf (k, sizeof k, "key%06lld", i), vn = snprintf (v, sizeof v, "value %lld", i);
            msgpack_pack_array (&pk, 2);
            msgpack_pack_str_with_body (&pk, k, (size_t) kn);
            msgpack_pack_str_with_body (&pk, v, (size_t) vn);
        }
    }
    else if (strcmp (kind, "mixed") == 0) {
        msgpack_pack_nil (&pk);
        msgpack_pack_true (&pk);
        msgpack_pack_false (&pk);
        msgpack_pack_int64 (&pk, -42);
        msgpack_pack_int64 (&pk, INT64_MIN);
        msgpack_pack_uint64 (&pk, 18446744073709551615ull);
        msgpack_pack_double (&pk, 0.5);
        msgpack_pack_str_with_body (&pk, "plain text", 10);
        msgpack_pack_str_with_body (&pk, "tab\tquote\"", 10);
        msgpack_pack_bin_with_body (&pk, "raw", 3);
        msgpack_pack_array (&pk, 3);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_str_with_body (&pk, "two", 3);
        msgpack_pack_nil (&pk);
        msgpack_pack_map (&pk, 2);
        msgpack_pack_str_with_body (&pk, "k", 1);
        msgpack_pack_int (&pk, 7);
        msgpack_pack_int (&pk, 8);
        msgpack_pack_array (&pk, 0);
        msgpack_pack_ext_with_body (&pk, "\x01\x02", 2, 5);
    }
    else if (strcmp (kind, "jsonmap") == 0) {
        //  bin: base64
        msgpack_pack_bin_with_body (&pk, "\x00\x01\xfe\xff", 4);
        //  ext: {"ext":TYPE,"base64":DATA}
        msgpack_pack_ext_with_body (&pk, "\x01\x02", 2, 5);
        //  integer keys, and nil, boolean and float keys: their text
        msgpack_pack_map (&pk, 2);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_str_with_body (&pk, "a", 1);
        msgpack_pack_int (&pk, -2);
        msgpack_pack_str_with_body (&pk, "b", 1);
        msgpack_pack_map (&pk, 3);
        msgpack_pack_nil (&pk);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_true (&pk);
        msgpack_pack_int (&pk, 2);
        msgpack_pack_double (&pk, 1.5);
        msgpack_pack_int (&pk, 3);
        //  a container key: its JSON text
        msgpack_pack_map (&pk, 1);
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_str_with_body (&pk, "b", 1);
        msgpack_pack_nil (&pk);
        //  a bin key: its base64
        msgpack_pack_map (&pk, 1);
        msgpack_pack_bin_with_body (&pk, "\x00", 1);
        msgpack_pack_int (&pk, 1);
        //  NaN and the infinities: null
        msgpack_pack_array (&pk, 3);
        msgpack_pack_double (&pk, 0.0 / 0.0);
        msgpack_pack_double (&pk, 1.0 / 0.0);
        msgpack_pack_float (&pk, -1.0f / 0.0f);
        //  floats stay floats; a float32 is its value as a double
        msgpack_pack_array (&pk, 4);
        msgpack_pack_float (&pk, 0.5f);
        msgpack_pack_double (&pk, 2.0);
        msgpack_pack_double (&pk, -0.0);
        msgpack_pack_float (&pk, 0.1f);
        //  invalid UTF-8: U+FFFD
        msgpack_pack_array (&pk, 1);
        msgpack_pack_str_with_body (&pk,
                                    "a\xff"
                                    "b\xc3",
                                    4);
        //  controls escaped
        msgpack_pack_array (&pk, 1);
        msgpack_pack_str_with_body (&pk, "\x01\n\x7f\"\\", 5);
        //  the integer range
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int64 (&pk, INT64_MIN);
        msgpack_pack_uint64 (&pk, UINT64_MAX);
    }
    else if (strcmp (kind, "deep") == 0 && argc == 4) {
        int depth = atoi (argv[2]);
        for (int i = 0; i < depth; i++)
            msgpack_pack_array (&pk, 1);
        msgpack_pack_int (&pk, 1);
    }
    else if (strcmp (kind, "nils") == 0 && argc == 4) {
        //  One record: an array of N nils, a byte each
        long long n = atoll (argv[2]);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_array (&pk, (size_t) n);
        for (long long i = 0; i < n; i++)
            msgpack_pack_nil (&pk);
    }
    else if (strcmp (kind, "bomb") == 0) {
        msgpack_pack_int (&pk, 1);
        msgpack_sbuffer_write (&buf, "\xdd\xff\xff\xff\xff\x01\x02\x03", 8);
    }
    else if (strcmp (kind, "truncated") == 0) {
        msgpack_pack_int (&pk, 1);
        msgpack_pack_int (&pk, 2);
        msgpack_pack_str (&pk, 20);
        msgpack_pack_str_body (&pk, "only ten b", 10);
    }
    else if (strcmp (kind, "badbyte") == 0) {
        msgpack_pack_int (&pk, 1);
        msgpack_pack_int (&pk, 2);
        msgpack_sbuffer_write (&buf, "\xc1", 1);
    }
    else if (strcmp (kind, "features") == 0) {
        //  A bin: dense bytes
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_bin_with_body (&pk, "\x00\x05\x00\xff\x80", 5);
        //  An array of numbers: dense
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, -1);
        msgpack_pack_array (&pk, 5);
        msgpack_pack_int (&pk, 0);
        msgpack_pack_double (&pk, 0.5);
        msgpack_pack_float (&pk, 0.1f);
        msgpack_pack_int (&pk, 0);
        msgpack_pack_int (&pk, -3);
        //  A map, not in index order
        msgpack_pack_array (&pk, 2);
        msgpack_pack_double (&pk, 2.5);
        msgpack_pack_map (&pk, 3);
        msgpack_pack_int (&pk, 10);
        msgpack_pack_double (&pk, 1e-5);
        msgpack_pack_int (&pk, 2);
        msgpack_pack_double (&pk, 0.1 + 0.2);
        msgpack_pack_int (&pk, 7);
        msgpack_pack_int (&pk, 0);
        //  No features
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, 3);
        msgpack_pack_map (&pk, 0);
    }
    else if (strcmp (kind, "pixels") == 0 && argc == 4) {
        //  Ten blurry classes: class c lights pixels around a band of its own
        long long n = atoll (argv[2]);
        uint64_t seed = 42;
        unsigned char image[784];
        for (long long i = 0; i < n; i++) {
            int label = (int) (i % 10);
            for (int p = 0; p < 784; p++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                int row = p / 28, near = abs (row - 4 - 2 * label) < 3;
                unsigned r = (unsigned) (seed >> 56);
                image[p] = (unsigned char) (near ? (r > 64 ? r : 0) : (r > 230 ? r : 0));
            }
            msgpack_pack_array (&pk, 2);
            msgpack_pack_int (&pk, label);
            msgpack_pack_bin_with_body (&pk, image, sizeof image);
        }
    }
    else if (strcmp (kind, "svmbad") == 0 && argc == 4) {
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, 1);
        msgpack_pack_bin_with_body (&pk, "\x01", 1);
        switch (atoi (argv[2])) {
        case 0: msgpack_pack_str_with_body (&pk, "text", 4); break;
        case 1:
            msgpack_pack_array (&pk, 2);
            msgpack_pack_str_with_body (&pk, "cat", 3);
            msgpack_pack_array (&pk, 0);
            break;
        case 2:
            msgpack_pack_array (&pk, 2);
            msgpack_pack_int (&pk, 1);
            msgpack_pack_nil (&pk);
            break;
        case 3:
            msgpack_pack_array (&pk, 2);
            msgpack_pack_int (&pk, 1);
            msgpack_pack_map (&pk, 1);
            msgpack_pack_int (&pk, 0);
            msgpack_pack_int (&pk, 1);
            break;
        default:
            msgpack_pack_array (&pk, 2);
            msgpack_pack_int (&pk, 1);
            msgpack_pack_array (&pk, 2);
            msgpack_pack_int (&pk, 1);
            msgpack_pack_true (&pk);
        }
    }
    else {
        fprintf (stderr, "mkmsgpack: unknown fixture '%s'\n", kind);
        return 2;
    }
    int rc = s_save (path, &buf);
    msgpack_sbuffer_destroy (&buf);
    return rc;
}
