/*
 * ncq-fit-probe: measures a hard disk for ncq-fit (docs/ncq-fit.md).
 *
 *   ncq-fit-probe DEVICE [--minutes N] [--out FILE] [--force]
 *                 [--allow-writes] [--quiet] [--phases LIST]
 *
 * Reads only, unless --allow-writes: then the write cache's size is
 * measured too, by writes that write back what their places held
 * (probe-wcache.c).  Writes its samples as JSON lines to FILE (default
 * stdout) and a progress bar to stderr.  Run as root against a whole,
 * idle disk.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_MIN_MINUTES 2.0   /* below this not even a coarse fit */
#define PROBE_FULL_MINUTES 30.0

typedef struct Phase {
    const char *name;
    double (*plan)(Probe *p);
    int (*run)(Probe *p);
    bool needed;              /* the fit cannot do without it */
} Phase;

static const Phase phases[] = {
    { "identify", probe_identity_plan, probe_identity, true },
    { "rpm", probe_rot_plan, probe_rot, true },
    { "zones", probe_zones_plan, probe_zones, true },
    { "seek", probe_seek_plan, probe_seek, false },
    { "queue", probe_queue_plan, probe_queue, false },
    { "starve", probe_starve_plan, probe_starve, false },
    { "cache", probe_cache_plan, probe_cache, false },
    { "wcache", probe_wcache_plan, probe_wcache, false },
};
#define NPHASES (int)(sizeof(phases) / sizeof(phases[0]))

static int usage(const char *why)
{
    fprintf(stderr, "ncq-fit-probe: %s; usage: ncq-fit-probe DEVICE "
            "[--minutes N] [--out FILE] [--force] [--allow-writes] "
            "[--quiet] [--phases identify,rpm,zones,seek,queue,starve,"
            "cache,wcache]\n", why);
    return 2;
}

static bool phase_wanted(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *s = list; s && *s; s = strchr(s, ',') ?
         strchr(s, ',') + 1 : NULL) {
        if (!strncmp(s, name, n) && (s[n] == ',' || s[n] == 0)) {
            return true;
        }
    }
    return list == NULL;
}

static int parse_args(Probe *p, int argc, char **argv, const char **outp,
                      const char **list)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;

        if (!strcmp(a, "--minutes") && more) {
            char *end;

            p->minutes = strtod(argv[++i], &end);
            if (*end || !(p->minutes > 0)) {
                return usage("--minutes takes a positive number");
            }
        } else if (!strcmp(a, "--out") && more) {
            *outp = argv[++i];
        } else if (!strcmp(a, "--phases") && more) {
            *list = argv[++i];
        } else if (!strcmp(a, "--force")) {
            p->force = true;
        } else if (!strcmp(a, "--allow-writes")) {
            p->allow_writes = true;
        } else if (!strcmp(a, "--quiet")) {
            p->quiet = true;
        } else if (a[0] == '-' || p->dev) {
            return usage("unknown or incomplete argument");
        } else {
            p->dev = a;
        }
    }
    if (!p->dev) {
        return usage("no device given");
    }
    if (p->minutes < PROBE_MIN_MINUTES) {
        fprintf(stderr, "ncq-fit-probe: --minutes %g is too short for even "
                "a coarse fit; give at least %g (a full fit takes %g)\n",
                p->minutes, PROBE_MIN_MINUTES, PROBE_FULL_MINUTES);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    Probe p = { .minutes = PROBE_FULL_MINUTES, .fd = -1, .phase = "" };
    const char *outp = NULL, *list = NULL;
    int rc = parse_args(&p, argc, argv, &outp, &list);

    if (rc) {
        return rc;
    }
    p.scale = p.minutes / PROBE_FULL_MINUTES;
    if (probe_open(&p) < 0) {
        return 1;
    }
    p.out = outp ? fopen(outp, "w") : stdout;
    if (!p.out) {
        fprintf(stderr, "ncq-fit-probe: cannot write %s\n", outp);
        probe_restore(&p);
        return 1;
    }
    p.quiet |= !isatty(STDERR_FILENO) && getenv("NCQ_FIT_PROGRESS") == NULL;
    prctl(PR_SET_TIMERSLACK, 1UL);     /* waits of the seek profile */
    p.start_ns = probe_now();
    for (int i = 0; i < NPHASES; i++) {
        if (phase_wanted(list, phases[i].name)) {
            p.planned_s += phases[i].plan(&p);
        }
    }
    fprintf(p.out, "{\"type\":\"probe\",\"format\":1,\"device\":\"%s\","
            "\"minutes\":%g,\"start_ns\":%lld}\n", p.dev, p.minutes,
            (long long)p.start_ns);
    for (int i = 0; i < NPHASES; i++) {
        if (!phase_wanted(list, phases[i].name)) {
            continue;
        }
        if (phases[i].run(&p) != 0 && phases[i].needed) {
            fprintf(stderr, "\nncq-fit-probe: the %s measurement failed; "
                    "see the skipped record in the samples\n",
                    phases[i].name);
            rc = 1;
            break;
        }
        fflush(p.out);
    }
    fprintf(p.out, "{\"type\":\"end\",\"elapsed_ns\":%lld,\"status\":%d}\n",
            (long long)(probe_now() - p.start_ns), rc);
    if (!p.quiet) {
        fputc('\n', stderr);
    }
    probe_restore(&p);
    if (p.out != stdout) {
        fclose(p.out);
    }
    return rc;
}
