/*  lib/hostaddr.c - this host's card, and the address one rank reaches
    another at.  */
#include "config.h"
#include "lib/hostaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_ADDRESSES 32

//  A card read back: its stack, and its addresses in host order
typedef struct {
    char stack[80];  //  "BOOT NETNS"
    uint32_t addr[S_ADDRESSES];
    unsigned prefix[S_ADDRESSES];
    size_t n;
} s_card;

//  The kernel's boot id, or the host's name when it cannot be read: two
//  hosts never share one
static void s_boot (char *out, size_t size)
{
    FILE *f = fopen ("/proc/sys/kernel/random/boot_id", "r");
    int got = f && fgets (out, (int) size, f);
    if (f)
        fclose (f);
    if (!got && gethostname (out, size))
        snprintf (out, size, "unknown");
    out[strcspn (out, " \n")] = '\0';
}

static uint32_t s_mask (unsigned prefix)
{
    return prefix ? ~0u << (32 - prefix) : 0;
}

int weir__hostaddr_card (char *out, size_t size, weir__err *err)
{
    char boot[64];
    s_boot (boot, sizeof boot);
    struct stat ns;
    unsigned long long netns = stat ("/proc/self/ns/net", &ns) == 0 ? (unsigned long long) ns.st_ino : 0;
    int n = snprintf (out, size, "%s %llu", boot, netns);
    struct ifaddrs *list;
    if (getifaddrs (&list))
        return weir__err_set (err, WEIR_ESYSTEM, "cannot list this host's network interfaces: %s",
                              strerror (errno));
    size_t count = 0;
    for (struct ifaddrs *i = list; i && n > 0 && (size_t) n < size; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)
            || count == S_ADDRESSES)
            continue;
        uint32_t mask =
            i->ifa_netmask ? ntohl (((struct sockaddr_in *) i->ifa_netmask)->sin_addr.s_addr) : ~0u;
        unsigned prefix = 0;
        while (prefix < 32 && (mask & (1u << (31 - prefix))))
            prefix++;
        char text[INET_ADDRSTRLEN];
        inet_ntop (AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, text, sizeof text);
        n += snprintf (out + n, size - (size_t) n, " %s/%u", text, prefix);
        count++;
    }
    freeifaddrs (list);
    return 0;
}

//  A.B.C.D/P at TEXT (LEN bytes) into *ADDR and *PREFIX: 0, or -1
static int s_cidr (const char *text, size_t len, uint32_t *addr, unsigned *prefix)
{
    char copy[32];
    if (len >= sizeof copy)
        return -1;
    memcpy (copy, text, len);
    copy[len] = '\0';
    char *slash = strchr (copy, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    char *end;
    unsigned long p = strtoul (slash + 1, &end, 10);
    struct in_addr in;
    if (*end || end == slash + 1 || p > 32 || inet_pton (AF_INET, copy, &in) != 1)
        return -1;
    *addr = ntohl (in.s_addr);
    *prefix = (unsigned) p;
    return 0;
}

static int s_read (const char *card, s_card *out)
{
    memset (out, 0, sizeof *out);
    const char *p = card;
    //  The stack: the first two words
    for (int word = 0; word < 2; word++) {
        p += strspn (p, " ");
        p += strcspn (p, " ");
    }
    size_t len = (size_t) (p - card);
    if (len >= sizeof out->stack)
        return -1;
    memcpy (out->stack, card, len);
    for (;;) {
        p += strspn (p, " ");
        size_t n = strcspn (p, " ");
        if (!n)
            return 0;
        if (out->n == S_ADDRESSES || s_cidr (p, n, &out->addr[out->n], &out->prefix[out->n]))
            return -1;
        out->n++;
        p += n;
    }
}

static void s_text (uint32_t addr, char *out, size_t size)
{
    struct in_addr in = {htonl (addr)};
    inet_ntop (AF_INET, &in, out, (socklen_t) size);
}

int weir__hostaddr_same (const char *a, const char *b)
{
    s_card x, y;
    return s_read (a, &x) == 0 && s_read (b, &y) == 0 && strcmp (x.stack, y.stack) == 0;
}

//  Whether ADDR is a loopback address (127.0.0.0/8)
static int s_loopback (uint32_t addr)
{
    return addr >> 24 == 127;
}

//  Whether CARD has the address ADDR
static int s_has (const s_card *card, uint32_t addr)
{
    for (size_t i = 0; i < card->n; i++)
        if (card->addr[i] == addr)
            return 1;
    return 0;
}

//  The first address of CARD inside NET that NOT (when given) does not
//  have too, or -1
static int s_in (const s_card *card, uint32_t net, unsigned prefix, const s_card * not )
{
    for (size_t i = 0; i < card->n; i++)
        if ((card->addr[i] & s_mask (prefix)) == (net & s_mask (prefix))
            && !(not &&s_has (not, card->addr[i])))
            return (int) i;
    return -1;
}

//  NET read into *ADDR and *PREFIX, or an error naming it
static int s_net (const char *net, uint32_t *addr, unsigned *prefix, weir__err *err)
{
    if (s_cidr (net, strlen (net), addr, prefix))
        return weir__err_set (
            err, WEIR_EINVAL,
            "WEIR_EXCHANGE_NET=%s is not a network: give one as an IPv4 address and a prefix "
            "length, as in 10.1.0.0/16",
            net);
    return 0;
}

int weir__hostaddr_pick (const char *from, const char *to, const char *net, char *out, size_t size,
                         weir__err *err)
{
    s_card a, b;
    if (s_read (from, &a) || s_read (to, &b))
        return weir__err_set (err, WEIR_EINVAL, "a rank described its host as '%s', which is not a card",
                              s_read (from, &a) ? from : to);
    uint32_t addr;
    unsigned prefix;
    int found = -1;
    //  A rank told its network listens there alone (weir__hostaddr_listen),
    //  even for a rank of its own stack
    if (net) {
        if (s_net (net, &addr, &prefix, err))
            return err->code;
        found = s_in (&b, addr, prefix, NULL);
    }
    else if (strcmp (a.stack, b.stack) == 0) {
        snprintf (out, size, "127.0.0.1");
        return 0;
    }
    else
        //  Another stack's loopback is not TO's, nor an address both have
        //  (a bridge of containers' that every host makes alike, as
        //  172.17.0.1): from here it is this stack's own
        for (size_t i = 0; i < a.n && found < 0; i++)
            found = s_loopback (a.addr[i]) ? -1 : s_in (&b, a.addr[i], a.prefix[i], &a);
    if (found < 0)
        return weir__err_set (
            err, WEIR_EINVAL,
            "no address of the host '%s' is on %s of the host '%s': set WEIR_EXCHANGE_NET to "
            "the network the ranks reach each other on (as in 10.1.0.0/16)",
            to, net ? net : "a network", from);
    s_text (b.addr[found], out, size);
    return 0;
}

int weir__hostaddr_listen (const char *mine, const char *const *cards, size_t n, const char *net, char *out,
                           size_t size, weir__err *err)
{
    if (!net) {
        size_t same = 0;
        for (size_t i = 0; i < n; i++)
            same += weir__hostaddr_same (mine, cards[i]);
        snprintf (out, size, same == n ? "127.0.0.1" : "0.0.0.0");
        return 0;
    }
    s_card a;
    uint32_t addr;
    unsigned prefix;
    if (s_net (net, &addr, &prefix, err))
        return err->code;
    int found = s_read (mine, &a) ? -1 : s_in (&a, addr, prefix, NULL);
    if (found < 0)
        return weir__err_set (err, WEIR_EINVAL, "WEIR_EXCHANGE_NET=%s: this host ('%s') has no address on it",
                              net, mine);
    s_text (a.addr[found], out, size);
    return 0;
}
