/*
 * Guest-controlled input: random and hostile commands (any op value, tag,
 * LBA, length, flags; time jumps; settings changed on the fly; resets)
 * must only ever give error codes, and every accepted command must
 * complete exactly once (unless dropped by a reset).  Run it under
 * -Db_sanitize=address,undefined as well.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

static const char *const models[] = {
    "st3400620as", "fujitsu-max3036rc", "maxtor-atlas10kv", "ibm-40k1044",
    "quantum-atlas10k", "seagate-cheetah9lp", "intel-530",
};

static uint64_t pick_lba(uint64_t *rs, uint64_t cap)
{
    switch (ncq_test_rng(rs) % 6) {
    case 0:
        return 0;
    case 1:
        return cap - 1 - ncq_test_rng(rs) % 70000;
    case 2:
        return cap + ncq_test_rng(rs) % 3;
    case 3:
        return UINT64_MAX - ncq_test_rng(rs) % 3;
    default:
        return ncq_test_rng(rs) % cap;
    }
}

static void fuzz(const char *name, uint64_t seed, long steps)
{
    NcqModel *m = ncq_test_model(name, seed);
    uint64_t cap = ncq_model_params(m)->capacity, rs = seed * 977;
    int64_t t = 0;
    /* outstanding[tag] = number of accepted, not yet completed commands */
    int outstanding[NCQ_MAX_TAGS + 1] = { 0 };
    NcqCompletion c[64];
    long accepted = 0, completed = 0, dropped = 0, k;
    int i, n;

    for (k = 0; k < steps; k++) {
        uint64_t x = ncq_test_rng(&rs);
        NcqCmd cmd = { 0 };
        int rc;

        switch (x % 16) {
        case 0:
            t += (int64_t)(ncq_test_rng(&rs) % 50000000);
            break;
        case 1:
            t -= (int64_t)(ncq_test_rng(&rs) % 1000);   /* backwards */
            if (t < 0) {
                t = 0;
            }
            break;
        case 2: {
            NcqSettings s;
            char err[128];

            ncq_model_get_settings(m, &s);
            s.policy = (NcqPolicy)(ncq_test_rng(&rs) % 7);
            s.starvation_timeout_ns = (int64_t)(ncq_test_rng(&rs) % 3) *
                                      100000000 - 1;
            s.prio_timeout_ns = (int64_t)(ncq_test_rng(&rs) % 3) * 1000000;
            s.honour_prio = ncq_test_rng(&rs) & 1;
            s.clustering_sectors = ncq_test_rng(&rs) % 3 ? 32 : 70000;
            s.write_cache = ncq_test_rng(&rs) & 1;
            s.zero_latency = ncq_test_rng(&rs) & 1;
            s.aging_weight_milli = ncq_test_rng(&rs);
            ncq_model_set_settings(m, &s, err, sizeof(err));
            break;
        }
        case 3:
            if (ncq_test_rng(&rs) % 50 == 0) {
                ncq_model_reset(m, t);
                for (i = 0; i <= NCQ_MAX_TAGS; i++) {
                    dropped += outstanding[i];
                    outstanding[i] = 0;
                }
            }
            break;
        default:
            cmd.op = (NcqOp)(ncq_test_rng(&rs) % 6);
            cmd.id = ncq_test_rng(&rs) % 40;
            cmd.lba = pick_lba(&rs, cap);
            cmd.sectors = ncq_test_rng(&rs) % 4 ? 1 + ncq_test_rng(&rs) % 256 :
                          (uint32_t)ncq_test_rng(&rs) % 70000;
            cmd.fua = ncq_test_rng(&rs) & 1;
            cmd.prio = ncq_test_rng(&rs) & 1;
            cmd.queued = ncq_test_rng(&rs) % 8 != 0;
            rc = ncq_model_submit(m, &cmd, t);
            CHECK(rc <= 0 && rc >= NCQ_ERR_NOMEM, "rc %d", rc);
            if (rc == 0) {
                int tag = cmd.queued ? (int)cmd.id : NCQ_MAX_TAGS;

                CHECK(cmd.op <= NCQ_OP_OTHER, "bad op accepted");
                CHECK(outstanding[tag] == 0, "tag %d accepted twice", tag);
                outstanding[tag]++;
                accepted++;
            }
            break;
        }
        if (x % 3 == 0) {
            int64_t e = ncq_model_next_event(m);

            if (e != INT64_MAX && e > t && x % 2) {
                t = e;
            }
        }
        n = ncq_model_advance(m, t, c, 64);
        for (i = 0; i < n; i++) {
            int tag = c[i].queued ? (int)c[i].id : NCQ_MAX_TAGS;

            CHECK(tag <= NCQ_MAX_TAGS && outstanding[tag] == 1,
                  "unexpected completion of tag %d", tag);
            if (tag <= NCQ_MAX_TAGS) {
                outstanding[tag] = 0;
            }
            CHECK(c[i].complete_ns >= c[i].arrival_ns, "time order");
            completed++;
        }
    }
    completed += ncq_test_drain(m, c, 64);
    for (;;) {
        n = ncq_test_drain(m, c, 64);
        if (n == 0) {
            break;
        }
        completed += n;
    }
    CHECK_EQ(ncq_model_outstanding(m), 0);
    CHECK(accepted == completed + dropped, "%s: accepted %ld, completed "
          "%ld, dropped %ld", name, accepted, completed, dropped);
    ncq_model_free(m);
}

int main(void)
{
    size_t i;
    uint64_t seed;

    for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        for (seed = 1; seed <= 3; seed++) {
            fuzz(models[i], seed, 60000);
        }
    }
    return ncq_test_done("test-fuzz");
}
