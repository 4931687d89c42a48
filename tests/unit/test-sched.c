/*
 * Firmware scheduler: policies pick the analytically best candidate,
 * starvation and priority time-outs, reasons, delay counts.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define US 1000LL
#define MS 1000000LL

static NcqModel *small_policy(NcqPolicy pol, uint64_t seed)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, seed);
    NcqSettings s;
    char err[128];

    ncq_model_get_settings(m, &s);
    s.policy = pol;
    s.starvation_timeout_ns = 0;
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    return m;
}

static int find(const NcqCompletion *c, int n, uint32_t id)
{
    int i;

    for (i = 0; i < n; i++) {
        if (c[i].id == id) {
            return i;
        }
    }
    return -1;
}

/*
 * Same track, no seeks: the head leaves sector 10 of track (0,0) after
 * command 0; queued commands at sectors 50, 20, 80 (arrival order).
 * SPTF serves 20 (wait 1 ms), then 50 (from 28: 2.2 ms), then 80; FCFS
 * serves them in arrival order.
 */
static void test_sptf_same_track(void)
{
    NcqModel *m = small_policy(NCQ_POLICY_SPTF, 5);
    int64_t t0 = ncq_model_rot_wait_ns(m, 0, 0) + 10 * MS;
    NcqCompletion c[8];
    int n;

    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 10, t0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 50, 8, t0 + 1), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 20, 8, t0 + 2), 0);
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 80, 8, t0 + 3), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 4);
    CHECK_EQ(c[0].id, 0);
    CHECK_EQ(c[1].id, 2);
    CHECK_EQ(c[2].id, 1);
    CHECK_EQ(c[3].id, 3);
    /* command 0: sectors 0-9 from t0 */
    CHECK_EQ(c[0].media_end_ns, t0 + 1 * MS);
    /* command 2 starts at sector 20: t0 + 2 ms, 8 sectors */
    CHECK_EQ(c[1].dispatch_ns, t0 + 1 * MS);
    CHECK_EQ(c[1].rotate_ns, 1 * MS);
    CHECK_EQ(c[1].media_end_ns, t0 + 2800 * US);
    CHECK_EQ(c[2].media_end_ns, t0 + 5800 * US);
    CHECK_EQ(c[3].media_end_ns, t0 + 8800 * US);
    CHECK_EQ(c[1].reason, NCQ_REASON_POLICY);
    CHECK_EQ(c[3].reason, NCQ_REASON_ONLY);
    /* delay count: 2 arrived after 1 and completed before it */
    CHECK_EQ(c[2].delay_count, 1);
    CHECK_EQ(c[1].delay_count, 0);
    CHECK_EQ(c[1].queue_len_at_arrival, 2);
    ncq_model_free(m);

    m = small_policy(NCQ_POLICY_FCFS, 5);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 10, t0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 50, 8, t0 + 1), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 20, 8, t0 + 2), 0);
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 80, 8, t0 + 3), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 4);
    CHECK(c[1].id == 1 && c[2].id == 2 && c[3].id == 3, "fcfs order");
    CHECK_EQ(c[2].media_end_ns, t0 + 12800 * US);   /* 20 after 58: wrap */
    ncq_model_free(m);
}

/*
 * SPTF over seeks: from cylinder 0, candidates on cylinders 1..4 with
 * known angles.  The expected winner is computed from the public seek
 * and rotation helpers, independently of the scheduler.
 */
static void test_sptf_best(void)
{
    int trial;

    for (trial = 0; trial < 200; trial++) {
        NcqModel *m = small_policy(NCQ_POLICY_SPTF, 100 + trial);
        uint64_t rs = trial * 7919 + 1, lbas[6];
        int64_t t0 = 5 * MS, tfree, best_t = INT64_MAX;
        NcqCompletion c[8];
        int i, n, best = -1;

        CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 1, t0), 0);
        for (i = 1; i <= 5; i++) {
            /* head 0 of cylinders 0..4, random sector */
            lbas[i] = (ncq_test_rng(&rs) % 5) * 200 +
                      ncq_test_rng(&rs) % 92;
            CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, lbas[i], 8,
                                     t0 + i), 0);
        }
        n = ncq_test_drain(m, c, 8);
        CHECK_EQ(n, 6);
        tfree = c[0].media_end_ns;
        for (i = 1; i <= 5; i++) {
            uint32_t cyl = lbas[i] / 200;
            int64_t sk = ncq_model_seek_ns(m, cyl);
            int64_t pos = sk + ncq_model_rot_wait_ns(m, tfree + sk, lbas[i]);

            if (pos < best_t) {
                best_t = pos;
                best = i;
            }
        }
        CHECK(c[1].id == (uint32_t)best, "trial %d: picked %u, best %d",
              trial, c[1].id, best);
        CHECK_EQ(c[1].seek_ns + c[1].rotate_ns, best_t);
        ncq_model_free(m);
    }
}

static void test_sstf_clook(void)
{
    NcqModel *m = small_policy(NCQ_POLICY_SSTF, 5);
    NcqCompletion c[8];
    int n;

    /* head ends on cylinder 2 (lba 400); queue cylinders 4, 1, 3, 0 */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 400, 1, 0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 800, 1, 1), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 200, 1, 2), 0);
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 620, 1, 3), 0);
    CHECK_EQ(ncq_test_submit(m, 4, NCQ_OP_READ, 10, 1, 4), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 5);
    /*
     * SSTF from cylinder 2: cylinder 1 (distance 1, first in arrival
     * order among 1 and 3), then 0, then 3, then 4
     */
    CHECK(c[1].id == 2 && c[2].id == 4 && c[3].id == 3 && c[4].id == 1,
          "sstf order %u %u %u %u", c[1].id, c[2].id, c[3].id, c[4].id);
    ncq_model_free(m);

    m = small_policy(NCQ_POLICY_CLOOK, 5);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 400, 1, 0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 800, 1, 1), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 200, 1, 2), 0);
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 620, 1, 3), 0);
    CHECK_EQ(ncq_test_submit(m, 4, NCQ_OP_READ, 10, 1, 4), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 5);
    /* C-LOOK upward from lba 401: 620, 800, wrap to 10, 200 */
    CHECK(c[1].id == 3 && c[2].id == 1 && c[3].id == 4 && c[4].id == 2,
          "clook order %u %u %u %u", c[1].id, c[2].id, c[3].id, c[4].id);
    ncq_model_free(m);
}

/*
 * Starvation time-out: a far command (cylinder 9) competes with a stream
 * of commands on cylinder 0 that SPTF always prefers.  It must be
 * dispatched at the first decision at or after arrival + T, and not
 * before.
 */
#define NCQ_TEST_FAR \
    "[drive]\nname = far\nmodel = FAR\nkind = hdd\n" \
    "capacity = 1800\nrpm = 6000\nbus_mb_s = 512\n" \
    "[layout]\nheads = 2\nzone = 0 5 100\nzone = 5 5 80\n" \
    "[seek]\ntype = table\npoint = 1 0.5\npoint = 5 1.0\n" \
    "point = 9 40.0\nhead_switch_ms = 0.5\n" \
    "[cache]\nreadahead_kib = 0\nwrite_cache = off\n"

static void test_timeout(int64_t timeout, bool prio)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_FAR, 11);
    NcqSettings s;
    char err[128];
    int64_t t = 0, far_arrival = 1 * MS;
    NcqCompletion c[64];
    int64_t dispatches[4096];
    int nd = 0, i, k, done = 0;
    bool far_done = false;
    NcqCompletion far = { 0 };
    uint64_t rs = 99;

    ncq_model_get_settings(m, &s);
    s.policy = NCQ_POLICY_SPTF;
    if (prio) {
        s.honour_prio = true;
        s.prio_timeout_ns = timeout;
        s.starvation_timeout_ns = 0;
    } else {
        s.starvation_timeout_ns = timeout;
    }
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    /* 4 near commands outstanding all the time */
    for (k = 0; k < 4; k++) {
        CHECK_EQ(ncq_test_submit(m, k, NCQ_OP_READ,
                                 ncq_test_rng(&rs) % 190, 8, 0), 0);
    }
    {
        NcqCmd fc = { .id = 10, .op = NCQ_OP_READ, .lba = 1790,
                      .sectors = 8, .queued = true, .prio = prio };

        CHECK_EQ(ncq_model_submit(m, &fc, far_arrival), 0);
    }
    while (!far_done && t < 10 * timeout) {
        int n;

        t = ncq_model_next_event(m);
        n = ncq_model_advance(m, t, c, 64);
        for (i = 0; i < n; i++) {
            if (c[i].id == 10) {
                far_done = true;
                far = c[i];
                continue;
            }
            done++;
            if (nd < 4096) {
                dispatches[nd++] = c[i].dispatch_ns;
            }
            CHECK_EQ(ncq_test_submit(m, c[i].id, NCQ_OP_READ,
                                     ncq_test_rng(&rs) % 190, 8, t), 0);
        }
    }
    CHECK(far_done, "far command never served");
    if (prio) {
        /* honoured priority: served at the first decision */
        CHECK_EQ(far.reason, NCQ_REASON_PRIORITY);
        CHECK(far.dispatch_ns - far_arrival < 30 * MS, "prio served late");
        ncq_model_free(m);
        return;
    }
    CHECK(done > 10, "near commands served: %d", done);
    CHECK_EQ(far.reason, NCQ_REASON_TIMEOUT);
    CHECK(far.dispatch_ns >= far_arrival + timeout,
          "dispatched before the time-out: %" PRId64,
          far.dispatch_ns - far_arrival);
    /* no other decision between arrival + T and its dispatch */
    for (i = 0; i < nd; i++) {
        CHECK(!(dispatches[i] >= far_arrival + timeout &&
                dispatches[i] < far.dispatch_ns),
              "a decision at %" PRId64 " skipped the timed-out command",
              dispatches[i]);
    }
    ncq_model_free(m);
}

/* Priority time-out: high-priority commands compete; an old one is forced */
static void test_prio_order(void)
{
    NcqModel *m = small_policy(NCQ_POLICY_SPTF, 3);
    NcqSettings s;
    char err[128];
    NcqCompletion c[8];
    NcqCmd a = { .id = 1, .op = NCQ_OP_READ, .lba = 1700, .sectors = 8,
                 .queued = true, .prio = true };
    int n, i;

    ncq_model_get_settings(m, &s);
    s.honour_prio = true;
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 8, 0), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 8, 8, 1), 0);
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 16, 8, 2), 0);
    CHECK_EQ(ncq_model_submit(m, &a, 3), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 4);
    i = find(c, n, 1);
    CHECK_EQ(i, 1);     /* right after the command in service */
    CHECK_EQ(c[i].reason, NCQ_REASON_PRIORITY);
    ncq_model_free(m);
}

static void test_aged(void)
{
    /* with a huge aging weight, aged SPTF degenerates to oldest first */
    NcqModel *m = small_policy(NCQ_POLICY_ASPTF, 5);
    NcqSettings s;
    char err[128];
    int64_t t0 = ncq_model_rot_wait_ns(m, 0, 0) + 10 * MS;
    NcqCompletion c[8];
    int n;

    ncq_model_get_settings(m, &s);
    s.aging_weight_milli = 1000000;
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 10, t0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 50, 8, t0 + 100 * US), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 20, 8, t0 + 200 * US), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 3);
    CHECK_EQ(c[1].id, 1);
    CHECK_EQ(c[1].reason, NCQ_REASON_AGED);
    ncq_model_free(m);
}

/*
 * Settings changed at a time apply from then on, however the model was
 * polled before.
 */
static void test_settings_at(void)
{
    NcqCompletion a[40], b[40];
    int run, n[2] = { 0, 0 };

    for (run = 0; run < 2; run++) {
        NcqModel *m = small_policy(NCQ_POLICY_SPTF, 8);
        NcqCompletion *c = run ? b : a;
        NcqSettings s;
        char err[64];
        int i;

        for (i = 0; i < 20; i++) {
            CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, (i * 397) % 1790, 8,
                                     i), 0);
        }
        if (run) {
            /* poll often before the change */
            int64_t t;

            for (t = 0; t < 30 * MS; t += 100 * US) {
                n[run] += ncq_model_advance(m, t, c + n[run], 40 - n[run]);
            }
        }
        ncq_model_get_settings(m, &s);
        s.policy = NCQ_POLICY_FCFS;
        CHECK_EQ(ncq_model_set_settings_at(m, &s, 30 * MS, err,
                                           sizeof(err)), 0);
        n[run] += ncq_test_drain(m, c + n[run], 40 - n[run]);
        ncq_model_free(m);
    }
    CHECK_EQ(n[0], 20);
    CHECK_EQ(n[1], 20);
    CHECK(!memcmp(a, b, sizeof(a[0]) * 20), "same results");
}

int main(void)
{
    test_settings_at();
    test_sptf_same_track();
    test_sptf_best();
    test_sstf_clook();
    test_timeout(100 * MS, false);
    test_timeout(250 * MS, false);
    test_timeout(100 * MS, true);
    test_prio_order();
    test_aged();
    return ncq_test_done("test-sched");
}
