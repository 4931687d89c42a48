/*
 * ncq-fit-probe: media rate against LBA.  At points spread over the disk
 * a stream of 1 MiB O_DIRECT reads runs at the media rate (the drive
 * reads ahead; the link is faster than the media on every drive since
 * SATA 1.5 Gb/s).  Where two neighbouring points differ, the probe
 * bisects between them to find the zone boundary.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "probe.h"

#define ZONE_READ       (1 << 20)
#define ZONE_GUESS_MBS  60.0
#define ZONE_DIFF       0.006   /* neighbours differing more: bisect */
#define ZONE_MIN_POINTS 24

typedef struct ZonePlan {
    int points;
    int reads;
    int bisect;
    void *buf;
    int done;
    int total;
} ZonePlan;

static ZonePlan zone_plan(Probe *p)
{
    ZonePlan z = {
        .points = (int)(128 * p->scale),
        .reads = (int)(32 * p->scale),
        .bisect = p->scale >= 0.5 ? 6 : 4,
    };

    z.points = z.points < ZONE_MIN_POINTS ? ZONE_MIN_POINTS : z.points;
    /*
     * the rate is taken over whole reads, so the window holds a varying
     * number of head and cylinder switches: 14 MiB or more (several
     * cylinders) keeps that within 0.4 %
     */
    z.reads = z.reads < 16 ? 16 : z.reads;
    z.total = z.points * 2;
    return z;
}

double probe_zones_plan(Probe *p)
{
    ZonePlan z = zone_plan(p);

    return z.total * (z.reads * ZONE_READ / (ZONE_GUESS_MBS * 1e6) + 0.02);
}

/* One stream at @lba; its rate in bytes/s (0 on error) */
static double zone_point(Probe *p, ZonePlan *z, uint64_t lba)
{
    uint64_t span = (uint64_t)z->reads * ZONE_READ / PROBE_SECTOR;
    int64_t t[64];
    int n = z->reads < 64 ? z->reads : 64;

    if (lba + span > p->sectors) {
        lba = p->sectors - span;
    }
    lba &= ~7ULL;
    for (int i = 0; i < n; i++) {
        if (probe_pread(p, z->buf, lba + (uint64_t)i * ZONE_READ /
                        PROBE_SECTOR, ZONE_READ) != 0) {
            return 0;
        }
        t[i] = probe_now();
    }
    fprintf(p->out, "{\"type\":\"zone\",\"lba\":%llu,\"read_bytes\":%d,"
            "\"done_ns\":[", (unsigned long long)lba, ZONE_READ);
    for (int i = 0; i < n; i++) {
        fprintf(p->out, "%s%lld", i ? "," : "", (long long)t[i]);
    }
    fprintf(p->out, "]}\n");
    z->done++;
    probe_progress(p, z->done / (double)z->total);
    /* the first two reads include the seek and the read-ahead's start */
    return (double)(n - 2) * ZONE_READ / ((t[n - 1] - t[1]) / 1e9);
}

static void zone_bisect(Probe *p, ZonePlan *z, uint64_t lo, double rlo,
                        uint64_t hi, double rhi, int depth)
{
    uint64_t mid = lo / 2 + hi / 2;
    double rmid;

    if (depth == 0 || fabs(rlo - rhi) <= ZONE_DIFF * rlo ||
        hi - lo < 2ULL * z->reads * ZONE_READ / PROBE_SECTOR) {
        return;
    }
    rmid = zone_point(p, z, mid);
    if (rmid <= 0) {
        return;
    }
    zone_bisect(p, z, lo, rlo, mid, rmid, depth - 1);
    zone_bisect(p, z, mid, rmid, hi, rhi, depth - 1);
}

int probe_zones(Probe *p)
{
    ZonePlan z = zone_plan(p);
    double *rate = calloc(z.points, sizeof(*rate));
    uint64_t *lba = calloc(z.points, sizeof(*lba));

    z.buf = probe_buffer(ZONE_READ);
    if (!rate || !lba || !z.buf) {
        return -1;
    }
    probe_phase_start(p, "zones", probe_zones_plan(p));
    for (int i = 0; i < z.points; i++) {
        int64_t t0 = probe_now();

        lba[i] = p->sectors / (z.points - 1) * i;
        rate[i] = zone_point(p, &z, lba[i]);
        if (rate[i] <= 0) {
            probe_skipped(p, "zones", "a 1 MiB O_DIRECT read failed");
            return -1;
        }
        if (i == 0) {
            /*
             * a slow drive (or link) streams less per second than the
             * plan assumed: fewer points, so that they and their
             * bisections stay within the phase's share
             */
            double point_s = (probe_now() - t0) / 1e9;
            int fit = (int)(probe_zones_plan(p) / (2 * point_s));

            if (fit < z.points) {
                z.points = fit < ZONE_MIN_POINTS ? ZONE_MIN_POINTS : fit;
                z.total = z.points * 2;
            }
        }
    }
    for (int i = 0; i + 1 < z.points; i++) {
        zone_bisect(p, &z, lba[i], rate[i], lba[i + 1], rate[i + 1],
                    z.bisect);
    }
    if (p->rev_ns > 0) {
        p->outer_spt = rate[0] * (p->rev_ns / 1e9) / PROBE_SECTOR;
    }
    free(rate);
    free(lba);
    free(z.buf);
    probe_phase_end(p);
    return 0;
}
