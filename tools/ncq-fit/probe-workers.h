/*
 * ncq-fit-probe: threads that keep requests queued (probe-workers.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_FIT_PROBE_WORKERS_H
#define NCQ_FIT_PROBE_WORKERS_H

#include <pthread.h>
#include <stdatomic.h>

#include "probe.h"

typedef struct Worker {
    Probe *p;
    uint64_t lo, span;        /* LBA range of its reads */
    uint64_t seed;
    int max;                  /* at most this many reads */
    int64_t deadline;         /* stop after this instant (0: none) */
    atomic_bool *stop;        /* set by the thread that started them */
    /* out */
    int n;
    uint64_t *lba;
    int64_t *sub, *done;
    bool failed;
    pthread_t thread;
} Worker;

int workers_start(Worker *w, int n);
int workers_join(Worker *w, int n, const char *type, int depth);

#endif
