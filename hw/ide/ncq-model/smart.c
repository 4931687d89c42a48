/*
 * ncq-model: SMART that follows the drive's state.
 *
 * The counters behind the attributes (power-on time, power cycles,
 * commands, injected media errors, reallocations), the error and self-test
 * logs, and the self-tests, which run in virtual time over the model's
 * layout at its zones' media rates.  Nothing here reads a host clock or a
 * random source: the same guest gives the same SMART data.  What each
 * value means and where it comes from: docs/smart.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"
#include "hw/ide/ncq-smart.h"

#define NS_PER_S            1000000000LL
#define NS_PER_HOUR         (3600 * NS_PER_S)
/*
 * Estimates (docs/smart.md#where-the-values-come-from): 25 deg C
 * ambient, 7 deg C of warm-up from the spindle and electronics, reached
 * with a 10 minute lag, and up to 8 deg C more from the actuator when
 * the drive is always busy, its busy fraction taken as a first-order lag
 * of 5 minutes.
 */
#define TEMP_AMBIENT        25
#define TEMP_WARMUP         7
#define TEMP_WARMUP_NS      (600 * NS_PER_S)
#define TEMP_ACTIVITY       8
#define ACTIVITY_TAU_NS     (300 * NS_PER_S)
/*
 * Estimate: the spare sectors the firmware can reallocate to.  No maker
 * publishes it; 4096 puts Reallocated_Sector_Ct at its threshold of 36
 * after 2622 reallocations.
 */
#define SPARE_POOL          4096
/* Short self-test: this many extents spread over the disk ... */
#define SHORT_EXTENTS       64
/* ... each this fraction of the capacity (1/64 of the disk in all) */
#define SHORT_EXTENT_DIV    4096
#define SHORT_EXTENT_MIN    256

#define F_PREFAIL   0x01
#define F_ONLINE    0x02

/*
 * Seagate's attribute set, as smartctl shows it for Barracuda 7200.10
 * drives (smartctl's drive database entry "Seagate Barracuda 7200.10"
 * prints 1, 7 and 195 as raw24/raw32); flags and thresholds: estimate,
 * the ones these drives report (docs/smart.md#attributes).
 */
static const NcqSmartAttrDef ncq_smart_seagate[] = {
    { 1,   0x000f, 6,  NCQ_SMART_SRC_READ_ERR, "Raw_Read_Error_Rate" },
    { 3,   0x0003, 0,  NCQ_SMART_SRC_ZERO, "Spin_Up_Time" },
    { 4,   0x0032, 20, NCQ_SMART_SRC_START_STOP, "Start_Stop_Count" },
    { 5,   0x0033, 36, NCQ_SMART_SRC_REALLOC, "Reallocated_Sector_Ct" },
    { 7,   0x000f, 30, NCQ_SMART_SRC_SEEK_ERR, "Seek_Error_Rate" },
    { 9,   0x0032, 0,  NCQ_SMART_SRC_POH, "Power_On_Hours" },
    { 10,  0x0013, 97, NCQ_SMART_SRC_ZERO, "Spin_Retry_Count" },
    { 12,  0x0032, 20, NCQ_SMART_SRC_CYCLES, "Power_Cycle_Count" },
    { 187, 0x0032, 0,  NCQ_SMART_SRC_REPORTED_UNC, "Reported_Uncorrect" },
    { 189, 0x003a, 0,  NCQ_SMART_SRC_ZERO, "High_Fly_Writes" },
    { 190, 0x0022, 45, NCQ_SMART_SRC_AIRFLOW, "Airflow_Temperature_Cel" },
    { 194, 0x0022, 0,  NCQ_SMART_SRC_TEMP, "Temperature_Celsius" },
    { 195, 0x001a, 0,  NCQ_SMART_SRC_ECC, "Hardware_ECC_Recovered" },
    { 197, 0x0012, 0,  NCQ_SMART_SRC_PENDING, "Current_Pending_Sector" },
    { 198, 0x0010, 0,  NCQ_SMART_SRC_OFFLINE_UNC, "Offline_Uncorrectable" },
    { 199, 0x003e, 0,  NCQ_SMART_SRC_CRC, "UDMA_CRC_Error_Count" },
    { 200, 0x0000, 0,  NCQ_SMART_SRC_ZERO, "Multi_Zone_Error_Rate" },
};

/*
 * Every other maker: the attributes ATA drives commonly share, with
 * smartctl's default names; thresholds: estimate (docs/smart.md).
 */
static const NcqSmartAttrDef ncq_smart_generic[] = {
    { 1,   0x000b, 16, NCQ_SMART_SRC_READ_ERR, "Raw_Read_Error_Rate" },
    { 3,   0x0007, 24, NCQ_SMART_SRC_ZERO, "Spin_Up_Time" },
    { 4,   0x0012, 0,  NCQ_SMART_SRC_START_STOP, "Start_Stop_Count" },
    { 5,   0x0033, 5,  NCQ_SMART_SRC_REALLOC, "Reallocated_Sector_Ct" },
    { 9,   0x0012, 0,  NCQ_SMART_SRC_POH, "Power_On_Hours" },
    { 10,  0x0013, 60, NCQ_SMART_SRC_ZERO, "Spin_Retry_Count" },
    { 12,  0x0032, 0,  NCQ_SMART_SRC_CYCLES, "Power_Cycle_Count" },
    { 194, 0x0002, 0,  NCQ_SMART_SRC_TEMP, "Temperature_Celsius" },
    { 196, 0x0032, 0,  NCQ_SMART_SRC_REALLOC_EVENTS,
      "Reallocated_Event_Count" },
    { 197, 0x0022, 0,  NCQ_SMART_SRC_PENDING, "Current_Pending_Sector" },
    { 198, 0x0008, 0,  NCQ_SMART_SRC_OFFLINE_UNC, "Offline_Uncorrectable" },
    { 199, 0x000a, 0,  NCQ_SMART_SRC_CRC, "UDMA_CRC_Error_Count" },
};

void ncq_model_attach_smart(NcqModel *m, const NcqSmart *sm)
{
    m->smart = sm;
}

void ncq_smart_init(NcqSmart *sm, int64_t now_ns)
{
    memset(sm, 0, sizeof(*sm));
    sm->at_ns = now_ns;
    sm->act_at_ns = now_ns;
    sm->enabled = true;
    sm->autosave = true;
    sm->temp_min = sm->temp_max = TEMP_AMBIENT;
    sm->life_min = sm->life_max = TEMP_AMBIENT;
}

uint64_t ncq_smart_power_on_hours(const NcqSmart *sm)
{
    return sm->power_on_ns / NS_PER_HOUR;
}

uint64_t ncq_smart_spindle_hours(const NcqSmart *sm)
{
    return sm->spindle_ns / NS_PER_HOUR;
}

void ncq_smart_spindle(NcqSmart *sm, const NcqModel *m, int64_t now_ns,
                       bool on)
{
    ncq_smart_update(sm, m, now_ns);
    if (on) {
        sm->spindle_off = false;
        sm->start_stops++;
    } else if (!sm->spindle_off) {
        sm->spindle_off = true;
        sm->spindle_stop_ns = now_ns + m->p.spindown_ns;
    }
}

/* The busy fraction at @now_ns: the lag folded over [act_at_ns, now] */
static uint32_t ncq_smart_activity_at(const NcqSmart *sm, int64_t now_ns)
{
    int64_t dt = now_ns - sm->act_at_ns;

    if (dt <= 0) {
        return sm->activity_milli;
    }
    return (uint32_t)(((uint64_t)sm->activity_milli * ACTIVITY_TAU_NS +
                       (sm->busy ? 1000ULL * dt : 0)) /
                      (ACTIVITY_TAU_NS + dt));
}

/* At the last update */
int32_t ncq_smart_temperature(const NcqSmart *sm)
{
    uint64_t c = sm->cycle_ns;

    return TEMP_AMBIENT +
           (int32_t)(TEMP_WARMUP * c / (c + TEMP_WARMUP_NS)) +
           (int32_t)(TEMP_ACTIVITY * ncq_smart_activity_at(sm, sm->at_ns) /
                     1000);
}

static void ncq_smart_track_temp(NcqSmart *sm)
{
    int32_t t = ncq_smart_temperature(sm);

    sm->temp_min = t < sm->temp_min ? t : sm->temp_min;
    sm->temp_max = t > sm->temp_max ? t : sm->temp_max;
    sm->life_min = t < sm->life_min ? t : sm->life_min;
    sm->life_max = t > sm->life_max ? t : sm->life_max;
}

static uint8_t ncq_smart_remaining(const NcqSmartRun *r)
{
    int64_t left = r->total_ns - r->done_ns, rem;

    if (r->total_ns <= 0 || left <= 0) {
        return 0;
    }
    rem = (left * 10 + r->total_ns - 1) / r->total_ns;
    return rem > 9 ? 9 : (uint8_t)rem;
}

static int ncq_smart_pending_index(const NcqSmart *sm, uint64_t lba)
{
    uint32_t i;

    for (i = 0; i < sm->npending; i++) {
        if (sm->pending[i] == lba) {
            return (int)i;
        }
    }
    return -1;
}

static void ncq_smart_add_pending(NcqSmart *sm, uint64_t lba, bool offline)
{
    int i = ncq_smart_pending_index(sm, lba);

    if (i >= 0) {
        sm->pending_offline[i] |= offline;
        return;
    }
    if (sm->npending < NCQ_SMART_MAX_PENDING) {
        sm->pending_offline[sm->npending] = offline;
        sm->pending[sm->npending++] = lba;
    }
}

static void ncq_smart_drop_pending(NcqSmart *sm, uint32_t i)
{
    sm->npending--;
    sm->pending[i] = sm->pending[sm->npending];
    sm->pending_offline[i] = sm->pending_offline[sm->npending];
}

bool ncq_smart_remapped(const NcqSmart *sm, uint64_t lba)
{
    uint32_t i;

    for (i = 0; i < sm->nremap; i++) {
        if (sm->remap[i] == lba) {
            return true;
        }
    }
    return false;
}

/* A write reached pending sectors in [lo, hi): the firmware reallocates. */
static void ncq_smart_reallocate(NcqSmart *sm, uint64_t lo, uint64_t hi)
{
    uint32_t i = 0;

    while (i < sm->npending) {
        uint64_t lba = sm->pending[i];

        if (lba < lo || lba >= hi) {
            i++;
            continue;
        }
        ncq_smart_drop_pending(sm, i);
        if (!ncq_smart_remapped(sm, lba) && sm->nremap < NCQ_SMART_MAX_REMAP) {
            sm->remap[sm->nremap++] = lba;
        }
        sm->realloc++;
    }
}

/* A read of pending sectors in [lo, hi) succeeded: no longer pending. */
static void ncq_smart_read_ok(NcqSmart *sm, uint64_t lo, uint64_t hi)
{
    uint32_t i = 0;

    while (i < sm->npending) {
        if (sm->pending[i] >= lo && sm->pending[i] < hi) {
            ncq_smart_drop_pending(sm, i);
        } else {
            i++;
        }
    }
}

/* @late_ns: how long ago, in powered time, the test ended */
static void ncq_smart_log_test(NcqSmart *sm, uint8_t type, uint8_t status,
                               uint64_t fail_lba, int64_t late_ns)
{
    NcqSmartTestRec *t = &sm->test[sm->ntests % NCQ_SMART_MAX_TESTS];

    *t = (NcqSmartTestRec) {
        .type = type,
        .status = status,
        .poh = (uint16_t)((sm->power_on_ns - late_ns) / NS_PER_HOUR),
        .fail_lba = fail_lba,
    };
    sm->ntests++;
    sm->exec_status = status;
}

/* The running test has reached its stop: log its outcome. */
static void ncq_smart_test_end(NcqSmart *sm)
{
    NcqSmartRun *r = &sm->run;
    uint8_t status = NCQ_SMART_ST_OK << 4;
    int64_t late = r->done_ns - r->stop_ns;

    r->done_ns = r->stop_ns;
    if (r->fail_lba != UINT64_MAX) {
        status = (NCQ_SMART_ST_READ << 4) | ncq_smart_remaining(r);
        ncq_smart_add_pending(sm, r->fail_lba, true);
    }
    ncq_smart_log_test(sm, r->type, status,
                       r->fail_lba, late);
    r->type = 0;
}

void ncq_smart_update(NcqSmart *sm, const NcqModel *m, int64_t now_ns)
{
    int64_t dt = now_ns - sm->at_ns;

    (void)m;
    if (dt <= 0) {
        return;
    }
    if (!sm->spindle_off) {
        sm->spindle_ns += dt;
    } else if (sm->at_ns < sm->spindle_stop_ns) {
        sm->spindle_ns += (now_ns < sm->spindle_stop_ns ? now_ns :
                           sm->spindle_stop_ns) - sm->at_ns;
    }
    sm->at_ns = now_ns;
    sm->power_on_ns += dt;
    sm->cycle_ns += dt;
    /* Off-line mode: suspended while host commands are in the drive */
    if (sm->run.type && (sm->run.captive || !sm->busy)) {
        sm->run.done_ns += dt;
        if (sm->run.done_ns >= sm->run.stop_ns) {
            ncq_smart_test_end(sm);
        }
    }
}

void ncq_smart_activity(NcqSmart *sm, const NcqModel *m, int64_t now_ns,
                        bool busy)
{
    ncq_smart_update(sm, m, now_ns);
    if (busy == sm->busy) {
        return;
    }
    sm->activity_milli = ncq_smart_activity_at(sm, now_ns);
    sm->act_at_ns = now_ns;
    sm->busy = busy;
    ncq_smart_track_temp(sm);
}

void ncq_smart_power_cycle(NcqSmart *sm, const NcqModel *m, int64_t now_ns)
{
    ncq_smart_update(sm, m, now_ns);
    if (sm->run.type) {
        ncq_smart_test_abort(sm, m, NCQ_SMART_ST_RESET, now_ns);
    }
    sm->power_cycles++;
    sm->start_stops++;
    sm->spindle_off = false;    /* it spins up at power-on */
    sm->cycle_ns = 0;
    sm->busy = false;
    sm->activity_milli = 0;
    sm->act_at_ns = now_ns;
    sm->temp_min = sm->temp_max = ncq_smart_temperature(sm);
}

void ncq_smart_resume(NcqSmart *sm, const NcqModel *m, int64_t now_ns)
{
    sm->at_ns = now_ns;
    sm->act_at_ns = now_ns;
    sm->busy = false;
    sm->spindle_off = false;    /* powered on: it spins */
    if (sm->run.type) {
        ncq_smart_test_abort(sm, m, NCQ_SMART_ST_RESET, now_ns);
    }
}

void ncq_smart_log_error(NcqSmart *sm, const NcqSmartCmdRec *rec,
                         uint8_t status, uint8_t error, uint64_t lba)
{
    NcqSmartError *e = &sm->err[sm->nerr % NCQ_SMART_MAX_ERRORS];
    uint32_t n = sm->nrecent < NCQ_SMART_HISTORY ? sm->nrecent :
                 NCQ_SMART_HISTORY;
    uint32_t i;

    memset(e, 0, sizeof(*e));
    /* The commands before it, oldest first, in the last slots */
    for (i = 0; i < n; i++) {
        e->cmd[NCQ_SMART_HISTORY - n + i] =
            sm->recent[(sm->nrecent - n + i) % NCQ_SMART_HISTORY];
    }
    e->cmd[NCQ_SMART_HISTORY] = *rec;
    e->error = error;
    e->status = status;
    e->lba = lba;
    e->count = rec->count;
    e->poh = (uint16_t)ncq_smart_power_on_hours(sm);
    sm->nerr++;
}

void ncq_smart_command_done(NcqSmart *sm, const NcqModel *m,
                            const NcqSmartCmdRec *rec, NcqOp op,
                            uint64_t lba, uint32_t sectors, int fault,
                            uint64_t fault_lba, int64_t now_ns)
{
    /* The status an NCQ error reports, else a non-queued command's */
    uint8_t status = rec->cmd == 0x60 || rec->cmd == 0x61 ? 0x41 : 0x51;

    NcqSmartCmdRec r = *rec;

    ncq_smart_update(sm, m, now_ns);
    r.at_ms = (uint32_t)(sm->power_on_ns / 1000000);
    rec = &r;
    if (op == NCQ_OP_READ) {
        sm->read_cmds++;
        if (fault == NCQ_FAULT_UNC) {
            sm->sectors_read += fault_lba - lba;
            sm->reported_unc++;
            ncq_smart_add_pending(sm, fault_lba, false);
            ncq_smart_log_error(sm, rec, status, 0x40, fault_lba);
        } else {
            sm->sectors_read += sectors;
            ncq_smart_read_ok(sm, lba, lba + sectors);
        }
    } else if (op == NCQ_OP_WRITE) {
        sm->write_cmds++;
        if (fault == NCQ_FAULT_WRITE) {
            ncq_smart_log_error(sm, rec, status, 0x04, fault_lba);
        } else {
            sm->sectors_written += sectors;
            ncq_smart_reallocate(sm, lba, lba + sectors);
        }
    }
    sm->recent[sm->nrecent % NCQ_SMART_HISTORY] = *rec;
    sm->nrecent++;
}

/* Attributes */

static const NcqSmartAttrDef *ncq_smart_table(const NcqModel *m, int *n)
{
    const char *model = m->p.model;

    if (!strncmp(model, "ST", 2) || !strncmp(model, "SEAGATE", 7) ||
        !strncmp(model, "Seagate", 7)) {
        *n = (int)(sizeof(ncq_smart_seagate) / sizeof(ncq_smart_seagate[0]));
        return ncq_smart_seagate;
    }
    *n = (int)(sizeof(ncq_smart_generic) / sizeof(ncq_smart_generic[0]));
    return ncq_smart_generic;
}

/* 100 less one per @per of @count, at least 1 */
static uint8_t ncq_smart_wear(uint64_t count, uint64_t per)
{
    uint64_t d = count / per;

    return d >= 99 ? 1 : (uint8_t)(100 - d);
}

static void ncq_smart_attr_value(const NcqSmart *sm, NcqSmartSource src,
                                 uint8_t *value, uint64_t *raw)
{
    uint64_t temp = (uint64_t)ncq_smart_temperature(sm);
    uint64_t cmds = sm->read_cmds + sm->write_cmds;

    *value = 100;
    *raw = 0;
    switch (src) {
    case NCQ_SMART_SRC_ZERO:
        break;
    case NCQ_SMART_SRC_READ_ERR:
        *raw = ((sm->reported_unc & 0xffff) << 32) |
               (sm->read_cmds & 0xffffffffULL);
        break;
    case NCQ_SMART_SRC_SEEK_ERR:
        *raw = cmds & 0xffffffffULL;
        break;
    case NCQ_SMART_SRC_ECC:
        *raw = sm->read_cmds & 0xffffffffULL;
        break;
    case NCQ_SMART_SRC_START_STOP:
        *value = ncq_smart_wear(sm->start_stops, 100);
        *raw = sm->start_stops;
        break;
    case NCQ_SMART_SRC_REALLOC:
        *value = ncq_smart_wear((uint64_t)sm->realloc * 100, SPARE_POOL);
        *raw = sm->realloc;
        break;
    case NCQ_SMART_SRC_REALLOC_EVENTS:
        *raw = sm->realloc;
        break;
    case NCQ_SMART_SRC_POH:
        *value = ncq_smart_wear(ncq_smart_power_on_hours(sm), 876);
        *raw = ncq_smart_power_on_hours(sm);
        break;
    case NCQ_SMART_SRC_CYCLES:
        *value = ncq_smart_wear(sm->power_cycles, 100);
        *raw = sm->power_cycles;
        break;
    case NCQ_SMART_SRC_REPORTED_UNC:
        *value = ncq_smart_wear(sm->reported_unc, 1);
        *raw = sm->reported_unc;
        break;
    case NCQ_SMART_SRC_AIRFLOW:
        /* bytes: current, 0, this cycle's lowest, highest */
        *value = (uint8_t)(100 - temp);
        *raw = temp | ((uint64_t)(uint8_t)sm->temp_min << 16) |
               ((uint64_t)(uint8_t)sm->temp_max << 24);
        break;
    case NCQ_SMART_SRC_TEMP:
        /* bytes: current, 0, lifetime lowest, 0, lifetime highest */
        *value = (uint8_t)temp;
        *raw = temp | ((uint64_t)(uint8_t)sm->life_min << 16) |
               ((uint64_t)(uint8_t)sm->life_max << 32);
        break;
    case NCQ_SMART_SRC_PENDING:
        *raw = sm->npending;
        break;
    case NCQ_SMART_SRC_OFFLINE_UNC: {
        uint32_t i;

        for (i = 0; i < sm->npending; i++) {
            *raw += sm->pending_offline[i];
        }
        break;
    }
    case NCQ_SMART_SRC_CRC:
        *value = 200;
        *raw = sm->crc_errors;
        break;
    }
}

int ncq_smart_attrs(const NcqSmart *sm, const NcqModel *m,
                    NcqSmartAttr *out, int max)
{
    int n, i;
    const NcqSmartAttrDef *def = ncq_smart_table(m, &n);

    for (i = 0; i < n && i < max && i < NCQ_SMART_MAX_ATTRS; i++) {
        NcqSmartAttr *a = &out[i];

        a->id = def[i].id;
        a->flags = def[i].flags;
        a->threshold = def[i].threshold;
        a->name = def[i].name;
        ncq_smart_attr_value(sm, def[i].src, &a->value, &a->raw);
        a->worst = sm->worst[i] && sm->worst[i] < a->value ? sm->worst[i] :
                   a->value;
    }
    return i;
}

void ncq_smart_keep_worst(NcqSmart *sm, const NcqSmartAttr *a, int n)
{
    int i;

    for (i = 0; i < n && i < NCQ_SMART_MAX_ATTRS; i++) {
        sm->worst[i] = a[i].worst;
    }
}

/* ACS: a pre-failure attribute at or below its threshold */
bool ncq_smart_failing(const NcqSmart *sm, const NcqModel *m)
{
    NcqSmartAttr a[NCQ_SMART_MAX_ATTRS];
    int n = ncq_smart_attrs(sm, m, a, NCQ_SMART_MAX_ATTRS), i;

    for (i = 0; i < n; i++) {
        if ((a[i].flags & F_PREFAIL) && a[i].threshold &&
            a[i].value <= a[i].threshold) {
            return true;
        }
    }
    return false;
}

/* Self-tests */

/* Media time of reading [lo, hi) at the zones' rates */
static int64_t ncq_smart_scan_ns(const NcqModel *m, uint64_t lo, uint64_t hi)
{
    const NcqParams *p = &m->p;
    uint64_t ns = 0, rev_ps;
    uint32_t z;

    if (p->kind == NCQ_KIND_SSD || !p->nzones || p->rpm < 2) {
        /* No platters: the interface rate */
        return (int64_t)((hi - lo) * (512000000000ULL /
                                      (p->bus_bytes_per_s / 1000)) / 1000);
    }
    rev_ps = 60000000000000ULL / p->rpm;
    for (z = 0; z < p->nzones; z++) {
        const NcqZone *zn = &p->zones[z];
        uint64_t a = m->layout.zone_first[z], b = m->layout.zone_first[z + 1];
        uint64_t skew = zn->own_skew ? zn->track_skew_ppb : p->track_skew_ppb;
        uint64_t tracks = (uint64_t)zn->cyl_count * p->heads, ps;

        a = a > lo ? a : lo;
        b = b < hi ? b : hi;
        if (a >= b || b - a == 0) {
            continue;
        }
        /* a revolution and a head switch per track */
        ps = (rev_ps + rev_ps * skew / 1000000000ULL) * tracks /
             (m->layout.zone_first[z + 1] - m->layout.zone_first[z]);
        ns += (b - a) * ps / 1000;
    }
    return (int64_t)ns;
}

/* Moving the heads from @from to @to: a seek and half a revolution */
static int64_t ncq_smart_move_ns(const NcqModel *m, uint64_t from,
                                 uint64_t to)
{
    NcqPhys a, b;

    if (m->p.kind == NCQ_KIND_SSD || m->p.rpm < 2) {
        return 0;
    }
    ncq_layout_map(m, from, &a);
    ncq_layout_map(m, to, &b);
    return ncq_seek_time(&m->p, a.cyl > b.cyl ? a.cyl - b.cyl :
                         b.cyl - a.cyl) + (int64_t)(NCQ_REV / m->p.rpm / 2);
}

/* The first sector in [lo, hi) that a read cannot recover, or hi */
static uint64_t ncq_smart_first_bad(const NcqSmart *sm, const NcqModel *m,
                                    uint64_t lo, uint64_t hi)
{
    uint64_t best = hi, x;
    uint32_t i;
    int r;

    for (r = 0; r < m->faults.n; r++) {
        const NcqFaultRule *f = &m->faults.rule[r];
        uint64_t b = f->lba + f->sectors < best ? f->lba + f->sectors : best;

        /* A one-shot or every-Nth rule is a transient error, not media */
        if (f->kind != NCQ_FAULT_UNC || f->mode != NCQ_FAULT_ALWAYS ||
            !(f->ops & NCQ_FAULT_READS)) {
            continue;
        }
        for (x = f->lba > lo ? f->lba : lo; x < b; x++) {
            if (!ncq_smart_remapped(sm, x)) {
                best = x;
                break;
            }
        }
    }
    for (i = 0; i < sm->npending; i++) {
        if (sm->pending[i] >= lo && sm->pending[i] < best) {
            best = sm->pending[i];
        }
    }
    return best;
}

/* The extents a test reads, in order; their number */
static int ncq_smart_extents(const NcqSmart *sm, const NcqModel *m,
                             uint8_t type, NcqSmartSpan *ext)
{
    uint64_t cap = m->p.capacity, len;
    int n = 0, i;

    switch (type) {
    case NCQ_SMART_SHORT:
        len = cap / SHORT_EXTENT_DIV;
        len = len < SHORT_EXTENT_MIN ? SHORT_EXTENT_MIN : len;
        len = len > cap ? cap : len;
        for (i = 0; i < SHORT_EXTENTS; i++) {
            uint64_t start = (cap - len) / (SHORT_EXTENTS - 1) * i;

            ext[n++] = (NcqSmartSpan) { start, start + len };
        }
        return n;
    case NCQ_SMART_EXTENDED:
        ext[0] = (NcqSmartSpan) { 0, cap };
        return 1;
    case NCQ_SMART_SELECTIVE:
        for (i = 0; i < NCQ_SMART_SPANS; i++) {
            if (sm->span[i].start || sm->span[i].end) {
                ext[n++] = (NcqSmartSpan) { sm->span[i].start,
                                            sm->span[i].end + 1 };
            }
        }
        return n;
    }
    return 0;
}

/* Plan a test: its duration, and where and when it stops on a bad sector */
static void ncq_smart_plan(const NcqSmart *sm, const NcqModel *m,
                           uint8_t type, NcqSmartRun *r)
{
    NcqSmartSpan ext[SHORT_EXTENTS];
    int n = ncq_smart_extents(sm, m, type, ext), i;
    uint64_t head = 0;
    int64_t t = 0;

    r->fail_lba = UINT64_MAX;
    r->stop_ns = -1;
    for (i = 0; i < n; i++) {
        uint64_t bad = ncq_smart_first_bad(sm, m, ext[i].start, ext[i].end);

        t += ncq_smart_move_ns(m, head, ext[i].start);
        if (bad < ext[i].end && r->fail_lba == UINT64_MAX) {
            r->fail_lba = bad;
            r->stop_ns = t + ncq_smart_scan_ns(m, ext[i].start, bad + 1);
        }
        t += ncq_smart_scan_ns(m, ext[i].start, ext[i].end);
        head = ext[i].end - 1;
    }
    r->total_ns = t > 0 ? t : 1;
    if (r->stop_ns < 0) {
        r->stop_ns = r->total_ns;
    }
}

int64_t ncq_smart_test_ns(const NcqModel *m, const NcqSmart *sm, uint8_t sub)
{
    NcqSmartRun r;

    ncq_smart_plan(sm, m, sub & ~NCQ_SMART_CAPTIVE, &r);
    return r.total_ns;
}

int ncq_smart_test_start(NcqSmart *sm, const NcqModel *m, uint8_t sub,
                         int64_t now_ns)
{
    uint8_t type = sub & ~NCQ_SMART_CAPTIVE;

    if (type != NCQ_SMART_SHORT && type != NCQ_SMART_EXTENDED &&
        type != NCQ_SMART_SELECTIVE) {
        return NCQ_ERR_INVAL;
    }
    ncq_smart_update(sm, m, now_ns);
    if (sm->run.type) {
        return NCQ_ERR_TAG_BUSY;   /* one self-test at a time */
    }
    memset(&sm->run, 0, sizeof(sm->run));
    ncq_smart_plan(sm, m, type, &sm->run);
    sm->run.type = sub;
    sm->run.captive = sub & NCQ_SMART_CAPTIVE;
    return 0;
}

void ncq_smart_test_abort(NcqSmart *sm, const NcqModel *m, uint8_t status,
                          int64_t now_ns)
{
    NcqSmartRun *r = &sm->run;

    ncq_smart_update(sm, m, now_ns);
    if (!r->type) {
        return;
    }
    ncq_smart_log_test(sm, r->type,
                       (status << 4) | ncq_smart_remaining(r), UINT64_MAX, 0);
    r->type = 0;
}

uint8_t ncq_smart_exec_status(const NcqSmart *sm)
{
    if (sm->run.type) {
        return (NCQ_SMART_ST_RUNNING << 4) | ncq_smart_remaining(&sm->run);
    }
    return sm->exec_status;
}

int64_t ncq_smart_test_left_ns(const NcqSmart *sm)
{
    return sm->run.type ? sm->run.stop_ns - sm->run.done_ns : 0;
}

const NcqSmartTestRec *ncq_smart_test_rec(const NcqSmart *sm, uint32_t back)
{
    if (back >= sm->ntests || back >= NCQ_SMART_MAX_TESTS) {
        return NULL;
    }
    return &sm->test[(sm->ntests - 1 - back) % NCQ_SMART_MAX_TESTS];
}

const NcqSmartError *ncq_smart_error_rec(const NcqSmart *sm, uint32_t back)
{
    if (back >= sm->nerr || back >= NCQ_SMART_MAX_ERRORS) {
        return NULL;
    }
    return &sm->err[(sm->nerr - 1 - back) % NCQ_SMART_MAX_ERRORS];
}

int ncq_smart_set_spans(NcqSmart *sm, const NcqModel *m,
                        const NcqSmartSpan *span, uint16_t flags,
                        uint16_t pending_min)
{
    int i;

    for (i = 0; i < NCQ_SMART_SPANS; i++) {
        if (!span[i].start && !span[i].end) {
            continue;
        }
        if (span[i].end < span[i].start || span[i].end >= m->p.capacity) {
            return NCQ_ERR_RANGE;
        }
    }
    memcpy(sm->span, span, sizeof(sm->span));
    sm->sel_flags = flags;
    sm->sel_pending_min = pending_min;
    return 0;
}
