/*
 * Invariants over long random workloads (usage: test-invariants MODEL
 * COUNT):
 * - every command completes exactly once, never before it arrived;
 * - none faster than its physical minimum (overhead + media or bus time);
 * - the head serves one media access at a time;
 * - with a starvation time-out, no command stays longer than the time-out
 *   plus two maximal service times (saturated random reads);
 * - the same seed gives an identical trace;
 * - how often advance() is called does not change any result.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define MS 1000000LL

typedef struct Run {
    NcqCompletion *c;
    long n, cap;
} Run;

static void run_add(Run *r, const NcqCompletion *c, int n)
{
    if (n <= 0) {
        return;
    }
    if (r->n + n > r->cap) {
        r->cap = (r->cap + n) * 2;
        r->c = realloc(r->c, r->cap * sizeof(*r->c));
        if (!r->c) {
            exit(1);
        }
    }
    memcpy(r->c + r->n, c, n * sizeof(*c));
    r->n += n;
}

/*
 * Mixed workload: reads/writes, sizes 1..2048 (mostly 8), random and
 * sequential, FUA, priority, occasional FLUSH and non-media commands.
 * @fine: also call advance() at many times between submissions.
 */
static void mixed(const char *model, uint64_t seed, long count, bool fine,
                  bool saturate, Run *r)
{
    NcqModel *m = ncq_test_model(model, seed);
    const NcqParams *p = ncq_model_params(m);
    uint64_t rs = seed * 31 + 7, fs = seed, last = 0;
    int64_t t = 0, tag_arrival[NCQ_MAX_TAGS + 1];
    bool busy[NCQ_MAX_TAGS + 1] = { false };
    int outstanding = 0, i, n;
    long issued = 0;
    NcqCompletion c[64];
    NcqSettings s;
    char err[128];

    ncq_model_get_settings(m, &s);
    if (!saturate) {
        s.honour_prio = true;
        s.prio_timeout_ns = 300 * MS;
        s.clustering_sectors = seed % 2 ? 64 : 0;
        s.write_cache = seed % 3 != 0;
        s.policy = (NcqPolicy)(seed % NCQ_POLICY__MAX);
        s.aging_weight_milli = 200;
    }
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    memset(tag_arrival, 0, sizeof(tag_arrival));
    while (issued < count || outstanding > 0) {
        uint64_t x = ncq_test_rng(&rs);
        int64_t gap = saturate ? 0 : (int64_t)(x % 3000000);
        int64_t next = t + gap;

        if (fine) {
            int64_t u = t;

            while ((u += 1 + (int64_t)(ncq_test_rng(&fs) % 200000)) < next) {
                n = ncq_model_advance(m, u, c, 64);
                run_add(r, c, n);
                for (i = 0; i < n; i++) {
                    busy[c[i].queued ? c[i].id : NCQ_MAX_TAGS] = false;
                    outstanding--;
                }
            }
        }
        t = next;
        if (saturate || issued >= count) {
            int64_t e = ncq_model_next_event(m);

            if ((saturate && outstanding >= 32) || issued >= count) {
                if (e == INT64_MAX) {
                    break;
                }
                t = e > t ? e : t;
            }
        }
        n = ncq_model_advance(m, t, c, 64);
        run_add(r, c, n);
        for (i = 0; i < n; i++) {
            busy[c[i].queued ? c[i].id : NCQ_MAX_TAGS] = false;
            outstanding--;
        }
        if (issued >= count) {
            continue;
        }
        {
            NcqCmd cmd = { 0 };
            uint64_t y = ncq_test_rng(&rs);
            int tag = -1, rc;

            cmd.op = (y % 100) < (saturate ? 100 : 65) ? NCQ_OP_READ :
                     NCQ_OP_WRITE;
            cmd.sectors = (y >> 8) % 10 < 7 ? 8 :
                          1 + (uint32_t)((y >> 16) % (saturate ? 256 :
                                                      2048));
            if (!saturate && (y >> 32) % 10 < 3) {
                cmd.lba = last;
            } else {
                cmd.lba = ncq_test_rng(&rs) % p->capacity;
            }
            if (cmd.lba + cmd.sectors > p->capacity) {
                cmd.lba = p->capacity - cmd.sectors;
            }
            cmd.fua = !saturate && (y >> 40) % 20 == 0;
            cmd.prio = !saturate && (y >> 44) % 10 == 0;
            cmd.queued = true;
            if (!saturate && (y >> 48) % 200 == 0) {
                cmd.op = (y >> 56) % 2 ? NCQ_OP_FLUSH : NCQ_OP_OTHER;
                cmd.queued = false;
            }
            if (cmd.queued) {
                for (i = 0; i < NCQ_MAX_TAGS; i++) {
                    int k = (int)((i + (y >> 20)) % NCQ_MAX_TAGS);

                    if (!busy[k]) {
                        tag = k;
                        break;
                    }
                }
                if (tag < 0 || busy[NCQ_MAX_TAGS]) {
                    continue;
                }
                cmd.id = tag;
            } else {
                if (outstanding > 0) {
                    continue;
                }
                tag = NCQ_MAX_TAGS;
            }
            rc = ncq_model_submit(m, &cmd, t);
            CHECK(rc == 0, "submit rejected: %s", ncq_strerror(rc));
            if (rc == 0) {
                busy[tag] = true;
                tag_arrival[tag] = t;
                outstanding++;
                issued++;
                if (cmd.op == NCQ_OP_READ || cmd.op == NCQ_OP_WRITE) {
                    last = cmd.lba + cmd.sectors;
                }
            }
        }
    }
    n = ncq_test_drain(m, c, 64);
    CHECK_EQ(n, 0);
    CHECK_EQ(ncq_model_outstanding(m), 0);
    CHECK_EQ(r->n, issued);
    ncq_model_free(m);
}

static int cmp_start(const void *a, const void *b)
{
    const NcqCompletion *x = a, *y = b;

    if (x->media_start_ns != y->media_start_ns) {
        return x->media_start_ns < y->media_start_ns ? -1 : 1;
    }
    return x->access_id < y->access_id ? -1 : x->access_id > y->access_id;
}

static void check_run(const char *model, const Run *r, bool saturate)
{
    NcqParams *p = ncq_params_builtin(model);
    int64_t sector_min, max_service, lat_max = 0;
    NcqCompletion *v = malloc(r->n * sizeof(*v));
    long i, nv = 0, errors = 0;
    uint32_t z, spt_max = 1;

    for (z = 0; z < p->nzones; z++) {
        if (p->zones[z].spt > spt_max) {
            spt_max = p->zones[z].spt;
        }
    }
    sector_min = p->kind == NCQ_KIND_HDD ?
                 60000000000LL / ((int64_t)p->rpm * spt_max) : 0;
    max_service = p->ovh_read_miss_ns + p->seek_c_ns +
                  p->seek_e_ns * p->cylinders + p->seek_jitter_ns +
                  p->head_switch_ns +
                  2 * 60000000000LL / (p->rpm ? p->rpm : 1) +
                  256 * sector_min * 2;
    for (i = 0; i < r->n; i++) {
        const NcqCompletion *c = &r->c[i];
        int64_t lat = c->complete_ns - c->arrival_ns;

        if (c->complete_ns < c->arrival_ns || c->dispatch_ns < c->arrival_ns
            || c->complete_ns < c->dispatch_ns) {
            errors++;
            CHECK(errors > 5, "time order: arrival %" PRId64 " dispatch %"
                  PRId64 " complete %" PRId64, c->arrival_ns,
                  c->dispatch_ns, c->complete_ns);
        }
        if (p->kind == NCQ_KIND_HDD && c->access_id &&
            (c->op == NCQ_OP_READ || c->op == NCQ_OP_WRITE)) {
            /*
             * A write larger than the write cache is acknowledged when
             * the rest fits in the cache (it completes before its media
             * access ends): only the part beyond the cache must be on
             * the media by then.
             */
            int64_t on_media = c->op == NCQ_OP_WRITE &&
                               c->complete_ns < c->media_end_ns &&
                               c->sectors > p->write_cache_sectors ?
                               c->sectors - p->write_cache_sectors :
                               c->sectors;
            int64_t min = c->overhead_ns + on_media * sector_min;

            if (c->complete_ns - c->dispatch_ns < min ||
                c->transfer_ns < on_media * sector_min) {
                errors++;
                CHECK(errors > 5, "faster than physics: %" PRId64 " < %"
                      PRId64, c->complete_ns - c->dispatch_ns, min);
            }
            v[nv++] = *c;
        }
        if (c->cache_hit && c->complete_ns - c->arrival_ns <
            (int64_t)c->sectors * 512 * 1000000000LL /
            (int64_t)p->bus_bytes_per_s) {
            errors++;
            CHECK(errors > 5, "cache hit faster than the bus");
        }
        if (lat > lat_max) {
            lat_max = lat;
        }
    }
    /* one media access at a time */
    qsort(v, nv, sizeof(*v), cmp_start);
    for (i = 1; i < nv; i++) {
        if (v[i].access_id == v[i - 1].access_id) {
            continue;
        }
        if (v[i].media_start_ns < v[i - 1].media_end_ns) {
            errors++;
            CHECK(errors > 5, "accesses overlap: %" PRId64 " < %" PRId64,
                  v[i].media_start_ns, v[i - 1].media_end_ns);
        }
    }
    if (saturate && p->starvation_timeout_ns) {
        CHECK(lat_max <= p->starvation_timeout_ns + 2 * max_service,
              "%s: latency %" PRId64 " > time-out %" PRId64 " + 2 x %"
              PRId64, model, lat_max, p->starvation_timeout_ns,
              max_service);
        printf("%s: max latency %.1f ms, time-out %.1f ms, max service "
               "%.1f ms\n", model, lat_max / 1e6,
               p->starvation_timeout_ns / 1e6, max_service / 1e6);
    }
    CHECK_EQ(errors, 0);
    free(v);
    ncq_params_free(p);
}

static bool same(const Run *a, const Run *b)
{
    return a->n == b->n && !memcmp(a->c, b->c, a->n * sizeof(*a->c));
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "st3400620as";
    long count = argc > 2 ? atol(argv[2]) : 100000;
    Run a = { 0 }, b = { 0 }, f = { 0 }, s = { 0 };
    uint64_t seed;

    for (seed = 1; seed <= 5; seed++) {
        long part = count / 5;

        a.n = b.n = f.n = 0;
        mixed(model, seed, part, false, false, &a);
        check_run(model, &a, false);
        mixed(model, seed, part, false, false, &b);
        CHECK(same(&a, &b), "seed %" PRIu64 ": same seed, other trace",
              seed);
        mixed(model, seed, part / 4, true, false, &f);
        b.n = 0;
        mixed(model, seed, part / 4, false, false, &b);
        CHECK(same(&f, &b), "seed %" PRIu64 ": advance() granularity "
              "changed the results", seed);
    }
    mixed(model, 99, count, false, true, &s);
    check_run(model, &s, true);
    free(a.c);
    free(b.c);
    free(f.c);
    free(s.c);
    return ncq_test_done("test-invariants");
}
