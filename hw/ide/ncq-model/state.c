/*
 * ncq-model: the model's state as a stream of named sections, for
 * snapshots and migration
 *
 * The stream is described field by field, so that it does not depend on
 * the in-memory layout of NcqModel, on the compiler or on the host's byte
 * order, and a stream saved by one build loads in every later one.  The
 * field list is written once, as the ncq_vis_*() functions below: one
 * walk over the state serves to size, save, load, fingerprint the
 * parameters and hash the format itself (NcqVisMode).  docs/model-state.md
 * gives the same list as a table.
 *
 * v10, which this build writes, is made of named sections (sections.c
 * has the framing): ncq_state_sections[] below lists them, v9's parts
 * one section each, walked as v9's, the identity section adding the
 * parameter rows checked by name (NCQ_FP_NAMED) and "named settings"
 * their settings.  New state is a new section at the end of that list,
 * with a needed() that leaves it out at its default; a new parameter is
 * a row with fp NCQ_FP_NAMED.  No version number changes any more.
 *
 * v1..v9, which this build still loads, were linear.  Their framing
 * (all integers big-endian, two's complement when signed):
 *
 *   offset  bytes  field
 *   0       8      magic "NCQSTATE"
 *   8       4      version (NCQ_STATE_VERSION)
 *   12      8      format hash: FNV-1a of the field list of that version
 *   20      4      body length B
 *   24      B      body: the fields below, in this order
 *   24+B    8      checksum: FNV-1a of bytes 0 .. 24+B-1
 *
 * Body, version 1 (u64/i64: 8 bytes, u32/i32/enum: 4, bool: 1, str: u32
 * length and that many bytes; "n x" is a u32 count, then n entries):
 *
 *   identity   model: str, params: u64 (fingerprint of the parameters)
 *   clock      now, rng, phase
 *   settings   policy, aging_weight_milli, starvation_timeout_ns,
 *              prio_timeout_ns, honour_prio, clustering_sectors,
 *              write_cache, zero_latency
 *   queue      seq, done_seq, emit_seq, access_seq,
 *              33 x slot (state; unless free: command, seq, done_seq,
 *              emit_seq, completion record, fault_delay_ns, fault_hang;
 *              if queued: rd_lo, rd_hi),
 *              n x qorder (slot index, firmware queue order)
 *   mechanism  mech, mech_until, cur_cyl, cur_head, last_lba_end,
 *              bus_free, plan_cutoff
 *   read cache lru_clock, n x seg (start, end, lru, valid), pf_armed,
 *              pf_seg, pf_lba, pf_n, pf_first, pf_consumed, pf_min_end,
 *              pf_min_cyl, pf_min_head, pf_end_cyl, pf_end_head,
 *              pf_min_n, pf_end_n, pf_cutoff, n x chg (lo, hi)
 *   write cache n x dirty (lba, n), destage (lba, n); v2: in (lba, n, t0)
 *   ssd        ctrl_free, n x die_free, n x ch_free, rr, open_bytes,
 *              last_program_end, n x chunk (free_ns, bytes)
 *   stats      the fields of NcqStats, histograms as counted arrays
 *   faults     n x rule (kind, lba, sectors, mode, every, ops, delay_ns,
 *              matched, hits)
 *   v3 (Command Duration Limits, cdl.c): a command's cdl index, a
 *              completion's cdl and cdl_outcome, a slot's cdl_desc,
 *              cdl_inactive_seen, cdl_total_seen; then the part cdl:
 *              enabled, guideline, 14 x descriptor (total_policy,
 *              active_policy, inactive_policy, active_us, inactive_us,
 *              total_us), read ones first; the parameters' cdl in the
 *              fingerprint
 *   v4 (issue 17, the corrupt fault): a completion's corrupt_mask and
 *              corrupt_seed; a fault rule's healed and seed
 *   v5 (issue 28, host-managed zones, zone.c): a command's zone_action
 *              and zone_all; then the part zones: n x changed zone
 *              (zone, cond, wp: the zones whose condition or write
 *              pointer differ from a fresh drive's), n x open (zone, in
 *              the order they were opened); the zone parameters in the
 *              fingerprint
 *   v6 (issue 26, power modes): the part mechanism's spindle_stopped
 *              (and its mech SPINUP); spinup_ns and spindown_ns in the
 *              fingerprint
 *   v7 (issue 26, SCT error recovery control): the part mechanism's
 *              recover_until (when the firmware's retries of a bad
 *              sector end); the parameters' recovery_ns in the
 *              fingerprint (the ERC limits are the device's state, not
 *              the model's)
 *   v8 (issue 28, drive-managed SMR, mcache.c): the part media cache
 *              (below); the cache's parameters in the fingerprint
 *   v9 (issue 27): the parameters' fingerprint is the parameter table's
 *              rows (include/hw/ide/ncq-params.h, their fp column) in
 *              the table's order; sata_gen, ata_major, ata_minor and
 *              buffer_sectors join it; the body is v8's
 *
 * Not in the stream, because a load recomputes them: the parameters and
 * what the layout precomputes from them (a load needs a model made from
 * the same parameters, and checks the fingerprint); each busy command's
 * position on the platters and the read-ahead's start (layout of their
 * LBA); the per-state slot masks, the outstanding count and the dirty
 * sector count (functions of the slots and extents in the stream).
 *
 * The `if (v->version >= N)` below are v1..v9's history: never add one.
 * The names given to the visit functions are the
 * format's, not the C fields': keep them when a field moves (the
 * parameters' fingerprint names its rows by their NcqParams fields, so a
 * renamed field changes the format hash of every version: test-state).
 * tests/unit/test-state.c checks each version's format hash and v10's
 * section shapes against committed values, and that the golden streams
 * of every version still load.
 * v2 (issue 13): the write taken last (its data arrives while the drive
 * positions), and per-zone skews and spares in the parameters' fingerprint.
 * v6 (issue 26): the spindle at rest or spinning up, and the spin times in
 * the parameters' fingerprint.
 * v8 (issue 28): drive-managed SMR's media cache (its extents, where its
 * log goes on, the idle cleaning in progress), the cleaning as a
 * mechanism's work, and the cache's parameters in the fingerprint.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"
#include "sections.h"

#define NCQ_STATE_MAGIC     "NCQSTATE"
#define NCQ_STATE_OLD_MAGIC "NCQMSTAT"  /* pre-v1: a memcpy of NcqModel */
/*
 * v1..v9 were linear: each version's body was the one before with fields
 * added under `if (v->version >= N)`.  v10 is made of named sections
 * (sections.c) and is the last version number: new state is a new
 * section, a new parameter a row with fp NCQ_FP_NAMED.  The base
 * sections hold v9's fields, so their walk runs as v9's.
 */
#define NCQ_STATE_LINEAR_LAST 9
#define NCQ_STATE_VERSION   10
#define NCQ_STATE_HEAD      24
#define NCQ_STATE_TAIL      8

/* One zone of the parameters (ncq_vis_params). */
static void ncq_vis_zone(NcqVis *v, NcqZone *z)
{
    ncq_vis_u32(v, "cyl_start", &z->cyl_start, UINT32_MAX);
    ncq_vis_u32(v, "cyl_count", &z->cyl_count, UINT32_MAX);
    ncq_vis_u32(v, "spt", &z->spt, UINT32_MAX);
    if (v->version < 2) {
        return;             /* v1 had one skew and spare count per drive */
    }
    ncq_vis_u32(v, "track_skew_ppb", &z->track_skew_ppb, UINT32_MAX);
    ncq_vis_u32(v, "cyl_skew_ppb", &z->cyl_skew_ppb, UINT32_MAX);
    ncq_vis_u32(v, "first_ppb", &z->first_ppb, UINT32_MAX);
    ncq_vis_u32(v, "front", &z->front, UINT32_MAX);
    ncq_vis_u32(v, "spares", &z->spares, UINT32_MAX);
    ncq_vis_u32(v, "spare_tracks", &z->spare_tracks, UINT32_MAX);
    ncq_vis_bool(v, "own_skew", &z->own_skew);
}

/* The zones of the parameters, their count first. */
static void ncq_vis_params_zones(NcqVis *v, NcqParams *p)
{
    uint32_t i, n = ncq_vis_count(v, "zones", p->nzones, NCQ_MAX_ZONES);

    for (i = 0; i < n; i++) {
        ncq_vis_zone(v, &p->zones[i]);
    }
}

static void ncq_vis_params_points(NcqVis *v, NcqParams *p)
{
    uint32_t i, n = ncq_vis_count(v, "seek_points", p->seek_npoints,
                                  NCQ_MAX_SEEK_POINTS);

    for (i = 0; i < n; i++) {
        ncq_vis_u32(v, "dist", &p->seek_points[i].dist, UINT32_MAX);
        ncq_vis_i64(v, "ns", &p->seek_points[i].ns);
    }
}

/* One row of the parameter table, named by its C field. */
static void ncq_vis_param_row(NcqVis *v, NcqParams *p, const NcqParamRow *k)
{
    char *base = (char *)p + k->off;

    switch (k->type) {
    case NCQ_KT_STR:
        ncq_vis_str(v, k->field, base, k->len);
        break;
    case NCQ_KT_ZONE:
        ncq_vis_params_zones(v, p);
        break;
    case NCQ_KT_POINT:
        ncq_vis_params_points(v, p);
        break;
    case NCQ_KT_BOOL:
        ncq_vis_bool(v, k->field, (bool *)base);
        break;
    case NCQ_KT_MS:
    case NCQ_KT_US:
        ncq_vis_i64(v, k->field, (int64_t *)base);
        break;
    default:
        if (k->len == 8) {
            ncq_vis_u64(v, k->field, (uint64_t *)base);
        } else {
            /* uint32_t, and the enums a u32 as NCQ_VIS_ENUM writes them */
            ncq_vis_u32(v, k->field, (uint32_t *)base, UINT32_MAX);
        }
        break;
    }
}

/*
 * The parameters, for their fingerprint only (NCQ_VIS_HASH and the
 * format hash): a stream holds no parameters, a load needs a model made
 * from the same ones.  The rows of the parameter table that the version
 * fingerprints, in the table's order (ncq-params.h).
 */
static void ncq_vis_params(NcqVis *v, NcqParams *p)
{
    size_t n, i;
    const NcqParamRow *rows = ncq_param_rows(&n);

    for (i = 0; i < n; i++) {
        if (rows[i].fp && rows[i].fp <= v->version) {
            ncq_vis_param_row(v, p, &rows[i]);
        }
    }
}

/* The parameters' fingerprint as a stream of @version records it. */
static uint64_t ncq_params_fingerprint(const NcqParams *p, uint32_t version)
{
    NcqVis v = { .mode = NCQ_VIS_HASH, .version = version,
                 .hash = NCQ_FNV_INIT, .index = -1 };

    /* HASH mode only reads: the cast does not let anything write */
    ncq_vis_params(&v, (NcqParams *)p);
    return v.hash;
}

static void ncq_vis_identity(NcqVis *v, NcqModel *m, char *name,
                             size_t namecap, uint64_t *fingerprint)
{
    ncq_vis_part(v, "identity", -1);
    ncq_vis_str(v, "model", name, namecap);
    ncq_vis_u64(v, "params", fingerprint);
    if (v->mode == NCQ_VIS_SCHEMA) {
        /* how the fingerprint is made is part of the format */
        ncq_vis_params(v, &m->p);
    }
}

static void ncq_vis_clock(NcqVis *v, NcqModel *m)
{
    ncq_vis_part(v, "clock", -1);
    ncq_vis_i64(v, "now", &m->now);
    ncq_vis_u64(v, "rng", &m->rng);
    ncq_vis_u64(v, "phase", &m->layout.phase);
}

/*
 * The settings, one visit per NCQ_SETTINGS line in its order, named by
 * its field and bounded by its row's maximum: the bytes and format hash
 * of v1..v9, which listed the same eight by hand.  A setting is saved
 * from its row's fingerprint version on (a new one's row has the next
 * version, as a new parameter's); an older stream keeps the model's.
 */
static void ncq_vis_settings(NcqVis *v, NcqSettings *s)
{
    int i;

    ncq_vis_part(v, "settings", -1);
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t x = ncq_setting_get(i, s);
        uint32_t u = (uint32_t)x;
        int64_t t = (int64_t)x;
        bool b = x != 0;

        if (v->version < d->since) {
            continue;
        }
        switch (d->size) {
        case 1:
            ncq_vis_bool(v, d->field, &b);
            x = b;
            break;
        case 4:
            ncq_vis_u32(v, d->field, &u, (uint32_t)d->max);
            x = u;
            break;
        default:
            ncq_vis_i64(v, d->field, &t);
            x = (uint64_t)t;
            break;
        }
        ncq_setting_put(i, s, x);
    }
}

static void ncq_vis_cmd(NcqVis *v, NcqCmd *c)
{
    ncq_vis_u32(v, "id", &c->id, NCQ_ID_NONQUEUED);
    NCQ_VIS_ENUM(v, "op", c->op, NCQ_OP_OTHER);
    ncq_vis_u64(v, "lba", &c->lba);
    ncq_vis_u32(v, "sectors", &c->sectors, NCQ_MAX_SECTORS);
    ncq_vis_bool(v, "fua", &c->fua);
    ncq_vis_bool(v, "prio", &c->prio);
    ncq_vis_bool(v, "queued", &c->queued);
    if (v->version >= 3) {
        ncq_vis_u8(v, "cdl", &c->cdl, 7);
    }
    if (v->version >= 5) {
        ncq_vis_u8(v, "zone_action", &c->zone_action, NCQ_ZONE_REPORT);
        ncq_vis_bool(v, "zone_all", &c->zone_all);
    }
}

static void ncq_vis_completion(NcqVis *v, NcqCompletion *c)
{
    ncq_vis_u32(v, "c.id", &c->id, NCQ_ID_NONQUEUED);
    NCQ_VIS_ENUM(v, "c.op", c->op, NCQ_OP_OTHER);
    ncq_vis_u64(v, "c.lba", &c->lba);
    ncq_vis_u32(v, "c.sectors", &c->sectors, NCQ_MAX_SECTORS);
    ncq_vis_bool(v, "c.fua", &c->fua);
    ncq_vis_bool(v, "c.prio", &c->prio);
    ncq_vis_bool(v, "c.queued", &c->queued);
    ncq_vis_bool(v, "c.cache_hit", &c->cache_hit);
    NCQ_VIS_ENUM(v, "c.reason", c->reason, NCQ_REASON__MAX - 1);
    ncq_vis_i64(v, "c.arrival_ns", &c->arrival_ns);
    ncq_vis_i64(v, "c.dispatch_ns", &c->dispatch_ns);
    ncq_vis_i64(v, "c.complete_ns", &c->complete_ns);
    ncq_vis_i64(v, "c.seek_ns", &c->seek_ns);
    ncq_vis_i64(v, "c.rotate_ns", &c->rotate_ns);
    ncq_vis_i64(v, "c.transfer_ns", &c->transfer_ns);
    ncq_vis_i64(v, "c.overhead_ns", &c->overhead_ns);
    ncq_vis_i64(v, "c.media_start_ns", &c->media_start_ns);
    ncq_vis_i64(v, "c.media_end_ns", &c->media_end_ns);
    ncq_vis_u64(v, "c.access_id", &c->access_id);
    ncq_vis_u32(v, "c.queue_len_at_arrival", &c->queue_len_at_arrival,
                NCQ_SLOTS);
    ncq_vis_u32(v, "c.delay_count", &c->delay_count, UINT32_MAX);
    ncq_vis_i32(v, "c.fault", &c->fault, NCQ_FAULT_NONE, NCQ_FAULT__MAX - 1);
    ncq_vis_u64(v, "c.fault_lba", &c->fault_lba);
    if (v->version >= 3) {
        ncq_vis_u8(v, "c.cdl", &c->cdl, 7);
        ncq_vis_u8(v, "c.cdl_outcome", &c->cdl_outcome,
                   NCQ_CDL_OUTCOME__MAX - 1);
    }
    if (v->version >= 4) {
        ncq_vis_u64(v, "c.corrupt_mask", &c->corrupt_mask);
        ncq_vis_u64(v, "c.corrupt_seed", &c->corrupt_seed);
    }
}

static void ncq_vis_slot(NcqVis *v, NcqModel *m, int i)
{
    NcqSlot *s = &m->q.slot[i];

    ncq_vis_part(v, "slot", i);
    NCQ_VIS_ENUM(v, "state", s->state, NCQ_SLOT_DONE);
    if (!ncq_vis_when(v, "busy", s->state != NCQ_SLOT_FREE)) {
        return;
    }
    ncq_vis_cmd(v, &s->cmd);
    ncq_vis_u64(v, "seq", &s->seq);
    ncq_vis_u64(v, "done_seq", &s->done_seq);
    ncq_vis_u64(v, "emit_seq", &s->emit_seq);
    ncq_vis_completion(v, &s->c);
    ncq_vis_i64(v, "fault_delay_ns", &s->fault_delay_ns);
    ncq_vis_bool(v, "fault_hang", &s->fault_hang);
    if (v->version >= 3) {
        ncq_vis_u8(v, "cdl_desc", &s->cdl_desc, NCQ_CDL_DESCS);
        ncq_vis_bool(v, "cdl_inactive_seen", &s->cdl_inactive_seen);
        ncq_vis_bool(v, "cdl_total_seen", &s->cdl_total_seen);
    }
    /* only a queued command's buffered-read range is kept up to date */
    if (ncq_vis_when(v, "queued", s->state == NCQ_SLOT_QUEUED)) {
        ncq_vis_u64(v, "rd_lo", &m->q.rd_lo[i]);
        ncq_vis_u64(v, "rd_hi", &m->q.rd_hi[i]);
    }
}

static void ncq_vis_queue(NcqVis *v, NcqModel *m)
{
    uint32_t i, n;

    ncq_vis_part(v, "queue", -1);
    ncq_vis_u64(v, "seq", &m->q.seq);
    ncq_vis_u64(v, "done_seq", &m->q.done_seq);
    ncq_vis_u64(v, "emit_seq", &m->q.emit_seq);
    ncq_vis_u64(v, "access_seq", &m->sched.access_seq);
    ncq_vis_fixed(v, "slots", NCQ_SLOTS);
    for (i = 0; i < NCQ_SLOTS && !v->failed; i++) {
        ncq_vis_slot(v, m, i);
        if (v->mode == NCQ_VIS_SCHEMA) {
            break;
        }
    }
    ncq_vis_part(v, "queue", -1);
    n = ncq_vis_count(v, "qorder", m->q.n, NCQ_SLOTS);
    for (i = 0; i < n; i++) {
        ncq_vis_i32(v, "slot", &m->q.order[i], 0, NCQ_SLOTS - 1);
    }
    if (v->mode == NCQ_VIS_LOAD) {
        m->q.n = n;
    }
}

static void ncq_vis_mech(NcqVis *v, NcqModel *m)
{
    ncq_vis_part(v, "mechanism", -1);
    if (v->version >= 8) {
        NCQ_VIS_ENUM(v, "mech", m->mech.op, NCQ_MECH_CLEAN);
    } else if (v->version >= 6) {
        NCQ_VIS_ENUM(v, "mech", m->mech.op, NCQ_MECH_SPINUP);
    } else {
        NCQ_VIS_ENUM(v, "mech", m->mech.op, NCQ_MECH_DESTAGE);
    }
    ncq_vis_i64(v, "mech_until", &m->mech.until);
    ncq_vis_u32(v, "cur_cyl", &m->mech.cyl, UINT32_MAX);
    ncq_vis_u32(v, "cur_head", &m->mech.head, UINT32_MAX);
    ncq_vis_u64(v, "last_lba_end", &m->mech.lba_end);
    ncq_vis_i64(v, "bus_free", &m->mech.bus_free);
    ncq_vis_i64(v, "plan_cutoff", &m->sched.plan_cutoff);
    if (v->version >= 6) {
        ncq_vis_bool(v, "spindle_stopped", &m->mech.stopped);
    } else if (v->mode == NCQ_VIS_LOAD) {
        m->mech.stopped = false;
    }
    if (v->version >= 7) {
        ncq_vis_i64(v, "recover_until", &m->recover_until);
    } else if (v->mode == NCQ_VIS_LOAD) {
        m->recover_until = 0;
    }
}

static void ncq_vis_readahead(NcqVis *v, NcqModel *m)
{
    uint32_t i, n, nchg = m->cache.nchg;

    ncq_vis_part(v, "read cache", -1);
    ncq_vis_u64(v, "lru_clock", &m->cache.lru_clock);
    n = ncq_vis_count(v, "segs", m->p.cache_segments < NCQ_MAX_SEGS ?
                      m->p.cache_segments : NCQ_MAX_SEGS, NCQ_MAX_SEGS);
    for (i = 0; i < n; i++) {
        ncq_vis_u64(v, "start", &m->cache.seg[i].start);
        ncq_vis_u64(v, "end", &m->cache.seg[i].end);
        ncq_vis_u64(v, "lru", &m->cache.seg[i].lru);
        ncq_vis_bool(v, "valid", &m->cache.seg[i].valid);
    }
    ncq_vis_bool(v, "pf_armed", &m->ra.armed);
    ncq_vis_i32(v, "pf_seg", &m->ra.seg, -1, NCQ_MAX_SEGS - 1);
    ncq_vis_u64(v, "pf_lba", &m->ra.lba);
    ncq_vis_u32(v, "pf_n", &m->ra.n, UINT32_MAX);
    ncq_vis_i64(v, "pf_first", &m->ra.first);
    ncq_vis_u64(v, "pf_consumed", &m->ra.consumed);
    ncq_vis_i64(v, "pf_min_end", &m->ra.min_end);
    ncq_vis_u32(v, "pf_min_cyl", &m->ra.min_cyl, UINT32_MAX);
    ncq_vis_u32(v, "pf_min_head", &m->ra.min_head, UINT32_MAX);
    ncq_vis_u32(v, "pf_end_cyl", &m->ra.end_cyl, UINT32_MAX);
    ncq_vis_u32(v, "pf_end_head", &m->ra.end_head, UINT32_MAX);
    ncq_vis_u32(v, "pf_min_n", &m->ra.min_n, UINT32_MAX);
    ncq_vis_u32(v, "pf_end_n", &m->ra.end_n, UINT32_MAX);
    ncq_vis_i64(v, "pf_cutoff", &m->sched.pf_cutoff);
    nchg = ncq_vis_count(v, "chg", nchg, NCQ_CHG_RANGES);
    for (i = 0; i < nchg; i++) {
        ncq_vis_u64(v, "lo", &m->cache.chg_lo[i]);
        ncq_vis_u64(v, "hi", &m->cache.chg_hi[i]);
    }
    if (v->mode == NCQ_VIS_LOAD) {
        m->cache.nchg = nchg;
    }
}

static void ncq_vis_wcache(NcqVis *v, NcqModel *m)
{
    uint32_t i, n;

    ncq_vis_part(v, "write cache", -1);
    n = ncq_vis_count(v, "dirty", m->wc.ndirty, NCQ_MAX_DIRTY);
    for (i = 0; i < n; i++) {
        ncq_vis_u64(v, "lba", &m->wc.dirty[i].lba);
        ncq_vis_u32(v, "n", &m->wc.dirty[i].n, UINT32_MAX);
    }
    if (v->mode == NCQ_VIS_LOAD) {
        m->wc.ndirty = n;
    }
    ncq_vis_u64(v, "destage.lba", &m->wc.destage.lba);
    ncq_vis_u32(v, "destage.n", &m->wc.destage.n, UINT32_MAX);
    if (v->version >= 2) {
        /* the write taken last, whose data may still be arriving */
        ncq_vis_u64(v, "in.lba", &m->wc.in.lba);
        ncq_vis_u32(v, "in.n", &m->wc.in.n, UINT32_MAX);
        ncq_vis_i64(v, "in.t0", &m->wc.in_t0);
    }
}

static void ncq_vis_ssd(NcqVis *v, NcqModel *m)
{
    NcqSsd *d = &m->ssd;
    uint32_t i, n;

    ncq_vis_part(v, "ssd", -1);
    ncq_vis_i64(v, "ctrl_free", &d->ctrl_free);
    n = ncq_vis_count(v, "die_free", m->p.channels * m->p.dies_per_channel,
                      NCQ_SSD_MAX_CH * NCQ_SSD_MAX_DIE);
    for (i = 0; i < n; i++) {
        ncq_vis_i64(v, "die_free", &d->die_free[i]);
    }
    n = ncq_vis_count(v, "ch_free", m->p.channels, NCQ_SSD_MAX_CH);
    for (i = 0; i < n; i++) {
        ncq_vis_i64(v, "ch_free", &d->ch_free[i]);
    }
    ncq_vis_u32(v, "rr", &d->rr, UINT32_MAX);
    ncq_vis_u32(v, "open_bytes", &d->open_bytes, UINT32_MAX);
    ncq_vis_i64(v, "last_program_end", &d->last_program_end);
    n = ncq_vis_count(v, "chunks", d->nchunks, NCQ_SSD_CHUNKS);
    for (i = 0; i < n; i++) {
        ncq_vis_i64(v, "free_ns", &d->chunk[i].free_ns);
        ncq_vis_u32(v, "bytes", &d->chunk[i].bytes, UINT32_MAX);
    }
    if (v->mode == NCQ_VIS_LOAD) {
        d->nchunks = n;
    }
}

static void ncq_vis_stats(NcqVis *v, NcqStats *st)
{
    int i;

    ncq_vis_part(v, "stats", -1);
    ncq_vis_u64(v, "submitted", &st->submitted);
    ncq_vis_u64(v, "rejected", &st->rejected);
    ncq_vis_fixed(v, "completed", 4);
    for (i = 0; i < 4; i++) {
        ncq_vis_u64(v, "completed", &st->completed[i]);
    }
    ncq_vis_u64(v, "cache_hits", &st->cache_hits);
    ncq_vis_u64(v, "timeouts_forced", &st->timeouts_forced);
    ncq_vis_u64(v, "prio_forced", &st->prio_forced);
    ncq_vis_u64(v, "clustered", &st->clustered);
    ncq_vis_u64(v, "sectors_read", &st->sectors_read);
    ncq_vis_u64(v, "sectors_written", &st->sectors_written);
    ncq_vis_i64(v, "max_latency_ns", &st->max_latency_ns);
    ncq_vis_u32(v, "max_delay_count", &st->max_delay_count, UINT32_MAX);
    ncq_vis_u32(v, "max_queue_len", &st->max_queue_len, UINT32_MAX);
    ncq_vis_fixed(v, "lat_hist", NCQ_LAT_BUCKETS);
    for (i = 0; i < NCQ_LAT_BUCKETS; i++) {
        ncq_vis_u64(v, "lat_hist", &st->lat_hist[i]);
    }
    ncq_vis_fixed(v, "delay_hist", NCQ_DELAY_BUCKETS);
    for (i = 0; i < NCQ_DELAY_BUCKETS; i++) {
        ncq_vis_u64(v, "delay_hist", &st->delay_hist[i]);
    }
}

/* Loaded rules go through ncq_model_fault_add(), which checks them. */
static void ncq_vis_faults(NcqVis *v, NcqModel *m)
{
    uint32_t i, n;
    char why[128];

    ncq_vis_part(v, "faults", -1);
    n = ncq_vis_count(v, "rules", m->faults.n, NCQ_MAX_FAULTS);
    if (v->mode == NCQ_VIS_LOAD) {
        m->faults.n = 0;
    }
    for (i = 0; i < n && !v->failed; i++) {
        NcqFaultRule r = m->faults.rule[i];

        ncq_vis_part(v, "fault rule", i);
        NCQ_VIS_ENUM(v, "kind", r.kind, NCQ_FAULT__MAX - 1);
        ncq_vis_u64(v, "lba", &r.lba);
        ncq_vis_u64(v, "sectors", &r.sectors);
        NCQ_VIS_ENUM(v, "mode", r.mode, NCQ_FAULT_EVERY);
        ncq_vis_u32(v, "every", &r.every, UINT32_MAX);
        ncq_vis_u32(v, "ops", &r.ops, NCQ_FAULT_READS | NCQ_FAULT_WRITES);
        ncq_vis_i64(v, "delay_ns", &r.delay_ns);
        ncq_vis_u64(v, "matched", &r.matched);
        ncq_vis_u64(v, "hits", &r.hits);
        if (v->version >= 4) {
            ncq_vis_u64(v, "healed", &r.healed);
            ncq_vis_u64(v, "seed", &r.seed);
        }
        if (v->mode != NCQ_VIS_LOAD || v->failed) {
            continue;
        }
        if (ncq_model_fault_add(m, &r, why, sizeof(why)) < 0) {
            ncq_vis_fail(v, "%s", why);
            break;
        }
        m->faults.rule[i].matched = r.matched;
        m->faults.rule[i].hits = r.hits;
        m->faults.rule[i].healed = r.healed;
    }
}

/* The body, in stream order: the one list of what the state is. */
static void ncq_vis_cdl_desc(NcqVis *v, NcqCdlDesc *d)
{
    ncq_vis_u8(v, "total_policy", &d->total_policy, 15);
    ncq_vis_u8(v, "active_policy", &d->active_policy, 15);
    ncq_vis_u8(v, "inactive_policy", &d->inactive_policy, 15);
    ncq_vis_u32(v, "active_us", &d->active_us, NCQ_CDL_MAX_LIMIT_US);
    ncq_vis_u32(v, "inactive_us", &d->inactive_us, NCQ_CDL_MAX_LIMIT_US);
    ncq_vis_u32(v, "total_us", &d->total_us, NCQ_CDL_MAX_LIMIT_US);
}

static void ncq_vis_cdl(NcqVis *v, NcqModel *m)
{
    int i;

    if (v->version < 3) {
        return;
    }
    ncq_vis_part(v, "cdl", -1);
    ncq_vis_bool(v, "enabled", &m->cdl.enabled);
    ncq_vis_u8(v, "guideline", &m->cdl.guideline, NCQ_CDL_GUIDELINE_MAX);
    for (i = 0; i < NCQ_CDL_DESCS; i++) {
        ncq_vis_cdl_desc(v, &m->cdl.rd[i]);
    }
    for (i = 0; i < NCQ_CDL_DESCS; i++) {
        ncq_vis_cdl_desc(v, &m->cdl.wr[i]);
    }
}

/* Zone @z of the saved list: the next one at or after *@z that changed. */
static uint32_t ncq_vis_next_changed(const NcqModel *m, uint32_t z)
{
    const NcqZbc *b = &m->zbc;

    while (z < b->nz && b->cond[z] == ncq_zbc_fresh_cond(m, z) &&
           b->wp[z] == z * m->p.zone_sectors) {
        z++;
    }
    return z;
}

static void ncq_vis_wzones(NcqVis *v, NcqModel *m)
{
    NcqZbc *b = &m->zbc;
    uint32_t i, n, nchg = 0, z = 0;

    if (v->version < 5) {
        return;
    }
    ncq_vis_part(v, "zones", -1);
    if (v->mode != NCQ_VIS_LOAD && v->mode != NCQ_VIS_SCHEMA) {
        for (z = ncq_vis_next_changed(m, 0); z < b->nz;
             z = ncq_vis_next_changed(m, z + 1)) {
            nchg++;
        }
        z = 0;
    }
    n = ncq_vis_count(v, "changed", nchg, b->nz);
    for (i = 0; i < n && !v->failed; i++) {
        uint32_t idx = 0;
        uint8_t cond = 0;
        uint64_t wp = 0;

        if (v->mode != NCQ_VIS_LOAD && v->mode != NCQ_VIS_SCHEMA) {
            z = ncq_vis_next_changed(m, z);
            idx = z;
            cond = b->cond[z];
            wp = b->wp[z++];
        }
        ncq_vis_u32(v, "zone", &idx, b->nz ? b->nz - 1 : UINT32_MAX);
        ncq_vis_u8(v, "cond", &cond, 15);
        ncq_vis_u64(v, "wp", &wp);
        if (v->mode == NCQ_VIS_LOAD && !v->failed) {
            b->cond[idx] = cond;
            b->wp[idx] = wp;
        }
    }
    n = ncq_vis_count(v, "open", b->nopen, NCQ_ZONE_MAX_OPEN);
    for (i = 0; i < n; i++) {
        ncq_vis_u32(v, "zone", &b->open[i], UINT32_MAX);
    }
    if (v->mode == NCQ_VIS_LOAD) {
        b->nopen = n;
    }
}

/*
 * Drive-managed SMR's media cache (v8): its extents oldest first, where
 * its log goes on, the idle cleaning in progress, what cleaning did.  A
 * load keeps at most the model's map (a model without a cache: none).
 */
static void ncq_vis_mcache(NcqVis *v, NcqModel *m)
{
    NcqMediaCache *c = &m->mc;
    uint32_t i, n;

    if (v->version < 8) {
        return;
    }
    ncq_vis_part(v, "media cache", -1);
    n = ncq_vis_count(v, "extents", c->n, m->p.mc_map);
    for (i = 0; i < n && !v->failed; i++) {
        NcqMcEntry e = { 0 };

        if (v->mode != NCQ_VIS_LOAD && v->mode != NCQ_VIS_SCHEMA) {
            e = c->e[(c->head + i) % m->p.mc_map];
        }
        ncq_vis_u64(v, "lba", &e.lba);
        ncq_vis_u32(v, "n", &e.n, UINT32_MAX);
        ncq_vis_u32(v, "pos", &e.pos, UINT32_MAX);
        if (v->mode == NCQ_VIS_LOAD && !v->failed) {
            c->e[i] = e;
        }
    }
    if (v->mode == NCQ_VIS_LOAD) {
        c->head = 0;
        c->n = n;
    }
    ncq_vis_u32(v, "log_pos", &c->log_pos, UINT32_MAX);
    ncq_vis_bool(v, "clean_run", &c->clean_run);
    ncq_vis_i64(v, "clean_start", &c->clean_start);
    ncq_vis_u32(v, "clean_band", &c->clean_band, UINT32_MAX);
    ncq_vis_u64(v, "cleaned", &c->cleaned);
    ncq_vis_u64(v, "forced", &c->forced);
}

static void ncq_vis_body(NcqVis *v, NcqModel *m, char *name, size_t namecap,
                         uint64_t *fingerprint)
{
    ncq_vis_identity(v, m, name, namecap, fingerprint);
    if (v->mode == NCQ_VIS_LOAD &&
        (v->failed || strcmp(name, m->p.name) ||
         *fingerprint != ncq_params_fingerprint(&m->p, v->version))) {
        return;     /* the caller reports a stream for other parameters */
    }
    ncq_vis_clock(v, m);
    ncq_vis_settings(v, &m->s);
    ncq_vis_queue(v, m);
    ncq_vis_mech(v, m);
    ncq_vis_readahead(v, m);
    ncq_vis_wcache(v, m);
    ncq_vis_ssd(v, m);
    ncq_vis_stats(v, &m->st);
    ncq_vis_faults(v, m);
    ncq_vis_cdl(v, m);
    ncq_vis_wzones(v, m);
    ncq_vis_mcache(v, m);
}

/* The format hash of @version: the shape of its body. */
static uint64_t ncq_state_format_hash(uint32_t version)
{
    NcqModel *m = calloc(1, sizeof(*m));
    NcqVis v = { .mode = NCQ_VIS_SCHEMA, .version = version,
                 .hash = NCQ_FNV_INIT, .index = -1 };
    char name[1] = "";
    uint64_t fp = 0;

    if (!m) {
        return 0;
    }
    ncq_vis_body(&v, m, name, sizeof(name), &fp);
    free(m);
    return v.hash;
}

/* ---- v10: named sections (sections.c) ---- */

/* What the sections visit: the model, and the identity's two fields. */
typedef struct NcqStateObj {
    NcqModel *m;
    char name[sizeof(((NcqParams *)0)->name)];
    uint64_t fp;
} NcqStateObj;

/* The hash of row @k's value in @p: its fingerprint on its own. */
static uint64_t ncq_param_row_hash(const NcqParams *p, const NcqParamRow *k)
{
    NcqVis v = { .mode = NCQ_VIS_HASH, .version = NCQ_STATE_LINEAR_LAST,
                 .hash = NCQ_FNV_INIT, .index = -1 };

    /* HASH mode only reads */
    ncq_vis_param_row(&v, (NcqParams *)p, k);
    return v.hash;
}

/*
 * The rows checked by name (NCQ_FP_NAMED) whose value in @p is not the
 * default, marked in @differs (NCQ_PARAM_MAX_ROWS entries); how many.
 * A stream names only those, so a drive at the defaults loads the stream
 * of a build without the row, and a build without it loads its streams.
 */
static uint32_t ncq_named_params_differ(const NcqParams *p, bool *differs)
{
    size_t n, i;
    const NcqParamRow *rows = ncq_param_rows(&n);
    NcqParams *d = NULL;
    uint32_t count = 0;

    for (i = 0; i < n && i < NCQ_PARAM_MAX_ROWS; i++) {
        differs[i] = false;
        if (rows[i].fp != NCQ_FP_NAMED) {
            continue;
        }
        if (!d) {
            d = calloc(1, sizeof(*d));
            if (d) {
                ncq_params_defaults(d);
            }
        }
        /* without memory for the defaults, name the row: still exact */
        differs[i] = !d || ncq_param_row_hash(p, &rows[i]) !=
                           ncq_param_row_hash(d, &rows[i]);
        count += differs[i];
    }
    free(d);
    return count;
}

/* A named row of a load: known, and its value this drive's. */
static void ncq_named_param_check(NcqVis *v, const NcqParams *p,
                                  const char *field, uint64_t hash,
                                  bool *listed)
{
    size_t n, i;
    const NcqParamRow *rows = ncq_param_rows(&n);

    for (i = 0; i < n && i < NCQ_PARAM_MAX_ROWS; i++) {
        if (rows[i].fp == NCQ_FP_NAMED && !strcmp(rows[i].field, field)) {
            break;
        }
    }
    if (i == n || i == NCQ_PARAM_MAX_ROWS) {
        ncq_vis_refuse(v, "model state is for a drive with parameter '%s', "
                       "which this build does not know; load it with a "
                       "build of ncq-disk that knows it", field);
    } else if (listed[i]) {
        ncq_vis_fail(v, "parameter %s named twice", field);
    } else if (hash != ncq_param_row_hash(p, &rows[i])) {
        ncq_vis_refuse(v, "model state is for other parameters of model "
                       "'%s' (its %s differs); give both ends the same "
                       "model-file", p->name, field);
    }
    listed[i] = true;
}

/*
 * The parameters checked by name: the count of those not at their
 * default, then each one's field and its value's hash.  A load refuses
 * a row this build does not know, another value, or a row this drive
 * has away from its default that the stream does not name.
 */
static void ncq_vis_named_params(NcqVis *v, NcqModel *m)
{
    bool differs[NCQ_PARAM_MAX_ROWS], listed[NCQ_PARAM_MAX_ROWS] = { 0 };
    size_t nrows, r = 0, i;
    const NcqParamRow *rows = ncq_param_rows(&nrows);
    uint32_t n = 0, k;
    bool loading = v->mode == NCQ_VIS_LOAD;

    if (!loading && v->mode != NCQ_VIS_SCHEMA) {
        n = ncq_named_params_differ(&m->p, differs);
    }
    n = ncq_vis_count(v, "named_params", n, NCQ_PARAM_MAX_ROWS);
    for (k = 0; k < n && !v->failed; k++) {
        char field[64] = "";
        uint64_t hash = 0;

        if (!loading && v->mode != NCQ_VIS_SCHEMA) {
            while (!differs[r]) {
                r++;
            }
            snprintf(field, sizeof(field), "%s", rows[r].field);
            hash = ncq_param_row_hash(&m->p, &rows[r++]);
        }
        ncq_vis_str(v, "param", field, sizeof(field));
        ncq_vis_u64(v, "value", &hash);
        for (i = 0; loading && field[i]; i++) {
            field[i] = field[i] < ' ' || field[i] > '~' ? '?' : field[i];
        }
        if (loading && !v->failed) {
            ncq_named_param_check(v, &m->p, field, hash, listed);
        }
    }
    if (!loading || v->failed) {
        return;
    }
    ncq_named_params_differ(&m->p, differs);
    for (i = 0; i < nrows && i < NCQ_PARAM_MAX_ROWS; i++) {
        if (differs[i] && !listed[i]) {
            ncq_vis_refuse(v, "model state is for other parameters of model "
                           "'%s' (it has %s at its default, this drive does "
                           "not); give both ends the same model-file",
                           m->p.name, rows[i].field);
        }
    }
}

/*
 * identity: the model's name, the fingerprint of the rows of the linear
 * versions (v9's), then the rows checked by name.
 */
static void ncq_sec_identity(NcqVis *v, void *obj)
{
    NcqStateObj *o = obj;
    NcqModel *m = o->m;
    uint64_t want;
    size_t i;

    ncq_vis_identity(v, m, o->name, sizeof(o->name), &o->fp);
    if (v->mode == NCQ_VIS_LOAD && !v->failed) {
        for (i = 0; o->name[i]; i++) {
            if (o->name[i] < ' ' || o->name[i] > '~') {
                o->name[i] = '?';
            }
        }
        want = ncq_params_fingerprint(&m->p, NCQ_STATE_LINEAR_LAST);
        if (strcmp(o->name, m->p.name)) {
            ncq_vis_refuse(v, "model state is for model '%s', this drive "
                           "has '%s'; give both ends the same model and "
                           "model-file", o->name, m->p.name);
        } else if (o->fp != want) {
            ncq_vis_refuse(v, "model state is for other parameters of model "
                           "'%s' (fingerprint %016" PRIx64 ", this drive's "
                           "%016" PRIx64 "); give both ends the same "
                           "model-file", o->name, o->fp, want);
        }
    }
    ncq_vis_named_params(v, m);
}

/* A setting checked by name whose value is not its parameter's. */
static bool ncq_named_setting_differs(const NcqModel *m,
                                      const NcqSettings *from_params, int i)
{
    return ncq_setting(i)->since == NCQ_FP_NAMED &&
           ncq_setting_get(i, &m->s) != ncq_setting_get(i, from_params);
}

static bool ncq_sec_named_settings_needed(void *obj)
{
    const NcqModel *m = ((NcqStateObj *)obj)->m;
    NcqSettings d;
    int i;

    ncq_settings_from_params(&d, &m->p);
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        if (ncq_named_setting_differs(m, &d, i)) {
            return true;
        }
    }
    return false;
}

/* One setting of "named settings" in a load: known and in its bounds. */
static void ncq_named_setting_load(NcqVis *v, NcqSettings *s,
                                   const char *field, uint64_t x)
{
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);

        if (d->since != NCQ_FP_NAMED || strcmp(d->field, field)) {
            continue;
        }
        if (x < d->min || x > d->max) {
            ncq_vis_fail(v, "%s = %" PRIu64 ", outside %" PRIu64 "..%"
                         PRIu64, field, x, d->min, d->max);
        }
        ncq_setting_put(i, s, x);
        return;
    }
    ncq_vis_refuse(v, "model state has setting '%s', which this build does "
                   "not know; load it with a build of ncq-disk that knows "
                   "it", field);
}

/*
 * named settings: the settings added after the linear versions whose
 * value is not their parameter's, each as its field and an 8-byte value;
 * absent, a load keeps the parameters' values, as a fresh model has.
 */
static void ncq_sec_named_settings(NcqVis *v, void *obj)
{
    NcqModel *m = ((NcqStateObj *)obj)->m;
    NcqSettings d;
    uint32_t n = 0, k;
    int i = 0;

    ncq_settings_from_params(&d, &m->p);
    for (k = 0; k < NCQ_SETTING__MAX; k++) {
        n += ncq_named_setting_differs(m, &d, k);
    }
    n = ncq_vis_count(v, "settings", n, NCQ_SETTING__MAX);
    for (k = 0; k < n && !v->failed; k++) {
        char field[64] = "";
        uint64_t x = 0;

        if (v->mode != NCQ_VIS_LOAD && v->mode != NCQ_VIS_SCHEMA) {
            while (!ncq_named_setting_differs(m, &d, i)) {
                i++;
            }
            snprintf(field, sizeof(field), "%s", ncq_setting(i)->field);
            x = ncq_setting_get(i++, &m->s);
        }
        ncq_vis_str(v, "setting", field, sizeof(field));
        ncq_vis_u64(v, "value", &x);
        if (v->mode == NCQ_VIS_LOAD && !v->failed) {
            ncq_named_setting_load(v, &m->s, field, x);
        }
    }
}

/* The base sections: v9's parts, one section each. */
static NcqModel *ncq_state_model(void *obj)
{
    return ((NcqStateObj *)obj)->m;
}

static void ncq_sec_clock(NcqVis *v, void *obj)
{
    ncq_vis_clock(v, ncq_state_model(obj));
}

static void ncq_sec_settings(NcqVis *v, void *obj)
{
    ncq_vis_settings(v, &ncq_state_model(obj)->s);
}

static void ncq_sec_queue(NcqVis *v, void *obj)
{
    ncq_vis_queue(v, ncq_state_model(obj));
}

static void ncq_sec_mech(NcqVis *v, void *obj)
{
    ncq_vis_mech(v, ncq_state_model(obj));
}

static void ncq_sec_readahead(NcqVis *v, void *obj)
{
    ncq_vis_readahead(v, ncq_state_model(obj));
}

static void ncq_sec_wcache(NcqVis *v, void *obj)
{
    ncq_vis_wcache(v, ncq_state_model(obj));
}

static void ncq_sec_ssd(NcqVis *v, void *obj)
{
    ncq_vis_ssd(v, ncq_state_model(obj));
}

static void ncq_sec_stats(NcqVis *v, void *obj)
{
    ncq_vis_stats(v, &ncq_state_model(obj)->st);
}

static void ncq_sec_faults(NcqVis *v, void *obj)
{
    ncq_vis_faults(v, ncq_state_model(obj));
}

static void ncq_sec_cdl(NcqVis *v, void *obj)
{
    ncq_vis_cdl(v, ncq_state_model(obj));
}

static void ncq_sec_wzones(NcqVis *v, void *obj)
{
    ncq_vis_wzones(v, ncq_state_model(obj));
}

static void ncq_sec_mcache(NcqVis *v, void *obj)
{
    ncq_vis_mcache(v, ncq_state_model(obj));
}

/*
 * The sections of v10, in writing order: the one list of what the state
 * is.  identity first (a load reads it first), then the others in the
 * order of their names.  New state goes in a new section at its name's
 * place, with a needed() that leaves it out while it holds its default
 * (docs/model-state.md).
 */
static const NcqSection ncq_state_sections[] = {
    { "identity", 0, NULL, ncq_sec_identity, NULL },
    { "cdl", 0, NULL, ncq_sec_cdl, NULL },
    { "clock", 0, NULL, ncq_sec_clock, NULL },
    { "faults", 0, NULL, ncq_sec_faults, NULL },
    { "mechanism", 0, NULL, ncq_sec_mech, NULL },
    { "media cache", 0, NULL, ncq_sec_mcache, NULL },
    { "named settings", 0, ncq_sec_named_settings_needed,
      ncq_sec_named_settings, NULL },
    { "queue", 0, NULL, ncq_sec_queue, NULL },
    { "read cache", 0, NULL, ncq_sec_readahead, NULL },
    { "settings", 0, NULL, ncq_sec_settings, NULL },
    { "ssd", 0, NULL, ncq_sec_ssd, NULL },
    { "stats", 0, NULL, ncq_sec_stats, NULL },
    { "write cache", 0, NULL, ncq_sec_wcache, NULL },
    { "zones", 0, NULL, ncq_sec_wzones, NULL },
};

static const NcqSectioned ncq_state_format = {
    .magic = NCQ_STATE_MAGIC, .version = NCQ_STATE_VERSION,
    .walk_version = NCQ_STATE_LINEAR_LAST, .what = "model state",
    .sec = ncq_state_sections,
    .n = sizeof(ncq_state_sections) / sizeof(ncq_state_sections[0]),
};

/* @fp: the fingerprint's value is needed (a save), not only its size. */
static void ncq_state_obj_init(NcqStateObj *o, const NcqModel *m, bool fp)
{
    /* SIZE and SAVE only read the model */
    o->m = (NcqModel *)m;
    memcpy(o->name, m->p.name, sizeof(o->name));
    o->fp = fp ? ncq_params_fingerprint(&m->p, NCQ_STATE_LINEAR_LAST) : 0;
}

size_t ncq_model_state_size(const NcqModel *m)
{
    NcqStateObj o;

    ncq_state_obj_init(&o, m, false);
    return ncq_sections_size(&ncq_state_format, &o);
}

int ncq_model_state_save(const NcqModel *m, void *buf, size_t len)
{
    NcqStateObj o;
    size_t total;

    ncq_state_obj_init(&o, m, true);
    total = ncq_sections_size(&ncq_state_format, &o);
    if (len < total || total - NCQ_SEC_HEAD - NCQ_SEC_TAIL > UINT32_MAX) {
        return NCQ_ERR_INVAL;
    }
    ncq_sections_save(&ncq_state_format, &o, buf);
    return 0;
}

/* The sections' names and shapes, for test-state's committed list. */
size_t ncq_model_state_sections(const NcqModel *m, const char **names,
                                uint64_t *shapes, size_t max)
{
    NcqStateObj o;
    size_t i;

    ncq_state_obj_init(&o, m, false);
    for (i = 0; i < ncq_state_format.n && i < max; i++) {
        names[i] = ncq_state_sections[i].name;
        shapes[i] = ncq_section_shape(&ncq_state_format,
                                      &ncq_state_sections[i], &o);
    }
    return ncq_state_format.n;
}

/* The header: 0, or NCQ_ERR_INVAL with the one-line reason. */
static int ncq_state_check_head(const uint8_t *b, size_t len,
                                uint32_t *version, char *err, size_t errlen)
{
    uint64_t body, want, got;

    if (len >= 8 && !memcmp(b, NCQ_STATE_OLD_MAGIC, 8)) {
        snprintf(err, errlen, "model state is in the pre-v1 format (v0, a "
                 "memory image only the build that wrote it can read); "
                 "this build reads v1 to v%d: load it with the build that "
                 "saved it", NCQ_STATE_VERSION);
        return NCQ_ERR_INVAL;
    }
    if (len < NCQ_STATE_HEAD + NCQ_STATE_TAIL ||
        memcmp(b, NCQ_STATE_MAGIC, 8)) {
        snprintf(err, errlen, "not an ncq-model state (%zu bytes%s); give "
                 "the state saved by ncq_model_state_save()", len,
                 len < NCQ_STATE_HEAD + NCQ_STATE_TAIL ? ", too short" :
                 ", no " NCQ_STATE_MAGIC " magic");
        return NCQ_ERR_INVAL;
    }
    *version = ncq_get_be(b + 8, 4);    /* 1..9: later ones are v10's */
    if (*version < 1) {
        snprintf(err, errlen, "model state v0 with the v1 magic: the header "
                 "is damaged (this build reads v1 to v%d)",
                 NCQ_STATE_VERSION);
        return NCQ_ERR_INVAL;
    }
    body = ncq_get_be(b + 20, 4);
    if (len != NCQ_STATE_HEAD + body + NCQ_STATE_TAIL) {
        snprintf(err, errlen, "model state is %zu bytes, its header says "
                 "%" PRIu64 ": it was cut or padded; use an intact "
                 "snapshot", len, NCQ_STATE_HEAD + body + NCQ_STATE_TAIL);
        return NCQ_ERR_INVAL;
    }
    want = ncq_get_be(b + len - NCQ_STATE_TAIL, 8);
    got = ncq_fnv(NCQ_FNV_INIT, b, len - NCQ_STATE_TAIL);
    if (want != got) {
        snprintf(err, errlen, "model state is damaged (checksum %016" PRIx64
                 ", its bytes give %016" PRIx64 "); use an intact snapshot",
                 want, got);
        return NCQ_ERR_INVAL;
    }
    want = ncq_get_be(b + 12, 8);
    got = ncq_state_format_hash(*version);
    if (want != got) {
        snprintf(err, errlen, "model state v%" PRIu32 " has format hash "
                 "%016" PRIx64 ", this build's v%" PRIu32 " has %016" PRIx64
                 ": the two builds disagree on v%" PRIu32 "; migrate between "
                 "released builds", *version, want, *version, got, *version);
        return NCQ_ERR_INVAL;
    }
    return 0;
}

/*
 * The slots' masks, the outstanding count and each busy command's place
 * on the platters, which the stream leaves out; a command in the wrong
 * slot or beyond the capacity fails @v.
 */
static void ncq_state_rebuild_slots(NcqVis *v, NcqModel *m)
{
    const NcqParams *p = &m->p;
    bool hdd = p->kind == NCQ_KIND_HDD;
    int i;

    memset(m->q.mask, 0, sizeof(m->q.mask));
    m->q.outstanding = 0;
    for (i = 0; i < NCQ_SLOTS; i++) {
        NcqSlot *s = &m->q.slot[i];
        bool media = s->cmd.op == NCQ_OP_READ || s->cmd.op == NCQ_OP_WRITE;

        m->q.mask[s->state] |= 1ULL << i;
        if (s->state == NCQ_SLOT_FREE) {
            continue;
        }
        ncq_vis_part(v, "slot", i);
        if (s->cmd.queued != (i < NCQ_MAX_TAGS) ||
            s->cmd.id != (i < NCQ_MAX_TAGS ? (uint32_t)i : NCQ_ID_NONQUEUED) ||
            s->c.id != s->cmd.id || s->c.op != s->cmd.op) {
            ncq_vis_fail(v, "command %u (op %d) in the wrong slot",
                         s->cmd.id, (int)s->cmd.op);
        }
        if (media && (s->cmd.sectors < 1 || s->cmd.lba >= p->capacity ||
                      s->cmd.sectors > p->capacity - s->cmd.lba)) {
            ncq_vis_fail(v, "command %" PRIu64 "+%u beyond the capacity",
                         s->cmd.lba, s->cmd.sectors);
        }
        if (s->state == NCQ_SLOT_QUEUED || s->state == NCQ_SLOT_SERVICE) {
            m->q.outstanding++;
        }
        /* where the command is on the platters, as submit computed it */
        memset(&s->tgt, 0, sizeof(s->tgt));
        if (hdd && media && !v->failed) {
            ncq_target_of(m, s->cmd.lba, s->cmd.op == NCQ_OP_WRITE, &s->tgt);
        }
    }
}

/*
 * What the stream leaves out (see the top of the file), and the checks
 * that need several fields; a failure leaves its message in @v.
 */
static void ncq_state_rebuild(NcqVis *v, NcqModel *m)
{
    const NcqParams *p = &m->p;
    bool hdd = p->kind == NCQ_KIND_HDD;
    uint64_t seen = 0;
    int i;

    ncq_vis_part(v, "clock", -1);
    if (m->layout.phase >= NCQ_REV) {
        ncq_vis_fail(v, "phase = %" PRIu64 ", beyond a revolution",
                     m->layout.phase);
    }
    ncq_vis_part(v, "settings", -1);
    if (m->s.zero_latency && !p->zero_latency) {
        ncq_vis_fail(v, "zero_latency set, model %s has none", p->name);
    }
    if (m->s.starvation_timeout_ns < 0 || m->s.prio_timeout_ns < 0) {
        ncq_vis_fail(v, "a negative time-out");
    }
    ncq_state_rebuild_slots(v, m);
    ncq_vis_part(v, "queue", -1);
    for (i = 0; i < m->q.n; i++) {
        int q = m->q.order[i];

        if (m->q.slot[q].state != NCQ_SLOT_QUEUED || (seen >> q & 1)) {
            ncq_vis_fail(v, "qorder holds slot %d, not queued once", q);
        }
        seen |= 1ULL << q;
    }
    ncq_vis_part(v, "mechanism", -1);
    if (!hdd && (m->mech.op != NCQ_MECH_IDLE || m->q.n || m->wc.ndirty)) {
        ncq_vis_fail(v, "disk mechanism busy in an SSD");
    }
    if (hdd && (m->mech.cyl >= p->cylinders || m->mech.head >= p->heads ||
                m->ra.min_cyl >= p->cylinders || m->ra.min_head >= p->heads ||
                m->ra.end_cyl >= p->cylinders || m->ra.end_head >= p->heads)) {
        ncq_vis_fail(v, "head at cylinder %u head %u, beyond the disk",
                     m->mech.cyl, m->mech.head);
    }
    ncq_vis_part(v, "read cache", -1);
    memset(&m->ra.ph, 0, sizeof(m->ra.ph));
    if (m->mech.op == NCQ_MECH_PREFETCH && !v->failed) {
        if (m->ra.seg < 0 || m->ra.seg >= (int)p->cache_segments ||
            m->ra.lba >= p->capacity || m->ra.n > p->capacity - m->ra.lba) {
            ncq_vis_fail(v, "read-ahead of %" PRIu64 "+%u in segment %d "
                         "beyond the disk", m->ra.lba, m->ra.n, m->ra.seg);
        } else {
            ncq_layout_map(m, m->ra.lba, &m->ra.ph);
        }
    }
    ncq_vis_part(v, "write cache", -1);
    m->wc.dirty_sectors = 0;
    for (i = 0; i < m->wc.ndirty; i++) {
        if (m->wc.dirty[i].lba >= p->capacity ||
            m->wc.dirty[i].n > p->capacity - m->wc.dirty[i].lba) {
            ncq_vis_fail(v, "dirty extent %" PRIu64 "+%u beyond the disk",
                         m->wc.dirty[i].lba, m->wc.dirty[i].n);
        }
        m->wc.dirty_sectors += m->wc.dirty[i].n;
    }
    ncq_vis_part(v, "zones", -1);
    if (ncq_zbc_check_state(m)) {
        ncq_vis_fail(v, "%s", ncq_zbc_check_state(m));
    }
    ncq_vis_part(v, "media cache", -1);
    if (ncq_mc_rebuild(m)) {
        ncq_vis_fail(v, "%s", ncq_mc_rebuild(m));
    }
}

/* Put the loaded model @n in @m's place, and free what was @m's. */
static void ncq_state_commit(NcqModel *m, NcqModel *n)
{
    NcqZbc zbc;
    NcqMediaCache mc;

    n->smart = m->smart;        /* an attachment, not state */
    zbc = m->zbc;               /* m's zone arrays go with n */
    mc = m->mc;                 /* ... and its media cache's */
    *m = *n;
    n->zbc = zbc;
    n->mc = mc;
    ncq_model_free(n);
}

/* A v10 stream, of sections, into a new model @n: 0 or NCQ_ERR_INVAL. */
static int ncq_state_load_sections(NcqModel *n, const uint8_t *b,
                                   size_t len, char *err, size_t errlen)
{
    NcqStateObj o = { .m = n };
    NcqVis v = { .mode = NCQ_VIS_LOAD, .index = -1, .err = err,
                 .errlen = errlen };

    if (ncq_sections_load(&ncq_state_format, &o, b, len, err, errlen) < 0) {
        return NCQ_ERR_INVAL;
    }
    ncq_state_rebuild(&v, n);
    return v.failed ? NCQ_ERR_INVAL : 0;
}

/* A stream of the linear versions, v1 to v9, into a new model @n. */
static int ncq_state_load_linear(NcqModel *n, const void *buf, size_t len,
                                 char *err, size_t errlen)
{
    NcqVis v = { .mode = NCQ_VIS_LOAD, .in = buf, .pos = NCQ_STATE_HEAD,
                 .index = -1, .err = err, .errlen = errlen };
    char name[sizeof(n->p.name)] = "";
    uint64_t fp = 0;
    size_t i;

    if (ncq_state_check_head(buf, len, &v.version, err, errlen) < 0) {
        return NCQ_ERR_INVAL;
    }
    v.len = len - NCQ_STATE_TAIL;
    ncq_vis_body(&v, n, name, sizeof(name), &fp);
    for (i = 0; name[i]; i++) {
        if (name[i] < ' ' || name[i] > '~') {
            name[i] = '?';      /* a damaged name stays one printable line */
        }
    }
    if (!v.failed && strcmp(name, n->p.name)) {
        snprintf(err, errlen, "model state is for model '%s', this drive "
                 "has '%s'; give both ends the same model and model-file",
                 name, n->p.name);
        return NCQ_ERR_INVAL;
    }
    if (!v.failed && fp != ncq_params_fingerprint(&n->p, v.version)) {
        snprintf(err, errlen, "model state is for other parameters of model "
                 "'%s' (fingerprint %016" PRIx64 ", this drive's %016" PRIx64
                 "); give both ends the same model-file", name, fp,
                 ncq_params_fingerprint(&n->p, v.version));
        return NCQ_ERR_INVAL;
    }
    if (!v.failed) {
        ncq_state_rebuild(&v, n);
    }
    if (!v.failed && v.pos != v.len) {
        ncq_vis_part(&v, "body", -1);
        ncq_vis_fail(&v, "%zu bytes after the last field", v.len - v.pos);
    }
    return v.failed ? NCQ_ERR_INVAL : 0;
}

/*
 * A stream of any version: v10's sections, or v1..v9 (their version word
 * is at the same offset), loaded into a new model of @m's parameters,
 * which holds what the stream omits; @m changes only if all is well.
 */
int ncq_model_state_load(NcqModel *m, const void *buf, size_t len,
                         char *err, size_t errlen)
{
    const uint8_t *b = buf;
    bool sectioned = len >= 12 && !memcmp(b, NCQ_STATE_MAGIC, 8) &&
                     ncq_get_be(b + 8, 4) > NCQ_STATE_LINEAR_LAST;
    NcqModel *n = ncq_model_new(&m->p, 0, err, errlen);
    int rc;

    if (!n) {
        return NCQ_ERR_NOMEM;
    }
    if (sectioned) {
        rc = ncq_state_load_sections(n, b, len, err, errlen);
    } else {
        rc = ncq_state_load_linear(n, buf, len, err, errlen);
    }
    if (rc < 0) {
        ncq_model_free(n);
        return rc;
    }
    ncq_state_commit(m, n);
    return 0;
}
