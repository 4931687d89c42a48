/*
 * Transfers overlap as in a real drive (issue 13): a sequential stream
 * runs at the media rate whatever its command size, read data goes to the
 * host as it comes off the media, write data arrives while the drive
 * positions, and a slower link holds a stream to the link's rate.
 *
 * The reference is the media rate of the model's own layout: one long
 * read's media transfer time (NcqCompletion.transfer_ns: the walk over the
 * tracks with their switches and skews), not a number written here.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define STREAM_BYTES (256ULL << 20)   /* per measured stream */
#define MAXC 64

static const uint32_t sizes[] = {
    16, 64, 128, 256, 1024, 2048, 4096, 8192, 16384, 65536,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ALL UINT32_MAX

/* st3400620as with one line of its [drive] section replaced. */
static NcqModel *model_with(const char *key, const char *line)
{
    const char *text = ncq_params_builtin_text("st3400620as");
    const char *at = strstr(text, key);
    const char *eol = at ? strchr(at, '\n') : NULL;
    char *buf;
    NcqModel *m;

    if (!eol) {
        fprintf(stderr, "no %s line in st3400620as\n", key);
        exit(1);
    }
    buf = malloc(strlen(text) + strlen(line) + 2);
    sprintf(buf, "%.*s%s%s", (int)(at - text), text, line, eol);
    m = ncq_test_model_text(buf, 1);
    free(buf);
    return m;
}

static void set_write_cache(NcqModel *m, bool on)
{
    NcqSettings s;
    char err[128];

    ncq_model_get_settings(m, &s);
    s.write_cache = on;
    if (ncq_model_set_settings(m, &s, err, sizeof(err)) < 0) {
        fprintf(stderr, "settings: %s\n", err);
        exit(1);
    }
}

/* Advance to the next completion; false when nothing is pending. */
static bool ncq_test_drain_one(NcqModel *m, NcqCompletion *c)
{
    for (;;) {
        int64_t t = ncq_model_next_event(m);

        if (t == INT64_MAX) {
            return false;
        }
        if (ncq_model_advance(m, t, c, 1) == 1) {
            return true;
        }
    }
}

/* Bytes per second of one long read's media transfer from LBA 0. */
static double media_rate(NcqModel *m)
{
    NcqCompletion c;

    if (ncq_test_submit(m, 0, NCQ_OP_READ, 0, 65536, 0) < 0 ||
        ncq_test_drain(m, &c, 1) != 1 || c.transfer_ns <= 0) {
        fprintf(stderr, "media_rate: the long read did not complete\n");
        exit(1);
    }
    return 65536.0 * 512 * 1e9 / (double)c.transfer_ns;
}

/*
 * A host that keeps @depth commands of @n sectors in the drive, each
 * next one where the last ended, from LBA 0, and submits the next at the
 * instant one completes.  Writes end with a FLUSH CACHE, so that a write
 * cache only counts once its data is on the media.  Returns bytes per
 * second from the first submission to the last completion.
 */
static double stream_rate(NcqModel *m, NcqOp op, uint32_t n, int depth)
{
    uint64_t total = STREAM_BYTES / 512, next = 0, done = 0;
    int64_t t = ncq_model_next_event(m), end = 0;
    NcqCompletion c[MAXC];
    int tag, k, i;

    t = t == INT64_MAX ? 1000000 : t + 1000000;
    if (total < (uint64_t)n * depth * 4) {
        total = (uint64_t)n * depth * 4;    /* a few commands at least */
    }
    for (tag = 0; tag < depth; tag++, next += n) {
        ncq_test_submit(m, tag, op, next, n, t);
    }
    while (done < total) {
        int64_t e = ncq_model_next_event(m);

        if (e == INT64_MAX) {
            fprintf(stderr, "stream_rate: nothing pending\n");
            exit(1);
        }
        k = ncq_model_advance(m, e, c, MAXC);
        for (i = 0; i < k; i++) {
            done += c[i].sectors;
            end = c[i].complete_ns;
            if (next + n <= total) {
                ncq_test_submit(m, c[i].id, op, next, n, e);
                next += n;
            }
        }
    }
    if (op == NCQ_OP_WRITE) {
        NcqCmd f = { .id = 0, .op = NCQ_OP_FLUSH };

        ncq_model_submit(m, &f, end);
        if (ncq_test_drain(m, c, MAXC) >= 1) {
            end = c[0].complete_ns;
        }
    }
    return (double)done * 512 * 1e9 / (double)(end - t);
}

/*
 * Rates over the request sizes never fall (1 % for rounding) and, from
 * @from_n sectors on, come within 5 % of @want (0: not checked).
 */
static void check_sizes(const char *what, NcqOp op, int wc, int depth,
                        double want, uint32_t from_n, uint32_t to_n)
{
    double prev = 0;
    size_t i;

    for (i = 0; i < NSIZES && sizes[i] <= to_n; i++) {
        NcqModel *m = ncq_test_model("st3400620as", 1);
        double r;

        if (wc >= 0) {
            set_write_cache(m, wc);
        }
        r = stream_rate(m, op, sizes[i], depth);
        printf("%s depth %d size %5u: %6.2f MB/s\n", what, depth, sizes[i],
               r / 1e6);
        CHECK(r >= prev * 0.99, "%s depth %d: %.2f MB/s at %u sectors is "
              "below %.2f MB/s at %u", what, depth, r / 1e6, sizes[i],
              prev / 1e6, sizes[i - 1]);
        if (want > 0 && sizes[i] >= from_n) {
            CHECK(r > want * 0.95 && r < want * 1.05, "%s depth %d size %u: "
                  "%.2f MB/s, the media rate is %.2f MB/s", what, depth,
                  sizes[i], r / 1e6, want / 1e6);
        }
        prev = r > prev ? r : prev;
        ncq_model_free(m);
    }
}

/*
 * A write-through write may start on the media before all its data has
 * crossed the link: over writes landing at every angle, some start their
 * first sector earlier than arrival + the link time of the whole command.
 */
static void test_write_starts_before_all_data(void)
{
    int early = 0, i;

    for (i = 0; i < 24; i++) {
        NcqModel *m = ncq_test_model("st3400620as", 7 + i);
        NcqCompletion c;
        int64_t t = 1000000 + i * 347000;   /* spread over the rotation */
        int64_t all_data = 2048LL * 512 * 1000 / 300;  /* ns at 300 MB/s */

        set_write_cache(m, false);
        ncq_test_submit(m, 1, NCQ_OP_WRITE, 0, 2048, t);
        if (ncq_test_drain(m, &c, 1) == 1) {
            int64_t first = c.complete_ns - c.transfer_ns;

            early += first < t + all_data;
        }
        ncq_model_free(m);
    }
    printf("write-through writes starting before all data arrived: "
           "%d of 24\n", early);
    CHECK(early > 0, "no write started before its last sector's data");
}

/*
 * A write larger than the write cache is acknowledged before it is all on
 * the media; until then its tail is volatile, and a FLUSH waits for it.
 */
static void test_spilled_write_tail(void)
{
    NcqModel *m = ncq_test_model("st3400620as", 3);
    NcqCmd f = { .id = 0, .op = NCQ_OP_FLUSH };
    NcqCompletion c, fc;
    NcqRange v[8];
    int nv;

    set_write_cache(m, true);
    ncq_test_submit(m, 1, NCQ_OP_WRITE, 1000000, 16384, 1000000);
    CHECK(ncq_test_drain_one(m, &c), "the 8 MiB write completes");
    nv = ncq_model_volatile(m, c.complete_ns, v, 8);
    printf("8 MiB write: acknowledged %.2f ms before its media end; "
           "volatile then: %d range(s), %" PRIu64 " sectors from %" PRIu64
           "\n", (c.media_end_ns - c.complete_ns) / 1e6, nv,
           nv > 0 ? v[0].sectors : 0, nv > 0 ? v[0].lba : 0);
    CHECK(c.complete_ns < c.media_end_ns, "acknowledged only at media end");
    CHECK(nv == 1 && v[0].lba + v[0].sectors == 1000000 + 16384 &&
          v[0].lba > 1000000, "its tail is volatile");
    ncq_model_submit(m, &f, c.complete_ns);
    CHECK(ncq_test_drain(m, &fc, 1) == 1 && fc.complete_ns >= c.media_end_ns,
          "the FLUSH completed before the tail was on the media");
    ncq_model_free(m);
}

/* With a link slower than the media, the link sets a stream's rate. */
static void test_slow_link(void)
{
    NcqModel *m = model_with("bus_mb_s", "bus_mb_s = 20");
    double r = stream_rate(m, NCQ_OP_READ, 2048, 1);

    printf("read stream over a 20 MB/s link: %.2f MB/s\n", r / 1e6);
    CHECK(r <= 20e6 * 1.001 && r > 20e6 * 0.95,
          "%.2f MB/s over a 20 MB/s link", r / 1e6);
    ncq_model_free(m);
}

int main(void)
{
    NcqModel *m = ncq_test_model("st3400620as", 1);
    double media = media_rate(m);

    ncq_model_free(m);
    printf("media rate from LBA 0: %.2f MB/s\n", media / 1e6);
    /* 64 KiB and up: smaller commands are bound by their overhead */
    check_sizes("read", NCQ_OP_READ, -1, 1, media, 128, ALL);
    check_sizes("read", NCQ_OP_READ, -1, 4, media, 128, ALL);
    /* 8 and 32 MiB writes pass through the 4 MiB write cache as a ring */
    check_sizes("write, cache on", NCQ_OP_WRITE, 1, 1, media, 128, ALL);
    check_sizes("write, cache on", NCQ_OP_WRITE, 1, 4, media, 128, ALL);
    /*
     * Write-through at depth 1 loses a revolution per command to the
     * command's overhead, as real drives do; queued, they stream.
     */
    check_sizes("write, cache off", NCQ_OP_WRITE, 0, 1, 0, 0, ALL);
    check_sizes("write, cache off", NCQ_OP_WRITE, 0, 4, media, 1024, ALL);
    test_write_starts_before_all_data();
    test_spilled_write_tail();
    test_slow_link();
    return ncq_test_done("test-overlap");
}
