/*
 * ncq-model: the command queue (NcqQueue), which only this file writes.
 *
 * A command lives in a slot (one per tag, one for a non-queued command)
 * that goes FREE -> QUEUED (waiting for the firmware) -> SERVICE (its
 * completion time is known) -> DONE (completed, not yet returned) -> FREE.
 * Every completion time is fixed by ncq_slot_complete(), which also
 * applies an injected delay or hang.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
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

static void ncq_slot_state(NcqModel *m, NcqSlot *s, NcqSlotState st)
{
    uint64_t bit = 1ULL << (s - m->q.slot);

    m->q.mask[s->state] &= ~bit;
    s->state = st;
    m->q.mask[st] |= bit;
}

void ncq_queue_init(NcqModel *m)
{
    int i;

    for (i = 0; i < NCQ_SLOTS; i++) {
        m->q.slot[i].state = NCQ_SLOT_FREE;
    }
    m->q.mask[NCQ_SLOT_FREE] = (1ULL << NCQ_SLOTS) - 1;
}

/*
 * A command enters its slot at @now: fill its completion record as far
 * as it is known on arrival, what its fault rules decided, and where on
 * a disk it starts.
 */
NcqSlot *ncq_queue_admit(NcqModel *m, const NcqCmd *cmd, int64_t now,
                         const NcqFaultFate *fate)
{
    int idx = cmd->queued ? (int)cmd->id : NCQ_MAX_TAGS;
    NcqSlot *s = &m->q.slot[idx];

    memset(s, 0, sizeof(*s));
    s->cmd = *cmd;
    if (!cmd->queued) {
        s->cmd.id = NCQ_ID_NONQUEUED;
    }
    if (cmd->op != NCQ_OP_READ && cmd->op != NCQ_OP_WRITE) {
        /* a zone action keeps the zone it names (the trace shows it) */
        if (!cmd->zone_action || cmd->zone_all) {
            s->cmd.lba = 0;
        }
        s->cmd.sectors = 0;
    }
    s->seq = ++m->q.seq;
    s->c.id = s->cmd.id;
    s->c.op = cmd->op;
    s->c.lba = s->cmd.lba;
    s->c.sectors = s->cmd.sectors;
    s->c.fua = cmd->fua;
    s->c.prio = cmd->prio;
    s->c.queued = cmd->queued;
    s->c.arrival_ns = now;
    s->c.dispatch_ns = -1;
    s->c.queue_len_at_arrival = m->q.outstanding;
    s->c.fault = fate->kind;
    s->c.fault_lba = fate->lba;
    s->c.corrupt_mask = fate->corrupt_mask;
    s->c.corrupt_seed = fate->corrupt_seed;
    s->fault_delay_ns = fate->delay_ns;
    s->fault_hang = fate->hang;
    s->c.cdl = cmd->cdl;
    s->cdl_desc = cmd->cdl <= NCQ_CDL_DESCS ? cmd->cdl : 0;
    if (m->cdl.enabled) {
        /* NCQ priority and CDL exclude each other: CDL wins (cdl.md) */
        s->cmd.prio = false;
    }
    if (fate->kind == NCQ_FAULT_UNC || fate->kind == NCQ_FAULT_WRITE ||
        fate->kind == NCQ_FAULT_HANG || fate->kind == NCQ_FAULT_CORRUPT) {
        /*
         * The failing sectors are on the media: no buffer hit, no write
         * caching, as if the host had asked for FUA.
         */
        s->cmd.fua = true;
    }
    if (m->p.kind == NCQ_KIND_HDD &&
        (cmd->op == NCQ_OP_READ || cmd->op == NCQ_OP_WRITE)) {
        ncq_target_of(m, cmd->lba, cmd->op == NCQ_OP_WRITE, &s->tgt);
    }
    m->q.outstanding++;
    m->st.submitted++;
    if ((uint32_t)m->q.outstanding > m->st.max_queue_len) {
        m->st.max_queue_len = m->q.outstanding;
    }
    return s;
}

/* Into the firmware queue, after the commands that arrived before. */
void ncq_queue_push(NcqModel *m, NcqSlot *s)
{
    int idx = s - m->q.slot;

    ncq_slot_state(m, s, NCQ_SLOT_QUEUED);
    m->q.order[m->q.n++] = idx;
    if (s->cmd.op == NCQ_OP_READ && !s->cmd.fua && s->cmd.queued) {
        m->q.rd_lo[idx] = s->cmd.lba;
        m->q.rd_hi[idx] = s->cmd.lba + s->cmd.sectors;
    } else {
        m->q.rd_lo[idx] = UINT64_MAX;
        m->q.rd_hi[idx] = 0;
    }
}

/* Out of the firmware queue (about to be served). */
void ncq_queue_remove(NcqModel *m, int idx)
{
    int i;

    for (i = 0; i < m->q.n; i++) {
        if (m->q.order[i] == idx) {
            for (; i + 1 < m->q.n; i++) {
                m->q.order[i] = m->q.order[i + 1];
            }
            m->q.n--;
            return;
        }
    }
}

/* Back into the queue at position @pos, from where it was just removed. */
void ncq_queue_insert_at(NcqModel *m, int pos, int idx)
{
    memmove(&m->q.order[pos + 1], &m->q.order[pos],
            (m->q.n - pos) * sizeof(m->q.order[0]));
    m->q.order[pos] = idx;
    m->q.n++;
}

/* Back into the queue in arrival order. */
void ncq_queue_reinsert(NcqModel *m, int idx)
{
    int i;

    m->q.order[m->q.n++] = idx;
    for (i = m->q.n - 1; i > 0 &&
         m->q.slot[m->q.order[i - 1]].seq > m->q.slot[idx].seq; i--) {
        m->q.order[i] = m->q.order[i - 1];
        m->q.order[i - 1] = idx;
    }
}

/* The firmware first takes up @s at @t (a FLUSH waits for destaging). */
void ncq_slot_dispatch(NcqModel *m, NcqSlot *s, int64_t t)
{
    if (s->c.dispatch_ns < 0) {
        s->c.dispatch_ns = t;
    }
}

/*
 * The one place a completion time is fixed: @s is served as @sv says.
 * An injected slow command completes late, a hung one never (fault.c).
 */
void ncq_slot_complete(NcqModel *m, NcqSlot *s, const NcqService *svc)
{
    NcqCompletion *c = &s->c;
    NcqService v = *svc, *sv = &v;

    if ((s->fault_delay_ns || s->fault_hang) &&
        s->c.cdl_outcome < NCQ_CDL_ABORT_INACTIVE) {
        /*
         * The drive retries an injected slow sector, or hangs on it;
         * not a command a missed duration limit ended while queued.
         */
        v.complete_ns = s->fault_hang ? INT64_MAX :
                        v.complete_ns + s->fault_delay_ns;
    }
    /* a missed duration limit may end it sooner (cdl.c) */
    ncq_cdl_service(m, s, sv);

    c->dispatch_ns = sv->dispatch_ns;
    c->overhead_ns = sv->overhead_ns;
    c->seek_ns = sv->seek_ns;
    c->rotate_ns = sv->rotate_ns;
    c->transfer_ns = sv->transfer_ns;
    c->media_start_ns = sv->media_start_ns;
    c->media_end_ns = sv->media_end_ns;
    c->access_id = sv->access_id;
    c->reason = sv->reason;
    c->cache_hit = sv->cache_hit;
    c->complete_ns = sv->complete_ns;
    ncq_slot_state(m, s, NCQ_SLOT_SERVICE);
    s->done_seq = ++m->q.done_seq;
}

/* Earliest slot whose completion time is known but not yet reported. */
int ncq_queue_next_done(const NcqModel *m)
{
    uint64_t bits = m->q.mask[NCQ_SLOT_SERVICE];
    int best = -1;

    while (bits) {
        int i = __builtin_ctzll(bits);
        const NcqSlot *s = &m->q.slot[i];

        bits &= bits - 1;
        if (best < 0 || s->c.complete_ns < m->q.slot[best].c.complete_ns ||
            (s->c.complete_ns == m->q.slot[best].c.complete_ns &&
             s->done_seq < m->q.slot[best].done_seq)) {
            best = i;
        }
    }
    return best;
}

static void ncq_count_completion(NcqModel *m, const NcqSlot *s)
{
    int64_t lat = s->c.complete_ns - s->c.arrival_ns;
    int b;

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

/* Slot @idx completes now: older commands still in the drive were passed. */
void ncq_queue_emit(NcqModel *m, int idx)
{
    NcqSlot *s = &m->q.slot[idx];
    uint64_t bits = m->q.mask[NCQ_SLOT_QUEUED] | m->q.mask[NCQ_SLOT_SERVICE];

    while (bits) {
        NcqSlot *o = &m->q.slot[__builtin_ctzll(bits)];

        bits &= bits - 1;
        if (o != s && o->seq < s->seq) {
            o->c.delay_count++;
        }
    }
    ncq_slot_state(m, s, NCQ_SLOT_DONE);
    s->emit_seq = ++m->q.emit_seq;
    m->q.outstanding--;
    ncq_count_completion(m, s);
}

/* Hand completed commands over in completion order; their slots free. */
int ncq_queue_take_done(NcqModel *m, NcqCompletion *out, int max)
{
    int n = 0;

    while (n < max && m->q.mask[NCQ_SLOT_DONE]) {
        uint64_t bits = m->q.mask[NCQ_SLOT_DONE];
        int best = -1;

        while (bits) {
            int i = __builtin_ctzll(bits);

            bits &= bits - 1;
            if (best < 0 ||
                m->q.slot[i].emit_seq < m->q.slot[best].emit_seq) {
                best = i;
            }
        }
        out[n++] = m->q.slot[best].c;
        ncq_slot_state(m, &m->q.slot[best], NCQ_SLOT_FREE);
    }
    return n;
}

/* Every command is dropped (reset, power loss). */
void ncq_queue_clear(NcqModel *m)
{
    int i;

    for (i = 0; i < NCQ_SLOTS; i++) {
        ncq_slot_state(m, &m->q.slot[i], NCQ_SLOT_FREE);
    }
    m->q.n = 0;
    m->q.outstanding = 0;
}
