/*
 * ncq-sim: the results of a run and their summaries.
 *
 * Latencies are kept per command in completion order; a summary gives
 * throughput, means and percentiles (nearest rank) in ms.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-sim.h"

/* --interval: the completion counts in the interval it ended in. */
static void result_interval(Result *r, const NcqCompletion *c)
{
    long k = (long)(c->complete_ns / r->interval_ns);

    if (k >= r->nivl) {
        long n = k + 1 > r->nivl * 2 ? k + 1 : r->nivl * 2;

        r->ivl_ops = realloc(r->ivl_ops, n * sizeof(*r->ivl_ops));
        r->ivl_sect = realloc(r->ivl_sect, n * sizeof(*r->ivl_sect));
        if (!r->ivl_ops || !r->ivl_sect) {
            die("out of memory%s", "");
        }
        memset(r->ivl_ops + r->nivl, 0, (n - r->nivl) * sizeof(uint64_t));
        memset(r->ivl_sect + r->nivl, 0, (n - r->nivl) * sizeof(uint64_t));
        r->nivl = n;
    }
    r->ivl_ops[k]++;
    r->ivl_sect[k] += c->sectors;
}

/*
 * --interval: one line per interval up to the last completion: its end
 * (s), the commands completed in it per second and their MB/s.
 */
static void report_intervals(const Result *r)
{
    double secs = r->interval_ns / 1e9;
    long k, last = (long)(r->t_end / r->interval_ns);

    printf("interval_end_s iops mbs\n");
    for (k = 0; k <= last && k < r->nivl; k++) {
        printf("%.3f %.1f %.2f\n", (k + 1) * secs, r->ivl_ops[k] / secs,
               r->ivl_sect[k] * 512.0 / 1e6 / secs);
    }
}

void result_add(Result *r, int64_t lat, const NcqCompletion *c,
            int group)
{
    if (r->nlat == r->caplat) {
        r->caplat = r->caplat ? r->caplat * 2 : 4096;
        r->lat = realloc(r->lat, r->caplat * sizeof(*r->lat));
        r->dlat = realloc(r->dlat, r->caplat * sizeof(*r->dlat));
        r->delay = realloc(r->delay, r->caplat * sizeof(*r->delay));
        r->grp = realloc(r->grp, r->caplat * sizeof(*r->grp));
        if (!r->lat || !r->dlat || !r->delay || !r->grp) {
            die("out of memory%s", "");
        }
    }
    r->grp[r->nlat] = group;
    r->gdone[group]++;
    r->gsect[group] += c->sectors;
    r->lat[r->nlat] = lat;
    r->dlat[r->nlat] = c->complete_ns - c->arrival_ns;
    r->delay[r->nlat] = c->delay_count;
    r->nlat++;
    r->done++;
    r->sectors += c->sectors;
    if (c->complete_ns > r->t_end) {
        r->t_end = c->complete_ns;
    }
    if (r->interval_ns > 0) {
        result_interval(r, c);
    }
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, long n, double q)
{
    long i = (long)(q * (n - 1) + 0.5);

    return n ? v[i] / 1e6 : 0;
}

/* The figures over all commands. */
typedef struct Summary {
    double secs;
    double iops;
    double mbs;
    double mean, dmean;         /* ms, host and drive */
    uint32_t maxd;              /* most times a command was passed over */
} Summary;

/* Means in completion order, before the latencies are sorted. */
static void summary_of(const Result *r, Summary *s)
{
    long i;

    memset(s, 0, sizeof(*s));
    s->secs = r->t_end / 1e9;
    s->iops = s->secs > 0 ? r->done / s->secs : 0;
    s->mbs = r->sectors * 512 / 1e6 / (s->secs > 0 ? s->secs : 1);
    for (i = 0; i < r->nlat; i++) {
        s->mean += r->lat[i] / 1e6;
        s->dmean += r->dlat[i] / 1e6;
        if (r->delay[i] > s->maxd) {
            s->maxd = r->delay[i];
        }
    }
    if (r->nlat) {
        s->mean /= r->nlat;
        s->dmean /= r->nlat;
    }
}

/* One line per client group. */
static void report_groups(const Opts *o, const Result *r, double secs)
{
    int64_t *tmp = malloc((r->nlat + 1) * sizeof(*tmp));
    long i;
    int b;

    if (!tmp) {
        die("out of memory%s", "");
    }
    for (b = 0; b < r->ngroups; b++) {
        long k = 0;
        double gm = 0;

        for (i = 0; i < r->nlat; i++) {
            if (r->grp[i] == b) {
                tmp[k++] = r->lat[i];
                gm += r->lat[i] / 1e6;
            }
        }
        qsort(tmp, k, sizeof(*tmp), cmp64);
        printf("group %d      %d client(s) %s..%s%s: %ld commands, "
               "%.1f IOPS %.2f MB/s, latency ms mean %.2f p50 %.2f "
               "p99 %.2f max %.2f\n", b,
               o->group[b].clients, o->group[b].lo_s, o->group[b].hi_s,
               o->group[b].prio ? " prio" : "", k,
               secs > 0 ? r->gdone[b] / secs : 0,
               secs > 0 ? r->gsect[b] * 512 / 1e6 / secs : 0,
               k ? gm / k : 0,
               pct(tmp, k, 0.5), pct(tmp, k, 0.99), pct(tmp, k, 1.0));
    }
    free(tmp);
}

static void report_delay_hist(const Result *r)
{
    int b;

    for (b = 0; b < NCQ_DELAY_BUCKETS; b++) {
        if (b == 0) {
            printf(" 0:%" PRIu64, r->st.delay_hist[0]);
        } else if (b == NCQ_DELAY_BUCKETS - 1) {
            printf(" >=%d:%" PRIu64, 1 << (b - 1), r->st.delay_hist[b]);
        } else {
            printf(" %d-%d:%" PRIu64, 1 << (b - 1), (1 << b) - 1,
                   r->st.delay_hist[b]);
        }
    }
}

/* The full summary, latencies sorted. */
static void report_full(const Result *r, const Summary *s, bool end_flush)
{
    printf("commands     %ld in %.3f s simulated\n", r->done, s->secs);
    printf("throughput   %.1f IOPS  %.2f MB/s\n", s->iops, s->mbs);
    if (end_flush) {
        printf("end flush    %.2f ms  (in the time above)\n",
               r->flush_ns / 1e6);
    }
    printf("latency ms   mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f"
           "  (host: issue to completion)\n", s->mean,
           pct(r->lat, r->nlat, 0.5), pct(r->lat, r->nlat, 0.9),
           pct(r->lat, r->nlat, 0.99), pct(r->lat, r->nlat, 1.0));
    printf("drive ms     mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f"
           "  (arrival in the drive to completion)\n", s->dmean,
           pct(r->dlat, r->nlat, 0.5), pct(r->dlat, r->nlat, 0.9),
           pct(r->dlat, r->nlat, 0.99), pct(r->dlat, r->nlat, 1.0));
    printf("delay count  max %u  histogram:", s->maxd);
    report_delay_hist(r);
    printf("\ndrive        cache hits %" PRIu64 "  time-outs forced %" PRIu64
           "  clustered %" PRIu64 "  max queue %u\n", r->st.cache_hits,
           r->st.timeouts_forced + r->st.prio_forced, r->st.clustered,
           r->st.max_queue_len);
}

void report_sweep_header(void)
{
    printf("%5s %9s %8s %9s %9s %9s %9s %10s %8s\n", "depth", "IOPS",
           "MB/s", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms",
           "maxdelay");
}

/*
 * The figures of a run at @depth: a row of the sweep table (@row), one
 * line (--quiet), or per-group lines and the full summary.
 */
void report(const Opts *o, int depth, Result *r, bool row)
{
    Summary s;

    summary_of(r, &s);
    if (r->interval_ns > 0 && !row) {
        report_intervals(r);
    }
    if (r->ngroups > 1 && !row && !o->quiet) {
        report_groups(o, r, s.secs);
    }
    qsort(r->lat, r->nlat, sizeof(*r->lat), cmp64);
    qsort(r->dlat, r->nlat, sizeof(*r->dlat), cmp64);
    if (row) {
        printf("%5d %9.1f %8.2f %9.2f %9.2f %9.2f %9.2f %10.2f %8u\n",
               depth, s.iops, s.mbs, s.mean, pct(r->lat, r->nlat, 0.5),
               pct(r->lat, r->nlat, 0.9), pct(r->lat, r->nlat, 0.99),
               pct(r->lat, r->nlat, 1.0), s.maxd);
    } else if (o->quiet) {
        printf("iops %.1f mbs %.2f mean_ms %.2f p50_ms %.2f p99_ms %.2f "
               "max_ms %.2f max_delay %u", s.iops, s.mbs, s.mean,
               pct(r->lat, r->nlat, 0.5), pct(r->lat, r->nlat, 0.99),
               pct(r->lat, r->nlat, 1.0), s.maxd);
        if (o->end_flush) {
            printf(" flush_ms %.2f", r->flush_ns / 1e6);
        }
        printf("\n");
    } else {
        report_full(r, &s, o->end_flush);
    }
}

void result_free(Result *r)
{
    free(r->lat);
    free(r->dlat);
    free(r->delay);
    free(r->grp);
    free(r->ivl_ops);
    free(r->ivl_sect);
}
