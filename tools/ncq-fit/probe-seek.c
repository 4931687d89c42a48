/*
 * ncq-fit-probe: the seek profile.  For each sampled distance the probe
 * reads sector A, waits w, then reads sector B, both with FUA (from the
 * media).  B's completion is locked to B passing under the head, so the
 * response R is B's phase relative to A's (R mod one revolution) plus
 * whole revolutions: the drive made it in time (no extra revolution) iff
 * w + overhead + seek + settle fitted in the slack before B came round.
 * A coarse sweep of w over one revolution brackets that threshold; a
 * fine sweep across the bracket gives, per w, made it or not.  The fit
 * takes the threshold's midpoint (the seek plus the mean settle jitter;
 * its spread is the jitter) and subtracts the one of distance 0, B = A
 * (docs/ncq-fit.md; after Lumb et al.'s and DIXtrac's minimum time
 * between request completions).
 *
 * Distances follow Lumb et al.'s profile: every track up to 10, then
 * steps of 2, 5, 10, 25 and 100 tracks, then log-spaced to full stroke.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "probe.h"

#define SEEK_COARSE    16
#define SEEK_FINE_MIN  16
#define SEEK_FINE_MAX  400
#define SEEK_LOG_STEP  1.4
#define SEEK_MAX_DIST  128

static int seek_distances(Probe *p, uint64_t base, uint64_t *d)
{
    static const int steps[][3] = {   /* from, to, step (tracks) */
        { 1, 10, 1 }, { 12, 20, 2 }, { 25, 50, 5 }, { 60, 100, 10 },
        { 125, 250, 25 }, { 300, 1000, 100 },
    };
    double spt = p->outer_spt > 16 ? p->outer_spt : 1000;
    uint64_t max = p->sectors - 1 - base;
    bool coarse = p->scale < 0.5;
    int n = 0;

    d[n++] = 0;
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        int step = steps[s][2] * (coarse && s > 0 ? 2 : 1);

        for (int t = steps[s][0]; t <= steps[s][1]; t += step) {
            if (coarse && s == 0 && t > 4 && t % 2) {
                continue;
            }
            if ((uint64_t)(t * spt) < max && n < SEEK_MAX_DIST - 1) {
                d[n++] = (uint64_t)(t * spt);
            }
        }
    }
    for (double t = 1000 * SEEK_LOG_STEP;
         t * spt < max && n < SEEK_MAX_DIST - 1;
         t *= coarse ? SEEK_LOG_STEP * SEEK_LOG_STEP : SEEK_LOG_STEP) {
        d[n++] = (uint64_t)(t * spt);
    }
    d[n++] = max;
    return n;
}

double probe_seek_plan(Probe *p)
{
    return 0.55 * p->minutes * 60;
}

/* One sample: A, wait @w, B; writes it and returns R (or -1) */
static int64_t seek_sample(Probe *p, uint64_t a, uint64_t b, int64_t w,
                           const char *stage)
{
    int64_t ta, tb;

    if (probe_sg_read(p, a, 1, true, &ta) != 0) {
        return -1;
    }
    probe_spin_until(ta + w);
    if (probe_sg_read(p, b, 1, true, &tb) != 0) {
        return -1;
    }
    fprintf(p->out, "{\"type\":\"seek\",\"stage\":\"%s\",\"a\":%llu,"
            "\"b\":%llu,\"w_ns\":%lld,\"r_ns\":%lld}\n", stage,
            (unsigned long long)a, (unsigned long long)b, (long long)w,
            (long long)(tb - ta));
    return tb - ta;
}

static int64_t mod_rev(int64_t x, int64_t rev)
{
    x %= rev;
    return x < 0 ? x + rev : x;
}

/*
 * One distance: the coarse sweep brackets the threshold x = R - w (the
 * time from B's issue to its completion when no revolution is lost) in
 * [max(x) - rev, min(x)]; the fine sweep puts @fine slacks across it.
 */
static int seek_distance(Probe *p, uint64_t a, uint64_t b, int fine)
{
    int64_t rev = p->rev_ns, xmin = INT64_MAX, xmax = INT64_MIN, r = 0;
    int64_t lo, hi, phase, margin = rev / SEEK_COARSE;

    for (int i = 0; i < SEEK_COARSE; i++) {
        int64_t w = rev * i / SEEK_COARSE;

        r = seek_sample(p, a, b, w, "coarse");
        if (r < 0) {
            return -1;
        }
        xmin = r - w < xmin ? r - w : xmin;
        xmax = r - w > xmax ? r - w : xmax;
    }
    phase = mod_rev(r, rev);
    lo = (xmax - rev < xmin ? xmax - rev : xmin) - margin;
    hi = (xmax - rev > xmin ? xmax - rev : xmin) + margin;
    if (hi - lo > rev) {
        hi = lo + rev;
    }
    fprintf(p->out, "{\"type\":\"seek_bracket\",\"a\":%llu,\"b\":%llu,"
            "\"lo_ns\":%lld,\"hi_ns\":%lld,\"phase_ns\":%lld,"
            "\"rev_ns\":%lld}\n", (unsigned long long)a,
            (unsigned long long)b, (long long)lo, (long long)hi,
            (long long)phase, (long long)rev);
    for (int j = 0; j < fine; j++) {
        /* an order that spreads over the bracket early (drift shows) */
        int k = (int)((j * 37LL) % fine);
        int64_t slack = lo + (hi - lo) * (2 * k + 1) / (2 * fine);
        int64_t w = mod_rev(phase - slack, rev);

        if (seek_sample(p, a, b, w, "fine") < 0) {
            return -1;
        }
    }
    return 0;
}

int probe_seek(Probe *p)
{
    uint64_t d[SEEK_MAX_DIST], base = p->sectors / 64;
    int n, fine = SEEK_FINE_MIN;
    double budget = probe_seek_plan(p);
    int64_t t0;

    probe_phase_start(p, "seek", budget);
    if (p->rev_ns <= 0) {
        probe_skipped(p, "seek", "no revolution measured");
        probe_phase_end(p);
        return -1;
    }
    n = seek_distances(p, base, d);
    for (int i = 0; i < n; i++) {
        uint64_t a = d[i] == p->sectors - 1 - base ? 0 : base;
        uint64_t b = d[i] == p->sectors - 1 - base ? p->sectors - 1 :
                     base + d[i];

        t0 = probe_now();
        if (seek_distance(p, a, b, fine) < 0) {
            probe_skipped(p, "seek", "a FUA read failed");
            probe_phase_end(p);
            return -1;
        }
        if (i == 0) {
            /* size the fine sweeps from what one sample costs */
            double sample = (probe_now() - t0) / 1e9 /
                            (SEEK_COARSE + fine);
            double per = budget / n / (sample * 1.6);

            fine = (int)per - SEEK_COARSE;
            fine = fine < SEEK_FINE_MIN ? SEEK_FINE_MIN :
                   fine > SEEK_FINE_MAX ? SEEK_FINE_MAX : fine;
        }
        probe_progress(p, (i + 1) / (double)n);
    }
    probe_phase_end(p);
    return 0;
}
