/*  pipeline/worker.h - what a runtime thread does, for each kind of stage.

    A reader thread claims records of the epoch's budget and reads shards
    into batches; a processor thread decodes batches and calls the
    processor for each record (or passes whole batches on, for identity);
    a writer thread hands batches to its writer.  All of them end an epoch
    at its barrier (pipeline/path.h) and the stream at its end.  */
#ifndef WEIR_WORKER_H_INCLUDED
#define WEIR_WORKER_H_INCLUDED

#include "pipeline/stage.h"

/*  The body of the worker's thread (for pthread_create).  */
void *weir__worker_main (void *worker);

#endif
