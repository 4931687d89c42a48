/*
 * ncq-model: public API (commands in, completions out, settings, stats).
 *
 * The model is an event-driven simulation.  Every call first processes
 * all events at times <= now (completions before mechanism events at the
 * same time), so results do not depend on how often advance() is called.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"

NcqModel *ncq_model_new(const NcqParams *p, uint64_t seed,
                        char *err, size_t errlen)
{
    NcqModel *m;

    if (!p) {
        snprintf(err, errlen, "no parameters");
        return NULL;
    }
    if (ncq_params_validate(p, err, errlen) < 0) {
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(&m->p, p, sizeof(*p));
    ncq_settings_from_params(&m->s, p);
    m->rng = seed;
    ncq_sched_init(m);
    ncq_cdl_init(m);
    if (ncq_layout_init(m, err, errlen) < 0) {
        free(m);
        return NULL;
    }
    ncq_queue_init(m);
    ncq_ssd_init(m);
    if (ncq_zbc_init(m, err, errlen) < 0) {
        free(m);
        return NULL;
    }
    if (ncq_mc_init(m, err, errlen) < 0) {
        ncq_zbc_free(m);
        free(m);
        return NULL;
    }
    return m;
}

void ncq_model_free(NcqModel *m)
{
    if (m) {
        ncq_zbc_free(m);
        ncq_mc_free(m);
    }
    free(m);
}

const NcqParams *ncq_model_params(const NcqModel *m)
{
    return &m->p;
}

size_t ncq_model_size(const NcqModel *m)
{
    return sizeof(*m) + (size_t)m->zbc.nz * (1 + sizeof(uint64_t)) +
           (size_t)m->p.mc_map * sizeof(NcqMcEntry) +
           (m->mc.nbands + 7) / 8;
}

void ncq_model_get_settings(const NcqModel *m, NcqSettings *s)
{
    *s = m->s;
}

int ncq_model_set_settings(NcqModel *m, const NcqSettings *s,
                           char *err, size_t errlen)
{
    int rc = ncq_settings_check(m, s, err, errlen);

    if (rc == 0) {
        m->s = *s;
    }
    return rc;
}

static void ncq_run_to(NcqModel *m, int64_t now);

int ncq_model_set_settings_at(NcqModel *m, const NcqSettings *s,
                              int64_t now_ns, char *err, size_t errlen)
{
    int rc = ncq_settings_check(m, s, err, errlen);

    if (rc < 0) {
        return rc;
    }
    ncq_run_to(m, now_ns);
    m->s = *s;
    return 0;
}

int ncq_model_cdl_set_at(NcqModel *m, const NcqCdl *cdl, int64_t now_ns,
                         char *err, size_t errlen)
{
    if (ncq_cdl_check(m, cdl, err, errlen)) {
        return NCQ_ERR_INVAL;
    }
    ncq_run_to(m, now_ns);
    m->cdl = *cdl;
    return 0;
}

/* The mechanism's work ends at @t: it takes up its next. */
static void ncq_mech_event(NcqModel *m, int64_t t)
{
    if (m->mech.op == NCQ_MECH_PREFETCH) {
        ncq_pf_end(m, t);
    }
    if (m->mech.op == NCQ_MECH_SPINUP) {
        ncq_mech_stop(m, false);
    }
    if (m->mech.op == NCQ_MECH_CLEAN && ncq_mc_clean_event(m)) {
        return;
    }
    ncq_mech_idle(m);
    ncq_sched_decide(m, t);
}

static void ncq_run_to(NcqModel *m, int64_t now)
{
    for (;;) {
        int64_t tm = m->mech.op != NCQ_MECH_IDLE ? m->mech.until : INT64_MAX;
        int d = ncq_queue_next_done(m);
        int64_t tc = d >= 0 ? m->q.slot[d].c.complete_ns : INT64_MAX;

        if (tc <= now && tc <= tm) {
            ncq_queue_emit(m, d);
        } else if (tm <= now) {
            ncq_mech_event(m, tm);
        } else {
            break;
        }
    }
    if (now > m->now) {
        m->now = now;
    }
}

static int ncq_queued_outstanding(const NcqModel *m)
{
    uint64_t tags = (1ULL << NCQ_MAX_TAGS) - 1;

    return __builtin_popcountll((m->q.mask[NCQ_SLOT_QUEUED] |
                                 m->q.mask[NCQ_SLOT_SERVICE]) & tags);
}

static int ncq_check(NcqModel *m, const NcqCmd *cmd)
{
    if ((unsigned)cmd->op > NCQ_OP_OTHER) {
        return NCQ_ERR_INVAL;
    }
    if (cmd->op == NCQ_OP_READ || cmd->op == NCQ_OP_WRITE) {
        if (cmd->sectors < 1 || cmd->sectors > NCQ_MAX_SECTORS) {
            return NCQ_ERR_INVAL;
        }
        if (cmd->lba >= m->p.capacity ||
            cmd->sectors > m->p.capacity - cmd->lba) {
            return NCQ_ERR_RANGE;
        }
    }
    if (cmd->zone_action && (cmd->op != NCQ_OP_OTHER || !m->zbc.nz)) {
        return NCQ_ERR_INVAL;
    }
    if (cmd->queued) {
        /* NCQ NON-DATA (63h) carries zone management, nothing else here */
        if (cmd->op != NCQ_OP_READ && cmd->op != NCQ_OP_WRITE &&
            !cmd->zone_action) {
            return NCQ_ERR_INVAL;
        }
        if (cmd->id >= NCQ_MAX_TAGS) {
            return NCQ_ERR_INVAL;
        }
        if (m->q.slot[NCQ_MAX_TAGS].state != NCQ_SLOT_FREE &&
            m->q.slot[NCQ_MAX_TAGS].state != NCQ_SLOT_DONE) {
            return NCQ_ERR_MIXED;
        }
        if (m->q.slot[cmd->id].state != NCQ_SLOT_FREE) {
            return NCQ_ERR_TAG_BUSY;
        }
        if (ncq_queued_outstanding(m) >= (int)m->p.queue_depth) {
            return NCQ_ERR_QUEUE_FULL;
        }
    } else {
        if (ncq_queued_outstanding(m) > 0) {
            return NCQ_ERR_MIXED;
        }
        if (m->q.slot[NCQ_MAX_TAGS].state != NCQ_SLOT_FREE) {
            return NCQ_ERR_TAG_BUSY;
        }
    }
    return 0;
}

/*
 * A command completed by the firmware alone (no media, no buffer), after
 * its overhead and @extra_ns (a zone action's time).
 */
static void ncq_complete_other(NcqModel *m, NcqSlot *s, int64_t now,
                               int64_t extra_ns)
{
    NcqService sv = {
        .dispatch_ns = s->c.arrival_ns,
        .overhead_ns = m->p.ovh_other_ns + extra_ns,
        .complete_ns = now + m->p.ovh_other_ns + extra_ns,
        .reason = NCQ_REASON_ONLY,
    };

    ncq_slot_complete(m, s, &sv);
}

/* A read served from the buffer or the read-ahead in progress. */
static bool ncq_read_cached(NcqModel *m, NcqSlot *s, int64_t now)
{
    int seg;

    if (ncq_cache_lookup(m, s->cmd.lba, s->cmd.sectors, now, &seg)) {
        ncq_cache_serve_hit(m, s, now);
        if (ncq_pf_consume(m, seg, s->cmd.lba + s->cmd.sectors)) {
            ncq_sched_decide(m, now);
        }
        return true;
    }
    return ncq_pf_stream_hit(m, s, now, false);
}

/* A disk's command: from the buffer if it can, else into the queue. */
static void ncq_submit_hdd(NcqModel *m, NcqSlot *s, int64_t now,
                           int64_t zone_ns)
{
    if (s->cmd.op == NCQ_OP_OTHER) {
        ncq_complete_other(m, s, now, zone_ns);
        return;
    }
    if (s->cmd.op == NCQ_OP_READ && !s->cmd.fua &&
        ncq_read_cached(m, s, now)) {
        return;
    }
    if (s->cmd.op == NCQ_OP_WRITE && ncq_wcache_take(m, s, now)) {
        if (m->mech.op == NCQ_MECH_IDLE) {
            ncq_sched_decide(m, now);
        }
        return;
    }
    ncq_queue_push(m, s);
    ncq_pf_command_waits(m, now);
    if (m->mech.op == NCQ_MECH_IDLE) {
        ncq_sched_decide(m, now);
    }
}

int ncq_model_submit(NcqModel *m, const NcqCmd *cmd, int64_t now_ns)
{
    NcqFaultFate fate;
    int64_t zone_ns = 0;
    NcqSlot *s;
    int rc;

    if (now_ns < m->now) {
        m->st.rejected++;
        return NCQ_ERR_TIME;
    }
    ncq_run_to(m, now_ns);
    rc = ncq_check(m, cmd);
    if (rc == 0 && m->zbc.nz) {
        rc = ncq_zbc_accept(m, cmd, &zone_ns);
    }
    if (rc < 0) {
        m->st.rejected++;
        return rc;
    }
    if (m->p.mc_sectors) {
        ncq_mc_arrival(m, now_ns);
    }
    ncq_fault_fate(m, cmd, &fate);
    s = ncq_queue_admit(m, cmd, now_ns, &fate);
    if (m->p.kind == NCQ_KIND_SSD) {
        ncq_ssd_submit(m, s, now_ns);
    } else {
        ncq_submit_hdd(m, s, now_ns, zone_ns);
    }
    return 0;
}

int64_t ncq_model_next_event(NcqModel *m)
{
    int64_t t = m->mech.op != NCQ_MECH_IDLE ? m->mech.until : INT64_MAX;
    uint64_t bits = m->q.mask[NCQ_SLOT_SERVICE];

    if (m->q.mask[NCQ_SLOT_DONE]) {
        return m->now;
    }
    while (bits) {
        const NcqSlot *s = &m->q.slot[__builtin_ctzll(bits)];

        bits &= bits - 1;
        if (s->c.complete_ns < t) {
            t = s->c.complete_ns;
        }
    }
    return t;
}

int ncq_model_advance(NcqModel *m, int64_t now_ns, NcqCompletion *out,
                      int max)
{
    ncq_run_to(m, now_ns);
    return ncq_queue_take_done(m, out, max);
}

/*
 * Writes a reset drops never reach the media: each zone's write pointer
 * goes back over them, newest first, as long as no later command moved
 * it (a dropped write below a completed one leaves its hole).
 */
static void ncq_zone_drop_writes(NcqModel *m)
{
    int idx[NCQ_SLOTS], n = 0, i, j;

    for (i = 0; i < NCQ_SLOTS; i++) {
        const NcqSlot *s = &m->q.slot[i];

        if ((s->state == NCQ_SLOT_QUEUED || s->state == NCQ_SLOT_SERVICE) &&
            s->cmd.op == NCQ_OP_WRITE) {
            for (j = n; j > 0 && m->q.slot[idx[j - 1]].seq < s->seq; j--) {
                idx[j] = idx[j - 1];
            }
            idx[j] = i;
            n++;
        }
    }
    for (i = 0; i < n; i++) {
        ncq_zbc_unwrite(m, m->q.slot[idx[i]].cmd.lba,
                        m->q.slot[idx[i]].cmd.sectors);
    }
}

void ncq_model_reset(NcqModel *m, int64_t now_ns)
{
    ncq_run_to(m, now_ns);
    if (m->zbc.nz) {
        ncq_zone_drop_writes(m);
    }
    ncq_queue_clear(m);
}

uint64_t ncq_model_power_loss(NcqModel *m, int64_t now_ns)
{
    bool destaging;

    ncq_model_reset(m, now_ns);
    ncq_zbc_power_on(m);    /* write pointers persist, open zones close */
    ncq_cache_power_loss(m, m->now);
    /* an interrupted destage does not count as written */
    destaging = m->mech.op == NCQ_MECH_DESTAGE;
    if (destaging) {
        ncq_mech_end(m, m->now);
    }
    if (m->mech.op == NCQ_MECH_CLEAN) {
        /* the band was not rewritten: the media cache still holds it */
        ncq_mc_clean_end(m, false);
        ncq_mech_end(m, m->now);
    }
    return ncq_wcache_power_loss(m, destaging);
}

int ncq_model_spin_down(NcqModel *m, int64_t now_ns)
{
    if (now_ns < m->now) {
        return NCQ_ERR_TIME;
    }
    ncq_run_to(m, now_ns);
    if (m->mech.op == NCQ_MECH_CLEAN) {
        /* STANDBY stops an idle cleaning; the cache keeps its data */
        ncq_mc_clean_end(m, false);
        ncq_mech_end(m, now_ns);
    }
    if (m->q.outstanding || m->wc.ndirty ||
        (m->mech.op != NCQ_MECH_IDLE && m->mech.op != NCQ_MECH_PREFETCH)) {
        return NCQ_ERR_MIXED;
    }
    ncq_pf_stop(m, now_ns);
    ncq_pf_disarm(m);
    if (m->p.kind == NCQ_KIND_HDD) {
        ncq_mech_stop(m, true);
    }
    return 0;
}

void ncq_model_spin_up(NcqModel *m, int64_t now_ns)
{
    ncq_run_to(m, now_ns);
    if (m->mech.stopped && m->mech.op == NCQ_MECH_IDLE) {
        ncq_mech_begin(m, NCQ_MECH_SPINUP, m->now + m->p.spinup_ns);
    }
}

bool ncq_model_spinning(const NcqModel *m)
{
    return !m->mech.stopped || m->mech.op == NCQ_MECH_SPINUP;
}

static int ncq_range_cmp(const void *a, const void *b)
{
    const NcqRange *x = a, *y = b;

    return x->lba < y->lba ? -1 : x->lba > y->lba;
}

int ncq_model_volatile(NcqModel *m, int64_t now_ns, NcqRange *out, int max)
{
    NcqRange r[NCQ_MAX_DIRTY + 1 + NCQ_SLOTS];
    int n = 0, i, k = 0;

    ncq_run_to(m, now_ns);
    for (i = 0; i < m->wc.ndirty; i++) {
        r[n++] = (NcqRange) { m->wc.dirty[i].lba, m->wc.dirty[i].n };
    }
    if (m->mech.op == NCQ_MECH_DESTAGE) {
        r[n++] = (NcqRange) { m->wc.destage.lba, m->wc.destage.n };
    }
    for (i = 0; i < NCQ_SLOTS; i++) {
        const NcqSlot *s = &m->q.slot[i];

        if ((s->state == NCQ_SLOT_QUEUED || s->state == NCQ_SLOT_SERVICE) &&
            s->cmd.op == NCQ_OP_WRITE) {
            r[n++] = (NcqRange) { s->cmd.lba, s->cmd.sectors };
        }
    }
    qsort(r, n, sizeof(r[0]), ncq_range_cmp);
    for (i = 0; i < n; i++) {
        if (k && r[i].lba <= out[k - 1].lba + out[k - 1].sectors) {
            uint64_t end = r[i].lba + r[i].sectors;

            if (end > out[k - 1].lba + out[k - 1].sectors) {
                out[k - 1].sectors = end - out[k - 1].lba;
            }
            continue;
        }
        if (k >= max) {
            return NCQ_ERR_INVAL;
        }
        out[k++] = r[i];
    }
    return k;
}

int ncq_model_outstanding(const NcqModel *m)
{
    return m->q.outstanding;
}

void ncq_model_stats(const NcqModel *m, NcqStats *st)
{
    *st = m->st;
}

void ncq_model_stats_clear(NcqModel *m)
{
    memset(&m->st, 0, sizeof(m->st));
}

int ncq_model_queue_list(NcqModel *m, int64_t now_ns,
                         NcqQueueEntry *out, int max)
{
    int order[NCQ_SLOTS], n = 0, i, j;

    ncq_run_to(m, now_ns);
    for (i = 0; i < NCQ_SLOTS; i++) {
        if (m->q.slot[i].state == NCQ_SLOT_QUEUED ||
            m->q.slot[i].state == NCQ_SLOT_SERVICE) {
            for (j = n; j > 0 && m->q.slot[order[j - 1]].seq > m->q.slot[i].seq;
                 j--) {
                order[j] = order[j - 1];
            }
            order[j] = i;
            n++;
        }
    }
    for (i = 0; i < n && i < max; i++) {
        const NcqSlot *s = &m->q.slot[order[i]];

        out[i].id = s->cmd.id;
        out[i].op = s->cmd.op;
        out[i].lba = s->cmd.lba;
        out[i].sectors = s->cmd.sectors;
        out[i].prio = s->cmd.prio;
        out[i].in_service = s->state == NCQ_SLOT_SERVICE;
        out[i].age_ns = now_ns - s->c.arrival_ns;
    }
    return i;
}

const char *ncq_op_name(NcqOp op)
{
    static const char *const n[] = { "R", "W", "F", "O" };

    return (unsigned)op <= NCQ_OP_OTHER ? n[op] : "?";
}

const char *ncq_reason_name(NcqReason r)
{
    static const char *const n[NCQ_REASON__MAX] = {
        "policy", "aged", "priority", "timeout", "only", "clustered",
        "cache",
    };

    return (unsigned)r < NCQ_REASON__MAX ? n[r] : "?";
}

const char *ncq_strerror(int err)
{
    switch (err) {
    case NCQ_OK:
        return "success";
    case NCQ_ERR_INVAL:
        return "invalid command";
    case NCQ_ERR_RANGE:
        return "LBA range beyond capacity";
    case NCQ_ERR_TAG_BUSY:
        return "tag already active";
    case NCQ_ERR_QUEUE_FULL:
        return "queue full";
    case NCQ_ERR_MIXED:
        return "queued and non-queued commands mixed";
    case NCQ_ERR_TIME:
        return "time went backwards";
    case NCQ_ERR_PARSE:
        return "malformed parameters";
    case NCQ_ERR_IO:
        return "cannot read parameter file";
    case NCQ_ERR_NOMEM:
        return "out of memory";
    case NCQ_ERR_ZONE_UNALIGNED:
        return "unaligned write command (not at the zone's write pointer)";
    case NCQ_ERR_ZONE_BOUNDARY:
        return "write boundary violation (across zones)";
    case NCQ_ERR_ZONE_READ_BOUNDARY:
        return "read boundary violation (across zones)";
    case NCQ_ERR_ZONE_INVALID_READ:
        return "attempt to read invalid data (past the write pointer)";
    case NCQ_ERR_ZONE_FIELD:
        return "invalid field (full zone, zone ID or reporting option)";
    case NCQ_ERR_ZONE_READ_ONLY:
        return "zone is read only";
    case NCQ_ERR_ZONE_OFFLINE:
        return "zone is offline";
    case NCQ_ERR_ZONE_RESOURCES:
        return "insufficient zone resources (open-zone limit)";
    case NCQ_ERR_ZONE_LBA:
        return "zone ID beyond the capacity";
    default:
        return "unknown error";
    }
}
