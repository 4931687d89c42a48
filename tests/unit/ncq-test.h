/*
 * Tiny helpers shared by the model unit tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_TEST_H
#define NCQ_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw/ide/ncq-model.h"

static int ncq_test_failures;

#define CHECK(cond, ...) do { \
        if (!(cond)) { \
            ncq_test_failures++; \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, \
                    __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
        } \
    } while (0)

#define CHECK_EQ(a, b) do { \
        long long a_ = (long long)(a), b_ = (long long)(b); \
        CHECK(a_ == b_, "%s = %lld, expected %lld", #a, a_, b_); \
    } while (0)

static inline int ncq_test_done(const char *name)
{
    if (ncq_test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, ncq_test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* A model from @p (consumed); the test stops if that fails. */
static inline NcqModel *ncq_test_new(NcqParams *p, uint64_t seed)
{
    char err[256];
    NcqModel *m = ncq_model_new(p, seed, err, sizeof(err));

    ncq_params_free(p);
    if (!m) {
        fprintf(stderr, "new: %s\n", err);
        exit(1);
    }
    return m;
}

static inline NcqModel *ncq_test_model_text(const char *text, uint64_t seed)
{
    NcqParams *p;
    char err[256];

    if (ncq_params_parse(text, "test.ncqm", &p, err, sizeof(err)) < 0) {
        fprintf(stderr, "parse: %s\n", err);
        exit(1);
    }
    return ncq_test_new(p, seed);
}

static inline NcqModel *ncq_test_model(const char *name, uint64_t seed)
{
    NcqParams *p = ncq_params_builtin(name);

    if (!p) {
        fprintf(stderr, "no built-in model %s\n", name);
        exit(1);
    }
    return ncq_test_new(p, seed);
}

static inline int ncq_test_submit(NcqModel *m, uint32_t tag, NcqOp op,
                                  uint64_t lba, uint32_t n, int64_t t)
{
    NcqCmd c = { 0 };

    c.id = tag;
    c.op = op;
    c.lba = lba;
    c.sectors = n;
    c.queued = op == NCQ_OP_READ || op == NCQ_OP_WRITE;
    return ncq_model_submit(m, &c, t);
}

/* Run until nothing is pending; store completions; return count. */
static inline int ncq_test_drain(NcqModel *m, NcqCompletion *out, int max)
{
    int n = 0;

    for (;;) {
        int64_t t = ncq_model_next_event(m);

        if (t == INT64_MAX) {
            return n;
        }
        n += ncq_model_advance(m, t, out + n, max - n);
        if (n >= max) {
            return n;
        }
    }
}

static inline uint64_t ncq_test_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/*
 * A small drive for hand computations: 6000 rpm (10 ms per revolution),
 * 100 sectors per track in zone 0 (100 us per sector), 80 in zone 1,
 * 2 heads, 10 cylinders, no overheads, a 512 MB/s bus (1 us per sector).
 */
#define NCQ_TEST_SMALL \
    "[drive]\nname = small\nmodel = SMALL\nkind = hdd\n" \
    "capacity = 1800\nrpm = 6000\nbus_mb_s = 512\n" \
    "[layout]\nheads = 2\nzone = 0 5 100\nzone = 5 5 80\n" \
    "track_skew = 0.1\ncyl_skew = 0.2\n" \
    "[seek]\ntype = table\npoint = 1 1.0\npoint = 10 2.0\n" \
    "head_switch_ms = 0.5\n" \
    "[cache]\nsegments = 4\nsegment_kib = 64\nreadahead_kib = 0\n" \
    "write_cache = off\n"

#endif
