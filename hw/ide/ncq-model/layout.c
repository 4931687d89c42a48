/*
 * ncq-model: LBA layout (zones, tracks, skew, spares).
 *
 * LBAs fill a cylinder head by head (head 0 first), then the next
 * cylinder.  A zone's tracks form spare units of zone.spare_tracks tracks
 * (0: the whole zone is one unit): the last zone.spares physical sectors
 * of each full unit are not mapped, nor the first zone.front sectors of
 * the zone; a last, partial unit has no spares.  This covers spares per
 * track, per cylinder, per range of cylinders and per zone (DiskSim's
 * sparing schemes, docs/model.md).
 *
 * Sector s of track (c, h) starts at rotational position s/spt of a
 * revolution plus the zone's base angle and skews: track_skew per head
 * switch and cyl_skew per cylinder switch, counted from the zone's first
 * cylinder.  A zone without its own skews continues the angles of the
 * zone before it, so one global skew accumulates from cylinder 0.  The
 * layout (NcqLayout) is computed once, here, when the model is made.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include "ncq-int.h"

#define PPB_U (NCQ_REV / 1000000000)

/* Tracks per spare unit of @z. */
static uint64_t ncq_zone_unit_tracks(const NcqParams *p, const NcqZone *z)
{
    uint64_t tracks = (uint64_t)z->cyl_count * p->heads;

    return z->spare_tracks ? z->spare_tracks : tracks;
}

/*
 * Mapped sectors of zone @z, or UINT64_MAX when its spares or front space
 * exceed its sectors.  Only a whole zone may be all spare (DiskSim leaves
 * cylinders between zones unmapped; the importer makes them such zones).
 */
uint64_t ncq_zone_lbas(const NcqParams *p, const NcqZone *z)
{
    uint64_t tracks = (uint64_t)z->cyl_count * p->heads;
    uint64_t unit = ncq_zone_unit_tracks(p, z);
    uint64_t full = unit ? tracks / unit : 0, phys;

    if (unit == 0 || (full && (z->spares > unit * z->spt ||
                               (z->spares == unit * z->spt &&
                                z->spare_tracks)))) {
        return UINT64_MAX;
    }
    phys = full * (unit * z->spt - z->spares) +
           (tracks - full * unit) * z->spt;
    return phys >= z->front ? phys - z->front : UINT64_MAX;
}

static void ncq_layout_zone(NcqModel *m, uint32_t i)
{
    const NcqParams *p = &m->p;
    const NcqZone *z = &p->zones[i];
    NcqLayout *l = &m->layout;
    uint64_t unit = ncq_zone_unit_tracks(p, z);
    uint64_t cyl_u = (uint64_t)z->cyl_skew_ppb * PPB_U;

    l->unit_tracks[i] = unit;
    l->full_units[i] = (uint64_t)z->cyl_count * p->heads / unit;
    l->unit_lbas[i] = unit * z->spt - (l->full_units[i] ? z->spares : 0);
    l->track_skew_u[i] = (uint64_t)z->track_skew_ppb * PPB_U;
    l->cyl_step_u[i] = (cyl_u + (uint64_t)(p->heads - 1) *
                        l->track_skew_u[i]) % NCQ_REV;
    if (z->own_skew || i == 0) {
        l->base_u[i] = z->own_skew ? (uint64_t)z->first_ppb * PPB_U : 0;
    } else {
        l->base_u[i] = (l->base_u[i - 1] + (uint64_t)p->zones[i - 1].cyl_count *
                        l->cyl_step_u[i - 1]) % NCQ_REV;
    }
}

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
        l->zone_first[i] = lba;
        lba += ncq_zone_lbas(p, &p->zones[i]);
        ncq_layout_zone(m, i);
    }
    l->zone_first[p->nzones] = lba;
    l->sectors = lba;
    if (lba < p->capacity) {
        snprintf(err, errlen, "%s: layout holds %llu sectors, less than "
                 "capacity %llu", p->name, (unsigned long long)lba,
                 (unsigned long long)p->capacity);
        return NCQ_ERR_PARSE;
    }
    return 0;
}

void ncq_layout_map(const NcqModel *m, uint64_t lba, NcqPhys *ph)
{
    const NcqParams *p = &m->p;
    const NcqLayout *l = &m->layout;
    uint32_t lo = 0, hi = p->nzones - 1, spt;
    uint64_t off, track, full_lbas;

    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;

        if (l->zone_first[mid] <= lba) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    spt = p->zones[lo].spt;
    off = lba - l->zone_first[lo] + p->zones[lo].front;
    full_lbas = (uint64_t)l->full_units[lo] * l->unit_lbas[lo];
    if (off < full_lbas) {
        uint64_t unit = off / l->unit_lbas[lo];

        off -= unit * l->unit_lbas[lo];
        track = unit * l->unit_tracks[lo] + off / spt;
    } else {
        off -= full_lbas;
        track = (uint64_t)l->full_units[lo] * l->unit_tracks[lo] + off / spt;
    }
    ph->zone = lo;
    ph->sector = off % spt;
    ph->head = track % p->heads;
    ph->cyl = p->zones[lo].cyl_start + track / p->heads;
}

/* Track of @ph counted from its zone's first track. */
static uint64_t ncq_zone_track(const NcqModel *m, const NcqPhys *ph)
{
    const NcqZone *z = &m->p.zones[ph->zone];

    return (uint64_t)(ph->cyl - z->cyl_start) * m->p.heads + ph->head;
}

uint32_t ncq_layout_track_end(const NcqModel *m, const NcqPhys *ph)
{
    const NcqLayout *l = &m->layout;
    uint32_t spt = m->p.zones[ph->zone].spt;
    uint64_t tz = ncq_zone_track(m, ph);
    uint64_t unit = tz / l->unit_tracks[ph->zone];
    uint64_t before = (tz - unit * l->unit_tracks[ph->zone]) * spt;

    if (unit >= l->full_units[ph->zone]) {
        return spt;
    }
    if (before >= l->unit_lbas[ph->zone]) {
        return 0;
    }
    return l->unit_lbas[ph->zone] - before < spt ?
           l->unit_lbas[ph->zone] - before : spt;
}

uint64_t ncq_layout_angle(const NcqModel *m, const NcqPhys *ph)
{
    const NcqLayout *l = &m->layout;
    const NcqZone *z = &m->p.zones[ph->zone];
    uint64_t skew = (l->base_u[ph->zone] +
                     (uint64_t)(ph->cyl - z->cyl_start) *
                     l->cyl_step_u[ph->zone] +
                     (uint64_t)ph->head * l->track_skew_u[ph->zone]) %
                    NCQ_REV;

    return ((uint64_t)ph->sector * NCQ_REV / z->spt + skew) % NCQ_REV;
}

int ncq_model_lba_to_phys(const NcqModel *m, uint64_t lba, NcqPhys *ph)
{
    if (m->p.kind != NCQ_KIND_HDD || lba >= m->layout.sectors) {
        return NCQ_ERR_RANGE;
    }
    ncq_layout_map(m, lba, ph);
    return 0;
}

/* Offset of @ph in its zone's mapped sectors, counting the front ones. */
static int ncq_zone_offset(const NcqModel *m, const NcqPhys *ph,
                           uint64_t *off)
{
    const NcqLayout *l = &m->layout;
    uint32_t z = ph->zone;
    uint64_t tz = ncq_zone_track(m, ph);
    uint64_t unit = tz / l->unit_tracks[z];

    if (ph->sector >= ncq_layout_track_end(m, ph)) {
        return NCQ_ERR_RANGE;
    }
    if (unit < l->full_units[z]) {
        *off = unit * l->unit_lbas[z] +
               (tz - unit * l->unit_tracks[z]) * m->p.zones[z].spt;
    } else {
        *off = (uint64_t)l->full_units[z] * l->unit_lbas[z] +
               (tz - (uint64_t)l->full_units[z] * l->unit_tracks[z]) *
               m->p.zones[z].spt;
    }
    *off += ph->sector;
    return *off < m->p.zones[z].front ? NCQ_ERR_RANGE : 0;
}

int ncq_model_phys_to_lba(const NcqModel *m, const NcqPhys *ph,
                          uint64_t *lba)
{
    const NcqParams *p = &m->p;
    NcqPhys q = *ph;
    uint64_t off;

    if (p->kind != NCQ_KIND_HDD || ph->head >= p->heads) {
        return NCQ_ERR_RANGE;
    }
    for (q.zone = 0; q.zone < p->nzones; q.zone++) {
        const NcqZone *zn = &p->zones[q.zone];

        if (ph->cyl >= zn->cyl_start &&
            ph->cyl < zn->cyl_start + zn->cyl_count) {
            if (ph->sector >= zn->spt || ncq_zone_offset(m, &q, &off) < 0) {
                return NCQ_ERR_RANGE;
            }
            *lba = m->layout.zone_first[q.zone] + off - zn->front;
            return *lba < m->layout.zone_first[q.zone + 1] ? 0 :
                   NCQ_ERR_RANGE;
        }
    }
    return NCQ_ERR_RANGE;
}

uint64_t ncq_model_layout_sectors(const NcqModel *m)
{
    return m->layout.sectors;
}
