/*
 * ncq-model: drive buffer.  Segmented read cache with read-ahead, and the
 * write-back cache's dirty extents.  Only timing is modelled: the data
 * itself always lives in the device's backing store.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-int.h"

uint32_t ncq_pf_progress(const NcqModel *m, int64_t t)
{
    if (m->mech != NCQ_MECH_PREFETCH) {
        return 0;
    }
    if (t >= m->mech_until) {
        return m->pf_end_n;
    }
    return ncq_media_done_by(m, m->pf_lba, m->pf_end_n, m->pf_first, t);
}

void ncq_cache_changed(NcqModel *m, uint64_t lo, uint64_t hi)
{
    int i;

    if (hi <= lo) {
        return;
    }
    for (i = 0; i < m->nchg; i++) {
        if (lo <= m->chg_hi[i] && hi >= m->chg_lo[i]) {
            break;          /* overlapping or adjacent: merge */
        }
    }
    if (i == m->nchg) {
        if (m->nchg < NCQ_CHG_RANGES) {
            m->chg_lo[m->nchg] = lo;
            m->chg_hi[m->nchg] = hi;
            m->nchg++;
            return;
        }
        i = NCQ_CHG_RANGES - 1;     /* full: widen the last one */
    }
    if (lo < m->chg_lo[i]) {
        m->chg_lo[i] = lo;
    }
    if (hi > m->chg_hi[i]) {
        m->chg_hi[i] = hi;
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

uint32_t ncq_pf_stop(NcqModel *m, int64_t t)
{
    uint32_t k;

    if (m->mech != NCQ_MECH_PREFETCH) {
        return 0;
    }
    k = ncq_pf_progress(m, t);
    if (m->seg[m->pf_seg].valid && k) {
        ncq_seg_extend(m, &m->seg[m->pf_seg], m->pf_lba + k);
    }
    if (k && k == m->pf_end_n) {
        m->cur_cyl = m->pf_end_cyl;
        m->cur_head = m->pf_end_head;
    } else if (k) {
        NcqPhys ph;

        ncq_layout_map(m, m->pf_lba + k - 1, &ph);
        m->cur_cyl = ph.cyl;
        m->cur_head = ph.head;
    }
    m->last_lba_end = m->pf_lba + k;
    m->mech = NCQ_MECH_IDLE;
    m->mech_until = t;
    m->pf_armed = false;
    return k;
}

/*
 * The host read segment @seg up to @end.  Read-ahead keeps going while
 * the host stays within one read-ahead of the segment's end: restart it
 * when the mechanism is idle and the head is at the end of that segment.
 */
void ncq_pf_consume(NcqModel *m, int seg, uint64_t end, int64_t t)
{
    NcqSeg *sg;

    if (seg < 0 || m->p.readahead_sectors == 0) {
        return;
    }
    sg = &m->seg[seg];
    if (seg != m->pf_seg) {
        if (sg->end != m->last_lba_end || m->mech == NCQ_MECH_PREFETCH) {
            return;
        }
        m->pf_seg = seg;
        m->pf_consumed = end;
    } else if (end > m->pf_consumed) {
        m->pf_consumed = end;
    }
    if (m->mech == NCQ_MECH_IDLE && m->nq == 0 && sg->valid &&
        sg->end == m->last_lba_end &&
        sg->end < m->pf_consumed + m->p.readahead_sectors) {
        m->pf_armed = true;
        ncq_mech_decide(m, t);
    }
}

/*
 * A read that continues the read-ahead in progress is served from it: it
 * completes when the read-ahead has passed its last sector.  The
 * read-ahead is lengthened to cover it when needed.
 */
bool ncq_pf_stream_hit(NcqModel *m, NcqSlot *s, int64_t t, bool force)
{
    NcqSeg *sg = &m->seg[m->pf_seg];
    uint64_t lba = s->cmd.lba, need;
    uint32_t n = s->cmd.sectors, c, h;
    int64_t ready, st, done, bus;

    if (m->mech != NCQ_MECH_PREFETCH || !sg->valid || sg->end != m->pf_lba ||
        lba < sg->start || lba > m->pf_lba + m->pf_n) {
        return false;
    }
    need = lba + n - m->pf_lba;
    if (need > m->pf_end_n) {
        /* lengthen the read-ahead, unless commands are waiting for it */
        if ((m->nq > 0 && !force) ||
            need > (uint64_t)m->pf_n + m->p.readahead_sectors ||
            m->pf_lba + need > m->p.capacity) {
            return false;
        }
        m->pf_n = need;
        m->pf_end_n = need;
        m->mech_until = ncq_media_walk_from(m, &m->pf_ph, m->pf_n,
                                            m->pf_first, &m->pf_end_cyl,
                                            &m->pf_end_head, NULL, NULL, 0);
    }
    ready = ncq_media_walk_from(m, &m->pf_ph, need, m->pf_first, &c, &h,
                                NULL, NULL, 0);
    st = t > m->bus_free ? t : m->bus_free;
    bus = ncq_bus_ns(m, n);
    done = st + m->p.ovh_read_hit_ns + bus;
    if (ready + ncq_bus_ns(m, 1) > done) {
        done = ready + ncq_bus_ns(m, 1);
    }
    m->bus_free = done;
    s->c.dispatch_ns = t;
    s->c.overhead_ns = m->p.ovh_read_hit_ns + (st - t);
    s->c.transfer_ns = done - st - m->p.ovh_read_hit_ns;
    s->c.complete_ns = done;
    s->c.reason = NCQ_REASON_CACHE;
    s->c.cache_hit = true;
    ncq_slot_state(m, s, NCQ_SLOT_SERVICE);
    s->done_seq = ++m->done_seq;
    if (lba + n > m->pf_consumed) {
        m->pf_consumed = lba + n;
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
    for (i = 0; i < m->ndirty; i++) {
        if (lba >= m->dirty[i].lba && end <= m->dirty[i].lba + m->dirty[i].n) {
            return true;
        }
    }
    for (i = 0; i < (int)m->p.cache_segments && i < NCQ_MAX_SEGS; i++) {
        NcqSeg *sg = &m->seg[i];
        uint64_t send;

        if (!sg->valid) {
            continue;
        }
        send = sg->end;
        if (m->mech == NCQ_MECH_PREFETCH && i == m->pf_seg) {
            send = m->pf_lba + ncq_pf_progress(m, t);
        }
        if (lba >= sg->start && end <= send) {
            sg->lru = ++m->lru_clock;
            *seg = i;
            return true;
        }
    }
    return false;
}

int ncq_cache_fill(NcqModel *m, uint64_t lba, uint32_t n)
{
    int nseg = m->p.cache_segments < NCQ_MAX_SEGS ?
               (int)m->p.cache_segments : NCQ_MAX_SEGS;
    int i, victim = 0;
    NcqSeg *sg;

    if (nseg == 0) {
        return -1;
    }
    for (i = 0; i < nseg; i++) {
        sg = &m->seg[i];
        if (sg->valid && sg->end == lba) {
            ncq_seg_extend(m, sg, lba + n);
            sg->lru = ++m->lru_clock;
            return i;
        }
    }
    for (i = 0; i < nseg; i++) {
        if (!m->seg[i].valid) {
            victim = i;
            break;
        }
        if (m->seg[i].lru < m->seg[victim].lru) {
            victim = i;
        }
    }
    sg = &m->seg[victim];
    sg->valid = true;
    sg->start = lba;
    sg->end = lba;
    ncq_seg_extend(m, sg, lba + n);
    sg->lru = ++m->lru_clock;
    return victim;
}

void ncq_cache_invalidate(NcqModel *m, uint64_t lba, uint32_t n)
{
    int i;

    for (i = 0; i < NCQ_MAX_SEGS; i++) {
        NcqSeg *sg = &m->seg[i];

        if (sg->valid && lba < sg->end && lba + n > sg->start) {
            sg->valid = false;
        }
    }
}

void ncq_wcache_remove(NcqModel *m, uint64_t lba, uint32_t n)
{
    uint64_t end = lba + n;
    int i = 0;

    while (i < m->ndirty) {
        NcqExtent *e = &m->dirty[i];
        uint64_t eend = e->lba + e->n;

        if (end <= e->lba || lba >= eend) {
            i++;
            continue;
        }
        if (lba <= e->lba && end >= eend) {
            m->dirty_sectors -= e->n;
            *e = m->dirty[--m->ndirty];
            continue;
        }
        if (lba > e->lba && end < eend) {
            /* split; drop the tail if there is no room to keep it */
            m->dirty_sectors -= eend - e->lba - (lba - e->lba);
            e->n = lba - e->lba;
            if (m->ndirty < NCQ_MAX_DIRTY) {
                m->dirty[m->ndirty].lba = end;
                m->dirty[m->ndirty].n = eend - end;
                m->dirty_sectors += eend - end;
                m->ndirty++;
            }
        } else if (lba <= e->lba) {
            m->dirty_sectors -= end - e->lba;
            e->n = eend - end;
            e->lba = end;
        } else {
            m->dirty_sectors -= eend - lba;
            e->n = lba - e->lba;
        }
        i++;
    }
}

bool ncq_wcache_insert(NcqModel *m, uint64_t lba, uint32_t n)
{
    int i;

    ncq_wcache_remove(m, lba, n);
    if (m->dirty_sectors + n > m->p.write_cache_sectors) {
        return false;
    }
    for (i = 0; i < m->ndirty; i++) {
        NcqExtent *e = &m->dirty[i];

        if (e->lba + e->n == lba && e->n + n <= NCQ_DESTAGE_MAX * 64) {
            e->n += n;
            m->dirty_sectors += n;
            ncq_cache_changed(m, lba, lba + n);
            return true;
        }
    }
    if (m->ndirty >= NCQ_MAX_DIRTY) {
        return false;
    }
    m->dirty[m->ndirty].lba = lba;
    m->dirty[m->ndirty].n = n;
    m->ndirty++;
    m->dirty_sectors += n;
    ncq_cache_changed(m, lba, lba + n);
    return true;
}
