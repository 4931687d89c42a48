/*
 * Layout: LBA <-> (cylinder, head, sector) at zone, track and cylinder
 * boundaries, by hand, and round trips.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "ncq-int.h"

static void expect_map(NcqModel *m, uint64_t lba, uint32_t cyl,
                       uint32_t head, uint32_t sec, uint32_t zone)
{
    NcqPhys ph;
    uint64_t back = 0;

    CHECK_EQ(ncq_model_lba_to_phys(m, lba, &ph), 0);
    CHECK(ph.cyl == cyl && ph.head == head && ph.sector == sec &&
          ph.zone == zone, "lba %" PRIu64 " -> %u/%u/%u z%u, expected "
          "%u/%u/%u z%u", lba, ph.cyl, ph.head, ph.sector, ph.zone, cyl,
          head, sec, zone);
    CHECK_EQ(ncq_model_phys_to_lba(m, &ph, &back), 0);
    CHECK_EQ(back, lba);
}

static void test_small(void)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 1);
    NcqPhys ph;
    uint64_t lba, back;

    /* zone 0: 5 cylinders x 2 heads x 100 = 1000 sectors */
    CHECK_EQ(ncq_model_layout_sectors(m), 1000 + 5 * 2 * 80);
    expect_map(m, 0, 0, 0, 0, 0);
    expect_map(m, 99, 0, 0, 99, 0);      /* last sector of a track */
    expect_map(m, 100, 0, 1, 0, 0);      /* head switch */
    expect_map(m, 199, 0, 1, 99, 0);
    expect_map(m, 200, 1, 0, 0, 0);      /* cylinder switch */
    expect_map(m, 999, 4, 1, 99, 0);     /* end of zone 0 */
    expect_map(m, 1000, 5, 0, 0, 1);     /* zone boundary */
    expect_map(m, 1079, 5, 0, 79, 1);
    expect_map(m, 1080, 5, 1, 0, 1);
    expect_map(m, 1160, 6, 0, 0, 1);
    expect_map(m, 1799, 9, 1, 79, 1);    /* last sector */
    CHECK(ncq_model_lba_to_phys(m, 1800, &ph) < 0, "beyond layout");
    ph.cyl = 5;
    ph.head = 0;
    ph.sector = 80;                       /* zone 1 has 80 per track */
    CHECK(ncq_model_phys_to_lba(m, &ph, &back) < 0, "sector beyond track");
    ph.cyl = 10;
    ph.sector = 0;
    CHECK(ncq_model_phys_to_lba(m, &ph, &back) < 0, "cylinder beyond");
    for (lba = 0; lba < 1800; lba++) {
        CHECK_EQ(ncq_model_lba_to_phys(m, lba, &ph), 0);
        CHECK_EQ(ncq_model_phys_to_lba(m, &ph, &back), 0);
        CHECK_EQ(back, lba);
    }
    ncq_model_free(m);
}

static void test_spares(void)
{
    NcqModel *m;

    m = ncq_test_model_text(
        "[drive]\nname = sp\nmodel = SP\nkind = hdd\ncapacity = 1000\n"
        "rpm = 6000\n[layout]\nheads = 2\nzone = 0 5 100\nzone = 5 5 80\n"
        "spare_per_track = 4\n[seek]\ntype = table\npoint = 1 1\n"
        "point = 10 2\n", 1);
    /* 96 usable sectors per track in zone 0 */
    CHECK_EQ(ncq_model_layout_sectors(m), 5 * 2 * 96 + 5 * 2 * 76);
    expect_map(m, 95, 0, 0, 95, 0);
    expect_map(m, 96, 0, 1, 0, 0);
    expect_map(m, 192, 1, 0, 0, 0);
    expect_map(m, 960, 5, 0, 0, 1);
    ncq_model_free(m);
}

#define ZHEAD "[drive]\nname = z\nmodel = Z\nkind = hdd\ncapacity = 100\n" \
              "rpm = 6000\n[seek]\ntype = table\npoint = 1 1\n" \
              "point = 10 2\n[layout]\nheads = 2\n"

/* Spares at the end of each cylinder: the last track is short. */
static void test_spares_per_cylinder(void)
{
    NcqModel *m = ncq_test_model_text(ZHEAD "zone = 0 5 100 spares=4/cyl\n",
                                      1);
    NcqPhys ph = { .cyl = 0, .head = 1, .sector = 96 };
    uint64_t back;

    CHECK_EQ(ncq_model_layout_sectors(m), 5 * 196);
    expect_map(m, 99, 0, 0, 99, 0);      /* head 0 is full */
    expect_map(m, 100, 0, 1, 0, 0);
    expect_map(m, 195, 0, 1, 95, 0);     /* the cylinder's last LBA */
    expect_map(m, 196, 1, 0, 0, 0);
    CHECK(ncq_model_phys_to_lba(m, &ph, &back) < 0, "spare sector");
    ncq_model_free(m);
}

/*
 * A read across a cylinder's short last track leaves it at its last mapped
 * sector: 6 sectors, a 1 ms cylinder switch, the wait for sector 0 (no
 * skew) 0.94 revolution later, 10 sectors; 100 us per sector at 6000 rpm.
 */
static void test_walk_skips_cylinder_spares(void)
{
    NcqModel *m = ncq_test_model_text(
        "[drive]\nname = w\nmodel = W\nkind = hdd\ncapacity = 900\n"
        "rpm = 6000\n[seek]\ntype = table\npoint = 1 1\npoint = 10 2\n"
        "[layout]\nheads = 2\nzone = 0 5 100 spares=4/cyl\n", 1);
    NcqCompletion c[2];

    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 190, 16, 0), 0);
    CHECK_EQ(ncq_test_drain(m, c, 2), 1);
    CHECK_EQ(c[0].transfer_ns, 600000 + 1000000 + 9400000 + 1000000);
    ncq_model_free(m);
}

/*
 * Spares per range of 2 cylinders (4 tracks); 5 cylinders leave one
 * partial range without spares, as DiskSim's sectors-per-range scheme.
 */
static void test_spares_per_range(void)
{
    NcqModel *m = ncq_test_model_text(
        ZHEAD "zone = 0 5 100 spares=10/2cyl\n", 1);

    CHECK_EQ(ncq_model_layout_sectors(m), 2 * 390 + 2 * 100);
    expect_map(m, 389, 1, 1, 89, 0);     /* end of range 0 */
    expect_map(m, 390, 2, 0, 0, 0);
    expect_map(m, 780, 4, 0, 0, 0);      /* the partial range */
    expect_map(m, 979, 4, 1, 99, 0);
    ncq_model_free(m);
}

/* Front space and spares per zone; an all-spare zone maps nothing. */
static void test_front_and_zone_spares(void)
{
    NcqModel *m = ncq_test_model_text(
        ZHEAD "zone = 0 2 100 front=150 spares=50/zone\n"
        "zone = 2 1 100 spares=200/zone\nzone = 3 1 80\n", 1);
    NcqPhys ph = { .cyl = 0, .head = 0, .sector = 10 };
    uint64_t back;

    CHECK_EQ(ncq_model_layout_sectors(m), 400 - 150 - 50 + 160);
    expect_map(m, 0, 0, 1, 50, 0);       /* past the front space */
    expect_map(m, 199, 1, 1, 49, 0);     /* the zone's last LBA */
    expect_map(m, 200, 3, 0, 0, 2);      /* zone 1 holds no LBA */
    CHECK(ncq_model_phys_to_lba(m, &ph, &back) < 0, "front sector");
    ph.cyl = 2;
    ph.sector = 0;
    CHECK(ncq_model_phys_to_lba(m, &ph, &back) < 0, "all-spare zone");
    ph.cyl = 1;
    ph.head = 1;
    ph.sector = 50;
    CHECK(ncq_model_phys_to_lba(m, &ph, &back) < 0, "zone spare");
    ncq_model_free(m);
}

/*
 * Per-zone skews count from the zone's first cylinder and start at the
 * zone's first-block offset (DiskSim's layout); zones without skews
 * continue the angles of the one before (ncq_layout_angle, layout.c).
 */
static void test_zone_skews(void)
{
    NcqModel *a = ncq_test_model_text(
        ZHEAD "zone = 0 3 100 track_skew=10 cyl_skew=25 first=5\n"
        "zone = 3 3 50 track_skew=4 cyl_skew=7\n", 1);
    NcqModel *b = ncq_test_model_text(
        ZHEAD "track_skew = 0.1\ncyl_skew = 0.25\nzone = 0 3 100\n"
        "zone = 3 3 50\n", 1);
    NcqPhys p0 = { .cyl = 0, .head = 0, .sector = 0, .zone = 0 };
    NcqPhys p1 = { .cyl = 1, .head = 1, .sector = 0, .zone = 0 };
    NcqPhys p3 = { .cyl = 4, .head = 1, .sector = 0, .zone = 1 };
    NcqPhys q3 = { .cyl = 3, .head = 0, .sector = 0, .zone = 1 };

    /* 5 sectors of 100 */
    CHECK_EQ(ncq_layout_angle(a, &p0), 5 * (NCQ_REV / 100));
    /* cylinder 1 head 1: 5 + (1 + 1) x 10 + 25 sectors */
    CHECK_EQ(ncq_layout_angle(a, &p1), 50 * (NCQ_REV / 100));
    /* zone 1 restarts: cylinder 4 head 1: (1 + 1) x 4 + 7 of 50 */
    CHECK_EQ(ncq_layout_angle(a, &p3), 15 * (NCQ_REV / 50));
    /* global skews accumulate from cylinder 0 across zones */
    CHECK_EQ(ncq_layout_angle(b, &q3), (3 * (25 + 10) % 100) *
             (NCQ_REV / 100));
    ncq_model_free(a);
    ncq_model_free(b);
}

static void test_builtin(void)
{
    const char *names[] = {
        "st3400620as", "fujitsu-max3036rc", "maxtor-atlas10kv",
        "ibm-40k1044", "quantum-atlas10k", "seagate-cheetah9lp",
        "quantum-atlas-iii", "seagate-barracuda-st32171w",
        "seagate-cheetah4lp", "dec-rz26", "hp-c2247a", "hp-c2249a",
        "hp-c2490a", "hp-c3323a", "ibm-ultrastar-18es", "seagate-st41601n",
    };
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        NcqModel *m = ncq_test_model(names[i], 7);
        const NcqParams *p = ncq_model_params(m);
        uint64_t s = 42, lba, back;
        uint32_t z;
        int k;

        CHECK(ncq_model_layout_sectors(m) >= p->capacity, "%s", names[i]);
        /* every zone boundary and the tracks around it */
        for (z = 0; z < p->nzones; z++) {
            NcqPhys ph = { .cyl = p->zones[z].cyl_start, .head = 0,
                           .sector = 0 };

            /* DiskSim's front space and unmapped gaps: no first LBA */
            if (p->zones[z].front || ncq_model_phys_to_lba(m, &ph, &lba)) {
                CHECK(p->zones[z].front || p->zones[z].spare_tracks == 0,
                      "%s zone %u: first sector unmapped", names[i], z);
                continue;
            }
            for (k = -2; k <= 2; k++) {
                NcqPhys q;

                if ((int64_t)lba + k < 0 ||
                    lba + k >= ncq_model_layout_sectors(m)) {
                    continue;
                }
                CHECK_EQ(ncq_model_lba_to_phys(m, lba + k, &q), 0);
                CHECK_EQ(ncq_model_phys_to_lba(m, &q, &back), 0);
                CHECK_EQ(back, lba + k);
                if (k < 0) {
                    CHECK(q.zone < z, "zone %u before %u", q.zone, z);
                } else {
                    CHECK_EQ(q.zone, z);
                }
            }
        }
        for (k = 0; k < 100000; k++) {
            NcqPhys q;

            lba = ncq_test_rng(&s) % p->capacity;
            CHECK_EQ(ncq_model_lba_to_phys(m, lba, &q), 0);
            CHECK_EQ(ncq_model_phys_to_lba(m, &q, &back), 0);
            CHECK_EQ(back, lba);
        }
        if (!strcmp(names[i], "st3400620as")) {
            CHECK_EQ(p->capacity, 781422768);
        }
        ncq_model_free(m);
    }
}

int main(void)
{
    test_small();
    test_spares();
    test_spares_per_cylinder();
    test_walk_skips_cylinder_spares();
    test_spares_per_range();
    test_front_and_zone_spares();
    test_zone_skews();
    test_builtin();
    return ncq_test_done("test-layout");
}
