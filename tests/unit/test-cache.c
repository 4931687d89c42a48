/*
 * Buffer semantics: write-back cache, FUA, FLUSH, read-ahead hits, reset,
 * and the command errors the device turns into ATA errors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define US 1000LL
#define MS 1000000LL

/* The small drive with overheads, write cache on and read-ahead. */
#define NCQ_TEST_WC NCQ_TEST_SMALL \
    "[overhead]\nread_miss_ms = 0.2\nread_hit_ms = 0.05\nwrite_ms = 0.1\n" \
    "other_ms = 0.01\n"

static NcqModel *wc_model(bool wc, uint32_t ra_sectors)
{
    NcqModel *m;
    NcqSettings s;
    char err[128];

    m = ncq_test_model_text(NCQ_TEST_WC, 2);
    ncq_model_get_settings(m, &s);
    s.write_cache = wc;
    CHECK_EQ(ncq_model_set_settings(m, &s, err, sizeof(err)), 0);
    (void)ra_sectors;
    return m;
}

static void test_write_cache(void)
{
    NcqModel *m = wc_model(true, 0);
    NcqCompletion c[8];
    NcqCmd fua = { .id = 2, .op = NCQ_OP_WRITE, .lba = 900, .sectors = 8,
                   .fua = true, .queued = true };
    NcqCmd fl = { .op = NCQ_OP_FLUSH };
    int n;

    /* cached write: overhead + bus (8 us), no media access */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, 500, 8, 1 * MS), 0);
    n = ncq_model_advance(m, 2 * MS, c, 8);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].complete_ns, 1 * MS + 100 * US + 8 * US);
    CHECK(c[0].cache_hit, "cached write is a buffer hit");
    CHECK_EQ(c[0].media_end_ns, 0);
    CHECK_EQ(c[0].reason, NCQ_REASON_CACHE);
    /* a read of the dirty data hits the buffer */
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 502, 4, 2 * MS), 0);
    n = ncq_model_advance(m, 3 * MS, c, 8);
    CHECK_EQ(n, 1);
    CHECK(c[0].cache_hit, "read of dirty data");
    CHECK_EQ(c[0].complete_ns, 2 * MS + 50 * US + 4 * US);
    /* FUA write goes to the media: at least overhead + 8 sectors */
    CHECK_EQ(ncq_model_submit(m, &fua, 100 * MS), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 1);
    CHECK(!c[0].cache_hit, "FUA write bypasses the cache");
    CHECK(c[0].complete_ns >= 100 * MS + 100 * US + 800 * US, "FUA time");
    CHECK_EQ(c[0].complete_ns, c[0].media_end_ns);
    ncq_model_free(m);

    /* FLUSH with dirty data: completes only after the destage */
    m = wc_model(true, 0);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, 1500, 64, 0), 0);
    n = ncq_model_advance(m, 1, c, 8);
    CHECK_EQ(n, 0);
    /* a non-queued FLUSH while the write is outstanding is an error */
    CHECK_EQ(ncq_model_submit(m, &fl, 10), NCQ_ERR_MIXED);
    n = ncq_model_advance(m, 1 * MS, c, 8);
    CHECK_EQ(n, 1);
    CHECK(c[0].complete_ns < 1 * MS, "cached write acknowledged early");
    CHECK_EQ(ncq_model_submit(m, &fl, 1 * MS), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].op, NCQ_OP_FLUSH);
    CHECK_EQ(c[0].id, NCQ_ID_NONQUEUED);
    /* 64 sectors of zone 1 (125 us each) = 8 ms of media at least */
    CHECK(c[0].complete_ns >= 8 * MS, "flush done at %" PRId64,
          c[0].complete_ns);
    /* an empty cache flushes in the command overhead */
    CHECK_EQ(ncq_model_submit(m, &fl, 1000 * MS), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 1);
    CHECK_EQ(c[0].complete_ns, 1000 * MS + 10 * US);
    ncq_model_free(m);

    /* write cache off: every write reaches the media */
    m = wc_model(false, 0);
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_WRITE, 500, 8, 0), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 1);
    CHECK(!c[0].cache_hit && c[0].media_end_ns == c[0].complete_ns,
          "write-through");
    ncq_model_free(m);
}

static void test_readahead(void)
{
    NcqModel *m = ncq_test_model(
        "st3400620as", 1);
    NcqCompletion c[8];
    int n;

    /* sequential read after an idle gap hits the read-ahead */
    CHECK_EQ(ncq_test_submit(m, 0, NCQ_OP_READ, 1000000, 8, 0), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 1);
    CHECK(!c[0].cache_hit, "first read misses");
    CHECK_EQ(ncq_test_submit(m, 1, NCQ_OP_READ, 1000008, 8, 200 * MS), 0);
    CHECK_EQ(ncq_test_submit(m, 2, NCQ_OP_READ, 1000000, 8, 200 * MS), 0);
    n = ncq_test_drain(m, c, 8);
    CHECK_EQ(n, 2);
    CHECK(c[0].cache_hit && c[1].cache_hit, "read-ahead and re-read hit");
    CHECK(c[0].complete_ns - c[0].arrival_ns < 1 * MS, "hit is fast");
    /* FUA read bypasses the buffer */
    {
        NcqCmd r = { .id = 3, .op = NCQ_OP_READ, .lba = 1000000,
                     .sectors = 8, .fua = true, .queued = true };

        CHECK_EQ(ncq_model_submit(m, &r, 400 * MS), 0);
        n = ncq_test_drain(m, c, 8);
        CHECK_EQ(n, 1);
        CHECK(!c[0].cache_hit, "FUA read misses");
    }
    /* a write invalidates the cached copy */
    {
        NcqCmd w = { .id = 4, .op = NCQ_OP_WRITE, .lba = 1000004,
                     .sectors = 1, .fua = true, .queued = true };

        CHECK_EQ(ncq_model_submit(m, &w, 500 * MS), 0);
        n = ncq_test_drain(m, c, 8);
        CHECK_EQ(ncq_test_submit(m, 5, NCQ_OP_READ, 1000000, 8,
                                 600 * MS), 0);
        n = ncq_test_drain(m, c, 8);
        CHECK_EQ(n, 1);
        CHECK(!c[0].cache_hit, "stale segment dropped");
    }
    ncq_model_free(m);
}

static void test_errors(void)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 1);
    NcqCmd c = { .id = 0, .op = NCQ_OP_READ, .lba = 0, .sectors = 8,
                 .queued = true };
    NcqCompletion out[40];
    NcqStats st;
    int i;

    CHECK_EQ(ncq_model_submit(m, &c, 0), 0);
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_TAG_BUSY);
    c.id = 1;
    c.lba = 1795;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_RANGE);
    c.lba = UINT64_MAX - 2;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_RANGE);
    c.lba = 0;
    c.sectors = 0;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_INVAL);
    c.sectors = 65537;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_INVAL);
    c.sectors = 8;
    c.id = 32;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_INVAL);
    c.id = 1;
    c.op = (NcqOp)77;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_INVAL);
    c.op = NCQ_OP_FLUSH;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_INVAL);  /* queued flush */
    c.queued = false;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_MIXED);
    c.op = NCQ_OP_READ;
    CHECK_EQ(ncq_model_submit(m, &c, 0), NCQ_ERR_MIXED);
    /* time going backwards */
    c.queued = true;
    CHECK_EQ(ncq_model_advance(m, 5 * MS, out, 40), 1);
    CHECK_EQ(ncq_model_submit(m, &c, 4 * MS), NCQ_ERR_TIME);
    /* fill the queue */
    for (i = 0; i < 32; i++) {
        c.id = i;
        c.lba = i * 8;
        CHECK_EQ(ncq_model_submit(m, &c, 5 * MS), 0);
    }
    CHECK_EQ(ncq_model_outstanding(m), 32);
    {
        NcqQueueEntry q[40];
        int nq = ncq_model_queue_list(m, 5 * MS + 1 * US, q, 40), k;

        /* tag 0 re-reads cached data: a hit, done 8 us (bus) later */
        CHECK_EQ(nq, 32);
        CHECK_EQ(q[0].id, 0);
        CHECK(q[0].in_service, "oldest is in service");
        CHECK_EQ(q[0].age_ns, 1 * US);
        CHECK_EQ(q[31].age_ns, 1 * US);
        CHECK_EQ(q[31].id, 31);
        /* later, done commands leave the list but stay to be collected */
        nq = ncq_model_queue_list(m, 60 * MS, q, 40);
        k = ncq_model_outstanding(m);
        CHECK_EQ(nq, k);
        CHECK(nq < 32, "some completed by 60 ms");
        CHECK_EQ(ncq_model_advance(m, 60 * MS, out, 40), 32 - nq);
        CHECK_EQ(ncq_test_drain(m, out, 40), nq);
    }
    /* a queued command while a non-queued one is outstanding */
    c.queued = false;
    c.op = NCQ_OP_READ;
    CHECK_EQ(ncq_model_submit(m, &c, 500 * MS), 0);
    c.queued = true;
    c.id = 3;
    CHECK_EQ(ncq_model_submit(m, &c, 500 * MS), NCQ_ERR_MIXED);
    CHECK_EQ(ncq_test_drain(m, out, 40), 1);
    CHECK_EQ(out[0].id, NCQ_ID_NONQUEUED);
    CHECK(!out[0].queued, "non-queued");
    ncq_model_stats(m, &st);
    CHECK_EQ(st.rejected, 12);
    CHECK_EQ(st.completed[NCQ_OP_READ], 34);
    ncq_model_free(m);

    /* queue depth from the parameters */
    {
        NcqModel *m4 = ncq_test_model_text(
            "[drive]\nname = q4\nmodel = Q4\nkind = hdd\ncapacity = 1000\n"
            "rpm = 6000\nqueue_depth = 4\n[layout]\nheads = 1\n"
            "zone = 0 100 10\n[seek]\ntype = table\npoint = 1 1\n"
            "point = 10 2\n", 1);

        c.queued = true;
        c.op = NCQ_OP_READ;
        for (i = 0; i < 4; i++) {
            c.id = i;
            CHECK_EQ(ncq_model_submit(m4, &c, 0), 0);
        }
        c.id = 4;
        CHECK_EQ(ncq_model_submit(m4, &c, 0), NCQ_ERR_QUEUE_FULL);
        ncq_model_free(m4);
    }
}

static void test_reset(void)
{
    NcqModel *m = ncq_test_model_text(NCQ_TEST_SMALL, 1);
    NcqCompletion out[40];
    int i;

    for (i = 0; i < 8; i++) {
        CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, i * 200, 8, 0), 0);
    }
    ncq_model_reset(m, 5 * MS);
    CHECK_EQ(ncq_model_outstanding(m), 0);
    CHECK_EQ(ncq_test_drain(m, out, 40), 0);
    for (i = 0; i < 8; i++) {
        CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, i * 200, 8,
                                 100 * MS), 0);
    }
    CHECK_EQ(ncq_test_drain(m, out, 40), 8);
    for (i = 0; i < 8; i++) {
        CHECK(out[i].arrival_ns == 100 * MS, "only new commands complete");
    }
    ncq_model_free(m);
}

static void test_power_loss(void)
{
    NcqModel *m = wc_model(true, 0);
    NcqCompletion out[8];
    int i;

    /* 3 cached writes of 8 sectors far apart, then power fails at once */
    for (i = 0; i < 3; i++) {
        CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_WRITE, 200 + i * 400, 8, 0),
                 0);
    }
    CHECK_EQ(ncq_model_advance(m, 1 * MS, out, 8), 3);
    /*
     * The first destage started when the drive went idle but has not
     * finished: it is lost with the rest, 24 sectors.
     */
    CHECK_EQ(ncq_model_power_loss(m, 1 * MS), 24);
    CHECK_EQ(ncq_test_drain(m, out, 8), 0);
    /* nothing dirty any more: a flush is immediate */
    {
        NcqCmd fl = { .op = NCQ_OP_FLUSH };

        CHECK_EQ(ncq_model_submit(m, &fl, 100 * MS), 0);
        CHECK_EQ(ncq_test_drain(m, out, 8), 1);
        CHECK_EQ(out[0].complete_ns, 100 * MS + 10 * US);
    }
    ncq_model_free(m);
}

/*
 * An asynchronous sequential reader keeping 8 reads queued runs as fast as
 * one keeping a single read in the drive: queued continuations are served
 * by reading on, not as new accesses that lose a revolution each.
 */
static double stream_rate(int depth)
{
    NcqModel *m = ncq_test_model("st3400620as", 3);
    uint64_t next = 5000000;
    int64_t t = 0, end = 0;
    long done = 0;
    int i, n;
    NcqCompletion out[40];

    for (i = 0; i < depth; i++) {
        CHECK_EQ(ncq_test_submit(m, i, NCQ_OP_READ, next, 8, 0), 0);
        next += 8;
    }
    while (done < 4000) {
        t = ncq_model_next_event(m);
        n = ncq_model_advance(m, t, out, 40);
        for (i = 0; i < n; i++) {
            CHECK_EQ(ncq_test_submit(m, out[i].id, NCQ_OP_READ, next, 8, t),
                     0);
            next += 8;
            done++;
            end = out[i].complete_ns;
        }
    }
    ncq_model_free(m);
    return done / (end / 1e9);
}

static void test_stream(void)
{
    double d1 = stream_rate(1), d8 = stream_rate(8), d32 = stream_rate(32);

    printf("sequential 4 KiB stream: %.0f/s at depth 1, %.0f at 8, %.0f at "
           "32\n", d1, d8, d32);
    CHECK(d1 > 5000, "depth 1 stream %.0f/s", d1);
    CHECK(d8 > 0.9 * d1 && d32 > 0.9 * d1, "queued stream keeps up");
}

int main(void)
{
    test_stream();
    test_power_loss();
    test_write_cache();
    test_readahead();
    test_errors();
    test_reset();
    return ncq_test_done("test-cache");
}
