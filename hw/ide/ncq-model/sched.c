/*
 * ncq-model: firmware queue and scheduler: starvation and priority
 * time-outs, in-queue clustering, and the mechanism's idle work
 * (read-ahead, destage); the choice among the candidates is the policy's
 * (policy.c).
 *
 * Decisions happen only when the mechanism becomes free or when a command
 * arrives at an idle mechanism, so their times do not depend on how the
 * caller polls the model.  The scheduler reads the queue, the head and the
 * buffer; it changes them only through queue.c, mech.c, cache.c and
 * wcache.c.  Its own memory between decisions is NcqSched.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-int.h"

/* One media access for one command or a cluster of adjacent ones. */
typedef struct NcqAccess {
    int members[NCQ_SLOTS];       /* slots, in LBA order */
    uint32_t marks[NCQ_SLOTS];    /* sectors done when member i is done */
    int64_t mark_t[NCQ_SLOTS];    /* ... and when that is */
    int nm;
    uint64_t start;               /* first sector */
    uint64_t end;                 /* sector after the last */
    uint32_t total;
} NcqAccess;

/* When its parts happen. */
typedef struct NcqAccessTime {
    int64_t ovh;                  /* command overhead and decision */
    int64_t ts;                   /* seek starts */
    int64_t sk;                   /* seek, settle and jitter */
    int64_t ta;                   /* head on track (and data there) */
    int64_t rot;
    int64_t t_first;              /* first sector under the head */
    int64_t t_end;                /* media transfer ends */
    uint32_t ecyl, ehead;         /* where it leaves the head */
} NcqAccessTime;

void ncq_sched_init(NcqModel *m)
{
    m->sched.pf_cutoff = INT64_MAX;
}

static bool ncq_starving(const NcqModel *m, int64_t t)
{
    return m->s.starvation_timeout_ns > 0 &&
           t - m->q.slot[m->q.order[0]].c.arrival_ns >=
           m->s.starvation_timeout_ns;
}

/* A command whose time-out is due goes first; -1 when none. */
static int ncq_pick_forced(NcqModel *m, int64_t t, NcqReason *reason)
{
    const NcqSettings *s = &m->s;
    int i;

    if (s->honour_prio && s->prio_timeout_ns > 0) {
        for (i = 0; i < m->q.n; i++) {
            const NcqSlot *q = &m->q.slot[m->q.order[i]];

            if (q->cmd.prio && t - q->c.arrival_ns >= s->prio_timeout_ns) {
                *reason = NCQ_REASON_TIMEOUT;
                m->st.prio_forced++;
                return m->q.order[i];
            }
        }
    }
    if (ncq_starving(m, t)) {
        *reason = NCQ_REASON_TIMEOUT;
        m->st.timeouts_forced++;
        return m->q.order[0];
    }
    return -1;
}

/*
 * The commands the policy chooses among, in arrival order: the high
 * priority ones if any (*any_low: others wait), known when the choice was
 * made, at most a window of them.
 */
static int ncq_pick_candidates(const NcqModel *m, int *cand, bool *any_low)
{
    int ncand = 0, i;

    *any_low = false;
    for (i = 0; i < m->q.n; i++) {
        if (m->s.honour_prio && !m->q.slot[m->q.order[i]].cmd.prio) {
            *any_low = true;
            continue;
        }
        cand[ncand++] = m->q.order[i];
    }
    if (ncand == 0) {
        /* no high priority command: everyone is a candidate */
        *any_low = false;
        for (i = 0; i < m->q.n; i++) {
            cand[ncand++] = m->q.order[i];
        }
    }
    if (m->p.plan_ahead || m->sched.pf_cutoff != INT64_MAX) {
        /*
         * Only commands known when the choice was made: when the previous
         * access was planned (plan_ahead), or when its data ended before
         * the minimum read-ahead.
         */
        int64_t cut = m->p.plan_ahead ? m->sched.plan_cutoff : INT64_MAX;
        int k = 0;

        if (m->sched.pf_cutoff < cut) {
            cut = m->sched.pf_cutoff;
        }
        for (i = 0; i < ncand; i++) {
            if (m->q.slot[cand[i]].c.arrival_ns <= cut) {
                cand[k++] = cand[i];
            }
        }
        if (k > 0) {
            ncand = k;
        }
    }
    if (m->p.sched_window && (uint32_t)ncand > m->p.sched_window) {
        ncand = m->p.sched_window;
    }
    return ncand;
}

NCQ_HOT int ncq_sched_pick(NcqModel *m, int64_t t, NcqReason *reason,
                           int64_t *decide_ns)
{
    int cand[NCQ_SLOTS];
    int ncand, best;
    bool any_low;

    *decide_ns = 0;
    if (m->q.n == 0) {
        return -1;
    }
    if (m->q.n == 1) {
        *reason = NCQ_REASON_ONLY;
        return m->q.order[0];
    }
    best = ncq_cdl_pick_urgent(m, t);
    if (best >= 0) {
        *reason = NCQ_REASON_TIMEOUT;   /* its duration limit is near */
        return best;
    }
    best = ncq_pick_forced(m, t, reason);
    if (best >= 0) {
        return best;
    }
    ncand = ncq_pick_candidates(m, cand, &any_low);
    *reason = any_low ? NCQ_REASON_PRIORITY : NCQ_REASON_POLICY;
    if (ncand == 1) {
        return cand[0];
    }
    return ncq_policy_ops[m->s.policy].pick(m, t, cand, ncand, reason,
                                            decide_ns);
}

/* Start one destage access of dirty data. */
static void ncq_start_destage(NcqModel *m, int64_t t)
{
    int best = ncq_policy_ops[m->s.policy].destage(m, t);
    uint64_t lba = m->wc.dirty[best].lba;
    uint32_t n = m->wc.dirty[best].n < NCQ_DESTAGE_MAX ?
                 m->wc.dirty[best].n : NCQ_DESTAGE_MAX;
    NcqMechState from = { .cyl = m->mech.cyl, .head = m->mech.head };
    uint32_t ecyl, ehead;
    uint64_t end_lba = lba + n;
    int64_t ta, ready;
    NcqTarget to;
    NcqPosTime pt;

    if (m->p.mc_sectors) {
        /* drive-managed SMR: into the media cache, room made first */
        uint64_t where;

        t += ncq_mc_make_room(m, t, n);
        from.cyl = m->mech.cyl;
        from.head = m->mech.head;
        where = ncq_mc_append(m, lba, n);
        /* the log goes on where the last write into it ended */
        ncq_target_of(m, where, !ncq_continues(m, where), &to);
        end_lba = where + n;
    } else {
        ncq_target_of(m, lba, !ncq_continues(m, lba), &to);
    }
    ta = t + ncq_pos_seek(m, from, &to, &pt);
    ready = ncq_wcache_arrival(m, &to.ph, lba, n);
    ta = ta > ready ? ta : ready;   /* no sector before its data */
    ncq_wcache_destage(m, lba, n);
    ncq_cache_fill(m, lba, n);      /* the data stays readable */
    m->sched.pf_cutoff = INT64_MAX;
    ncq_mech_begin(m, NCQ_MECH_DESTAGE,
                   ncq_media_walk_from(m, &to.ph, n,
                                       ta + (m->p.mc_sectors ? 0 :
                                             ncq_rot_wait(m, ta, to.angle)),
                                       &ecyl, &ehead, NULL, NULL, 0));
    ncq_head_move(m, ecyl, ehead);
    ncq_head_lba_end(m, end_lba);
    m->st.sectors_written += n;
}

/* Read ahead; when commands wait, choose among those here now. */
static void ncq_sched_prefetch(NcqModel *m, int64_t t, int seg)
{
    bool cut = seg >= 0 ? ncq_pf_start_stream(m, seg, t) :
                          ncq_pf_start(m, t);

    if (cut) {
        m->sched.pf_cutoff = t;
    }
}

/*
 * Zero-latency access for a request within one track: when the head
 * lands inside the requested sectors, read from the next sector boundary
 * to the end, then the beginning on the next pass: one revolution from
 * that boundary instead of waiting for the first sector.  Returns false
 * when it does not apply (request spans tracks or the head lands
 * outside it).
 */
static bool ncq_zero_latency(const NcqModel *m, const NcqSlot *s,
                             NcqAccessTime *at)
{
    const NcqPhys *ph = &s->tgt.ph;
    uint64_t spt, pos, off, sect_u, j;
    uint64_t rev_ns_x = NCQ_REV;   /* one revolution in position units */

    spt = m->p.zones[ph->zone].spt;
    if (ph->sector + s->cmd.sectors > ncq_layout_track_end(m, ph)) {
        return false;
    }
    pos = ncq_rot_pos(m, at->ta);
    off = pos >= s->tgt.angle ? pos - s->tgt.angle :
          pos + NCQ_REV - s->tgt.angle;
    sect_u = NCQ_REV / spt;
    /* next sector boundary; a few ns past one counts as on it */
    if (off < NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm) {
        return false;
    }
    j = (off - NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm + sect_u) / sect_u;
    if (j >= s->cmd.sectors) {
        return false;
    }
    at->rot = j * NCQ_REV / spt > off ?
              (int64_t)((j * NCQ_REV / spt - off + m->p.rpm - 1) /
                        m->p.rpm) : 0;
    at->t_first = at->ta + at->rot;
    at->t_end = at->t_first +
                (int64_t)((rev_ns_x + m->p.rpm - 1) / m->p.rpm);
    return true;
}

/* A queued command that extends the access at either end; -1 if none. */
static int ncq_cluster_next(const NcqModel *m, const NcqSlot *lead,
                            const NcqAccess *a, bool *before)
{
    int i;

    for (i = 0; i < m->q.n; i++) {
        const NcqSlot *f = &m->q.slot[m->q.order[i]];

        *before = f->cmd.lba + f->cmd.sectors == a->start;
        if (f->cmd.op == lead->cmd.op && f->cmd.queued &&
            (*before || f->cmd.lba == a->end) &&
            f->cmd.fua == lead->cmd.fua &&
            a->total + f->cmd.sectors <= m->s.clustering_sectors) {
            return m->q.order[i];
        }
    }
    return -1;
}

/*
 * Take @idx from the queue with the queued commands it clusters with
 * (grown backwards, then forwards, in LBA order).
 */
static void ncq_gather(NcqModel *m, int idx, NcqAccess *a)
{
    const NcqSlot *lead = &m->q.slot[idx];
    int i, j, id;
    bool before;

    ncq_queue_remove(m, idx);
    a->members[0] = idx;
    a->nm = 1;
    a->start = lead->cmd.lba;
    a->end = lead->cmd.lba + lead->cmd.sectors;
    a->total = lead->cmd.sectors;
    while (m->s.clustering_sectors && lead->cmd.queued &&
           (id = ncq_cluster_next(m, lead, a, &before)) >= 0) {
        const NcqSlot *f = &m->q.slot[id];

        if (before) {
            for (j = a->nm; j > 0; j--) {
                a->members[j] = a->members[j - 1];
            }
            a->members[0] = id;
            a->start = f->cmd.lba;
        } else {
            a->members[a->nm] = id;
            a->end += f->cmd.sectors;
        }
        a->nm++;
        a->total += f->cmd.sectors;
        ncq_queue_remove(m, id);
    }
    a->total = 0;
    for (i = 0; i < a->nm; i++) {
        a->total += m->q.slot[a->members[i]].cmd.sectors;
        a->marks[i] = a->total;
    }
}

/* Time the access @a decided at @t, led by slot @lead. */
static void ncq_time_access(NcqModel *m, const NcqSlot *lead, NcqAccess *a,
                            int64_t t, int64_t decide_ns, NcqAccessTime *at)
{
    const NcqSlot *first = &m->q.slot[a->members[0]];
    bool wr = lead->cmd.op == NCQ_OP_WRITE;
    bool cont = ncq_continues(m, a->start);
    /* only the head's place matters for the seek: no angle needed */
    NcqMechState from = { .cyl = m->mech.cyl, .head = m->mech.head };
    NcqTarget to = first->tgt;
    NcqPosTime pt;

    at->ovh = ncq_cmd_overhead(m, lead) + decide_ns;
    if (ncq_chained(m, lead, t)) {
        /*
         * chosen and set up while the access it continues ran: a pause
         * here would let its first sector pass and cost a revolution
         */
        at->ovh = 0;
    }
    at->ts = t + at->ovh;
    to.write = to.write && !cont;
    at->sk = ncq_pos_seek(m, from, &to, &pt);
    if (at->sk && m->p.seek_jitter_ns && !cont) {
        at->sk += (int64_t)(ncq_rng_next(&m->rng) %
                            (uint64_t)(m->p.seek_jitter_ns + 1));
    }
    at->ta = at->ts + at->sk;
    if (wr) {
        /*
         * No sector before its data.  The data comes from @t, or, for a
         * command set up while the access it continues ran, from then:
         * the drive buffers it while the head writes the one before.
         */
        int64_t from_t = ncq_chained(m, lead, t) ?
                         lead->c.arrival_ns + ncq_cmd_overhead(m, lead) : t;
        int64_t ready = from_t + ncq_write_lead(m, &to.ph, 0, a->total);

        at->ta = at->ta > ready ? at->ta : ready;
    }
    /* a write into a media cache's log starts wherever the head lands */
    at->rot = m->p.mc_sectors && wr ? 0 :
              ncq_rot_wait(m, at->ta, first->tgt.angle);
    at->t_first = at->ta + at->rot;
    if (m->s.zero_latency && a->nm == 1 && !(m->p.mc_sectors && wr) &&
        ncq_zero_latency(m, first, at)) {
        a->mark_t[0] = at->t_end;
        at->ecyl = first->tgt.ph.cyl;
        at->ehead = first->tgt.ph.head;
    } else {
        at->t_end = ncq_media_walk_from(m, &first->tgt.ph, a->total,
                                        at->t_first, &at->ecyl, &at->ehead,
                                        a->marks, a->mark_t, a->nm);
    }
}

/* Each member completes when its last sector is done (and sent). */
static void ncq_complete_access(NcqModel *m, const NcqAccess *a,
                                const NcqAccessTime *at, int64_t t, int lead,
                                NcqReason reason)
{
    bool wr = m->q.slot[lead].cmd.op == NCQ_OP_WRITE;
    int i;

    for (i = 0; i < a->nm; i++) {
        NcqService sv = {
            .dispatch_ns = t,
            .overhead_ns = at->ovh,
            .seek_ns = at->sk,
            .rotate_ns = at->ta - at->ts - at->sk + at->rot,
            .transfer_ns = a->mark_t[i] - at->t_first,
            .media_start_ns = at->ts,
            .media_end_ns = at->t_end,
            .access_id = m->sched.access_seq,
            .reason = a->members[i] == lead ? reason : NCQ_REASON_CLUSTERED,
            .complete_ns = a->mark_t[i],
        };

        if (!wr) {
            int64_t bus = at->t_first + ncq_bus_ns(m, a->marks[i]);

            sv.complete_ns = (a->mark_t[i] > bus ? a->mark_t[i] : bus) +
                             ncq_bus_ns(m, 1);
        }
        ncq_slot_complete(m, &m->q.slot[a->members[i]], &sv);
    }
}

/*
 * A write larger than the whole write cache, with the cache on, passes
 * through the buffer as through a ring: it is acknowledged once what is
 * not yet on the media fits in the buffer (and all its data has arrived),
 * and its last write_cache_sectors are then the cache's data being
 * destaged: volatile until written, and a FLUSH waits for them.  Returns
 * true when @a is such a write; its completion mark moves up.
 */
static bool ncq_write_spill(NcqModel *m, NcqAccess *a,
                            const NcqAccessTime *at, int64_t t)
{
    const NcqSlot *s = &m->q.slot[a->members[0]];
    uint32_t keep = m->p.write_cache_sectors, c, h;
    int64_t on_media, data_in;

    if (s->cmd.op != NCQ_OP_WRITE || !m->s.write_cache || s->cmd.fua ||
        a->nm != 1 || a->total <= keep) {
        return false;
    }
    on_media = ncq_media_walk_from(m, &s->tgt.ph, a->total - keep,
                                   at->t_first, &c, &h, NULL, NULL, 0);
    data_in = t + ncq_bus_ns(m, a->total);
    a->mark_t[0] = on_media > data_in ? on_media : data_in;
    return true;
}

/*
 * Drive-managed SMR: a write goes to the media cache's log (after the
 * cleaning that makes room for it), a read of cached data to where the
 * cache holds it; the access's first command gets that place on the
 * platters.  Returns when the access may begin.
 */
static int64_t ncq_media_cache_redirect(NcqModel *m, NcqAccess *a, int64_t t,
                                        uint64_t *end_lba)
{
    NcqSlot *first = &m->q.slot[a->members[0]];
    uint64_t where;

    *end_lba = a->end;
    if (!m->p.mc_sectors) {
        return t;
    }
    if (first->cmd.op == NCQ_OP_WRITE) {
        t += ncq_mc_make_room(m, t, a->total);
        where = ncq_mc_append(m, a->start, a->total);
    } else if (!ncq_mc_lookup(m, a->start, a->total, &where)) {
        return t;
    }
    ncq_target_of(m, where, first->cmd.op == NCQ_OP_WRITE, &first->tgt);
    *end_lba = where + a->total;
    return t;
}

/* Serve slot @idx (and what clusters with it) as one media access. */
static void ncq_serve(NcqModel *m, int idx, int64_t t, NcqReason reason,
                      int64_t decide_ns)
{
    bool wr = m->q.slot[idx].cmd.op == NCQ_OP_WRITE, spill;
    int64_t end, t_media;
    uint64_t end_lba;
    NcqAccessTime at;
    NcqAccess a;

    ncq_gather(m, idx, &a);
    t_media = ncq_media_cache_redirect(m, &a, t, &end_lba);
    ncq_time_access(m, &m->q.slot[idx], &a, t_media, decide_ns, &at);
    spill = ncq_write_spill(m, &a, &at, t);
    m->sched.access_seq++;
    ncq_complete_access(m, &a, &at, t, idx, reason);
    m->st.clustered += a.nm - 1;
    /* an injected slow sector keeps the mechanism retrying (fault.c) */
    end = ncq_cdl_mech_end(m, a.members, a.nm,
                           at.t_end + ncq_fault_hold(m, a.members, a.nm));
    ncq_fault_note_recovery(m, a.members, a.nm, end);
    ncq_mech_begin(m, spill ? NCQ_MECH_DESTAGE : NCQ_MECH_CMD, end);
    m->sched.plan_cutoff = t;
    ncq_head_move(m, at.ecyl, at.ehead);
    ncq_head_lba_end(m, end_lba);
    if (wr) {
        ncq_cache_written(m, a.start, a.total);
        ncq_wcache_remove(m, a.start, a.total);
        if (spill) {
            ncq_wcache_destage(m, a.end - m->p.write_cache_sectors,
                               m->p.write_cache_sectors);
        }
        m->st.sectors_written += a.total;
    } else {
        ncq_cache_read_done(m, a.start, a.total);
        m->st.sectors_read += a.total;
    }
}

/*
 * The queued read to serve by reading on from segment @sg, which ends
 * where the head is: the lowest one starting in it, however far it ends
 * (its data passes through the buffer as the media delivers it).  -1
 * when none may go now.
 */
static int ncq_stream_pick(const NcqModel *m, int64_t t, int sg)
{
    const NcqSettings *s = &m->s;
    uint64_t lo = m->cache.seg[sg].start, hi = m->cache.seg[sg].end;
    int i, best = -1;

    for (i = 0; i < m->q.n; i++) {
        int idx = m->q.order[i];
        const NcqSlot *q;

        /* rd_lo in [lo, hi] */
        if (m->q.rd_lo[idx] - lo > hi - lo ||
            (best >= 0 && m->q.rd_lo[idx] >= m->q.rd_lo[best])) {
            continue;
        }
        q = &m->q.slot[idx];
        if (s->honour_prio && s->prio_timeout_ns > 0 && q->cmd.prio &&
            t - q->c.arrival_ns >= s->prio_timeout_ns) {
            continue;
        }
        best = idx;
    }
    if (best < 0 ||
        (ncq_policy_ops[s->policy].stream_oldest_only &&
         best != m->q.order[0])) {
        return -1;
    }
    if (s->honour_prio && !m->q.slot[best].cmd.prio) {
        for (i = 0; i < m->q.n; i++) {
            if (m->q.slot[m->q.order[i]].cmd.prio) {
                return -1;          /* high priority goes first */
            }
        }
    }
    return best;
}

/* More queued continuations ride on the same read-ahead. */
static void ncq_stream_riders(NcqModel *m, int64_t t)
{
    int i = 0;

    while (i < m->q.n) {
        int idx = m->q.order[i];
        NcqSlot *q = &m->q.slot[idx];

        if (q->cmd.op == NCQ_OP_READ && !q->cmd.fua && q->cmd.queued &&
            q->cmd.lba >= m->ra.lba && q->cmd.lba <= m->ra.lba + m->ra.n) {
            ncq_queue_remove(m, idx);
            if (ncq_pf_stream_hit(m, q, t, true)) {
                continue;
            }
            /* too far ahead: back in the queue (it was at position i) */
            ncq_queue_insert_at(m, i, idx);
        }
        i++;
    }
}

/*
 * Queued reads that continue the data just read under the head are served
 * by reading on (as a read-ahead) instead of as new accesses, which would
 * lose a revolution to the command overhead.  Not when a time-out is due,
 * and under FCFS only for the oldest command.
 */
static bool ncq_serve_stream(NcqModel *m, int64_t t)
{
    int i, sg = -1, best;

    if (m->p.readahead_sectors == 0 || m->q.n == 0 ||
        m->mech.lba_end >= m->p.capacity || ncq_starving(m, t)) {
        return false;
    }
    for (i = 0; i < NCQ_MAX_SEGS && i < (int)m->p.cache_segments; i++) {
        if (m->cache.seg[i].valid &&
            m->cache.seg[i].end == m->mech.lba_end) {
            sg = i;
            break;
        }
    }
    if (sg < 0) {
        return false;
    }
    best = ncq_stream_pick(m, t, sg);
    if (best < 0) {
        return false;
    }
    ncq_queue_remove(m, best);
    ncq_sched_prefetch(m, t, sg);
    if (m->mech.op != NCQ_MECH_PREFETCH ||
        !ncq_pf_stream_hit(m, &m->q.slot[best], t, true)) {
        /* cannot happen: undo, put it back in arrival order */
        ncq_pf_stop(m, t);
        ncq_queue_reinsert(m, best);
        return false;
    }
    ncq_stream_riders(m, t);
    return true;
}

/*
 * A FLUSH at the head of the queue: it completes once the write cache
 * is empty.  Returns true when the mechanism went to destage for it.
 */
static bool ncq_serve_flush(NcqModel *m, int64_t t)
{
    NcqSlot *s = &m->q.slot[NCQ_MAX_TAGS];
    NcqService sv = {
        .overhead_ns = m->p.ovh_other_ns,
        .complete_ns = t + m->p.ovh_other_ns,
        .reason = NCQ_REASON_ONLY,
    };

    ncq_slot_dispatch(m, s, t);
    if (m->wc.ndirty > 0) {
        ncq_start_destage(m, t);
        return true;
    }
    ncq_queue_remove(m, NCQ_MAX_TAGS);
    sv.dispatch_ns = s->c.dispatch_ns;
    sv.transfer_ns = t - s->c.dispatch_ns;
    ncq_slot_complete(m, s, &sv);
    return false;
}

/* A write the write-back cache takes once it has room waits for it. */
static bool ncq_write_waits(const NcqModel *m)
{
    int i;

    for (i = 0; i < m->q.n; i++) {
        if (ncq_wcache_cacheable(m, &m->q.slot[m->q.order[i]].cmd)) {
            return true;
        }
    }
    return false;
}

/*
 * Nearly full write cache, or a write waits for room: make room first,
 * unless a command starves.
 */
static bool ncq_must_destage(const NcqModel *m, int64_t t)
{
    return m->wc.ndirty > 0 &&
           (m->wc.dirty_sectors * 4 >=
            (uint64_t)m->p.write_cache_sectors * 3 ||
            m->wc.ndirty * 4 >= NCQ_MAX_DIRTY * 3 || ncq_write_waits(m)) &&
           !ncq_starving(m, t);
}

/*
 * Writes that waited for room in the write-back cache go in, in arrival
 * order, as the room the destage made allows.
 */
static void ncq_take_waiting_writes(NcqModel *m, int64_t t)
{
    int i = 0;

    while (m->s.write_cache && i < m->q.n) {
        int idx = m->q.order[i];

        if (!ncq_wcache_cacheable(m, &m->q.slot[idx].cmd)) {
            i++;
            continue;
        }
        ncq_queue_remove(m, idx);
        if (!ncq_wcache_take(m, &m->q.slot[idx], t)) {
            ncq_queue_insert_at(m, i, idx);
            return;                 /* later ones wait behind it */
        }
    }
}

/*
 * Queued commands whose missed duration limit ends them (cdl.c) complete
 * now, without a media access.
 */
static void ncq_cdl_sweep(NcqModel *m, int64_t t)
{
    int i = 0;

    if (!m->cdl.enabled) {
        return;                 /* no queue walk on the decision's path */
    }
    while (i < m->q.n) {
        int idx = m->q.order[i];
        NcqSlot *s = &m->q.slot[idx];
        NcqService sv = {
            .dispatch_ns = t,
            .complete_ns = t + m->p.ovh_other_ns,
            .overhead_ns = m->p.ovh_other_ns,
            .reason = NCQ_REASON_TIMEOUT,
        };

        if (!ncq_cdl_queued_ends(m, s, t)) {
            i++;
            continue;
        }
        ncq_queue_remove(m, idx);
        ncq_slot_dispatch(m, s, t);
        ncq_slot_complete(m, s, &sv);
        m->st.timeouts_forced++;
    }
}

/*
 * The spindle is at rest and the work waiting needs the media: it spins up
 * first (true).  A FLUSH with nothing to write needs no media.
 */
static bool ncq_spin_up_first(NcqModel *m, int64_t t)
{
    bool flush_only = m->q.n == 1 && m->q.order[0] == NCQ_MAX_TAGS &&
                      m->q.slot[NCQ_MAX_TAGS].cmd.op == NCQ_OP_FLUSH;

    if (!m->mech.stopped || (m->q.n == 0 && m->wc.ndirty == 0) ||
        (flush_only && m->wc.ndirty == 0)) {
        return false;
    }
    ncq_mech_begin(m, NCQ_MECH_SPINUP, t + m->p.spinup_ns);
    return true;
}

/* The mechanism is free at @t: give it its next work, if any. */
void ncq_sched_decide(NcqModel *m, int64_t t)
{
    for (;;) {
        NcqReason reason;
        int64_t dec;
        int idx;

        if (m->mech.op != NCQ_MECH_IDLE) {
            return;
        }
        ncq_take_waiting_writes(m, t);
        ncq_cdl_sweep(m, t);
        ncq_cache_serve_queued(m, t);
        if (ncq_spin_up_first(m, t)) {
            return;
        }
        if (ncq_serve_stream(m, t)) {
            return;
        }
        if (m->ra.armed && (m->q.n == 0 || m->p.min_readahead_sectors)) {
            ncq_sched_prefetch(m, t, -1);
            if (m->mech.op != NCQ_MECH_IDLE) {
                return;
            }
        }
        ncq_pf_disarm(m);
        if (m->q.n == 0) {
            if (m->wc.ndirty > 0) {
                ncq_start_destage(m, t);
            } else {
                ncq_mc_idle(m, t);
            }
            return;
        }
        if (m->q.order[0] == NCQ_MAX_TAGS &&
            m->q.slot[NCQ_MAX_TAGS].cmd.op == NCQ_OP_FLUSH) {
            if (ncq_serve_flush(m, t)) {
                return;
            }
            continue;
        }
        if (ncq_must_destage(m, t)) {
            ncq_start_destage(m, t);
            ncq_take_waiting_writes(m, t);  /* into the room it frees */
            return;
        }
        idx = ncq_sched_pick(m, t, &reason, &dec);
        m->sched.pf_cutoff = INT64_MAX;
        ncq_serve(m, idx, t, reason, dec);
        return;
    }
}
