/*
 * Host-managed zones (zone.c, docs/smr.md): every condition change, every
 * error with its sense data, REPORT ZONES, the open-zone limit, power
 * loss, a write racing a reset, timing of zone actions, saved state,
 * determinism, bad parameter files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

/* 14 zones of 128 sectors: 0-1 conventional, 2-13 sequential; 3 open */
#define ZTEXT(urswrz) \
    "[drive]\nname = zsmall\nmodel = ZSMALL\nkind = hdd\n" \
    "capacity = 1792\nrpm = 6000\nbus_mb_s = 512\n" \
    "[layout]\nheads = 2\nzone = 0 5 100\nzone = 5 5 80\n" \
    "[seek]\ntype = table\npoint = 1 1.0\npoint = 10 2.0\n" \
    "[overhead]\nother_ms = 0.05\n" \
    "[cache]\nsegments = 4\nsegment_kib = 64\nreadahead_kib = 0\n" \
    "write_cache = off\n" \
    "[zones]\nzone_sectors = 128\nconventional = 2\nmax_open = 3\n" \
    "urswrz = " urswrz "\nreset_ms = 2\nfinish_ms = 3\nopen_ms = 0.5\n"

#define ZS 128
#define Z(n) ((uint64_t)(n) * ZS)

static int64_t now;

static NcqZoneCond cond(NcqModel *m, uint32_t z)
{
    NcqZoneInfo zi;

    CHECK_EQ(ncq_model_zone_info(m, z, &zi), 0);
    return zi.cond;
}

static uint64_t wp(NcqModel *m, uint32_t z)
{
    NcqZoneInfo zi;

    ncq_model_zone_info(m, z, &zi);
    return zi.wp;
}

/* A non-queued command, run to its completion. */
static int run(NcqModel *m, NcqOp op, uint64_t lba, uint32_t n)
{
    NcqCompletion c[4];
    int rc;

    now += 100000000;
    rc = ncq_test_submit(m, 0, op, lba, n, now);
    if (rc == 0) {
        ncq_test_drain(m, c, 4);
    }
    return rc;
}

static int act(NcqModel *m, NcqZoneAction a, uint64_t lba, bool all)
{
    return ncq_model_zone_action(m, a, lba, all);
}

/* @rc is @err, with the sense key/ASC/ASCQ ACS/ZBC give for it. */
static void check_err(int rc, int err, int key, int asc, int ascq)
{
    NcqSense s = { 0 };

    CHECK(rc == err, "got %d (%s), expected %d (%s)", rc, ncq_strerror(rc),
          err, ncq_strerror(err));
    CHECK_EQ(ncq_zone_sense(err, &s), 0);
    CHECK(s.key == key && s.asc == asc && s.ascq == ascq,
          "sense of %d: %x/%02x/%02x, expected %x/%02x/%02x", err, s.key,
          s.asc, s.ascq, key, asc, ascq);
}

static void test_geometry(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);
    NcqZoneInfo zi;
    uint32_t z;

    CHECK_EQ(ncq_model_zone_count(m), 14);
    ncq_model_zone_info(m, 1, &zi);
    CHECK(zi.type == NCQ_ZONE_TYPE_CONV && zi.cond == NCQ_ZC_NOT_WP &&
          zi.start == 128 && zi.len == 128 && zi.wp == UINT64_MAX, "conv");
    for (z = 2; z < 14; z++) {
        ncq_model_zone_info(m, z, &zi);
        CHECK(zi.type == NCQ_ZONE_TYPE_SWR && zi.cond == NCQ_ZC_EMPTY &&
              zi.wp == Z(z), "zone %u fresh", z);
    }
    CHECK_EQ(ncq_model_zone_info(m, 14, &zi), NCQ_ERR_INVAL);
    ncq_model_free(m);
    m = ncq_test_model("st3400620as", 1);
    CHECK_EQ(ncq_model_zone_count(m), 0);
    CHECK_EQ(act(m, NCQ_ZONE_RESET, 0, true), NCQ_ERR_INVAL);
    ncq_model_free(m);
}

static void test_writes(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);

    CHECK_EQ(run(m, NCQ_OP_WRITE, 10, 8), 0);          /* conventional */
    CHECK_EQ(run(m, NCQ_OP_WRITE, 120, 16), 0);        /* conv 0 -> 1 */
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2), 8), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_IMP_OPEN);
    CHECK_EQ(wp(m, 2), Z(2) + 8);
    check_err(run(m, NCQ_OP_WRITE, Z(2) + 16, 8), NCQ_ERR_ZONE_UNALIGNED,
              0x5, 0x21, 0x04);
    check_err(run(m, NCQ_OP_WRITE, Z(2), 8), NCQ_ERR_ZONE_UNALIGNED,
              0x5, 0x21, 0x04);
    CHECK_EQ(wp(m, 2), Z(2) + 8);                      /* unchanged */
    check_err(run(m, NCQ_OP_WRITE, Z(2) + 8, 128), NCQ_ERR_ZONE_BOUNDARY,
              0x5, 0x21, 0x05);
    check_err(run(m, NCQ_OP_WRITE, Z(2) - 8, 16), NCQ_ERR_ZONE_BOUNDARY,
              0x5, 0x21, 0x05);                        /* conv -> SWR */
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2) + 8, 120), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_FULL);
    CHECK_EQ(wp(m, 2), Z(3));
    check_err(run(m, NCQ_OP_WRITE, Z(3) - 8, 8), NCQ_ERR_ZONE_FIELD,
              0x5, 0x24, 0x00);                        /* full zone */
    check_err(ncq_test_submit(m, 0, NCQ_OP_WRITE, 1792, 1, now + 1),
              NCQ_ERR_RANGE, 0x5, 0x21, 0x00);
    ncq_model_free(m);
}

static void test_reads(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);

    CHECK_EQ(run(m, NCQ_OP_READ, 0, 256), 0);          /* conventional */
    check_err(run(m, NCQ_OP_READ, Z(3), 1), NCQ_ERR_ZONE_INVALID_READ,
              0x5, 0x21, 0x06);                        /* empty zone */
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(3), 16), 0);
    CHECK_EQ(run(m, NCQ_OP_READ, Z(3), 16), 0);
    check_err(run(m, NCQ_OP_READ, Z(3) + 8, 16), NCQ_ERR_ZONE_INVALID_READ,
              0x5, 0x21, 0x06);
    CHECK_EQ(act(m, NCQ_ZONE_FINISH, Z(3), false), 0);
    CHECK_EQ(run(m, NCQ_OP_READ, Z(3) + 100, 28), 0);  /* full: all */
    CHECK_EQ(act(m, NCQ_ZONE_FINISH, Z(4), false), 0);
    check_err(run(m, NCQ_OP_READ, Z(4) - 8, 16), NCQ_ERR_ZONE_READ_BOUNDARY,
              0x5, 0x21, 0x07);                        /* full -> full */
    check_err(run(m, NCQ_OP_READ, Z(2) - 8, 16), NCQ_ERR_ZONE_READ_BOUNDARY,
              0x5, 0x21, 0x07);                        /* conv -> SWR */
    ncq_model_free(m);
    m = ncq_test_model_text(ZTEXT("on"), 1);           /* URSWRZ 1 */
    CHECK_EQ(run(m, NCQ_OP_READ, Z(3), 64), 0);
    CHECK_EQ(run(m, NCQ_OP_READ, Z(2) - 8, 300), 0);
    ncq_model_free(m);
}

static void test_actions(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);

    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(2), false), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_EXP_OPEN);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2), 8), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_EXP_OPEN);             /* stays explicit */
    CHECK_EQ(act(m, NCQ_ZONE_CLOSE, Z(2), false), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_CLOSED);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2) + 8, 8), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_IMP_OPEN);             /* closed -> implicit */
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(2), false), 0);
    CHECK_EQ(cond(m, 2), NCQ_ZC_EXP_OPEN);             /* implicit -> exp. */
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(3), false), 0);
    CHECK_EQ(act(m, NCQ_ZONE_CLOSE, Z(3), false), 0);
    CHECK_EQ(cond(m, 3), NCQ_ZC_EMPTY);                /* nothing written */
    CHECK_EQ(act(m, NCQ_ZONE_FINISH, Z(2), false), 0);
    CHECK(cond(m, 2) == NCQ_ZC_FULL && wp(m, 2) == Z(3), "finish");
    CHECK_EQ(act(m, NCQ_ZONE_FINISH, Z(3), false), 0);  /* empty -> full */
    CHECK_EQ(cond(m, 3), NCQ_ZC_FULL);
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(3), false), 0);    /* full: no change */
    CHECK_EQ(cond(m, 3), NCQ_ZC_FULL);
    CHECK_EQ(act(m, NCQ_ZONE_RESET, Z(2), false), 0);
    CHECK(cond(m, 2) == NCQ_ZC_EMPTY && wp(m, 2) == Z(2), "reset");
    check_err(act(m, NCQ_ZONE_RESET, Z(1), false), NCQ_ERR_ZONE_FIELD,
              0x5, 0x24, 0x00);                        /* conventional */
    check_err(act(m, NCQ_ZONE_OPEN, Z(4) + 1, false), NCQ_ERR_ZONE_FIELD,
              0x5, 0x24, 0x00);                        /* not a start */
    check_err(act(m, NCQ_ZONE_CLOSE, 1792, false), NCQ_ERR_ZONE_LBA,
              0x5, 0x21, 0x00);
    CHECK_EQ(act(m, 0x07, Z(4), false), NCQ_ERR_ZONE_FIELD);
    /* ALL: the zone ID is ignored; reset all empties every zone */
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(5), 8), 0);
    CHECK_EQ(act(m, NCQ_ZONE_CLOSE, 999999, true), 0);
    CHECK_EQ(cond(m, 5), NCQ_ZC_CLOSED);
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, 0, true), 0);
    CHECK_EQ(cond(m, 5), NCQ_ZC_EXP_OPEN);
    CHECK_EQ(act(m, NCQ_ZONE_FINISH, 0, true), 0);
    CHECK(cond(m, 5) == NCQ_ZC_FULL && cond(m, 6) == NCQ_ZC_EMPTY,
          "finish all: open and closed zones only");
    CHECK_EQ(act(m, NCQ_ZONE_RESET, 0, true), 0);
    CHECK(cond(m, 3) == NCQ_ZC_EMPTY && cond(m, 5) == NCQ_ZC_EMPTY &&
          cond(m, 0) == NCQ_ZC_NOT_WP, "reset all");
    ncq_model_free(m);
}

static void test_open_limit(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);

    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(3), 8), 0);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(4), 8), 0);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(5), 8), 0);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(6), 8), 0);        /* implicit close */
    CHECK(cond(m, 3) == NCQ_ZC_CLOSED && cond(m, 6) == NCQ_ZC_IMP_OPEN,
          "the implicitly open zone opened first closes");
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(7), false), 0);   /* closes 4 */
    CHECK_EQ(cond(m, 4), NCQ_ZC_CLOSED);
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(8), false), 0);   /* closes 5 */
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(9), false), 0);   /* closes 6 */
    CHECK(cond(m, 5) == NCQ_ZC_CLOSED && cond(m, 6) == NCQ_ZC_CLOSED &&
          cond(m, 9) == NCQ_ZC_EXP_OPEN, "explicit opens");
    /* three explicitly open zones: nothing more opens, nothing changes */
    check_err(run(m, NCQ_OP_WRITE, Z(10), 8), NCQ_ERR_ZONE_RESOURCES,
              0x7, 0x55, 0x0e);
    check_err(run(m, NCQ_OP_WRITE, Z(3) + 8, 8), NCQ_ERR_ZONE_RESOURCES,
              0x7, 0x55, 0x0e);                        /* closed zone */
    check_err(act(m, NCQ_ZONE_OPEN, Z(10), false), NCQ_ERR_ZONE_RESOURCES,
              0x7, 0x55, 0x0e);
    check_err(act(m, NCQ_ZONE_FINISH, Z(10), false), NCQ_ERR_ZONE_RESOURCES,
              0x7, 0x55, 0x0e);
    CHECK(cond(m, 10) == NCQ_ZC_EMPTY && cond(m, 3) == NCQ_ZC_CLOSED &&
          wp(m, 10) == Z(10), "refused: nothing changed");
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(7), 8), 0);        /* open zone: fine */
    /* OPEN ALL needs room for every closed zone beside the explicit ones */
    CHECK_EQ(act(m, NCQ_ZONE_CLOSE, Z(9), false), 0);
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, 0, true), NCQ_ERR_ZONE_RESOURCES);
    CHECK(cond(m, 3) == NCQ_ZC_CLOSED && cond(m, 8) == NCQ_ZC_EXP_OPEN,
          "open all refused: nothing changed");
    ncq_model_free(m);
}

static void test_read_only_offline(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("on"), 1);

    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(4), 8), 0);
    CHECK_EQ(ncq_model_zone_set_cond(m, 4, NCQ_ZC_READ_ONLY), 0);
    CHECK_EQ(ncq_model_zone_set_cond(m, 5, NCQ_ZC_OFFLINE), 0);
    CHECK_EQ(ncq_model_zone_set_cond(m, 1, NCQ_ZC_OFFLINE), NCQ_ERR_INVAL);
    CHECK_EQ(ncq_model_zone_set_cond(m, 6, NCQ_ZC_FULL), NCQ_ERR_INVAL);
    check_err(run(m, NCQ_OP_WRITE, Z(4) + 8, 8), NCQ_ERR_ZONE_READ_ONLY,
              0x7, 0x27, 0x08);
    CHECK_EQ(run(m, NCQ_OP_READ, Z(4), 128), 0);
    check_err(run(m, NCQ_OP_READ, Z(5), 8), NCQ_ERR_ZONE_OFFLINE,
              0x7, 0x2c, 0x0e);
    check_err(run(m, NCQ_OP_WRITE, Z(5), 8), NCQ_ERR_ZONE_OFFLINE,
              0x7, 0x2c, 0x0e);
    check_err(act(m, NCQ_ZONE_RESET, Z(5), false), NCQ_ERR_ZONE_OFFLINE,
              0x7, 0x2c, 0x0e);
    CHECK_EQ(act(m, NCQ_ZONE_RESET, 0, true), 0);
    CHECK(cond(m, 4) == NCQ_ZC_READ_ONLY && cond(m, 5) == NCQ_ZC_OFFLINE,
          "reset all leaves read-only and offline zones");
    ncq_model_free(m);
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;

    while (n--) {
        v = v << 8 | p[n];
    }
    return v;
}

static void test_report(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);
    uint8_t buf[512 * 4];
    const uint8_t *d;

    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2), 24), 0);
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(3), false), 0);
    CHECK_EQ(act(m, NCQ_ZONE_FINISH, Z(4), false), 0);
    CHECK_EQ(ncq_model_report_zones(m, 0, NCQ_ZRO_ALL, buf, 512 * 2), 0);
    CHECK_EQ(le(buf, 4), 14 * 64);                     /* all, not partial */
    CHECK_EQ(buf[4] & 0xf, 3);                         /* types differ */
    CHECK_EQ(le(buf + 8, 8), 1791);
    d = buf + 64;                                      /* zone 0 */
    CHECK(d[0] == 1 && d[1] >> 4 == 0 && le(d + 8, 8) == 128 &&
          le(d + 16, 8) == 0 && le(d + 24, 8) == UINT64_MAX, "zone 0");
    d = buf + 64 * 3;                                  /* zone 2 */
    CHECK(d[0] == 2 && d[1] == 0x20 && le(d + 16, 8) == Z(2) &&
          le(d + 24, 8) == Z(2) + 24, "zone 2 implicitly open");
    CHECK_EQ(buf[64 * 4 + 1] >> 4, NCQ_ZC_EXP_OPEN);
    CHECK(buf[64 * 5 + 1] >> 4 == NCQ_ZC_FULL &&
          le(buf + 64 * 5 + 24, 8) == Z(5), "zone 4 full");
    /* partial: the length covers what fits (15 descriptors in 1 KiB) */
    CHECK_EQ(ncq_model_report_zones(m, 0, NCQ_ZRO_PARTIAL, buf, 512), 0);
    CHECK_EQ(le(buf, 4), 7 * 64);
    CHECK_EQ(ncq_model_report_zones(m, 0, 0x01, buf, 512 * 4), 0);
    CHECK_EQ(le(buf, 4), 9 * 64);                      /* empty: 5..13 */
    CHECK(le(buf + 64 + 16, 8) == Z(5) && buf[4] == 1, "first empty zone");
    CHECK_EQ(ncq_model_report_zones(m, Z(7) + 5, 0x01, buf, 512 * 4), 0);
    CHECK(le(buf, 4) == 7 * 64 && le(buf + 64 + 16, 8) == Z(7),
          "from the zone holding the starting LBA");
    CHECK_EQ(ncq_model_report_zones(m, 0, 0x02, buf, 512), 0);
    CHECK_EQ(le(buf, 4), 64);
    CHECK_EQ(ncq_model_report_zones(m, 0, 0x03, buf, 512), 0);
    CHECK_EQ(le(buf, 4), 64);
    CHECK_EQ(ncq_model_report_zones(m, 0, 0x05, buf, 512), 0);
    CHECK_EQ(le(buf, 4), 64);
    CHECK_EQ(ncq_model_report_zones(m, 0, 0x3f, buf, 512), 0);
    CHECK(le(buf, 4) == 128 && buf[4] == 1, "not write pointer zones");
    CHECK_EQ(ncq_model_report_zones(m, 0, 0x10, buf, 512), 0);
    CHECK(le(buf, 4) == 0 && buf[4] == 0, "reset recommended: none");
    check_err(ncq_model_report_zones(m, 0, 0x08, buf, 512),
              NCQ_ERR_ZONE_FIELD, 0x5, 0x24, 0x00);
    check_err(ncq_model_report_zones(m, 1792, 0, buf, 512), NCQ_ERR_ZONE_LBA,
              0x5, 0x21, 0x00);
    ncq_model_free(m);
}

/* Zone actions through submit: queued (NCQ NON-DATA) and timed. */
static void test_timing(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);
    NcqCmd c = { 0 };
    NcqCompletion out[4];
    int n;

    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2), 8), 0);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(3), 8), 0);
    c.op = NCQ_OP_OTHER;
    c.zone_action = NCQ_ZONE_RESET;
    c.zone_all = true;
    c.queued = true;
    c.id = 5;
    now += 100000000;
    CHECK_EQ(ncq_model_submit(m, &c, now), 0);
    n = ncq_test_drain(m, out, 4);
    /* other_ms 0.05 + 2 zones x reset_ms 2 */
    CHECK(n == 1 && out[0].id == 5 &&
          out[0].complete_ns - out[0].arrival_ns == 4050000,
          "reset all of 2 zones: %lld ns",
          n ? (long long)(out[0].complete_ns - out[0].arrival_ns) : -1LL);
    c.zone_action = NCQ_ZONE_FINISH;
    c.zone_all = false;
    c.queued = false;
    c.lba = Z(6);
    now += 100000000;
    CHECK_EQ(ncq_model_submit(m, &c, now), 0);
    n = ncq_test_drain(m, out, 4);
    CHECK(n == 1 && out[0].complete_ns - out[0].arrival_ns == 3050000,
          "finish");
    /* REPORT ZONES queued (RECEIVE FPDMA QUEUED): timed, changes nothing */
    c.zone_action = NCQ_ZONE_REPORT;
    c.queued = true;
    c.id = 9;
    now += 100000000;
    CHECK_EQ(ncq_model_submit(m, &c, now), 0);
    n = ncq_test_drain(m, out, 4);
    CHECK(n == 1 && out[0].id == 9 &&
          out[0].complete_ns - out[0].arrival_ns == 50000, "report timed");
    CHECK_EQ(cond(m, 6), NCQ_ZC_FULL);
    c.zone_action = NCQ_ZONE_FINISH;
    c.queued = false;
    c.lba = Z(6) + 1;
    check_err(ncq_model_submit(m, &c, now + 50000000), NCQ_ERR_ZONE_FIELD,
              0x5, 0x24, 0x00);
    ncq_model_free(m);
    m = ncq_test_model("st3400620as", 1);
    c.lba = 0;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_INVAL);  /* not zoned */
    ncq_model_free(m);
}

/* A write accepted before a RESET of its zone: the RESET wins after it. */
static void test_race(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);
    NcqCmd c = { .op = NCQ_OP_OTHER, .zone_action = NCQ_ZONE_RESET,
                 .lba = Z(2), .queued = true, .id = 1 };
    NcqCompletion out[4];

    now += 100000000;
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, Z(2), 64, now), 0);
    CHECK_EQ(ncq_model_submit(m, &c, now), 0);
    CHECK_EQ(ncq_test_drain(m, out, 4), 2);
    CHECK(cond(m, 2) == NCQ_ZC_EMPTY && wp(m, 2) == Z(2), "reset last");
    check_err(run(m, NCQ_OP_WRITE, Z(2) + 64, 8), NCQ_ERR_ZONE_UNALIGNED,
              0x5, 0x21, 0x04);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2), 8), 0);
    ncq_model_free(m);
}

static void test_power_loss(void)
{
    NcqModel *m = ncq_test_model_text(ZTEXT("off"), 1);

    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2), 16), 0);
    CHECK_EQ(act(m, NCQ_ZONE_OPEN, Z(3), false), 0);
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(4), 128), 0);
    now += 100000000;
    /* accepted, never completed: its pointer goes back */
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_WRITE, Z(2) + 16, 32, now), 0);
    CHECK_EQ(wp(m, 2), Z(2) + 48);
    ncq_model_power_loss(m, now + 1000);
    CHECK(wp(m, 2) == Z(2) + 16 && cond(m, 2) == NCQ_ZC_CLOSED,
          "write pointer persists, open zone closed: %llu %d",
          (unsigned long long)wp(m, 2), cond(m, 2));
    CHECK_EQ(cond(m, 3), NCQ_ZC_EMPTY);                /* opened, empty */
    CHECK(cond(m, 4) == NCQ_ZC_FULL && wp(m, 4) == Z(5), "full stays");
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(2) + 16, 8), 0);
    /* a reset drops the only write of a zone: empty again, not open */
    now += 100000000;
    CHECK_EQ(ncq_test_submit(m, 4, NCQ_OP_WRITE, Z(6), 8, now), 0);
    CHECK_EQ(ncq_test_submit(m, 5, NCQ_OP_WRITE, Z(6) + 8, 8, now), 0);
    CHECK_EQ(cond(m, 6), NCQ_ZC_IMP_OPEN);
    ncq_model_reset(m, now);
    CHECK(cond(m, 6) == NCQ_ZC_EMPTY && wp(m, 6) == Z(6),
          "dropped writes rewound: %s +%llu", ncq_zone_cond_name(cond(m, 6)),
          (unsigned long long)(wp(m, 6) - Z(6)));
    CHECK_EQ(run(m, NCQ_OP_WRITE, Z(6), 8), 0);
    ncq_model_free(m);
}

/* Random commands: same seed, same states; a saved state carries them. */
static void random_steps(NcqModel *m, uint64_t seed, int steps)
{
    uint64_t r = seed;
    int i;

    for (i = 0; i < steps; i++) {
        uint64_t x = ncq_test_rng(&r);
        uint32_t z = 2 + x % 12;
        NcqZoneInfo zi;

        ncq_model_zone_info(m, z, &zi);
        switch (x >> 8 & 7) {
        case 0:
            act(m, 1 + (x >> 16) % 4, Z(z), (x >> 20 & 15) == 0);
            break;
        case 1:
            run(m, NCQ_OP_READ, Z(z) + (x >> 16) % 100, 1 + (x >> 24) % 28);
            break;
        default:
            run(m, NCQ_OP_WRITE, zi.wp == UINT64_MAX ? Z(z) : zi.wp,
                1 + (x >> 16) % 40);
        }
    }
}

static void test_determinism_and_state(void)
{
    NcqModel *a = ncq_test_model_text(ZTEXT("off"), 7);
    NcqModel *b = ncq_test_model_text(ZTEXT("off"), 7);
    NcqModel *c = ncq_test_model_text(ZTEXT("off"), 7);
    uint8_t ra[2048], rb[2048];
    size_t len;
    uint8_t *st;
    char err[256];
    int64_t t0 = now;

    random_steps(a, 99, 3000);
    now = t0;
    random_steps(b, 99, 3000);
    ncq_model_report_zones(a, 0, 0, ra, sizeof(ra));
    ncq_model_report_zones(b, 0, 0, rb, sizeof(rb));
    CHECK(!memcmp(ra, rb, sizeof(ra)), "same commands, same zones");
    len = ncq_model_state_size(a);
    st = malloc(len);
    CHECK_EQ(ncq_model_state_save(a, st, len), 0);
    CHECK(ncq_model_state_load(c, st, len, err, sizeof(err)) == 0, "%s", err);
    ncq_model_report_zones(c, 0, 0, rb, sizeof(rb));
    CHECK(!memcmp(ra, rb, sizeof(ra)), "the loaded state has the zones");
    random_steps(a, 5, 500);
    random_steps(c, 5, 500);
    ncq_model_report_zones(a, 0, 0, ra, sizeof(ra));
    ncq_model_report_zones(c, 0, 0, rb, sizeof(rb));
    CHECK(!memcmp(ra, rb, sizeof(ra)), "and carries on the same way");
    free(st);
    ncq_model_free(a);
    ncq_model_free(b);
    ncq_model_free(c);
}

static void test_bad_params(void)
{
    static const struct {
        const char *from, *to, *want;
    } t[] = {
        { "zone_sectors = 128", "zone_sectors = 100", "not a power of two" },
        { "capacity = 1792", "capacity = 1790", "not whole zones" },
        { "conventional = 2", "conventional = 14", "no sequential zone" },
        { "max_open = 3", "max_open = 0", "max_open must be" },
        { "zone_sectors = 128\n", "", "without zone_sectors" },
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char text[2048], err[256];
        const char *base = ZTEXT("off");
        const char *at = strstr(base, t[i].from);
        NcqParams *p = NULL;
        int rc;

        snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - base), base,
                 t[i].to, at + strlen(t[i].from));
        rc = ncq_params_parse(text, "z.ncqm", &p, err, sizeof(err));
        CHECK(rc < 0 && strstr(err, t[i].want) && !strchr(err, '\n'),
              "%s: rc %d, '%s'", t[i].to, rc, err);
        ncq_params_free(p);
    }
}

/* The zone invariants: conditions match write pointers, open <= max. */
static void check_zone_invariants(NcqModel *m, const char *when)
{
    uint32_t z, n = ncq_model_zone_count(m), open = 0;
    uint32_t max = ncq_model_params(m)->zone_max_open;

    for (z = 0; z < n; z++) {
        NcqZoneInfo zi;
        uint64_t off;
        bool ok;

        ncq_model_zone_info(m, z, &zi);
        off = zi.wp - zi.start;
        switch (zi.cond) {
        case NCQ_ZC_NOT_WP:
            ok = zi.type == NCQ_ZONE_TYPE_CONV;
            break;
        case NCQ_ZC_EMPTY:
            ok = off == 0;
            break;
        case NCQ_ZC_FULL:
            ok = off == zi.len;
            break;
        case NCQ_ZC_CLOSED:
            ok = off > 0 && off < zi.len;
            break;
        case NCQ_ZC_IMP_OPEN:
            ok = off > 0 && off < zi.len;
            open++;
            break;
        case NCQ_ZC_EXP_OPEN:
            ok = off < zi.len;
            open++;
            break;
        default:
            ok = false;
        }
        if (!ok) {
            CHECK(ok, "%s: zone %u %s with pointer +%llu", when, z,
                  ncq_zone_cond_name(zi.cond), (unsigned long long)off);
            return;
        }
    }
    CHECK(open <= max, "%s: %u zones open, limit %u", when, open, max);
}

/*
 * wd-hc620 under random queued writes at write pointers (several per
 * zone in flight), reads, zone actions, resets and power cuts: every
 * accepted command completes exactly once, the zone invariants hold
 * after every step.
 */
static void test_invariants(void)
{
    NcqModel *m = ncq_test_model("wd-hc620", 3);
    const NcqParams *p = ncq_model_params(m);
    uint64_t r = 42, accepted = 0, completed = 0, dropped = 0;
    uint64_t first = (uint64_t)p->zone_conv * p->zone_sectors;
    bool busy[NCQ_MAX_TAGS] = { false };
    NcqCompletion out[64];
    int64_t t = 0;
    int i, k;

    for (i = 0; i < 30000; i++) {
        uint64_t x = ncq_test_rng(&r);
        uint32_t tag = (x >> 8) % NCQ_MAX_TAGS;
        /* a few zones fill and are reset, 150 exceed the open limit */
        uint32_t z = p->zone_conv + (x >> 4 & 3 ? x % 6 : x % 150);
        NcqZoneInfo zi;
        NcqCmd c = { .id = tag, .queued = true };

        t += (x >> 16) % 3000000;
        k = ncq_model_advance(m, t, out, 64);
        for (; k > 0; k--) {
            CHECK(busy[out[k - 1].id], "completion of a free tag");
            busy[out[k - 1].id] = false;
            completed++;
        }
        ncq_model_zone_info(m, z, &zi);
        switch (x >> 40 & 15) {
        case 0:
            c.op = NCQ_OP_OTHER;
            c.zone_action = 1 + (x >> 44) % 4;
            c.zone_all = (x >> 46 & 63) == 0;
            c.lba = zi.start;
            break;
        case 1:
            c.op = NCQ_OP_READ;
            c.lba = zi.start;
            c.sectors = 8;
            break;
        case 2:
            if ((x >> 44 & 31) == 0) {
                dropped += ncq_model_outstanding(m);
                (x >> 52 & 1) ? ncq_model_reset(m, t) :
                                (void)ncq_model_power_loss(m, t);
                memset(busy, 0, sizeof(busy));
            }
            continue;
        default:
            c.op = NCQ_OP_WRITE;
            c.lba = zi.wp == UINT64_MAX ? first : zi.wp;
            c.sectors = 8 + (x >> 44) % 2048;
            if (zi.wp != UINT64_MAX && zi.start + zi.len - zi.wp < c.sectors) {
                c.sectors = zi.start + zi.len - zi.wp;
            }
        }
        if (busy[tag] || !c.sectors) {
            continue;
        }
        if (ncq_model_submit(m, &c, t) == 0) {
            busy[tag] = true;
            accepted++;
        }
        if (i % 97 == 0) {
            check_zone_invariants(m, "random run");
        }
    }
    completed += ncq_test_drain(m, out, 64);
    check_zone_invariants(m, "end");
    CHECK(accepted == completed + dropped && accepted > 10000,
          "accepted %llu, completed %llu, dropped by resets %llu",
          (unsigned long long)accepted, (unsigned long long)completed,
          (unsigned long long)dropped);
    ncq_model_free(m);
}

/*
 * The zone state as text (zone-file.c, the device's zone-state file):
 * what a power-on finds, a round trip, and every bad input refused with
 * its line, the model unchanged.
 */
#define ZHDR "# ncq-disk zone state v1 model=zsmall zones=14 " \
    "zone_sectors=128 conventional=2\n"

static int zload(NcqModel *m, const char *text, char *err, size_t len)
{
    err[0] = '\0';
    return ncq_model_zone_state_parse(m, text, strlen(text), err, len);
}

/*
 * A zone state file round trip: every condition a drive keeps, read back
 * as a power-on leaves it (the state a power loss leaves), and the drive
 * works on from it.
 */
static void test_state_file_round_trip(void)
{
    NcqModel *a = ncq_test_model_text(ZTEXT("off"), 1);
    NcqModel *b = ncq_test_model_text(ZTEXT("off"), 1);
    char *t, *t2, err[512];
    uint32_t z;

    /* every condition a drive keeps, and open zones */
    CHECK_EQ(run(a, NCQ_OP_WRITE, Z(2), 16), 0);       /* implicitly open */
    CHECK_EQ(act(a, NCQ_ZONE_OPEN, Z(3), false), 0);   /* opened, empty */
    CHECK_EQ(run(a, NCQ_OP_WRITE, Z(4), 128), 0);      /* full */
    CHECK_EQ(run(a, NCQ_OP_WRITE, Z(5), 8), 0);
    CHECK_EQ(act(a, NCQ_ZONE_CLOSE, Z(5), false), 0);  /* closed */
    CHECK_EQ(act(a, NCQ_ZONE_OPEN, Z(6), false), 0);
    CHECK_EQ(run(a, NCQ_OP_WRITE, Z(6), 40), 0);       /* explicitly open */
    CHECK_EQ(ncq_model_zone_set_cond(a, 7, NCQ_ZC_READ_ONLY), 0);
    CHECK_EQ(ncq_model_zone_set_cond(a, 8, NCQ_ZC_OFFLINE), 0);
    t = ncq_model_zone_state_format(a);
    CHECK(t && !strcmp(t, ZHDR
          "# zone condition write-pointer (LBA; - for read-only and "
          "offline); zones not listed are empty\n"
          "2 implicitly-open 272\n3 explicitly-open 384\n4 full 640\n"
          "5 closed 648\n6 explicitly-open 808\n7 read-only -\n"
          "8 offline -\n"), "format:\n%s", t ? t : "(null)");
    CHECK_EQ(zload(b, t, err, sizeof(err)), 0);
    CHECK(!err[0], "no message: %s", err);
    /* a power-on: open zones closed, or empty at their start */
    CHECK(cond(b, 2) == NCQ_ZC_CLOSED && wp(b, 2) == Z(2) + 16, "zone 2");
    CHECK(cond(b, 3) == NCQ_ZC_EMPTY && wp(b, 3) == Z(3), "zone 3");
    CHECK(cond(b, 4) == NCQ_ZC_FULL && wp(b, 4) == Z(5), "zone 4");
    CHECK(cond(b, 5) == NCQ_ZC_CLOSED && wp(b, 5) == Z(5) + 8, "zone 5");
    CHECK(cond(b, 6) == NCQ_ZC_CLOSED && wp(b, 6) == Z(6) + 40, "zone 6");
    CHECK_EQ(cond(b, 7), NCQ_ZC_READ_ONLY);
    CHECK_EQ(cond(b, 8), NCQ_ZC_OFFLINE);
    CHECK_EQ(cond(b, 1), NCQ_ZC_NOT_WP);
    for (z = 9; z < 14; z++) {
        CHECK(cond(b, z) == NCQ_ZC_EMPTY && wp(b, z) == Z(z), "zone %u", z);
    }
    /* the same as a power loss leaves the first model */
    ncq_model_power_loss(a, now + 1000);
    t2 = ncq_model_zone_state_format(b);
    free(t);
    t = ncq_model_zone_state_format(a);
    CHECK(t && t2 && !strcmp(t, t2), "after a power loss:\n%s\nloaded:\n%s",
          t ? t : "", t2 ? t2 : "");
    /* the loaded drive works on: writes at its pointers, no open zone */
    CHECK_EQ(run(b, NCQ_OP_WRITE, Z(2) + 16, 8), 0);
    CHECK_EQ(cond(b, 2), NCQ_ZC_IMP_OPEN);
    CHECK_EQ(run(b, NCQ_OP_WRITE, Z(9), 8), 0);
    CHECK_EQ(run(b, NCQ_OP_WRITE, Z(10), 8), 0);       /* 3 open: limit */
    CHECK_EQ(act(b, NCQ_ZONE_OPEN, Z(11), false), 0);  /* closes zone 2 */
    CHECK_EQ(cond(b, 2), NCQ_ZC_CLOSED);
    free(t);
    free(t2);
    ncq_model_free(b);
    ncq_model_free(a);
}

/* Comments, blank lines and CRLF are read; a fresh drive's file empties */
static void test_state_file_fresh(void)
{
    NcqModel *a = ncq_test_model_text(ZTEXT("off"), 1);
    NcqModel *b = ncq_test_model_text(ZTEXT("off"), 1);
    char *t, err[512];
    uint32_t z;

    CHECK_EQ(run(a, NCQ_OP_WRITE, Z(4), 128), 0);      /* full */
    CHECK_EQ(run(b, NCQ_OP_WRITE, Z(2), 16), 0);       /* replaced below */
    CHECK_EQ(run(b, NCQ_OP_WRITE, Z(4), 128), 0);
    CHECK_EQ(zload(b, ZHDR "\r\n  # note\r\n\t\r\n12 closed 1540\r\n", err,
                   sizeof(err)), 0);
    CHECK(cond(b, 12) == NCQ_ZC_CLOSED && wp(b, 12) == 1540 &&
          cond(b, 2) == NCQ_ZC_EMPTY && cond(b, 4) == NCQ_ZC_EMPTY,
          "loaded whole: %s", err);
    ncq_model_free(b);
    b = ncq_test_model_text(ZTEXT("off"), 1);
    t = ncq_model_zone_state_format(b);
    CHECK_EQ(zload(a, t, err, sizeof(err)), 0);
    for (z = 2; z < 14; z++) {
        CHECK(cond(a, z) == NCQ_ZC_EMPTY, "fresh zone %u", z);
    }
    free(t);
    ncq_model_free(b);
    ncq_model_free(a);
}

/* Zone state files a drive refuses, and what the message says */
static const struct {
    const char *text;   /* after ZHDR, unless it starts with '!' */
    const char *want;   /* in the message */
} zone_state_bad[] = {
    { "!", "line 1: the file is empty" },
    { "!hello\n", "line 1: not an ncq-disk zone state" },
    { "!# ncq-disk zone state v2 model=zsmall zones=14\n",
      "line 1: zone state version '2' is not one this QEMU reads" },
    { "!# ncq-disk zone state v1 model=other zones=14 zone_sectors=128 "
      "conventional=2\n", "line 1: written for model other, but this "
      "drive is zsmall; the file is another drive's" },
    { "!# ncq-disk zone state v1 model=zsmall zones=15 zone_sectors=128 "
      "conventional=2\n", "line 1: written for 15 zones, but this "
      "drive has 14" },
    { "!# ncq-disk zone state v1 model=zsmall zones=14 zone_sectors=64 "
      "conventional=2\n", "zones of 64 sectors, but this drive's have "
      "128" },
    { "!# ncq-disk zone state v1 model=zsmall zones=14 zone_sectors=128 "
      "conventional=3\n", "written for 3 conventional zones" },
    { "!# ncq-disk zone state v1 model=zsmall zones=14 "
      "zone_sectors=128\n", "the header lacks conventional=" },
    { "!# ncq-disk zone state v1 model=zsmall zones=x zone_sectors=128 "
      "conventional=2\n", "header field zones=x is not a number" },
    { "!# ncq-disk zone state v1 model=zsmall zones=14 zone_sectors=128 "
      "conventional=2 color=red\n", "unknown header field 'color'" },
    { "!# ncq-disk zone state v1 model=zsmall zones=14 zone_sectors=128 "
      "conventional=2 junk\n", "header field 'junk' is not key=value" },
    { "5 closed\n", "line 2: a zone line is ZONE CONDITION" },
    { "5 closed 700 9\n", "line 2: a zone line is ZONE CONDITION" },
    { "five closed 700\n", "zone 'five' is not a zone index" },
    { "14 closed 1800\n", "zone 14 beyond the drive's 14 zones (0-13)" },
    { "1 closed 130\n", "zone 1 is conventional (zones 0-1 are)" },
    { "\n# c\n6 full 896\n5 closed 650\n",
      "line 5: zone 5 listed twice or out of order" },
    { "5 full 768\n5 full 768\n", "line 3: zone 5 listed twice" },
    { "5 half 700\n", "zone 5: unknown condition 'half'" },
    { "5 closed 0x2c0\n", "write pointer '0x2c0' is not an LBA" },
    { "5 closed 123\n", "line 2: write pointer 123 outside zone 5 "
      "(LBAs 640-767; a full zone's is 768)" },
    { "5 closed 769\n", "write pointer 769 outside zone 5" },
    { "5 full 700\n", "zone 5 is full, but its write pointer 700" },
    { "5 empty 700\n", "zone 5 is empty, but its write pointer 700" },
    { "5 closed 640\n", "zone 5 is closed with its write pointer at its "
      "start 640" },
    { "5 implicitly-open 768\n", "write full" },
    { "5 offline 700\n", "zone 5 is offline: it has no write pointer" },
};

/* Bad input: one message naming the line, nothing changed */
static void test_state_file_bad(void)
{
    NcqModel *b = ncq_test_model_text(ZTEXT("off"), 1);
    char err[512];
    size_t i;

    CHECK_EQ(run(b, NCQ_OP_WRITE, Z(5), 8), 0);
    for (i = 0; i < sizeof(zone_state_bad) / sizeof(zone_state_bad[0]); i++) {
        const char *bad = zone_state_bad[i].text;
        const char *want = zone_state_bad[i].want;
        char text[512];

        if (bad[0] == '!') {
            snprintf(text, sizeof(text), "%s", bad + 1);
        } else {
            snprintf(text, sizeof(text), ZHDR "%s", bad);
        }
        CHECK(zload(b, text, err, sizeof(err)) == NCQ_ERR_PARSE &&
              strstr(err, want) && !strchr(err, '\n'),
              "bad %zu: got '%s', expected '%s'", i, err, want);
        CHECK(cond(b, 5) == NCQ_ZC_IMP_OPEN && wp(b, 5) == Z(5) + 8,
              "bad %zu changed the zones", i);
    }
    CHECK_EQ(ncq_model_zone_state_parse(b, ZHDR "5\0", sizeof(ZHDR) + 1,
                                        err, sizeof(err)), NCQ_ERR_PARSE);
    memset(err, 'x', 300);
    err[300] = '\0';
    {
        char longer[700];

        snprintf(longer, sizeof(longer), ZHDR "5 closed %s\n", err);
        CHECK(zload(b, longer, err, sizeof(err)) == NCQ_ERR_PARSE &&
              strstr(err, "line 2: line longer than 255"), "long: %s", err);
    }
    ncq_model_free(b);
    /* a drive without zones has no zone state */
    b = ncq_test_model("st3400620as", 1);
    CHECK(ncq_model_zone_state_format(b) == NULL, "no zones: no text");
    CHECK_EQ(zload(b, ZHDR, err, sizeof(err)), NCQ_ERR_INVAL);
    ncq_model_free(b);
}

int main(void)
{
    test_geometry();
    test_writes();
    test_reads();
    test_actions();
    test_open_limit();
    test_read_only_offline();
    test_report();
    test_timing();
    test_race();
    test_power_loss();
    test_state_file_round_trip();
    test_state_file_fresh();
    test_state_file_bad();
    test_determinism_and_state();
    test_bad_params();
    test_invariants();
    return ncq_test_done("zone");
}
