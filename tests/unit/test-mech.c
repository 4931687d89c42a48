/*
 * Mechanics: rotational latency for a known geometry and time, seek
 * interpolation (table and two-part curve), service time of a single
 * command computed by hand.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define US 1000LL
#define MS 1000000LL

static void test_rotation(void)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 3);
    /* t0: the instant sector 0 of track (0,0) is under the head */
    int64_t t0 = ncq_model_rot_wait_ns(m, 0, 0);
    int k;

    CHECK(t0 >= 0 && t0 < 10 * MS, "t0 %" PRId64, t0);
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 0), 0);
    /* sector s of track 0 starts s * 100 us later */
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 1), 100 * US);
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 37), 3700 * US);
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 99), 9900 * US);
    /* just missed: a full revolution less 1 us */
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0 + 1 * US, 0), 10 * MS - 1 * US);
    /* track skew 0.1 rev on head 1: sector 0 at +1 ms */
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 100), 1 * MS);
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 150), 6 * MS);
    /* cylinder 1 head 0: cyl skew 0.2 + one head switch 0.1 = 0.3 rev */
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 200), 3 * MS);
    /* cylinder 2 head 1: 2 * 0.3 + 0.1 = 0.7 rev */
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 500), 7 * MS);
    /*
     * zone 1 (80 spt, 125 us per sector), cylinder 5 head 0: 5 * 0.3 =
     * 1.5 rev -> 0.5 rev
     */
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 1000), 5 * MS);
    CHECK_EQ(ncq_model_rot_wait_ns(m, t0, 1004), 5 * MS + 500 * US);
    /* periodic: whole revolutions later, the same answers */
    for (k = 1; k < 2000; k += 97) {
        CHECK_EQ(ncq_model_rot_wait_ns(m, t0 + k * 10 * MS, 37), 3700 * US);
    }
    /* another seed moves the phase, not the geometry */
    {
        NcqModel *m2 = ncq_test_model_text(NCQ_TEST_SMALL, 4);
        int64_t u0 = ncq_model_rot_wait_ns(m2, 0, 0);

        CHECK(u0 != t0, "phase from seed");
        CHECK_EQ(ncq_model_rot_wait_ns(m2, u0, 37), 3700 * US);
        ncq_model_free(m2);
    }
    ncq_model_free(m);
}

static void test_seek(void)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 1);
    NcqModel *t2;

    /* table (1, 1 ms), (10, 2 ms): linear in between, extrapolated */
    CHECK_EQ(ncq_model_seek_ns(m, 0), 0);
    CHECK_EQ(ncq_model_seek_ns(m, 1), 1 * MS);
    CHECK_EQ(ncq_model_seek_ns(m, 10), 2 * MS);
    CHECK_EQ(ncq_model_seek_ns(m, 4), 1 * MS + 3 * MS / 9);
    CHECK_EQ(ncq_model_seek_ns(m, 19), 3 * MS);
    ncq_model_free(m);

    t2 = ncq_test_model_text(
        "[drive]\nname = tp\nmodel = TP\nkind = hdd\ncapacity = 1000\n"
        "rpm = 6000\n[layout]\nheads = 1\nzone = 0 1000 10\n"
        "[seek]\ntype = twopart\na_ms = 1\nb_ms = 0.5\nx = 100\nc_ms = 5\n"
        "e_ms = 0.01\npoint = 1 1\n", 1);
    CHECK_EQ(ncq_model_seek_ns(t2, 4), 2 * MS);         /* 1 + 0.5 * 2 */
    CHECK_EQ(ncq_model_seek_ns(t2, 81), 5500 * US);     /* 1 + 0.5 * 9 */
    CHECK_EQ(ncq_model_seek_ns(t2, 100), 6 * MS);       /* 5 + 0.01 * 100 */
    CHECK_EQ(ncq_model_seek_ns(t2, 500), 10 * MS);
    /* sqrt part within 1 us of the real value */
    CHECK(llabs(ncq_model_seek_ns(t2, 2) - 1707107) < 1000, "sqrt(2)");
    ncq_model_free(t2);
}

/* One read on an idle drive: seek + rotation + transfer + bus, by hand. */
static void test_single(void)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 9);
    int64_t t0 = ncq_model_rot_wait_ns(m, 0, 0) + 20 * MS;
    NcqCompletion c[4];
    int n;

    /*
     * head starts at cylinder 0, head 0.  Read 8 sectors at cylinder 3
     * head 0 sector 10 (lba 610): seek 3 cylinders = 1 + 2/9 ms.
     */
    int64_t seek = 1 * MS + 2 * MS / 9;
    /*
     * sector 10 of cylinder 3 head 0: skew 3 * 0.3 = 0.9 rev, plus 0.1
     * for sector 10: angle 0, a whole number of revolutions after t0
     */
    int64_t arrive = t0 + seek;
    int64_t first = t0 + 10 * MS;      /* next pass of angle 0 */
    int64_t end = first + 8 * 100 * US;

    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 610, 8, t0), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].seek_ns, seek);
    CHECK_EQ(c[0].rotate_ns, first - arrive);
    CHECK_EQ(c[0].transfer_ns, 8 * 100 * US);
    CHECK_EQ(c[0].media_end_ns, end);
    /* bus 1 us per sector overlaps the media; the last sector follows */
    CHECK_EQ(c[0].complete_ns, end + 1 * US);
    CHECK_EQ(c[0].dispatch_ns, t0);
    CHECK_EQ(c[0].reason, NCQ_REASON_ONLY);

    /*
     * across a head switch: 8 sectors from sector 96 of (0,0):
     * 4 sectors, switch 0.5 ms, then wait for the skewed sector 0 of
     * head 1 (0.1 rev after sector 0 of head 0), 4 more sectors.
     */
    {
        int64_t t1 = c[0].complete_ns + 50 * MS;
        int64_t w;

        t1 += ncq_model_rot_wait_ns(m, t1, 96);   /* no seek wait: below */
        CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 96, 8,
                                 t1 - 10 * MS), 0);
        n = ncq_test_drain(m, c, 4);
        CHECK_EQ(n, 1);
        /* from cylinder 3 to 0: seek 1 + 2/9 ms, arrival before t1 */
        CHECK_EQ(c[0].media_start_ns + c[0].seek_ns + c[0].rotate_ns, t1);
        w = t1 + 4 * 100 * US;          /* end of sector 99 = angle 0 */
        w += 500 * US;                  /* head switch */
        w += 500 * US;                  /* wait to angle 0.1 */
        CHECK_EQ(c[0].media_end_ns, w + 4 * 100 * US);
    }
    ncq_model_free(m);
}

/* Zero-latency access: landing inside the request saves the wait. */
static void test_zero_latency(void)
{
    int zl;

    for (zl = 0; zl < 2; zl++) {
        NcqModel *m = ncq_test_model_text(
            NCQ_TEST_SMALL "[firmware]\nzero_latency = on\n", 9);
        int64_t t0 = ncq_model_rot_wait_ns(m, 0, 0) + 20 * MS;
        NcqSettings s;
        NcqCompletion c[2];
        char err[64];

        ncq_model_get_settings(m, &s);
        s.zero_latency = zl;
        CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
        /* sectors 0..49 of track (0,0); the head is over sector 10 */
        CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 50, t0 + 1 * MS), 0);
        CHECK_EQ(ncq_test_drain(m, c, 2), 1);
        if (zl) {
            /* 10..49, gap 50..99, 0..9: one revolution */
            CHECK_EQ(c[0].rotate_ns, 0);
            CHECK_EQ(c[0].media_end_ns, t0 + 11 * MS);
        } else {
            /* wait 9 ms for sector 0, read 5 ms */
            CHECK_EQ(c[0].rotate_ns, 9 * MS);
            CHECK_EQ(c[0].media_end_ns, t0 + 15 * MS);
        }
        ncq_model_free(m);
    }
    {
        NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 1);
        NcqSettings s;
        char err[64];

        ncq_model_get_settings(m, &s);
        s.zero_latency = true;
        CHECK(ncq_model_set_settings(m, &s, err, sizeof(err)) < 0,
              "zero latency refused when the drive lacks it");
        ncq_model_free(m);
    }
}

int main(void)
{
    test_zero_latency();
    test_rotation();
    test_seek();
    test_single();
    return ncq_test_done("test-mech");
}
