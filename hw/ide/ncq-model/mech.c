/*
 * ncq-model: mechanics (seek curve, rotation, head switch, media and bus
 * transfer).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include "ncq-int.h"

/* floor(sqrt(x) * 1024), exact. */
static uint64_t ncq_sqrt_fix10(uint64_t x)
{
    uint64_t v = x << 20;
    uint64_t r = (uint64_t)sqrt((double)v);

    while (r * r > v) {
        r--;
    }
    while ((r + 1) * (r + 1) <= v) {
        r++;
    }
    return r;
}

int64_t ncq_seek_time(const NcqParams *p, uint32_t dist)
{
    const NcqSeekPoint *pt = p->seek_points;
    uint32_t n = p->seek_npoints, lo, hi;

    if (dist == 0) {
        return 0;
    }
    if (p->seek_type == NCQ_SEEK_TWOPART) {
        if (dist < p->seek_x) {
            return p->seek_a_ns +
                   (int64_t)(((uint64_t)p->seek_b_ns *
                              ncq_sqrt_fix10(dist)) >> 10);
        }
        return p->seek_c_ns + p->seek_e_ns * (int64_t)dist;
    }
    if (n == 0) {
        return 0;
    }
    if (dist <= pt[0].dist || n == 1) {
        return pt[0].ns;
    }
    if (dist >= pt[n - 1].dist) {
        lo = n - 2;
        hi = n - 1;
    } else {
        lo = 0;
        hi = n - 1;
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;

            if (pt[mid].dist <= dist) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    return pt[lo].ns + (pt[hi].ns - pt[lo].ns) *
           ((int64_t)dist - (int64_t)pt[lo].dist) /
           ((int64_t)pt[hi].dist - (int64_t)pt[lo].dist);
}

int64_t ncq_model_seek_ns(const NcqModel *m, uint32_t dist)
{
    return ncq_seek_time(&m->p, dist);
}

uint64_t ncq_rot_pos(const NcqModel *m, int64_t t)
{
    int64_t r = t % (int64_t)NCQ_REV;

    if (r < 0) {
        r += NCQ_REV;
    }
    return ((uint64_t)r * m->p.rpm + m->phase) % NCQ_REV;
}

int64_t ncq_rot_wait(const NcqModel *m, int64_t t, uint64_t angle)
{
    uint64_t pos = ncq_rot_pos(m, t);
    uint64_t w = angle >= pos ? angle - pos : angle + NCQ_REV - pos;

    /*
     * A few ns past the target (rounding of sector times to whole ns):
     * it is under the head now.
     */
    if (NCQ_REV - w < NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm) {
        return 0;
    }
    return (int64_t)((w + m->p.rpm - 1) / m->p.rpm);
}

int64_t ncq_model_rot_wait_ns(const NcqModel *m, int64_t t, uint64_t lba)
{
    NcqPhys ph;

    if (ncq_model_lba_to_phys(m, lba, &ph) < 0) {
        return -1;
    }
    return ncq_rot_wait(m, t, ncq_layout_angle(m, &ph));
}

/* Seek (+ head switch, + write settle) from (cyl, head) to @s. */
static int64_t ncq_seek_to(const NcqModel *m, uint32_t cyl, uint32_t head,
                           const NcqSlot *s)
{
    uint32_t d = s->cyl > cyl ? s->cyl - cyl : cyl - s->cyl;
    int64_t sk = 0;

    if (d) {
        sk = ncq_seek_time(&m->p, d);
        if (sk < m->p.head_switch_ns && s->head != head) {
            sk = m->p.head_switch_ns;
        }
    } else if (s->head != head) {
        sk = m->p.head_switch_ns;
    }
    if (sk && s->cmd.op == NCQ_OP_WRITE) {
        sk += m->p.write_settle_ns;
    }
    return sk;
}

int64_t ncq_position_time(const NcqModel *m, uint32_t cyl, uint32_t head,
                          int64_t ts, const NcqSlot *s, int64_t *seek)
{
    int64_t sk = ncq_seek_to(m, cyl, head, s);

    *seek = sk;
    return sk + ncq_rot_wait(m, ts + sk, s->angle);
}

/*
 * The same, given pos0 = ncq_rot_pos(m, ts): one division per candidate,
 * for the scheduler's inner loop.
 */
int64_t ncq_position_time_at(const NcqModel *m, uint32_t cyl, uint32_t head,
                             uint64_t pos0, const NcqSlot *s)
{
    int64_t sk = ncq_seek_to(m, cyl, head, s);
    uint64_t pos, w;

    if (sk) {
        /*
         * The firmware plans with the settle it allows for (it cannot know
         * this seek's), so that its pick rarely misses the sector.
         */
        sk += m->p.seek_plan_settle_ns;
    }
    pos = pos0 + (uint64_t)sk * m->p.rpm;

    if (pos >= NCQ_REV) {
        pos -= NCQ_REV;
        if (pos >= NCQ_REV) {
            pos %= NCQ_REV;
        }
    }
    w = s->angle >= pos ? s->angle - pos : s->angle + NCQ_REV - pos;
    if (NCQ_REV - w < NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm) {
        return sk;
    }
    return sk + (int64_t)((w + m->p.rpm - 1) / m->p.rpm);
}

static int64_t ncq_sectors_ns(const NcqModel *m, uint64_t k, uint32_t spt)
{
    uint64_t div = (uint64_t)spt * m->p.rpm;

    return (int64_t)((k * NCQ_REV + div - 1) / div);
}

/*
 * Transfer @n sectors from @lba, the first one starting under the head at
 * @t_first.  Returns the time the last sector has passed.  marks[i] (a
 * count of sectors, ascending) gets the time mark_t[i] at which that many
 * sectors were done.
 */
int64_t ncq_media_walk_from(const NcqModel *m, const NcqPhys *start,
                            uint32_t n, int64_t t_first, uint32_t *ecyl,
                            uint32_t *ehead, const uint32_t *marks,
                            int64_t *mark_t, int nmarks)
{
    const NcqParams *p = &m->p;
    NcqPhys ph = *start;
    uint32_t done = 0;
    int64_t t = t_first;
    int mi = 0;

    for (;;) {
        uint32_t spt = p->zones[ph.zone].spt;
        uint32_t avail = spt - p->spare_per_track - ph.sector;
        uint32_t k = n - done < avail ? n - done : avail;

        while (mi < nmarks && marks[mi] <= done + k) {
            mark_t[mi] = t + ncq_sectors_ns(m, marks[mi] - done, spt);
            mi++;
        }
        t += ncq_sectors_ns(m, k, spt);
        done += k;
        if (done >= n) {
            break;
        }
        /* next track */
        ph.sector = 0;
        if (ph.head + 1 < p->heads) {
            ph.head++;
            t += p->head_switch_ns;
        } else {
            ph.head = 0;
            ph.cyl++;
            if (ph.zone + 1 < p->nzones &&
                ph.cyl >= p->zones[ph.zone + 1].cyl_start) {
                ph.zone++;
            }
            t += ncq_seek_time(p, 1);
        }
        t += ncq_rot_wait(m, t, ncq_layout_angle(m, &ph));
    }
    *ecyl = ph.cyl;
    *ehead = ph.head;
    return t;
}

int64_t ncq_media_walk(const NcqModel *m, uint64_t lba, uint32_t n,
                       int64_t t_first, uint32_t *ecyl, uint32_t *ehead,
                       const uint32_t *marks, int64_t *mark_t, int nmarks)
{
    NcqPhys ph;

    ncq_layout_map(m, lba, &ph);
    return ncq_media_walk_from(m, &ph, n, t_first, ecyl, ehead, marks,
                               mark_t, nmarks);
}

uint32_t ncq_media_done_by(const NcqModel *m, uint64_t lba, uint32_t n,
                           int64_t t_first, int64_t t)
{
    uint32_t lo = 0, hi = n, c, h;
    NcqPhys ph;

    if (t <= t_first) {
        return 0;
    }
    ncq_layout_map(m, lba, &ph);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;

        if (ncq_media_walk_from(m, &ph, mid, t_first, &c, &h, NULL, NULL,
                                0) <= t) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

int64_t ncq_bus_ns(const NcqModel *m, uint64_t sectors)
{
    uint64_t rate = m->p.bus_bytes_per_s;

    return (int64_t)((sectors * 512 * 1000000000ULL + rate - 1) / rate);
}
