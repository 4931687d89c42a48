/*
 * Positioning as pure functions (mech.c): for a known geometry, the time
 * from a head state to a target part by part (seek, settle, rotational
 * wait, media transfer, bus), worked out by hand, and the parts adding up
 * to the total each function returns; the rotational position advanced
 * without a division equals the one computed from the time.  Uses the
 * private header, as the functions are internal to the model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "ncq-int.h"

#define US 1000LL
#define MS 1000000LL

/* NCQ_TEST_SMALL (10 ms per revolution, 100 us per sector in zone 0) */
#define POS_TEST_TEXT NCQ_TEST_SMALL \
    "[seek]\nwrite_settle_ms = 0.25\nplan_settle_ms = 0.1\n"

static int64_t pt_sum(const NcqPosTime *pt)
{
    return pt->seek_ns + pt->settle_ns + pt->rot_ns + pt->xfer_ns;
}

static void test_seek_parts(NcqModel *m)
{
    NcqMechState at = { .cyl = 0, .head = 0 };
    NcqTarget to;
    NcqPosTime pt;

    ncq_target_of(m, 0, false, &to);            /* same track */
    CHECK_EQ(ncq_pos_seek(m, at, &to, &pt), 0);
    CHECK_EQ(pt.seek_ns + pt.settle_ns, 0);
    ncq_target_of(m, 100, false, &to);          /* head 1: head switch */
    CHECK_EQ(to.ph.head, 1);
    CHECK_EQ(ncq_pos_seek(m, at, &to, &pt), 500 * US);
    CHECK_EQ(pt.seek_ns, 500 * US);
    CHECK_EQ(pt.settle_ns, 0);
    ncq_target_of(m, 100, true, &to);           /* a write settles */
    CHECK_EQ(ncq_pos_seek(m, at, &to, &pt), 750 * US);
    CHECK_EQ(pt.seek_ns, 500 * US);
    CHECK_EQ(pt.settle_ns, 250 * US);
    ncq_target_of(m, 1000, false, &to);         /* cylinder 5, zone 1 */
    CHECK_EQ(to.ph.cyl, 5);
    /* table: 1 ms at 1, 2 ms at 10: 1 + 4/9 ms at 5 */
    CHECK_EQ(ncq_pos_seek(m, at, &to, &pt), 1444444);
    CHECK_EQ(pt.rot_ns + pt.xfer_ns + pt.bus_ns, 0);
}

static void test_pos_time(NcqModel *m, int64_t t0)
{
    NcqMechState at = ncq_mech_state_at(m, t0);
    NcqTarget to;
    NcqPosTime pt;

    ncq_target_of(m, 1, false, &to);            /* next sector */
    CHECK_EQ(ncq_pos_time(m, at, t0, &to, &pt), 100 * US);
    CHECK_EQ(pt.rot_ns, 100 * US);
    ncq_target_of(m, 0, false, &to);            /* just missed */
    CHECK_EQ(ncq_pos_time(m, ncq_mech_state_at(m, t0 + US), t0 + US, &to,
                          &pt), 10 * MS - US);
    /* head 1's sector 0 is 0.1 rev (1 ms) on: switch 0.5, wait 0.5 */
    ncq_target_of(m, 100, false, &to);
    CHECK_EQ(ncq_pos_time(m, at, t0, &to, &pt), 1 * MS);
    CHECK_EQ(pt.seek_ns, 500 * US);
    CHECK_EQ(pt.rot_ns, 500 * US);
    CHECK_EQ(pt_sum(&pt), 1 * MS);
    ncq_target_of(m, 100, true, &to);           /* settle eats the wait */
    CHECK_EQ(ncq_pos_time(m, at, t0, &to, &pt), 1 * MS);
    CHECK_EQ(pt.settle_ns, 250 * US);
    CHECK_EQ(pt.rot_ns, 250 * US);
}

static void test_pos_plan(NcqModel *m, int64_t t0)
{
    NcqMechState at = ncq_mech_state_at(m, t0);
    NcqTarget to;
    NcqPosTime pt;

    /* the plan allows 0.1 ms more settle after any seek */
    ncq_target_of(m, 100, false, &to);
    CHECK_EQ(ncq_pos_plan(m, at, &to, &pt), 1 * MS);
    CHECK_EQ(pt.seek_ns, 500 * US);
    CHECK_EQ(pt.settle_ns, 100 * US);
    CHECK_EQ(pt.rot_ns, 400 * US);
    CHECK_EQ(pt_sum(&pt), 1 * MS);
    ncq_target_of(m, 100, true, &to);
    CHECK_EQ(ncq_pos_plan(m, at, &to, &pt), 1 * MS);
    CHECK_EQ(pt.settle_ns, 350 * US);
    CHECK_EQ(pt.rot_ns, 150 * US);
    /* no seek, no planned settle */
    ncq_target_of(m, 5, false, &to);
    CHECK_EQ(ncq_pos_plan(m, at, &to, &pt), 500 * US);
    CHECK_EQ(pt.seek_ns + pt.settle_ns, 0);
    ncq_target_of(m, 103, false, &to);          /* head 1, 1.3 ms on */
    CHECK_EQ(ncq_pos_plan(m, at, &to, &pt), 1300 * US);
    CHECK_EQ(pt.rot_ns, 700 * US);
    /* head 1's sector 95 passes at 0.5 ms, before the 0.6 ms planned */
    ncq_target_of(m, 195, false, &to);
    CHECK_EQ(ncq_pos_plan(m, at, &to, &pt), 10500 * US);
    CHECK_EQ(pt.rot_ns, 9900 * US);
}

static void test_access(NcqModel *m, int64_t t0)
{
    NcqMechState at = ncq_mech_state_at(m, t0), end;
    NcqTarget to;
    NcqPosTime pt;

    /* 3 sectors from sector 1: wait 100 us, read 300 us */
    ncq_target_of(m, 1, false, &to);
    CHECK_EQ(ncq_access_time(m, at, t0, &to, 3, &pt, &end), 400 * US);
    CHECK_EQ(pt.rot_ns, 100 * US);
    CHECK_EQ(pt.xfer_ns, 300 * US);
    CHECK_EQ(pt.bus_ns, ncq_bus_ns(m, 3));
    CHECK_EQ(pt_sum(&pt), 400 * US);
    CHECK_EQ(end.cyl, 0);
    CHECK_EQ(end.head, 0);
    /*
     * Sectors 98 and 99 (from 9.8 ms), a head switch to 10.5 ms, a wait
     * for head 1's sector 0 at 11 ms, two more sectors: 1.4 ms of media.
     */
    ncq_target_of(m, 98, false, &to);
    CHECK_EQ(ncq_access_time(m, at, t0, &to, 4, &pt, &end), 11200 * US);
    CHECK_EQ(pt.rot_ns, 9800 * US);
    CHECK_EQ(pt.xfer_ns, 1400 * US);
    CHECK_EQ(end.cyl, 0);
    CHECK_EQ(end.head, 1);
}

/* The rotational position some time later, without a division. */
static void test_rot_advance(NcqModel *m)
{
    static const int64_t ts[] = { 0, 1, 9999999, 123456789, 59999999999LL,
                                  60000000001LL, 987654321012LL };
    static const int64_t ds[] = { 0, 1, -1, 4 * MS, -4 * MS, 10 * MS,
                                  9999999999LL, -9999999999LL };
    unsigned i, j;

    for (i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
        for (j = 0; j < sizeof(ds) / sizeof(ds[0]); j++) {
            if (ts[i] + ds[j] < 0) {
                continue;
            }
            CHECK(ncq_rot_advance(m, ncq_rot_pos(m, ts[i]), ds[j]) ==
                  ncq_rot_pos(m, ts[i] + ds[j]),
                  "t %" PRId64 " delta %" PRId64, ts[i], ds[j]);
        }
    }
}

int main(void)
{
    NcqModel *m = ncq_test_model_text(POS_TEST_TEXT, 3);
    /* the instant sector 0 of track (0, 0) is under the head */
    int64_t t0 = ncq_model_rot_wait_ns(m, 0, 0);

    test_seek_parts(m);
    test_pos_time(m, t0);
    test_pos_plan(m, t0);
    test_access(m, t0);
    test_rot_advance(m);
    ncq_model_free(m);
    return ncq_test_done("test-pos");
}
