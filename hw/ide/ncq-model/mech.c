/*
 * ncq-model: mechanics (seek curve, rotation, head switch, media and bus
 * transfer), and the state of the head and the mechanism (NcqMech), which
 * only this file writes.
 *
 * Positioning is a set of pure functions of where the head is
 * (NcqMechState) and where the access starts (NcqTarget), returning the
 * time part by part (NcqPosTime), in the manner of DiskSim's dm_pos_time.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include "ncq-int.h"

/*
 * floor(sqrt(x) * 1024), exact: the loops correct the estimate.  x is a
 * seek distance (32 bits), so v stays below 2^52 and the conversions can
 * be the signed ones, one instruction each.
 */
static uint64_t ncq_sqrt_fix10(uint32_t x)
{
    uint64_t v = (uint64_t)x << 20;
    uint64_t r = (uint64_t)(int64_t)sqrt((double)(int64_t)v);

    while (r * r > v) {
        r--;
    }
    while ((r + 1) * (r + 1) <= v) {
        r++;
    }
    return r;
}

NCQ_HOT int64_t ncq_seek_time(const NcqParams *p, uint32_t dist)
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
    return ((uint64_t)r * m->p.rpm + m->layout.phase) % NCQ_REV;
}

/*
 * The rotational position @delta_ns after (or before) @angle: equal to
 * ncq_rot_pos(m, t + delta_ns) when @angle = ncq_rot_pos(m, t), without
 * its division.  |delta_ns| is below a minute (one NCQ_REV of ns).
 */
uint64_t ncq_rot_advance(const NcqModel *m, uint64_t angle, int64_t delta_ns)
{
    uint64_t d = delta_ns < 0 ? (uint64_t)(delta_ns + (int64_t)NCQ_REV) :
                 (uint64_t)delta_ns;

    return (angle + d * m->p.rpm) % NCQ_REV;
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

void ncq_target_of(const NcqModel *m, uint64_t lba, bool write,
                   NcqTarget *to)
{
    ncq_layout_map(m, lba, &to->ph);
    to->angle = ncq_layout_angle(m, &to->ph);
    to->write = write;
}

/* Where the head is at @t, as far as positioning from there goes. */
NcqMechState ncq_mech_state_at(const NcqModel *m, int64_t t)
{
    NcqMechState from = {
        .cyl = m->mech.cyl, .head = m->mech.head, .angle = ncq_rot_pos(m, t),
    };

    return from;
}

/* Seek (or head switch) and write settle, as one time. */
static int64_t ncq_seek_with_settle(const NcqModel *m, NcqMechState from,
                                    const NcqTarget *to)
{
    uint32_t d = to->ph.cyl > from.cyl ? to->ph.cyl - from.cyl :
                 from.cyl - to->ph.cyl;
    int64_t sk = 0;

    if (d) {
        sk = ncq_seek_time(&m->p, d);
        if (sk < m->p.head_switch_ns && to->ph.head != from.head) {
            sk = m->p.head_switch_ns;
        }
    } else if (to->ph.head != from.head) {
        sk = m->p.head_switch_ns;
    }
    if (sk && to->write) {
        sk += m->p.write_settle_ns;
    }
    return sk;
}

/*
 * Seek (or head switch) and write settle from @from to @to; the angle of
 * @from does not matter.  Returns their sum.
 */
int64_t ncq_pos_seek(const NcqModel *m, NcqMechState from,
                     const NcqTarget *to, NcqPosTime *pt)
{
    int64_t sk = ncq_seek_with_settle(m, from, to);

    pt->settle_ns = sk && to->write ? m->p.write_settle_ns : 0;
    pt->seek_ns = sk - pt->settle_ns;
    pt->rot_ns = 0;
    pt->xfer_ns = 0;
    pt->bus_ns = 0;
    return sk;
}

/* Seek, settle and rotational wait when positioning starts at @t. */
int64_t ncq_pos_time(const NcqModel *m, NcqMechState from, int64_t t,
                     const NcqTarget *to, NcqPosTime *pt)
{
    int64_t sk = ncq_pos_seek(m, from, to, pt);

    pt->rot_ns = ncq_rot_wait(m, t + sk, to->angle);
    return sk + pt->rot_ns;
}

/*
 * The positioning time as the firmware plans it, from from.angle (one
 * division per candidate, for the scheduler's inner loop).  It plans with
 * the settle it allows for (it cannot know this seek's), so that its pick
 * rarely misses the sector: that settle is part of settle_ns.
 */
NCQ_HOT int64_t ncq_pos_plan(const NcqModel *m, NcqMechState from,
                             const NcqTarget *to, NcqPosTime *pt)
{
    int64_t sk = ncq_seek_with_settle(m, from, to), rot = 0;
    uint64_t pos, w;

    pt->settle_ns = sk && to->write ? m->p.write_settle_ns : 0;
    pt->seek_ns = sk - pt->settle_ns;
    if (sk) {
        sk += m->p.seek_plan_settle_ns;
        pt->settle_ns += m->p.seek_plan_settle_ns;
    }
    pos = from.angle + (uint64_t)sk * m->p.rpm;
    if (pos >= NCQ_REV) {
        pos -= NCQ_REV;
        if (pos >= NCQ_REV) {
            pos %= NCQ_REV;
        }
    }
    w = to->angle >= pos ? to->angle - pos : to->angle + NCQ_REV - pos;
    if (NCQ_REV - w >= NCQ_ROT_SLOP_NS * (uint64_t)m->p.rpm) {
        rot = (int64_t)((w + m->p.rpm - 1) / m->p.rpm);
    }
    pt->rot_ns = rot;
    pt->xfer_ns = 0;
    pt->bus_ns = 0;
    return sk + rot;
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
        uint32_t end = ncq_layout_track_end(m, &ph);
        uint32_t avail = end > ph.sector ? end - ph.sector : 0;
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

/*
 * A whole access of @n sectors from @from at @t: positioning, media
 * transfer and (for the record) the bus time of its data.  Returns the
 * time from @t until the media transfer ends; @end gets the head's state
 * then.
 */
int64_t ncq_access_time(const NcqModel *m, NcqMechState from, int64_t t,
                        const NcqTarget *to, uint32_t n, NcqPosTime *pt,
                        NcqMechState *end)
{
    int64_t pos = ncq_pos_time(m, from, t, to, pt);
    int64_t t_end = ncq_media_walk_from(m, &to->ph, n, t + pos, &end->cyl,
                                        &end->head, NULL, NULL, 0);

    pt->xfer_ns = t_end - (t + pos);
    pt->bus_ns = ncq_bus_ns(m, n);
    end->angle = ncq_rot_pos(m, t_end);
    return t_end - t;
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

/*
 * Data for a media write arrives over the link while the drive positions:
 * sector i of @n, starting to arrive at t0, is in the buffer at
 * t0 + bus(i + 1), and the head writes it (@off + i) sectors after the
 * first sector of the access, which starts under the head at t_first.
 * Returns the least t_first - t0 for which no sector is written before
 * its data arrived (maybe negative).  With a link faster than the media
 * only the first sector constrains; with a slower one, the last.  Gaps
 * between tracks are ignored: they only give the data more time.
 */
int64_t ncq_write_lead(const NcqModel *m, const NcqPhys *ph, uint64_t off,
                       uint32_t n)
{
    uint64_t spt = m->p.zones[ph->zone].spt;
    /* media time of k sectors, rounded down: the head is never late */
    uint64_t k = off + (ncq_bus_ns(m, 1) * spt * m->p.rpm > NCQ_REV ?
                        n - 1 : 0);
    int64_t media = (int64_t)(k * NCQ_REV / (spt * m->p.rpm));
    uint64_t last = k - off + 1;

    return ncq_bus_ns(m, last) - media;
}

int64_t ncq_bus_start(const NcqModel *m, int64_t t)
{
    return t > m->mech.bus_free ? t : m->mech.bus_free;
}

void ncq_bus_busy(NcqModel *m, int64_t until)
{
    m->mech.bus_free = until;
}

/* The mechanism starts @op, busy until @until. */
void ncq_mech_begin(NcqModel *m, NcqMechOp op, int64_t until)
{
    m->mech.op = op;
    m->mech.until = until;
}

/* The work in progress now ends at @until instead. */
void ncq_mech_until(NcqModel *m, int64_t until)
{
    m->mech.until = until;
}

/* The work in progress ends (or is cut short) at @t. */
void ncq_mech_end(NcqModel *m, int64_t t)
{
    m->mech.op = NCQ_MECH_IDLE;
    m->mech.until = t;
}

/* The work in progress reached its planned end. */
void ncq_mech_idle(NcqModel *m)
{
    m->mech.op = NCQ_MECH_IDLE;
}

/* The spindle stops (standby) or is up to speed again. */
void ncq_mech_stop(NcqModel *m, bool stopped)
{
    m->mech.stopped = stopped;
}

void ncq_head_move(NcqModel *m, uint32_t cyl, uint32_t head)
{
    m->mech.cyl = cyl;
    m->mech.head = head;
}

void ncq_head_lba_end(NcqModel *m, uint64_t lba_end)
{
    m->mech.lba_end = lba_end;
}
