/*
 * SSD back end (intel-530): published throughput at QD32 (Intel
 * 329213-002US: 540 MB/s read, 490 MB/s write, 41,000 / 80,000 random 4K
 * read / write IOPS), write IOPS above read IOPS thanks to the buffer,
 * large requests striped over channels, and NCQ conflict: one workload's
 * requests occupying the queue delay another's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

/* Keep @depth commands in the drive; return IOPS; bytes/s in *bw. */
static double qd_loop(int depth, NcqOp op, uint32_t sectors, bool seq,
                      long count, double *bw)
{
    NcqModel *m = ncq_test_model("intel-530", 3);
    uint64_t cap = ncq_model_params(m)->capacity, rs = 5, pos = 0;
    int64_t t = 0, t_end = 0;
    long issued = 0, done = 0;
    int in_drive = 0, i;
    bool busy[NCQ_MAX_TAGS] = { false };

    while (done < count) {
        NcqCompletion c[64];
        int n;

        while (in_drive < depth && issued < count) {
            NcqCmd cmd = { 0 };
            int tag = 0;

            while (busy[tag]) {
                tag++;
            }
            cmd.id = tag;
            cmd.op = op;
            cmd.sectors = sectors;
            if (seq) {
                cmd.lba = pos;
                pos += sectors;
            } else {
                cmd.lba = ncq_test_rng(&rs) % (cap / sectors) * sectors;
            }
            cmd.queued = true;
            CHECK_EQ(ncq_model_submit(m, &cmd, t), 0);
            busy[tag] = true;
            in_drive++;
            issued++;
        }
        t = ncq_model_next_event(m);
        n = ncq_model_advance(m, t, c, 64);
        for (i = 0; i < n; i++) {
            busy[c[i].id] = false;
            in_drive--;
            done++;
            t_end = c[i].complete_ns;
        }
    }
    ncq_model_free(m);
    *bw = done * (double)sectors * 512 / (t_end / 1e9);
    return done / (t_end / 1e9);
}

static void near(double got, double want, const char *what)
{
    printf("%-28s %10.0f (published %.0f, %+.1f %%)\n", what, got, want,
           100 * (got / want - 1));
    CHECK(got > want * 0.95 && got < want * 1.05, "%s: %.0f vs %.0f",
          what, got, want);
}

static void test_published(void)
{
    double bw, rd, wr;

    rd = qd_loop(32, NCQ_OP_READ, 8, false, 200000, &bw);
    near(rd, 41000, "4K random read IOPS QD32");
    wr = qd_loop(32, NCQ_OP_WRITE, 8, false, 200000, &bw);
    near(wr, 80000, "4K random write IOPS QD32");
    CHECK(wr > rd, "write IOPS above read IOPS");
    qd_loop(32, NCQ_OP_READ, 256, true, 20000, &bw);
    near(bw / 1e6, 540, "128K sequential read MB/s");
    qd_loop(32, NCQ_OP_WRITE, 256, true, 20000, &bw);
    near(bw / 1e6, 490, "128K sequential write MB/s");
}

static void test_striping(void)
{
    NcqModel *m = ncq_test_model("intel-530", 1);
    NcqCompletion c[4];
    int64_t one_page, eight_pages;

    /* 128 KiB over 8 channels costs little more than one 16 KiB page */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 0, 32, 0), 0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    one_page = c[0].complete_ns - c[0].arrival_ns;
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 1000000, 256, 100000000),
             0);
    CHECK_EQ(ncq_test_drain(m, c, 4), 1);
    eight_pages = c[0].complete_ns - c[0].arrival_ns;
    CHECK(eight_pages < 4 * one_page, "striped: %" PRId64 " vs %" PRId64,
          eight_pages, one_page);
    ncq_model_free(m);
}

/*
 * NCQ conflict: a 4K read behind 31 queued 128K reads waits far longer
 * than a 4K read behind 31 queued 4K reads.
 */
static int64_t behind(uint32_t big)
{
    NcqModel *m = ncq_test_model("intel-530", 1);
    NcqCompletion c[40];
    int64_t lat = -1;
    int i, n;

    for (i = 0; i < 31; i++) {
        CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, i * 4096, big, 0), 0);
    }
    CHECK_EQ(ncq_test_submit(m, 31, NCQ_OP_READ, 9999992, 8, 1), 0);
    n = ncq_test_drain(m, c, 40);
    CHECK_EQ(n, 32);
    for (i = 0; i < n; i++) {
        if (c[i].id == 31) {
            lat = c[i].complete_ns - c[i].arrival_ns;
        }
    }
    ncq_model_free(m);
    return lat;
}

int main(void)
{
    int64_t small = behind(8), large = behind(256);

    test_published();
    test_striping();
    printf("4K read behind 31 x 4K: %.3f ms, behind 31 x 128K: %.3f ms\n",
           small / 1e6, large / 1e6);
    CHECK(large > 3 * small, "NCQ conflict");
    return ncq_test_done("test-ssd");
}
