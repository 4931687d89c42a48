/*
 * ncq-sim: one run, the host and the drive in virtual time.
 *
 * The host keeps a FIFO of issued requests (noop scheduler) and
 * dispatches them to the drive while fewer than the depth limit are in
 * it; a completion frees a slot --host-delay-ns later.  Requests come
 * from the closed-loop workload or from a replayed trace.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-sim.h"

/* completions taken from the model per call */
#define COMP_BATCH 64
/* the slot of a non-queued command, after the 32 NCQ tags */
#define NONQUEUED_TAG NCQ_MAX_TAGS

typedef struct Host {
    const Opts *o;
    NcqModel *m;
    const NcqParams *p;
    Workload w;
    const NcqReq *reqs;         /* replayed requests, or NULL */
    long nreq, ri;              /* ... their count, the next one */
    HostReq *hq;                /* FIFO of issued requests */
    long hq_head, hq_n, hq_cap;
    HostReq inflight[NCQ_MAX_TAGS + 1];
    bool tag_busy[NCQ_MAX_TAGS + 1];
    int in_drive;
    /* when each free drive slot is usable again (ncredit of them) */
    int64_t credit[NCQ_MAX_TAGS + 1];
    int ncredit;
    FILE *tf;
    Result *r;
    /* --end-flush: when the host sends it (INT64_MAX: not now) */
    int64_t end_flush_at;
    bool end_flush_sent, end_flush_out;
} Host;

/* The parameters --model or --model-file names; one line and exit if bad. */
NcqParams *load_params(const Opts *o)
{
    NcqParams *p = NULL;
    char err[512];

    if (o->model_file) {
        if (ncq_params_load_file(o->model_file, &p, err, sizeof(err)) < 0) {
            die("%s", err);
        }
    } else {
        p = ncq_params_builtin(o->model);
        if (!p) {
            fprintf(stderr, "ncq-sim: unknown model '%s' (known models: "
                    "%s)\n", o->model, ncq_params_builtin_names());
            exit(2);
        }
    }
    return p;
}

/*
 * --zone-state: the zones a device's zone-state file holds, as a
 * power-on finds them (docs/smr.md); a bad file stops with its line.
 */
static void load_zone_state(NcqModel *m, const char *path)
{
    char err[512], msg[1024];
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f) {
        die("--zone-state %s: cannot be read", path);
    }
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            if (!buf) {
                die("--zone-state %s: out of memory", path);
            }
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n);
    fclose(f);
    if (ncq_model_zone_state_parse(m, buf, len, err, sizeof(err)) < 0) {
        snprintf(msg, sizeof(msg), "%s: %s", path, err);
        free(buf);
        die("--zone-state %s", msg);
    }
    free(buf);
}

/* The drive, with the options' settings over the model's defaults. */
static NcqModel *make_model(const Opts *o, char *name, size_t namelen)
{
    NcqParams *p = load_params(o);
    NcqModel *m;
    NcqSettings s;
    char err[512];
    int i;

    m = ncq_model_new(p, o->seed, err, sizeof(err));
    snprintf(name, namelen, "%s", p->name);
    ncq_params_free(p);
    if (!m) {
        die("%s", err);
    }
    ncq_model_get_settings(m, &s);
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        if (o->set[i]) {
            ncq_setting_put(i, &s, ncq_setting_get(i, &o->settings));
        }
    }
    if (ncq_model_set_settings(m, &s, err, sizeof(err)) < 0) {
        die("%s", err);
    }
    if (o->zone_state) {
        load_zone_state(m, o->zone_state);
    }
    return m;
}

static void host_init(Host *h, const Opts *o, int depth, const NcqReq *reqs,
                      long nreq, Result *r)
{
    char name[64];

    memset(h, 0, sizeof(*h));
    memset(r, 0, sizeof(*r));
    h->o = o;
    h->r = r;
    h->reqs = reqs;
    h->nreq = nreq;
    h->ncredit = depth;
    h->end_flush_at = INT64_MAX;
    h->m = make_model(o, name, sizeof(name));
    h->p = ncq_model_params(h->m);
    r->ngroups = reqs ? 1 : o->ngroups;
    r->interval_ns = o->interval_ns;
    workload_init(&h->w, o, h->p->capacity, reqs != NULL);
    if (o->zoned && !reqs) {
        workload_zones(&h->w, h->m);
    }
    h->hq_cap = (reqs ? nreq : h->w.nclients) + 1;
    h->hq = calloc(h->hq_cap, sizeof(*h->hq));
    if (!h->hq) {
        die("out of memory%s", "");
    }
    if (o->trace) {
        h->tf = fopen(o->trace, "w");
        if (!h->tf) {
            die("cannot write trace file '%s'", o->trace);
        }
        ncq_trace_header(h->tf, name, o->seed);
    }
}

static void host_free(Host *h)
{
    ncq_model_stats(h->m, &h->r->st);
    if (h->tf) {
        fclose(h->tf);
    }
    ncq_model_free(h->m);
    workload_free(&h->w);
    free(h->hq);
}

/*
 * The next instant anything happens after @last_t: a drive event, an
 * issue, or a slot becoming usable for a waiting request.  INT64_MAX if
 * nothing will.
 */
static int64_t host_next_time(const Host *h, int64_t last_t)
{
    int64_t t = ncq_model_next_event(h->m), ti = INT64_MAX;
    int i;

    if (h->reqs) {
        if (h->ri < h->nreq) {
            ti = h->reqs[h->ri].t;
        }
    } else {
        ti = workload_next_issue(&h->w);
    }
    if (ti < t) {
        t = ti;
    }
    if (h->end_flush_at < t) {
        t = h->end_flush_at;
    }
    if (h->hq_n > 0) {
        for (i = 0; i < h->ncredit; i++) {
            if (h->credit[i] < t && h->credit[i] > last_t) {
                t = h->credit[i];
            }
        }
    }
    return t;
}

/*
 * --end-flush: once the workload has issued its last request and every
 * request has completed, the host sends one FLUSH CACHE (after its
 * turnaround) and the run ends when the drive has written its cache to
 * the media, as fio's end_fsync=1 ends a job.  Without it a write run
 * shorter than the cache measures the link, not the media: the drive
 * destages after the last completion, outside the run's time.  The FLUSH
 * is in the trace and the run's time, not in the commands and latencies.
 */
static void host_end_flush_due(Host *h, int64_t t)
{
    if (!h->o->end_flush || h->end_flush_sent || h->hq_n > 0 ||
        h->in_drive > 0 || h->end_flush_at != INT64_MAX) {
        return;
    }
    if (h->reqs ? h->ri == h->nreq
                : workload_next_issue(&h->w) == INT64_MAX) {
        h->end_flush_at = t + h->o->host_delay_ns;
    }
}

static void host_end_flush_send(Host *h, int64_t t)
{
    NcqCmd cmd = { .op = NCQ_OP_FLUSH };
    int rc;

    if (t != h->end_flush_at) {
        return;
    }
    h->end_flush_at = INT64_MAX;
    rc = ncq_model_submit(h->m, &cmd, t);
    if (rc < 0) {
        fprintf(stderr, "ncq-sim: the end FLUSH was rejected: %s\n",
                ncq_strerror(rc));
        exit(1);
    }
    h->end_flush_sent = true;
    h->end_flush_out = true;
    h->r->flush_ns = -t;        /* its completion adds its end */
}

static void host_end_flush_done(Host *h, const NcqCompletion *c)
{
    h->end_flush_out = false;
    h->r->flush_ns += c->complete_ns;
    if (c->complete_ns > h->r->t_end) {
        h->r->t_end = c->complete_ns;
    }
    if (h->tf) {
        ncq_trace_record(h->tf, c);
    }
}

/* Take the drive's completions up to @t. */
static void host_complete(Host *h, int64_t t)
{
    NcqCompletion comp[COMP_BATCH];
    int i, n;

    do {
        n = ncq_model_advance(h->m, t, comp, COMP_BATCH);
        for (i = 0; i < n; i++) {
            const NcqCompletion *c = &comp[i];
            int tag = c->queued ? (int)c->id : NONQUEUED_TAG;
            const HostReq *req = &h->inflight[tag];
            int client = req->client;

            if (h->end_flush_out && !c->queued) {
                host_end_flush_done(h, c);
                continue;
            }
            h->tag_busy[tag] = false;
            h->in_drive--;
            h->credit[h->ncredit++] = c->complete_ns + h->o->host_delay_ns;
            result_add(h->r, c->complete_ns - req->issue, c,
                       client >= 0 ? h->w.cgroup[client] : 0);
            if (h->tf) {
                ncq_trace_record(h->tf, c);
            }
            if (client >= 0) {
                workload_done(&h->w, client, c->complete_ns);
            }
        }
    } while (n == COMP_BATCH);
}

static void host_queue(Host *h, const HostReq *req)
{
    h->hq[(h->hq_head + h->hq_n++) % h->hq_cap] = *req;
}

/* Requests issued at @t join the host's FIFO. */
static void host_arrivals(Host *h, int64_t t)
{
    HostReq req;
    int i;

    if (h->reqs) {
        while (h->ri < h->nreq && h->reqs[h->ri].t == t) {
            req = (HostReq){ .client = -1, .issue = t,
                             .r = h->reqs[h->ri++] };
            host_queue(h, &req);
        }
        return;
    }
    for (i = 0; i < h->w.nclients; i++) {
        if (workload_issue(&h->w, i, t, &req)) {
            host_queue(h, &req);
        }
    }
}

/* The slot usable at @t the longest, or -1. */
static int host_credit(const Host *h, int64_t t)
{
    int i, cr = -1;

    for (i = 0; i < h->ncredit; i++) {
        if (h->credit[i] <= t && (cr < 0 || h->credit[i] < h->credit[cr])) {
            cr = i;
        }
    }
    return cr;
}

/*
 * The tag for @req: the captured one if free, else the lowest free one;
 * NONQUEUED_TAG for a non-queued command.  -1 if it must wait.
 */
static int host_tag(const Host *h, const HostReq *req, bool queued)
{
    int i, tag = -1;

    if (!queued) {
        /* non-queued waits for an empty queue */
        return h->in_drive > 0 ? -1 : NONQUEUED_TAG;
    }
    if (h->tag_busy[NONQUEUED_TAG]) {
        return -1;
    }
    if (req->r.tag >= 0 && req->r.tag < (int)h->p->queue_depth &&
        !h->tag_busy[req->r.tag]) {
        return req->r.tag;     /* as captured */
    }
    for (i = 0; tag < 0 && i < (int)h->p->queue_depth; i++) {
        if (!h->tag_busy[i]) {
            tag = i;
        }
    }
    return tag;
}

/* Send the FIFO's head to the drive while a slot and a tag allow. */
static void host_dispatch(Host *h, int64_t t)
{
    while (h->hq_n > 0) {
        const HostReq *req = &h->hq[h->hq_head];
        NcqCmd cmd = { 0 };
        int tag, rc, cr = host_credit(h, t);

        if (cr < 0) {
            break;
        }
        cmd.op = req->r.op;
        cmd.lba = req->r.lba;
        cmd.sectors = req->r.sectors;
        cmd.fua = req->r.fua;
        cmd.prio = req->r.prio;
        cmd.zone_action = req->r.zone_action;
        cmd.zone_all = req->r.zone_all;
        /* a zone action is queued as NCQ NON-DATA, as Linux sends it */
        cmd.queued = req->r.op == NCQ_OP_READ || req->r.op == NCQ_OP_WRITE ||
                     cmd.zone_action;
        tag = host_tag(h, req, cmd.queued);
        if (tag < 0) {
            break;
        }
        if (cmd.queued) {
            cmd.id = tag;
        }
        rc = ncq_model_submit(h->m, &cmd, t);
        if (rc < 0) {
            fprintf(stderr, "ncq-sim: request lba %" PRIu64 " sectors "
                    "%u rejected: %s\n", cmd.lba, cmd.sectors,
                    ncq_strerror(rc));
            exit(1);
        }
        h->inflight[tag] = *req;
        h->tag_busy[tag] = true;
        h->in_drive++;
        h->credit[cr] = h->credit[--h->ncredit];
        h->hq_head = (h->hq_head + 1) % h->hq_cap;
        h->hq_n--;
    }
}

/*
 * Every request done and the host has nothing more to send: a drive with
 * a media cache (drive-managed SMR) would go on cleaning it for as long
 * as it holds data; that is not the run's.
 */
static bool host_drive_only(const Host *h)
{
    if (!ncq_model_params(h->m)->mc_sectors || h->hq_n || h->in_drive ||
        h->end_flush_out || (h->o->end_flush && !h->end_flush_sent)) {
        return false;
    }
    return h->reqs ? h->ri == h->nreq
                   : workload_next_issue(&h->w) == INT64_MAX;
}

void run(const Opts *o, int depth, const NcqReq *reqs, long nreq,
         Result *r)
{
    Host h;
    int64_t t, last_t = -1;

    host_init(&h, o, depth, reqs, nreq, r);
    for (;;) {
        t = host_next_time(&h, last_t);
        if (host_drive_only(&h)) {
            break;
        }
        if (t == INT64_MAX) {
            if (h.hq_n == 0 && h.in_drive == 0 && !h.end_flush_out) {
                break;
            }
            die("internal: host requests stuck%s", "");
        }
        last_t = t;
        host_complete(&h, t);
        host_arrivals(&h, t);
        host_dispatch(&h, t);
        host_end_flush_send(&h, t);
        host_end_flush_due(&h, t);
    }
    host_free(&h);
}
