/*
 * ncq-fit-probe: the starvation time-out and NCQ priority (Stanovich et
 * al.'s far-read experiment).  31 threads keep the queue full of reads
 * near the start of the disk; one far read at the end then waits while a
 * positioning-time scheduler keeps picking the near ones, until the
 * firmware's time-out forces it.  Its latency less its own service time
 * is the time-out.  The same with the far read sent at high NCQ priority
 * (ioprio RT, ncq_prio_enable) shows whether the drive honours priority.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe-workers.h"

#define STARVE_NEAR_FRAC  100   /* near reads in the first 1/100 */
#define STARVE_GUARD_S    15    /* the longest wait for one far read */
#define IOPRIO_CLASS_RT   1
#define IOPRIO_CLASS_BE   2
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_WHO_PROCESS 1

static int starve_reads(Probe *p)
{
    return p->scale >= 0.5 ? 10 : 3;
}

double probe_starve_plan(Probe *p)
{
    return (starve_reads(p) + 2) * 2.6 + 3;
}

static int64_t far_read(Probe *p, void *buf, uint64_t *seed, int64_t *sub)
{
    uint64_t span = p->sectors / STARVE_NEAR_FRAC;
    uint64_t lba = (p->sectors - 8 - probe_rand(seed) % span) & ~7ULL;

    *sub = probe_now();
    if (probe_pread(p, buf, lba, 4096) != 0) {
        return -1;
    }
    return (int64_t)lba;
}

static int set_prio(bool rt)
{
    int v = rt ? IOPRIO_CLASS_RT << IOPRIO_CLASS_SHIFT :
            IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT | 4;

    return (int)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS,
                        (int)syscall(SYS_gettid), v);
}

static int set_ncq_prio(Probe *p, bool on)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "/sys/block/%s/device/ncq_prio_enable",
             p->name);
    f = fopen(path, "w");
    if (!f) {
        return -1;
    }
    fputs(on ? "1" : "0", f);
    return fclose(f) == 0 ? 0 : -1;
}

/* @count far reads behind a full queue of near ones; @type of records */
static int starve_run(Probe *p, int count, const char *type, void *buf)
{
    Worker w[PROBE_MAX_DEPTH];
    int near = PROBE_MAX_DEPTH - 1, rc = 0;
    atomic_bool stop = false;
    uint64_t seed = 0x51a7e5eedULL;

    for (int k = 0; k < near; k++) {
        w[k] = (Worker) {
            .p = p, .lo = 0, .span = p->sectors / STARVE_NEAR_FRAC,
            .seed = 0x2545f4914f6cdd1dULL * (uint64_t)(k + 1), .max = 20000,
            .deadline = probe_now() +
                        (int64_t)count * (STARVE_GUARD_S + 1) * 1000000000LL,
            .stop = &stop,
        };
    }
    if (workers_start(w, near) != 0) {
        return -1;
    }
    for (int i = 0; i < count && rc == 0; i++) {
        int64_t sub, lba;

        usleep(100000);          /* the queue fills again */
        lba = far_read(p, buf, &seed, &sub);
        if (lba < 0) {
            rc = -1;
            break;
        }
        fprintf(p->out, "{\"type\":\"%s\",\"lba\":%lld,\"submit_ns\":%lld,"
                "\"done_ns\":%lld}\n", type, (long long)lba, (long long)sub,
                (long long)probe_now());
        probe_progress(p, 0.5);
    }
    atomic_store(&stop, true);
    if (workers_join(w, near, "starve_near", near) != 0) {
        rc = -1;
    }
    return rc;
}

int probe_starve(Probe *p)
{
    void *buf = probe_buffer(4096);
    uint64_t seed = 0xfa4ULL;
    int rc;

    probe_phase_start(p, "starve", probe_starve_plan(p));
    if (!buf || probe_set_depth(p, PROBE_MAX_DEPTH) != 0) {
        probe_skipped(p, "starvation", "cannot set the queue depth in sysfs");
        probe_phase_end(p);
        return -1;
    }
    /* the far read's own service time, from a near position */
    for (int i = 0; i < 8; i++) {
        uint64_t near = probe_rand(&seed) % (p->sectors / STARVE_NEAR_FRAC);
        int64_t sub, lba, t;

        if (probe_sg_read(p, near, 1, false, &t) != 0) {
            break;
        }
        lba = far_read(p, buf, &seed, &sub);
        if (lba < 0) {
            break;
        }
        fprintf(p->out, "{\"type\":\"starve_ref\",\"lba\":%lld,"
                "\"submit_ns\":%lld,\"done_ns\":%lld}\n", (long long)lba,
                (long long)sub, (long long)probe_now());
    }
    rc = starve_run(p, starve_reads(p), "starve_far", buf);
    if (rc == 0 && set_ncq_prio(p, true) == 0 && set_prio(true) == 0) {
        rc = starve_run(p, 2, "starve_prio", buf);
        set_prio(false);
        set_ncq_prio(p, false);
    } else if (rc == 0) {
        probe_skipped(p, "priority", "the kernel offers no NCQ priority "
                      "for this device (ncq_prio_enable) or refused ioprio");
    }
    if (rc != 0) {
        probe_skipped(p, "starvation", "a 4 KiB O_DIRECT read failed");
    }
    free(buf);
    probe_phase_end(p);
    return rc;
}
