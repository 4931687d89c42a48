/*
 * ncq-model: firmware queue and scheduler (FCFS, SSTF, C-LOOK, SPTF, aged
 * SPTF), starvation and priority time-outs, in-queue clustering, and the
 * mechanism's idle work (read-ahead, destage).
 *
 * Decisions happen only when the mechanism becomes free or when a command
 * arrives at an idle mechanism, so their times do not depend on how the
 * caller polls the model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"

static int64_t ncq_cmd_overhead(const NcqModel *m, const NcqSlot *s)
{
    return s->cmd.op == NCQ_OP_WRITE ? m->p.ovh_write_ns :
           m->p.ovh_read_miss_ns;
}

static void ncq_q_remove(NcqModel *m, int idx)
{
    int i;

    for (i = 0; i < m->nq; i++) {
        if (m->qorder[i] == idx) {
            for (; i + 1 < m->nq; i++) {
                m->qorder[i] = m->qorder[i + 1];
            }
            m->nq--;
            return;
        }
    }
}

int ncq_sched_pick(NcqModel *m, int64_t t, NcqReason *reason,
                   int64_t *decide_ns)
{
    const NcqSettings *s = &m->s;
    int cand[NCQ_SLOTS];
    int ncand = 0, i, best = -1, best_pure = -1;
    bool any_low = false;

    *decide_ns = 0;
    if (m->nq == 0) {
        return -1;
    }
    if (m->nq == 1) {
        *reason = NCQ_REASON_ONLY;
        return m->qorder[0];
    }
    if (s->honour_prio && s->prio_timeout_ns > 0) {
        for (i = 0; i < m->nq; i++) {
            NcqSlot *q = &m->slot[m->qorder[i]];

            if (q->cmd.prio && t - q->c.arrival_ns >= s->prio_timeout_ns) {
                *reason = NCQ_REASON_TIMEOUT;
                m->st.prio_forced++;
                return m->qorder[i];
            }
        }
    }
    if (s->starvation_timeout_ns > 0 &&
        t - m->slot[m->qorder[0]].c.arrival_ns >= s->starvation_timeout_ns) {
        *reason = NCQ_REASON_TIMEOUT;
        m->st.timeouts_forced++;
        return m->qorder[0];
    }
    for (i = 0; i < m->nq; i++) {
        NcqSlot *q = &m->slot[m->qorder[i]];

        if (s->honour_prio && !q->cmd.prio) {
            any_low = true;
            continue;
        }
        cand[ncand++] = m->qorder[i];
    }
    if (ncand == 0) {
        /* no high priority command: everyone is a candidate */
        any_low = false;
        for (i = 0; i < m->nq; i++) {
            cand[ncand++] = m->qorder[i];
        }
    }
    if (m->p.plan_ahead || m->pf_cutoff != INT64_MAX) {
        /*
         * Only commands known when the choice was made: when the previous
         * access was planned (plan_ahead), or when its data ended before
         * the minimum read-ahead.
         */
        int64_t cut = m->p.plan_ahead ? m->plan_cutoff : INT64_MAX;
        int k = 0;

        if (m->pf_cutoff < cut) {
            cut = m->pf_cutoff;
        }
        for (i = 0; i < ncand; i++) {
            if (m->slot[cand[i]].c.arrival_ns <= cut) {
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
    *reason = any_low ? NCQ_REASON_PRIORITY : NCQ_REASON_POLICY;
    if (ncand == 1) {
        return cand[0];
    }

    switch (s->policy) {
    case NCQ_POLICY_FCFS:
        best = cand[0];
        break;
    case NCQ_POLICY_SSTF: {
        uint32_t bd = UINT32_MAX;

        for (i = 0; i < ncand; i++) {
            NcqSlot *q = &m->slot[cand[i]];
            uint32_t d = q->cyl > m->cur_cyl ? q->cyl - m->cur_cyl :
                         m->cur_cyl - q->cyl;

            if (d < bd) {
                bd = d;
                best = cand[i];
            }
        }
        break;
    }
    case NCQ_POLICY_CLOOK: {
        int wrap = -1;

        for (i = 0; i < ncand; i++) {
            NcqSlot *q = &m->slot[cand[i]];

            if (q->cmd.lba >= m->last_lba_end) {
                if (best < 0 || q->cmd.lba < m->slot[best].cmd.lba) {
                    best = cand[i];
                }
            } else if (wrap < 0 || q->cmd.lba < m->slot[wrap].cmd.lba) {
                wrap = cand[i];
            }
        }
        if (best < 0) {
            best = wrap;
        }
        break;
    }
    case NCQ_POLICY_SPTF:
    case NCQ_POLICY_ASPTF:
    default: {
        int64_t dec = m->p.sched_eval_ns * ncand;
        int64_t be = INT64_MAX, bp = INT64_MAX;
        /* rotational position when the seek can start, per op type */
        uint64_t p_rd = ncq_rot_pos(m, t + dec + m->p.ovh_read_miss_ns);
        uint64_t p_wr = ncq_rot_pos(m, t + dec + m->p.ovh_write_ns);

        *decide_ns = dec;
        for (i = 0; i < ncand; i++) {
            NcqSlot *q = &m->slot[cand[i]];
            int64_t eff;
            int64_t pos = ncq_position_time_at(m, m->cur_cyl, m->cur_head,
                                               q->cmd.op == NCQ_OP_WRITE ?
                                               p_wr : p_rd, q);

            if (pos < bp) {
                bp = pos;
                best_pure = cand[i];
            }
            eff = pos;
            if (s->policy == NCQ_POLICY_ASPTF) {
                /* credit = weight * age = age_us * weight_milli */
                int64_t age_us = (t - q->c.arrival_ns) / 1000;
                int64_t w = s->aging_weight_milli;

                eff -= w && age_us > INT64_MAX / 4 / w ? INT64_MAX / 4 :
                       age_us * w;
            }
            if (eff < be) {
                be = eff;
                best = cand[i];
            }
        }
        if (best != best_pure && *reason == NCQ_REASON_POLICY) {
            *reason = NCQ_REASON_AGED;
        }
        break;
    }
    }
    return best;
}

/* Start one destage access of dirty data. */
static void ncq_start_destage(NcqModel *m, int64_t t)
{
    int i, best = -1, wrap = -1;
    NcqSlot tmp;
    NcqPhys ph;
    int64_t sk, pos, end;
    uint32_t n, ec, eh;
    uint64_t lba;

    if (m->s.policy == NCQ_POLICY_SPTF || m->s.policy == NCQ_POLICY_ASPTF) {
        /* the firmware destages by positioning time too */
        uint64_t p0 = ncq_rot_pos(m, t);
        int64_t bp = INT64_MAX;

        tmp.cmd.op = NCQ_OP_WRITE;
        for (i = 0; i < m->ndirty; i++) {
            ncq_layout_map(m, m->dirty[i].lba, &ph);
            tmp.cyl = ph.cyl;
            tmp.head = ph.head;
            tmp.angle = ncq_layout_angle(m, &ph);
            pos = ncq_position_time_at(m, m->cur_cyl, m->cur_head, p0, &tmp);
            if (pos < bp) {
                bp = pos;
                best = i;
            }
        }
    } else {
        /* C-LOOK */
        for (i = 0; i < m->ndirty; i++) {
            uint64_t l = m->dirty[i].lba;

            if (l >= m->last_lba_end) {
                if (best < 0 || l < m->dirty[best].lba) {
                    best = i;
                }
            } else if (wrap < 0 || l < m->dirty[wrap].lba) {
                wrap = i;
            }
        }
        if (best < 0) {
            best = wrap;
        }
    }
    lba = m->dirty[best].lba;
    n = m->dirty[best].n < NCQ_DESTAGE_MAX ? m->dirty[best].n :
        NCQ_DESTAGE_MAX;
    ncq_wcache_remove(m, lba, n);
    ncq_cache_fill(m, lba, n);      /* the data stays readable */
    m->pf_cutoff = INT64_MAX;
    ncq_layout_map(m, lba, &ph);
    tmp.cmd.op = NCQ_OP_WRITE;
    tmp.cyl = ph.cyl;
    tmp.head = ph.head;
    tmp.angle = ncq_layout_angle(m, &ph);
    pos = ncq_position_time(m, m->cur_cyl, m->cur_head, t, &tmp, &sk);
    end = ncq_media_walk_from(m, &ph, n, t + pos, &ec, &eh, NULL, NULL, 0);
    m->mech = NCQ_MECH_DESTAGE;
    m->mech_until = end;
    m->cur_cyl = ec;
    m->cur_head = eh;
    m->last_lba_end = lba + n;
    m->destage.lba = lba;
    m->destage.n = n;
    m->st.sectors_written += n;
}

static void ncq_start_prefetch(NcqModel *m, int64_t t)
{
    uint64_t lba = m->last_lba_end;
    uint64_t n = m->p.readahead_sectors;
    NcqSlot tmp;
    NcqPhys ph;
    int64_t sk, pos;

    m->pf_armed = false;
    if (lba >= m->p.capacity || !m->seg[m->pf_seg].valid ||
        m->seg[m->pf_seg].end != lba) {
        return;
    }
    if (n > m->p.capacity - lba) {
        n = m->p.capacity - lba;
    }
    ncq_layout_map(m, lba, &ph);
    tmp.cmd.op = NCQ_OP_READ;
    tmp.cyl = ph.cyl;
    tmp.head = ph.head;
    tmp.angle = ncq_layout_angle(m, &ph);
    pos = ncq_position_time(m, m->cur_cyl, m->cur_head, t, &tmp, &sk);
    m->pf_lba = lba;
    m->pf_n = n;
    m->pf_min_n = m->p.min_readahead_sectors < n ?
                  m->p.min_readahead_sectors : n;
    m->pf_first = t + pos;
    m->mech = NCQ_MECH_PREFETCH;
    m->pf_ph = ph;
    m->pf_min_end = t;
    m->pf_min_cyl = m->pf_end_cyl = ph.cyl;
    m->pf_min_head = m->pf_end_head = ph.head;
    if (m->pf_min_n) {
        m->pf_min_end = ncq_media_walk_from(m, &ph, m->pf_min_n, t + pos,
                                            &m->pf_min_cyl, &m->pf_min_head,
                                            NULL, NULL, 0);
    }
    if (m->nq > 0) {
        /*
         * Commands wait: read only the minimum.  The next one was chosen
         * when the data of the last ended, i.e. now.
         */
        m->pf_end_n = m->pf_min_n;
        m->mech_until = m->pf_min_end;
        m->pf_end_cyl = m->pf_min_cyl;
        m->pf_end_head = m->pf_min_head;
        m->pf_cutoff = t;
    } else {
        m->pf_end_n = n;
        m->mech_until = ncq_media_walk_from(m, &ph, n, t + pos,
                                            &m->pf_end_cyl, &m->pf_end_head,
                                            NULL, NULL, 0);
    }
    m->cur_cyl = ph.cyl;
    m->cur_head = ph.head;
}

/*
 * Zero-latency access for a request within one track: when the head
 * lands inside the requested sectors, read from the next sector boundary
 * to the end, then the beginning on the next pass: one revolution from
 * that boundary instead of waiting for the first sector.  Returns false
 * when it does not apply (request spans tracks or the head lands
 * outside it).
 */
static bool ncq_zero_latency(NcqModel *m, const NcqSlot *s, int64_t ta,
                             int64_t *rot, int64_t *t_first, int64_t *t_end)
{
    NcqPhys ph;
    uint64_t spt, pos, off, sect_u, j;
    uint64_t rev_ns_x = NCQ_REV;   /* one revolution in position units */

    ncq_layout_map(m, s->cmd.lba, &ph);
    spt = m->p.zones[ph.zone].spt;
    if (ph.sector + s->cmd.sectors > spt - m->p.spare_per_track) {
        return false;
    }
    pos = ncq_rot_pos(m, ta);
    off = pos >= s->angle ? pos - s->angle : pos + NCQ_REV - s->angle;
    sect_u = NCQ_REV / spt;
    /* next sector boundary; a few ns past one counts as on it */
    if (off < NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm) {
        return false;
    }
    j = (off - NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm + sect_u) / sect_u;
    if (j >= s->cmd.sectors) {
        return false;
    }
    *rot = j * NCQ_REV / spt > off ?
           (int64_t)((j * NCQ_REV / spt - off + m->p.rpm - 1) / m->p.rpm) :
           0;
    *t_first = ta + *rot;
    *t_end = *t_first + (int64_t)((rev_ns_x + m->p.rpm - 1) / m->p.rpm);
    return true;
}

static void ncq_serve(NcqModel *m, int idx, int64_t t, NcqReason reason,
                      int64_t decide_ns)
{
    NcqSlot *lead = &m->slot[idx], *first;
    int members[NCQ_SLOTS];
    uint32_t marks[NCQ_SLOTS];
    int64_t mark_t[NCQ_SLOTS];
    int nm = 1, i;
    uint64_t end = lead->cmd.lba + lead->cmd.sectors;
    uint32_t total = lead->cmd.sectors, ec, eh;
    int64_t ovh, ts, sk, ta, rot, t_first, t_end;
    bool wr = lead->cmd.op == NCQ_OP_WRITE;

    ncq_q_remove(m, idx);
    members[0] = idx;
    if (m->s.clustering_sectors && lead->cmd.queued) {
        uint64_t start = lead->cmd.lba;
        bool found = true;

        /* grow the access backwards, then forwards, in LBA order */
        while (found) {
            found = false;
            for (i = 0; i < m->nq; i++) {
                NcqSlot *f = &m->slot[m->qorder[i]];
                bool before = f->cmd.lba + f->cmd.sectors == start;

                if (f->cmd.op == lead->cmd.op && f->cmd.queued &&
                    (before || f->cmd.lba == end) &&
                    f->cmd.fua == lead->cmd.fua &&
                    total + f->cmd.sectors <= m->s.clustering_sectors) {
                    int j, id = m->qorder[i];

                    if (before) {
                        for (j = nm; j > 0; j--) {
                            members[j] = members[j - 1];
                        }
                        members[0] = id;
                        start = f->cmd.lba;
                    } else {
                        members[nm] = id;
                        end += f->cmd.sectors;
                    }
                    nm++;
                    total += f->cmd.sectors;
                    ncq_q_remove(m, id);
                    found = true;
                    break;
                }
            }
        }
    }
    total = 0;
    for (i = 0; i < nm; i++) {
        total += m->slot[members[i]].cmd.sectors;
        marks[i] = total;
    }
    first = &m->slot[members[0]];

    ovh = ncq_cmd_overhead(m, lead) + decide_ns;
    ts = t + ovh;
    ncq_position_time(m, m->cur_cyl, m->cur_head, ts, first, &sk);
    if (sk && m->p.seek_jitter_ns) {
        sk += (int64_t)(ncq_rng_next(&m->rng) %
                        (uint64_t)(m->p.seek_jitter_ns + 1));
    }
    ta = ts + sk;
    if (wr && ta < t + ncq_bus_ns(m, total)) {
        ta = t + ncq_bus_ns(m, total);   /* data not yet in the buffer */
    }
    rot = ncq_rot_wait(m, ta, first->angle);
    t_first = ta + rot;
    if (m->s.zero_latency && nm == 1 &&
        ncq_zero_latency(m, first, ta, &rot, &t_first, &t_end)) {
        mark_t[0] = t_end;
        ec = first->cyl;
        eh = first->head;
    } else {
        t_end = ncq_media_walk_from(m, &first->ph, total, t_first, &ec,
                                    &eh, marks, mark_t, nm);
    }
    m->access_seq++;
    for (i = 0; i < nm; i++) {
        NcqSlot *s = &m->slot[members[i]];
        NcqCompletion *c = &s->c;

        c->dispatch_ns = t;
        c->overhead_ns = ovh;
        c->seek_ns = sk;
        c->rotate_ns = ta - ts - sk + rot;
        c->transfer_ns = mark_t[i] - t_first;
        c->media_start_ns = ts;
        c->media_end_ns = t_end;
        c->access_id = m->access_seq;
        c->cache_hit = false;
        c->reason = members[i] == idx ? reason : NCQ_REASON_CLUSTERED;
        if (wr) {
            c->complete_ns = mark_t[i];
        } else {
            int64_t bus = t_first + ncq_bus_ns(m, marks[i]);

            c->complete_ns = (mark_t[i] > bus ? mark_t[i] : bus) +
                             ncq_bus_ns(m, 1);
        }
        ncq_slot_state(m, s, NCQ_SLOT_SERVICE);
        s->done_seq = ++m->done_seq;
    }
    m->st.clustered += nm - 1;
    m->mech = NCQ_MECH_CMD;
    /* an injected slow sector keeps the mechanism retrying (fault.c) */
    m->mech_until = t_end + ncq_fault_hold(m, members, nm);
    m->plan_cutoff = t;
    m->cur_cyl = ec;
    m->cur_head = eh;
    m->last_lba_end = end;
    if (wr) {
        ncq_cache_invalidate(m, first->cmd.lba, total);
        ncq_wcache_remove(m, first->cmd.lba, total);
        m->pf_armed = false;
        m->st.sectors_written += total;
    } else {
        m->pf_seg = ncq_cache_fill(m, first->cmd.lba, total);
        m->pf_armed = m->pf_seg >= 0 && m->p.readahead_sectors > 0;
        m->pf_consumed = end;
        m->st.sectors_read += total;
    }
}

/* Queued reads whose data reached the buffer since they arrived. */
static void ncq_serve_cached(NcqModel *m, int64_t t)
{
    int i = 0, seg, r;

    if (m->nchg == 0) {
        return;
    }
    while (i < m->nq) {
        int idx = m->qorder[i];
        NcqSlot *q = &m->slot[idx];
        int hit = 0;

        for (r = 0; r < m->nchg; r++) {
            hit |= (m->rd_lo[idx] < m->chg_hi[r]) &
                   (m->rd_hi[idx] > m->chg_lo[r]);
        }
        if (hit && ncq_cache_lookup(m, q->cmd.lba, q->cmd.sectors, t, &seg)) {
            ncq_q_remove(m, idx);
            ncq_serve_hit(m, q, t);
            continue;
        }
        i++;
    }
    m->nchg = 0;
}

/*
 * Queued reads that continue the data just read under the head are served
 * by reading on (as a read-ahead) instead of as new accesses, which would
 * lose a revolution to the command overhead.  Not when a time-out is due,
 * and under FCFS only for the oldest command.
 */
static bool ncq_serve_stream(NcqModel *m, int64_t t)
{
    const NcqSettings *s = &m->s;
    int i, sg = -1, best = -1;
    uint64_t lo, hi;
    bool any = false;

    if (m->p.readahead_sectors == 0 || m->nq == 0 ||
        m->last_lba_end >= m->p.capacity) {
        return false;
    }
    if (s->starvation_timeout_ns > 0 &&
        t - m->slot[m->qorder[0]].c.arrival_ns >= s->starvation_timeout_ns) {
        return false;
    }
    for (i = 0; i < NCQ_MAX_SEGS && i < (int)m->p.cache_segments; i++) {
        if (m->seg[i].valid && m->seg[i].end == m->last_lba_end) {
            sg = i;
            break;
        }
    }
    if (sg < 0) {
        return false;
    }
    lo = m->seg[sg].start;
    hi = m->seg[sg].end;
    for (i = 0; i < m->nq; i++) {
        int idx = m->qorder[i];
        NcqSlot *q;

        /* rd_lo in [lo, hi], ends at most a read-ahead beyond hi */
        if (m->rd_lo[idx] - lo > hi - lo ||
            m->rd_hi[idx] - hi > m->p.readahead_sectors ||
            (best >= 0 && m->rd_lo[idx] >= m->rd_lo[best])) {
            continue;
        }
        q = &m->slot[idx];
        if (s->honour_prio && s->prio_timeout_ns > 0 && q->cmd.prio &&
            t - q->c.arrival_ns >= s->prio_timeout_ns) {
            continue;
        }
        best = idx;
    }
    if (best < 0 ||
        (s->policy == NCQ_POLICY_FCFS && best != m->qorder[0])) {
        return false;
    }
    if (s->honour_prio && !m->slot[best].cmd.prio) {
        for (i = 0; i < m->nq; i++) {
            if (m->slot[m->qorder[i]].cmd.prio) {
                return false;       /* high priority goes first */
            }
        }
    }
    m->pf_seg = sg;
    m->pf_armed = true;
    ncq_q_remove(m, best);
    ncq_start_prefetch(m, t);
    if (m->mech != NCQ_MECH_PREFETCH ||
        !ncq_pf_stream_hit(m, &m->slot[best], t, true)) {
        /* cannot happen: undo, put it back in arrival order */
        ncq_pf_stop(m, t);
        m->qorder[m->nq++] = best;
        for (i = m->nq - 1; i > 0 &&
             m->slot[m->qorder[i - 1]].seq > m->slot[best].seq; i--) {
            m->qorder[i] = m->qorder[i - 1];
            m->qorder[i - 1] = best;
        }
        return false;
    }
    any = true;
    /* more queued continuations ride on the same read-ahead */
    i = 0;
    while (i < m->nq) {
        int idx = m->qorder[i];
        NcqSlot *q = &m->slot[idx];

        if (q->cmd.op == NCQ_OP_READ && !q->cmd.fua && q->cmd.queued &&
            q->cmd.lba >= m->pf_lba && q->cmd.lba <= m->pf_lba + m->pf_n) {
            ncq_q_remove(m, idx);
            if (ncq_pf_stream_hit(m, q, t, true)) {
                continue;
            }
            /* too far ahead: back in the queue (it was at position i) */
            memmove(&m->qorder[i + 1], &m->qorder[i],
                    (m->nq - i) * sizeof(m->qorder[0]));
            m->qorder[i] = idx;
            m->nq++;
        }
        i++;
    }
    return any;
}

void ncq_mech_decide(NcqModel *m, int64_t t)
{
    for (;;) {
        NcqReason reason;
        int64_t dec;
        int idx;

        if (m->mech != NCQ_MECH_IDLE) {
            return;
        }
        ncq_serve_cached(m, t);
        if (ncq_serve_stream(m, t)) {
            return;
        }
        if (m->pf_armed && (m->nq == 0 || m->p.min_readahead_sectors)) {
            ncq_start_prefetch(m, t);
            if (m->mech != NCQ_MECH_IDLE) {
                return;
            }
        }
        m->pf_armed = false;
        if (m->nq == 0) {
            if (m->ndirty > 0) {
                ncq_start_destage(m, t);
            }
            return;
        }
        if (m->qorder[0] == NCQ_MAX_TAGS &&
            m->slot[NCQ_MAX_TAGS].cmd.op == NCQ_OP_FLUSH) {
            NcqSlot *s = &m->slot[NCQ_MAX_TAGS];

            if (s->c.dispatch_ns < 0) {
                s->c.dispatch_ns = t;
            }
            if (m->ndirty > 0) {
                ncq_start_destage(m, t);
                return;
            }
            ncq_q_remove(m, NCQ_MAX_TAGS);
            s->c.overhead_ns = m->p.ovh_other_ns;
            s->c.transfer_ns = t - s->c.dispatch_ns;
            s->c.complete_ns = t + m->p.ovh_other_ns;
            s->c.reason = NCQ_REASON_ONLY;
            ncq_slot_state(m, s, NCQ_SLOT_SERVICE);
            s->done_seq = ++m->done_seq;
            continue;
        }
        if (m->ndirty > 0 &&
            (m->dirty_sectors * 4 >= (uint64_t)m->p.write_cache_sectors * 3 ||
             m->ndirty * 4 >= NCQ_MAX_DIRTY * 3) &&
            !(m->s.starvation_timeout_ns > 0 &&
              t - m->slot[m->qorder[0]].c.arrival_ns >=
              m->s.starvation_timeout_ns)) {
            /* nearly full write cache: make room first */
            ncq_start_destage(m, t);
            return;
        }
        idx = ncq_sched_pick(m, t, &reason, &dec);
        m->pf_cutoff = INT64_MAX;
        ncq_serve(m, idx, t, reason, dec);
        return;
    }
}
