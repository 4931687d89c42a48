/*
 * ncq-model: the host-managed zones' state as text, kept across runs
 * (the device's zone-state file, docs/smr.md "Persistence across
 * restarts").
 *
 * What a drive keeps on its media is each zone's write pointer and its
 * condition; what it does not keep is which zones are open (open-zone
 * resources are firmware state): after a power-on an open zone is closed,
 * or empty when its pointer is at its start.  The text is
 *
 *   # ncq-disk zone state v1 model=NAME zones=N zone_sectors=M conventional=C
 *   # ...comment lines, blank lines...
 *   ZONE CONDITION WRITE-POINTER
 *
 * one line per sequential zone that is not empty, in increasing zone
 * order: the zone's index, its condition as ncq_zone_cond_name() names
 * it, and its write pointer (an absolute LBA, as REPORT ZONES gives it;
 * "-" for read-only and offline zones, which have none).  Zones not
 * listed are empty.  A bad text is refused whole, with the line and the
 * problem, and changes nothing.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"

#define ZSTATE_MAGIC   "# ncq-disk zone state v"
#define ZSTATE_VERSION 1
#define ZSTATE_LINE    256      /* longest line read */

static uint64_t zstart(const NcqModel *m, uint32_t z)
{
    return (uint64_t)z * m->p.zone_sectors;
}

char *ncq_model_zone_state_format(const NcqModel *m)
{
    const NcqZbc *b = &m->zbc;
    size_t cap, len;
    char *out;
    uint32_t z;

    if (!b->nz) {
        return NULL;
    }
    cap = 512 + (size_t)b->nz * 48;
    out = malloc(cap);
    if (!out) {
        return NULL;
    }
    len = snprintf(out, cap, ZSTATE_MAGIC "%d model=%s zones=%u "
                   "zone_sectors=%llu conventional=%u\n"
                   "# zone condition write-pointer (LBA; - for read-only "
                   "and offline); zones not listed are empty\n",
                   ZSTATE_VERSION, m->p.name, b->nz,
                   (unsigned long long)m->p.zone_sectors, b->nconv);
    for (z = b->nconv; z < b->nz; z++) {
        uint8_t c = b->cond[z];

        if (c == NCQ_ZC_EMPTY) {
            continue;
        }
        if (c == NCQ_ZC_READ_ONLY || c == NCQ_ZC_OFFLINE) {
            len += snprintf(out + len, cap - len, "%u %s -\n", z,
                            ncq_zone_cond_name(c));
        } else {
            len += snprintf(out + len, cap - len, "%u %s %llu\n", z,
                            ncq_zone_cond_name(c),
                            (unsigned long long)b->wp[z]);
        }
    }
    return out;
}

/* ---- parsing ---- */

typedef struct ZsParse {
    const NcqModel *m;
    char *err;
    size_t errlen;
    unsigned line;
} ZsParse;

static int zs_fail(ZsParse *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int zs_fail(ZsParse *ps, const char *fmt, ...)
{
    char msg[384];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "line %u: %s", ps->line, msg);
    return NCQ_ERR_PARSE;
}

/* The decimal digits at @s (at least one) into *@out; past them, or NULL */
static const char *zs_digits(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p;

    for (p = s; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
            return NULL;        /* too large */
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return p == s ? NULL : p;
}

/* A whole decimal number, nothing after it */
static bool zs_u64(const char *s, uint64_t *out)
{
    const char *end = zs_digits(s, out);

    return end && *end == '\0';
}

/* A geometry field of the header (zones, zone_sectors, conventional) */
static int zs_geometry(ZsParse *ps, const char *key, uint64_t v, bool *have)
{
    const NcqModel *m = ps->m;
    static const char fix[] = "; the file is another drive's: give this "
        "drive a new zone-state file (or remove this one to start with "
        "every zone empty)";

    if (!strcmp(key, "zones")) {
        have[1] = true;
        if (v != m->zbc.nz) {
            return zs_fail(ps, "written for %llu zones, but this drive has "
                           "%u%s", (unsigned long long)v, m->zbc.nz, fix);
        }
    } else if (!strcmp(key, "zone_sectors")) {
        have[2] = true;
        if (v != m->p.zone_sectors) {
            return zs_fail(ps, "written for zones of %llu sectors, but this "
                           "drive's have %llu%s", (unsigned long long)v,
                           (unsigned long long)m->p.zone_sectors, fix);
        }
    } else {
        have[3] = true;
        if (v != m->zbc.nconv) {
            return zs_fail(ps, "written for %llu conventional zones, but "
                           "this drive has %u%s", (unsigned long long)v,
                           m->zbc.nconv, fix);
        }
    }
    return 0;
}

/* The header's key=value fields against this model */
static int zs_header(ZsParse *ps, char *line)
{
    const NcqModel *m = ps->m;
    char *save = NULL, *tok;
    bool have[4] = { false };
    uint64_t v, ver;
    const char *end;

    if (strncmp(line, ZSTATE_MAGIC, strlen(ZSTATE_MAGIC))) {
        return zs_fail(ps, "not an ncq-disk zone state (it starts with "
                       "'" ZSTATE_MAGIC "1 ...'); give the path of one, "
                       "or of a file that does not exist yet");
    }
    end = zs_digits(line + strlen(ZSTATE_MAGIC), &ver);
    if (!end || ver != ZSTATE_VERSION || (*end != ' ' && *end != '\0')) {
        return zs_fail(ps, "zone state version '%.*s' is not one this "
                       "QEMU reads (v%d); use a file this version wrote",
                       (int)strcspn(line + strlen(ZSTATE_MAGIC), " "),
                       line + strlen(ZSTATE_MAGIC), ZSTATE_VERSION);
    }
    for (tok = strtok_r((char *)end, " \t", &save); tok;
         tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(tok, '=');

        if (!eq) {
            return zs_fail(ps, "header field '%s' is not key=value", tok);
        }
        *eq++ = '\0';
        if (!strcmp(tok, "model")) {
            if (strcmp(eq, m->p.name)) {
                return zs_fail(ps, "written for model %s, but this drive "
                               "is %s; the file is another drive's: give "
                               "this drive a new zone-state file (or "
                               "remove this one to start with every zone "
                               "empty)", eq, m->p.name);
            }
            have[0] = true;
            continue;
        }
        if (strcmp(tok, "zones") && strcmp(tok, "zone_sectors") &&
            strcmp(tok, "conventional")) {
            return zs_fail(ps, "unknown header field '%s' (model, zones, "
                           "zone_sectors, conventional)", tok);
        }
        if (!zs_u64(eq, &v)) {
            return zs_fail(ps, "header field %s=%s is not a number", tok,
                           eq);
        }
        if (zs_geometry(ps, tok, v, have) < 0) {
            return NCQ_ERR_PARSE;
        }
    }
    if (!have[0] || !have[1] || !have[2] || !have[3]) {
        return zs_fail(ps, "the header lacks %s; it needs model=, zones=, "
                       "zone_sectors= and conventional=",
                       !have[0] ? "model=" : !have[1] ? "zones=" :
                       !have[2] ? "zone_sectors=" : "conventional=");
    }
    return 0;
}

static int zs_cond(const char *s)
{
    static const NcqZoneCond conds[] = {
        NCQ_ZC_EMPTY, NCQ_ZC_IMP_OPEN, NCQ_ZC_EXP_OPEN, NCQ_ZC_CLOSED,
        NCQ_ZC_READ_ONLY, NCQ_ZC_FULL, NCQ_ZC_OFFLINE,
    };
    size_t i;

    for (i = 0; i < sizeof(conds) / sizeof(conds[0]); i++) {
        if (!strcmp(s, ncq_zone_cond_name(conds[i]))) {
            return conds[i];
        }
    }
    return -1;
}

/*
 * Zone @z's write pointer @text for condition @c (named @name) into *@w:
 * inside the zone, and where the condition has it.
 */
static int zs_pointer(ZsParse *ps, uint32_t z, int c, const char *name,
                      const char *text, uint64_t *w)
{
    uint64_t s = zstart(ps->m, z), e = s + ps->m->p.zone_sectors;

    if (c == NCQ_ZC_READ_ONLY || c == NCQ_ZC_OFFLINE) {
        if (strcmp(text, "-")) {
            return zs_fail(ps, "zone %u is %s: it has no write pointer; "
                           "write '-'", z, name);
        }
        *w = s;
        return 0;
    }
    if (!zs_u64(text, w)) {
        return zs_fail(ps, "zone %u: write pointer '%s' is not an LBA", z,
                       text);
    }
    if (*w < s || *w > e) {
        return zs_fail(ps, "write pointer %llu outside zone %u (LBAs "
                       "%llu-%llu; a full zone's is %llu)",
                       (unsigned long long)*w, z, (unsigned long long)s,
                       (unsigned long long)(e - 1), (unsigned long long)e);
    }
    if (c == NCQ_ZC_FULL && *w != e) {
        return zs_fail(ps, "zone %u is full, but its write pointer %llu is "
                       "not the zone's end %llu", z, (unsigned long long)*w,
                       (unsigned long long)e);
    }
    if (c == NCQ_ZC_EMPTY && *w != s) {
        return zs_fail(ps, "zone %u is empty, but its write pointer %llu is "
                       "not the zone's start %llu", z,
                       (unsigned long long)*w, (unsigned long long)s);
    }
    if (c == NCQ_ZC_CLOSED && *w == s) {
        return zs_fail(ps, "zone %u is closed with its write pointer at its "
                       "start %llu: a closed zone holds data; write empty",
                       z, (unsigned long long)s);
    }
    if (c != NCQ_ZC_FULL && *w == e) {
        return zs_fail(ps, "zone %u is %s with its write pointer at its end "
                       "%llu: write full", z, name, (unsigned long long)e);
    }
    return 0;
}

/*
 * One zone line into @cond/@wp; *@next is the lowest zone index the
 * next line may name.
 */
static int zs_zone(ZsParse *ps, char *line, uint8_t *cond, uint64_t *wp,
                   uint32_t *next)
{
    const NcqModel *m = ps->m;
    uint64_t z, w = 0, s;
    char *save = NULL, *f[4] = { NULL }, *tok;
    int n = 0, c;

    tok = strtok_r(line, " \t", &save);
    while (tok && n < 4) {
        f[n++] = tok;
        tok = strtok_r(NULL, " \t", &save);
    }
    if (n != 3) {
        return zs_fail(ps, "a zone line is ZONE CONDITION WRITE-POINTER "
                       "(e.g. '5 closed 2621952')");
    }
    if (!zs_u64(f[0], &z)) {
        return zs_fail(ps, "zone '%s' is not a zone index", f[0]);
    }
    if (z >= m->zbc.nz) {
        return zs_fail(ps, "zone %llu beyond the drive's %u zones (0-%u)",
                       (unsigned long long)z, m->zbc.nz, m->zbc.nz - 1);
    }
    if (z < m->zbc.nconv) {
        return zs_fail(ps, "zone %llu is conventional (zones 0-%u are); "
                       "only sequential zones are listed",
                       (unsigned long long)z, m->zbc.nconv - 1);
    }
    if (z < *next) {
        return zs_fail(ps, "zone %llu listed twice or out of order; list "
                       "each zone once, in increasing order",
                       (unsigned long long)z);
    }
    c = zs_cond(f[1]);
    if (c < 0) {
        return zs_fail(ps, "zone %llu: unknown condition '%s' (empty, "
                       "implicitly-open, explicitly-open, closed, full, "
                       "read-only, offline)", (unsigned long long)z, f[1]);
    }
    if (zs_pointer(ps, (uint32_t)z, c, f[1], f[2], &w) < 0) {
        return NCQ_ERR_PARSE;
    }
    s = zstart(m, z);
    /* what a power-on leaves of an open zone */
    if (c == NCQ_ZC_IMP_OPEN || c == NCQ_ZC_EXP_OPEN) {
        c = w == s ? NCQ_ZC_EMPTY : NCQ_ZC_CLOSED;
    }
    cond[z] = c;
    wp[z] = w;
    *next = z + 1;
    return 0;
}

/* The next line from *@p into @buf; false at the end of the text */
static bool zs_line(const char **p, const char *end, char *buf,
                    size_t size, bool *too_long)
{
    const char *nl;
    size_t n;

    if (*p >= end) {
        return false;
    }
    nl = memchr(*p, '\n', end - *p);
    n = (nl ? nl : end) - *p;
    *too_long = n >= size;
    n = n >= size ? size - 1 : n;
    memcpy(buf, *p, n);
    buf[n] = '\0';
    if (n && buf[n - 1] == '\r') {
        buf[n - 1] = '\0';
    }
    *p = nl ? nl + 1 : end;
    return true;
}

int ncq_model_zone_state_parse(NcqModel *m, const char *text, size_t len,
                               char *err, size_t errlen)
{
    ZsParse ps = { .m = m, .err = err, .errlen = errlen };
    NcqZbc *b = &m->zbc;
    const char *p = text, *end = text + len;
    char line[ZSTATE_LINE];
    uint8_t *cond;
    uint64_t *wp;
    uint32_t z, next = 0;
    bool too_long;
    int rc = 0;

    if (!b->nz) {
        snprintf(err, errlen, "model %s has no zones", m->p.name);
        return NCQ_ERR_INVAL;
    }
    if (memchr(text, '\0', len)) {
        ps.line = 1;
        return zs_fail(&ps, "the file holds NUL bytes: not an ncq-disk "
                       "zone state");
    }
    cond = malloc(b->nz);
    wp = malloc(sizeof(uint64_t) * b->nz);
    if (!cond || !wp) {
        free(cond);
        free(wp);
        snprintf(err, errlen, "out of memory for %u zones", b->nz);
        return NCQ_ERR_NOMEM;
    }
    for (z = 0; z < b->nz; z++) {
        cond[z] = ncq_zbc_fresh_cond(m, z);
        wp[z] = zstart(m, z);
    }
    while (rc == 0 && zs_line(&p, end, line, sizeof(line), &too_long)) {
        ps.line++;
        if (too_long) {
            rc = zs_fail(&ps, "line longer than %d characters",
                         ZSTATE_LINE - 1);
        } else if (ps.line == 1) {
            rc = zs_header(&ps, line);
        } else if (line[strspn(line, " \t")] != '\0' &&
                   line[strspn(line, " \t")] != '#') {
            rc = zs_zone(&ps, line, cond, wp, &next);
        }
    }
    if (rc == 0 && ps.line == 0) {
        ps.line = 1;
        rc = zs_fail(&ps, "the file is empty: not an ncq-disk zone state; "
                     "remove it to start with every zone empty");
    }
    if (rc == 0) {
        memcpy(b->cond, cond, b->nz);
        memcpy(b->wp, wp, sizeof(uint64_t) * b->nz);
        b->nopen = 0;           /* a power-on: no zone is open */
    }
    free(cond);
    free(wp);
    return rc;
}
