/*
 * Fault injection rules (fault.c) and what a power loss loses
 * (ncq_model_volatile): parsing, firing modes, outcomes, timing.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define US 1000LL
#define MS 1000000LL

#define NCQ_TEST_FAULT NCQ_TEST_SMALL \
    "[overhead]\nread_miss_ms = 0.2\nread_hit_ms = 0.05\nwrite_ms = 0.1\n" \
    "other_ms = 0.01\n"

static NcqModel *fault_model(bool wc, const char *rules)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_FAULT, 3);
    NcqFaultRule r[NCQ_MAX_FAULTS];
    NcqSettings s;
    char err[512];
    int n, i;

    ncq_model_get_settings(m, &s);
    s.write_cache = wc;
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    n = ncq_fault_parse(rules, r, NCQ_MAX_FAULTS, err, sizeof(err));
    CHECK(n >= 0, "parse '%s': %s", rules, err);
    for (i = 0; i < n; i++) {
        CHECK_EQ(ncq_model_fault_add(m, &r[i], err, sizeof(err)), i);
    }
    return m;
}

/* One command on an idle drive; its completion. */
static NcqCompletion one(NcqModel *m, NcqOp op, uint64_t lba, uint32_t n,
                         int64_t t)
{
    NcqCompletion c[4];

    memset(c, 0, sizeof(c));
    CHECK_EQ(ncq_test_submit(m, 0, op, lba, n, t), 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    return c[0];
}

static void test_parse(void)
{
    NcqFaultRule r[NCQ_MAX_FAULTS];
    char err[512], buf[128];
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        { "unc@100;bogus@5", "fault rule 2 'bogus@5': unknown kind" },
        { "unc", "fault rule 1 'unc': no '@LBA'" },
        { "unc@x", "LBA is not a number" },
        { "unc@5+0", "+SECTORS needs a count of at least 1" },
        { "slow@5+1", "slow needs :delay=TIME" },
        { "slow@5:delay=0", "delay= needs a time above 0" },
        { "unc@5:delay=5ms", "only slow takes :delay=" },
        { "unc@5:writes", "unc applies to reads only" },
        { "werr@5:reads", "werr applies to writes only" },
        { "hang@5:every=0", "every=N needs a count of at least 1" },
        { "hang@5:sometimes", "unknown option" },
    };
    size_t i;
    int n;

    n = ncq_fault_parse(" unc@1000+8:once ; werr@0x10:every=3;"
                        "hang@7:writes;slow@100+50:delay=20ms:reads;"
                        "powercut@9;", r, NCQ_MAX_FAULTS, err, sizeof(err));
    CHECK_EQ(n, 5);
    CHECK_EQ(r[0].kind, NCQ_FAULT_UNC);
    CHECK_EQ(r[0].lba, 1000);
    CHECK_EQ(r[0].sectors, 8);
    CHECK_EQ(r[0].mode, NCQ_FAULT_ONCE);
    CHECK_EQ(r[0].ops, NCQ_FAULT_READS);
    CHECK_EQ(r[1].kind, NCQ_FAULT_WRITE);
    CHECK_EQ(r[1].lba, 16);
    CHECK_EQ(r[1].sectors, 1);
    CHECK_EQ(r[1].mode, NCQ_FAULT_EVERY);
    CHECK_EQ(r[1].every, 3);
    CHECK_EQ(r[1].ops, NCQ_FAULT_WRITES);
    CHECK_EQ(r[2].ops, NCQ_FAULT_WRITES);
    CHECK_EQ(r[2].mode, NCQ_FAULT_ALWAYS);
    CHECK_EQ(r[3].delay_ns, 20 * MS);
    CHECK_EQ(r[3].ops, NCQ_FAULT_READS);
    CHECK_EQ(r[4].kind, NCQ_FAULT_POWERCUT);
    CHECK_EQ(r[4].ops, NCQ_FAULT_READS | NCQ_FAULT_WRITES);

    /* the canonical text parses back to the same rule */
    for (i = 0; i < 5; i++) {
        NcqFaultRule back;

        ncq_fault_format(&r[i], buf, sizeof(buf));
        CHECK_EQ(ncq_fault_parse(buf, &back, 1, err, sizeof(err)), 1);
        CHECK(!memcmp(&back, &r[i], sizeof(back)), "round trip of '%s'",
              buf);
    }
    ncq_fault_format(&r[3], buf, sizeof(buf));
    CHECK(!strcmp(buf, "slow@100+50:reads:delay=20000000ns"), "%s", buf);

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK_EQ(ncq_fault_parse(bad[i].text, r, NCQ_MAX_FAULTS, err,
                                 sizeof(err)), NCQ_ERR_PARSE);
        CHECK(strstr(err, bad[i].why) && strstr(err, "syntax: KIND@LBA"),
              "'%s' gave '%s'", bad[i].text, err);
    }
    CHECK_EQ(ncq_fault_parse("unc@1;unc@2;unc@3", r, 2, err, sizeof(err)),
             NCQ_ERR_PARSE);
    CHECK_EQ(ncq_fault_parse(" ; ", r, 2, err, sizeof(err)), 0);
}

static void test_modes(void)
{
    NcqModel *m = fault_model(false, "unc@1000+8:once;unc@500:every=3");
    NcqFaultRule r[NCQ_MAX_FAULTS];
    NcqCompletion c;
    int i, fails = 0;

    /* once: the first read touching 1000..1007 fails at its first LBA */
    c = one(m, NCQ_OP_READ, 996, 8, 0);
    CHECK_EQ(c.fault, NCQ_FAULT_UNC);
    CHECK_EQ(c.fault_lba, 1000);
    c = one(m, NCQ_OP_READ, 1004, 8, 100 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_NONE);
    /* writes and reads beside the range do not count */
    c = one(m, NCQ_OP_WRITE, 1000, 8, 200 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_NONE);
    c = one(m, NCQ_OP_READ, 1008, 8, 300 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_NONE);

    /* every=3: the 3rd and 6th matching reads, failing LBA inside */
    for (i = 0; i < 6; i++) {
        c = one(m, NCQ_OP_READ, 500, 1, (400 + 100 * i) * MS);
        if (c.fault == NCQ_FAULT_UNC) {
            CHECK(i == 2 || i == 5, "read %d failed", i);
            CHECK_EQ(c.fault_lba, 500);
            fails++;
        }
    }
    CHECK_EQ(fails, 2);
    CHECK_EQ(ncq_model_fault_list(m, r, NCQ_MAX_FAULTS), 2);
    CHECK_EQ(r[0].matched, 2);
    CHECK_EQ(r[0].hits, 1);
    CHECK_EQ(r[1].matched, 6);
    CHECK_EQ(r[1].hits, 2);

    /* clearing one rule keeps the other; clearing all leaves none */
    CHECK_EQ(ncq_model_fault_clear(m, 5), NCQ_ERR_INVAL);
    CHECK_EQ(ncq_model_fault_clear(m, 0), 0);
    CHECK_EQ(ncq_model_fault_list(m, r, NCQ_MAX_FAULTS), 1);
    CHECK_EQ(r[0].lba, 500);
    CHECK_EQ(ncq_model_fault_clear(m, -1), 0);
    CHECK_EQ(ncq_model_fault_list(m, r, NCQ_MAX_FAULTS), 0);
    ncq_model_free(m);
}

static void test_errors(void)
{
    NcqModel *m = fault_model(true, "werr@200+10;unc@40+4");
    NcqFaultRule r = { .kind = NCQ_FAULT_UNC, .lba = 1799, .sectors = 2,
                       .ops = NCQ_FAULT_READS };
    NcqCompletion c;
    char err[256];

    /* a failing write is not cached: it fails on the media */
    c = one(m, NCQ_OP_WRITE, 205, 16, 0);
    CHECK_EQ(c.fault, NCQ_FAULT_WRITE);
    CHECK_EQ(c.fault_lba, 205);
    CHECK(!c.cache_hit && c.media_end_ns > 0, "write error on the media");
    /* other writes are still cached */
    c = one(m, NCQ_OP_WRITE, 300, 8, 100 * MS);
    CHECK(c.fault == NCQ_FAULT_NONE && c.cache_hit, "cached write");
    /* a read of cached data in a UNC range still fails (media access) */
    c = one(m, NCQ_OP_WRITE, 40, 4, 200 * MS);
    CHECK(c.cache_hit, "cached");
    c = one(m, NCQ_OP_READ, 38, 8, 400 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_UNC);
    CHECK_EQ(c.fault_lba, 40);
    CHECK(!c.cache_hit, "no buffer hit for an injected UNC");

    /* rules are checked against the capacity */
    CHECK_EQ(ncq_model_fault_add(m, &r, err, sizeof(err)), NCQ_ERR_RANGE);
    CHECK(strstr(err, "beyond the drive's 1800 sectors"), "%s", err);
    ncq_model_free(m);
}

static void test_hang(void)
{
    NcqModel *m = fault_model(false, "hang@100:once");
    NcqCompletion c[4];
    int n;

    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 100, 1, 0), 0);
    CHECK_EQ(ncq_test_submit(m, 4, NCQ_OP_READ, 900, 1, 0), 0);
    n = ncq_test_drain(m, c, 4);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].id, 4);
    CHECK_EQ(ncq_model_outstanding(m), 1);
    CHECK_EQ(ncq_model_next_event(m), INT64_MAX);
    n = ncq_model_advance(m, 3600LL * 1000 * MS, c, 4);
    CHECK_EQ(n, 0);
    /* the tag stays busy until a reset drops the command */
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 5, 1, 3600LL * 1000 * MS),
             NCQ_ERR_TAG_BUSY);
    ncq_model_reset(m, 3601LL * 1000 * MS);
    CHECK_EQ(ncq_model_outstanding(m), 0);
    /* one-shot: the retry completes */
    n = ncq_test_submit(m, 3, NCQ_OP_READ, 100, 1, 3601LL * 1000 * MS);
    CHECK_EQ(n, 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    CHECK_EQ(c[0].fault, NCQ_FAULT_NONE);
    ncq_model_free(m);
}

static void test_slow(void)
{
    NcqModel *a = fault_model(false, "");
    NcqModel *b = fault_model(false, "slow@1000+100:delay=30ms:every=2");
    NcqCompletion ca, cb, c2[4];
    int n;

    /* the same read on the same drive: 1st unchanged, 2nd 30 ms late */
    ca = one(a, NCQ_OP_READ, 1050, 8, 0);
    cb = one(b, NCQ_OP_READ, 1050, 8, 0);
    CHECK_EQ(cb.complete_ns, ca.complete_ns);
    ca = one(a, NCQ_OP_READ, 1060, 8, 100 * MS);
    cb = one(b, NCQ_OP_READ, 1060, 8, 100 * MS);
    CHECK_EQ(cb.fault, NCQ_FAULT_NONE);
    CHECK_EQ(cb.complete_ns - ca.complete_ns, 30 * MS);

    /* the mechanism retries meanwhile: a read queued behind waits too */
    CHECK_EQ(ncq_test_submit(a, 0, NCQ_OP_READ, 1010, 8, 200 * MS), 0);
    CHECK_EQ(ncq_test_submit(a, 1, NCQ_OP_READ, 10, 8, 200 * MS), 0);
    CHECK_EQ(ncq_test_drain(a, c2, 4), 2);
    ca = c2[0].id == 1 ? c2[0] : c2[1];
    CHECK_EQ(ncq_test_submit(b, 0, NCQ_OP_READ, 1010, 8, 200 * MS), 0);
    CHECK_EQ(ncq_test_submit(b, 1, NCQ_OP_READ, 10, 8, 200 * MS), 0);
    n = ncq_test_drain(b, c2, 4);
    CHECK_EQ(n, 2);
    cb = c2[0].id == 1 ? c2[0] : c2[1];
    CHECK(cb.complete_ns >= ca.complete_ns, "queued read not earlier");
    CHECK(c2[1].complete_ns - c2[0].complete_ns > 0, "two completions");
    ncq_model_free(a);
    ncq_model_free(b);
}

/* Same inputs, same seed: identical completions, faults included. */
static void test_deterministic(void)
{
    const char *rules = "unc@100+50:every=2;slow@0+1800:delay=1ms:every=5;"
                        "werr@700+30:once";
    NcqCompletion c1[64], c2[64];
    NcqModel *m1 = fault_model(true, rules), *m2 = fault_model(true, rules);
    uint64_t seed = 7;
    int i, n1, n2;

    for (i = 0; i < 32; i++) {
        uint64_t lba = ncq_test_rng(&seed) % 1790;
        NcqOp op = (ncq_test_rng(&seed) & 1) ? NCQ_OP_WRITE : NCQ_OP_READ;

        CHECK_EQ(ncq_test_submit(m1, i, op, lba, 8, 0), 0);
        CHECK_EQ(ncq_test_submit(m2, i, op, lba, 8, 0), 0);
    }
    n1 = ncq_test_drain(m1, c1, 64);
    n2 = ncq_test_drain(m2, c2, 64);
    CHECK_EQ(n1, 32);
    CHECK_EQ(n2, 32);
    CHECK(!memcmp(c1, c2, n1 * sizeof(c1[0])), "identical completions");
    ncq_model_free(m1);
    ncq_model_free(m2);
}

/* Bytes of two buffers of @n sectors that differ, per sector. */
static void sector_diffs(const uint8_t *a, const uint8_t *b, int n, int *out)
{
    int i, k;

    for (i = 0; i < n; i++) {
        out[i] = 0;
        for (k = 0; k < 512; k++) {
            out[i] += a[i * 512 + k] != b[i * 512 + k];
        }
    }
}

/*
 * corrupt: a queued read over the range completes with good status and
 * NCQ_FAULT_CORRUPT; ncq_fault_corrupt() alters exactly its unhealed
 * sectors, the same bytes on every read; a write heals the sectors it
 * covers; a non-queued read is served as-is; the rule is limited to 64
 * sectors and to reads.
 */
static void test_corrupt(void)
{
    NcqModel *m = fault_model(false, "corrupt@1000+16");
    NcqFaultRule r[NCQ_MAX_FAULTS];
    static uint8_t good[32 * 512], a[32 * 512], b[32 * 512];
    NcqCompletion c, c2;
    NcqCmd nq = { .id = 0, .op = NCQ_OP_READ, .lba = 1000, .sectors = 8 };
    int d[32], i;
    char err[512];
    uint64_t seed;

    for (i = 0; i < (int)sizeof(good); i++) {
        good[i] = (uint8_t)(i * 7 + 3);
    }
    /* a read of 992..1023 touches sectors 1000..1015 */
    c = one(m, NCQ_OP_READ, 992, 32, 0);
    CHECK_EQ(c.fault, NCQ_FAULT_CORRUPT);
    CHECK_EQ(c.fault_lba, 1000);
    CHECK_EQ(c.corrupt_mask, 0xffff);
    memcpy(a, good, sizeof(a));
    CHECK_EQ(ncq_fault_corrupt(&c, a), 16);
    sector_diffs(a, good, 32, d);
    for (i = 0; i < 32; i++) {
        CHECK(d[i] == (i >= 8 && i < 24 ? 8 : 0),
              "sector %d: %d bytes altered", 992 + i, d[i]);
    }
    /* the same sectors read the same altered bytes again */
    c2 = one(m, NCQ_OP_READ, 992, 32, 1000 * MS);
    memcpy(b, good, sizeof(b));
    CHECK_EQ(ncq_fault_corrupt(&c2, b), 16);
    CHECK(!memcmp(a, b, sizeof(a)), "a corrupt sector reads differently");
    /* a write of 1004..1007 heals those four */
    c = one(m, NCQ_OP_WRITE, 1004, 4, 2000 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_NONE);
    c = one(m, NCQ_OP_READ, 1000, 16, 3000 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_CORRUPT);
    CHECK_EQ(c.fault_lba, 1000);
    CHECK_EQ(c.corrupt_mask, 0xff0f);
    memcpy(a, good, 16 * 512);
    CHECK_EQ(ncq_fault_corrupt(&c, a), 12);
    sector_diffs(a, good, 16, d);
    CHECK(d[3] == 8 && d[4] == 0 && d[7] == 0 && d[8] == 8, "heal");
    /* a read of healed sectors only is not a hit */
    c = one(m, NCQ_OP_READ, 1004, 4, 4000 * MS);
    CHECK_EQ(c.fault, NCQ_FAULT_NONE);
    /* a non-queued read is not altered (ncq-disk has no hook there) */
    CHECK_EQ(ncq_model_submit(m, &nq, 5000 * MS), 0);
    CHECK_EQ(ncq_test_drain(m, &c, 1), 1);
    CHECK_EQ(c.fault, NCQ_FAULT_NONE);
    CHECK_EQ(ncq_model_fault_list(m, r, NCQ_MAX_FAULTS), 1);
    CHECK_EQ(r[0].hits, 3);
    CHECK_EQ(r[0].healed, 0xf0);
    CHECK(r[0].seed != 0, "no seed");
    seed = r[0].seed;
    ncq_model_free(m);

    CHECK(ncq_fault_parse("corrupt@0+65", r, NCQ_MAX_FAULTS, err,
                          sizeof(err)) < 0 &&
          strstr(err, "corrupt covers at most 64 sectors"), "%s", err);
    CHECK(ncq_fault_parse("corrupt@0:writes", r, NCQ_MAX_FAULTS, err,
                          sizeof(err)) < 0 &&
          strstr(err, "corrupt applies to reads only"), "%s", err);
    /* the same rule on the same model draws the same seed */
    m = fault_model(false, "corrupt@1000+16");
    CHECK_EQ(ncq_model_fault_list(m, r + 1, NCQ_MAX_FAULTS - 1), 1);
    CHECK(r[1].seed == seed, "seed not deterministic");
    ncq_model_free(m);
}

static void test_volatile(void)
{
    NcqModel *m = fault_model(true, "");
    NcqCmd fua = { .id = 2, .op = NCQ_OP_WRITE, .lba = 900, .sectors = 8,
                   .fua = true, .queued = true };
    NcqCmd fl = { .op = NCQ_OP_FLUSH };
    NcqRange v[NCQ_MAX_VOLATILE];
    NcqCompletion c[4];
    int n;

    CHECK_EQ(ncq_model_volatile(m, 0, v, NCQ_MAX_VOLATILE), 0);
    /* two cached writes, adjacent: one range, volatile once completed */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, 500, 8, 0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_WRITE, 508, 8, 0), 0);
    CHECK_EQ(ncq_model_advance(m, 1 * MS, c, 4), 2);
    /* an FUA write in flight is not on the media either */
    CHECK_EQ(ncq_model_submit(m, &fua, 1 * MS), 0);
    n = ncq_model_volatile(m, 1 * MS, v, NCQ_MAX_VOLATILE);
    CHECK_EQ(n, 2);
    CHECK_EQ(v[0].lba, 500);
    CHECK_EQ(v[0].sectors, 16);
    CHECK_EQ(v[1].lba, 900);
    CHECK_EQ(v[1].sectors, 8);
    CHECK_EQ(ncq_model_volatile(m, 1 * MS, v, 1), NCQ_ERR_INVAL);
    /* once the FUA write completes, it is durable */
    n = ncq_model_advance(m, ncq_model_next_event(m), c, 4);
    while (n == 0) {
        n = ncq_model_advance(m, ncq_model_next_event(m), c, 4);
    }
    CHECK_EQ(c[0].id, 2);
    n = ncq_model_volatile(m, c[0].complete_ns, v, NCQ_MAX_VOLATILE);
    CHECK(n >= 0 && n <= 1, "FUA range no longer volatile (%d)", n);
    CHECK(n == 0 || (v[0].lba >= 500 && v[0].lba + v[0].sectors <= 516),
          "only the cached data: %" PRIu64
          "+%" PRIu64, v[0].lba, v[0].sectors);
    /* a completed FLUSH leaves nothing volatile */
    CHECK_EQ(ncq_model_submit(m, &fl, 100 * MS), 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    CHECK_EQ(ncq_model_volatile(m, c[0].complete_ns, v, NCQ_MAX_VOLATILE),
             0);
    /* a power loss loses exactly the volatile cached sectors */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, 10, 24, 200 * MS), 0);
    CHECK_EQ(ncq_model_advance(m, 201 * MS, c, 4), 1);
    CHECK_EQ(ncq_model_volatile(m, 201 * MS, v, NCQ_MAX_VOLATILE), 1);
    CHECK_EQ(v[0].sectors, 24);
    CHECK_EQ(ncq_model_power_loss(m, 201 * MS), 24);
    CHECK_EQ(ncq_model_volatile(m, 201 * MS, v, NCQ_MAX_VOLATILE), 0);
    ncq_model_free(m);
}

/*
 * The firmware retries an unrecoverable sector for recovery_ms before it
 * reports UNC (or the write error); an SCT ERC limit cuts that short, a
 * longer one does not lengthen it, and 0 lifts it again.
 */
static void test_recovery(void)
{
    NcqModel *base = fault_model(false, "unc@1000;werr@600");
    NcqModel *m = ncq_test_model_text(NCQ_TEST_FAULT
                                      "[firmware]\nrecovery_ms = 150000\n", 3);
    NcqFaultRule r[2];
    char err[256];
    int64_t t0, good, unc, werr;
    NcqCompletion c;

    CHECK_EQ(ncq_fault_parse("unc@1000;werr@600", r, 2, err, sizeof(err)),
             2);
    CHECK_EQ(ncq_model_fault_add(m, &r[0], err, sizeof(err)), 0);
    CHECK_EQ(ncq_model_fault_add(m, &r[1], err, sizeof(err)), 1);
    /* the same command on a drive that reports at once */
    c = one(base, NCQ_OP_READ, 1000, 8, 0);
    good = c.complete_ns;
    CHECK_EQ(c.fault, NCQ_FAULT_UNC);
    c = one(m, NCQ_OP_READ, 1000, 8, 0);
    CHECK_EQ(c.fault, NCQ_FAULT_UNC);
    unc = c.complete_ns;
    CHECK_EQ(unc - good, 150000000000LL);
    /* the firmware was taken up until then */
    CHECK(ncq_model_recovery_until(base) < good, "no recovery: %lld",
          (long long)ncq_model_recovery_until(base));
    CHECK(ncq_model_recovery_until(m) >= unc - 1000000 &&
          ncq_model_recovery_until(m) <= unc + 1000000, "recovery ends %lld",
          (long long)ncq_model_recovery_until(m));
    /* 7 s of ERC, both limits */
    t0 = unc + 1000000000;
    ncq_model_set_erc(m, 7000000000LL, 7000000000LL);
    c = one(m, NCQ_OP_READ, 1000, 8, t0);
    CHECK_EQ(c.fault, NCQ_FAULT_UNC);
    CHECK(c.complete_ns - t0 >= 7000000000LL &&
          c.complete_ns - t0 < 7100000000LL, "unc under ERC: %lld ns",
          (long long)(c.complete_ns - t0));
    t0 = c.complete_ns + 1000000000;
    c = one(m, NCQ_OP_WRITE, 600, 8, t0);
    werr = c.complete_ns - t0;
    CHECK_EQ(c.fault, NCQ_FAULT_WRITE);
    CHECK(werr >= 7000000000LL && werr < 7100000000LL, "werr: %lld ns",
          (long long)werr);
    /* a limit above the drive's own time changes nothing */
    ncq_model_set_erc(m, 200000000000LL, 0);
    t0 = c.complete_ns + 1000000000;
    c = one(m, NCQ_OP_READ, 1000, 8, t0);
    CHECK(c.complete_ns - t0 >= 150000000000LL &&
          c.complete_ns - t0 < 150100000000LL, "longer limit: %lld ns",
          (long long)(c.complete_ns - t0));
    ncq_model_free(base);
    ncq_model_free(m);
    printf("recovery: 150 s without ERC, 7 s with it, reads and writes\n");
}

int main(void)
{
    test_parse();
    test_modes();
    test_corrupt();
    test_errors();
    test_hang();
    test_slow();
    test_deterministic();
    test_volatile();
    test_recovery();
    return ncq_test_done("test-fault");
}
