/*  pipeline/budget.h - the record budget of an epoch, shared by the reader
    threads.

    A reader thread claims up to a batch of records at a time.  The epoch
    is full when the budget is spent and no thread still holds an unused
    claim, so an epoch holds exactly --epoch-records records whatever the
    threads do: a thread that runs out of input gives the rest of its claim
    back, and another may take it.  An epoch also ends at its deadline
    (--epoch-seconds), and when the job stops or fails.  */
#ifndef WEIR_BUDGET_H_INCLUDED
#define WEIR_BUDGET_H_INCLUDED

#include <pthread.h>
#include <stdint.h>

#include "pipeline/job.h"

typedef struct weir__budget {
    pthread_mutex_t lock;
    pthread_cond_t cond;   //  a claim was given back or released
    uint64_t remaining;    //  records not yet claimed this epoch
    unsigned holders;      //  threads holding an unused claim
    uint64_t deadline_ns;  //  claims end then (0: never)
    weir__job *job;
} weir__budget;

void weir__budget_init (weir__budget *self, weir__job *job);
void weir__budget_release (weir__budget *self);

/*  A new epoch of RECORDS records (0: no limit) and SECONDS (0: no limit),
    from now.  Between epochs only.  */
void weir__budget_reset (weir__budget *self, uint64_t records, double seconds);

/*  Claim up to WANT records; 0 when the epoch is full (or the job stops).
    The thread then holds a claim until it reclaims or unclaims.  */
uint64_t weir__budget_claim (weir__budget *self, uint64_t want);

/*  The same, for a thread that used up the claim it holds: it stops
    holding one in the same critical section (this runs once per batch).  */
uint64_t weir__budget_reclaim (weir__budget *self, uint64_t want);

/*  A thread out of input gives back UNUSED records of its claim.  */
void weir__budget_unclaim (weir__budget *self, uint64_t unused);

/*  The epoch's time is up at NOW.  The deadline changes only between
    epochs, while no reader runs, so it is read without the lock.  */
static inline int weir__budget_expired (const weir__budget *self, uint64_t now)
{
    return self->deadline_ns && now >= self->deadline_ns;
}

#endif
