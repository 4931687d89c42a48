/*
 * Command Duration Limits (cdl.c): the table's checks, its log page, and
 * what the scheduler does with limits: a command nearing its limit goes
 * first, a miss applies its descriptor's policy.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include "ncq-test.h"

#define MS 1000000LL

static NcqModel *cdl_model(bool cdl_on_drive)
{
    NcqParams *p = ncq_params_builtin("st3400620as");

    p->cdl = cdl_on_drive;
    return ncq_test_new(p, 7);
}

static void set_cdl(NcqModel *m, const NcqCdl *t)
{
    char err[160];

    CHECK(ncq_model_cdl_set(m, t, err, sizeof(err)) == 0, "set: %s", err);
}

static int submit_cdl(NcqModel *m, uint32_t tag, uint64_t lba, uint8_t cdl,
                      int64_t t)
{
    NcqCmd c = { .id = tag, .op = NCQ_OP_READ, .lba = lba, .sectors = 8,
                 .queued = true, .cdl = cdl };

    return ncq_model_submit(m, &c, t);
}

static const NcqCompletion *by_tag(const NcqCompletion *c, int n, uint32_t id)
{
    int i;

    for (i = 0; i < n; i++) {
        if (c[i].id == id) {
            return &c[i];
        }
    }
    return NULL;
}

static void test_validate(void)
{
    NcqCdl t = { 0 };
    char err[160];

    CHECK_EQ(ncq_cdl_validate(&t, err, sizeof(err)), 0);
    t.rd[2].inactive_policy = NCQ_CDL_NEXT;     /* total time only */
    CHECK(ncq_cdl_validate(&t, err, sizeof(err)) == NCQ_ERR_INVAL &&
          strstr(err, "read descriptor 3"), "%s", err);
    t.rd[2].inactive_policy = 0;
    t.wr[6].active_policy = 0x5;
    CHECK(ncq_cdl_validate(&t, err, sizeof(err)) == NCQ_ERR_INVAL &&
          strstr(err, "write descriptor 7"), "%s", err);
    /* Eh is SCSI's: reserved for ATA (cdl-tools skips it on ATA) */
    t.wr[6].active_policy = NCQ_CDL_ABORT_RECOVERY;
    CHECK(ncq_cdl_validate(&t, err, sizeof(err)) == NCQ_ERR_INVAL &&
          strstr(err, "write descriptor 7"), "%s", err);
    t.wr[6].active_policy = NCQ_CDL_UNAVAILABLE;
    CHECK_EQ(ncq_cdl_validate(&t, err, sizeof(err)), 0);
    /* the guideline: 0h-Ch (cdl-tools' T2A files set Ch) */
    t.guideline = 0xc;
    CHECK_EQ(ncq_cdl_validate(&t, err, sizeof(err)), 0);
    t.guideline = 0xd;
    CHECK(ncq_cdl_validate(&t, err, sizeof(err)) == NCQ_ERR_INVAL &&
          strstr(err, "guideline"), "%s", err);
    t.guideline = 0;
    t.wr[0].total_us = NCQ_CDL_MAX_LIMIT_US + 1;
    CHECK(ncq_cdl_validate(&t, err, sizeof(err)) == NCQ_ERR_INVAL &&
          strstr(err, "beyond"), "%s", err);
}

static void test_log_page(void)
{
    NcqCdl t = { .guideline = 0xc }, back = { 0 };
    uint8_t buf[NCQ_CDL_LOG_BYTES];
    char err[160];

    t.rd[0] = (NcqCdlDesc) { NCQ_CDL_NEXT, NCQ_CDL_ABORT,
                             NCQ_CDL_UNAVAILABLE, 20000, 30000, 50000 };
    t.wr[6].total_us = 123456;
    ncq_cdl_log_encode(&t, buf);
    /* descriptor layout: policies, active, inactive, -, total (LE) */
    CHECK_EQ(buf[0], 0xc);
    CHECK_EQ(buf[64], 0xf1);
    CHECK_EQ(buf[65], 0x0d);
    CHECK_EQ(buf[68] | buf[69] << 8, 20000);
    CHECK_EQ(buf[72] | buf[73] << 8, 30000);
    CHECK_EQ(buf[80] | buf[81] << 8 | buf[82] << 16, 50000);
    CHECK_EQ(buf[288 + 6 * 32 + 16] | buf[288 + 6 * 32 + 17] << 8 |
             buf[288 + 6 * 32 + 18] << 16, 123456);
    CHECK_EQ(ncq_cdl_log_decode(buf, &back, err, sizeof(err)), 0);
    CHECK(!memcmp(&back, &t, sizeof(t)), "round trip");
    /* reserved fields set: refused, the table untouched */
    buf[64 + 13] = 1;
    CHECK(ncq_cdl_log_decode(buf, &back, err, sizeof(err)) == NCQ_ERR_INVAL
          && strstr(err, "read descriptor 1"), "%s", err);
    buf[64 + 13] = 0;
    buf[64 + 1] = 0x1d;             /* policy bits 12.. reserved */
    CHECK_EQ(ncq_cdl_log_decode(buf, &back, err, sizeof(err)),
             NCQ_ERR_INVAL);
    buf[64 + 1] = 0x0d;
    buf[10] = 1;                    /* header */
    CHECK_EQ(ncq_cdl_log_decode(buf, &back, err, sizeof(err)),
             NCQ_ERR_INVAL);
    CHECK(!memcmp(&back, &t, sizeof(t)), "a refused page changes nothing");
}

static void test_model_refuses(void)
{
    NcqModel *m = cdl_model(false);
    NcqCdl t = { .enabled = true };
    char err[160];

    CHECK(ncq_model_cdl_set(m, &t, err, sizeof(err)) == NCQ_ERR_INVAL &&
          strstr(err, "no Command Duration Limits"), "%s", err);
    ncq_model_free(m);
}

/*
 * 24 best-effort reads spread over the disk, and one read with a 60 ms
 * total limit arriving last: it would wait behind most of them, but it
 * is served within its limit.  Without CDL enabled it waits longer.
 */
static int64_t urgent_latency(bool enabled, uint8_t *outcome)
{
    NcqModel *m = cdl_model(true);
    NcqCdl t = { .enabled = enabled };
    NcqCompletion c[32];
    uint64_t cap = ncq_model_params(m)->capacity, rng = 3;
    const NcqCompletion *u;
    int64_t lat;
    int i, n;

    t.rd[0].total_us = 60000;
    set_cdl(m, &t);
    for (i = 0; i < 24; i++) {
        CHECK_EQ(submit_cdl(m, i, ncq_test_rng(&rng) % (cap - 8), 0, i), 0);
    }
    CHECK_EQ(submit_cdl(m, 24, cap / 2, 1, 100), 0);
    n = ncq_test_drain(m, c, 32);
    CHECK_EQ(n, 25);
    u = by_tag(c, n, 24);
    lat = u->complete_ns - u->arrival_ns;
    *outcome = u->cdl_outcome;
    CHECK_EQ(u->cdl, 1);
    ncq_model_free(m);
    return lat;
}

static void test_served_first(void)
{
    uint8_t on, off;
    int64_t with = urgent_latency(true, &on);
    int64_t without = urgent_latency(false, &off);

    CHECK(with <= 60 * MS, "limited read took %lld ns", (long long)with);
    CHECK_EQ(on, NCQ_CDL_MET);
    CHECK(without > with, "without CDL %lld, with %lld", (long long)without,
          (long long)with);
    CHECK_EQ(off, NCQ_CDL_NONE);
}

/*
 * A limit no command can meet (1 ms inactive) with each policy: abort and
 * unavailable end the command at the first decision after the limit;
 * continue lets it complete normally, marked missed.
 */
static void test_policies(void)
{
    static const struct {
        uint8_t pol;
        uint8_t outcome;
        uint8_t met;            /* counted by the statistics */
    } cases[] = {
        { NCQ_CDL_ABORT, NCQ_CDL_ABORT_INACTIVE, NCQ_CDL_MET_INACTIVE },
        { NCQ_CDL_UNAVAILABLE, NCQ_CDL_DATA_UNAVAILABLE,
          NCQ_CDL_MET_INACTIVE },
        { NCQ_CDL_CONTINUE, NCQ_CDL_MISSED, 0 },
    };
    size_t k;

    for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        NcqModel *m = cdl_model(true);
        NcqCdl t = { .enabled = true };
        uint64_t cap = ncq_model_params(m)->capacity;
        NcqCompletion c[8];
        const NcqCompletion *u;
        int n;

        t.rd[2].inactive_us = 1000;
        t.rd[2].inactive_policy = cases[k].pol;
        set_cdl(m, &t);
        CHECK_EQ(submit_cdl(m, 0, cap - 100, 0, 0), 0);
        CHECK_EQ(submit_cdl(m, 1, 0, 0, 1), 0);
        CHECK_EQ(submit_cdl(m, 2, cap / 2, 3, 2), 0);
        n = ncq_test_drain(m, c, 8);
        CHECK_EQ(n, 3);
        u = by_tag(c, n, 2);
        CHECK(u->cdl_outcome == cases[k].outcome, "policy 0x%x: %s",
              cases[k].pol, ncq_cdl_outcome_name(u->cdl_outcome));
        /* the statistics count a limit whose policy the drive carried out */
        CHECK(u->cdl_met == cases[k].met, "policy 0x%x: met 0x%x",
              cases[k].pol, u->cdl_met);
        if (cases[k].pol != NCQ_CDL_CONTINUE) {
            /* ended without a media access, before the other two */
            CHECK_EQ(u->seek_ns + u->transfer_ns, 0);
            CHECK(u->complete_ns < by_tag(c, n, 1)->complete_ns,
                  "ended at the first decision after its limit");
        }
        ncq_model_free(m);
    }
}

/* An active time limit shorter than the access: completion moved up. */
static void test_active_abort(void)
{
    NcqModel *m = cdl_model(true);
    NcqCdl t = { .enabled = true };
    uint64_t cap = ncq_model_params(m)->capacity;
    NcqCompletion c[4];
    int n;

    t.rd[4].active_us = 2000;
    t.rd[4].active_policy = NCQ_CDL_ABORT;
    set_cdl(m, &t);
    CHECK_EQ(submit_cdl(m, 0, cap - 100, 5, 0), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].cdl_outcome, NCQ_CDL_ABORT_ACTIVE);
    CHECK_EQ(c[0].complete_ns, c[0].dispatch_ns + 2 * MS);
    ncq_model_free(m);
}

/*
 * An active time limit with policy 0h: the command goes on to its normal
 * completion, marked missed, and no statistic counts it (cdl-tools test
 * 0720 expects no count with policy 0h).
 */
static void test_active_continue(void)
{
    NcqModel *m = cdl_model(true);
    NcqCdl t = { .enabled = true };
    uint64_t cap = ncq_model_params(m)->capacity;
    NcqCompletion c[4];
    int n;

    t.rd[4].active_us = 2000;
    t.rd[4].active_policy = NCQ_CDL_CONTINUE;
    set_cdl(m, &t);
    CHECK_EQ(submit_cdl(m, 0, cap - 100, 5, 0), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].cdl_outcome, NCQ_CDL_MISSED);
    CHECK(c[0].complete_ns > c[0].dispatch_ns + 2 * MS, "ran to its end");
    CHECK_EQ(c[0].cdl_met, 0);
    ncq_model_free(m);
}

/*
 * A non-queued read (READ DMA EXT, NCQ off) with a CDL index: its max
 * active time applies as over NCQ; its total time limit (the command
 * duration guideline) does not (NCQ commands only: cdl-tools tests 0503,
 * 0504 expect no error).
 */
static void test_non_queued(void)
{
    static const struct {
        bool active;
        uint8_t outcome;
        uint8_t met;
    } cases[] = {
        { false, NCQ_CDL_MET, 0 },
        { true, NCQ_CDL_ABORT_ACTIVE, NCQ_CDL_MET_ACTIVE },
    };
    size_t k;

    for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        NcqModel *m = cdl_model(true);
        NcqCdl t = { .enabled = true };
        uint64_t cap = ncq_model_params(m)->capacity;
        NcqCmd cmd = { .id = 0, .op = NCQ_OP_READ, .lba = cap - 100,
                       .sectors = 8, .queued = false, .cdl = 6 };
        NcqCompletion c[4];
        int n;

        t.rd[5].total_us = 1000;
        t.rd[5].total_policy = NCQ_CDL_ABORT;
        if (cases[k].active) {
            t.rd[5].active_us = 2000;
            t.rd[5].active_policy = NCQ_CDL_ABORT;
        }
        set_cdl(m, &t);
        CHECK_EQ(ncq_model_submit(m, &cmd, 0), 0);
        n = ncq_test_drain(m, c, 4);
        CHECK_EQ(n, 1);
        CHECK(c[0].cdl_outcome == cases[k].outcome, "case %zu: %s", k,
              ncq_cdl_outcome_name(c[0].cdl_outcome));
        CHECK_EQ(c[0].cdl_met, cases[k].met);
        if (cases[k].active) {
            CHECK_EQ(c[0].complete_ns, c[0].dispatch_ns + 2 * MS);
        } else {
            CHECK(c[0].complete_ns > 1 * MS, "ran past its guideline");
        }
        ncq_model_free(m);
    }
}

/*
 * A sector the drive retries for 100 ms (an injected slow fault): the
 * active time limit ends the retries with its abort (the "error
 * recovery" abort, Eh, is reserved for ATA).
 */
static void test_retry_abort(void)
{
    NcqModel *m = cdl_model(true);
    NcqCdl t = { .enabled = true };
    NcqFaultRule r = { .kind = NCQ_FAULT_SLOW, .lba = 5000, .sectors = 8,
                       .ops = NCQ_FAULT_READS, .delay_ns = 100 * MS };
    NcqCompletion c[4];
    char err[160];
    int n;

    CHECK(ncq_model_fault_add(m, &r, err, sizeof(err)) >= 0, "%s", err);
    t.rd[0].active_us = 20000;
    t.rd[0].active_policy = NCQ_CDL_ABORT;
    set_cdl(m, &t);
    CHECK_EQ(submit_cdl(m, 0, 5000, 1, 0), 0);
    CHECK_EQ(submit_cdl(m, 1, 900000, 0, 1 * MS), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 2);
    CHECK_EQ(c[0].cdl_outcome, NCQ_CDL_ABORT_ACTIVE);
    CHECK_EQ(c[0].complete_ns, c[0].dispatch_ns + 20 * MS);
    /*
     * The abort ended the retries: the next command starts then (after
     * the read-ahead the drive makes after a read), not 100 ms later.
     */
    CHECK(c[1].dispatch_ns >= c[0].complete_ns &&
          c[1].dispatch_ns < c[0].complete_ns + 5 * MS, "next at %lld",
          (long long)c[1].dispatch_ns);
    CHECK_EQ(c[1].cdl_outcome, NCQ_CDL_NONE);
    ncq_model_free(m);

    /* without a CDL index the same read waits out the retries */
    m = cdl_model(true);
    CHECK(ncq_model_fault_add(m, &r, err, sizeof(err)) >= 0, "%s", err);
    set_cdl(m, &t);
    CHECK_EQ(submit_cdl(m, 0, 5000, 0, 0), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 1);
    CHECK(c[0].complete_ns - c[0].dispatch_ns >= 100 * MS, "slow read");
    ncq_model_free(m);
}

/*
 * The table, the enabled bit and each queued command's CDL state travel
 * in the model's state: a model loaded mid-run completes the rest as the
 * original does (state.c, format v3).
 */
static void test_state(void)
{
    NcqModel *a = cdl_model(true), *b = cdl_model(true);
    NcqCdl t = { .enabled = true }, tb;
    uint64_t cap = ncq_model_params(a)->capacity, rng = 11;
    NcqCompletion ca[40], cb[40];
    char err[160];
    size_t len;
    void *buf;
    int i, na, nb;

    t.rd[0].total_us = 30000;
    t.rd[0].total_policy = NCQ_CDL_NEXT;
    t.rd[1].inactive_us = 40000;
    t.rd[1].inactive_policy = NCQ_CDL_ABORT;
    set_cdl(a, &t);
    for (i = 0; i < 30; i++) {
        CHECK_EQ(submit_cdl(a, i, ncq_test_rng(&rng) % (cap - 8), i % 3,
                            i * 1000), 0);
    }
    na = ncq_model_advance(a, 60 * MS, ca, 40);
    len = ncq_model_state_size(a);
    buf = malloc(len);
    CHECK_EQ(ncq_model_state_save(a, buf, len), 0);
    CHECK(ncq_model_state_load(b, buf, len, err, sizeof(err)) == 0, "%s",
          err);
    ncq_model_cdl_get(b, &tb);
    CHECK(!memcmp(&tb, &t, sizeof(t)), "the table travels");
    na = ncq_test_drain(a, ca, 40);
    nb = ncq_test_drain(b, cb, 40);
    CHECK_EQ(na, nb);
    CHECK(na > 0 && !memcmp(ca, cb, na * sizeof(ca[0])),
          "the rest completes alike");
    for (i = 0; i < na; i++) {
        CHECK(ca[i].cdl == 0 || ca[i].cdl_outcome != NCQ_CDL_NONE,
              "tag %u has an outcome", ca[i].id);
    }
    free(buf);
    ncq_model_free(a);
    ncq_model_free(b);
}

/* HMP's text form of one descriptor */
static void test_parse(void)
{
    NcqCdlDesc d;
    char err[256];
    int idx;

    CHECK_EQ(ncq_cdl_desc_parse("2:total=20ms/abort,inactive=1.5ms/13",
                                &idx, &d, err, sizeof(err)), 0);
    CHECK_EQ(idx, 2);
    CHECK_EQ(d.total_us, 20000);
    CHECK_EQ(d.total_policy, NCQ_CDL_ABORT);
    CHECK_EQ(d.inactive_us, 1500);
    CHECK_EQ(d.inactive_policy, NCQ_CDL_UNAVAILABLE);
    CHECK_EQ(d.active_us, 0);
    CHECK_EQ(ncq_cdl_desc_parse("7:active=3/abort-erp", &idx, &d, err,
                                sizeof(err)), 0);
    CHECK_EQ(d.active_us, 3000);            /* a bare number is ms */
    CHECK_EQ(d.active_policy, NCQ_CDL_ABORT_RECOVERY);
    CHECK(ncq_cdl_desc_parse("8:total=1ms", &idx, &d, err, sizeof(err)) ==
          NCQ_ERR_PARSE && strstr(err, "index 1 to 7"), "%s", err);
    CHECK(ncq_cdl_desc_parse("1:total=1ms/sometimes", &idx, &d, err,
                             sizeof(err)) == NCQ_ERR_PARSE &&
          strstr(err, "'total=1ms/sometimes'"), "%s", err);
    CHECK_EQ(ncq_cdl_desc_parse("1:total=655s", &idx, &d, err,
                                sizeof(err)), 0);
    CHECK(ncq_cdl_desc_parse("1:total=700s", &idx, &d, err, sizeof(err)) ==
          NCQ_ERR_PARSE, "700 s is beyond the longest limit");
    CHECK(ncq_cdl_desc_parse("1:deadline=1ms", &idx, &d, err,
                             sizeof(err)) == NCQ_ERR_PARSE, "%s", err);
}

int main(void)
{
    test_validate();
    test_log_page();
    test_model_refuses();
    test_served_first();
    test_policies();
    test_active_abort();
    test_active_continue();
    test_non_queued();
    test_retry_abort();
    test_parse();
    test_state();
    return ncq_test_done("cdl");
}
