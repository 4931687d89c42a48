/*
 * ncq-sim: offline simulator on the ncq-model library.
 *
 * Closed-loop synthetic workloads (clients, think time, host queue depth
 * limit) and open-loop replay of a CSV trace or of an ncq-trace captured
 * by the device.  See docs/ncq-sim.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include "ncq-sim.h"
#include "validate.h"

/* The requests of --replay; an ncq-trace's model and seed are defaults. */
static long replay_load(Opts *o, NcqReq **reqs)
{
    char err[512];
    int64_t seed;
    long nreq = ncq_trace_load(o->replay, reqs, err, sizeof(err));

    if (nreq < 0) {
        die("%s", err);
    }
    ncq_trace_origin(o->replay, o->origin_model, sizeof(o->origin_model),
                     &seed);
    if (!o->model_set && !o->model_file && o->origin_model[0]) {
        o->model = o->origin_model;
    }
    if (!o->seed_set && seed >= 0) {
        o->seed = seed;
    }
    return nreq;
}

int main(int argc, char **argv)
{
    Opts o;
    Result r;
    NcqReq *reqs = NULL;
    long nreq = 0;
    int i;

    opts_parse(&o, argc, argv);
    if (o.list_params) {
        o.json ? ncq_params_list_json(stdout) : ncq_params_list(stdout);
        return 0;
    }
    if (o.dump_model) {
        NcqParams *p = load_params(&o);

        ncq_params_dump_json(stdout, p);
        ncq_params_free(p);
        return 0;
    }
    if (o.validate) {
        return validate_main(o.validate, o.seed, o.figures, o.out, o.json);
    }
    if (o.figures || o.out || o.json) {
        die("--figures, --out and --json go with --validate%s", "");
    }
    if (o.replay) {
        nreq = replay_load(&o, &reqs);
    }
    if (o.nsweep) {
        if (o.trace) {
            die("--trace cannot be combined with --sweep-depth%s", "");
        }
        report_sweep_header();
        for (i = 0; i < o.nsweep; i++) {
            run(&o, o.sweep[i], reqs, nreq, &r);
            report(&o, o.sweep[i], &r, true);
            result_free(&r);
        }
    } else {
        run(&o, o.depth, reqs, nreq, &r);
        report(&o, o.depth, &r, false);
        result_free(&r);
    }
    free(reqs);
    return 0;
}
