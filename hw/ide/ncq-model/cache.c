/*
 * ncq-model: drive buffer, read side.  Segmented read cache (NcqReadCache)
 * and read-ahead (NcqReadAhead), both written only here; the write-back
 * cache is wcache.c.  Only timing is modelled: the data itself always
 * lives in the device's backing store.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-int.h"

uint32_t ncq_pf_progress(const NcqModel *m, int64_t t)
{
    if (m->mech.op != NCQ_MECH_PREFETCH) {
        return 0;
    }
    if (t >= m->mech.until) {
        return m->ra.end_n;
    }
    return ncq_media_done_by(m, m->ra.lba, m->ra.end_n, m->ra.first, t);
}

void ncq_cache_changed(NcqModel *m, uint64_t lo, uint64_t hi)
{
    NcqReadCache *rc = &m->cache;
    int i;

    if (hi <= lo) {
        return;
    }
    for (i = 0; i < rc->nchg; i++) {
        if (lo <= rc->chg_hi[i] && hi >= rc->chg_lo[i]) {
            break;          /* overlapping or adjacent: merge */
        }
    }
    if (i == rc->nchg) {
        if (rc->nchg < NCQ_CHG_RANGES) {
            rc->chg_lo[rc->nchg] = lo;
            rc->chg_hi[rc->nchg] = hi;
            rc->nchg++;
            return;
        }
        i = NCQ_CHG_RANGES - 1;     /* full: widen the last one */
    }
    if (lo < rc->chg_lo[i]) {
        rc->chg_lo[i] = lo;
    }
    if (hi > rc->chg_hi[i]) {
        rc->chg_hi[i] = hi;
    }
}

static void ncq_seg_extend(NcqModel *m, NcqSeg *sg, uint64_t end)
{
    ncq_cache_changed(m, sg->end < end ? sg->end : end, end);
    sg->end = end;
    if (sg->end - sg->start > m->p.segment_sectors) {
        sg->start = sg->end - m->p.segment_sectors;
    }
}

/* Stop the read-ahead at @t; returns the sectors it read. */
uint32_t ncq_pf_stop(NcqModel *m, int64_t t)
{
    NcqReadAhead *ra = &m->ra;
    uint32_t k;

    if (m->mech.op != NCQ_MECH_PREFETCH) {
        return 0;
    }
    k = ncq_pf_progress(m, t);
    if (m->cache.seg[ra->seg].valid && k) {
        ncq_seg_extend(m, &m->cache.seg[ra->seg], ra->lba + k);
    }
    if (k && k == ra->end_n) {
        ncq_head_move(m, ra->end_cyl, ra->end_head);
    } else if (k) {
        NcqPhys ph;

        ncq_layout_map(m, ra->lba + k - 1, &ph);
        ncq_head_move(m, ph.cyl, ph.head);
    }
    ncq_head_lba_end(m, ra->lba + k);
    ncq_mech_end(m, t);
    ra->armed = false;
    return k;
}

/*
 * The read-ahead ended as planned at @t: it goes on if it read its whole
 * run and the host still reads the stream.
 */
void ncq_pf_end(NcqModel *m, int64_t t)
{
    NcqReadAhead *ra = &m->ra;
    uint32_t k = ncq_pf_stop(m, t);
    const NcqSeg *sg = &m->cache.seg[ra->seg];

    ra->armed = k >= ra->n && sg->valid && sg->end == m->mech.lba_end &&
                m->mech.lba_end < ra->consumed + m->p.readahead_sectors;
}

void ncq_pf_disarm(NcqModel *m)
{
    m->ra.armed = false;
}

/*
 * The host read segment @seg up to @end.  Read-ahead keeps going while
 * the host stays within one read-ahead of the segment's end: returns true
 * when it is to restart (the mechanism is idle and the head is at the end
 * of that segment); the caller then lets the firmware decide.
 */
bool ncq_pf_consume(NcqModel *m, int seg, uint64_t end)
{
    NcqReadAhead *ra = &m->ra;
    NcqSeg *sg;

    if (seg < 0 || m->p.readahead_sectors == 0) {
        return false;
    }
    sg = &m->cache.seg[seg];
    if (seg != ra->seg) {
        if (sg->end != m->mech.lba_end || m->mech.op == NCQ_MECH_PREFETCH) {
            return false;
        }
        ra->seg = seg;
        ra->consumed = end;
    } else if (end > ra->consumed) {
        ra->consumed = end;
    }
    if (m->mech.op == NCQ_MECH_IDLE && m->q.n == 0 && sg->valid &&
        sg->end == m->mech.lba_end &&
        sg->end < ra->consumed + m->p.readahead_sectors) {
        ra->armed = true;
        return true;
    }
    return false;
}

/*
 * Read only the minimum read-ahead: it ends when that is read, where that
 * leaves the head.
 */
static void ncq_pf_cut_to_min(NcqModel *m)
{
    NcqReadAhead *ra = &m->ra;

    ra->end_n = ra->min_n;
    ra->end_cyl = ra->min_cyl;
    ra->end_head = ra->min_head;
    ncq_mech_until(m, ra->min_end);
}

/* A command waits for the mechanism: the read-ahead stops or shortens. */
void ncq_pf_command_waits(NcqModel *m, int64_t t)
{
    if (m->mech.op != NCQ_MECH_PREFETCH) {
        return;
    }
    if (t >= m->ra.min_end) {
        ncq_pf_stop(m, t);
    } else if (m->mech.until > m->ra.min_end) {
        ncq_pf_cut_to_min(m);   /* finish the minimum first */
    }
}

/* Where the minimum and the whole read-ahead end, from its first sector. */
static void ncq_pf_plan(NcqModel *m, uint32_t n, int64_t t_first)
{
    NcqReadAhead *ra = &m->ra;

    ra->n = n;
    ra->min_n = m->p.min_readahead_sectors < n ?
                m->p.min_readahead_sectors : n;
    ra->first = t_first;
    ra->min_cyl = ra->end_cyl = ra->ph.cyl;
    ra->min_head = ra->end_head = ra->ph.head;
    if (ra->min_n) {
        ra->min_end = ncq_media_walk_from(m, &ra->ph, ra->min_n, t_first,
                                          &ra->min_cyl, &ra->min_head,
                                          NULL, NULL, 0);
    }
}

/*
 * Start reading ahead from where the last access ended, at @t.  Returns
 * true when it started but reads only the minimum because commands wait;
 * the next command was chosen when the data of the last ended, i.e. now.
 */
bool ncq_pf_start(NcqModel *m, int64_t t)
{
    NcqReadAhead *ra = &m->ra;
    uint64_t lba = m->mech.lba_end;
    uint64_t n = m->p.readahead_sectors;
    NcqTarget to;
    NcqPosTime pt;
    int64_t pos;

    ra->armed = false;
    if (lba >= m->p.capacity || !m->cache.seg[ra->seg].valid ||
        m->cache.seg[ra->seg].end != lba) {
        return false;
    }
    if (n > m->p.capacity - lba) {
        n = m->p.capacity - lba;
    }
    ncq_target_of(m, lba, false, &to);
    pos = ncq_pos_time(m, ncq_mech_state_at(m, t), t, &to, &pt);
    ra->lba = lba;
    ra->ph = to.ph;
    ra->min_end = t;
    ncq_pf_plan(m, n, t + pos);
    ncq_mech_begin(m, NCQ_MECH_PREFETCH, 0);
    ncq_head_move(m, to.ph.cyl, to.ph.head);
    if (m->q.n > 0) {
        ncq_pf_cut_to_min(m);
        return true;
    }
    ra->end_n = n;
    ncq_mech_until(m, ncq_media_walk_from(m, &ra->ph, n, t + pos,
                                          &ra->end_cyl, &ra->end_head,
                                          NULL, NULL, 0));
    return false;
}

/* Read-ahead from the end of segment @seg, which a queued read continues. */
bool ncq_pf_start_stream(NcqModel *m, int seg, int64_t t)
{
    m->ra.seg = seg;
    m->ra.armed = true;
    return ncq_pf_start(m, t);
}

/* A media read of [lba, lba + n) ended: keep it, read ahead after it. */
void ncq_cache_read_done(NcqModel *m, uint64_t lba, uint32_t n)
{
    m->ra.seg = ncq_cache_fill(m, lba, n);
    m->ra.armed = m->ra.seg >= 0 && m->p.readahead_sectors > 0;
    m->ra.consumed = lba + n;
}

/* A media write of [lba, lba + n): stale copies go, no read-ahead. */
void ncq_cache_written(NcqModel *m, uint64_t lba, uint32_t n)
{
    ncq_cache_invalidate(m, lba, n);
    m->ra.armed = false;
}

/* A read served from the buffer at @t: overhead and bus time only. */
void ncq_cache_serve_hit(NcqModel *m, NcqSlot *s, int64_t t)
{
    int64_t st = ncq_bus_start(m, t);
    int64_t bus = ncq_bus_ns(m, s->cmd.sectors);
    NcqService sv = {
        .dispatch_ns = t,
        .overhead_ns = m->p.ovh_read_hit_ns + (st - t),
        .transfer_ns = bus,
        .complete_ns = st + m->p.ovh_read_hit_ns + bus,
        .reason = NCQ_REASON_CACHE,
        .cache_hit = true,
    };

    ncq_bus_busy(m, sv.complete_ns);
    ncq_slot_complete(m, s, &sv);
    m->st.sectors_read += s->cmd.sectors;
}

/*
 * Lengthen the read-ahead to @need sectors for a read that continues it,
 * unless commands are waiting for it (@force: the read is taken from the
 * queue itself).  However long the read: the buffer is a ring for data
 * passing through (the host takes sectors as they come off the media), so
 * a drive keeps reading a stream whatever the size of its commands.
 */
static bool ncq_pf_lengthen(NcqModel *m, uint64_t need, bool force)
{
    NcqReadAhead *ra = &m->ra;

    if ((m->q.n > 0 && !force) || ra->lba + need > m->p.capacity) {
        return false;
    }
    ra->n = need;
    ra->end_n = need;
    ncq_mech_until(m, ncq_media_walk_from(m, &ra->ph, ra->n, ra->first,
                                          &ra->end_cyl, &ra->end_head,
                                          NULL, NULL, 0));
    return true;
}

/*
 * A read that continues the read-ahead in progress is served from it: it
 * completes when the read-ahead has passed its last sector.  The
 * read-ahead is lengthened to cover it when needed.
 */
bool ncq_pf_stream_hit(NcqModel *m, NcqSlot *s, int64_t t, bool force)
{
    NcqReadAhead *ra = &m->ra;
    NcqSeg *sg = &m->cache.seg[ra->seg];
    uint64_t lba = s->cmd.lba, need;
    uint32_t n = s->cmd.sectors, c, h;
    int64_t ready, st, done, bus;
    NcqService sv = {
        .dispatch_ns = t, .reason = NCQ_REASON_CACHE, .cache_hit = true,
    };

    if (m->mech.op != NCQ_MECH_PREFETCH || !sg->valid || sg->end != ra->lba ||
        lba < sg->start || lba > ra->lba + ra->n) {
        return false;
    }
    need = lba + n - ra->lba;
    if (need > ra->end_n && !ncq_pf_lengthen(m, need, force)) {
        return false;
    }
    ready = ncq_media_walk_from(m, &ra->ph, need, ra->first, &c, &h,
                                NULL, NULL, 0);
    st = ncq_bus_start(m, t);
    bus = ncq_bus_ns(m, n);
    done = st + m->p.ovh_read_hit_ns + bus;
    if (ready + ncq_bus_ns(m, 1) > done) {
        done = ready + ncq_bus_ns(m, 1);
    }
    ncq_bus_busy(m, done);
    sv.overhead_ns = m->p.ovh_read_hit_ns + (st - t);
    sv.transfer_ns = done - st - m->p.ovh_read_hit_ns;
    sv.complete_ns = done;
    ncq_slot_complete(m, s, &sv);
    if (lba + n > ra->consumed) {
        ra->consumed = lba + n;
    }
    m->st.sectors_read += n;
    return true;
}

bool ncq_cache_lookup(NcqModel *m, uint64_t lba, uint32_t n, int64_t t,
                      int *seg)
{
    uint64_t end = lba + n;
    int i;

    *seg = -1;
    for (i = 0; i < m->wc.ndirty; i++) {
        if (lba >= m->wc.dirty[i].lba &&
            end <= m->wc.dirty[i].lba + m->wc.dirty[i].n) {
            return true;
        }
    }
    for (i = 0; i < (int)m->p.cache_segments && i < NCQ_MAX_SEGS; i++) {
        NcqSeg *sg = &m->cache.seg[i];
        uint64_t send;

        if (!sg->valid) {
            continue;
        }
        send = sg->end;
        if (m->mech.op == NCQ_MECH_PREFETCH && i == m->ra.seg) {
            send = m->ra.lba + ncq_pf_progress(m, t);
        }
        if (lba >= sg->start && end <= send) {
            sg->lru = ++m->cache.lru_clock;
            *seg = i;
            return true;
        }
    }
    return false;
}

/* Queued reads whose data reached the buffer since they arrived. */
void ncq_cache_serve_queued(NcqModel *m, int64_t t)
{
    NcqReadCache *rc = &m->cache;
    int i = 0, seg, r;

    if (rc->nchg == 0) {
        return;
    }
    while (i < m->q.n) {
        int idx = m->q.order[i];
        NcqSlot *q = &m->q.slot[idx];
        int hit = 0;

        for (r = 0; r < rc->nchg; r++) {
            hit |= (m->q.rd_lo[idx] < rc->chg_hi[r]) &
                   (m->q.rd_hi[idx] > rc->chg_lo[r]);
        }
        if (hit && ncq_cache_lookup(m, q->cmd.lba, q->cmd.sectors, t, &seg)) {
            ncq_queue_remove(m, idx);
            ncq_cache_serve_hit(m, q, t);
            continue;
        }
        i++;
    }
    rc->nchg = 0;
}

int ncq_cache_fill(NcqModel *m, uint64_t lba, uint32_t n)
{
    NcqReadCache *rc = &m->cache;
    int nseg = m->p.cache_segments < NCQ_MAX_SEGS ?
               (int)m->p.cache_segments : NCQ_MAX_SEGS;
    int i, victim = 0;
    NcqSeg *sg;

    if (nseg == 0) {
        return -1;
    }
    for (i = 0; i < nseg; i++) {
        sg = &rc->seg[i];
        if (sg->valid && sg->end == lba) {
            ncq_seg_extend(m, sg, lba + n);
            sg->lru = ++rc->lru_clock;
            return i;
        }
    }
    for (i = 0; i < nseg; i++) {
        if (!rc->seg[i].valid) {
            victim = i;
            break;
        }
        if (rc->seg[i].lru < rc->seg[victim].lru) {
            victim = i;
        }
    }
    sg = &rc->seg[victim];
    sg->valid = true;
    sg->start = lba;
    sg->end = lba;
    ncq_seg_extend(m, sg, lba + n);
    sg->lru = ++rc->lru_clock;
    return victim;
}

void ncq_cache_invalidate(NcqModel *m, uint64_t lba, uint32_t n)
{
    int i;

    for (i = 0; i < NCQ_MAX_SEGS; i++) {
        NcqSeg *sg = &m->cache.seg[i];

        if (sg->valid && lba < sg->end && lba + n > sg->start) {
            sg->valid = false;
        }
    }
}

/* Power is lost at @t: the read-ahead stops, the buffer forgets. */
void ncq_cache_power_loss(NcqModel *m, int64_t t)
{
    int i;

    if (m->mech.op == NCQ_MECH_PREFETCH) {
        ncq_pf_stop(m, t);
    }
    m->ra.armed = false;
    for (i = 0; i < NCQ_MAX_SEGS; i++) {
        m->cache.seg[i].valid = false;
    }
}
