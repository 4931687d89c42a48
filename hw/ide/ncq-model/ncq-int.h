/*
 * ncq-model private definitions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_INT_H
#define NCQ_INT_H

#include "hw/ide/ncq-model.h"

/* Rotational position unit: one revolution = NCQ_REV units. */
#define NCQ_REV 60000000000ULL   /* ns per minute: pos = t * rpm */
#define NCQ_ROT_SLOP_NS 4        /* this late still catches a sector */

#define NCQ_SLOTS       (NCQ_MAX_TAGS + 1)  /* tags + one non-queued */
#define NCQ_MAX_SEGS    32
#define NCQ_MAX_DIRTY   128
#define NCQ_DESTAGE_MAX 2048                /* sectors per destage access */
#define NCQ_SSD_MAX_CH  16
#define NCQ_SSD_MAX_DIE 16
#define NCQ_SSD_CHUNKS  1024

typedef enum NcqSlotState {
    NCQ_SLOT_FREE = 0,
    NCQ_SLOT_QUEUED,      /* waiting in the firmware queue */
    NCQ_SLOT_SERVICE,     /* completion time known, not yet reached */
    NCQ_SLOT_DONE,        /* completed, not yet returned by advance() */
} NcqSlotState;

typedef enum NcqMechOp {
    NCQ_MECH_IDLE = 0,
    NCQ_MECH_CMD,
    NCQ_MECH_PREFETCH,
    NCQ_MECH_DESTAGE,
} NcqMechOp;

typedef struct NcqSlot {
    NcqSlotState state;
    NcqCmd cmd;
    uint64_t seq;         /* arrival order */
    uint64_t done_seq;    /* order in which completion became known */
    uint64_t emit_seq;    /* completion order */
    NcqCompletion c;
    /* geometry of the first sector, computed at submit */
    uint32_t cyl;
    uint32_t head;
    uint64_t angle;       /* rotational position of its start */
    NcqPhys ph;
    /* injected at submit (fault.c) */
    int64_t fault_delay_ns;
    bool fault_hang;
} NcqSlot;

typedef struct NcqSeg {
    uint64_t start;
    uint64_t end;         /* exclusive */
    uint64_t lru;
    bool valid;
} NcqSeg;

typedef struct NcqExtent {
    uint64_t lba;
    uint32_t n;
} NcqExtent;

typedef struct NcqChunk {
    int64_t free_ns;
    uint32_t bytes;
} NcqChunk;

typedef struct NcqSsd {
    int64_t ctrl_free;
    int64_t die_free[NCQ_SSD_MAX_CH * NCQ_SSD_MAX_DIE];
    int64_t ch_free[NCQ_SSD_MAX_CH];
    uint32_t rr;              /* next die to program */
    uint32_t open_bytes;      /* bytes waiting for a full page */
    int64_t last_program_end;
    uint32_t nchunks;
    NcqChunk chunk[NCQ_SSD_CHUNKS];
} NcqSsd;

struct NcqModel {
    NcqParams p;
    NcqSettings s;
    uint64_t rng;
    int64_t now;

    /* layout, precomputed */
    uint64_t zone_first[NCQ_MAX_ZONES + 1];
    uint64_t layout_sectors;
    uint64_t phase;               /* rotational phase at t = 0 */
    uint64_t track_skew_u;
    uint64_t cyl_step_u;          /* skew added per cylinder */

    /* commands */
    NcqSlot slot[NCQ_SLOTS];
    uint64_t mask[4];             /* slots in each NcqSlotState */
    int qorder[NCQ_SLOTS];        /* queued slots, arrival order */
    /* per slot: [rd_lo, rd_hi) of a queued buffered read, else empty */
    uint64_t rd_lo[NCQ_SLOTS], rd_hi[NCQ_SLOTS];
    int nq;
    int outstanding;
    uint64_t seq;
    uint64_t done_seq;
    uint64_t emit_seq;
    uint64_t access_seq;

    /* mechanism */
    NcqMechOp mech;
    int64_t mech_until;
    uint32_t cur_cyl;
    uint32_t cur_head;
    uint64_t last_lba_end;
    int64_t bus_free;
    int64_t plan_cutoff;          /* plan_ahead: arrivals after this wait */

    /* read cache + prefetch */
    NcqSeg seg[NCQ_MAX_SEGS];
    uint64_t lru_clock;
    bool pf_armed;
    int pf_seg;
    uint64_t pf_lba;              /* first sector being prefetched */
    uint32_t pf_n;
    int64_t pf_first;             /* first sector under the head */
    uint64_t pf_consumed;         /* host has read pf_seg up to here */
    int64_t pf_min_end;           /* minimum read-ahead done */
    NcqPhys pf_ph;                /* where the read-ahead starts */
    uint32_t pf_min_cyl, pf_min_head, pf_end_cyl, pf_end_head;
    uint32_t pf_min_n;            /* sectors of the minimum read-ahead */
    uint32_t pf_end_n;            /* sectors read when it ends as planned */
    /* the next command is chosen among those here by then (or all) */
    int64_t pf_cutoff;
    /* buffer contents changed within these ranges since the last check */
#define NCQ_CHG_RANGES 4
    int nchg;
    uint64_t chg_lo[NCQ_CHG_RANGES], chg_hi[NCQ_CHG_RANGES];

    /* write cache */
    NcqExtent dirty[NCQ_MAX_DIRTY];
    int ndirty;
    uint64_t dirty_sectors;
    NcqExtent destage;            /* extent being written */

    NcqSsd ssd;
    NcqStats st;

    /* fault injection rules (fault.c) */
    NcqFaultRule fault[NCQ_MAX_FAULTS];
    int nfaults;
};

static inline void ncq_slot_state(NcqModel *m, NcqSlot *s,
                                  NcqSlotState st)
{
    uint64_t bit = 1ULL << (s - m->slot);

    m->mask[s->state] &= ~bit;
    s->state = st;
    m->mask[st] |= bit;
    /*
     * Every path that fixes a completion time passes here: an injected
     * slow command completes late, a hung one never (fault.c).
     */
    if (st == NCQ_SLOT_SERVICE && (s->fault_delay_ns || s->fault_hang)) {
        s->c.complete_ns = s->fault_hang ? INT64_MAX :
                           s->c.complete_ns + s->fault_delay_ns;
    }
}

/* layout.c */
int ncq_layout_init(NcqModel *m, char *err, size_t errlen);
void ncq_layout_map(const NcqModel *m, uint64_t lba, NcqPhys *ph);
uint64_t ncq_layout_angle(const NcqModel *m, const NcqPhys *ph);
uint32_t ncq_layout_spt(const NcqModel *m, uint32_t zone);

/* mech.c */
int64_t ncq_seek_time(const NcqParams *p, uint32_t dist);
uint64_t ncq_rot_pos(const NcqModel *m, int64_t t);
int64_t ncq_rot_wait(const NcqModel *m, int64_t t, uint64_t angle);
int64_t ncq_position_time(const NcqModel *m, uint32_t cyl, uint32_t head,
                          int64_t ts, const NcqSlot *s, int64_t *seek);
int64_t ncq_position_time_at(const NcqModel *m, uint32_t cyl, uint32_t head,
                             uint64_t pos0, const NcqSlot *s);
int64_t ncq_media_walk_from(const NcqModel *m, const NcqPhys *start,
                            uint32_t n, int64_t t_first, uint32_t *ecyl,
                            uint32_t *ehead, const uint32_t *marks,
                            int64_t *mark_t, int nmarks);
int64_t ncq_media_walk(const NcqModel *m, uint64_t lba, uint32_t n,
                       int64_t t_first, uint32_t *ecyl, uint32_t *ehead,
                       const uint32_t *marks, int64_t *mark_t, int nmarks);
uint32_t ncq_media_done_by(const NcqModel *m, uint64_t lba, uint32_t n,
                           int64_t t_first, int64_t t);
int64_t ncq_bus_ns(const NcqModel *m, uint64_t sectors);

/* cache.c */
bool ncq_cache_lookup(NcqModel *m, uint64_t lba, uint32_t n, int64_t t,
                      int *seg);
void ncq_pf_consume(NcqModel *m, int seg, uint64_t end, int64_t t);
bool ncq_pf_stream_hit(NcqModel *m, NcqSlot *s, int64_t t, bool force);
void ncq_cache_changed(NcqModel *m, uint64_t lo, uint64_t hi);
int ncq_cache_fill(NcqModel *m, uint64_t lba, uint32_t n);
void ncq_cache_invalidate(NcqModel *m, uint64_t lba, uint32_t n);
bool ncq_wcache_insert(NcqModel *m, uint64_t lba, uint32_t n);
void ncq_wcache_remove(NcqModel *m, uint64_t lba, uint32_t n);
uint32_t ncq_pf_progress(const NcqModel *m, int64_t t);
uint32_t ncq_pf_stop(NcqModel *m, int64_t t);

/* sched.c */
void ncq_mech_decide(NcqModel *m, int64_t t);
int ncq_sched_pick(NcqModel *m, int64_t t, NcqReason *reason,
                   int64_t *decide_ns);

/* ssd.c */
void ncq_ssd_init(NcqModel *m);
void ncq_ssd_submit(NcqModel *m, NcqSlot *s, int64_t now);

/* model.c */
void ncq_serve_hit(NcqModel *m, NcqSlot *s, int64_t t);

/* fault.c */
void ncq_fault_check(NcqModel *m, NcqSlot *s);
int64_t ncq_fault_hold(const NcqModel *m, const int *members, int n);

/* params.c / builtin.c */
extern const char *const ncq_builtin_names[];
extern const char *const ncq_builtin_texts[];
extern const int ncq_builtin_count;
extern const char *const ncq_builtin_list;

#endif
