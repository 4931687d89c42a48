/*
 * Drive-managed SMR's media cache (mcache.c, docs/smr.md): random writes
 * absorbed by the cache's log, cleaning forced when it is full (and the
 * collapse of throughput), idle cleaning emptying it (and put off by the
 * host's commands), reads of cached data from the cache's tracks,
 * determinism, the saved state, a power loss during a cleaning, bad
 * parameter files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define MODEL "seagate-st8000as0002"
#define MS 1000000LL
#define SEC 1000000000LL

/* The built-in model, its map cut to @map extents (0: as shipped). */
static NcqModel *dm_model(uint32_t map, uint64_t seed)
{
    NcqParams *p = ncq_params_builtin(MODEL);
    char err[256];
    NcqModel *m;
    NcqSettings s;

    if (!p) {
        fprintf(stderr, "no built-in model %s\n", MODEL);
        exit(1);
    }
    if (map) {
        p->mc_map = map;
    }
    m = ncq_test_new(p, seed);
    ncq_model_get_settings(m, &s);
    s.write_cache = false;          /* each write's own time on the media */
    CHECK(ncq_model_set_settings(m, &s, err, sizeof(err)) == 0, "%s", err);
    return m;
}

/* One command at @*t, run to its completion; *@t becomes that time. */
static NcqCompletion one(NcqModel *m, NcqOp op, uint64_t lba, uint32_t n,
                         int64_t *t)
{
    NcqCompletion c;

    memset(&c, 0, sizeof(c));
    CHECK(ncq_test_submit(m, 0, op, lba, n, *t) == 0, "submit at %lld",
          (long long)*t);
    for (;;) {
        int64_t e = ncq_model_next_event(m);

        CHECK(e != INT64_MAX, "no completion");
        if (e == INT64_MAX || ncq_model_advance(m, e, &c, 1) == 1) {
            break;
        }
    }
    *t = c.complete_ns;
    return c;
}

static uint64_t rnd_lba(uint64_t *r, uint64_t cap)
{
    return ncq_test_rng(r) % (cap / 8 - 1) * 8;
}

/* Back-to-back random 4 KiB writes: @n of them, their mean time. */
static int64_t write_burst(NcqModel *m, int n, uint64_t *r, int64_t *t)
{
    uint64_t cap = ncq_model_params(m)->capacity;
    int64_t sum = 0;
    int i;

    for (i = 0; i < n; i++) {
        int64_t t0 = *t;

        one(m, NCQ_OP_WRITE, rnd_lba(r, cap), 8, t);
        sum += *t - t0;
    }
    return sum / n;
}

/* The cache takes random writes at about the media rate of its log. */
static void test_absorbs(void)
{
    NcqModel *dm = dm_model(0, 1), *cmr = ncq_test_model("st3400620as", 1);
    NcqSettings s;
    char err[256];
    uint64_t r = 7;
    int64_t t = 0, t2 = 0, dm_ns, cmr_ns;
    NcqMcInfo mi;

    ncq_model_get_settings(cmr, &s);
    s.write_cache = false;
    CHECK(ncq_model_set_settings(cmr, &s, err, sizeof(err)) == 0, "%s", err);
    dm_ns = write_burst(dm, 2000, &r, &t);
    r = 7;
    cmr_ns = write_burst(cmr, 2000, &r, &t2);
    ncq_model_mc_info(dm, &mi);
    CHECK_EQ(mi.extents, 2000);
    CHECK_EQ(mi.sectors, 16000);
    CHECK_EQ(mi.cleaned, 0);
    /* a log write: overhead, no seek (the head stays on the cache) */
    CHECK(dm_ns < 1 * MS, "random write into the cache %lld ns",
          (long long)dm_ns);
    CHECK(cmr_ns > 8 * MS, "random write on the CMR drive %lld ns",
          (long long)cmr_ns);
    printf("absorbs: 4 KiB random writes %.3f ms each into the media cache, "
           "%.2f ms on st3400620as\n", dm_ns / 1e6, cmr_ns / 1e6);
    ncq_model_free(dm);
    ncq_model_free(cmr);
}

/*
 * A full map forces a cleaning that the next write waits behind (the
 * oldest extent's band first), and then every write does: throughput
 * collapses.
 */
static void test_full_forces_cleaning(void)
{
    NcqModel *m = dm_model(64, 1);
    uint64_t r = 3, cap = ncq_model_params(m)->capacity;
    int64_t t = 0, fast, slow, t0;
    NcqMcInfo mi;
    NcqCompletion c;

    fast = write_burst(m, 64, &r, &t);
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.extents, 64);
    CHECK_EQ(mi.forced, 0);
    t0 = t;
    c = one(m, NCQ_OP_WRITE, rnd_lba(&r, cap), 8, &t);
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.forced, 1);
    CHECK_EQ(mi.extents, 64);   /* one band's extent out, this one in */
    /* Skylight's 0.6-1.6 s a band (docs/smr.md) */
    CHECK(t - t0 > 600 * MS && t - t0 < 1600 * MS,
          "the write behind a band's cleaning took %lld ns",
          (long long)(t - t0));
    CHECK(c.complete_ns - c.arrival_ns == t - t0, "its own latency");
    slow = write_burst(m, 20, &r, &t);
    ncq_model_mc_info(m, &mi);
    CHECK(mi.forced >= 20, "every write cleaned a band (%llu)",
          (unsigned long long)mi.forced);
    CHECK(slow > 500 * fast, "collapse: %lld ns a write, %lld before",
          (long long)slow, (long long)fast);
    printf("full cache: %.3f ms a write before, %.0f ms after (%llu bands "
           "cleaned)\n", fast / 1e6, slow / 1e6,
           (unsigned long long)mi.forced);
    ncq_model_free(m);
}

/*
 * Idle, the drive cleans band by band until the cache is empty; commands
 * closer together than the idle delay put it off.
 */
static void test_idle_cleaning(void)
{
    NcqModel *m = dm_model(0, 1);
    uint64_t r = 5, cap = ncq_model_params(m)->capacity;
    int64_t t = 0, e;
    NcqMcInfo mi;
    NcqCompletion c;
    int i;

    write_burst(m, 50, &r, &t);
    /* a read every 0.5 s for 5 s: never idle 1 s, nothing cleaned */
    for (i = 0; i < 10; i++) {
        t += 500 * MS;
        one(m, NCQ_OP_READ, rnd_lba(&r, cap), 8, &t);
    }
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.cleaned, 0);
    CHECK_EQ(mi.extents, 50);
    /* left alone: no cleaning within the idle delay, then band by band */
    CHECK(ncq_model_advance(m, t + 900 * MS, &c, 1) == 0, "no completion");
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.cleaned, 0);
    while ((e = ncq_model_next_event(m)) != INT64_MAX) {
        CHECK(ncq_model_advance(m, e, &c, 1) == 0, "no completion");
        t = e;
    }
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.extents, 0);
    CHECK_EQ(mi.sectors, 0);
    CHECK_EQ(mi.forced, 0);
    CHECK(mi.cleaned >= 45 && mi.cleaned <= 50, "%llu bands cleaned",
          (unsigned long long)mi.cleaned);
    printf("idle: %llu bands cleaned in %.1f s\n",
           (unsigned long long)mi.cleaned, t / 1e9);
    ncq_model_free(m);
}

/*
 * A read of data the cache holds is served from the cache's tracks (no
 * seek from there after a write into the cache); once its band is clean,
 * from the band again (a full-stroke seek away).
 */
static void test_read_from_cache(void)
{
    NcqModel *m = dm_model(0, 1);
    uint64_t far = ncq_model_params(m)->capacity - 4096;
    int64_t t = 0, e;
    NcqCompletion c;

    one(m, NCQ_OP_WRITE, far, 8, &t);
    one(m, NCQ_OP_WRITE, 1000000, 8, &t);   /* the head on the cache */
    c = one(m, NCQ_OP_READ, far, 8, &t);
    CHECK(c.seek_ns == 0, "cached read seek %lld", (long long)c.seek_ns);
    one(m, NCQ_OP_WRITE, 2000000, 8, &t);
    c = one(m, NCQ_OP_READ, far + 8, 8, &t);  /* not cached */
    CHECK(c.seek_ns > 10 * MS, "uncached read seek %lld",
          (long long)c.seek_ns);
    while ((e = ncq_model_next_event(m)) != INT64_MAX) {
        ncq_model_advance(m, e, &c, 1);
        t = e;
    }
    one(m, NCQ_OP_WRITE, 3000000, 8, &t);     /* back on the cache */
    c = one(m, NCQ_OP_READ, far, 8, &t);
    CHECK(c.seek_ns > 10 * MS, "cleaned read seek %lld",
          (long long)c.seek_ns);
    ncq_model_free(m);
}

/* A mixed queued workload: the completions of @m, into @out. */
static int run_mixed(NcqModel *m, int steps, uint64_t seed, int64_t *t,
                     NcqCompletion *out, int max)
{
    uint64_t r = seed, cap = ncq_model_params(m)->capacity;
    bool busy[8] = { false };
    int n = 0, i;

    for (i = 0; i < steps; i++) {
        uint32_t tag = (uint32_t)(ncq_test_rng(&r) % 8);
        NcqCompletion c[8];
        int k, j;

        /* mostly busy (the cache fills), now and then idle 3 s */
        *t += i % 100 == 99 ? 3 * SEC :
              (int64_t)(ncq_test_rng(&r) % (20 * MS));
        k = ncq_model_advance(m, *t, c, 8);
        for (j = 0; j < k; j++) {
            busy[c[j].id] = false;
            if (n < max) {
                out[n++] = c[j];
            }
        }
        if (!busy[tag] &&
            ncq_test_submit(m, tag, ncq_test_rng(&r) % 3 ? NCQ_OP_WRITE :
                            NCQ_OP_READ, rnd_lba(&r, cap) % 200000000, 8,
                            *t) == 0) {
            busy[tag] = true;
        }
    }
    return n;
}

static bool same(const NcqCompletion *a, const NcqCompletion *b, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        if (a[i].id != b[i].id || a[i].lba != b[i].lba ||
            a[i].complete_ns != b[i].complete_ns) {
            return false;
        }
    }
    return true;
}

/*
 * Same inputs, same completions; a state saved with extents in the cache
 * and a cleaning pending loads into a new model that carries on alike.
 */
static void test_determinism_and_state(void)
{
    static NcqCompletion a[4000], b[4000], a2[4000], b2[4000];
    NcqModel *m1 = dm_model(32, 9), *m2 = dm_model(32, 9), *m3;
    int64_t t1 = 0, t2 = 0, t3;
    int na, nb, na2, nb2;
    NcqMcInfo i1, i3;
    size_t len;
    void *buf;
    char err[256];

    na = run_mixed(m1, 400, 11, &t1, a, 4000);
    nb = run_mixed(m2, 400, 11, &t2, b, 4000);
    CHECK(na == nb && na >= 50 && same(a, b, na), "two runs differ");
    ncq_model_mc_info(m1, &i1);
    CHECK(i1.extents > 0 && i1.cleaned > 0 && i1.forced > 0,
          "the run filled and cleaned the cache (%u extents, %llu cleaned, "
          "%llu forced)", i1.extents, (unsigned long long)i1.cleaned,
          (unsigned long long)i1.forced);
    len = ncq_model_state_size(m1);
    buf = malloc(len);
    CHECK(ncq_model_state_save(m1, buf, len) == 0, "save");
    m3 = dm_model(32, 77);
    CHECK(ncq_model_state_load(m3, buf, len, err, sizeof(err)) == 0,
          "load: %s", err);
    ncq_model_mc_info(m3, &i3);
    CHECK(i1.extents == i3.extents && i1.sectors == i3.sectors &&
          i1.cleaned == i3.cleaned && i1.forced == i3.forced,
          "media cache info after load");
    t3 = t1;
    na2 = run_mixed(m1, 400, 12, &t1, a2, 4000);
    nb2 = run_mixed(m3, 400, 12, &t3, b2, 4000);
    CHECK(na2 == nb2 && same(a2, b2, na2), "loaded model carries on "
          "differently");
    printf("determinism: %d + %d completions identical, %u extents "
           "through a %zu-byte saved state\n", na, na2, i1.extents, len);
    /* a model without a cache does not take this state */
    {
        NcqModel *cmr = ncq_test_model("st3400620as", 1);

        CHECK(ncq_model_state_load(cmr, buf, len, err, sizeof(err)) < 0,
              "loaded into another model");
        ncq_model_free(cmr);
    }
    free(buf);
    ncq_model_free(m1);
    ncq_model_free(m2);
    ncq_model_free(m3);
}

/* A power cut during an idle cleaning: the band stays in the cache. */
static void test_power_loss_during_cleaning(void)
{
    NcqModel *m = dm_model(0, 1);
    uint64_t r = 13;
    int64_t t = 0;
    NcqMcInfo mi;

    write_burst(m, 3, &r, &t);
    ncq_model_power_loss(m, t + 1 * SEC + 100 * MS);  /* mid-cleaning */
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.cleaned, 0);
    CHECK_EQ(mi.extents, 3);
    ncq_model_free(m);
}

/*
 * What the device shows and traces: ncq_model_mc_state() through an
 * idle cleaning (waiting, cleaning, none) and a forced one, and
 * ncq_model_mc_events() giving each band's cleaning once, with its times,
 * its extents and whether it was forced or interrupted.
 */
static void test_state_and_events(void)
{
    NcqModel *m = dm_model(4, 1);
    uint64_t r = 17, cap = ncq_model_params(m)->capacity;
    int64_t t = 0, until, t0, e;
    NcqMcEvent ev[NCQ_MC_EVENTS];
    uint32_t band;
    NcqMcInfo mi;
    NcqCompletion c;
    int n;

    write_burst(m, 4, &r, &t);
    CHECK_EQ(ncq_model_mc_events(m, ev, NCQ_MC_EVENTS), 0);
    /* the 5th write waits behind the oldest extent's band */
    t0 = t;
    CHECK(ncq_test_submit(m, 0, NCQ_OP_WRITE, rnd_lba(&r, cap), 8, t) == 0,
          "submit");
    n = ncq_model_mc_events(m, ev, NCQ_MC_EVENTS);
    CHECK_EQ(n, 1);
    /* while the write waits behind it, the state says so */
    CHECK_EQ(ncq_model_mc_state(m, (ev[0].start_ns + ev[0].end_ns) / 2,
                                &band, &until), NCQ_MC_FORCED);
    CHECK(until == ev[0].end_ns, "forced until its end");
    CHECK(ncq_model_advance(m, ncq_model_next_event(m), &c, 1) == 1,
          "the write completes");
    t = c.complete_ns;
    CHECK(ev[0].forced && ev[0].done, "forced, done");
    CHECK_EQ(ev[0].extents, 1);
    CHECK(ev[0].start_ns >= t0 && ev[0].end_ns <= t &&
          ev[0].end_ns - ev[0].start_ns > 600 * MS,
          "forced cleaning %lld..%lld within the write %lld..%lld",
          (long long)ev[0].start_ns, (long long)ev[0].end_ns,
          (long long)t0, (long long)t);
    CHECK_EQ(ncq_model_mc_events(m, ev, NCQ_MC_EVENTS), 0);  /* taken */
    /* idle: waiting for the idle delay, then cleaning, band by band */
    CHECK(ncq_model_advance(m, t + 500 * MS, &c, 1) == 0, "no completion");
    CHECK_EQ(ncq_model_mc_state(m, t + 500 * MS, &band, &until),
             NCQ_MC_WAITING);
    CHECK(until == t + 1 * SEC, "waits the 1 s idle delay (%lld)",
          (long long)(until - t));
    CHECK(ncq_model_advance(m, t + 1 * SEC + 1, &c, 1) == 0, "none");
    CHECK_EQ(ncq_model_mc_state(m, t + 1 * SEC + 1, &band, &until),
             NCQ_MC_CLEANING);
    while ((e = ncq_model_next_event(m)) != INT64_MAX) {
        CHECK(ncq_model_advance(m, e, &c, 1) == 0, "no completion");
    }
    ncq_model_mc_info(m, &mi);
    CHECK_EQ(mi.extents, 0);
    n = ncq_model_mc_events(m, ev, NCQ_MC_EVENTS);
    CHECK_EQ(n, (int)(mi.cleaned - mi.forced));
    CHECK(n >= 1 && !ev[0].forced && ev[0].done &&
          ev[0].start_ns == t + 1 * SEC, "the first idle band at +1 s");
    CHECK(n < 2 || ev[1].start_ns == ev[0].end_ns, "then the next at once");
    CHECK_EQ(ncq_model_mc_state(m, e, &band, &until), NCQ_MC_NONE);
    printf("events: a forced band %.0f ms, %d idle bands from +1 s\n",
           (ev[0].end_ns - ev[0].start_ns) / 1e6, n);
    ncq_model_free(m);

    /* a power cut mid-cleaning: the band's cleaning, not done */
    m = dm_model(0, 1);
    t = 0;
    write_burst(m, 3, &r, &t);
    ncq_model_power_loss(m, t + 1 * SEC + 100 * MS);
    n = ncq_model_mc_events(m, ev, NCQ_MC_EVENTS);
    CHECK_EQ(n, 1);
    CHECK(!ev[0].done && !ev[0].forced && ev[0].start_ns == t + 1 * SEC &&
          ev[0].end_ns == t + 1 * SEC + 100 * MS, "interrupted");
    ncq_model_free(m);
}

static void expect_bad(const char *extra, const char *want)
{
    char text[2048], err[256];
    NcqParams *p;

    snprintf(text, sizeof(text), "%s%s", NCQ_TEST_SMALL, extra);
    CHECK(ncq_params_parse(text, "bad.ncqm", &p, err, sizeof(err)) < 0,
          "accepted: %s", extra);
    CHECK(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
}

static void test_bad_files(void)
{
    expect_bad("[media_cache]\nmap_extents = 10\n", "without sectors");
    expect_bad("[media_cache]\nsectors = 1000\nlba = 900\nmap_extents = 4\n"
               "band_kib = 16\n", "does not fit");
    expect_bad("[media_cache]\nsectors = 100\nmap_extents = 0\n"
               "band_kib = 16\n", "map_extents");
    expect_bad("[media_cache]\nsectors = 100\nmap_extents = 4\n",
               "band_kib");
}

int main(void)
{
    test_absorbs();
    test_full_forces_cleaning();
    test_idle_cleaning();
    test_read_from_cache();
    test_determinism_and_state();
    test_power_loss_during_cleaning();
    test_state_and_events();
    test_bad_files();
    return ncq_test_done("dmsmr");
}
