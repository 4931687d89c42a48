/*
 * ncq-sim: the closed-loop workload.
 *
 * Client groups, each client with at most one request out: it issues the
 * next one a think time after the last completes.  Every random choice
 * (start positions, sizes, reads or writes, offsets) is drawn from the
 * model library's generator, seeded from --seed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include "ncq-sim.h"

/* distinct from the model's own sequence for the same seed */
#define WORKLOAD_SEED_MIX 0x5deece66dULL

static uint64_t draw_below(Workload *w, uint64_t n)
{
    return n ? ncq_rng_next(&w->rng) % n : 0;
}

/* The groups' ranges in sectors of a drive of @capacity. */
static void workload_groups(Workload *w, uint64_t capacity)
{
    int g;

    for (g = 0; g < w->o->ngroups; g++) {
        Group *gr = &w->groups[g];

        *gr = w->o->group[g];
        gr->lo = opts_sector(gr->lo_s, capacity, "range");
        gr->hi = opts_sector(gr->hi_s, capacity, "range");
        if (gr->hi > capacity) {
            gr->hi = capacity;
        }
        if (gr->hi <= gr->lo) {
            die("empty LBA range in a client group%s", "");
        }
        w->nclients += gr->clients;
    }
}

/* Each client starts at an aligned random position of its group. */
static void workload_clients(Workload *w)
{
    const Opts *o = w->o;
    int g, i, k;

    for (g = 0, i = 0; g < o->ngroups; g++) {
        const Group *gr = &w->groups[g];

        w->gfirst[g] = i;
        for (k = 0; k < gr->clients; k++, i++) {
            w->cgroup[i] = g;
            w->next_issue[i] = 0;
            w->seqpos[i] = gr->lo + draw_below(w, gr->hi - gr->lo);
            w->seqpos[i] -= w->seqpos[i] % o->align;
            if (w->seqpos[i] < gr->lo) {
                w->seqpos[i] += o->align;
            }
        }
    }
}

/*
 * The groups are checked against the drive even for a replay (@replay),
 * which has no clients.
 */
void workload_init(Workload *w, const Opts *o, uint64_t capacity,
                   bool replay)
{
    memset(w, 0, sizeof(*w));
    w->o = o;
    w->rng = o->seed ^ WORKLOAD_SEED_MIX;
    workload_groups(w, capacity);
    if (replay) {
        w->nclients = 0;
    }
    w->next_issue = calloc(w->nclients + 1, sizeof(*w->next_issue));
    w->seqpos = calloc(w->nclients + 1, sizeof(*w->seqpos));
    w->cgroup = calloc(w->nclients + 1, sizeof(*w->cgroup));
    if (!w->next_issue || !w->seqpos || !w->cgroup) {
        die("out of memory%s", "");
    }
    if (!replay) {
        workload_clients(w);
    }
}

/*
 * --zoned: client i owns the i-th sequential zone and writes it from its
 * write pointer (a fresh drive's: the zone's start; with --zone-state,
 * where the file left it; a full zone is reset first).
 */
void workload_zones(Workload *w, const NcqModel *m)
{
    const NcqParams *p = ncq_model_params(m);
    uint64_t nz = p->zone_sectors ? p->capacity / p->zone_sectors : 0;
    NcqZoneInfo zi;
    int i;

    if (!nz) {
        die("--zoned needs a host-managed model (one with [zones]); "
            "model %s has none", p->name);
    }
    if ((uint64_t)w->nclients > nz - p->zone_conv) {
        die("--zoned: more clients than sequential zones (%s)", p->name);
    }
    w->zone_sectors = p->zone_sectors;
    w->zone_first = (uint64_t)p->zone_conv * p->zone_sectors;
    for (i = 0; i < w->nclients; i++) {
        w->seqpos[i] = w->zone_first + (uint64_t)i * w->zone_sectors;
        if (ncq_model_zone_info(m, p->zone_conv + i, &zi) == 0 &&
            zi.wp != UINT64_MAX) {
            w->seqpos[i] = zi.wp;
        }
    }
}

/* @client's next command of --zoned: a write at its pointer, or RESET. */
static void workload_zoned(Workload *w, int client, HostReq *h)
{
    uint64_t start = w->zone_first + (uint64_t)client * w->zone_sectors;
    uint64_t end = start + w->zone_sectors;

    h->r.op = NCQ_OP_WRITE;
    if (w->seqpos[client] >= end) {
        h->r.op = NCQ_OP_OTHER;
        h->r.zone_action = NCQ_ZONE_RESET;
        h->r.lba = start;
        h->r.sectors = 0;
        w->seqpos[client] = start;
        return;
    }
    h->r.lba = w->seqpos[client];
    if (h->r.sectors > end - h->r.lba) {
        h->r.sectors = end - h->r.lba;
    }
    w->seqpos[client] += h->r.sectors;
}

void workload_free(Workload *w)
{
    free(w->next_issue);
    free(w->seqpos);
    free(w->cgroup);
}

/* When the next client issues, INT64_MAX if none will. */
int64_t workload_next_issue(const Workload *w)
{
    const Opts *o = w->o;
    bool more = o->count ? w->issued < o->count : true;
    int64_t ti = INT64_MAX;
    int i;

    for (i = 0; i < w->nclients && more; i++) {
        if (w->next_issue[i] >= 0 && w->next_issue[i] < ti) {
            ti = w->next_issue[i];
        }
    }
    if (o->duration_ns && ti >= o->duration_ns) {
        ti = INT64_MAX;
    }
    return ti;
}

/* The sector of a request of @sz sectors of @client in group @gr. */
static uint64_t workload_lba(Workload *w, int client, const Group *gr,
                             uint32_t sz)
{
    const Opts *o = w->o;
    bool gseq = gr->pattern >= 0 ? gr->pattern > 0 : o->seq;
    bool gshared = gr->pattern >= 0 ? gr->pattern == 2 : o->shared;
    uint64_t lba;

    if (gseq) {
        /* stream: the group's clients share its first cursor */
        int ci = gshared ? w->gfirst[w->cgroup[client]] : client;

        if (w->seqpos[ci] + sz > gr->hi) {
            w->seqpos[ci] = gr->lo;
        }
        lba = w->seqpos[ci];
        w->seqpos[ci] += sz;
    } else {
        uint64_t span = (gr->hi - gr->lo - sz) / o->align + 1;

        lba = gr->lo + draw_below(w, span) * o->align;
        if (lba + sz > gr->hi) {
            lba = gr->hi - sz;
        }
    }
    return lba;
}

/* @client's request at @t into @h, if it is due and the run goes on. */
bool workload_issue(Workload *w, int client, int64_t t, HostReq *h)
{
    const Opts *o = w->o;
    const Group *gr = &w->groups[w->cgroup[client]];
    uint64_t limit;
    uint32_t sz;

    if (w->next_issue[client] != t || (o->count && w->issued >= o->count) ||
        (o->duration_ns && t >= o->duration_ns)) {
        return false;
    }
    sz = o->sizes[draw_below(w, o->nsizes)];
    if (gr->size) {
        sz = gr->size;
    }
    limit = gr->has_read ? gr->read_limit : o->read_limit;
    if (sz > gr->hi - gr->lo) {
        sz = gr->hi - gr->lo;
    }
    memset(h, 0, sizeof(*h));
    h->client = client;
    h->issue = t;
    h->r.t = t;
    h->r.op = (limit == READ_ALL || (ncq_rng_next(&w->rng) >> 11) < limit) ?
              NCQ_OP_READ : NCQ_OP_WRITE;
    h->r.fua = false;
    h->r.tag = -1;
    h->r.prio = gr->prio;
    h->r.sectors = sz;
    if (w->zone_sectors) {
        workload_zoned(w, client, h);
    } else {
        h->r.lba = workload_lba(w, client, gr, sz);
    }
    w->next_issue[client] = -1;
    w->issued++;
    return true;
}

/* @client's request completed at @complete_ns. */
void workload_done(Workload *w, int client, int64_t complete_ns)
{
    w->next_issue[client] = complete_ns + w->o->think_ns;
}
