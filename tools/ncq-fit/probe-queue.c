/*
 * ncq-fit-probe: the firmware's reordering.  Random 4 KiB reads over the
 * whole disk at queue depths 1 to 32 (Yu et al.'s Table V set-up): a
 * drive that serves its queue in arrival order (FCFS) gains nothing from
 * depth and completes requests in the order they were issued; one that
 * picks by positioning time (SPTF-like) gains throughput with depth and
 * overtakes older requests.  The fit decides from both.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdbool.h>
#include <unistd.h>

#include "probe-workers.h"

static const int queue_depths[] = { 1, 4, 8, 16, 32 };
#define QUEUE_NDEPTHS (int)(sizeof(queue_depths) / sizeof(queue_depths[0]))

double probe_queue_plan(Probe *p)
{
    return 0.10 * p->minutes * 60;
}

int probe_queue(Probe *p)
{
    double budget = probe_queue_plan(p);
    Worker w[PROBE_MAX_DEPTH];
    int rc = 0;

    probe_phase_start(p, "queue", budget);
    if (probe_set_depth(p, PROBE_MAX_DEPTH) != 0) {
        probe_skipped(p, "queue", "cannot set the queue depth in sysfs");
        probe_phase_end(p);
        return -1;
    }
    for (int i = 0; i < QUEUE_NDEPTHS && rc == 0; i++) {
        int depth = queue_depths[i];
        atomic_bool stop = false;
        int64_t end = probe_now() + (int64_t)(budget / QUEUE_NDEPTHS * 1e9);

        for (int k = 0; k < depth; k++) {
            w[k] = (Worker) {
                .p = p, .lo = 0, .span = p->sectors - 8,
                .seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i * 64 + k + 1),
                .max = 4000, .deadline = end, .stop = &stop,
            };
        }
        if (workers_start(w, depth) != 0) {
            return -1;
        }
        while (probe_now() < end) {
            usleep(50000);     /* leave the CPU to the workers */
            probe_progress(p, (i + 1 - (end - probe_now()) /
                               (budget / QUEUE_NDEPTHS * 1e9)) /
                           QUEUE_NDEPTHS);
        }
        atomic_store(&stop, true);
        rc = workers_join(w, depth, "queue", depth);
    }
    if (rc != 0) {
        probe_skipped(p, "queue", "a 4 KiB O_DIRECT read failed");
    }
    probe_phase_end(p);
    return rc;
}
