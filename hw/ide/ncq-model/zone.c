/*
 * ncq-model: host-managed zones (ZAC / ZBC), docs/smr.md
 *
 * The capacity is cut into zones of zone_sectors (a power of two): the
 * first zone_conv are conventional, the rest sequential write required
 * (SWR).  Each SWR zone has a condition and a write pointer.  A command
 * is checked and applied when the drive accepts it (ncq_zbc_accept(),
 * from ncq_model_submit()), so zone state follows the order in which
 * commands reach the drive, whatever order the firmware later serves
 * them in: a write accepted before a RESET of its zone moved the pointer
 * that the RESET then rewinds; a write arriving after the RESET must be
 * at the zone's start.  The same commands give the same states.
 *
 * The rules, as ZBC/ZAC and libzbc's conformance tests state them
 * (docs/smr.md has the table with the sense data):
 * - a write in an SWR zone must start at the write pointer and stay in
 *   the zone; it opens an EMPTY or CLOSED zone implicitly; a zone written
 *   to its end is FULL and no longer open;
 * - at most zone_max_open zones are open; an implicit open (a write) or
 *   an explicit one (OPEN, or FINISH of an EMPTY or CLOSED zone) at the
 *   limit closes the implicitly open zone opened first, and fails with
 *   INSUFFICIENT ZONE RESOURCES when every open zone was opened
 *   explicitly;
 * - with URSWRZ 0, a read of an SWR zone past its write pointer, or one
 *   spanning zones of which one is SWR, fails;
 * - a refused command changes nothing.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"

#define NCQ_WP_INVALID UINT64_MAX

static uint64_t zs(const NcqModel *m)
{
    return m->p.zone_sectors;
}

static uint64_t zstart(const NcqModel *m, uint32_t z)
{
    return (uint64_t)z * zs(m);
}

static bool is_conv(const NcqModel *m, uint32_t z)
{
    return z < m->zbc.nconv;
}

NcqZoneCond ncq_zbc_fresh_cond(const NcqModel *m, uint32_t z)
{
    return is_conv(m, z) ? NCQ_ZC_NOT_WP : NCQ_ZC_EMPTY;
}

int ncq_zbc_init(NcqModel *m, char *err, size_t errlen)
{
    NcqZbc *b = &m->zbc;
    uint32_t z;

    memset(b, 0, sizeof(*b));
    if (!m->p.zone_sectors) {
        return 0;
    }
    b->nz = (uint32_t)(m->p.capacity / m->p.zone_sectors);
    b->nconv = m->p.zone_conv;
    b->cond = malloc(b->nz);
    b->wp = malloc(sizeof(uint64_t) * b->nz);
    if (!b->cond || !b->wp) {
        ncq_zbc_free(m);
        snprintf(err, errlen, "out of memory for %u zones", b->nz);
        return NCQ_ERR_NOMEM;
    }
    for (z = 0; z < b->nz; z++) {
        b->cond[z] = ncq_zbc_fresh_cond(m, z);
        b->wp[z] = zstart(m, z);
    }
    return 0;
}

void ncq_zbc_free(NcqModel *m)
{
    free(m->zbc.cond);
    free(m->zbc.wp);
    m->zbc.cond = NULL;
    m->zbc.wp = NULL;
    m->zbc.nz = 0;
}

/* ---- the open zones, oldest first ---- */

static void open_remove(NcqZbc *b, uint32_t z)
{
    uint32_t i;

    for (i = 0; i < b->nopen; i++) {
        if (b->open[i] == z) {
            memmove(&b->open[i], &b->open[i + 1],
                    (b->nopen - i - 1) * sizeof(b->open[0]));
            b->nopen--;
            return;
        }
    }
}

static bool is_open(uint8_t c)
{
    return c == NCQ_ZC_IMP_OPEN || c == NCQ_ZC_EXP_OPEN;
}

/* An open zone closes: CLOSED, or EMPTY when nothing was written. */
static void zone_close(NcqModel *m, uint32_t z)
{
    NcqZbc *b = &m->zbc;

    open_remove(b, z);
    b->cond[z] = b->wp[z] == zstart(m, z) ? NCQ_ZC_EMPTY : NCQ_ZC_CLOSED;
}

/* Oldest implicitly open zone, or -1. */
static int64_t oldest_implicit(const NcqZbc *b)
{
    uint32_t i;

    for (i = 0; i < b->nopen; i++) {
        if (b->cond[b->open[i]] == NCQ_ZC_IMP_OPEN) {
            return b->open[i];
        }
    }
    return -1;
}

/* Room for one more open zone, closing an implicit one if need be. */
static int open_room(NcqModel *m, bool check_only)
{
    NcqZbc *b = &m->zbc;
    int64_t victim;

    if (b->nopen < m->p.zone_max_open) {
        return 0;
    }
    victim = oldest_implicit(b);
    if (victim < 0) {
        return NCQ_ERR_ZONE_RESOURCES;
    }
    if (!check_only) {
        zone_close(m, (uint32_t)victim);
    }
    return 0;
}

/* EMPTY or CLOSED zone @z opens as @cond (IMP_OPEN or EXP_OPEN). */
static int zone_open(NcqModel *m, uint32_t z, NcqZoneCond cond)
{
    NcqZbc *b = &m->zbc;
    int rc = open_room(m, false);

    if (rc < 0) {
        return rc;
    }
    b->open[b->nopen++] = z;
    b->cond[z] = cond;
    return 0;
}

static void zone_full(NcqModel *m, uint32_t z)
{
    open_remove(&m->zbc, z);
    m->zbc.cond[z] = NCQ_ZC_FULL;
    m->zbc.wp[z] = zstart(m, z) + zs(m);
}

static void zone_empty(NcqModel *m, uint32_t z)
{
    open_remove(&m->zbc, z);
    m->zbc.cond[z] = NCQ_ZC_EMPTY;
    m->zbc.wp[z] = zstart(m, z);
}

/* ---- reads and writes ---- */

static bool span_has_swr(const NcqModel *m, uint32_t z0, uint32_t z1)
{
    return z1 >= m->zbc.nconv && z0 <= z1;
}

static int zbc_offline_in(const NcqModel *m, uint32_t z0, uint32_t z1)
{
    uint32_t z;

    for (z = z0; z <= z1; z++) {
        if (m->zbc.cond[z] == NCQ_ZC_OFFLINE) {
            return NCQ_ERR_ZONE_OFFLINE;
        }
    }
    return 0;
}

static int zbc_read(const NcqModel *m, uint64_t lba, uint32_t n)
{
    uint32_t z0 = lba / zs(m), z1 = (lba + n - 1) / zs(m);
    uint8_t c = m->zbc.cond[z0];
    int rc = zbc_offline_in(m, z0, z1);

    if (rc < 0 || m->p.zone_urswrz) {
        return rc;
    }
    if (z0 != z1) {
        return span_has_swr(m, z0, z1) ? NCQ_ERR_ZONE_READ_BOUNDARY : 0;
    }
    if (is_conv(m, z0) || c == NCQ_ZC_FULL || c == NCQ_ZC_READ_ONLY) {
        return 0;
    }
    return lba + n > m->zbc.wp[z0] ? NCQ_ERR_ZONE_INVALID_READ : 0;
}

static int zbc_write(NcqModel *m, uint64_t lba, uint32_t n)
{
    NcqZbc *b = &m->zbc;
    uint32_t z0 = lba / zs(m), z1 = (lba + n - 1) / zs(m);
    int rc;

    if (z0 != z1 && span_has_swr(m, z0, z1)) {
        return NCQ_ERR_ZONE_BOUNDARY;
    }
    if (is_conv(m, z0)) {
        return zbc_offline_in(m, z0, z1);
    }
    switch (b->cond[z0]) {
    case NCQ_ZC_OFFLINE:
        return NCQ_ERR_ZONE_OFFLINE;
    case NCQ_ZC_READ_ONLY:
        return NCQ_ERR_ZONE_READ_ONLY;
    case NCQ_ZC_FULL:
        return NCQ_ERR_ZONE_FIELD;
    }
    if (lba != b->wp[z0]) {
        return NCQ_ERR_ZONE_UNALIGNED;
    }
    if (!is_open(b->cond[z0])) {
        rc = zone_open(m, z0, NCQ_ZC_IMP_OPEN);
        if (rc < 0) {
            return rc;
        }
    }
    b->wp[z0] += n;
    if (b->wp[z0] == zstart(m, z0) + zs(m)) {
        zone_full(m, z0);
    }
    return 0;
}

/* ---- zone management (one zone) ---- */

static int64_t action_ns(const NcqModel *m, NcqZoneAction a)
{
    switch (a) {
    case NCQ_ZONE_RESET:
        return m->p.zone_reset_ns;
    case NCQ_ZONE_FINISH:
        return m->p.zone_finish_ns;
    default:
        return m->p.zone_open_ns;
    }
}

/* The zone a single-zone action names: 0 with *@z, or the error. */
static int action_zone(const NcqModel *m, uint64_t lba, uint32_t *z)
{
    if (lba >= m->p.capacity) {
        return NCQ_ERR_ZONE_LBA;
    }
    if (lba % zs(m)) {
        return NCQ_ERR_ZONE_FIELD;
    }
    *z = lba / zs(m);
    if (is_conv(m, *z)) {
        return NCQ_ERR_ZONE_FIELD;
    }
    if (m->zbc.cond[*z] == NCQ_ZC_OFFLINE) {
        return NCQ_ERR_ZONE_OFFLINE;
    }
    return m->zbc.cond[*z] == NCQ_ZC_READ_ONLY ? NCQ_ERR_ZONE_READ_ONLY : 0;
}

/* Apply @a to SWR zone @z; *@changed counts zones whose state moved. */
static int action_one(NcqModel *m, NcqZoneAction a, uint32_t z,
                      uint32_t *changed)
{
    uint8_t c = m->zbc.cond[z];
    int rc = 0;

    switch (a) {
    case NCQ_ZONE_OPEN:
        if (c == NCQ_ZC_IMP_OPEN) {
            m->zbc.cond[z] = NCQ_ZC_EXP_OPEN;
        } else if (c == NCQ_ZC_EMPTY || c == NCQ_ZC_CLOSED) {
            rc = zone_open(m, z, NCQ_ZC_EXP_OPEN);
        }
        break;
    case NCQ_ZONE_CLOSE:
        if (is_open(c)) {
            zone_close(m, z);
        }
        break;
    case NCQ_ZONE_FINISH:
        if (c == NCQ_ZC_EMPTY || c == NCQ_ZC_CLOSED) {
            rc = open_room(m, false);
        }
        if (rc == 0 && c != NCQ_ZC_FULL) {
            zone_full(m, z);
        }
        break;
    case NCQ_ZONE_RESET:
        if (c != NCQ_ZC_EMPTY) {
            zone_empty(m, z);
        }
        break;
    case NCQ_ZONE_REPORT:
        break;                  /* zbc_action() never passes it */
    }
    if (rc == 0 && m->zbc.cond[z] != c) {
        (*changed)++;
    }
    return rc;
}

/* ---- zone management (all zones) ---- */

static int open_all(NcqModel *m, uint32_t *changed)
{
    NcqZbc *b = &m->zbc;
    uint32_t z, closed = 0, exp = 0, i;

    for (z = b->nconv; z < b->nz; z++) {
        closed += b->cond[z] == NCQ_ZC_CLOSED;
    }
    for (i = 0; i < b->nopen; i++) {
        exp += b->cond[b->open[i]] == NCQ_ZC_EXP_OPEN;
    }
    if (exp + closed > m->p.zone_max_open) {
        return NCQ_ERR_ZONE_RESOURCES;
    }
    for (z = b->nconv; z < b->nz; z++) {
        if (b->cond[z] == NCQ_ZC_CLOSED) {
            zone_open(m, z, NCQ_ZC_EXP_OPEN);   /* room checked above */
            (*changed)++;
        }
    }
    return 0;
}

static int action_all(NcqModel *m, NcqZoneAction a, uint32_t *changed)
{
    NcqZbc *b = &m->zbc;
    uint32_t z;

    if (a == NCQ_ZONE_OPEN) {
        return open_all(m, changed);
    }
    for (z = b->nconv; z < b->nz; z++) {
        uint8_t c = b->cond[z];
        bool pick = a == NCQ_ZONE_CLOSE ? is_open(c) :
                    a == NCQ_ZONE_FINISH ? is_open(c) || c == NCQ_ZC_CLOSED :
                    is_open(c) || c == NCQ_ZC_CLOSED || c == NCQ_ZC_FULL;

        if (pick) {
            action_one(m, a, z, changed);   /* cannot fail for these */
        }
    }
    return 0;
}

static int zbc_action(NcqModel *m, NcqZoneAction a, uint64_t lba, bool all,
                      uint32_t *changed)
{
    uint32_t z;
    int rc;

    *changed = 0;
    if (a < NCQ_ZONE_CLOSE || a > NCQ_ZONE_RESET) {
        return NCQ_ERR_ZONE_FIELD;
    }
    if (all) {
        return action_all(m, a, changed);
    }
    rc = action_zone(m, lba, &z);
    return rc < 0 ? rc : action_one(m, a, z, changed);
}

int ncq_zbc_accept(NcqModel *m, const NcqCmd *cmd, int64_t *cost_ns)
{
    uint32_t changed;
    int rc;

    *cost_ns = 0;
    switch (cmd->op) {
    case NCQ_OP_READ:
        return zbc_read(m, cmd->lba, cmd->sectors);
    case NCQ_OP_WRITE:
        return zbc_write(m, cmd->lba, cmd->sectors);
    case NCQ_OP_OTHER:
        if (!cmd->zone_action || cmd->zone_action == NCQ_ZONE_REPORT) {
            return 0;
        }
        rc = zbc_action(m, cmd->zone_action, cmd->lba, cmd->zone_all,
                        &changed);
        *cost_ns = action_ns(m, cmd->zone_action) * changed;
        return rc;
    default:
        return 0;
    }
}

void ncq_zbc_unwrite(NcqModel *m, uint64_t lba, uint32_t n)
{
    NcqZbc *b = &m->zbc;
    uint32_t z = lba / zs(m);

    if (!b->nz || is_conv(m, z) || (lba + n - 1) / zs(m) != z ||
        b->wp[z] != lba + n) {
        return;     /* a later command moved the pointer since */
    }
    if (b->cond[z] == NCQ_ZC_FULL) {
        b->cond[z] = NCQ_ZC_CLOSED;
    }
    b->wp[z] = lba;
    /* rewound to its start: empty, unless the host opened it itself */
    if (lba == zstart(m, z) && b->cond[z] != NCQ_ZC_EXP_OPEN) {
        open_remove(b, z);
        b->cond[z] = NCQ_ZC_EMPTY;
    }
}

void ncq_zbc_power_on(NcqModel *m)
{
    NcqZbc *b = &m->zbc;

    while (b->nopen) {
        zone_close(m, b->open[0]);
    }
}

const char *ncq_zbc_check_state(const NcqModel *m)
{
    const NcqZbc *b = &m->zbc;
    uint32_t z, i, nopen = 0;

    for (z = 0; z < b->nz; z++) {
        uint8_t c = b->cond[z];
        uint64_t off = b->wp[z] - zstart(m, z);

        if (is_conv(m, z) != (c == NCQ_ZC_NOT_WP) ||
            (c > NCQ_ZC_CLOSED && c < NCQ_ZC_READ_ONLY)) {
            return "a zone condition its type cannot have";
        }
        if (b->wp[z] < zstart(m, z) || off > zs(m) ||
            (c == NCQ_ZC_EMPTY && off) || (c == NCQ_ZC_FULL && off != zs(m))) {
            return "a write pointer outside its zone or its condition";
        }
        nopen += is_open(c);
    }
    if (nopen != b->nopen || b->nopen > m->p.zone_max_open) {
        return "open zones not those the open list holds";
    }
    for (i = 0; i < b->nopen; i++) {
        if (b->open[i] >= b->nz || !is_open(b->cond[b->open[i]])) {
            return "the open list holds a zone that is not open";
        }
    }
    return NULL;
}

/* ---- public: sense data, reports, actions ---- */

int ncq_zone_sense(int err, NcqSense *out)
{
    /* ZBC/ZAC's sense data (libzbc's conformance tests expect the same) */
    static const struct {
        int err;
        NcqSense s;
    } t[] = {
        { NCQ_ERR_ZONE_UNALIGNED, { 0x5, 0x21, 0x04 } },
        { NCQ_ERR_ZONE_BOUNDARY, { 0x5, 0x21, 0x05 } },
        { NCQ_ERR_ZONE_INVALID_READ, { 0x5, 0x21, 0x06 } },
        { NCQ_ERR_ZONE_READ_BOUNDARY, { 0x5, 0x21, 0x07 } },
        { NCQ_ERR_ZONE_FIELD, { 0x5, 0x24, 0x00 } },
        { NCQ_ERR_ZONE_LBA, { 0x5, 0x21, 0x00 } },
        { NCQ_ERR_RANGE, { 0x5, 0x21, 0x00 } },
        { NCQ_ERR_ZONE_READ_ONLY, { 0x7, 0x27, 0x08 } },
        { NCQ_ERR_ZONE_OFFLINE, { 0x7, 0x2c, 0x0e } },
        { NCQ_ERR_ZONE_RESOURCES, { 0x7, 0x55, 0x0e } },
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (t[i].err == err) {
            *out = t[i].s;
            return 0;
        }
    }
    return NCQ_ERR_INVAL;
}

const char *ncq_zone_cond_name(NcqZoneCond c)
{
    switch (c) {
    case NCQ_ZC_NOT_WP:
        return "not-write-pointer";
    case NCQ_ZC_EMPTY:
        return "empty";
    case NCQ_ZC_IMP_OPEN:
        return "implicitly-open";
    case NCQ_ZC_EXP_OPEN:
        return "explicitly-open";
    case NCQ_ZC_CLOSED:
        return "closed";
    case NCQ_ZC_READ_ONLY:
        return "read-only";
    case NCQ_ZC_FULL:
        return "full";
    case NCQ_ZC_OFFLINE:
        return "offline";
    }
    return "?";
}

uint32_t ncq_model_zone_count(const NcqModel *m)
{
    return m->zbc.nz;
}

int ncq_model_zone_info(const NcqModel *m, uint32_t z, NcqZoneInfo *out)
{
    uint8_t c;

    if (z >= m->zbc.nz) {
        return NCQ_ERR_INVAL;
    }
    c = m->zbc.cond[z];
    out->type = is_conv(m, z) ? NCQ_ZONE_TYPE_CONV : NCQ_ZONE_TYPE_SWR;
    out->cond = c;
    out->start = zstart(m, z);
    out->len = zs(m);
    out->wp = c == NCQ_ZC_NOT_WP || c == NCQ_ZC_OFFLINE ||
              c == NCQ_ZC_READ_ONLY ? NCQ_WP_INVALID : m->zbc.wp[z];
    return 0;
}

static void put_le(uint8_t *p, uint64_t v, unsigned width)
{
    unsigned i;

    for (i = 0; i < width; i++) {
        p[i] = v >> (8 * i);
    }
}

/* Does zone @z match reporting option @ro (its low 6 bits)? */
static bool report_match(const NcqModel *m, uint32_t z, uint8_t ro)
{
    uint8_t c = m->zbc.cond[z];

    switch (ro) {
    case NCQ_ZRO_ALL:
        return true;
    case NCQ_ZRO_RESET_REC:
    case NCQ_ZRO_NONSEQ:
        return false;           /* the model never sets these bits */
    case NCQ_ZRO_NOT_WP:
        return c == NCQ_ZC_NOT_WP;
    default:
        return c == (ro == 0x05 ? NCQ_ZC_FULL : ro == 0x06 ?
                     NCQ_ZC_READ_ONLY : ro == 0x07 ? NCQ_ZC_OFFLINE : ro);
    }
}

static bool report_option_ok(uint8_t ro)
{
    return ro <= 0x07 || ro == NCQ_ZRO_RESET_REC || ro == NCQ_ZRO_NONSEQ ||
           ro == NCQ_ZRO_NOT_WP;
}

static void report_desc(const NcqModel *m, uint32_t z, uint8_t *d)
{
    NcqZoneInfo zi;

    ncq_model_zone_info(m, z, &zi);
    memset(d, 0, NCQ_ZONE_DESC_BYTES);
    d[0] = zi.type;
    d[1] = zi.cond << 4;        /* NON_SEQ and RESET (bits 1, 0): 0 */
    put_le(d + 8, zi.len, 8);
    put_le(d + 16, zi.start, 8);
    put_le(d + 24, zi.wp, 8);
}

int ncq_model_report_zones(const NcqModel *m, uint64_t lba, uint8_t option,
                           uint8_t *buf, size_t len)
{
    uint8_t ro = option & 0x3f;
    bool partial = option & NCQ_ZRO_PARTIAL;
    uint64_t total = 0, put = 0, room;
    uint8_t types = 0;
    uint32_t z;

    if (!m->zbc.nz || (option & 0x40) || !report_option_ok(ro)) {
        return NCQ_ERR_ZONE_FIELD;
    }
    if (lba >= m->p.capacity) {
        return NCQ_ERR_ZONE_LBA;
    }
    memset(buf, 0, len);
    room = len >= NCQ_ZONE_DESC_BYTES ?
           (len - NCQ_ZONE_DESC_BYTES) / NCQ_ZONE_DESC_BYTES : 0;
    for (z = lba / zs(m); z < m->zbc.nz; z++) {
        if (!report_match(m, z, ro)) {
            continue;
        }
        total++;
        types |= is_conv(m, z) ? 1 : 2;
        if (put < room) {
            report_desc(m, z, buf + NCQ_ZONE_DESC_BYTES * (1 + put++));
        }
    }
    if (len >= NCQ_ZONE_DESC_BYTES) {
        /* every zone has the same length: SAME 1 (one type) or 3 */
        put_le(buf, NCQ_ZONE_DESC_BYTES * (partial ? put : total), 4);
        buf[4] = !types ? 0 : types == 3 ? 3 : 1;
        put_le(buf + 8, m->p.capacity - 1, 8);
    }
    return 0;
}

int ncq_model_zone_action(NcqModel *m, NcqZoneAction action, uint64_t lba,
                          bool all)
{
    uint32_t changed;

    if (!m->zbc.nz) {
        return NCQ_ERR_INVAL;
    }
    return zbc_action(m, action, lba, all, &changed);
}

int ncq_model_zone_set_cond(NcqModel *m, uint32_t z, NcqZoneCond c)
{
    if (z >= m->zbc.nz || is_conv(m, z) ||
        (c != NCQ_ZC_READ_ONLY && c != NCQ_ZC_OFFLINE)) {
        return NCQ_ERR_INVAL;
    }
    open_remove(&m->zbc, z);
    m->zbc.cond[z] = c;
    return 0;
}
