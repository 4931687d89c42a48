/*
 * Model benchmarks (figures, not pass/fail):
 *  - one SPTF scheduling decision with 32 queued commands;
 *  - simulated commands per second on one core (fcfs and sptf, depth 32);
 *  - memory per model instance.
 * Run: meson test -C _build/model --benchmark -v, or the binary directly.
 * Times are CPU time of the process (CLOCK_PROCESS_CPUTIME_ID).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ncq-int.h"

/* CPU time of this process: robust against other load on the machine */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s)
{
    return ncq_rng_next(s);
}

static NcqModel *model(const char *name, NcqPolicy pol)
{
    NcqParams *p = ncq_params_builtin(name);
    NcqModel *m;
    NcqSettings s;
    char err[256];

    m = ncq_model_new(p, 1, err, sizeof(err));
    ncq_params_free(p);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    ncq_model_get_settings(m, &s);
    s.policy = pol;
    ncq_model_set_settings(m, &s, err, sizeof(err));
    return m;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void bench_decision(void)
{
    NcqModel *m = model("st3400620as", NCQ_POLICY_SPTF);
    uint64_t s = 7, cap = m->p.capacity;
    double samples[2001];
    long sink = 0;
    int i, k;

    /* 32 commands: one goes into service at once, the rest queue */
    for (i = 0; i < 32; i++) {
        NcqCmd c = { .id = i, .op = NCQ_OP_READ, .sectors = 8,
                     .queued = true };

        c.lba = rng(&s) % (cap / 8) * 8;
        ncq_model_submit(m, &c, 0);
    }
    /* put the one in service back into the queue for a full 32 */
    for (i = 0; i < NCQ_SLOTS; i++) {
        if (m->q.slot[i].state == NCQ_SLOT_SERVICE) {
            m->q.slot[i].state = NCQ_SLOT_QUEUED;
            m->q.order[m->q.n++] = i;
        }
    }
    for (k = 0; k < 2001; k++) {
        double t0 = now_s();
        NcqReason r;
        int64_t d;

        for (i = 0; i < 100; i++) {
            sink += ncq_sched_pick(m, 1000000 + k * 1000 + i, &r, &d);
        }
        samples[k] = (now_s() - t0) / 100;
    }
    qsort(samples, 2001, sizeof(double), cmpd);
    printf("sptf decision, 32 queued: median %.0f ns, p90 %.0f ns "
           "(2001 samples of 100 decisions, queue %d, checksum %ld)\n",
           samples[1000] * 1e9, samples[1800] * 1e9, m->q.n, sink);
    ncq_model_free(m);
}

static void bench_throughput(const char *name, NcqPolicy pol, long count)
{
    NcqModel *m = model(name, pol);
    uint64_t s = 3, cap = m->p.capacity;
    int64_t t = 0;
    long done = 0;
    double t0;
    NcqCompletion c[64];
    int i, n;

    for (i = 0; i < 32; i++) {
        NcqCmd cmd = { .id = i, .op = NCQ_OP_READ, .sectors = 8,
                       .queued = true };

        cmd.lba = rng(&s) % (cap / 8) * 8;
        ncq_model_submit(m, &cmd, 0);
    }
    t0 = now_s();
    while (done < count) {
        t = ncq_model_next_event(m);
        n = ncq_model_advance(m, t, c, 64);
        for (i = 0; i < n; i++) {
            NcqCmd cmd = { .id = c[i].id, .op = NCQ_OP_READ, .sectors = 8,
                           .queued = true };

            cmd.lba = rng(&s) % (cap / 8) * 8;
            ncq_model_submit(m, &cmd, t);
            done++;
        }
    }
    t0 = now_s() - t0;
    printf("%-12s %-9s depth 32: %8.0f simulated commands/s "
           "(%ld commands, %.2f s CPU, %.0f s simulated)\n", name,
           ncq_policy_name(pol), done / t0, done, t0, t / 1e9);
    ncq_model_free(m);
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 2000000;
    NcqModel *m = model("st3400620as", NCQ_POLICY_SPTF);

    printf("memory per model instance: %zu bytes (NcqModel), parameters "
           "%zu bytes (NcqParams, copied in)\n", ncq_model_size(m),
           sizeof(NcqParams));
    ncq_model_free(m);
    bench_decision();
    bench_throughput("st3400620as", NCQ_POLICY_FCFS, count);
    bench_throughput("st3400620as", NCQ_POLICY_SPTF, count);
    bench_throughput("st3400620as", NCQ_POLICY_ASPTF, count / 2);
    bench_throughput("intel-530", NCQ_POLICY_FCFS, count);
    return 0;
}
