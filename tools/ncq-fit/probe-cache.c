/*
 * ncq-fit-probe: the drive's buffer, from hit patterns.  Read-ahead: a
 * 4 KiB read at X, an idle pause (the drive reads on), then a read K KiB
 * further: a hit costs no positioning, a miss at least a rotational wait.
 * Segments: M regions read once each, then again in the same order; the
 * drive keeps M of them while M <= its segments (LRU evicts the oldest
 * first).  Hits also give the host's and the drive's cost of a command
 * served from the buffer.  Link: a 64 KiB miss fills a segment, then hits
 * of 4 and 64 KiB from it, alternately: the difference is the link's time
 * for 60 KiB (a drive whose own interface is slower than SATA's shows it);
 * the same with 16 KiB for segments that cannot hold 64 KiB.
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

#define LINK_REPS       12
#define LINK_SMALL      4096
#define LINK_LARGE      65536
#define LINK_MEDIUM     16384

double probe_cache_plan(Probe *p)
{
    (void)p;
    return 2 * 13 * 0.1 + 400 * 0.08 + 2 * LINK_REPS * 0.05;
}

/* A fresh region, far from the ones before (no segment holds it) */
static uint64_t region(Probe *p, uint64_t *seed)
{
    return (probe_rand(seed) % (p->sectors - 8192)) & ~7ULL;
}

static int64_t timed_read_n(Probe *p, void *buf, uint64_t lba,
                            uint32_t bytes)
{
    int64_t t0 = probe_now();

    if (probe_pread(p, buf, lba, bytes) != 0) {
        return -1;
    }
    return probe_now() - t0;
}

static int64_t timed_read(Probe *p, void *buf, uint64_t lba)
{
    return timed_read_n(p, buf, lba, 4096);
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

static int cache_link(Probe *p, void *buf, uint64_t *seed, int large)
{
    for (int rep = 0; rep < LINK_REPS; rep++) {
        uint64_t x = region(p, seed);
        int64_t r[4];

        if (timed_read_n(p, buf, x, large) < 0) {
            return -1;
        }
        for (int k = 0; k < 4; k++) {
            r[k] = timed_read_n(p, buf, x, k % 2 ? large : LINK_SMALL);
            if (r[k] < 0) {
                return -1;
            }
        }
        fprintf(p->out, "{\"type\":\"link\",\"lba\":%llu,"
                "\"small_bytes\":%d,\"large_bytes\":%d,"
                "\"small_ns\":[%lld,%lld],\"large_ns\":[%lld,%lld]}\n",
                (unsigned long long)x, LINK_SMALL, large,
                (long long)r[0], (long long)r[2], (long long)r[1],
                (long long)r[3]);
    }
    return 0;
}

int probe_cache(Probe *p)
{
    void *buf = probe_buffer(LINK_LARGE);
    uint64_t seed = 0xcac4eULL;
    int rc;

    probe_phase_start(p, "cache", probe_cache_plan(p));
    rc = buf ? cache_readahead(p, buf, &seed) : -1;
    if (rc == 0) {
        rc = cache_segments(p, buf, &seed);
    }
    if (rc == 0) {
        rc = cache_link(p, buf, &seed, LINK_LARGE);
    }
    if (rc == 0) {
        rc = cache_link(p, buf, &seed, LINK_MEDIUM);
    }
    if (rc != 0) {
        probe_skipped(p, "cache", "a 4 KiB O_DIRECT read failed");
    }
    free(buf);
    probe_phase_end(p);
    return rc;
}
