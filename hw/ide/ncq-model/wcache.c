/*
 * ncq-model: drive buffer, write side.  The write-back cache's dirty
 * extents and the extent being destaged (NcqWriteCache), written only
 * here.  The firmware (sched.c) chooses what to destage and when.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-int.h"

void ncq_wcache_remove(NcqModel *m, uint64_t lba, uint32_t n)
{
    NcqWriteCache *wc = &m->wc;
    uint64_t end = lba + n;
    int i = 0;

    while (i < wc->ndirty) {
        NcqExtent *e = &wc->dirty[i];
        uint64_t eend = e->lba + e->n;

        if (end <= e->lba || lba >= eend) {
            i++;
            continue;
        }
        if (lba <= e->lba && end >= eend) {
            wc->dirty_sectors -= e->n;
            *e = wc->dirty[--wc->ndirty];
            continue;
        }
        if (lba > e->lba && end < eend) {
            /* split; drop the tail if there is no room to keep it */
            wc->dirty_sectors -= eend - e->lba - (lba - e->lba);
            e->n = lba - e->lba;
            if (wc->ndirty < NCQ_MAX_DIRTY) {
                wc->dirty[wc->ndirty].lba = end;
                wc->dirty[wc->ndirty].n = eend - end;
                wc->dirty_sectors += eend - end;
                wc->ndirty++;
            }
        } else if (lba <= e->lba) {
            wc->dirty_sectors -= end - e->lba;
            e->n = eend - end;
            e->lba = end;
        } else {
            wc->dirty_sectors -= eend - lba;
            e->n = lba - e->lba;
        }
        i++;
    }
}

/*
 * Take [lba, lba + n) as dirty data if the buffer has room.  The buffer is
 * a ring: the room of the data being destaged is free for new data as
 * the media takes it, counted free from the destage's start (so up to one
 * destage access more than write_cache_sectors may be in the buffer).
 */
static bool ncq_wcache_insert(NcqModel *m, uint64_t lba, uint32_t n)
{
    NcqWriteCache *wc = &m->wc;
    int i;

    ncq_wcache_remove(m, lba, n);
    if (wc->dirty_sectors + n > m->p.write_cache_sectors) {
        return false;
    }
    for (i = 0; i < wc->ndirty; i++) {
        NcqExtent *e = &wc->dirty[i];

        if (e->lba + e->n == lba && e->n + n <= NCQ_DESTAGE_MAX * 64) {
            e->n += n;
            wc->dirty_sectors += n;
            ncq_cache_changed(m, lba, lba + n);
            return true;
        }
    }
    if (wc->ndirty >= NCQ_MAX_DIRTY) {
        return false;
    }
    wc->dirty[wc->ndirty].lba = lba;
    wc->dirty[wc->ndirty].n = n;
    wc->ndirty++;
    wc->dirty_sectors += n;
    ncq_cache_changed(m, lba, lba + n);
    return true;
}

/*
 * A write the write-back cache takes whenever it has room: one that fits
 * the room it has when empty (a larger one streams to the media itself).
 */
bool ncq_wcache_cacheable(const NcqModel *m, const NcqCmd *cmd)
{
    return m->s.write_cache && cmd->op == NCQ_OP_WRITE && !cmd->fua &&
           cmd->sectors <= m->p.write_cache_sectors;
}

/*
 * The write @s goes into the write-back cache at @t if it has room:
 * acknowledged once its data is in the buffer (after its overhead and its
 * bus transfer).  The data arrives over [in_t0, complete): a destage of
 * it must not run ahead of it (ncq_wcache_arrival).
 */
bool ncq_wcache_take(NcqModel *m, NcqSlot *s, int64_t t)
{
    NcqWriteCache *wc = &m->wc;
    int64_t st, bus;
    NcqService sv;

    if (!ncq_wcache_cacheable(m, &s->cmd) ||
        !ncq_wcache_insert(m, s->cmd.lba, s->cmd.sectors)) {
        return false;
    }
    st = ncq_bus_start(m, t);
    bus = ncq_bus_ns(m, s->cmd.sectors);
    ncq_cache_invalidate(m, s->cmd.lba, s->cmd.sectors);
    sv = (NcqService) {
        .dispatch_ns = s->state == NCQ_SLOT_QUEUED ? t : s->c.arrival_ns,
        .overhead_ns = m->p.ovh_write_ns + (st - t),
        .transfer_ns = bus,
        .complete_ns = st + m->p.ovh_write_ns + bus,
        .reason = NCQ_REASON_CACHE,
        .cache_hit = true,
    };
    wc->in.lba = s->cmd.lba;
    wc->in.n = s->cmd.sectors;
    wc->in_t0 = st + m->p.ovh_write_ns;
    ncq_bus_busy(m, sv.complete_ns);
    ncq_slot_complete(m, s, &sv);
    return true;
}

/*
 * The earliest time the first sector of a media write of [lba, lba + n)
 * from the buffer may pass under the head: the part of it whose data is
 * still arriving (the write taken last) must not be written before it is
 * there.  INT64_MIN when all of it is in the buffer.
 */
int64_t ncq_wcache_arrival(const NcqModel *m, const NcqPhys *ph,
                           uint64_t lba, uint32_t n)
{
    const NcqExtent *in = &m->wc.in;
    uint64_t lo = lba > in->lba ? lba : in->lba;
    uint64_t hi = lba + n < in->lba + in->n ? lba + n : in->lba + in->n;

    if (lo >= hi) {
        return INT64_MIN;
    }
    return m->wc.in_t0 + ncq_bus_ns(m, lo - in->lba) +
           ncq_write_lead(m, ph, lo - lba, hi - lo);
}

/* [lba, lba + n) is being written to the media: no longer dirty. */
void ncq_wcache_destage(NcqModel *m, uint64_t lba, uint32_t n)
{
    ncq_wcache_remove(m, lba, n);
    m->wc.destage.lba = lba;
    m->wc.destage.n = n;
}

/*
 * Power is lost: the dirty data is gone, and so is an extent whose
 * destage was interrupted (@destaging).  Returns the sectors lost.
 */
uint64_t ncq_wcache_power_loss(NcqModel *m, bool destaging)
{
    uint64_t lost = m->wc.dirty_sectors;

    if (destaging) {
        lost += m->wc.destage.n;
    }
    m->wc.ndirty = 0;
    m->wc.dirty_sectors = 0;
    return lost;
}
