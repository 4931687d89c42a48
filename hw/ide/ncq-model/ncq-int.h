/*
 * ncq-model private definitions.
 *
 * Files and the direction of calls.  A file calls only files below it in
 * this list, never one above, so the model's files call each other in no
 * circle (a command goes down: model.c -> sched.c -> cache.c -> ...):
 *
 *   trace-write.c  trace records (uses model.c's names)
 *   model.c        the public API: submit, advance, settings, power loss
 *   zone.c         host-managed zones: conditions, write pointers (NcqZbc)
 *   sched.c        the firmware: which command or idle work is next
 *   mcache.c       drive-managed SMR's media cache and band cleaning
 *                  (NcqMediaCache)
 *   policy.c       the scheduling policies' operations (ncq_policy_ops)
 *   ssd.c          the SSD back end
 *   wcache.c       write-back cache (NcqWriteCache)
 *   cache.c        read cache and read-ahead (NcqReadCache, NcqReadAhead)
 *   queue.c        the command queue, completions (NcqQueue)
 *   mech.c         positioning, media and bus times; the head (NcqMech)
 *   layout.c       LBA to cylinder, head, sector and angle (NcqLayout)
 *   fault.c        fault rules (NcqFaults)
 *   params.c       parameter files, policy names
 *   num.c, rng.c   numbers and durations; the generator
 *
 * undo.c calls none of the others but vis.c (the field visitor: the one
 * mechanism of every saved stream, vis.h), which calls none.  state.c (the
 * saved state) sits above them all: it calls the public API, mech.c and
 * layout.c to rebuild what a load recomputes; smart-state.c (the SMART
 * state's stream) calls vis.c only.  Each part of NcqModel is written by
 * the one file named at its type; others read it, or call that file to
 * change it.  A file going up (cache.c needing a decision after a buffer
 * hit) returns what happened and lets its caller act.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_INT_H
#define NCQ_INT_H

#include "hw/ide/ncq-model.h"
#include "hw/ide/ncq-smart.h"

/* Rotational position unit: one revolution = NCQ_REV units. */
#define NCQ_REV 60000000000ULL   /* ns per minute: pos = t * rpm */
#define NCQ_ROT_SLOP_NS 4        /* this late still catches a sector */

/*
 * The scheduler's inner loop (tests/bench times one decision): aligned,
 * so that its speed does not depend on the size of the code linked before
 * it (branches straddling a 32-byte boundary run slower on many x86).
 */
#define NCQ_HOT __attribute__((aligned(64)))

#define NCQ_SLOTS       (NCQ_MAX_TAGS + 1)  /* tags + one non-queued */
#define NCQ_MAX_SEGS    32
#define NCQ_MAX_DIRTY   128
#define NCQ_DESTAGE_MAX 2048                /* sectors per destage access */
#define NCQ_SSD_MAX_CH  16
#define NCQ_SSD_MAX_DIE 16

/* How a file writes a key (the type column of ncq-params.h). */
typedef enum NcqKeyType {
    NCQ_KT_STR,
    NCQ_KT_KIND,
    NCQ_KT_POLICY,
    NCQ_KT_SEEKTYPE,
    NCQ_KT_U32,
    NCQ_KT_U64,
    NCQ_KT_MS,        /* milliseconds -> int64 ns */
    NCQ_KT_US,        /* microseconds -> int64 ns */
    NCQ_KT_FRAC,      /* fraction of a revolution -> uint32 ppb */
    NCQ_KT_MILLI,     /* dimensionless -> uint32 thousandths */
    NCQ_KT_BOOL,
    NCQ_KT_MBPS,      /* MB/s (1e6 bytes) -> uint64 bytes/s */
    NCQ_KT_HEX16,     /* 0x0000..0xffff -> uint32 */
    NCQ_KT_KIB_SECT,  /* KiB -> uint32 sectors */
    NCQ_KT_KIB_BYTES, /* KiB -> uint32 bytes */
    NCQ_KT_ZONE,
    NCQ_KT_POINT,
} NcqKeyType;

/*
 * One row of the parameter table (include/hw/ide/ncq-params.h, expanded in
 * params.c): a key of a model file and the NcqParams field it sets, or a
 * field another key fills (section and key NULL).
 */
typedef struct NcqParamRow {
    const char *section;
    const char *key;
    NcqKeyType type;
    size_t off;
    size_t len;
    const char *unit;
    const char *def;        /* in the file's units; "": 0 */
    uint64_t min, max;      /* of the stored value */
    unsigned flags;         /* NCQ_PF_* */
    uint32_t fp;            /* fingerprinted from this version; 0, NAMED */
    const char *doc;
    const char *field;      /* NULL: a key writing another row's field */
    size_t align;           /* of the field's type */
} NcqParamRow;

#define NCQ_PARAM_MAX_ROWS 96     /* a parse's seen[] */
extern const NcqParamRow ncq_param_table[];
extern const size_t ncq_param_table_len;
const NcqParamRow *ncq_param_rows(size_t *n);
/* every row at its default, as a file without the key gives it */
void ncq_params_defaults(NcqParams *p);
/* section @i of NCQ_PARAM_SECTIONS, NULL past the last (params-doc.c) */
const char *ncq_param_section(size_t i);
/* @v / 10^@digits with its fraction, trailing zeros dropped */
void ncq_fixed_text(uint64_t v, unsigned digits, char *buf, size_t len);
/* a stored value of row @k in the file's units */
void ncq_param_format_raw(const NcqParamRow *k, uint64_t v, char *buf,
                          size_t len);
/* the settings' bounds (their rows'), and a new model's (settings.c) */
int ncq_settings_check(const NcqModel *m, const NcqSettings *s,
                       char *err, size_t errlen);
void ncq_settings_from_params(NcqSettings *s, const NcqParams *p);
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
    NCQ_MECH_SPINUP,        /* the spindle comes up to speed */
    NCQ_MECH_CLEAN,         /* a band cleaned from the media cache */
} NcqMechOp;

/*
 * Where the head is when a positioning starts, in the manner of DiskSim's
 * struct dm_mech_state: cylinder, head and rotational position (that of
 * the time the positioning starts, ncq_rot_pos()).  Small enough to pass
 * by value.
 */
typedef struct NcqMechState {
    uint32_t cyl;
    uint32_t head;
    uint64_t angle;
} NcqMechState;

/* Where an access starts: its first sector and that sector's angle. */
typedef struct NcqTarget {
    NcqPhys ph;
    uint64_t angle;
    bool write;             /* a write waits for the head to settle */
} NcqTarget;

/*
 * The time an access takes, part by part, in the manner of DiskSim's
 * dm_pos_time: seek (or head switch), write settle, rotational wait,
 * media transfer and host (bus) transfer.
 */
typedef struct NcqPosTime {
    int64_t seek_ns;
    int64_t settle_ns;
    int64_t rot_ns;
    int64_t xfer_ns;
    int64_t bus_ns;
} NcqPosTime;

typedef struct NcqSlot {
    NcqSlotState state;
    NcqCmd cmd;
    uint64_t seq;         /* arrival order */
    uint64_t done_seq;    /* order in which completion became known */
    uint64_t emit_seq;    /* completion order */
    NcqCompletion c;
    NcqTarget tgt;        /* first sector, computed at submit */
    /* injected at submit (fault.c decides, queue.c records) */
    int64_t fault_delay_ns;
    bool fault_hang;
    /* Command Duration Limits (cdl.c): the descriptor it is under now */
    uint8_t cdl_desc;
    bool cdl_inactive_seen;   /* its inactive time limit was missed */
    bool cdl_total_seen;      /* its total time limit was missed */
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

/* Precomputed layout (layout.c). */
typedef struct NcqLayout {
    uint64_t zone_first[NCQ_MAX_ZONES + 1];
    uint64_t sectors;
    uint64_t phase;               /* rotational phase at t = 0 */
    uint64_t base_u[NCQ_MAX_ZONES];       /* angle of the zone's start */
    uint64_t track_skew_u[NCQ_MAX_ZONES];
    uint64_t cyl_step_u[NCQ_MAX_ZONES];   /* skew added per cylinder */
    uint64_t unit_lbas[NCQ_MAX_ZONES];    /* mapped sectors per full unit */
    uint32_t unit_tracks[NCQ_MAX_ZONES];
    uint32_t full_units[NCQ_MAX_ZONES];
} NcqLayout;

/* The command queue (queue.c). */
typedef struct NcqQueue {
    NcqSlot slot[NCQ_SLOTS];
    uint64_t mask[4];             /* slots in each NcqSlotState */
    int order[NCQ_SLOTS];         /* queued slots, arrival order */
    /* per slot: [rd_lo, rd_hi) of a queued buffered read, else empty */
    uint64_t rd_lo[NCQ_SLOTS], rd_hi[NCQ_SLOTS];
    int n;                        /* entries of order[] */
    int outstanding;
    uint64_t seq;
    uint64_t done_seq;
    uint64_t emit_seq;
} NcqQueue;

/* The head, the mechanism's current work and the host link (mech.c). */
typedef struct NcqMech {
    NcqMechOp op;
    int64_t until;                /* op ends */
    uint32_t cyl;
    uint32_t head;
    uint64_t lba_end;             /* sector after the last one accessed */
    int64_t bus_free;
    bool stopped;                 /* spindle at rest (standby, sleep) */
} NcqMech;

/* The scheduler's memory between decisions (sched.c). */
typedef struct NcqSched {
    int64_t plan_cutoff;          /* plan_ahead: arrivals after this wait */
    /* after a minimum read-ahead: chosen among those here by then */
    int64_t pf_cutoff;
    uint64_t access_seq;
} NcqSched;

/* Read cache: segments and what changed in them (cache.c). */
#define NCQ_CHG_RANGES 4
typedef struct NcqReadCache {
    NcqSeg seg[NCQ_MAX_SEGS];
    uint64_t lru_clock;
    /* buffer contents changed within these ranges since the last check */
    int nchg;
    uint64_t chg_lo[NCQ_CHG_RANGES], chg_hi[NCQ_CHG_RANGES];
} NcqReadCache;

/* Read-ahead (prefetch) into a read cache segment (cache.c). */
typedef struct NcqReadAhead {
    bool armed;
    int seg;
    uint64_t lba;                 /* first sector being prefetched */
    uint32_t n;
    int64_t first;                /* first sector under the head */
    uint64_t consumed;            /* host has read seg up to here */
    int64_t min_end;              /* minimum read-ahead done */
    NcqPhys ph;                   /* where the read-ahead starts */
    uint32_t min_cyl, min_head, end_cyl, end_head;
    uint32_t min_n;               /* sectors of the minimum read-ahead */
    uint32_t end_n;               /* sectors read when it ends as planned */
} NcqReadAhead;

/* Write-back cache: dirty extents and the one being destaged (wcache.c). */
typedef struct NcqWriteCache {
    NcqExtent dirty[NCQ_MAX_DIRTY];
    int ndirty;
    uint64_t dirty_sectors;
    NcqExtent destage;            /* extent being written */
    NcqExtent in;                 /* the write taken last ... */
    int64_t in_t0;                /* ... its data arrives from then */
} NcqWriteCache;

/* SSD back end (ssd.c). */
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

/*
 * Host-managed zones (zone.c): a condition and a write pointer per zone,
 * and the open zones in the order they were opened (the oldest
 * implicitly open one is closed first when the limit is reached).
 * Arrays of nz entries, allocated with the model; nz 0: not zoned.
 */
#define NCQ_ZONE_MAX_OPEN 1024
typedef struct NcqZbc {
    uint32_t nz;
    uint32_t nconv;
    uint8_t *cond;                /* NcqZoneCond */
    uint64_t *wp;                 /* absolute LBA; zone start if empty */
    uint32_t nopen;
    uint32_t open[NCQ_ZONE_MAX_OPEN];
} NcqZbc;

/*
 * Drive-managed SMR's persistent media cache (mcache.c): a log of the
 * extents written into it, oldest first (cleaning takes the oldest's band,
 * FIFO), in a ring of mc_map entries allocated with the model; the bands
 * holding any (a bit each) are derived, not state.
 */
typedef struct NcqMcEntry {
    uint64_t lba;
    uint32_t n;
    uint32_t pos;                 /* where in the cache, sectors */
} NcqMcEntry;

typedef struct NcqMediaCache {
    NcqMcEntry *e;                /* mc_map entries, a ring */
    uint32_t head;                /* the oldest */
    uint32_t n;
    uint64_t used;                /* sectors held (derived) */
    uint32_t log_pos;             /* the next write goes there */
    uint8_t *band_bit;            /* bands with cached data (derived) */
    uint32_t nbands;
    bool clean_run;               /* a cleaning ended, no command since */
    int64_t clean_start;          /* the idle cleaning in progress ... */
    uint32_t clean_band;          /* ... starts then, on this band */
    uint64_t cleaned;             /* bands cleaned */
    uint64_t forced;              /* ... because the cache was full */
    /* for the trace and query-ncq-disk only, not in the saved state: */
    int64_t forced_start;         /* the last forced cleaning, from ... */
    int64_t forced_until;         /* ... to */
    uint32_t forced_band;         /* its last band */
    NcqMcEvent ev[NCQ_MC_EVENTS]; /* cleanings not yet taken, a ring */
    uint32_t ev_head, ev_n;
} NcqMediaCache;

/* Fault injection rules (fault.c). */
typedef struct NcqFaults {
    NcqFaultRule rule[NCQ_MAX_FAULTS];
    int n;
} NcqFaults;

/*
 * Each part is written by the one file named at its type; the others read
 * it, or ask that file to change it.  p, s and now belong to model.c (the
 * API); rng is drawn by whoever needs a number (layout.c, sched.c); the
 * statistics are counters each file adds to.
 */
struct NcqModel {
    NcqParams p;
    NcqSettings s;
    uint64_t rng;
    int64_t now;

    NcqLayout layout;
    NcqQueue q;
    NcqMech mech;
    NcqSched sched;
    NcqReadCache cache;
    NcqReadAhead ra;
    NcqWriteCache wc;
    NcqSsd ssd;
    NcqFaults faults;
    NcqStats st;
    NcqCdl cdl;                   /* Command Duration Limits (cdl.c) */
    NcqZbc zbc;                   /* host-managed zones (zone.c) */
    NcqMediaCache mc;             /* drive-managed SMR (mcache.c) */
    int64_t cdl_margin_ns;        /* start this long before a deadline */
    /* SMART's reallocated sectors read fine (smart.c); not state */
    const NcqSmart *smart;
    /*
     * SCT Error Recovery Control's read and write limits, 0: none (the
     * drive's recovery_ns applies); not state: the device keeps them
     */
    int64_t erc_read_ns, erc_write_ns;
    /* the firmware's retries of a bad sector end then (fault.c) */
    int64_t recover_until;
};

/* What a command's fault rules decided at submit (fault.c). */
typedef struct NcqFaultFate {
    NcqFaultKind kind;
    uint64_t lba;
    uint64_t corrupt_mask;      /* NCQ_FAULT_CORRUPT, from lba */
    uint64_t corrupt_seed;
    int64_t delay_ns;
    bool hang;
} NcqFaultFate;

/*
 * How a command is served, as the path that serves it found it: the
 * fields of its completion record that serving sets.
 */
typedef struct NcqService {
    int64_t dispatch_ns;
    int64_t overhead_ns;
    int64_t seek_ns;
    int64_t rotate_ns;
    int64_t transfer_ns;
    int64_t media_start_ns;
    int64_t media_end_ns;
    int64_t complete_ns;
    uint64_t access_id;
    NcqReason reason;
    bool cache_hit;
} NcqService;

/* zone.c */
int ncq_zbc_init(NcqModel *m, char *err, size_t errlen);
void ncq_zbc_free(NcqModel *m);
/*
 * a command arriving: checked against the zones and, if accepted, applied
 * (write pointer, conditions); *@cost_ns: a zone action's firmware time
 */
int ncq_zbc_accept(NcqModel *m, const NcqCmd *cmd, int64_t *cost_ns);
/* a write accepted but dropped by a reset: its write pointer goes back */
void ncq_zbc_unwrite(NcqModel *m, uint64_t lba, uint32_t n);
/* power on after a loss: open zones become closed (or empty) */
void ncq_zbc_power_on(NcqModel *m);
/* the zone's condition as a fresh drive has it */
NcqZoneCond ncq_zbc_fresh_cond(const NcqModel *m, uint32_t z);
/* is the zone state consistent (for a load); NULL or what is wrong */
const char *ncq_zbc_check_state(const NcqModel *m);

/* mcache.c */
int ncq_mc_init(NcqModel *m, char *err, size_t errlen);
void ncq_mc_free(NcqModel *m);
/* forced cleaning so that @n sectors fit, from @t; its time (head moved) */
int64_t ncq_mc_make_room(NcqModel *m, int64_t t, uint32_t n);
/* a write of @lba+@n goes into the cache: the LBA its tracks time as */
uint64_t ncq_mc_append(NcqModel *m, uint64_t lba, uint32_t n);
/* a read of @lba+@n finds cached data: true, *@where as for append */
bool ncq_mc_lookup(const NcqModel *m, uint64_t lba, uint32_t n,
                   uint64_t *where);
/* the mechanism has nothing to do at @t: an idle cleaning, if due */
bool ncq_mc_idle(NcqModel *m, int64_t t);
/*
 * the mechanism's cleaning work reached its end: the idle delay (true:
 * the band's cleaning has begun) or the cleaning (its band is clean)
 */
bool ncq_mc_clean_event(NcqModel *m);
/* a host command arrives at @t: an idle cleaning not begun is put off */
void ncq_mc_arrival(NcqModel *m, int64_t t);
/* the idle cleaning in progress ends (@done: its band is clean) */
void ncq_mc_clean_end(NcqModel *m, bool done);
/* rebuild what the saved state leaves out; NULL or what is wrong */
const char *ncq_mc_rebuild(NcqModel *m);

/* fault.c */
void ncq_cdl_init(NcqModel *m);
int ncq_cdl_check(const NcqModel *m, const NcqCdl *cdl, char *err,
                  size_t errlen);
int ncq_cdl_pick_urgent(const NcqModel *m, int64_t t);
/* a queued command's missed limit ends it at @t (its policy says so) */
bool ncq_cdl_queued_ends(NcqModel *m, NcqSlot *s, int64_t t);
void ncq_cdl_service(NcqModel *m, NcqSlot *s, NcqService *sv);
int64_t ncq_cdl_mech_end(const NcqModel *m, const int *members, int n,
                         int64_t end);

void ncq_fault_fate(NcqModel *m, const NcqCmd *cmd, NcqFaultFate *fate);
int64_t ncq_fault_recovery_ns(const NcqModel *m, NcqFaultKind kind);
void ncq_fault_note_recovery(NcqModel *m, const int *members, int n,
                             int64_t end);
int64_t ncq_fault_hold(const NcqModel *m, const int *members, int n);

/* layout.c */
int ncq_layout_init(NcqModel *m, char *err, size_t errlen);
void ncq_layout_map(const NcqModel *m, uint64_t lba, NcqPhys *ph);
uint64_t ncq_layout_angle(const NcqModel *m, const NcqPhys *ph);
uint32_t ncq_layout_track_end(const NcqModel *m, const NcqPhys *ph);
uint64_t ncq_zone_lbas(const NcqParams *p, const NcqZone *z);

/* queue.c */
void ncq_queue_init(NcqModel *m);
NcqSlot *ncq_queue_admit(NcqModel *m, const NcqCmd *cmd, int64_t now,
                         const NcqFaultFate *fate);
void ncq_queue_push(NcqModel *m, NcqSlot *s);
void ncq_queue_remove(NcqModel *m, int idx);
void ncq_queue_insert_at(NcqModel *m, int pos, int idx);
void ncq_queue_reinsert(NcqModel *m, int idx);
void ncq_slot_dispatch(NcqModel *m, NcqSlot *s, int64_t t);
void ncq_slot_complete(NcqModel *m, NcqSlot *s, const NcqService *sv);
int ncq_queue_next_done(const NcqModel *m);
void ncq_queue_emit(NcqModel *m, int idx);
int ncq_queue_take_done(NcqModel *m, NcqCompletion *out, int max);
void ncq_queue_clear(NcqModel *m);

/* mech.c: pure functions of the parameters, layout and arguments */
int64_t ncq_seek_time(const NcqParams *p, uint32_t dist);
uint64_t ncq_rot_pos(const NcqModel *m, int64_t t);
uint64_t ncq_rot_advance(const NcqModel *m, uint64_t angle, int64_t delta_ns);
int64_t ncq_rot_wait(const NcqModel *m, int64_t t, uint64_t angle);
void ncq_target_of(const NcqModel *m, uint64_t lba, bool write,
                   NcqTarget *to);
NcqMechState ncq_mech_state_at(const NcqModel *m, int64_t t);
int64_t ncq_pos_seek(const NcqModel *m, NcqMechState from,
                     const NcqTarget *to, NcqPosTime *pt);
int64_t ncq_pos_time(const NcqModel *m, NcqMechState from, int64_t t,
                     const NcqTarget *to, NcqPosTime *pt);
int64_t ncq_pos_plan(const NcqModel *m, NcqMechState from,
                     const NcqTarget *to, NcqPosTime *pt);
int64_t ncq_access_time(const NcqModel *m, NcqMechState from, int64_t t,
                        const NcqTarget *to, uint32_t n, NcqPosTime *pt,
                        NcqMechState *end);
int64_t ncq_media_walk_from(const NcqModel *m, const NcqPhys *start,
                            uint32_t n, int64_t t_first, uint32_t *ecyl,
                            uint32_t *ehead, const uint32_t *marks,
                            int64_t *mark_t, int nmarks);
uint32_t ncq_media_done_by(const NcqModel *m, uint64_t lba, uint32_t n,
                           int64_t t_first, int64_t t);
int64_t ncq_bus_ns(const NcqModel *m, uint64_t sectors);
int64_t ncq_write_lead(const NcqModel *m, const NcqPhys *ph, uint64_t off,
                       uint32_t n);
int64_t ncq_bus_start(const NcqModel *m, int64_t t);
/* mech.c: the head and the mechanism's state */
void ncq_bus_busy(NcqModel *m, int64_t until);
void ncq_mech_begin(NcqModel *m, NcqMechOp op, int64_t until);
void ncq_mech_until(NcqModel *m, int64_t until);
void ncq_mech_end(NcqModel *m, int64_t t);
void ncq_mech_idle(NcqModel *m);
void ncq_mech_stop(NcqModel *m, bool stopped);
void ncq_head_move(NcqModel *m, uint32_t cyl, uint32_t head);
void ncq_head_lba_end(NcqModel *m, uint64_t lba_end);

/* cache.c */
uint32_t ncq_pf_progress(const NcqModel *m, int64_t t);
void ncq_cache_changed(NcqModel *m, uint64_t lo, uint64_t hi);
uint32_t ncq_pf_stop(NcqModel *m, int64_t t);
void ncq_pf_end(NcqModel *m, int64_t t);
void ncq_pf_disarm(NcqModel *m);
bool ncq_pf_consume(NcqModel *m, int seg, uint64_t end);
void ncq_pf_command_waits(NcqModel *m, int64_t t);
bool ncq_pf_start(NcqModel *m, int64_t t);
bool ncq_pf_start_stream(NcqModel *m, int seg, int64_t t);
void ncq_cache_read_done(NcqModel *m, uint64_t lba, uint32_t n);
void ncq_cache_written(NcqModel *m, uint64_t lba, uint32_t n);
void ncq_cache_serve_hit(NcqModel *m, NcqSlot *s, int64_t t);
bool ncq_pf_stream_hit(NcqModel *m, NcqSlot *s, int64_t t, bool force);
bool ncq_cache_lookup(NcqModel *m, uint64_t lba, uint32_t n, int64_t t,
                      int *seg);
void ncq_cache_serve_queued(NcqModel *m, int64_t t);
int ncq_cache_fill(NcqModel *m, uint64_t lba, uint32_t n);
void ncq_cache_invalidate(NcqModel *m, uint64_t lba, uint32_t n);
void ncq_cache_power_loss(NcqModel *m, int64_t t);

/* wcache.c */
void ncq_wcache_remove(NcqModel *m, uint64_t lba, uint32_t n);
bool ncq_wcache_cacheable(const NcqModel *m, const NcqCmd *cmd);
bool ncq_wcache_take(NcqModel *m, NcqSlot *s, int64_t t);
int64_t ncq_wcache_arrival(const NcqModel *m, const NcqPhys *ph,
                           uint64_t lba, uint32_t n);
void ncq_wcache_destage(NcqModel *m, uint64_t lba, uint32_t n);
uint64_t ncq_wcache_power_loss(NcqModel *m, bool destaging);

/* ssd.c */
void ncq_ssd_init(NcqModel *m);
void ncq_ssd_submit(NcqModel *m, NcqSlot *s, int64_t now);

/* The command overhead before a command's seek can start. */
static inline int64_t ncq_cmd_overhead(const NcqModel *m, const NcqSlot *s)
{
    return s->cmd.op == NCQ_OP_WRITE ? m->p.ovh_write_ns :
           m->p.ovh_read_miss_ns;
}

/*
 * An access that starts where the last one ended: its head switch or
 * single-cylinder seek is the one the media walk makes within an access
 * (the skews were chosen for it), without a write's extra settle.
 */
static inline bool ncq_continues(const NcqModel *m, uint64_t lba)
{
    return lba == m->mech.lba_end;
}

/*
 * A command that continues the access that just ended and arrived in time
 * to be chosen and set up while that access ran: it needs no positioning
 * and no overhead of its own.  Firmware streams such commands; planning
 * them like any other (overhead first, then wait for the sector just
 * passed) would cost a revolution each.
 */
static inline bool ncq_chained(const NcqModel *m, const NcqSlot *q,
                               int64_t t)
{
    return ncq_continues(m, q->cmd.lba) &&
           q->c.arrival_ns + ncq_cmd_overhead(m, q) <= t;
}

/*
 * policy.c: a scheduling policy's operations (the file's header says
 * what each does).  Indexed by NcqPolicy; every row has all of them.
 */
typedef struct NcqPolicyOps {
    const char *name;               /* as parameter files and -device say */
    const char *const *aliases;     /* other names it answers to, or NULL */
    /* which of @ncand >= 2 candidate slots goes next */
    int (*pick)(const NcqModel *m, int64_t t, const int *cand, int ncand,
                NcqReason *reason, int64_t *decide_ns);
    /* which dirty extent (index into m->wc.dirty) is destaged next */
    int (*destage)(const NcqModel *m, int64_t t);
    /* a read-ahead stream serves only the oldest queued command */
    bool stream_oldest_only;
} NcqPolicyOps;

extern const NcqPolicyOps ncq_policy_ops[NCQ_POLICY__MAX];

/* sched.c */
void ncq_sched_init(NcqModel *m);
int ncq_sched_pick(NcqModel *m, int64_t t, NcqReason *reason,
                   int64_t *decide_ns);
void ncq_sched_decide(NcqModel *m, int64_t t);

/* params.c / builtin.c */
extern const char *const ncq_builtin_names[];
extern const char *const ncq_builtin_texts[];
extern const int ncq_builtin_count;
extern const char *const ncq_builtin_list;

#endif
