/*
 * In-queue clustering: adjacent sequential commands are served as one
 * media access up to the threshold; each tag completes on its own.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define US 1000LL
#define MS 1000000LL

static NcqModel *model(uint32_t threshold, NcqPolicy pol)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 4);
    NcqSettings s;
    char err[128];

    ncq_model_get_settings(m, &s);
    s.clustering_sectors = threshold;
    s.policy = pol;
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    return m;
}

static void run(uint32_t threshold, NcqPolicy pol)
{
    NcqModel *m = model(threshold, pol);
    NcqCompletion c[8];
    int n, i;

    /* busy the head far away, then queue 1000, 1016, 1008, 1024 */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 1700, 8, 0), 0);
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 1000, 8, 1), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 1016, 8, 2), 0);
    CHECK_EQ(ncq_test_submit(m, 3, NCQ_OP_READ, 1008, 8, 3), 0);
    CHECK_EQ(ncq_test_submit(m, 4, NCQ_OP_READ, 1024, 8, 4), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 5);
    if (threshold >= 32) {
        /* one access for 1000..1031: completion order by LBA */
        CHECK(c[1].id == 1 && c[2].id == 3 && c[3].id == 2 && c[4].id == 4,
              "order %u %u %u %u", c[1].id, c[2].id, c[3].id, c[4].id);
        int leaders = 0;

        for (i = 1; i <= 4; i++) {
            leaders += c[i].reason != NCQ_REASON_CLUSTERED;
        }
        CHECK_EQ(leaders, 1);
        for (i = 2; i <= 4; i++) {
            CHECK_EQ(c[i].access_id, c[1].access_id);
            CHECK_EQ(c[i].dispatch_ns, c[1].dispatch_ns);
            /* each tag: 8 more sectors of 125 us in zone 1 */
            CHECK_EQ(c[i].transfer_ns - c[i - 1].transfer_ns, 1000 * US);
            CHECK(c[i].complete_ns > c[i - 1].complete_ns, "own completion");
        }
    } else if (threshold == 16) {
        /* pairs: (1000, 1008) and (1016, 1024) */
        int a = -1, b = -1;

        for (i = 1; i <= 4; i++) {
            if (c[i].id == 3) {
                a = i;
            }
            if (c[i].id == 4) {
                b = i;
            }
        }
        CHECK(a > 0 && b > 0, "found");
        CHECK_EQ(c[a].reason, NCQ_REASON_CLUSTERED);
        CHECK_EQ(c[b].reason, NCQ_REASON_CLUSTERED);
        CHECK(c[1].access_id != c[4].access_id, "two accesses");
    } else {
        for (i = 1; i <= 4; i++) {
            CHECK(c[i].reason != NCQ_REASON_CLUSTERED, "no clustering");
        }
    }
    ncq_model_free(m);
}

int main(void)
{
    run(32, NCQ_POLICY_FCFS);
    run(32, NCQ_POLICY_SPTF);
    run(16, NCQ_POLICY_FCFS);
    run(0, NCQ_POLICY_FCFS);
    return ncq_test_done("test-cluster");
}
