/*
 * ncq-fit-probe: threads that keep requests queued at the drive.  Each
 * worker reads 4 KiB O_DIRECT at random aligned LBAs of its range, one
 * request at a time, so N workers keep N requests in the drive's queue
 * (the block layer's scheduler is set to none and the NCQ depth to 32
 * beforehand).  Static glibc has no libaio; threads with pread need none.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <pthread.h>
#include <stdlib.h>

#include "probe-workers.h"

#define WORKER_BYTES 4096

static void *worker_main(void *arg)
{
    Worker *w = arg;
    void *buf = probe_buffer(WORKER_BYTES);
    uint64_t seed = w->seed | 1;

    if (!buf) {
        return NULL;
    }
    while (w->n < w->max && !atomic_load(w->stop)) {
        uint64_t lba = w->lo + probe_rand(&seed) % w->span;
        int64_t sub;

        lba &= ~7ULL;
        sub = probe_now();
        if (probe_pread(w->p, buf, lba, WORKER_BYTES) != 0) {
            w->failed = true;
            break;
        }
        w->lba[w->n] = lba;
        w->sub[w->n] = sub;
        w->done[w->n] = probe_now();
        w->n++;
        if (w->deadline && w->done[w->n - 1] > w->deadline) {
            break;
        }
    }
    free(buf);
    return NULL;
}

int workers_start(Worker *w, int n)
{
    for (int i = 0; i < n; i++) {
        w[i].lba = calloc(w[i].max, sizeof(*w[i].lba));
        w[i].sub = calloc(w[i].max, sizeof(*w[i].sub));
        w[i].done = calloc(w[i].max, sizeof(*w[i].done));
        if (!w[i].lba || !w[i].sub || !w[i].done ||
            pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Join the workers; write their samples as records of @type */
int workers_join(Worker *w, int n, const char *type, int depth)
{
    bool failed = false;

    for (int i = 0; i < n; i++) {
        pthread_join(w[i].thread, NULL);
        failed |= w[i].failed;
        for (int k = 0; k < w[i].n; k++) {
            fprintf(w[i].p->out, "{\"type\":\"%s\",\"depth\":%d,"
                    "\"thread\":%d,\"lba\":%llu,\"submit_ns\":%lld,"
                    "\"done_ns\":%lld}\n", type, depth, i,
                    (unsigned long long)w[i].lba[k], (long long)w[i].sub[k],
                    (long long)w[i].done[k]);
        }
        free(w[i].lba);
        free(w[i].sub);
        free(w[i].done);
    }
    return failed ? -1 : 0;
}
