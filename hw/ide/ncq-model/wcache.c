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

bool ncq_wcache_insert(NcqModel *m, uint64_t lba, uint32_t n)
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
