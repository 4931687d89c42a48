/*
 * ncq-model: public API (commands in, completions out, settings, stats).
 *
 * The model is an event-driven simulation.  Every call first processes
 * all events at times <= now (completions before mechanism events at the
 * same time), so results do not depend on how often advance() is called.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"

static const int64_t ncq_lat_bounds_us[NCQ_LAT_BUCKETS - 1] = {
    50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000,
    200000, 500000, 1000000, 2000000, 5000000, 10000000,
};

int64_t ncq_stats_lat_bound(int bucket)
{
    if (bucket < 0 || bucket >= NCQ_LAT_BUCKETS - 1) {
        return INT64_MAX;
    }
    return ncq_lat_bounds_us[bucket] * 1000;
}

static int ncq_delay_bucket(uint32_t d)
{
    int b = 0;

    while (d && b < NCQ_DELAY_BUCKETS - 1) {
        d >>= 1;
        b++;
    }
    return b;
}

NcqModel *ncq_model_new(const NcqParams *p, uint64_t seed,
                        char *err, size_t errlen)
{
    NcqModel *m;
    int i;

    if (!p) {
        snprintf(err, errlen, "no parameters");
        return NULL;
    }
    if (ncq_params_validate(p, err, errlen) < 0) {
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* memcpy, padding included: saved states compare parameters by bytes */
    memcpy(&m->p, p, sizeof(*p));
    m->s.policy = p->policy;
    m->s.aging_weight_milli = p->aging_weight_milli;
    m->s.starvation_timeout_ns = p->starvation_timeout_ns;
    m->s.prio_timeout_ns = p->prio_timeout_ns;
    m->s.honour_prio = p->honour_prio;
    m->s.clustering_sectors = p->clustering_sectors;
    m->s.write_cache = p->write_cache;
    m->s.zero_latency = p->zero_latency;
    m->rng = seed;
    m->phase = ncq_rng_next(&m->rng) % NCQ_REV;
    m->pf_cutoff = INT64_MAX;
    if (ncq_layout_init(m, err, errlen) < 0) {
        free(m);
        return NULL;
    }
    for (i = 0; i < NCQ_SLOTS; i++) {
        m->slot[i].state = NCQ_SLOT_FREE;
    }
    m->mask[NCQ_SLOT_FREE] = (1ULL << NCQ_SLOTS) - 1;
    ncq_ssd_init(m);
    return m;
}

void ncq_model_free(NcqModel *m)
{
    free(m);
}

const NcqParams *ncq_model_params(const NcqModel *m)
{
    return &m->p;
}

size_t ncq_model_size(const NcqModel *m)
{
    return sizeof(*m);
}

void ncq_model_get_settings(const NcqModel *m, NcqSettings *s)
{
    *s = m->s;
}

static int ncq_settings_check(const NcqModel *m, const NcqSettings *s,
                              char *err, size_t errlen)
{
    if ((unsigned)s->policy >= NCQ_POLICY__MAX) {
        snprintf(err, errlen, "unknown policy %d", (int)s->policy);
        return NCQ_ERR_INVAL;
    }
    if (s->starvation_timeout_ns < 0 || s->prio_timeout_ns < 0) {
        snprintf(err, errlen, "time-outs must not be negative");
        return NCQ_ERR_INVAL;
    }
    if (s->clustering_sectors > NCQ_MAX_SECTORS) {
        snprintf(err, errlen, "clustering threshold above %d sectors",
                 NCQ_MAX_SECTORS);
        return NCQ_ERR_INVAL;
    }
    if (s->zero_latency && !m->p.zero_latency) {
        snprintf(err, errlen, "model %s has no zero-latency access",
                 m->p.name);
        return NCQ_ERR_INVAL;
    }
    return 0;
}

int ncq_model_set_settings(NcqModel *m, const NcqSettings *s,
                           char *err, size_t errlen)
{
    int rc = ncq_settings_check(m, s, err, errlen);

    if (rc == 0) {
        m->s = *s;
    }
    return rc;
}

static void ncq_run_to(NcqModel *m, int64_t now);

int ncq_model_set_settings_at(NcqModel *m, const NcqSettings *s,
                              int64_t now_ns, char *err, size_t errlen)
{
    int rc = ncq_settings_check(m, s, err, errlen);

    if (rc < 0) {
        return rc;
    }
    ncq_run_to(m, now_ns);
    m->s = *s;
    return 0;
}

/* Earliest slot whose completion time is known but not yet reported. */
static int ncq_next_done(const NcqModel *m)
{
    uint64_t bits = m->mask[NCQ_SLOT_SERVICE];
    int best = -1;

    while (bits) {
        int i = __builtin_ctzll(bits);
        const NcqSlot *s = &m->slot[i];

        bits &= bits - 1;
        if (best < 0 || s->c.complete_ns < m->slot[best].c.complete_ns ||
            (s->c.complete_ns == m->slot[best].c.complete_ns &&
             s->done_seq < m->slot[best].done_seq)) {
            best = i;
        }
    }
    return best;
}

static void ncq_emit(NcqModel *m, NcqSlot *s)
{
    int64_t lat = s->c.complete_ns - s->c.arrival_ns;
    uint64_t bits = m->mask[NCQ_SLOT_QUEUED] | m->mask[NCQ_SLOT_SERVICE];
    int b;

    while (bits) {
        NcqSlot *o = &m->slot[__builtin_ctzll(bits)];

        bits &= bits - 1;
        if (o != s && o->seq < s->seq) {
            o->c.delay_count++;
        }
    }
    ncq_slot_state(m, s, NCQ_SLOT_DONE);
    s->emit_seq = ++m->emit_seq;
    m->outstanding--;
    m->st.completed[s->c.op & 3]++;
    if (s->c.cache_hit) {
        m->st.cache_hits++;
    }
    if (lat > m->st.max_latency_ns) {
        m->st.max_latency_ns = lat;
    }
    for (b = 0; b < NCQ_LAT_BUCKETS - 1; b++) {
        if (lat < ncq_lat_bounds_us[b] * 1000) {
            break;
        }
    }
    m->st.lat_hist[b]++;
    m->st.delay_hist[ncq_delay_bucket(s->c.delay_count)]++;
    if (s->c.delay_count > m->st.max_delay_count) {
        m->st.max_delay_count = s->c.delay_count;
    }
}

static void ncq_mech_event(NcqModel *m, int64_t t)
{
    if (m->mech == NCQ_MECH_PREFETCH) {
        uint32_t k = ncq_pf_stop(m, t);

        /* a whole run, and the host still reads the stream: go on */
        m->pf_armed = k >= m->pf_n && m->seg[m->pf_seg].valid &&
                      m->seg[m->pf_seg].end == m->last_lba_end &&
                      m->last_lba_end < m->pf_consumed +
                                        m->p.readahead_sectors;
    }
    m->mech = NCQ_MECH_IDLE;
    ncq_mech_decide(m, t);
}

static void ncq_run_to(NcqModel *m, int64_t now)
{
    for (;;) {
        int64_t tm = m->mech != NCQ_MECH_IDLE ? m->mech_until : INT64_MAX;
        int d = ncq_next_done(m);
        int64_t tc = d >= 0 ? m->slot[d].c.complete_ns : INT64_MAX;

        if (tc <= now && tc <= tm) {
            ncq_emit(m, &m->slot[d]);
        } else if (tm <= now) {
            ncq_mech_event(m, tm);
        } else {
            break;
        }
    }
    if (now > m->now) {
        m->now = now;
    }
}

static int ncq_queued_outstanding(const NcqModel *m)
{
    uint64_t tags = (1ULL << NCQ_MAX_TAGS) - 1;

    return __builtin_popcountll((m->mask[NCQ_SLOT_QUEUED] |
                                 m->mask[NCQ_SLOT_SERVICE]) & tags);
}

static int ncq_check(NcqModel *m, const NcqCmd *cmd)
{
    if ((unsigned)cmd->op > NCQ_OP_OTHER) {
        return NCQ_ERR_INVAL;
    }
    if (cmd->op == NCQ_OP_READ || cmd->op == NCQ_OP_WRITE) {
        if (cmd->sectors < 1 || cmd->sectors > NCQ_MAX_SECTORS) {
            return NCQ_ERR_INVAL;
        }
        if (cmd->lba >= m->p.capacity ||
            cmd->sectors > m->p.capacity - cmd->lba) {
            return NCQ_ERR_RANGE;
        }
    }
    if (cmd->queued) {
        if (cmd->op != NCQ_OP_READ && cmd->op != NCQ_OP_WRITE) {
            return NCQ_ERR_INVAL;
        }
        if (cmd->id >= NCQ_MAX_TAGS) {
            return NCQ_ERR_INVAL;
        }
        if (m->slot[NCQ_MAX_TAGS].state != NCQ_SLOT_FREE &&
            m->slot[NCQ_MAX_TAGS].state != NCQ_SLOT_DONE) {
            return NCQ_ERR_MIXED;
        }
        if (m->slot[cmd->id].state != NCQ_SLOT_FREE) {
            return NCQ_ERR_TAG_BUSY;
        }
        if (ncq_queued_outstanding(m) >= (int)m->p.queue_depth) {
            return NCQ_ERR_QUEUE_FULL;
        }
    } else {
        if (ncq_queued_outstanding(m) > 0) {
            return NCQ_ERR_MIXED;
        }
        if (m->slot[NCQ_MAX_TAGS].state != NCQ_SLOT_FREE) {
            return NCQ_ERR_TAG_BUSY;
        }
    }
    return 0;
}

/* A read served from the buffer at @t: overhead and bus time only. */
void ncq_serve_hit(NcqModel *m, NcqSlot *s, int64_t t)
{
    int64_t st = t > m->bus_free ? t : m->bus_free;
    int64_t bus = ncq_bus_ns(m, s->cmd.sectors);

    m->bus_free = st + m->p.ovh_read_hit_ns + bus;
    s->c.dispatch_ns = t;
    s->c.overhead_ns = m->p.ovh_read_hit_ns + (st - t);
    s->c.transfer_ns = bus;
    s->c.complete_ns = m->bus_free;
    s->c.reason = NCQ_REASON_CACHE;
    s->c.cache_hit = true;
    ncq_slot_state(m, s, NCQ_SLOT_SERVICE);
    s->done_seq = ++m->done_seq;
    m->st.sectors_read += s->cmd.sectors;
}

static void ncq_complete_now(NcqModel *m, NcqSlot *s, int64_t done,
                             int64_t ovh, int64_t xfer)
{
    s->c.dispatch_ns = s->c.arrival_ns;
    s->c.overhead_ns = ovh;
    s->c.transfer_ns = xfer;
    s->c.complete_ns = done;
    s->c.reason = NCQ_REASON_CACHE;
    ncq_slot_state(m, s, NCQ_SLOT_SERVICE);
    s->done_seq = ++m->done_seq;
}

int ncq_model_submit(NcqModel *m, const NcqCmd *cmd, int64_t now_ns)
{
    NcqSlot *s;
    int rc, idx, seg;

    if (now_ns < m->now) {
        m->st.rejected++;
        return NCQ_ERR_TIME;
    }
    ncq_run_to(m, now_ns);
    rc = ncq_check(m, cmd);
    if (rc < 0) {
        m->st.rejected++;
        return rc;
    }
    idx = cmd->queued ? (int)cmd->id : NCQ_MAX_TAGS;
    s = &m->slot[idx];
    memset(s, 0, sizeof(*s));
    s->cmd = *cmd;
    if (!cmd->queued) {
        s->cmd.id = NCQ_ID_NONQUEUED;
    }
    if (cmd->op != NCQ_OP_READ && cmd->op != NCQ_OP_WRITE) {
        s->cmd.lba = 0;
        s->cmd.sectors = 0;
    }
    s->seq = ++m->seq;
    s->c.id = s->cmd.id;
    s->c.op = cmd->op;
    s->c.lba = s->cmd.lba;
    s->c.sectors = s->cmd.sectors;
    s->c.fua = cmd->fua;
    s->c.prio = cmd->prio;
    s->c.queued = cmd->queued;
    s->c.arrival_ns = now_ns;
    s->c.dispatch_ns = -1;
    s->c.queue_len_at_arrival = m->outstanding;
    ncq_fault_check(m, s);
    m->outstanding++;
    m->st.submitted++;
    if ((uint32_t)m->outstanding > m->st.max_queue_len) {
        m->st.max_queue_len = m->outstanding;
    }

    if (m->p.kind == NCQ_KIND_SSD) {
        ncq_ssd_submit(m, s, now_ns);
        return 0;
    }
    if (cmd->op == NCQ_OP_OTHER) {
        ncq_complete_now(m, s, now_ns + m->p.ovh_other_ns,
                         m->p.ovh_other_ns, 0);
        s->c.reason = NCQ_REASON_ONLY;
        return 0;
    }
    if (cmd->op != NCQ_OP_FLUSH) {
        NcqPhys ph;

        ncq_layout_map(m, s->cmd.lba, &ph);
        s->cyl = ph.cyl;
        s->head = ph.head;
        s->angle = ncq_layout_angle(m, &ph);
        s->ph = ph;
    }
    if (cmd->op == NCQ_OP_READ && !s->cmd.fua &&
        ncq_cache_lookup(m, cmd->lba, cmd->sectors, now_ns, &seg)) {
        ncq_serve_hit(m, s, now_ns);
        ncq_pf_consume(m, seg, cmd->lba + cmd->sectors, now_ns);
        return 0;
    }
    if (cmd->op == NCQ_OP_READ && !s->cmd.fua &&
        ncq_pf_stream_hit(m, s, now_ns, false)) {
        return 0;
    }
    if (cmd->op == NCQ_OP_WRITE && !s->cmd.fua && m->s.write_cache &&
        ncq_wcache_insert(m, cmd->lba, cmd->sectors)) {
        int64_t st = now_ns > m->bus_free ? now_ns : m->bus_free;
        int64_t bus = ncq_bus_ns(m, cmd->sectors);

        ncq_cache_invalidate(m, cmd->lba, cmd->sectors);
        m->bus_free = st + m->p.ovh_write_ns + bus;
        ncq_complete_now(m, s, m->bus_free, m->p.ovh_write_ns +
                         (st - now_ns), bus);
        s->c.cache_hit = true;
        if (m->mech == NCQ_MECH_IDLE) {
            ncq_mech_decide(m, now_ns);
        }
        return 0;
    }
    ncq_slot_state(m, s, NCQ_SLOT_QUEUED);
    m->qorder[m->nq++] = idx;
    if (cmd->op == NCQ_OP_READ && !s->cmd.fua && cmd->queued) {
        m->rd_lo[idx] = cmd->lba;
        m->rd_hi[idx] = cmd->lba + cmd->sectors;
    } else {
        m->rd_lo[idx] = UINT64_MAX;
        m->rd_hi[idx] = 0;
    }
    if (m->mech == NCQ_MECH_PREFETCH) {
        if (now_ns >= m->pf_min_end) {
            ncq_pf_stop(m, now_ns);
        } else if (m->mech_until > m->pf_min_end) {
            m->mech_until = m->pf_min_end;  /* finish the minimum first */
            m->pf_end_n = m->pf_min_n;
            m->pf_end_cyl = m->pf_min_cyl;
            m->pf_end_head = m->pf_min_head;
        }
    }
    if (m->mech == NCQ_MECH_IDLE) {
        ncq_mech_decide(m, now_ns);
    }
    return 0;
}

int64_t ncq_model_next_event(NcqModel *m)
{
    int64_t t = m->mech != NCQ_MECH_IDLE ? m->mech_until : INT64_MAX;
    uint64_t bits = m->mask[NCQ_SLOT_SERVICE];

    if (m->mask[NCQ_SLOT_DONE]) {
        return m->now;
    }
    while (bits) {
        const NcqSlot *s = &m->slot[__builtin_ctzll(bits)];

        bits &= bits - 1;
        if (s->c.complete_ns < t) {
            t = s->c.complete_ns;
        }
    }
    return t;
}

int ncq_model_advance(NcqModel *m, int64_t now_ns, NcqCompletion *out,
                      int max)
{
    int n = 0;

    ncq_run_to(m, now_ns);
    while (n < max && m->mask[NCQ_SLOT_DONE]) {
        uint64_t bits = m->mask[NCQ_SLOT_DONE];
        int best = -1;

        while (bits) {
            int i = __builtin_ctzll(bits);

            bits &= bits - 1;
            if (best < 0 || m->slot[i].emit_seq < m->slot[best].emit_seq) {
                best = i;
            }
        }
        out[n++] = m->slot[best].c;
        ncq_slot_state(m, &m->slot[best], NCQ_SLOT_FREE);
    }
    return n;
}

void ncq_model_reset(NcqModel *m, int64_t now_ns)
{
    int i;

    ncq_run_to(m, now_ns);
    for (i = 0; i < NCQ_SLOTS; i++) {
        ncq_slot_state(m, &m->slot[i], NCQ_SLOT_FREE);
    }
    m->nq = 0;
    m->outstanding = 0;
}

uint64_t ncq_model_power_loss(NcqModel *m, int64_t now_ns)
{
    uint64_t lost;
    int i;

    ncq_model_reset(m, now_ns);
    if (m->mech == NCQ_MECH_PREFETCH) {
        ncq_pf_stop(m, m->now);
    }
    m->pf_armed = false;
    lost = m->dirty_sectors;
    if (m->mech == NCQ_MECH_DESTAGE) {
        /* an interrupted destage does not count as written */
        lost += m->destage.n;
        m->mech = NCQ_MECH_IDLE;
        m->mech_until = m->now;
    }
    m->ndirty = 0;
    m->dirty_sectors = 0;
    for (i = 0; i < NCQ_MAX_SEGS; i++) {
        m->seg[i].valid = false;
    }
    return lost;
}

static int ncq_range_cmp(const void *a, const void *b)
{
    const NcqRange *x = a, *y = b;

    return x->lba < y->lba ? -1 : x->lba > y->lba;
}

int ncq_model_volatile(NcqModel *m, int64_t now_ns, NcqRange *out, int max)
{
    NcqRange r[NCQ_MAX_DIRTY + 1 + NCQ_SLOTS];
    int n = 0, i, k = 0;

    ncq_run_to(m, now_ns);
    for (i = 0; i < m->ndirty; i++) {
        r[n++] = (NcqRange) { m->dirty[i].lba, m->dirty[i].n };
    }
    if (m->mech == NCQ_MECH_DESTAGE) {
        r[n++] = (NcqRange) { m->destage.lba, m->destage.n };
    }
    for (i = 0; i < NCQ_SLOTS; i++) {
        const NcqSlot *s = &m->slot[i];

        if ((s->state == NCQ_SLOT_QUEUED || s->state == NCQ_SLOT_SERVICE) &&
            s->cmd.op == NCQ_OP_WRITE) {
            r[n++] = (NcqRange) { s->cmd.lba, s->cmd.sectors };
        }
    }
    qsort(r, n, sizeof(r[0]), ncq_range_cmp);
    for (i = 0; i < n; i++) {
        if (k && r[i].lba <= out[k - 1].lba + out[k - 1].sectors) {
            uint64_t end = r[i].lba + r[i].sectors;

            if (end > out[k - 1].lba + out[k - 1].sectors) {
                out[k - 1].sectors = end - out[k - 1].lba;
            }
            continue;
        }
        if (k >= max) {
            return NCQ_ERR_INVAL;
        }
        out[k++] = r[i];
    }
    return k;
}

int ncq_model_outstanding(const NcqModel *m)
{
    return m->outstanding;
}

void ncq_model_stats(const NcqModel *m, NcqStats *st)
{
    *st = m->st;
}

void ncq_model_stats_clear(NcqModel *m)
{
    memset(&m->st, 0, sizeof(m->st));
}

int ncq_model_queue_list(NcqModel *m, int64_t now_ns,
                         NcqQueueEntry *out, int max)
{
    int order[NCQ_SLOTS], n = 0, i, j;

    ncq_run_to(m, now_ns);
    for (i = 0; i < NCQ_SLOTS; i++) {
        if (m->slot[i].state == NCQ_SLOT_QUEUED ||
            m->slot[i].state == NCQ_SLOT_SERVICE) {
            for (j = n; j > 0 && m->slot[order[j - 1]].seq > m->slot[i].seq;
                 j--) {
                order[j] = order[j - 1];
            }
            order[j] = i;
            n++;
        }
    }
    for (i = 0; i < n && i < max; i++) {
        const NcqSlot *s = &m->slot[order[i]];

        out[i].id = s->cmd.id;
        out[i].op = s->cmd.op;
        out[i].lba = s->cmd.lba;
        out[i].sectors = s->cmd.sectors;
        out[i].prio = s->cmd.prio;
        out[i].in_service = s->state == NCQ_SLOT_SERVICE;
        out[i].age_ns = now_ns - s->c.arrival_ns;
    }
    return i;
}

const char *ncq_op_name(NcqOp op)
{
    static const char *const n[] = { "R", "W", "F", "O" };

    return (unsigned)op <= NCQ_OP_OTHER ? n[op] : "?";
}

const char *ncq_reason_name(NcqReason r)
{
    static const char *const n[NCQ_REASON__MAX] = {
        "policy", "aged", "priority", "timeout", "only", "clustered",
        "cache",
    };

    return (unsigned)r < NCQ_REASON__MAX ? n[r] : "?";
}

const char *ncq_strerror(int err)
{
    switch (err) {
    case NCQ_OK:
        return "success";
    case NCQ_ERR_INVAL:
        return "invalid command";
    case NCQ_ERR_RANGE:
        return "LBA range beyond capacity";
    case NCQ_ERR_TAG_BUSY:
        return "tag already active";
    case NCQ_ERR_QUEUE_FULL:
        return "queue full";
    case NCQ_ERR_MIXED:
        return "queued and non-queued commands mixed";
    case NCQ_ERR_TIME:
        return "time went backwards";
    case NCQ_ERR_PARSE:
        return "malformed parameters";
    case NCQ_ERR_IO:
        return "cannot read parameter file";
    case NCQ_ERR_NOMEM:
        return "out of memory";
    default:
        return "unknown error";
    }
}
