/*
 * ncq-model: QEMU-free model of a SATA NCQ disk (HDD or SSD).
 *
 * Public interface shared by the QEMU device (hw/ide/ncq-disk/) and the
 * offline simulator (tools/ncq-sim).  Standard C headers only.
 *
 * Time is integer nanoseconds of the caller's virtual clock.  The model
 * never reads a host clock; its only randomness is a generator seeded by
 * the caller.  Given params, seed and the timed sequence of calls, every
 * output is fully determined, and does not depend on how often
 * ncq_model_advance() is called.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_IDE_NCQ_MODEL_H
#define HW_IDE_NCQ_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "hw/ide/ncq-params.h"

#define NCQ_MAX_TAGS        32      /* NCQ tags 0..31 */
#define NCQ_MAX_ZONES       128     /* ibm-ultrastar-18es: 55 + 44 gaps */
#define NCQ_MAX_SEEK_POINTS 256     /* DiskSim's extracted curves: <= 151 */
#define NCQ_MAX_SECTORS     65536   /* per command */
#define NCQ_TRACE_VERSION   2       /* docs/trace-schema.md */

/* Error codes returned by ncq_* functions (negative). */
enum {
    NCQ_OK = 0,
    NCQ_ERR_INVAL = -1,       /* malformed command (sectors 0, bad op...) */
    NCQ_ERR_RANGE = -2,       /* lba + sectors beyond capacity */
    NCQ_ERR_TAG_BUSY = -3,    /* duplicate active tag */
    NCQ_ERR_QUEUE_FULL = -4,  /* more than queue_depth outstanding */
    /* non-queued while queued outstanding, or the reverse */
    NCQ_ERR_MIXED = -5,
    NCQ_ERR_TIME = -6,        /* time went backwards */
    NCQ_ERR_PARSE = -7,       /* parameter text malformed */
    NCQ_ERR_IO = -8,          /* parameter file unreadable */
    NCQ_ERR_NOMEM = -9,
    /*
     * Host-managed zones (zone.c, docs/smr.md): the command is refused
     * and nothing changes; ncq_zone_sense() gives the sense data.
     */
    NCQ_ERR_ZONE_UNALIGNED = -10,   /* write not at the write pointer */
    NCQ_ERR_ZONE_BOUNDARY = -11,    /* write across a zone boundary */
    NCQ_ERR_ZONE_READ_BOUNDARY = -12, /* read across zones (URSWRZ 0) */
    NCQ_ERR_ZONE_INVALID_READ = -13,  /* read past the pointer (URSWRZ 0) */
    NCQ_ERR_ZONE_FIELD = -14,       /* full zone, not a zone start, ... */
    NCQ_ERR_ZONE_READ_ONLY = -15,   /* write to a read-only zone */
    NCQ_ERR_ZONE_OFFLINE = -16,     /* any access to an offline zone */
    NCQ_ERR_ZONE_RESOURCES = -17,   /* open-zone limit */
    NCQ_ERR_ZONE_LBA = -18,         /* zone ID beyond the capacity */
};

typedef enum NcqKind {
    NCQ_KIND_HDD = 0,
    NCQ_KIND_SSD = 1,
} NcqKind;

typedef enum NcqOp {
    NCQ_OP_READ = 0,
    NCQ_OP_WRITE = 1,
    NCQ_OP_FLUSH = 2,
    NCQ_OP_OTHER = 3,   /* non-media command (IDENTIFY, SET FEATURES...) */
} NcqOp;

typedef enum NcqPolicy {
    NCQ_POLICY_FCFS = 0,
    NCQ_POLICY_SSTF = 1,
    NCQ_POLICY_CLOOK = 2,
    NCQ_POLICY_SPTF = 3,
    NCQ_POLICY_ASPTF = 4,   /* aged SPTF */
    NCQ_POLICY__MAX = 5,
} NcqPolicy;

/*
 * The policies' names in enum order, as messages and help texts list
 * them; tests/unit/test-policy.c checks it against ncq_policy_ops[].
 */
#define NCQ_POLICY_NAMES "fcfs, sstf, clook, sptf or aged-sptf"

/* Why the firmware picked a command. */
typedef enum NcqReason {
    NCQ_REASON_POLICY = 0,    /* the policy's choice */
    NCQ_REASON_AGED = 1,      /* aged-sptf chose other than pure sptf */
    NCQ_REASON_PRIORITY = 2,  /* high priority preferred over low */
    NCQ_REASON_TIMEOUT = 3,   /* starvation / priority time-out forced it */
    NCQ_REASON_ONLY = 4,      /* the only candidate */
    NCQ_REASON_CLUSTERED = 5, /* merged into another command's access */
    NCQ_REASON_CACHE = 6,     /* served from the buffer, no media access */
    NCQ_REASON__MAX = 7,
} NcqReason;

typedef enum NcqSeekType {
    NCQ_SEEK_TWOPART = 0,     /* a + b*sqrt(d) for d < x, c + e*d beyond */
    NCQ_SEEK_TABLE = 1,       /* (distance, time) points, interpolated */
} NcqSeekType;

/*
 * A zone.  Its tracks are grouped in spare units of spare_tracks tracks
 * (0: the whole zone); the last spares sectors of each full unit are not
 * mapped, nor the first front sectors of the zone.  With own_skew the
 * zone's angles restart at first_ppb (DiskSim's layout: skews count from
 * the zone's first cylinder); without, they continue from the previous
 * zone.  The parser fills the skews and spares of zones that do not give
 * them from the global keys.
 */
typedef struct NcqZone {
    uint32_t cyl_start;
    uint32_t cyl_count;
    uint32_t spt;             /* physical sectors per track, with spares */
    uint32_t track_skew_ppb;  /* per head switch, fraction of a revolution */
    uint32_t cyl_skew_ppb;    /* per cylinder switch */
    uint32_t first_ppb;       /* angle of the zone's first sector */
    uint32_t front;           /* unmapped sectors at the zone's front */
    uint32_t spares;          /* unmapped sectors at the end of a unit */
    uint32_t spare_tracks;    /* tracks per spare unit; 0 = the zone */
    bool own_skew;
} NcqZone;

typedef struct NcqSeekPoint {
    uint32_t dist;            /* cylinders */
    int64_t ns;
} NcqSeekPoint;

/*
 * A drive's parameters.  Obtained from ncq_params_builtin(),
 * ncq_params_load_file() or ncq_params_parse(); freed with
 * ncq_params_free().  All times in ns, fractions of a revolution in
 * parts per billion (ppb).  The fields are the rows of the parameter
 * table (include/hw/ide/ncq-params.h), each with its key, unit and
 * meaning there; add a field as a row, never here (test-param-table and
 * tests/repo/test_params_table.py fail otherwise).
 */
#define NCQ_PARAM_FIELD(ctype, field, dim, ...) ctype field dim;
#define NCQ_PARAM_NO_FIELD(...)
typedef struct NcqParams {
    NCQ_PARAMS(NCQ_PARAM_FIELD, NCQ_PARAM_NO_FIELD, NCQ_PARAM_FIELD)
} NcqParams;

/* One command handed to the drive. */
typedef struct NcqCmd {
    uint32_t id;          /* tag 0..31 when queued; ignored otherwise */
    NcqOp op;
    uint64_t lba;
    uint32_t sectors;     /* 1..65536 for READ/WRITE */
    bool fua;
    bool prio;            /* NCQ high priority */
    bool queued;          /* FPDMA QUEUED; false: non-queued command */
    uint8_t cdl;          /* Command Duration Limit index 1..7, 0: none */
    /*
     * NCQ_OP_OTHER only: a zone management action (NcqZoneAction, 0:
     * none) on the zone starting at lba, or on all zones; queued as
     * NCQ NON-DATA (63h/07h) or not (ZAC MANAGEMENT OUT 9Fh).
     */
    uint8_t zone_action;
    bool zone_all;
} NcqCmd;

#define NCQ_ID_NONQUEUED 32u   /* id reported for a non-queued command */

typedef struct NcqCompletion {
    uint32_t id;
    NcqOp op;
    uint64_t lba;
    uint32_t sectors;
    bool fua;
    bool prio;
    bool queued;
    bool cache_hit;
    NcqReason reason;
    int64_t arrival_ns;
    int64_t dispatch_ns;      /* firmware picked it */
    int64_t complete_ns;
    int64_t seek_ns;
    int64_t rotate_ns;
    int64_t transfer_ns;      /* media (or buffer) transfer */
    int64_t overhead_ns;
    int64_t media_start_ns;   /* mechanism taken (after overhead) */
    int64_t media_end_ns;     /* mechanism released; 0 when no media */
    uint64_t access_id;       /* media access (clustered share one); 0 none */
    uint32_t queue_len_at_arrival;
    uint32_t delay_count;     /* later arrivals that completed first */
    int fault;                /* NcqFaultKind injected, NCQ_FAULT_NONE */
    uint64_t fault_lba;       /* first failing sector (UNC, write error) */
    /* NCQ_FAULT_CORRUPT: bit i: sector fault_lba + i reads altered */
    uint64_t corrupt_mask;
    uint64_t corrupt_seed;
    uint8_t cdl;              /* the CDL index it came with, 0: none */
    uint8_t cdl_outcome;      /* NcqCdlOutcome, with CDL enabled */
    /*
     * NCQ_CDL_MET_*: the limits it reached whose policy the drive
     * carried out, i.e. not 0h (for the drive's CDL statistics; not in
     * the saved state: a restore mid-command forgets)
     */
    uint8_t cdl_met;
} NcqCompletion;

#define NCQ_CDL_MET_INACTIVE    (1u << 0)
#define NCQ_CDL_MET_ACTIVE      (1u << 1)
#define NCQ_CDL_MET_TOTAL       (1u << 2)

#define NCQ_LAT_BUCKETS   18
#define NCQ_DELAY_BUCKETS 11

typedef struct NcqStats {
    uint64_t submitted;
    uint64_t rejected;
    uint64_t completed[4];        /* per NcqOp */
    uint64_t cache_hits;
    uint64_t timeouts_forced;
    uint64_t prio_forced;
    uint64_t clustered;
    uint64_t sectors_read;
    uint64_t sectors_written;
    int64_t max_latency_ns;
    uint32_t max_delay_count;
    uint32_t max_queue_len;
    /* latency: bucket i counts latency < ncq_stats_lat_bound(i) */
    uint64_t lat_hist[NCQ_LAT_BUCKETS];
    /* delay count: bucket 0 = 0, i>0 counts [2^(i-1), 2^i), last open */
    uint64_t delay_hist[NCQ_DELAY_BUCKETS];
} NcqStats;

/* The longest time-out: model files, the device's properties and QMP */
#define NCQ_MAX_TIMEOUT_NS  3600000000000LL     /* an hour */

/*
 * The run-time settings (the device's properties, QMP and HMP, ncq-sim's
 * options): generated from ncq-params.h's NCQ_SETTINGS, each field of
 * its NcqParams row's type.  NCQ_SETTING_ID(field) numbers them.
 */
#define NCQ_SETTING_FIELD(field, name, aliases) \
    __typeof__(((NcqParams *)0)->field) field;
typedef struct NcqSettings {
    NCQ_SETTINGS(NCQ_SETTING_FIELD)
} NcqSettings;

/* A byte per setting: their count, and each one's index by its field */
#define NCQ_SETTING_BYTE(field, name, aliases) char field;
typedef struct NcqSettingIndex {
    NCQ_SETTINGS(NCQ_SETTING_BYTE)
} NcqSettingIndex;
#define NCQ_SETTING__MAX ((int)sizeof(NcqSettingIndex))
#define NCQ_SETTING_ID(field) ((int)offsetof(NcqSettingIndex, field))

/* A setting's description, from its line and its parameter row */
typedef struct NcqSettingDesc {
    const char *name;       /* the one name users type */
    const char *aliases;    /* older spellings, space-separated */
    const char *field;      /* NcqSettings' and NcqParams' field */
    const char *key;        /* the model file's key */
    const char *unit;       /* of the text form ("ms" for a time) */
    const char *doc;        /* the row's doc line */
    uint64_t min, max;      /* bounds of the stored value */
    unsigned size;          /* its bytes: 1 a flag, 4, 8 a time (ns) */
    uint32_t since;         /* saved from this version, or NCQ_FP_NAMED */
} NcqSettingDesc;

/* Setting @i (0 .. NCQ_SETTING__MAX - 1); NULL past the last */
const NcqSettingDesc *ncq_setting(int i);
/* The setting called @name (its name or an alias); -1 if none */
int ncq_setting_find(const char *name);
/*
 * Set setting @i of @s from @text, its text form, within its bounds.
 * @as: the name the user gave (an alias ending in "-ns" reads a bare
 * number as ns), for the one-line message naming the fix.
 */
int ncq_setting_parse(int i, const char *as, const char *text,
                      NcqSettings *s, char *err, size_t errlen);
/* Setting @i of @s in its text form (parsed back, the same value) */
void ncq_setting_format(int i, const NcqSettings *s, char *buf, size_t len);
/* Its bounds in the text form: "0..3600000 ms", "on or off", names */
void ncq_setting_range(int i, char *buf, size_t len);
/* The stored value as a number (a time in ns, an enum's index) */
uint64_t ncq_setting_get(int i, const NcqSettings *s);
void ncq_setting_put(int i, NcqSettings *s, uint64_t v);
/* The settings as the docs' markdown table (ncq-sim --list-settings) */
void ncq_settings_list(FILE *f);

/* An entry of the drive's queue, for a QMP query. */
typedef struct NcqQueueEntry {
    uint32_t id;
    NcqOp op;
    uint64_t lba;
    uint32_t sectors;
    bool prio;
    bool in_service;          /* dispatched, completion pending */
    int64_t age_ns;
} NcqQueueEntry;

typedef struct NcqModel NcqModel;

/* ---- parameters ---- */
NcqParams *ncq_params_builtin(const char *name);

/*
 * The parameter table (ncq-params.h) as docs/model.md's markdown
 * (ncq-sim --list-params) or JSON (--list-params=json), and a parsed
 * model's values as JSON in the file's units with its zones laid out
 * (ncq-sim --dump-model, read by ncq-fit).
 */
void ncq_params_list(FILE *f);
void ncq_params_list_json(FILE *f);
void ncq_params_dump_json(FILE *f, const NcqParams *p);
const char *ncq_params_builtin_names(void);   /* "a, b, c" */
const char *ncq_params_builtin_text(const char *name);
int ncq_params_parse(const char *text, const char *name_for_errors,
                     NcqParams **out, char *err, size_t errlen);
int ncq_params_load_file(const char *path, NcqParams **out,
                         char *err, size_t errlen);
void ncq_params_free(NcqParams *p);
/* Check consistency; 0 or NCQ_ERR_PARSE with a message. */
int ncq_params_validate(const NcqParams *p, char *err, size_t errlen);
#define NCQ_SATA_GEN_MAX 3
/* A SATA generation's link rate after 8b/10b: 150, 300, 600 MB/s */
uint64_t ncq_sata_link_bytes_per_s(uint32_t sata_gen);

/* ---- model ---- */
NcqModel *ncq_model_new(const NcqParams *p, uint64_t seed,
                        char *err, size_t errlen);
void ncq_model_free(NcqModel *m);
const NcqParams *ncq_model_params(const NcqModel *m);

void ncq_model_get_settings(const NcqModel *m, NcqSettings *s);
/*
 * New settings apply from the next firmware decision after the last
 * instant the model processed (last submit/advance).  To apply them at a
 * given time independently of how the caller polled, use the _at variant,
 * which first processes every event up to @now_ns.
 */
int ncq_model_set_settings(NcqModel *m, const NcqSettings *s,
                           char *err, size_t errlen);
int ncq_model_set_settings_at(NcqModel *m, const NcqSettings *s,
                              int64_t now_ns, char *err, size_t errlen);

/*
 * Hand a command to the drive at @now_ns (never earlier than the last
 * call's time).  0, or a negative NCQ_ERR_* the device turns into an ATA
 * error; a rejected command is only counted (NcqStats.rejected).
 */
int ncq_model_submit(NcqModel *m, const NcqCmd *cmd, int64_t now_ns);
/*
 * Earliest time at which something may happen (a completion or an
 * internal event); INT64_MAX when idle.  Arm a timer for it.
 */
int64_t ncq_model_next_event(NcqModel *m);
/*
 * Process everything up to @now_ns and return up to @max completions with
 * complete_ns <= @now_ns, in completion order; call again while it
 * returns @max.  A tag is free for reuse once its completion is returned.
 */
int ncq_model_advance(NcqModel *m, int64_t now_ns,
                      NcqCompletion *out, int max);
/*
 * Device reset: drop every outstanding command (no completion is ever
 * reported for them).  Dirty data in the write cache is kept and destaged
 * later, as a real drive keeps its buffer across a COMRESET.
 */
void ncq_model_reset(NcqModel *m, int64_t now_ns);
/*
 * Power loss at @now_ns: like a reset, and the buffer is lost too (read
 * cache, read-ahead, dirty data of the write cache).  Returns the number
 * of dirty sectors that never reached the media (an interrupted destage
 * included).  The model does not hold data: a device that wants to
 * emulate the loss must act on this itself (ncq_model_volatile() says
 * which sectors).
 */
uint64_t ncq_model_power_loss(NcqModel *m, int64_t now_ns);

/*
 * Power management (docs/power-modes.md).  ncq_model_spin_down() stops
 * the spindle at @now_ns (STANDBY, SLEEP, the standby timer): the drive
 * must hold no command and no dirty data (NCQ_ERR_MIXED otherwise); a
 * read-ahead in progress stops.  The next media access (a read the buffer
 * cannot serve, a destage, a queued write) first spins the spindle up for
 * spinup_ns; ncq_model_spin_up() starts that at once (IDLE from standby).
 * ncq_model_spinning() says whether the spindle turns (or spins up) at the
 * last instant the model processed.
 */
#define NCQ_MAX_SPIN_NS         60000000000LL   /* a minute */
/* A hard disk's when its file gives none (docs/power-modes.md) */
#define NCQ_DEFAULT_SPINUP_NS   10000000000LL
#define NCQ_DEFAULT_SPINDOWN_NS 12000000000LL
int ncq_model_spin_down(NcqModel *m, int64_t now_ns);
void ncq_model_spin_up(NcqModel *m, int64_t now_ns);
bool ncq_model_spinning(const NcqModel *m);

/*
 * The model's whole state (queue, mechanism, buffer, generator, counters)
 * as an opaque blob of ncq_model_state_size() bytes, for snapshots and
 * migration.  A load needs a model made from the same parameters by the
 * same build; anything else fails with a message and leaves @m as it was.
 */
size_t ncq_model_state_size(const NcqModel *m);
int ncq_model_state_save(const NcqModel *m, void *buf, size_t len);
int ncq_model_state_load(NcqModel *m, const void *buf, size_t len,
                         char *err, size_t errlen);
/*
 * The sections a save writes (when needed), in order, with each one's
 * shape hash, at most @max; how many there are (test-state commits them).
 */
size_t ncq_model_state_sections(const NcqModel *m, const char **names,
                                uint64_t *shapes, size_t max);

void ncq_model_stats(const NcqModel *m, NcqStats *st);
void ncq_model_stats_clear(NcqModel *m);
int64_t ncq_stats_lat_bound(int bucket);  /* INT64_MAX for the last */
/*
 * Commands in the drive at @now_ns, oldest first (events up to @now_ns are
 * processed first; completions stay pending for the next advance()).
 */
int ncq_model_queue_list(NcqModel *m, int64_t now_ns,
                         NcqQueueEntry *out, int max);
int ncq_model_outstanding(const NcqModel *m);
size_t ncq_model_size(const NcqModel *m);    /* bytes of instance memory */

/* ---- fault injection (fault.c, docs/faults.md) ---- */
typedef enum NcqFaultKind {
    NCQ_FAULT_NONE = 0,
    NCQ_FAULT_UNC = 1,        /* read fails: uncorrectable data */
    NCQ_FAULT_WRITE = 2,      /* write fails */
    NCQ_FAULT_HANG = 3,       /* never completes (until a reset) */
    NCQ_FAULT_SLOW = 4,       /* completes delay_ns late */
    NCQ_FAULT_POWERCUT = 5,   /* power is cut when it completes */
    NCQ_FAULT_CORRUPT = 6,    /* read returns altered data, no error */
    NCQ_FAULT__MAX = 7,
} NcqFaultKind;

typedef enum NcqFaultMode {
    NCQ_FAULT_ALWAYS = 0,     /* every matching command */
    NCQ_FAULT_ONCE = 1,       /* the first matching command only */
    NCQ_FAULT_EVERY = 2,      /* the every-th, 2*every-th... matching one */
} NcqFaultMode;

#define NCQ_FAULT_READS     1u
#define NCQ_FAULT_WRITES    2u
#define NCQ_MAX_FAULTS      16
/* A corrupt rule's range: its healed sectors are one bit each */
#define NCQ_FAULT_CORRUPT_MAX 64

/*
 * A rule matches READ and WRITE commands (queued or not) that touch
 * [lba, lba + sectors) and whose op is in @ops.  Rules are checked in
 * order: every slow rule that fires adds its delay; the first error, hang
 * or power-cut rule that fires decides the outcome (a later one that would
 * fire too is not counted as a hit, and a one-shot rule stays armed).
 */
typedef struct NcqFaultRule {
    NcqFaultKind kind;
    uint64_t lba;
    uint64_t sectors;
    NcqFaultMode mode;
    uint32_t every;           /* NCQ_FAULT_EVERY: 1.. */
    uint32_t ops;             /* NCQ_FAULT_READS | NCQ_FAULT_WRITES */
    int64_t delay_ns;         /* NCQ_FAULT_SLOW */
    uint64_t matched;         /* commands that touched the range */
    uint64_t hits;            /* commands the rule acted on */
    /*
     * NCQ_FAULT_CORRUPT: bit i set once a write reached sector lba + i
     * (it reads right again), and the seed of the altered bytes, drawn
     * when the rule is added (0 there: draw one).
     */
    uint64_t healed;
    uint64_t seed;
} NcqFaultRule;

/*
 * Parse rules separated by ';' (docs/faults.md), e.g.
 * "unc@1000+8;slow@0+2048:delay=50ms:every=4".  Returns the number of
 * rules stored in @out (at most @max), or NCQ_ERR_PARSE with a message
 * naming the faulty rule and the expected syntax.
 */
int ncq_fault_parse(const char *text, NcqFaultRule *out, int max,
                    char *err, size_t errlen);
/* The rule in the syntax ncq_fault_parse() reads; returns snprintf's. */
int ncq_fault_format(const NcqFaultRule *r, char *buf, size_t len);
const char *ncq_fault_kind_name(NcqFaultKind k);
/*
 * SCT Error Recovery Control (ACS): the firmware gives up on a sector it
 * cannot read (write) after @read_ns (@write_ns); 0: no limit, the
 * parameters' recovery_ns applies.  Commands arriving later see it.
 */
void ncq_model_set_erc(NcqModel *m, int64_t read_ns, int64_t write_ns);
/*
 * When the firmware's retries of a sector it cannot read or write end
 * (they go on across a reset); in the past when none runs
 */
int64_t ncq_model_recovery_until(const NcqModel *m);
/* Append a rule (counters reset); its index, or NCQ_ERR_* with @err. */
int ncq_model_fault_add(NcqModel *m, const NcqFaultRule *r,
                        char *err, size_t errlen);
/* Remove rule @index, or all rules if @index < 0; NCQ_ERR_INVAL if none. */
int ncq_model_fault_clear(NcqModel *m, int index);
int ncq_model_fault_list(const NcqModel *m, NcqFaultRule *out, int max);
/* The fault decided for outstanding command @id, or NCQ_FAULT_NONE. */
NcqFaultKind ncq_model_fault_of(const NcqModel *m, uint32_t id);
/*
 * A read completed with NCQ_FAULT_CORRUPT: alter @buf, the data of
 * [c->lba, c->lba + c->sectors) as the media gave it, the way the drive
 * returns its corrupt sectors (the same bytes each time for a sector and
 * rule).  Returns how many sectors it altered.
 */
int ncq_fault_corrupt(const NcqCompletion *c, uint8_t *buf);

/* ---- Command Duration Limits (cdl.c, docs/cdl.md) ---- */
#define NCQ_CDL_DESCS       7       /* descriptors per direction */
#define NCQ_CDL_LOG_BYTES   512     /* the Command Duration Limits log */
/*
 * The performance versus command duration guideline field: 0h-Ch (0 %
 * to 20 %), Dh-Fh reserved (cdladm's range, the one SPC-6's T2B page
 * gives; cdl-tools' own descriptor files set Ch)
 */
#define NCQ_CDL_GUIDELINE_MAX 0xc
/* The longest limit: what the SCSI T2A/T2B pages carry (65535 x 10 ms) */
#define NCQ_CDL_MAX_LIMIT_US 655350000u

/* What a descriptor's policy field asks for when its limit is missed */
typedef enum NcqCdlPolicy {
    NCQ_CDL_CONTINUE = 0x0,     /* go on, no action */
    NCQ_CDL_NEXT = 0x1,         /* total: go on under the next descriptor */
    NCQ_CDL_NO_LIMIT = 0x2,     /* total: go on as a command without CDL */
    NCQ_CDL_UNAVAILABLE = 0xd,  /* complete, sense DATA CURRENTLY UNAVAIL. */
    NCQ_CDL_ABORT_RECOVERY = 0xe, /* active: abort, "due to error recovery" */
    NCQ_CDL_ABORT = 0xf,        /* abort with the CDL sense codes */
} NcqCdlPolicy;

typedef struct NcqCdlDesc {
    uint8_t total_policy;       /* NcqCdlPolicy of each limit */
    uint8_t active_policy;
    uint8_t inactive_policy;
    uint32_t active_us;         /* max active time, 0: none */
    uint32_t inactive_us;       /* max inactive time, 0: none */
    uint32_t total_us;          /* total time limit, 0: none */
} NcqCdlDesc;

typedef struct NcqCdl {
    bool enabled;               /* SET FEATURES: CDL on */
    uint8_t guideline;          /* log byte 0 bits 3:0 (perf vs duration) */
    NcqCdlDesc rd[NCQ_CDL_DESCS];
    NcqCdlDesc wr[NCQ_CDL_DESCS];
} NcqCdl;

/* How a command with a CDL index ended (NcqCompletion.cdl_outcome) */
typedef enum NcqCdlOutcome {
    NCQ_CDL_NONE = 0,           /* no CDL index, or CDL disabled */
    NCQ_CDL_MET = 1,            /* within its limits */
    NCQ_CDL_MISSED = 2,         /* a limit missed, the policy went on */
    NCQ_CDL_ABORT_INACTIVE = 3, /* aborted before processing (2Eh/01h) */
    NCQ_CDL_ABORT_ACTIVE = 4,   /* aborted during processing (2Eh/02h) */
    NCQ_CDL_ABORT_ERP = 5,      /* ... due to error recovery (2Eh/03h) */
    NCQ_CDL_DATA_UNAVAILABLE = 6, /* completed, sense 55h/0Ah */
    NCQ_CDL_OUTCOME__MAX = 7,
} NcqCdlOutcome;

/* Check a table: 0, or NCQ_ERR_INVAL naming the bad field. */
int ncq_cdl_validate(const NcqCdl *cdl, char *err, size_t errlen);
/* The Command Duration Limits log (18h) page, and back (validated). */
void ncq_cdl_log_encode(const NcqCdl *cdl, uint8_t *buf);
int ncq_cdl_log_decode(const uint8_t *buf, NcqCdl *cdl, char *err,
                       size_t errlen);
const char *ncq_cdl_outcome_name(NcqCdlOutcome o);
const char *ncq_cdl_policy_name(NcqCdlPolicy p);
/*
 * One descriptor as text: "INDEX:LIMIT=DURATION[/POLICY],..." with LIMIT
 * total, active or inactive (others 0), POLICY a name of
 * ncq_cdl_policy_name() or 0 to 15 (default continue), e.g.
 * "2:total=20ms/abort".  Not validated against ACS (ncq_cdl_validate).
 */
int ncq_cdl_desc_parse(const char *text, int *index, NcqCdlDesc *d,
                       char *err, size_t errlen);
/*
 * The model's table and whether CDL is enabled.  A new one applies from
 * the next decision (or NCQ_ERR_INVAL with @err: a bad table, or CDL
 * enabled on a model without it); the _at variant first processes every
 * event up to @now_ns, as ncq_model_set_settings_at() does.
 */
void ncq_model_cdl_get(const NcqModel *m, NcqCdl *cdl);
int ncq_model_cdl_set(NcqModel *m, const NcqCdl *cdl, char *err,
                      size_t errlen);
int ncq_model_cdl_set_at(NcqModel *m, const NcqCdl *cdl, int64_t now_ns,
                         char *err, size_t errlen);

/* ---- host-managed zones (zone.c, docs/smr.md) ---- */
/* Zone conditions as ZAC/ZBC code them (a descriptor's byte 1 bits 7:4) */
typedef enum NcqZoneCond {
    NCQ_ZC_NOT_WP = 0x0,          /* conventional zone */
    NCQ_ZC_EMPTY = 0x1,
    NCQ_ZC_IMP_OPEN = 0x2,
    NCQ_ZC_EXP_OPEN = 0x3,
    NCQ_ZC_CLOSED = 0x4,
    NCQ_ZC_READ_ONLY = 0xd,
    NCQ_ZC_FULL = 0xe,
    NCQ_ZC_OFFLINE = 0xf,
} NcqZoneCond;

/* ZAC MANAGEMENT OUT actions (its FEATURES 7:0, as ZAC codes them) */
typedef enum NcqZoneAction {
    NCQ_ZONE_CLOSE = 0x01,
    NCQ_ZONE_FINISH = 0x02,
    NCQ_ZONE_OPEN = 0x03,
    NCQ_ZONE_RESET = 0x04,
    /*
     * Not an action: a REPORT ZONES (queued: RECEIVE FPDMA QUEUED 65h/02h)
     * timed as a firmware command; it changes nothing, the device takes
     * its data from ncq_model_report_zones()
     */
    NCQ_ZONE_REPORT = 0x80,
} NcqZoneAction;

#define NCQ_ZONE_TYPE_CONV  0x1
#define NCQ_ZONE_TYPE_SWR   0x2   /* sequential write required */
#define NCQ_ZONE_DESC_BYTES 64    /* REPORT ZONES header and descriptor */
/* REPORT ZONES reporting options (ZAC MANAGEMENT IN 4Ah/00h) */
#define NCQ_ZRO_ALL         0x00
#define NCQ_ZRO_RESET_REC   0x10  /* reset write pointer recommended */
#define NCQ_ZRO_NONSEQ      0x11  /* non-sequential write resources */
#define NCQ_ZRO_NOT_WP      0x3f
#define NCQ_ZRO_PARTIAL     0x80  /* the partial bit, with the option */

/* One zone as REPORT ZONES gives it. */
typedef struct NcqZoneInfo {
    uint8_t type;                 /* NCQ_ZONE_TYPE_* */
    NcqZoneCond cond;
    uint64_t start;
    uint64_t len;
    uint64_t wp;                  /* conventional, offline: all ones */
} NcqZoneInfo;

/* The sense data ACS/ZBC give for an error of a zoned drive. */
typedef struct NcqSense {
    uint8_t key;
    uint8_t asc;
    uint8_t ascq;
} NcqSense;

/*
 * Sense key, ASC and ASCQ of an NCQ_ERR_ZONE_* code (and of
 * NCQ_ERR_RANGE: LBA OUT OF RANGE); 0 with @out set, or NCQ_ERR_INVAL
 * for other codes.
 */
int ncq_zone_sense(int err, NcqSense *out);
const char *ncq_zone_cond_name(NcqZoneCond c);
/* Zones of the drive (0: not zoned), and one zone's state. */
/*
 * Drive-managed SMR's media cache (docs/smr.md): what it holds and what
 * cleaning did; all zero on a model without one.
 */
typedef struct NcqMcInfo {
    uint32_t extents;             /* map entries in use */
    uint64_t sectors;             /* sectors held */
    uint64_t cleaned;             /* bands cleaned */
    uint64_t forced;              /* ... of them because it was full */
} NcqMcInfo;

void ncq_model_mc_info(const NcqModel *m, NcqMcInfo *out);

/* What the media cache's cleaning is doing at a time (docs/smr.md). */
typedef enum NcqMcState {
    NCQ_MC_NONE,                  /* no cleaning under way */
    NCQ_MC_WAITING,               /* idle: the idle delay runs, then a band */
    NCQ_MC_CLEANING,              /* an idle cleaning of a band */
    NCQ_MC_FORCED,                /* a forced cleaning (a write waits) */
} NcqMcState;

/*
 * The cleaning at @now_ns: its state, and for any but NCQ_MC_NONE the
 * band (*@band) and when that stage ends (*@until_ns).
 */
NcqMcState ncq_model_mc_state(const NcqModel *m, int64_t now_ns,
                              uint32_t *band, int64_t *until_ns);
const char *ncq_mc_state_name(NcqMcState s);

/*
 * One band's cleaning, for the trace (docs/trace-schema.md): from
 * @start_ns to @end_ns, the band's @extents left the cache; @forced: a
 * write did not fit; !@done: interrupted (power loss, STANDBY), the band
 * stays in the cache.
 */
typedef struct NcqMcEvent {
    int64_t start_ns;
    int64_t end_ns;
    uint32_t band;
    uint32_t extents;
    bool forced;
    bool done;
} NcqMcEvent;

/*
 * The cleanings since the last call, oldest first, at most @max; a
 * model keeps the last NCQ_MC_EVENTS, so a caller that drains after
 * every call into the model loses none (not in the saved state).
 */
#define NCQ_MC_EVENTS 64
int ncq_model_mc_events(NcqModel *m, NcqMcEvent *out, int max);

uint32_t ncq_model_zone_count(const NcqModel *m);
int ncq_model_zone_info(const NcqModel *m, uint32_t zone, NcqZoneInfo *out);
/*
 * REPORT ZONES EXT into @buf (@len bytes, a multiple of 512 as the
 * command's count gives it): the 64-byte header (zone list length,
 * SAME, maximum LBA) and the 64-byte descriptors of zones from the one
 * holding @lba that match @option (NCQ_ZRO_*, with NCQ_ZRO_PARTIAL),
 * little-endian as ATA returns them.  0, or NCQ_ERR_ZONE_FIELD (reserved
 * option) or NCQ_ERR_ZONE_LBA (@lba beyond the capacity).
 */
int ncq_model_report_zones(const NcqModel *m, uint64_t lba, uint8_t option,
                           uint8_t *buf, size_t len);
/*
 * A zone management action taken at once, without timing (the device's
 * non-queued ZAC MANAGEMENT OUT can also go through ncq_model_submit()
 * as NCQ_OP_OTHER with cmd.zone_action, which times it).  0 or
 * NCQ_ERR_ZONE_* (nothing changed).
 */
int ncq_model_zone_action(NcqModel *m, NcqZoneAction action, uint64_t lba,
                          bool all);
/* Make a zone read-only or offline (a fault; no command reverses it). */
int ncq_model_zone_set_cond(NcqModel *m, uint32_t zone, NcqZoneCond c);
/*
 * The zone state a drive keeps on its media, as text (zone-file.c; the
 * device's zone-state file, docs/smr.md): a header naming the model and
 * its zone geometry, then one line per sequential zone that is not empty
 * (index, condition, write pointer).  malloc'd, the caller frees it;
 * NULL for a model without zones or out of memory.
 */
char *ncq_model_zone_state_format(const NcqModel *m);
/*
 * Load such a text (@len bytes) into an idle model, as a power-on finds
 * it: write pointers, full, read-only and offline zones stay; open zones
 * come back closed, or empty when their pointer is at their start.  0,
 * or NCQ_ERR_PARSE with @err "line N: <problem>; <fix>" (the model
 * unchanged); NCQ_ERR_INVAL for a model without zones.
 */
int ncq_model_zone_state_parse(NcqModel *m, const char *text, size_t len,
                               char *err, size_t errlen);

/* ---- power loss ---- */
typedef struct NcqRange {
    uint64_t lba;
    uint64_t sectors;
} NcqRange;
/*
 * Sectors whose new contents are not on the media at @now_ns: dirty data
 * of the write cache, the destage in progress, and the ranges of writes
 * not yet completed.  Sorted by LBA, merged; returns the number of ranges,
 * or NCQ_ERR_INVAL if they do not fit in @max (NCQ_MAX_VOLATILE always
 * does).  What ncq_model_power_loss() at @now_ns loses.
 */
#define NCQ_MAX_VOLATILE    (128 + 1 + NCQ_MAX_TAGS + 1)
int ncq_model_volatile(NcqModel *m, int64_t now_ns, NcqRange *out, int max);

/*
 * The old contents of sectors, kept so that a power cut can give them back
 * (undo.c).  @vol arguments are volatile ranges as ncq_model_volatile()
 * gives them: sorted, disjoint.
 */
typedef struct NcqUndo NcqUndo;
NcqUndo *ncq_undo_new(void);
void ncq_undo_free(NcqUndo *u);
void ncq_undo_clear(NcqUndo *u);
uint64_t ncq_undo_sectors(const NcqUndo *u);
size_t ncq_undo_extents(const NcqUndo *u);
/*
 * Before a write of [lba, lba + n): forget what is kept there for sectors
 * outside @vol (the media has them since: stale); return how many sectors
 * from *@first must be read and handed to ncq_undo_keep() (0: none).
 * Data still kept in the range is older and stays.
 */
uint64_t ncq_undo_prepare(NcqUndo *u, uint64_t lba, uint64_t n,
                          const NcqRange *vol, int nvol, uint64_t *first);
/* Keep @data (n sectors from @first) where nothing is kept yet. */
int ncq_undo_keep(NcqUndo *u, uint64_t first, uint64_t n,
                  const uint8_t *data);
/* Forget everything outside @vol. */
int ncq_undo_prune(NcqUndo *u, const NcqRange *vol, int nvol);
/* @fn for each kept piece inside @vol, in LBA order; stops on non-zero. */
int ncq_undo_foreach(const NcqUndo *u, const NcqRange *vol, int nvol,
                     int (*fn)(void *opaque, uint64_t lba, uint64_t n,
                               const uint8_t *data),
                     void *opaque);
/* For migration: a flat, byte-order independent copy, and back. */
size_t ncq_undo_save_size(const NcqUndo *u);
void ncq_undo_save(const NcqUndo *u, uint8_t *buf);
int ncq_undo_load(NcqUndo *u, const uint8_t *buf, size_t len, char *err,
                  size_t errlen);

/*
 * ---- generator (rng.c) ----
 * The model's seeded generator (splitmix64), shared with tools such as
 * ncq-sim so their workloads draw from the same sequence definition.
 * Advances *@state and returns the next 64-bit value.
 */
uint64_t ncq_rng_next(uint64_t *state);

/* ---- names ---- */
/*
 * ---- numbers and durations (num.c): the one parser ----
 * Used by parameter files, fault rules, the device's properties and
 * ncq-sim.  Each returns 0, NCQ_ERR_PARSE (not a number of that kind),
 * NCQ_ERR_RANGE (too large) or NCQ_ERR_INVAL (a bad @frac or unit).
 */
#define NCQ_NS_PER_MS 1000000
/* A whole number, decimal or 0x hex, at most @max. */
int ncq_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out);
/*
 * A non-negative decimal such as "12.345" as value * 10^@frac (@frac <= 9);
 * fractional digits beyond the ninth are dropped.
 */
int ncq_parse_decimal(const char *s, size_t len, unsigned frac,
                      uint64_t *out);
/*
 * A duration: "50ms", "2s", "500us", "100ns", "1.5ms"; a bare number is
 * in units of @bare_unit_ns (1 to 10^9).  The result is whole ns; a value
 * with a part of a nanosecond ("0.5ns", "1.0000000001s") is NCQ_ERR_PARSE.
 */
int ncq_parse_duration(const char *s, size_t len, int64_t bare_unit_ns,
                       int64_t *ns);
const char *ncq_policy_name(NcqPolicy p);
int ncq_policy_from_name(const char *s, NcqPolicy *out);
const char *ncq_op_name(NcqOp op);
const char *ncq_reason_name(NcqReason r);
const char *ncq_strerror(int err);

/* ---- layout helpers (exposed for tests and tools) ---- */
typedef struct NcqPhys {
    uint32_t cyl;
    uint32_t head;
    uint32_t sector;          /* physical sector index on the track */
    uint32_t zone;
} NcqPhys;
int ncq_model_lba_to_phys(const NcqModel *m, uint64_t lba, NcqPhys *ph);
int ncq_model_phys_to_lba(const NcqModel *m, const NcqPhys *ph,
                          uint64_t *lba);
int64_t ncq_model_seek_ns(const NcqModel *m, uint32_t dist);
/*
 * Rotational wait (ns) until the start of @lba passes under the head at
 * time @t, ignoring seeks.
 */
int64_t ncq_model_rot_wait_ns(const NcqModel *m, int64_t t, uint64_t lba);
uint64_t ncq_model_layout_sectors(const NcqModel *m);

/* ---- trace (docs/trace-schema.md) ---- */
#define NCQ_TRACE_MAGIC "# ncq-trace v"
#define NCQ_TRACE_COLUMNS "tag,op,lba,sectors,fua,prio,arrival_ns," \
    "dispatch_ns,complete_ns,seek_ns,rotate_ns,transfer_ns,cache," \
    "queue_len,delay_count,reason,cdl,cdl_outcome"
void ncq_trace_header(FILE *f, const char *model, uint64_t seed);
void ncq_trace_record(FILE *f, const NcqCompletion *c);
/*
 * A comment line for a spindle event (docs/trace-schema.md): "# spin-down
 * t_ns=T why=WHY" or, with @ready_ns >= 0, "# spin-up t_ns=T ready_ns=R"
 */
void ncq_trace_spin(FILE *f, int64_t t_ns, int64_t ready_ns,
                    const char *why);
/*
 * A comment line for a band's cleaning in a drive-managed SMR's media
 * cache (docs/trace-schema.md): "# clean band=B extents=N start_ns=S
 * end_ns=E forced=0|1 done=0|1".
 */
void ncq_trace_clean(FILE *f, const NcqMcEvent *e);

#endif
