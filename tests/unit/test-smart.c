/*
 * SMART (smart.c, smart-state.c): attributes from the drive's state, the
 * error log's wrap, self-tests in virtual time stopping at the first bad
 * sector, thresholds and health, the state as bytes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "hw/ide/ncq-smart.h"

#define S 1000000000LL
#define HOUR (3600 * S)

static NcqModel *smart_model(const char *rules)
{
    NcqModel *m = ncq_test_new(ncq_params_builtin("st3400620as"), 1);
    NcqFaultRule r[NCQ_MAX_FAULTS];
    char err[512];
    int n, i;

    n = ncq_fault_parse(rules, r, NCQ_MAX_FAULTS, err, sizeof(err));
    CHECK(n >= 0, "parse '%s': %s", rules, err);
    for (i = 0; i < n; i++) {
        CHECK_EQ(ncq_model_fault_add(m, &r[i], err, sizeof(err)), i);
    }
    return m;
}

static uint64_t attr_raw(NcqSmart *sm, NcqModel *m, uint8_t id,
                         uint8_t *value)
{
    NcqSmartAttr a[NCQ_SMART_MAX_ATTRS];
    int n = ncq_smart_attrs(sm, m, a, NCQ_SMART_MAX_ATTRS), i;

    for (i = 0; i < n; i++) {
        if (a[i].id == id) {
            if (value) {
                *value = a[i].value;
            }
            return a[i].raw;
        }
    }
    CHECK(0, "no attribute %u", id);
    return UINT64_MAX;
}

static void done(NcqSmart *sm, NcqModel *m, NcqOp op, uint64_t lba,
                 uint32_t n, int fault, uint64_t flba, int64_t t)
{
    NcqSmartCmdRec rec = {
        .cmd = op == NCQ_OP_READ ? 0x25 : 0x35, .count = n, .lba = lba,
        .device = 0x40,
    };

    ncq_smart_command_done(sm, m, &rec, op, lba, n, fault, flba, t);
}

/* Counters follow time, boots, errors and writes. */
static void test_attributes(void)
{
    NcqModel *m = smart_model("unc@5000+4");
    NcqSmart sm;
    NcqCompletion c[4];

    ncq_smart_init(&sm, 0);
    ncq_model_attach_smart(m, &sm);
    ncq_smart_power_cycle(&sm, m, 0);
    CHECK_EQ(attr_raw(&sm, m, 12, NULL), 1);
    CHECK_EQ(attr_raw(&sm, m, 4, NULL), 1);
    ncq_smart_update(&sm, m, 2 * HOUR + 5 * S);
    CHECK_EQ(attr_raw(&sm, m, 9, NULL), 2);
    ncq_smart_power_cycle(&sm, m, 3 * HOUR);
    CHECK_EQ(attr_raw(&sm, m, 12, NULL), 2);
    CHECK_EQ(attr_raw(&sm, m, 9, NULL), 3);

    /* A read meets the bad sectors: UNC, pending, reported, logged */
    done(&sm, m, NCQ_OP_READ, 4990, 16, NCQ_FAULT_UNC, 5000, 3 * HOUR);
    CHECK_EQ(attr_raw(&sm, m, 197, NULL), 1);
    CHECK_EQ(attr_raw(&sm, m, 187, NULL), 1);
    CHECK_EQ(attr_raw(&sm, m, 198, NULL), 0);
    CHECK_EQ(sm.nerr, 1);
    CHECK_EQ(ncq_smart_error_rec(&sm, 0)->lba, 5000);
    CHECK_EQ(ncq_smart_error_rec(&sm, 0)->error, 0x40);

    /* Writing it reallocates it; pending falls */
    done(&sm, m, NCQ_OP_WRITE, 5000, 1, NCQ_FAULT_NONE, 0, 3 * HOUR + S);
    CHECK_EQ(attr_raw(&sm, m, 5, NULL), 1);
    CHECK_EQ(attr_raw(&sm, m, 197, NULL), 0);
    CHECK(ncq_smart_remapped(&sm, 5000), "5000 reallocated");

    /* ... and the model's UNC rule now fails the next sector only */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 4999, 8, 3 * HOUR + 2 * S),
             0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    CHECK_EQ(c[0].fault, NCQ_FAULT_UNC);
    CHECK_EQ(c[0].fault_lba, 5001);

    /* A successful read of a pending sector clears it */
    done(&sm, m, NCQ_OP_READ, 5001, 1, NCQ_FAULT_UNC, 5001, 3 * HOUR + 3 * S);
    CHECK_EQ(attr_raw(&sm, m, 197, NULL), 1);
    done(&sm, m, NCQ_OP_READ, 5001, 1, NCQ_FAULT_NONE, 0, 3 * HOUR + 4 * S);
    CHECK_EQ(attr_raw(&sm, m, 197, NULL), 0);
    CHECK_EQ(attr_raw(&sm, m, 5, NULL), 1);
    ncq_model_free(m);
}

/* The error log keeps the last NCQ_SMART_MAX_ERRORS, newest first. */
static void test_error_log_wrap(void)
{
    NcqModel *m = smart_model("");
    NcqSmart sm;
    const NcqSmartError *e;
    int i;

    ncq_smart_init(&sm, 0);
    for (i = 0; i < 25; i++) {
        done(&sm, m, NCQ_OP_READ, 100 * i, 8, NCQ_FAULT_NONE, 0, i * S);
        done(&sm, m, NCQ_OP_READ, 100 * i + 1, 8, NCQ_FAULT_UNC,
             100 * i + 3, i * S + 1);
    }
    CHECK_EQ(sm.nerr, 25);
    CHECK_EQ(ncq_smart_error_rec(&sm, 0)->lba, 2403);
    CHECK_EQ(ncq_smart_error_rec(&sm, 19)->lba, 503);
    CHECK(ncq_smart_error_rec(&sm, 20) == NULL, "only %d kept",
          NCQ_SMART_MAX_ERRORS);
    /* each entry has the commands before the failing one, oldest first */
    e = ncq_smart_error_rec(&sm, 0);
    CHECK_EQ(e->cmd[NCQ_SMART_HISTORY].lba, 2401);
    CHECK_EQ(e->cmd[NCQ_SMART_HISTORY - 1].lba, 2400);
    CHECK_EQ(e->cmd[NCQ_SMART_HISTORY - 2].lba, 2301);
    ncq_model_free(m);
}

/* An extended test progresses in virtual time and stops at the bad LBA. */
static void test_selftest_stop(void)
{
    NcqModel *m = smart_model("unc@300000000+8;unc@100:once");
    const NcqParams *p = ncq_model_params(m);
    NcqSmart sm;
    int64_t total, left, t0 = 10 * S;
    uint8_t st;

    ncq_smart_init(&sm, 0);
    ncq_smart_power_cycle(&sm, m, 0);
    total = ncq_smart_test_ns(m, &sm, NCQ_SMART_EXTENDED);
    /* the whole surface at its zone rates: between 40 and 100 MB/s */
    CHECK(total > (int64_t)(p->capacity * 512 * 10) &&
          total < (int64_t)(p->capacity * 512 * 25),
          "extended test %lld s", (long long)(total / S));
    CHECK_EQ(ncq_smart_test_start(&sm, m, NCQ_SMART_EXTENDED, t0), 0);
    CHECK_EQ(ncq_smart_exec_status(&sm), 0xf9);
    left = ncq_smart_test_left_ns(&sm);
    CHECK(left > 0 && left < total, "stops early: %lld of %lld",
          (long long)left, (long long)total);
    CHECK_EQ(ncq_smart_test_start(&sm, m, NCQ_SMART_SHORT, t0 + S),
             NCQ_ERR_TAG_BUSY);
    /* LBA 300000000 of 781422768: stops after about 38% of the time */
    ncq_smart_update(&sm, m, t0 + left / 2);
    st = ncq_smart_exec_status(&sm);
    CHECK(st == 0xf9 || st == 0xf8, "a fifth done: %02x", st);

    /* busy host: an off-line test is suspended */
    ncq_smart_activity(&sm, m, t0 + left / 2, true);
    ncq_smart_update(&sm, m, t0 + left / 2 + 1000 * S);
    CHECK_EQ(ncq_smart_test_left_ns(&sm), left - left / 2);
    ncq_smart_activity(&sm, m, t0 + left / 2 + 1000 * S, false);
    ncq_smart_update(&sm, m, t0 + left + 1000 * S - 1);
    CHECK_EQ(ncq_smart_exec_status(&sm) >> 4, NCQ_SMART_ST_RUNNING);
    ncq_smart_update(&sm, m, t0 + left + 1000 * S);
    CHECK_EQ(ncq_smart_exec_status(&sm), (NCQ_SMART_ST_READ << 4) | 7);
    CHECK_EQ(ncq_smart_test_rec(&sm, 0)->fail_lba, 300000000);
    CHECK_EQ(ncq_smart_test_rec(&sm, 0)->type, NCQ_SMART_EXTENDED);
    CHECK_EQ(attr_raw(&sm, m, 197, NULL), 1);
    CHECK_EQ(attr_raw(&sm, m, 198, NULL), 1);

    /* a short test misses the sector (not in its sample) and passes */
    CHECK_EQ(ncq_smart_test_start(&sm, m, NCQ_SMART_SHORT, 100000 * S), 0);
    total = ncq_smart_test_ns(m, &sm, NCQ_SMART_SHORT);
    CHECK(total > 10 * S && total < 300 * S, "short test %lld s",
          (long long)(total / S));
    ncq_smart_update(&sm, m, 100000 * S + total);
    CHECK_EQ(ncq_smart_exec_status(&sm), 0x00);
    CHECK_EQ(ncq_smart_test_rec(&sm, 0)->fail_lba, UINT64_MAX);

    /* an abort logs status 1 */
    CHECK_EQ(ncq_smart_test_start(&sm, m, NCQ_SMART_EXTENDED, 200000 * S), 0);
    ncq_smart_test_abort(&sm, m, NCQ_SMART_ST_ABORTED, 200001 * S);
    CHECK_EQ(ncq_smart_exec_status(&sm) >> 4, NCQ_SMART_ST_ABORTED);
    CHECK_EQ(sm.ntests, 3);
    ncq_model_free(m);
}

/* A selective test reads its spans only. */
static void test_selective(void)
{
    NcqModel *m = smart_model("unc@700000+1");
    NcqSmart sm;
    NcqSmartSpan span[NCQ_SMART_SPANS] = { { 0, 99999 }, { 600000, 800000 } };
    NcqSmartSpan bad[NCQ_SMART_SPANS] = { { 10, 5 } };

    ncq_smart_init(&sm, 0);
    CHECK_EQ(ncq_smart_set_spans(&sm, m, bad, 0, 0), NCQ_ERR_RANGE);
    CHECK_EQ(ncq_smart_set_spans(&sm, m, span, 0, 0), 0);
    CHECK_EQ(ncq_smart_test_start(&sm, m, NCQ_SMART_SELECTIVE, 0), 0);
    ncq_smart_update(&sm, m, 3600 * S);
    CHECK_EQ(ncq_smart_test_rec(&sm, 0)->fail_lba, 700000);
    span[1].end = 699999;
    CHECK_EQ(ncq_smart_set_spans(&sm, m, span, 0, 0), 0);
    /* the pending sector is outside the spans now */
    CHECK_EQ(ncq_smart_test_start(&sm, m, NCQ_SMART_SELECTIVE, 3600 * S), 0);
    ncq_smart_update(&sm, m, 7200 * S);
    CHECK_EQ(ncq_smart_exec_status(&sm), 0x00);
    ncq_model_free(m);
}

/* A pre-failure attribute at its threshold: the drive says FAILING. */
static void test_health(void)
{
    NcqModel *m = smart_model("");
    NcqSmart sm;
    uint8_t v;
    int i;

    ncq_smart_init(&sm, 0);
    for (i = 0; i < 2621; i++) {
        done(&sm, m, NCQ_OP_READ, i, 1, NCQ_FAULT_UNC, i, 1);
        done(&sm, m, NCQ_OP_WRITE, i, 1, NCQ_FAULT_NONE, 0, 2);
    }
    attr_raw(&sm, m, 5, &v);
    CHECK_EQ(v, 37);
    CHECK(!ncq_smart_failing(&sm, m), "37 > threshold 36");
    done(&sm, m, NCQ_OP_READ, i, 1, NCQ_FAULT_UNC, i, 3);
    done(&sm, m, NCQ_OP_WRITE, i, 1, NCQ_FAULT_NONE, 0, 4);
    CHECK_EQ(attr_raw(&sm, m, 5, &v), 2622);
    CHECK_EQ(v, 36);
    CHECK(ncq_smart_failing(&sm, m), "36 <= threshold 36");
    ncq_model_free(m);
}

/*
 * The values do not depend on how often the state is looked at: updates
 * at every second give what one update at the end gives.
 */
static void test_sampling(void)
{
    NcqModel *m = smart_model("unc@700000000");
    static NcqSmart a, b;
    int64_t t;

    ncq_smart_init(&a, 0);
    ncq_smart_init(&b, 0);
    ncq_smart_power_cycle(&a, m, 0);
    ncq_smart_power_cycle(&b, m, 0);
    CHECK_EQ(ncq_smart_test_start(&a, m, NCQ_SMART_EXTENDED, 10 * S), 0);
    CHECK_EQ(ncq_smart_test_start(&b, m, NCQ_SMART_EXTENDED, 10 * S), 0);
    /* busy from 100 s to 1000 s, idle afterwards */
    ncq_smart_activity(&a, m, 100 * S, true);
    ncq_smart_activity(&b, m, 100 * S, true);
    for (t = 100 * S; t < 1000 * S; t += S) {
        ncq_smart_update(&a, m, t);
    }
    ncq_smart_activity(&a, m, 1000 * S, false);
    ncq_smart_activity(&b, m, 1000 * S, false);
    for (t = 1000 * S; t < 20000 * S; t += S) {
        ncq_smart_update(&a, m, t);
    }
    ncq_smart_update(&a, m, 20000 * S);
    ncq_smart_update(&b, m, 20000 * S);
    CHECK_EQ(ncq_smart_temperature(&a), ncq_smart_temperature(&b));
    CHECK(ncq_smart_temperature(&a) > 25, "warmed up");
    CHECK_EQ(a.temp_max, b.temp_max);
    CHECK_EQ(a.power_on_ns, b.power_on_ns);
    CHECK_EQ(a.ntests, 1);
    CHECK_EQ(b.ntests, 1);
    CHECK_EQ(ncq_smart_test_rec(&a, 0)->poh, ncq_smart_test_rec(&b, 0)->poh);
    CHECK_EQ(ncq_smart_test_rec(&a, 0)->fail_lba, 700000000);
    CHECK_EQ(ncq_smart_exec_status(&a), ncq_smart_exec_status(&b));
    ncq_model_free(m);
}

/* The state survives save and load, byte for byte. */
static void test_state(void)
{
    NcqModel *m = smart_model("unc@1000");
    static NcqSmart a, b;
    uint8_t *x, *y;
    size_t n;

    ncq_smart_init(&a, 0);
    ncq_smart_power_cycle(&a, m, 0);
    done(&a, m, NCQ_OP_READ, 1000, 1, NCQ_FAULT_UNC, 1000, 5 * S);
    CHECK_EQ(ncq_smart_test_start(&a, m, NCQ_SMART_EXTENDED, 6 * S), 0);
    n = ncq_smart_state_size(&a);
    x = malloc(n);
    y = malloc(n);
    ncq_smart_state_save(&a, x);
    CHECK_EQ(ncq_smart_state_load(&b, x, n), 0);
    CHECK_EQ(ncq_smart_state_size(&b), n);
    ncq_smart_state_save(&b, y);
    CHECK(!memcmp(x, y, n), "same bytes");
    CHECK_EQ(ncq_smart_state_load(&b, x, n - 1), NCQ_ERR_PARSE);
    x[0] = 'X';
    CHECK_EQ(ncq_smart_state_load(&b, x, n), NCQ_ERR_PARSE);
    free(x);
    free(y);
    ncq_model_free(m);
}

int main(void)
{
    test_attributes();
    test_error_log_wrap();
    test_selftest_stop();
    test_selective();
    test_health();
    test_sampling();
    test_state();
    return ncq_test_done("test-smart");
}
