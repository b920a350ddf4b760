/*  lib/hostaddr.h - the address at which one rank of a job reaches
    another, for the keyed links between ranks (lib/exchange.h).

    Each rank describes its host in a "card", a line of text the ranks
    share at start: the kernel's boot id, the inode of its network
    namespace, and its IPv4 addresses with their prefix lengths.  From two
    cards any rank works out, the same way, where the first reaches the
    second:
    - when NET (a.b.c.d/n, the environment's WEIR_EXCHANGE_NET) is
      given, the second's address inside it, where it listens alone;
    - else, the same boot and the same namespace: the same network
      stack, so 127.0.0.1;
    - else the second's first address on a network the first has an
      address on too (the same address masked by the same prefix), as
      Open MPI's TCP transport matches interfaces, but for an address
      both have (a containers' bridge every host makes alike, as
      172.17.0.1/16: from the first it is its own);
    - else none: an error that shows both cards and names
      WEIR_EXCHANGE_NET.
    A loopback address is matched only inside NET: 127.0.0.1 of another
    namespace or host is not the one meant.  IPv6 is not looked at.  */
#ifndef WEIR_HOSTADDR_H_INCLUDED
#define WEIR_HOSTADDR_H_INCLUDED

#include <stddef.h>

#include "lib/error.h"

/*  Room enough for a card of 32 addresses.  */
#define WEIR__HOSTADDR_CARD 1024

/*  This host's card into OUT.  0, or WEIR_ESYSTEM with ERR when the
    interfaces cannot be listed.  */
int weir__hostaddr_card (char *out, size_t size, weir__err *err);

/*  Whether cards A and B are one network stack (one boot, one
    namespace).  */
int weir__hostaddr_same (const char *a, const char *b);

/*  Where a rank of card FROM reaches one of card TO, as dotted text into
    OUT (16 bytes suffice).  NET may be NULL.  0, or WEIR_EINVAL with ERR
    (a malformed NET, or no address to use).  */
int weir__hostaddr_pick (const char *from, const char *to, const char *net, char *out, size_t size,
                         weir__err *err);

/*  Where a rank of card MINE listens: its address in NET when NET is
    given, else 127.0.0.1 when every card of the N at CARDS is one stack
    with it, else every interface (0.0.0.0).  0 or WEIR_EINVAL with ERR.  */
int weir__hostaddr_listen (const char *mine, const char *const *cards, size_t n, const char *net, char *out,
                           size_t size, weir__err *err);

#endif
