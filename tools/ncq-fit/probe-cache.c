/*
 * ncq-fit-probe: the drive's buffer, from hit patterns.  Read-ahead: a
 * 4 KiB read at X, an idle pause (the drive reads on), then a read K KiB
 * further: a hit costs no positioning, a miss at least a rotational wait.
 * Segments: M regions read once each, then again in the same order; the
 * drive keeps M of them while M <= its segments (LRU evicts the oldest
 * first).  Hits also give the host's and the drive's cost of a command
 * served from the buffer.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <unistd.h>

#include "probe.h"

#define CACHE_IDLE_US 60000     /* read-ahead of a few MiB ends by then */

static const int ra_kib[] = { 4, 8, 16, 32, 64, 128, 192, 256, 384, 512,
                              768, 1024, 2048 };
static const int seg_counts[] = { 1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40,
                                  48, 64 };

double probe_cache_plan(Probe *p)
{
    (void)p;
    return 2 * 13 * 0.1 + 400 * 0.08;
}

/* A fresh region, far from the ones before (no segment holds it) */
static uint64_t region(Probe *p, uint64_t *seed)
{
    return (probe_rand(seed) % (p->sectors - 8192)) & ~7ULL;
}

static int64_t timed_read(Probe *p, void *buf, uint64_t lba)
{
    int64_t t0 = probe_now();

    if (probe_pread(p, buf, lba, 4096) != 0) {
        return -1;
    }
    return probe_now() - t0;
}

static int cache_readahead(Probe *p, void *buf, uint64_t *seed)
{
    for (int rep = 0; rep < 2; rep++) {
        for (size_t i = 0; i < sizeof(ra_kib) / sizeof(ra_kib[0]); i++) {
            uint64_t x = region(p, seed);
            int64_t r;

            if (timed_read(p, buf, x) < 0) {
                return -1;
            }
            usleep(CACHE_IDLE_US);
            r = timed_read(p, buf, x + (uint64_t)ra_kib[i] * 2 - 8);
            if (r < 0) {
                return -1;
            }
            fprintf(p->out, "{\"type\":\"readahead\",\"lba\":%llu,"
                    "\"end_kib\":%d,\"r_ns\":%lld}\n",
                    (unsigned long long)x, ra_kib[i], (long long)r);
        }
        probe_progress(p, 0.1 * (rep + 1));
    }
    return 0;
}

static int cache_segments(Probe *p, void *buf, uint64_t *seed)
{
    size_t nc = sizeof(seg_counts) / sizeof(seg_counts[0]);

    for (size_t i = 0; i < nc; i++) {
        int m = seg_counts[i];
        uint64_t x[64];

        for (int k = 0; k < m; k++) {
            x[k] = region(p, seed);
            if (timed_read(p, buf, x[k]) < 0) {
                return -1;
            }
        }
        usleep(CACHE_IDLE_US);
        fprintf(p->out, "{\"type\":\"segments\",\"regions\":%d,\"r_ns\":[",
                m);
        for (int k = 0; k < m; k++) {
            int64_t r = timed_read(p, buf, x[k]);

            if (r < 0) {
                return -1;
            }
            fprintf(p->out, "%s%lld", k ? "," : "", (long long)r);
        }
        fprintf(p->out, "]}\n");
        probe_progress(p, 0.2 + 0.8 * (i + 1) / nc);
    }
    return 0;
}

int probe_cache(Probe *p)
{
    void *buf = probe_buffer(4096);
    uint64_t seed = 0xcac4eULL;
    int rc;

    probe_phase_start(p, "cache", probe_cache_plan(p));
    rc = buf ? cache_readahead(p, buf, &seed) : -1;
    if (rc == 0) {
        rc = cache_segments(p, buf, &seed);
    }
    if (rc != 0) {
        probe_skipped(p, "cache", "a 4 KiB O_DIRECT read failed");
    }
    free(buf);
    probe_phase_end(p);
    return rc;
}
