/*
 * ncq-sim --validate: the model's value of each key of a figures file.
 *
 * Parameter keys read the model's parameters; seek keys evaluate its seek
 * curve as a data sheet defines the figure; media keys run a sequential
 * reader on the model; experiment keys run the closed loop of ncq-sim
 * itself, given as the command line a user would type (the method
 * strings below), so every value can be reproduced by hand.  Each key's
 * method is in docs/validation/README.md.  All of it is deterministic.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-sim.h"
#include "validate.h"

/* pairs of random LBAs averaged for avg_seek_ms */
#define SEEK_PAIRS 1000000
/* the sequential reader of the media keys: 128 KiB reads over 64 MiB */
#define MEDIA_SECTORS 256
#define MEDIA_SPAN (64 * 2048)
/* its first reads (the seek to the zone) are not part of the rate */
#define MEDIA_WARMUP 4
/* bin of the real-time reads' response times for starvation_s, ns */
#define SPIKE_BIN_NS 10000000

typedef bool (*KeyFn)(const char *model, uint64_t seed, unsigned n,
                      double *v, const char **why);

typedef struct Key {
    const char *name;         /* '#' stands for a depth 1..32 */
    VKeyInfo info;
    KeyFn fn;
    unsigned arg;             /* @fn's figure, unless the name has '#' */
} Key;

/* ---- the closed loop of ncq-sim, as a command line ---- */

/* Run ncq-sim's closed loop with @args (words separated by spaces). */
static void sim(const char *model, uint64_t seed, const char *args,
                Opts *o, Result *r)
{
    char buf[256], seeds[24], *argv[40], *save = NULL, *tok;
    int argc = 0;

    snprintf(buf, sizeof(buf), "%s", args);
    snprintf(seeds, sizeof(seeds), "%" PRIu64, seed);
    argv[argc++] = (char *)"ncq-sim";
    argv[argc++] = (char *)"--model";
    argv[argc++] = (char *)model;
    argv[argc++] = (char *)"--seed";
    argv[argc++] = seeds;
    for (tok = strtok_r(buf, " ", &save); tok && argc < 39;
         tok = strtok_r(NULL, " ", &save)) {
        argv[argc++] = tok;
    }
    argv[argc] = NULL;
    optind = 0;         /* glibc: start a fresh scan */
    opts_parse(o, argc, argv);
    o->model = model;   /* argv's strings die with this frame */
    run(o, o->depth, NULL, 0, r);
}

static double secs(const Result *r)
{
    return r->t_end > 0 ? r->t_end / 1e9 : 1;
}

static bool is_hdd(const char *model, const char **why)
{
    NcqParams *p = ncq_params_builtin(model);
    bool hdd = p && p->kind == NCQ_KIND_HDD;

    ncq_params_free(p);
    if (!hdd) {
        *why = "the model is not a hard disk";
    }
    return hdd;
}

/* Commands per second of a closed-loop run: @fmt takes the depth. */
static double iops_at(const char *model, uint64_t seed, const char *fmt,
                      unsigned depth)
{
    char args[64];
    Opts o;
    Result r;
    double iops;

    snprintf(args, sizeof(args), fmt, depth);
    sim(model, seed, args, &o, &r);
    iops = r.done / secs(&r);
    result_free(&r);
    return iops;
}

static bool key_tablev(const char *model, uint64_t seed, unsigned n,
                       double *v, const char **why)
{
    *v = iops_at(model, seed, "--depth %u --count 50000", n);
    return true;
}

static bool key_tablev_max(const char *model, uint64_t seed, unsigned n,
                           double *v, const char **why)
{
    char args[64];
    Opts o;
    Result r;
    long i;

    snprintf(args, sizeof(args), "--depth %u --count 50000", n);
    sim(model, seed, args, &o, &r);
    *v = 0;
    for (i = 0; i < r.nlat; i++) {
        if (r.lat[i] / 1e9 > *v) {
            *v = r.lat[i] / 1e9;
        }
    }
    result_free(&r);
    return true;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/*
 * The spike: the mean of the response times in the most populated
 * SPIKE_BIN_NS bin (the later bin on a tie), from sorted @lat.
 */
static double spike_of(const int64_t *lat, long n)
{
    long i = 0, best_n = 0, best_i = 0;
    double sum = 0;

    while (i < n) {
        long j = i;

        while (j < n && lat[j] / SPIKE_BIN_NS == lat[i] / SPIKE_BIN_NS) {
            j++;
        }
        if (j - i >= best_n) {
            best_n = j - i;
            best_i = i;
        }
        i = j;
    }
    for (i = best_i; i < best_i + best_n; i++) {
        sum += lat[i];
    }
    return sum / best_n / 1e9;
}

static bool key_starvation(const char *model, uint64_t seed, unsigned n,
                           double *v, const char **why)
{
    Opts o;
    Result r;
    int64_t *rt;
    long i, k = 0;

    sim(model, seed, "--group 20:0:20% --group 1:80%:100% --depth 21 "
        "--count 60000", &o, &r);
    rt = malloc((r.nlat + 1) * sizeof(*rt));
    if (!rt) {
        die("out of memory%s", "");
    }
    for (i = 0; i < r.nlat; i++) {
        if (r.grp[i] == 1) {
            rt[k++] = r.lat[i];
        }
    }
    qsort(rt, k, sizeof(*rt), cmp64);
    if (k >= 3) {
        *v = spike_of(rt, k);
    } else {
        *why = "fewer than 3 real-time reads completed";
    }
    free(rt);
    result_free(&r);
    return k >= 3;
}

static bool key_rand256k_d1(const char *model, uint64_t seed, unsigned n,
                            double *v, const char **why)
{
    Opts o;
    Result r;
    long i;

    sim(model, seed, "--clients 1 --depth 1 --size 512 --count 2000",
        &o, &r);
    *v = 0;
    for (i = 0; i < r.nlat; i++) {
        *v += r.lat[i] / 1e6;
    }
    *v /= r.nlat ? r.nlat : 1;
    result_free(&r);
    return true;
}

static bool key_rand256k_iops(const char *model, uint64_t seed, unsigned n,
                              double *v, const char **why)
{
    *v = iops_at(model, seed, "--depth %u --size 512 --count 20000", n);
    return true;
}

/* The SSD figures: @n says which (0 read, 1 write; +2 sequential MB/s). */
static bool key_ssd(const char *model, uint64_t seed, unsigned n,
                    double *v, const char **why)
{
    static const char *const args[] = {
        "--depth 32 --count 200000",
        "--depth 32 --count 200000 --read-ratio 0",
        "--pattern stream --size 256 --depth 32 --count 20000",
        "--pattern stream --size 256 --depth 32 --count 20000 "
        "--read-ratio 0",
    };
    Opts o;
    Result r;

    sim(model, seed, args[n], &o, &r);
    *v = n < 2 ? r.done / secs(&r) : r.sectors * 512 / 1e6 / secs(&r);
    result_free(&r);
    return true;
}

/* ---- parameters and the seek curve ---- */

/*
 * Parameter figure @n: capacity, GB, rpm, buffer KiB, queue depth, average
 * rotational latency (half a revolution, what a data sheet's "average
 * latency" is: the mean wait for a uniformly placed sector).
 */
static bool key_param(const char *model, uint64_t seed, unsigned n,
                      double *v, const char **why)
{
    NcqParams *p = ncq_params_builtin(model);

    if ((n == 2 || n == 5) && p->kind != NCQ_KIND_HDD) {
        *why = "the model is not a hard disk";
        ncq_params_free(p);
        return false;
    }
    switch (n) {
    case 0:
        *v = p->capacity;
        break;
    case 1:
        *v = p->capacity * 512.0 / 1e9;
        break;
    case 2:
        *v = p->rpm;
        break;
    case 3:
        *v = p->kind == NCQ_KIND_SSD ? p->write_buffer_bytes / 1024.0 :
             ((double)p->cache_segments * p->segment_sectors +
              p->write_cache_sectors) / 2;
        break;
    case 4:
        *v = p->queue_depth;
        break;
    default:
        *v = 30000.0 / p->rpm;
    }
    ncq_params_free(p);
    return true;
}

/* A model of @model with @seed (a built-in: it cannot fail). */
static NcqModel *model_of(const char *model, uint64_t seed)
{
    NcqParams *p = ncq_params_builtin(model);
    char err[256];
    NcqModel *m = ncq_model_new(p, seed, err, sizeof(err));

    ncq_params_free(p);
    if (!m) {
        die("%s", err);
    }
    return m;
}

/* Seek @n of @model: 0 average, 1 one cylinder, 2 full stroke, 3 head. */
static bool seek_figure(const char *model, uint64_t seed, unsigned n,
                        double *v, const char **why)
{
    NcqModel *m;
    const NcqParams *p;
    double jit;

    if (!is_hdd(model, why)) {
        return false;
    }
    m = model_of(model, seed);
    p = ncq_model_params(m);
    jit = p->seek_jitter_ns / 2.0;
    if (n == 0) {
        uint64_t rs = seed, cap = p->capacity, pairs = 0;
        double sum = 0;
        long i;

        for (i = 0; i < SEEK_PAIRS; i++) {
            NcqPhys a, b;

            ncq_model_lba_to_phys(m, ncq_rng_next(&rs) % cap, &a);
            ncq_model_lba_to_phys(m, ncq_rng_next(&rs) % cap, &b);
            if (a.cyl != b.cyl) {
                sum += ncq_model_seek_ns(m, a.cyl > b.cyl ? a.cyl - b.cyl :
                                         b.cyl - a.cyl) + jit;
                pairs++;
            }
        }
        *v = sum / pairs / 1e6;
    } else if (n == 3) {
        *v = (p->head_switch_ns + jit) / 1e6;
    } else {
        *v = (ncq_model_seek_ns(m, n == 1 ? 1 : p->cylinders - 1) + jit) /
             1e6;
    }
    ncq_model_free(m);
    return true;
}

/* ---- the media rate ---- */

/* The first LBA of zone @z or beyond (LBAs are in zone order). */
static uint64_t zone_first(NcqModel *m, uint32_t z)
{
    uint64_t lo = 0, hi = ncq_model_params(m)->capacity;

    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        NcqPhys ph;

        ncq_model_lba_to_phys(m, mid, &ph);
        if (ph.zone >= z) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* One synchronous read of MEDIA_SECTORS at @lba from @t; its completion. */
static int64_t media_read(NcqModel *m, uint64_t lba, int64_t t)
{
    NcqCmd c = { .op = NCQ_OP_READ, .lba = lba, .sectors = MEDIA_SECTORS,
                 .queued = true };
    NcqCompletion comp;
    int n;

    if (ncq_model_submit(m, &c, t) < 0) {
        die("internal: a media read was refused%s", "");
    }
    do {
        n = ncq_model_advance(m, ncq_model_next_event(m), &comp, 1);
    } while (n == 0);
    return comp.complete_ns;
}

/* MB/s of a sequential reader over [@lo, @hi), after its warm-up. */
static bool media_rate(const char *model, uint64_t seed, unsigned inner,
                       double *v, const char **why)
{
    NcqModel *m;
    uint64_t lo, hi, cap;
    int64_t t = 0, t0 = 0;
    long i, n;
    NcqPhys ph;

    if (!is_hdd(model, why)) {
        return false;
    }
    m = model_of(model, seed);
    cap = ncq_model_params(m)->capacity;
    ncq_model_lba_to_phys(m, cap - 1, &ph);
    lo = inner ? zone_first(m, ph.zone) : 0;
    hi = inner ? cap : (ph.zone ? zone_first(m, 1) : cap);
    if (hi - lo > MEDIA_SPAN) {
        lo = inner ? hi - MEDIA_SPAN : lo;
        hi = lo + MEDIA_SPAN;
    }
    n = (hi - lo) / MEDIA_SECTORS;
    if (n < 4 * MEDIA_WARMUP) {
        *why = "the zone holds too few sectors to measure";
        ncq_model_free(m);
        return false;
    }
    for (i = 0; i < n; i++) {
        t = media_read(m, lo + i * MEDIA_SECTORS, t);
        if (i == MEDIA_WARMUP - 1) {
            t0 = t;
        }
    }
    *v = (n - MEDIA_WARMUP) * MEDIA_SECTORS * 512.0 / ((t - t0) / 1e3);
    ncq_model_free(m);
    return true;
}

/* ---- drive-managed SMR's media cache (docs/smr.md) ---- */

/* One synchronous write of @n sectors at @lba from @t; its completion. */
static int64_t mc_write(NcqModel *m, uint64_t lba, uint32_t n, int64_t t)
{
    NcqCmd c = { .op = NCQ_OP_WRITE, .lba = lba, .sectors = n,
                 .queued = true };
    NcqCompletion comp;

    if (ncq_model_submit(m, &c, t) < 0) {
        die("internal: a media cache write was refused%s", "");
    }
    while (ncq_model_advance(m, ncq_model_next_event(m), &comp, 1) == 0) {
        /* the write completes */
    }
    return comp.complete_ns;
}

/*
 * Media cache figure @n, by filling it with back-to-back random writes
 * (write cache off, one at a time, seed @seed) until the first write that
 * has to wait for a band's cleaning: 0 the cache's size in GiB (1 MiB
 * writes: what it held then), 1 the extents its map held then (4 KiB
 * writes), 2 that cleaning's time in s (the write's latency less the mean
 * of those before it, 4 KiB writes).
 */
static bool key_mcache(const char *model, uint64_t seed, unsigned n,
                       double *v, const char **why)
{
    uint32_t size = n == 0 ? 2048 : 8;
    uint64_t r = seed, cap;
    int64_t t = 0, t0, sum = 0;
    NcqSettings s;
    char err[256];
    NcqMcInfo mi, prev;
    NcqModel *m;
    long i;

    m = model_of(model, seed);
    if (!ncq_model_params(m)->mc_sectors) {
        *why = "the model has no media cache (not drive-managed SMR)";
        ncq_model_free(m);
        return false;
    }
    cap = ncq_model_params(m)->capacity;
    ncq_model_get_settings(m, &s);
    s.write_cache = false;
    if (ncq_model_set_settings(m, &s, err, sizeof(err)) < 0) {
        die("%s", err);
    }
    ncq_model_mc_info(m, &prev);
    for (i = 0; i < 20000000; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        t0 = t;
        t = mc_write(m, (r >> 16) % (cap / size - 1) * size, size, t);
        ncq_model_mc_info(m, &mi);
        if (mi.forced) {
            break;
        }
        sum += t - t0;
        prev = mi;
    }
    *v = n == 0 ? prev.sectors * 512.0 / (1 << 30) :
         n == 1 ? prev.extents : (t - t0 - (double)sum / i) / 1e9;
    ncq_model_free(m);
    return true;
}

static const Key keys[] = {
    { "capacity_sectors", { "sectors", 0, "the capacity parameter" },
      key_param, 0 },
    { "capacity_gb", { "GB", 2, "capacity x 512 B / 10^9" }, key_param, 1 },
    { "rpm", { "rpm", 0, "the rpm parameter" }, key_param, 2 },
    { "cache_kib", { "KiB", 0, "buffer: segments x segment_kib + "
      "write_cache_kib (SSD: write buffer)" }, key_param, 3 },
    { "queue_depth", { "commands", 0, "the queue_depth parameter" },
      key_param, 4 },
    { "avg_latency_ms", { "ms", 2, "half a revolution: 30,000 / rpm" },
      key_param, 5 },
    { "avg_seek_ms", { "ms", 3, "seek curve + mean jitter, mean over "
      "10^6 random LBA pairs on different cylinders" }, seek_figure, 0 },
    { "track_to_track_ms", { "ms", 3, "seek(1 cylinder) + mean jitter" },
      seek_figure, 1 },
    { "full_stroke_ms", { "ms", 3, "seek(cylinders - 1) + mean jitter" },
      seek_figure, 2 },
    { "head_switch_ms", { "ms", 3, "head_switch_ms + mean jitter" },
      seek_figure, 3 },
    { "media_outer_mb_s", { "MB/s", 1, "one synchronous reader, 128 KiB "
      "sequential reads over the first 64 MiB of the first zone, first 4 "
      "reads left out" }, media_rate, 0 },
    { "media_inner_mb_s", { "MB/s", 1, "as media_outer_mb_s over the last "
      "64 MiB of the disk (last zone)" }, media_rate, 1 },
    { "tablev_d#", { "IOPS", 1, "ncq-sim --depth N --count 50000 (32 "
      "clients, 4 KiB random reads over the disk): IOPS" }, key_tablev },
    { "tablev_d#_max_s", { "s", 3, "as tablev_dN: the longest response "
      "time" }, key_tablev_max },
    { "starvation_s", { "s", 3, "ncq-sim --group 20:0:20% --group "
      "1:80%:100% --depth 21 --count 60000: mean of group 1's response "
      "times in their most populated 10 ms bin" }, key_starvation },
    { "rand256k_d1_ms", { "ms", 2, "ncq-sim --clients 1 --depth 1 --size "
      "512 --count 2000: mean response time" }, key_rand256k_d1 },
    { "rand256k_iops_d#", { "IOPS", 1, "ncq-sim --depth N --size 512 "
      "--count 20000 (32 clients): IOPS" }, key_rand256k_iops },
    { "ssd_rand_read_iops", { "IOPS", 0, "ncq-sim --depth 32 --count "
      "200000: IOPS" }, key_ssd, 0 },
    { "ssd_rand_write_iops", { "IOPS", 0, "ncq-sim --depth 32 --count "
      "200000 --read-ratio 0: IOPS" }, key_ssd, 1 },
    { "ssd_seq_read_mb_s", { "MB/s", 1, "ncq-sim --pattern stream --size "
      "256 --depth 32 --count 20000: MB/s" }, key_ssd, 2 },
    { "ssd_seq_write_mb_s", { "MB/s", 1, "as ssd_seq_read_mb_s with "
      "--read-ratio 0" }, key_ssd, 3 },
    { "mc_size_gib", { "GiB", 2, "1 MiB random writes one at a time "
      "(write cache off) until the first waits for a cleaning: the "
      "sectors the media cache held then" }, key_mcache, 0 },
    { "mc_map_extents", { "extents", 0, "as mc_size_gib with 4 KiB "
      "writes: the extents its map held then" }, key_mcache, 1 },
    { "mc_band_clean_s", { "s", 3, "as mc_map_extents: that write's "
      "latency less the mean of those before it" }, key_mcache, 2 },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/*
 * Whether @key is @k's, a '#' in its name standing for a depth 1..32:
 * *@n is that depth, or the key's figure.
 */
static bool key_match(const Key *k, const char *key, unsigned *n)
{
    const char *h = strchr(k->name, '#');
    size_t pre = h ? (size_t)(h - k->name) : 0, len = 0;
    uint64_t d;

    if (!h) {
        *n = k->arg;
        return !strcmp(k->name, key);
    }
    if (strncmp(k->name, key, pre) || key[pre] < '1' || key[pre] > '9') {
        return false;
    }
    while (isdigit((unsigned char)key[pre + len])) {
        len++;
    }
    if (ncq_parse_uint(key + pre, len, NCQ_MAX_TAGS, &d) < 0) {
        return false;
    }
    *n = (unsigned)d;
    return !strcmp(key + pre + len, h + 1);
}

static const Key *key_find(const char *key, unsigned *n)
{
    size_t i;

    for (i = 0; i < NKEYS; i++) {
        if (key_match(&keys[i], key, n)) {
            return &keys[i];
        }
    }
    return NULL;
}

bool vkey_info(const char *key, VKeyInfo *info)
{
    unsigned n;
    const Key *k = key_find(key, &n);

    if (k) {
        *info = k->info;
    }
    return k != NULL;
}

bool vkey_value(const char *model, uint64_t seed, const char *key,
                double *v, const char **why)
{
    unsigned n;
    const Key *k = key_find(key, &n);

    *why = "the tool does not compute this key";
    return k && k->fn(model, seed, n, v, why);
}
