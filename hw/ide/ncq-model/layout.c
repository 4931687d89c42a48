/*
 * ncq-model: LBA layout (zones, tracks, skew, spares).
 *
 * LBAs fill a cylinder head by head (head 0 first), then the next
 * cylinder.  Each track holds zone.spt physical sectors of which the last
 * spare_per_track are not mapped.  Sector s of track (c, h) starts at
 * rotational position s/spt of a revolution plus the accumulated skew:
 * track_skew per head switch, cyl_skew per cylinder switch.  The layout
 * (NcqLayout) is computed once, here, when the model is made.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include "ncq-int.h"

int ncq_layout_init(NcqModel *m, char *err, size_t errlen)
{
    const NcqParams *p = &m->p;
    NcqLayout *l = &m->layout;
    uint64_t lba = 0;
    uint32_t i;

    /* the rotational phase at t = 0: the first number drawn */
    l->phase = ncq_rng_next(&m->rng) % NCQ_REV;
    l->sectors = 0;
    if (p->kind != NCQ_KIND_HDD) {
        return 0;
    }
    for (i = 0; i < p->nzones; i++) {
        const NcqZone *z = &p->zones[i];

        l->zone_first[i] = lba;
        lba += (uint64_t)z->cyl_count * p->heads *
               (z->spt - p->spare_per_track);
    }
    l->zone_first[p->nzones] = lba;
    l->sectors = lba;
    if (lba < p->capacity) {
        snprintf(err, errlen, "%s: layout holds %llu sectors, less than "
                 "capacity %llu", p->name, (unsigned long long)lba,
                 (unsigned long long)p->capacity);
        return NCQ_ERR_PARSE;
    }
    l->track_skew_u = (uint64_t)p->track_skew_ppb * (NCQ_REV / 1000000000);
    l->cyl_step_u = ((uint64_t)p->cyl_skew_ppb * (NCQ_REV / 1000000000) +
                     (uint64_t)(p->heads - 1) * l->track_skew_u) % NCQ_REV;
    return 0;
}

void ncq_layout_map(const NcqModel *m, uint64_t lba, NcqPhys *ph)
{
    const NcqParams *p = &m->p;
    uint32_t lo = 0, hi = p->nzones - 1;
    uint64_t off, track;
    uint32_t spt;

    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;

        if (m->layout.zone_first[mid] <= lba) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    spt = p->zones[lo].spt - p->spare_per_track;
    off = lba - m->layout.zone_first[lo];
    ph->zone = lo;
    if (off <= UINT32_MAX) {
        /* 32-bit divisions: the common case, and much faster */
        uint32_t o32 = off, t32 = o32 / spt, c32 = t32 / p->heads;

        ph->sector = o32 - t32 * spt;
        ph->head = t32 - c32 * p->heads;
        ph->cyl = p->zones[lo].cyl_start + c32;
        return;
    }
    track = off / spt;
    ph->sector = off % spt;
    ph->head = track % p->heads;
    ph->cyl = p->zones[lo].cyl_start + track / p->heads;
}

uint64_t ncq_layout_angle(const NcqModel *m, const NcqPhys *ph)
{
    uint64_t spt = m->p.zones[ph->zone].spt;
    uint64_t skew = ((uint64_t)ph->cyl * m->layout.cyl_step_u +
                     (uint64_t)ph->head * m->layout.track_skew_u) % NCQ_REV;

    return ((uint64_t)ph->sector * NCQ_REV / spt + skew) % NCQ_REV;
}

int ncq_model_lba_to_phys(const NcqModel *m, uint64_t lba, NcqPhys *ph)
{
    if (m->p.kind != NCQ_KIND_HDD || lba >= m->layout.sectors) {
        return NCQ_ERR_RANGE;
    }
    ncq_layout_map(m, lba, ph);
    return 0;
}

int ncq_model_phys_to_lba(const NcqModel *m, const NcqPhys *ph,
                          uint64_t *lba)
{
    const NcqParams *p = &m->p;
    uint32_t z;

    if (p->kind != NCQ_KIND_HDD || ph->head >= p->heads) {
        return NCQ_ERR_RANGE;
    }
    for (z = 0; z < p->nzones; z++) {
        const NcqZone *zn = &p->zones[z];

        if (ph->cyl >= zn->cyl_start &&
            ph->cyl < zn->cyl_start + zn->cyl_count) {
            if (ph->sector >= zn->spt - p->spare_per_track) {
                return NCQ_ERR_RANGE;
            }
            *lba = m->layout.zone_first[z] +
                   ((uint64_t)(ph->cyl - zn->cyl_start) * p->heads +
                    ph->head) * (zn->spt - p->spare_per_track) + ph->sector;
            return 0;
        }
    }
    return NCQ_ERR_RANGE;
}

uint64_t ncq_model_layout_sectors(const NcqModel *m)
{
    return m->layout.sectors;
}
