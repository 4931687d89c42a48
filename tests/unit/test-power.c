/*
 * Power management in the model (docs/power-modes.md): the spindle stops
 * and spins up again before the next media access.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "hw/ide/ncq-smart.h"

#define MS 1000000LL
/* NCQ_TEST_SMALL with a write cache and spin times of 3 s and 4 s */
#define SMALL_PM \
    "[drive]\nname = small\nmodel = SMALL\nkind = hdd\n" \
    "capacity = 1800\nrpm = 6000\nbus_mb_s = 512\n" \
    "[layout]\nheads = 2\nzone = 0 5 100\nzone = 5 5 80\n" \
    "track_skew = 0.1\ncyl_skew = 0.2\n" \
    "[seek]\ntype = table\npoint = 1 1.0\npoint = 10 2.0\n" \
    "head_switch_ms = 0.5\n" \
    "[cache]\nsegments = 4\nsegment_kib = 64\nreadahead_kib = 0\n" \
    "write_cache = on\nwrite_cache_kib = 64\n" \
    "[power]\nspinup_ms = 3000\nspindown_ms = 4000\n"

/* One command at @t on a fresh model; its latency */
static int64_t latency(NcqModel *m, NcqOp op, uint64_t lba, int64_t t)
{
    NcqCompletion c[4];
    int n;

    CHECK_EQ(ncq_test_submit(m, 0, op, lba, 8, t), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 1);
    return c[0].complete_ns - c[0].arrival_ns;
}

/* A read after standby waits for the spin-up, then positions as before */
static void test_read_waits_for_spinup(void)
{
    NcqModel *a = ncq_test_model_text(SMALL_PM, 7);
    NcqModel *b = ncq_test_model_text(SMALL_PM, 7);
    int64_t la, lb;

    CHECK(ncq_model_spinning(a), "a new drive's spindle turns");
    CHECK_EQ(ncq_model_spin_down(a, 100 * MS), 0);
    CHECK(!ncq_model_spinning(a), "stopped after spin_down");
    la = latency(a, NCQ_OP_READ, 900, 200 * MS);
    lb = latency(b, NCQ_OP_READ, 900, 200 * MS);
    CHECK(ncq_model_spinning(a), "the read spun it up");
    CHECK(la >= lb + 3000 * MS && la < lb + 3000 * MS + 20 * MS,
          "latency after standby %lld, spun %lld: +3 s spin-up expected",
          (long long)la, (long long)lb);
    /* the next read pays no spin-up */
    la = latency(a, NCQ_OP_READ, 100, 4000 * MS);
    CHECK(la < 30 * MS, "second read %lld ns", (long long)la);
    ncq_model_free(a);
    ncq_model_free(b);
}

/* Queued commands arriving during the spin-up all wait for it */
static void test_queued_wait(void)
{
    NcqModel *m = ncq_test_model_text(SMALL_PM, 3);
    NcqCompletion c[8];
    int i, n;

    CHECK_EQ(ncq_model_spin_down(m, 0), 0);
    for (i = 0; i < 4; i++) {
        CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, 200 * i + 50, 8,
                                 i * MS), 0);
    }
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 4);
    for (i = 0; i < n; i++) {
        CHECK(c[i].dispatch_ns >= 3000 * MS,
              "tag %u dispatched at %lld, before the spindle is up",
              c[i].id, (long long)c[i].dispatch_ns);
    }
    ncq_model_free(m);
}

/*
 * A write the cache takes completes at once, its destage spins the drive
 * up; a FLUSH with nothing to write does not; one after a write waits.
 */
static void test_write_and_flush(void)
{
    NcqModel *m = ncq_test_model_text(SMALL_PM, 5);
    NcqCmd f = { .op = NCQ_OP_FLUSH, .id = NCQ_ID_NONQUEUED };
    NcqCompletion c[4];

    CHECK_EQ(ncq_model_spin_down(m, 0), 0);
    CHECK_EQ(ncq_model_submit(m, &f, 10 * MS), 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    CHECK(c[0].complete_ns < 20 * MS, "clean flush took %lld ns",
          (long long)(c[0].complete_ns - c[0].arrival_ns));
    CHECK(!ncq_model_spinning(m), "a clean flush left it at rest");

    CHECK(latency(m, NCQ_OP_WRITE, 300, 100 * MS) < 5 * MS,
          "a cached write completes at once");
    CHECK(ncq_model_spinning(m), "its destage spins the drive up");
    CHECK_EQ(ncq_model_spin_down(m, 4000 * MS), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_WRITE, 600, 8, 4100 * MS), 0);
    CHECK_EQ(ncq_model_advance(m, 4101 * MS, c, 4), 1);
    CHECK_EQ(ncq_model_submit(m, &f, 4101 * MS), 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    CHECK(c[0].complete_ns >= 7100 * MS,
          "a flush of dirty data completed at %lld, before the spin-up",
          (long long)c[0].complete_ns);
    ncq_model_free(m);
}

/* A drive with a command or dirty data refuses; spin_up starts at once */
static void test_refusals_and_spin_up(void)
{
    NcqModel *m = ncq_test_model_text(SMALL_PM, 9);
    NcqCmd f = { .op = NCQ_OP_FLUSH, .id = NCQ_ID_NONQUEUED };
    NcqCompletion c[4];

    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 900, 8, 0), 0);
    CHECK_EQ(ncq_model_spin_down(m, 0), NCQ_ERR_MIXED);
    ncq_test_drain(m, c, 4);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, 900, 8, 100 * MS), 0);
    CHECK_EQ(ncq_model_advance(m, 100 * MS + 100000, c, 4), 1);
    CHECK(c[0].media_end_ns == 0, "the cache took the write");
    CHECK_EQ(ncq_model_spin_down(m, 100 * MS + 100000), NCQ_ERR_MIXED);
    CHECK_EQ(ncq_model_spin_down(m, 1000 * MS), 0);
    /* IDLE from standby: spin up now; a clean FLUSH completes when up */
    ncq_model_spin_up(m, 2000 * MS);
    CHECK(ncq_model_spinning(m), "spinning up");
    CHECK_EQ(ncq_model_submit(m, &f, 2000 * MS), 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    CHECK(c[0].complete_ns >= 5000 * MS && c[0].complete_ns < 5010 * MS,
          "flush behind the spin-up completed at %lld",
          (long long)c[0].complete_ns);
    ncq_model_free(m);
}

/* An SSD has no spindle; a hard disk file without [power] gets defaults */
static void test_params(void)
{
    NcqParams *p;
    NcqModel *m;
    char err[256];

    m = ncq_test_model("intel-530", 1);
    CHECK_EQ(ncq_model_params(m)->spinup_ns, 0);
    CHECK_EQ(ncq_model_spin_down(m, 0), 0);
    CHECK(ncq_model_spinning(m), "an SSD never stops");
    CHECK(latency(m, NCQ_OP_READ, 100, MS) < 5 * MS, "SSD read");
    ncq_model_free(m);

    m = ncq_test_model_text(NCQ_TEST_SMALL, 1);
    CHECK_EQ(ncq_model_params(m)->spinup_ns, NCQ_DEFAULT_SPINUP_NS);
    CHECK_EQ(ncq_model_params(m)->spindown_ns, NCQ_DEFAULT_SPINDOWN_NS);
    ncq_model_free(m);

    CHECK(ncq_params_parse(NCQ_TEST_SMALL "[power]\nspinup_ms = 70000\n",
                           "t.ncqm", &p, err, sizeof(err)) < 0 &&
          strstr(err, "spinup_ms"), "70 s refused: %s", err);
}

/*
 * SMART: a spin-up counts a start; the spindle hours stop growing
 * spindown_ms after a spin-down, the power-on hours do not; the state
 * keeps them
 */
static void test_smart_spindle(void)
{
    NcqModel *m = ncq_test_model_text(SMALL_PM, 1);
    NcqSmart sm, back;
    int64_t h = 3600 * 1000 * MS;
    uint8_t buf[65536];
    size_t n;

    ncq_smart_init(&sm, 0);
    ncq_smart_power_cycle(&sm, m, 0);
    CHECK_EQ(sm.start_stops, 1);
    ncq_smart_update(&sm, m, 2 * h);
    CHECK_EQ(ncq_smart_spindle_hours(&sm), 2);
    ncq_smart_spindle(&sm, m, 2 * h, false);
    ncq_smart_update(&sm, m, 5 * h);
    CHECK_EQ(sm.spindle_ns, 2 * h + 4000 * MS);
    CHECK_EQ(ncq_smart_power_on_hours(&sm), 5);
    n = ncq_smart_state_size(&sm);
    CHECK(n <= sizeof(buf), "state of %zu bytes", n);
    ncq_smart_state_save(&sm, buf);
    CHECK_EQ(ncq_smart_state_load(&back, buf, n), 0);
    CHECK_EQ(back.spindle_ns, sm.spindle_ns);
    CHECK(back.spindle_off, "the spindle stays off");
    ncq_smart_spindle(&sm, m, 5 * h, true);
    CHECK_EQ(sm.start_stops, 2);
    ncq_smart_update(&sm, m, 6 * h);
    CHECK_EQ(sm.spindle_ns, 3 * h + 4000 * MS);
    ncq_model_free(m);
}

int main(void)
{
    test_smart_spindle();
    test_read_waits_for_spinup();
    test_queued_wait();
    test_write_and_flush();
    test_refusals_and_spin_up();
    test_params();
    return ncq_test_done("power");
}
