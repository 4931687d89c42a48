/*
 * ncq-model: drive-managed SMR's persistent media cache (docs/smr.md).
 *
 * The host sees a conventional drive.  A write goes into the media cache,
 * a log on conventional (unshingled) tracks: it is appended where the last
 * one ended, so random writes become one sequential stream while the
 * cache has room.  The cache's map holds at most mc_map extents and the
 * cache at most mc_sectors sectors.  Cleaning a band reads the band's
 * extents from the cache, reads the band, and rewrites the band whole
 * (Aghayev and Desnoyers, "Skylight", FAST '15): the band of the oldest
 * extent first (FIFO).  It runs when the drive has been idle mc_idle_ns,
 * one band after another, and is forced when a write does not fit, which the
 * write then waits behind.  A read of cached data is served from the
 * cache's tracks.
 *
 * The cache's tracks are timed as the host LBAs at mc_lba (the layout has
 * no tracks outside the host's LBA space); the model keeps timing only,
 * never data, so nothing is overwritten there.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"

static NcqMcEntry *ncq_mc_at(const NcqModel *m, uint32_t i)
{
    return &m->mc.e[(m->mc.head + i) % m->p.mc_map];
}

static uint32_t ncq_mc_band(const NcqModel *m, uint64_t lba)
{
    return (uint32_t)(lba / m->p.mc_band_sectors);
}

static void ncq_mc_bit(NcqModel *m, uint32_t b, bool on)
{
    if (on) {
        m->mc.band_bit[b >> 3] |= (uint8_t)(1u << (b & 7));
    } else {
        m->mc.band_bit[b >> 3] &= (uint8_t)~(1u << (b & 7));
    }
}

static bool ncq_mc_has(const NcqModel *m, uint32_t b)
{
    return m->mc.band_bit[b >> 3] >> (b & 7) & 1;
}

int ncq_mc_init(NcqModel *m, char *err, size_t errlen)
{
    const NcqParams *p = &m->p;

    memset(&m->mc, 0, sizeof(m->mc));
    if (!p->mc_sectors) {
        return 0;
    }
    m->mc.nbands = (uint32_t)((p->capacity + p->mc_band_sectors - 1) /
                              p->mc_band_sectors);
    m->mc.e = calloc(p->mc_map, sizeof(*m->mc.e));
    m->mc.band_bit = calloc((m->mc.nbands + 7) / 8, 1);
    if (!m->mc.e || !m->mc.band_bit) {
        ncq_mc_free(m);
        snprintf(err, errlen, "%s: out of memory for the media cache's map "
                 "of %u extents", p->name, p->mc_map);
        return NCQ_ERR_INVAL;
    }
    return 0;
}

void ncq_mc_free(NcqModel *m)
{
    free(m->mc.e);
    free(m->mc.band_bit);
    m->mc.e = NULL;
    m->mc.band_bit = NULL;
}

/* Where cached sectors at cache position @pos are timed. */
static uint64_t ncq_mc_where(const NcqModel *m, uint32_t pos)
{
    return m->p.mc_lba + pos;
}

/*
 * The time to clean band @b with the head as @st at @t: read its extents
 * from the cache, read the band, write it back, and the firmware's time.
 * *@st becomes the head's state after it.
 */
static int64_t ncq_mc_clean_time(const NcqModel *m, uint32_t b, int64_t t,
                                 NcqMechState *st)
{
    uint64_t first = (uint64_t)b * m->p.mc_band_sectors;
    uint64_t n = m->p.capacity - first < m->p.mc_band_sectors ?
                 m->p.capacity - first : m->p.mc_band_sectors;
    int64_t d = 0;
    NcqPosTime pt;
    NcqTarget to;
    uint32_t i;

    for (i = 0; i < m->mc.n; i++) {
        const NcqMcEntry *e = ncq_mc_at(m, i);

        if (ncq_mc_band(m, e->lba) == b) {
            ncq_target_of(m, ncq_mc_where(m, e->pos), false, &to);
            d += ncq_access_time(m, *st, t + d, &to, e->n, &pt, st);
        }
    }
    ncq_target_of(m, first, false, &to);
    d += ncq_access_time(m, *st, t + d, &to, (uint32_t)n, &pt, st);
    ncq_target_of(m, first, true, &to);
    d += ncq_access_time(m, *st, t + d, &to, (uint32_t)n, &pt, st);
    return d + m->p.mc_clean_ns;
}

/* A band's cleaning for the trace; the oldest goes when the ring is full */
static void ncq_mc_event(NcqModel *m, int64_t start, int64_t end,
                         uint32_t b, uint32_t extents, bool forced, bool done)
{
    NcqMcEvent *e;

    if (m->mc.ev_n == NCQ_MC_EVENTS) {
        m->mc.ev_head = (m->mc.ev_head + 1) % NCQ_MC_EVENTS;
        m->mc.ev_n--;
    }
    e = &m->mc.ev[(m->mc.ev_head + m->mc.ev_n++) % NCQ_MC_EVENTS];
    e->start_ns = start;
    e->end_ns = end;
    e->band = b;
    e->extents = extents;
    e->forced = forced;
    e->done = done;
}

/* The extents band @b has in the cache. */
static uint32_t ncq_mc_band_extents(const NcqModel *m, uint32_t b)
{
    uint32_t i, k = 0;

    for (i = 0; i < m->mc.n; i++) {
        k += ncq_mc_band(m, ncq_mc_at(m, i)->lba) == b;
    }
    return k;
}

/* Band @b is clean: its extents leave the cache, oldest order kept. */
static void ncq_mc_drop_band(NcqModel *m, uint32_t b)
{
    uint32_t i, k = 0;

    for (i = 0; i < m->mc.n; i++) {
        NcqMcEntry e = *ncq_mc_at(m, i);

        if (ncq_mc_band(m, e.lba) == b) {
            m->mc.used -= e.n;
            continue;
        }
        *ncq_mc_at(m, k++) = e;
    }
    m->mc.n = k;
    if (k == 0) {
        m->mc.head = 0;
    }
    ncq_mc_bit(m, b, false);
    m->mc.cleaned++;
}

static bool ncq_mc_fits(const NcqModel *m, uint32_t n)
{
    return m->mc.n < m->p.mc_map && m->mc.used + n <= m->p.mc_sectors;
}

int64_t ncq_mc_make_room(NcqModel *m, int64_t t, uint32_t n)
{
    NcqMechState st = ncq_mech_state_at(m, t);
    int64_t d = 0;

    while (m->mc.n > 0 && !ncq_mc_fits(m, n)) {
        uint32_t b = ncq_mc_band(m, ncq_mc_at(m, 0)->lba);
        int64_t d0 = d;

        d += ncq_mc_clean_time(m, b, t + d, &st);
        ncq_mc_event(m, t + d0, t + d, b, ncq_mc_band_extents(m, b), true,
                     true);
        ncq_mc_drop_band(m, b);
        m->mc.forced++;
        m->mc.forced_band = b;
    }
    if (d) {
        m->mc.forced_start = t;
        m->mc.forced_until = t + d;
        ncq_head_move(m, st.cyl, st.head);
    }
    return d;
}

uint64_t ncq_mc_append(NcqModel *m, uint64_t lba, uint32_t n)
{
    NcqMcEntry *e;

    while (m->mc.n > 0 && !ncq_mc_fits(m, n)) {
        /* not reached: the callers made room (ncq_mc_make_room) */
        ncq_mc_drop_band(m, ncq_mc_band(m, ncq_mc_at(m, 0)->lba));
    }
    if ((uint64_t)m->mc.log_pos + n > m->p.mc_sectors) {
        m->mc.log_pos = 0;                /* the log wraps */
    }
    e = ncq_mc_at(m, m->mc.n++);
    e->lba = lba;
    e->n = n;
    e->pos = m->mc.log_pos;
    m->mc.log_pos += n;
    m->mc.used += n;
    ncq_mc_bit(m, ncq_mc_band(m, lba), true);
    ncq_mc_bit(m, ncq_mc_band(m, lba + n - 1), true);
    return ncq_mc_where(m, e->pos);
}

bool ncq_mc_lookup(const NcqModel *m, uint64_t lba, uint32_t n,
                   uint64_t *where)
{
    uint32_t b0, b1, b, i;

    if (!m->p.mc_sectors) {
        return false;
    }
    b0 = ncq_mc_band(m, lba);
    b1 = ncq_mc_band(m, lba + n - 1);
    for (b = b0; b <= b1 && !ncq_mc_has(m, b); b++) {
        /* no band of the read holds cached data: the common case */
    }
    if (b > b1) {
        return false;
    }
    for (i = m->mc.n; i-- > 0;) {
        const NcqMcEntry *e = ncq_mc_at(m, i);

        if (e->lba < lba + n && lba < e->lba + e->n) {
            *where = ncq_mc_where(m, e->pos) +
                     (lba > e->lba ? lba - e->lba : 0);
            return true;
        }
    }
    return false;
}

bool ncq_mc_idle(NcqModel *m, int64_t t)
{
    if (!m->p.mc_sectors || m->mc.n == 0 || m->mech.stopped) {
        return false;
    }
    /*
     * idle since @t, or going on from the band it has just cleaned; the
     * mechanism waits until then, and the cleaning's time is known when
     * it begins (ncq_mc_clean_event)
     */
    m->mc.clean_start = m->mc.clean_run ? t : t + m->p.mc_idle_ns;
    m->mc.clean_band = ncq_mc_band(m, ncq_mc_at(m, 0)->lba);
    ncq_mech_begin(m, NCQ_MECH_CLEAN, m->mc.clean_start);
    return true;
}

bool ncq_mc_clean_event(NcqModel *m)
{
    NcqMechState st;

    if (m->mech.until == m->mc.clean_start) {
        /* the idle delay is over: the band's cleaning begins */
        st = ncq_mech_state_at(m, m->mc.clean_start);
        ncq_mech_begin(m, NCQ_MECH_CLEAN, m->mc.clean_start +
                       ncq_mc_clean_time(m, m->mc.clean_band,
                                         m->mc.clean_start, &st));
        return true;
    }
    ncq_mc_clean_end(m, true);
    return false;
}

void ncq_mc_arrival(NcqModel *m, int64_t t)
{
    m->mc.clean_run = false;
    if (m->mech.op == NCQ_MECH_CLEAN && t < m->mc.clean_start) {
        ncq_mech_end(m, t);               /* not begun: put off */
    }
}

void ncq_mc_clean_end(NcqModel *m, bool done)
{
    uint64_t first = (uint64_t)m->mc.clean_band * m->p.mc_band_sectors;
    NcqPhys ph;

    m->mc.clean_run = done;
    if (m->mech.op == NCQ_MECH_CLEAN &&
        (done || m->now >= m->mc.clean_start)) {
        /* a cleaning that had begun (not the idle delay) */
        ncq_mc_event(m, m->mc.clean_start, done ? m->mech.until : m->now,
                     m->mc.clean_band,
                     ncq_mc_band_extents(m, m->mc.clean_band), false, done);
    }
    if (done) {
        ncq_mc_drop_band(m, m->mc.clean_band);
        ncq_layout_map(m, first, &ph);
        ncq_head_move(m, ph.cyl, ph.head);
    }
}

const char *ncq_mc_rebuild(NcqModel *m)
{
    uint32_t i;

    m->mc.used = 0;
    if (m->mc.nbands) {
        memset(m->mc.band_bit, 0, (m->mc.nbands + 7) / 8);
    }
    for (i = 0; i < m->mc.n; i++) {
        const NcqMcEntry *e = ncq_mc_at(m, i);

        if (e->n < 1 || e->lba >= m->p.capacity ||
            e->n > m->p.capacity - e->lba ||
            (uint64_t)e->pos + e->n > m->p.mc_sectors) {
            return "a media cache extent beyond the disk or the cache";
        }
        m->mc.used += e->n;
        ncq_mc_bit(m, ncq_mc_band(m, e->lba), true);
        ncq_mc_bit(m, ncq_mc_band(m, e->lba + e->n - 1), true);
    }
    if (m->mc.used > m->p.mc_sectors || m->mc.log_pos > m->p.mc_sectors ||
        (m->mech.op == NCQ_MECH_CLEAN && m->mc.clean_band >= m->mc.nbands)) {
        return "the media cache holds more than it can";
    }
    return NULL;
}

void ncq_model_mc_info(const NcqModel *m, NcqMcInfo *out)
{
    out->extents = m->mc.n;
    out->sectors = m->mc.used;
    out->cleaned = m->mc.cleaned;
    out->forced = m->mc.forced;
}

NcqMcState ncq_model_mc_state(const NcqModel *m, int64_t now_ns,
                              uint32_t *band, int64_t *until_ns)
{
    if (m->mech.op == NCQ_MECH_CLEAN) {
        *band = m->mc.clean_band;
        if (now_ns < m->mc.clean_start) {
            *until_ns = m->mc.clean_start;
            return NCQ_MC_WAITING;
        }
        *until_ns = m->mech.until;
        return NCQ_MC_CLEANING;
    }
    if (m->mc.forced && now_ns >= m->mc.forced_start &&
        now_ns < m->mc.forced_until) {
        *band = m->mc.forced_band;
        *until_ns = m->mc.forced_until;
        return NCQ_MC_FORCED;
    }
    return NCQ_MC_NONE;
}

const char *ncq_mc_state_name(NcqMcState s)
{
    static const char *const names[] = {
        [NCQ_MC_NONE] = "none", [NCQ_MC_WAITING] = "waiting",
        [NCQ_MC_CLEANING] = "cleaning", [NCQ_MC_FORCED] = "forced",
    };

    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

int ncq_model_mc_events(NcqModel *m, NcqMcEvent *out, int max)
{
    int k = 0;

    while (k < max && m->mc.ev_n) {
        out[k++] = m->mc.ev[m->mc.ev_head];
        m->mc.ev_head = (m->mc.ev_head + 1) % NCQ_MC_EVENTS;
        m->mc.ev_n--;
    }
    return k;
}
