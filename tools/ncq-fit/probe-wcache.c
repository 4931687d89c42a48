/*
 * ncq-fit-probe: the size of the write cache, with --allow-writes and the
 * write cache on.  After a FLUSH (the cache is clean), a burst of 64 KiB
 * O_DIRECT writes at depth 1 to places far apart: the drive takes each
 * one into its cache at the link's rate until the cache is full; from
 * then on each write waits for the drive to write one earlier write to
 * the media (a seek and a rotational wait), and the first such wait marks
 * the cache's size (ncqfit/wcache.py).  Places far apart make the drive's
 * own destaging meanwhile slow, so little of the cache is freed during
 * the burst, and what is, the fit accounts for.
 *
 * The writes write back what the same places held: each place is read
 * first, and nothing changes on the disk unless the power fails during
 * the burst.  Passes grow (16, 64, 128 MiB) until one fills the cache.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

#define WC_KIB         64
#define WC_BYTES       (WC_KIB * 1024)
#define WC_AFTER_STALL 48       /* writes after the first wait: its cost */
#define WC_IDLE_US     100000   /* quiet before the burst */

static const int pass_writes[] = { 256, 1024, 2048 };

double probe_wcache_plan(Probe *p)
{
    /* the first pass: a random read and a write per place, the flush */
    return p->allow_writes ? 256 * 0.015 + 1.0 : 0;
}

/* Is the write cache on?  IDENTIFY word 85 bit 5 */
static bool wcache_on(Probe *p)
{
    uint16_t id[256];

    return probe_identify(p, id) == 0 && (id[85] & (1 << 5));
}

/* @n places far apart, in a random order, aligned to the write size */
static void wcache_places(Probe *p, uint64_t *lba, int n, uint64_t *seed)
{
    uint64_t span = (p->sectors - WC_BYTES / PROBE_SECTOR) / n;

    for (int i = 0; i < n; i++) {
        uint64_t off = probe_rand(seed) % (span / 2);

        lba[i] = (span * i + off) & ~(uint64_t)(WC_BYTES / PROBE_SECTOR - 1);
    }
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(probe_rand(seed) % (uint64_t)(i + 1));
        uint64_t t = lba[i];

        lba[i] = lba[k];
        lba[k] = t;
    }
}

/*
 * The burst: the writes it made, or -1 if one failed; *@first: the first
 * that waited for the media, or -1.  It stops WC_AFTER_STALL writes after
 * that one.
 */
static int wcache_burst(Probe *p, int wfd, char *data, const uint64_t *lba,
                        int n, int64_t *start, int64_t *resp, int *first)
{
    int64_t t0, min_r = INT64_MAX;
    int i;

    t0 = probe_now();
    *first = -1;
    for (i = 0; i < n && (*first < 0 || i < *first + WC_AFTER_STALL); i++) {
        int64_t t = probe_now();

        if (pwrite(wfd, data + (size_t)i * WC_BYTES, WC_BYTES,
                   (off_t)(lba[i] * PROBE_SECTOR)) != WC_BYTES) {
            return -1;
        }
        resp[i] = probe_now() - t;
        start[i] = t - t0;
        min_r = resp[i] < min_r ? resp[i] : min_r;
        if (*first < 0 && resp[i] > min_r + p->rev_ns / 4) {
            *first = i;
        }
    }
    return i;
}

static void wcache_record(Probe *p, int n, int done, int first,
                          const int64_t *start, const int64_t *resp,
                          int64_t flush_ns)
{
    fprintf(p->out, "{\"type\":\"wcache\",\"write_kib\":%d,\"writes\":%d,"
            "\"first_wait\":%d,\"flush_ns\":%lld,\"start_ns\":[", WC_KIB, n,
            first, (long long)flush_ns);
    for (int i = 0; i < done; i++) {
        fprintf(p->out, "%s%lld", i ? "," : "", (long long)start[i]);
    }
    fprintf(p->out, "],\"r_ns\":[");
    for (int i = 0; i < done; i++) {
        fprintf(p->out, "%s%lld", i ? "," : "", (long long)resp[i]);
    }
    fprintf(p->out, "]}\n");
}

/* One pass of @n places; 1 if the cache filled, 0 if not, -1 on error */
static int wcache_pass(Probe *p, int wfd, int n, uint64_t *seed)
{
    char *data = probe_buffer((size_t)n * WC_BYTES);
    uint64_t *lba = calloc(n, sizeof(*lba));
    int64_t *start = calloc(n, sizeof(*start));
    int64_t *resp = calloc(n, sizeof(*resp));
    int64_t t;
    int first = -1, done = 0, rc = -1;

    if (!data || !lba || !start || !resp) {
        probe_skipped(p, "wcache", "not enough memory for the pass");
        goto out;
    }
    wcache_places(p, lba, n, seed);
    for (int i = 0; i < n; i++) {
        if (probe_pread(p, data + (size_t)i * WC_BYTES, lba[i],
                        WC_BYTES) != 0) {
            probe_skipped(p, "wcache", "a 64 KiB O_DIRECT read failed");
            goto out;
        }
        probe_progress(p, 0.8 * (i + 1) / n);
    }
    if (fdatasync(wfd) != 0) {
        probe_skipped(p, "wcache", "the FLUSH before the burst failed");
        goto out;
    }
    usleep(WC_IDLE_US);
    done = wcache_burst(p, wfd, data, lba, n, start, resp, &first);
    if (done < 0) {
        probe_skipped(p, "wcache", "a 64 KiB O_DIRECT write failed");
        goto out;
    }
    t = probe_now();
    if (fdatasync(wfd) != 0) {
        probe_skipped(p, "wcache", "the FLUSH after the burst failed");
        goto out;
    }
    wcache_record(p, n, done, first, start, resp, probe_now() - t);
    rc = first >= 0;
out:
    free(data);
    free(lba);
    free(start);
    free(resp);
    return rc;
}

int probe_wcache(Probe *p)
{
    uint64_t seed = 0x3c4c4eULL;
    int wfd, rc = 0;

    if (!p->allow_writes) {
        return 0;
    }
    probe_phase_start(p, "wcache", probe_wcache_plan(p));
    if (!p->rev_ns) {
        /* a wait for the media is told from a quarter revolution */
        probe_skipped(p, "wcache", "needs the rpm phase");
        probe_phase_end(p);
        return 0;
    }
    if (!wcache_on(p)) {
        probe_skipped(p, "wcache", "the write cache is off (IDENTIFY word "
                      "85 bit 5)");
        probe_phase_end(p);
        return 0;
    }
    wfd = open(p->dev, O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (wfd < 0) {
        probe_skipped(p, "wcache", "cannot open the device for writing");
        probe_phase_end(p);
        return 0;
    }
    for (size_t i = 0; i < sizeof(pass_writes) / sizeof(pass_writes[0]) &&
         rc == 0; i++) {
        rc = wcache_pass(p, wfd, pass_writes[i], &seed);
    }
    if (rc == 0) {
        probe_skipped(p, "wcache", "the cache did not fill in 128 MiB of "
                      "writes");
    }
    close(wfd);
    probe_phase_end(p);
    return 0;
}
