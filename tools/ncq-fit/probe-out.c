/*
 * ncq-fit-probe: the progress bar with the time left (stderr) and the
 * records that are not samples (the samples are written where they are
 * taken; docs/ncq-fit.md lists every record).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>

#include "probe.h"

#define BAR_WIDTH 30

/*
 * @phase_frac: how much of the current phase is done.  The time left is
 * the plan's remaining estimate scaled by how fast the plan has gone so
 * far (a drive slower than the estimate stretches it).
 */
void probe_progress(Probe *p, double phase_frac)
{
    static int64_t last;
    int64_t now = probe_now();
    double elapsed = (now - p->start_ns) / 1e9, done, left, speed;
    char bar[BAR_WIDTH + 1];
    int n;

    if (p->quiet || (now - last < 200000000 && phase_frac < 1.0)) {
        return;
    }
    last = now;
    done = p->done_s + (phase_frac < 1.0 ? phase_frac * p->phase_s : 0);
    speed = done > 1 && elapsed > 1 ? elapsed / done : 1.0;
    left = (p->planned_s - done) * speed;
    if (left < 0) {
        left = 0;
    }
    n = (int)(BAR_WIDTH * (done / (p->planned_s > 0 ? p->planned_s : 1)));
    n = n > BAR_WIDTH ? BAR_WIDTH : n;
    for (int i = 0; i < BAR_WIDTH; i++) {
        bar[i] = i < n ? '#' : '.';
    }
    bar[BAR_WIDTH] = 0;
    fprintf(stderr, "\rncq-fit-probe [%s] %3d%% %-8s %2d%% of phase, "
            "about %dm%02ds left ", bar,
            (int)(100 * done / (p->planned_s > 0 ? p->planned_s : 1)),
            p->phase, (int)(100 * phase_frac), (int)left / 60,
            (int)left % 60);
    fflush(stderr);
}

void probe_phase_start(Probe *p, const char *name, double estimate_s)
{
    p->phase = name;
    p->phase_s = estimate_s;
    probe_progress(p, 0.0);
}

void probe_phase_end(Probe *p)
{
    p->done_s += p->phase_s;
    probe_progress(p, 1.0);
}

void probe_skipped(Probe *p, const char *what, const char *why)
{
    fprintf(p->out, "{\"type\":\"skipped\",\"what\":\"%s\",\"why\":\"%s\"}\n",
            what, why);
}
