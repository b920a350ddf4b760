/*  pipeline/shufflebuffer.h - the builtin processor shuffle: records
    passed on in a random order, through a bounded buffer, as training
    data loaders shuffle (tf.data's shuffle(buffer_size)).

        msgpack path=train.mp passes=10 ! shuffle buffer=10k seed=7 ! softmax ...

    Each thread holds up to buffer= records; once full, each record that
    comes takes the place of one drawn at random, which goes on.  The last
    epoch of the job passes what is held on, in a random order.  The
    buffer and the random state are in every checkpoint, so a resumed job
    goes on in the same order: with one thread (and readers of one
    thread), the output of a job stopped and resumed is the output of the
    job run at once, byte for byte.  Records held at the end of a pass go
    on during the next one, and the draws go on too: every pass comes out
    in another order.  With several threads, each shuffles what it is
    given; every record goes on once, in an order that depends on the
    threads' timing.  A resume with another thread count deals the held
    records out to the new threads.  One rank only, for now: a checkpoint
    keeps rank 0's blobs, and another rank's buffer would be lost.  */
#ifndef WEIR_SHUFFLEBUFFER_H_INCLUDED
#define WEIR_SHUFFLEBUFFER_H_INCLUDED

#include <weir/plugin.h>

#include "lib/error.h"
#include "lib/props.h"

extern const weir_processor weir__processor_shuffle;

/*  Check buffer= and seed= of ELEMENT in PROPS: 0, or WEIR_EPROPERTY
    with ERR's offset at the value.  */
int weir__shufflebuffer_check (weir__props *props, const char *element, const weir_property_info *common,
                         weir__err *err);

#endif
