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

/*
 * One sample: A, wait @w, B; writes it and returns R (or -1).  @w is
 * updated to the wait that happened.
 */
static int64_t seek_sample(Probe *p, uint64_t a, uint64_t b, int64_t *wp,
                           const char *stage)
{
    int64_t ta, tb, w;

    if (probe_sg_read(p, a, 1, true, &ta) != 0) {
        return -1;
    }
    probe_spin_until(ta + *wp);
    /* the wait that happened, which a late wake-up makes longer */
    w = *wp = probe_now() - ta;
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

static void seek_bracket(Probe *p, uint64_t a, uint64_t b, int64_t lo,
                         int64_t hi, int64_t phase, int round)
{
    fprintf(p->out, "{\"type\":\"seek_bracket\",\"a\":%llu,\"b\":%llu,"
            "\"round\":%d,\"lo_ns\":%lld,\"hi_ns\":%lld,\"phase_ns\":%lld,"
            "\"rev_ns\":%lld}\n", (unsigned long long)a,
            (unsigned long long)b, round, (long long)lo, (long long)hi,
            (long long)phase, (long long)p->rev_ns);
}

/*
 * @n slacks evenly over [lo, hi]; returns in @edge_made whether one in the
 * lowest tenth made it, in @edge_missed whether one in the highest tenth
 * did not (the ramp then reaches past the bracket).
 */
static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;

        a = b;
        b = t;
    }
    return a;
}

typedef struct SeekFine {
    int n;
    int64_t slack[SEEK_FINE_MAX];
    bool made[SEEK_FINE_MAX];
} SeekFine;

static int seek_sweep(Probe *p, uint64_t a, uint64_t b, int64_t lo,
                      int64_t hi, int64_t phase, int n, bool *edge_made,
                      bool *edge_missed, SeekFine *sf)
{
    int64_t rev = p->rev_ns;
    int stride = 37;

    while (gcd(stride, n) != 1) {
        stride++;
    }
    *edge_made = *edge_missed = false;
    for (int j = 0; j < n; j++) {
        /* an order that spreads over the bracket early (drift shows) */
        int k = (int)((j * (long long)stride) % n);
        int64_t slack = lo + (hi - lo) * (2 * k + 1) / (2 * n);
        int64_t w = mod_rev(phase - slack, rev);
        int64_t r = seek_sample(p, a, b, &w, "fine");
        bool made;

        if (r < 0) {
            return -1;
        }
        /* the slack of the wait that happened, near the bracket's */
        slack = (lo + hi) / 2 + mod_rev(phase - w - (lo + hi) / 2 + rev / 2,
                                        rev) - rev / 2;
        made = llabs(r - w - slack) < rev / 2;
        if (sf->n < SEEK_FINE_MAX) {
            sf->slack[sf->n] = slack;
            sf->made[sf->n++] = made;
        }
        *edge_made |= made && slack < lo + (hi - lo) / 10;
        *edge_missed |= !made && slack > hi - (hi - lo) / 10;
    }
    return 0;
}

/*
 * One distance: the coarse sweep brackets the threshold x = R - w (the
 * time from B's issue to its completion when no revolution is lost) in
 * [max(x) - rev, min(x)]; half the fine samples go across that bracket,
 * and the other half across it widened by half its width on each side
 * the ramp reached (with a large settle jitter the coarse sweep's extremes
 * lie well inside the ramp).
 */
static int cmp_fine(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;

    return *a < *b ? -1 : *a > *b;
}

/*
 * The threshold's midpoint: hi less the slacks that made it, each
 * standing for the slacks nearer to it than to its neighbours (ncqfit's
 * seek.threshold() computes the same from the samples).
 */
static int64_t seek_midpoint(SeekFine *sf, int64_t lo, int64_t hi)
{
    int64_t pairs[SEEK_FINE_MAX][2], sum = 0;

    for (int i = 0; i < sf->n; i++) {
        pairs[i][0] = sf->slack[i];
        pairs[i][1] = sf->made[i];
    }
    qsort(pairs, sf->n, sizeof(pairs[0]), cmp_fine);
    for (int i = 0; i < sf->n; i++) {
        int64_t l = i ? (pairs[i - 1][0] + pairs[i][0]) / 2 : lo;
        int64_t r = i + 1 < sf->n ? (pairs[i][0] + pairs[i + 1][0]) / 2 : hi;

        sum += pairs[i][1] ? r - l : 0;
    }
    return hi - sum;
}

static int seek_distance(Probe *p, uint64_t a, uint64_t b, int fine,
                         int64_t *mid)
{
    SeekFine sf = { 0 };

    int64_t rev = p->rev_ns, xmin = INT64_MAX, xmax = INT64_MIN, r = 0;
    int64_t lo, hi, phase, margin = rev / SEEK_COARSE, width;
    bool low, high;

    for (int i = 0; i < SEEK_COARSE; i++) {
        int64_t w = rev * i / SEEK_COARSE;

        r = seek_sample(p, a, b, &w, "coarse");
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
    seek_bracket(p, a, b, lo, hi, phase, 1);
    if (seek_sweep(p, a, b, lo, hi, phase, fine / 2, &low, &high, &sf) < 0) {
        return -1;
    }
    width = hi - lo;
    lo -= low ? width / 2 : 0;
    hi += high ? width / 2 : 0;
    if (hi - lo > rev) {
        hi = lo + rev;
    }
    seek_bracket(p, a, b, lo, hi, phase, 2);
    if (seek_sweep(p, a, b, lo, hi, phase, fine - fine / 2, &low, &high,
                   &sf) < 0) {
        return -1;
    }
    *mid = seek_midpoint(&sf, lo, hi);
    return 0;
}

/*
 * Where A goes.  After A the drive reads ahead; a read-ahead that has
 * crossed into the next track when B arrives puts the head there, and a
 * head switch back would count as seek.  Of BASE_TRIES places a quarter
 * of a track apart, the one whose distance-0 threshold is lowest has its
 * read-ahead still on A's track (the read-ahead stays shorter than a track
 * after at least one of them); every pair starts there.
 */
#define BASE_TRIES 4

static int seek_base(Probe *p, uint64_t first, int fine, uint64_t *base)
{
    int64_t best = INT64_MAX;
    double spt = p->outer_spt > 16 ? p->outer_spt : 1000;

    for (int i = 0; i < BASE_TRIES; i++) {
        uint64_t a = first + (uint64_t)(i * spt / BASE_TRIES);
        int64_t mid;

        if (seek_distance(p, a, a, fine, &mid) < 0) {
            return -1;
        }
        if (mid < best) {
            best = mid;
            *base = a;
        }
    }
    return 0;
}

int probe_seek(Probe *p)
{
    uint64_t d[SEEK_MAX_DIST], base = p->sectors / 64;
    int n, fine = SEEK_FINE_MIN;
    double budget = probe_seek_plan(p);
    int64_t t0, mid;

    probe_phase_start(p, "seek", budget);
    if (p->rev_ns <= 0) {
        probe_skipped(p, "seek", "no revolution measured");
        probe_phase_end(p);
        return -1;
    }
    n = seek_distances(p, base, d);
    t0 = probe_now();
    if (seek_distance(p, base, base, fine, &mid) < 0) {
        probe_skipped(p, "seek", "a FUA read failed");
        probe_phase_end(p);
        return -1;
    }
    {
        /* size the fine sweeps from what one sample costs */
        double sample = (probe_now() - t0) / 1e9 / (SEEK_COARSE + fine);
        double per = budget / (n + BASE_TRIES) / (sample * 1.6);

        fine = (int)per - SEEK_COARSE;
        fine = fine < SEEK_FINE_MIN ? SEEK_FINE_MIN :
               fine > SEEK_FINE_MAX ? SEEK_FINE_MAX : fine;
    }
    if (seek_base(p, base, fine, &base) < 0) {
        probe_skipped(p, "seek", "a FUA read failed");
        probe_phase_end(p);
        return -1;
    }
    for (int i = 1; i < n; i++) {
        bool full = d[i] == p->sectors - 1 - p->sectors / 64;
        uint64_t a = full ? 0 : base;
        uint64_t b = full ? p->sectors - 1 : base + d[i];

        if (b >= p->sectors) {
            continue;
        }
        if (seek_distance(p, a, b, fine, &mid) < 0) {
            probe_skipped(p, "seek", "a FUA read failed");
            probe_phase_end(p);
            return -1;
        }
        probe_progress(p, (i + 1) / (double)n);
    }
    probe_phase_end(p);
    return 0;
}
