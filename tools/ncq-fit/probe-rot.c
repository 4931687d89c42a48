/*
 * ncq-fit-probe: the revolution.  A sector read again with FUA as soon
 * as its last read completed comes back once per revolution: the drive
 * must wait for it to pass under the head again, and FUA keeps it from
 * answering from its buffer.  The median interval is the period; the fit
 * takes rpm from all the intervals (docs/ncq-fit.md).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>

#include "probe.h"

#define ROT_POINTS 3            /* LBAs spread over the disk */
#define ROT_GUESS_S 0.0125      /* one read, before anything is known */

static int rot_reps(Probe *p)
{
    int n = (int)(200 * p->scale);

    return n < 40 ? 40 : n;
}

double probe_rot_plan(Probe *p)
{
    return ROT_POINTS * (rot_reps(p) + 1) * ROT_GUESS_S;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

int probe_rot(Probe *p)
{
    int reps = rot_reps(p), n = 0;
    int64_t *iv = malloc(sizeof(*iv) * ROT_POINTS * reps), prev, t;

    if (!iv) {
        return -1;
    }
    probe_phase_start(p, "rpm", probe_rot_plan(p));
    for (int k = 0; k < ROT_POINTS; k++) {
        uint64_t lba = p->sectors / ROT_POINTS * k + p->sectors / 7;

        lba &= ~7ULL;
        if (probe_sg_read(p, lba, 1, true, &prev) != 0) {
            probe_skipped(p, "rpm", "FUA read (SCSI READ(16) through SG_IO) "
                          "failed");
            free(iv);
            return -1;
        }
        fprintf(p->out, "{\"type\":\"rev\",\"lba\":%llu,\"done_ns\":[%lld",
                (unsigned long long)lba, (long long)prev);
        for (int i = 0; i < reps; i++) {
            if (probe_sg_read(p, lba, 1, true, &t) != 0) {
                break;
            }
            fprintf(p->out, ",%lld", (long long)t);
            iv[n++] = t - prev;
            prev = t;
            probe_progress(p, (k * reps + i) / (double)(ROT_POINTS * reps));
        }
        fprintf(p->out, "]}\n");
    }
    qsort(iv, n, sizeof(*iv), cmp_i64);
    p->rev_ns = n ? iv[n / 2] : 0;
    free(iv);
    probe_phase_end(p);
    return p->rev_ns > 0 ? 0 : -1;
}
