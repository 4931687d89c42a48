/*
 * The power-loss undo store (undo.c) against a sector-by-sector
 * reference: random writes, volatile sets and prunes over a small disk;
 * after every step the store must keep exactly the sectors, with exactly
 * the old contents, the reference keeps, ask for exactly the span of
 * sectors it lacks, and survive a save/load round trip.  Damaged saved
 * data is refused.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define DISK 300            /* sectors */
#define STEPS 4000

static uint32_t image[DISK];    /* version of each sector on the "image" */
static uint32_t kept_val[DISK];
static int kept[DISK];

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

static void fill(uint8_t *p, uint32_t version)
{
    int i;

    for (i = 0; i < 512; i++) {
        p[i] = (uint8_t)(version * 7 + i * 13 + (version >> 8));
    }
    memcpy(p, &version, sizeof(version));
}

static int in_vol(const NcqRange *v, int n, uint64_t k)
{
    int i;

    for (i = 0; i < n; i++) {
        if (k >= v[i].lba && k < v[i].lba + v[i].sectors) {
            return 1;
        }
    }
    return 0;
}

/* Random sorted, disjoint ranges, as ncq_model_volatile() gives. */
static int random_vol(NcqRange *v)
{
    uint64_t pos = rnd(20);
    int n = 0;

    while (pos < DISK && n < 12) {
        uint64_t len = 1 + rnd(40);

        if (pos + len > DISK) {
            len = DISK - pos;
        }
        v[n++] = (NcqRange) { pos, len };
        pos += len + 1 + rnd(50);
    }
    return n;
}

typedef struct Seen {
    uint64_t next;          /* pieces come in LBA order */
    int count[DISK];
    int bad;
} Seen;

static int collect(void *opaque, uint64_t lba, uint64_t n,
                   const uint8_t *data)
{
    Seen *s = opaque;
    uint8_t want[512];
    uint64_t k;

    if (lba < s->next || lba + n > DISK) {
        s->bad++;
    }
    s->next = lba + n;
    for (k = lba; k < lba + n && k < DISK; k++) {
        s->count[k]++;
        fill(want, kept_val[k]);
        if (!kept[k] || memcmp(want, data + (k - lba) * 512, 512)) {
            s->bad++;
        }
    }
    return 0;
}

/* The store gives back exactly the kept sectors inside @v, old contents. */
static void check_store(NcqUndo *u, const NcqRange *v, int nv, int step)
{
    Seen *s = calloc(1, sizeof(*s));
    uint64_t k, total = 0;

    ncq_undo_foreach(u, v, nv, collect, s);
    for (k = 0; k < DISK; k++) {
        int want = kept[k] && in_vol(v, nv, k);

        total += kept[k];
        CHECK(s->count[k] == want, "step %d sector %" PRIu64 ": given back "
              "%d times, want %d", step, k, s->count[k], want);
    }
    CHECK(!s->bad, "step %d: %d wrong or out-of-order sectors", step, s->bad);
    CHECK_EQ(ncq_undo_sectors(u), total);
    free(s);
}

static void test_random(void)
{
    NcqUndo *u = ncq_undo_new();
    NcqRange all = { 0, DISK }, v[16];
    uint32_t version = 1;
    int step;

    for (step = 0; step < STEPS; step++) {
        int nv = random_vol(v);
        uint64_t lba = rnd(DISK), n = 1 + rnd(64), k, first = 0, count;
        uint64_t lo = UINT64_MAX, hi = 0;

        if (lba + n > DISK) {
            n = DISK - lba;
        }
        if (rnd(10) == 0) {
            ncq_undo_prune(u, v, nv);
            for (k = 0; k < DISK; k++) {
                kept[k] = kept[k] && in_vol(v, nv, k);
            }
            check_store(u, &all, 1, step);
            continue;
        }
        /* a write of [lba, lba + n) */
        for (k = lba; k < lba + n; k++) {
            if (kept[k] && !in_vol(v, nv, k)) {
                kept[k] = 0;
            }
            if (!kept[k]) {
                lo = lo < k ? lo : k;
                hi = k + 1;
            }
        }
        count = ncq_undo_prepare(u, lba, n, v, nv, &first);
        CHECK_EQ(count, lo == UINT64_MAX ? 0 : hi - lo);
        if (count) {
            uint8_t *buf = malloc(count * 512);

            CHECK_EQ(first, lo);
            for (k = first; k < first + count; k++) {
                fill(buf + (k - first) * 512, image[k]);
                if (!kept[k]) {
                    kept[k] = 1;
                    kept_val[k] = image[k];
                }
            }
            CHECK_EQ(ncq_undo_keep(u, first, count, buf), 0);
            free(buf);
        }
        for (k = lba; k < lba + n; k++) {
            image[k] = ++version;
        }
        check_store(u, &all, 1, step);
        check_store(u, v, nv, step);
        if (step % 97 == 0) {
            /* a migration: the copy keeps the same */
            NcqUndo *copy = ncq_undo_new();
            size_t len = ncq_undo_save_size(u);
            uint8_t *blob = malloc(len + 1);
            char err[128];

            ncq_undo_save(u, blob);
            CHECK_EQ(ncq_undo_load(copy, blob, len, err, sizeof(err)), 0);
            check_store(copy, &all, 1, step);
            CHECK_EQ(ncq_undo_extents(copy), ncq_undo_extents(u));
            ncq_undo_free(copy);
            free(blob);
        }
    }
    CHECK(ncq_undo_extents(u) > 0, "the run kept nothing");
    ncq_undo_free(u);
}

/* One big write costs one extent, not one entry per sector. */
static void test_one_extent_per_write(void)
{
    NcqUndo *u = ncq_undo_new();
    NcqRange v = { 1000, 65536 };
    uint8_t *buf = calloc(65536, 512);
    uint64_t first = 0;

    CHECK_EQ(ncq_undo_prepare(u, 1000, 65536, &v, 1, &first), 65536);
    CHECK_EQ(first, 1000);
    CHECK_EQ(ncq_undo_keep(u, first, 65536, buf), 0);
    CHECK_EQ(ncq_undo_extents(u), 1);
    CHECK_EQ(ncq_undo_sectors(u), 65536);
    /* the same sectors again, still volatile: nothing to read */
    CHECK_EQ(ncq_undo_prepare(u, 2000, 100, &v, 1, &first), 0);
    /* a hole punched by a write after the media got those sectors */
    v = (NcqRange) { 1000, 100 };
    CHECK_EQ(ncq_undo_prepare(u, 1200, 100, &v, 1, &first), 100);
    CHECK_EQ(first, 1200);
    CHECK_EQ(ncq_undo_extents(u), 2);
    CHECK_EQ(ncq_undo_sectors(u), 65436);
    ncq_undo_free(u);
    free(buf);
}

/* NCQUNDOD's header, its section's (name "extents") and extent count */
#define UNDO_HEAD (24 + 4 + 7 + 4 + 8 + 4 + 4)

/* The stream's checksum (FNV-1a 64, docs/model-state.md), to forge it. */
static void fix_checksum(uint8_t *b, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i;

    for (i = 0; i < len - 8; i++) {
        h = (h ^ b[i]) * 0x100000001b3ULL;
    }
    for (i = 0; i < 8; i++) {
        b[len - 8 + i] = h >> (56 - 8 * i);
    }
}

static void test_damaged_saves_are_refused(void)
{
    NcqUndo *u = ncq_undo_new(), *copy = ncq_undo_new();
    NcqRange all = { 0, 1 << 20 };
    uint8_t data[4 * 512] = { 1 }, *blob, *v1;
    uint64_t first;
    size_t len;
    char err[128] = "";

    ncq_undo_prepare(u, 10, 2, &all, 1, &first);
    ncq_undo_keep(u, 10, 2, data);
    ncq_undo_prepare(u, 20, 2, &all, 1, &first);
    ncq_undo_keep(u, 20, 2, data);
    len = ncq_undo_save_size(u);
    /* header, section "extents" and its count, the extents, checksum */
    CHECK_EQ(len, UNDO_HEAD + 2 * (16 + 1024) + 8);
    blob = malloc(len);
    ncq_undo_save(u, blob);
    CHECK(!memcmp(blob, "NCQUNDOD", 8), "the v2 magic");

    CHECK(ncq_undo_load(copy, blob, len - 1, err, sizeof(err)) < 0,
          "a short save loaded");
    CHECK(strstr(err, "damaged"), "%s", err);
    CHECK_EQ(ncq_undo_sectors(copy), 0);
    blob[UNDO_HEAD + 16 + 1024 + 7] = 11;   /* second extent at 11 */
    fix_checksum(blob, len);
    CHECK(ncq_undo_load(copy, blob, len, err, sizeof(err)) < 0,
          "overlapping extents loaded");
    CHECK(strstr(err, "malformed at byte 1095"), "%s", err);
    CHECK_EQ(ncq_undo_sectors(copy), 0);

    /* v1, the headerless form the builds before issue 39 wrote */
    v1 = blob + UNDO_HEAD;
    CHECK(ncq_undo_load(copy, v1, 2 * (16 + 1024) - 1, err,
                        sizeof(err)) < 0, "a short v1 stream loaded");
    CHECK(strstr(err, "malformed") || strstr(err, "short"), "%s", err);
    CHECK(ncq_undo_load(copy, v1, 2 * (16 + 1024), err, sizeof(err)) < 0,
          "overlapping v1 extents loaded");
    CHECK(strstr(err, "malformed at byte 1040"), "%s", err);
    CHECK_EQ(ncq_undo_load(copy, blob, 0, err, sizeof(err)), 0);
    CHECK_EQ(ncq_undo_sectors(copy), 0);
    free(blob);
    ncq_undo_free(u);
    ncq_undo_free(copy);
}

int main(void)
{
    test_random();
    test_one_extent_per_write();
    test_damaged_saves_are_refused();
    return ncq_test_done("test-undo");
}
