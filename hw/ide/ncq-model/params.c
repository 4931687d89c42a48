/*
 * ncq-model: parameter files.
 *
 * Format (see docs/model.md):
 *   # comment
 *   [section]
 *   key = value      # source of the value
 * Numbers are decimal, with an optional fraction; no floating point is
 * used, so parsing does not depend on the C locale.  "zone" and "point"
 * may repeat; every other key may appear once.
 *
 * The keys, their defaults and their ranges are the rows of the parameter
 * table (include/hw/ide/ncq-params.h, expanded in params-table.c); what
 * is here besides is the syntax, zone and point lines, and the checks
 * that involve several keys.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "ncq-int.h"

/* What parsing a file has learnt so far. */
typedef struct NcqParse {
    NcqParams *p;
    const char *fname;
    int lineno;
    bool seen[NCQ_PARAM_MAX_ROWS];
    char section[32];
    int explicit_zones;         /* "zone" lines */
    int analytic;               /* zones, outer_spt and inner_spt lines */
    /* per zone: ZONE_SPARES (its line gives spares=), ZONE_PER_CYL */
    uint8_t zone_flags[NCQ_MAX_ZONES];
} NcqParse;

#define ZONE_SPARES  1
#define ZONE_PER_CYL 2      /* spares=N/cyl or N/<R>cyl */

/* first_cylinder cylinders spt and up to 5 options */
#define NCQ_ZONE_WORDS 8

/* The parameter table's rows (params-table.c) */
#define ncq_rows ncq_param_table
#define NCQ_NROWS ncq_param_table_len

/* "123.456" as value * 10^9 (ncq_parse_decimal); 0 or -1. */
static int ncq_param_fixed(const char *s, int64_t *out)
{
    uint64_t v;

    if (ncq_parse_decimal(s, strlen(s), 9, &v) < 0 || v > INT64_MAX) {
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* A whole number up to @max (ncq_parse_uint); 0 or -1. */
static int ncq_param_uint(const char *s, uint64_t max, uint64_t *out)
{
    return ncq_parse_uint(s, strlen(s), max, out) < 0 ? -1 : 0;
}

static char *ncq_trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t') {
        s++;
    }
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) {
        *--e = 0;
    }
    return s;
}

/* Split @s on blanks into at most @max words. */
static int ncq_words(char *s, char **w, int max)
{
    int n = 0;

    for (;;) {
        while (*s == ' ' || *s == '\t') {
            s++;
        }
        if (!*s) {
            return n;
        }
        if (n == max) {
            return max + 1;
        }
        w[n++] = s;
        while (*s && *s != ' ' && *s != '\t') {
            s++;
        }
        if (*s) {
            *s++ = 0;
        }
    }
}

/* Keys whose value is a word or a string. */
static int ncq_set_word(NcqParams *p, const NcqParamRow *k, const char *val,
                        const char **why)
{
    char *base = (char *)p + k->off;

    switch (k->type) {
    case NCQ_KT_STR:
        if (strlen(val) >= k->len) {
            *why = "string too long";
            return -1;
        }
        strcpy(base, val);
        return 0;
    case NCQ_KT_KIND:
        if (!strcmp(val, "hdd")) {
            p->kind = NCQ_KIND_HDD;
        } else if (!strcmp(val, "ssd")) {
            p->kind = NCQ_KIND_SSD;
        } else {
            *why = "expected hdd or ssd";
            return -1;
        }
        return 0;
    case NCQ_KT_POLICY:
        if (ncq_policy_from_name(val, &p->policy) < 0) {
            *why = "expected " NCQ_POLICY_NAMES;
            return -1;
        }
        return 0;
    case NCQ_KT_SEEKTYPE:
        if (!strcmp(val, "twopart")) {
            p->seek_type = NCQ_SEEK_TWOPART;
        } else if (!strcmp(val, "table")) {
            p->seek_type = NCQ_SEEK_TABLE;
        } else {
            *why = "expected twopart or table";
            return -1;
        }
        return 0;
    default:    /* NCQ_KT_BOOL */
        if (!strcmp(val, "on") || !strcmp(val, "yes") ||
            !strcmp(val, "true") || !strcmp(val, "1")) {
            *(bool *)base = true;
        } else if (!strcmp(val, "off") || !strcmp(val, "no") ||
                   !strcmp(val, "false") || !strcmp(val, "0")) {
            *(bool *)base = false;
        } else {
            *why = "expected on or off";
            return -1;
        }
        return 0;
    }
}

/* "N/track", "N/cyl", "N/12cyl" or "N/zone": a zone's sparing. */
static int ncq_zone_spares(NcqParams *p, NcqZone *z, const char *v,
                           const char **why)
{
    const char *slash = strchr(v, '/');
    uint64_t n, r = 1;
    char num[24];

    *why = "expected spares=N/track, N/cyl, N/<R>cyl or N/zone";
    if (!slash || (size_t)(slash - v) >= sizeof(num)) {
        return -1;
    }
    memcpy(num, v, slash - v);
    num[slash - v] = 0;
    if (ncq_param_uint(num, UINT32_MAX, &n) < 0) {
        return -1;
    }
    slash++;
    z->spares = n;
    if (!strcmp(slash, "track")) {
        z->spare_tracks = 1;
        return 0;
    }
    if (!strcmp(slash, "zone")) {
        z->spare_tracks = 0;
        return 0;
    }
    if (strlen(slash) > 3 && !strcmp(slash + strlen(slash) - 3, "cyl")) {
        snprintf(num, sizeof(num), "%.*s", (int)strlen(slash) - 3, slash);
        if (ncq_param_uint(num, 10000000, &r) < 0 || r == 0) {
            return -1;
        }
    } else if (strcmp(slash, "cyl")) {
        return -1;
    }
    /* p->heads may come later in the file: multiplied in at the end */
    z->spare_tracks = r;
    return 1;
}

/* A skew or offset in sectors of the zone's tracks: ppb of a revolution. */
static int ncq_zone_angle(const NcqZone *z, const char *v, uint32_t *ppb,
                          const char **why)
{
    int64_t fx;

    if (ncq_param_fixed(v, &fx) < 0 || fx / 1000000000 >= z->spt) {
        *why = "skews and first= are sectors below the zone's spt";
        return -1;
    }
    *ppb = (uint32_t)(fx / z->spt);
    return 0;
}

/*
 * One "name=value" option of a zone line.  Returns 1 for spares per
 * cylinder (the count of tracks is known once heads is), 0 or -1.
 */
static int ncq_zone_option(NcqParams *p, NcqZone *z, char *w,
                           const char **why)
{
    char *eq = strchr(w, '=');
    uint64_t u;

    if (!eq) {
        *why = "expected name=value after zone = first_cylinder "
               "cylinders spt";
        return -1;
    }
    *eq++ = 0;
    if (!strcmp(w, "spares")) {
        return ncq_zone_spares(p, z, eq, why);
    }
    if (!strcmp(w, "front")) {
        *why = "expected front=sectors";
        if (ncq_param_uint(eq, UINT32_MAX, &u) < 0) {
            return -1;
        }
        z->front = u;
        return 0;
    }
    z->own_skew = true;
    if (!strcmp(w, "track_skew")) {
        return ncq_zone_angle(z, eq, &z->track_skew_ppb, why);
    }
    if (!strcmp(w, "cyl_skew")) {
        return ncq_zone_angle(z, eq, &z->cyl_skew_ppb, why);
    }
    if (!strcmp(w, "first")) {
        return ncq_zone_angle(z, eq, &z->first_ppb, why);
    }
    *why = "zone options are track_skew=, cyl_skew=, first=, front= and "
           "spares=";
    return -1;
}

/*
 * "zone = first_cylinder cylinders spt [option=value ...]": one more
 * explicit zone; options in ncq_zone_option.
 */
static int ncq_add_zone(NcqParse *ps, char *val, const char **why)
{
    NcqParams *p = ps->p;
    char *w[NCQ_ZONE_WORDS + 1];
    uint64_t v[3];
    NcqZone *z;
    int i, n = ncq_words(val, w, NCQ_ZONE_WORDS), rc;

    if (n < 3 || n > NCQ_ZONE_WORDS) {
        *why = "expected: zone = first_cylinder cylinders spt "
               "[option=value ...]";
        return -1;
    }
    for (i = 0; i < 3; i++) {
        if (ncq_param_uint(w[i], UINT32_MAX, &v[i]) < 0) {
            *why = "expected unsigned integers";
            return -1;
        }
    }
    if (p->nzones >= NCQ_MAX_ZONES) {
        *why = "too many zones";
        return -1;
    }
    z = &p->zones[p->nzones];
    z->cyl_start = v[0];
    z->cyl_count = v[1];
    z->spt = v[2];
    for (i = 3; i < n; i++) {
        rc = ncq_zone_option(p, z, w[i], why);
        if (rc < 0) {
            return -1;
        }
        if (!strncmp(w[i], "spares", 6)) {
            ps->zone_flags[p->nzones] = ZONE_SPARES |
                                        (rc ? ZONE_PER_CYL : 0);
        }
    }
    p->nzones++;
    return 0;
}

/* "point = distance milliseconds": one more point of the seek table. */
static int ncq_add_point(NcqParams *p, char *val, const char **why)
{
    char *w[3];
    int64_t fx;
    uint64_t u;

    if (ncq_words(val, w, 2) != 2 ||
        ncq_param_uint(w[0], UINT32_MAX, &u) < 0 ||
        ncq_param_fixed(w[1], &fx) < 0) {
        *why = "expected: point = distance milliseconds";
        return -1;
    }
    if (p->seek_npoints >= NCQ_MAX_SEEK_POINTS) {
        *why = "too many seek points";
        return -1;
    }
    if (p->seek_npoints &&
        p->seek_points[p->seek_npoints - 1].dist >= u) {
        *why = "distances must increase";
        return -1;
    }
    p->seek_points[p->seek_npoints].dist = u;
    p->seek_points[p->seek_npoints].ns = fx / 1000;
    p->seek_npoints++;
    return 0;
}

/* Keys with a decimal value and a unit, stored scaled to the field's. */
static int ncq_set_scaled(NcqParams *p, const NcqParamRow *k, const char *val,
                          const char **why)
{
    char *base = (char *)p + k->off;
    int64_t fx;

    if (ncq_param_fixed(val, &fx) < 0) {
        *why = "expected a non-negative decimal number";
        return -1;
    }
    switch (k->type) {
    case NCQ_KT_MS:
        *(int64_t *)base = fx / 1000;
        return 0;
    case NCQ_KT_US:
        *(int64_t *)base = fx / 1000000;
        return 0;
    case NCQ_KT_FRAC:
        if (fx >= 1000000000) {
            *why = "fraction of a revolution must be below 1";
            return -1;
        }
        *(uint32_t *)base = (uint32_t)fx;
        return 0;
    case NCQ_KT_MILLI:
        if (fx / 1000000 > UINT32_MAX) {
            *why = "value too large";
            return -1;
        }
        *(uint32_t *)base = (uint32_t)(fx / 1000000);
        return 0;
    case NCQ_KT_MBPS:
        *(uint64_t *)base = (uint64_t)(fx / 1000);
        return 0;
    case NCQ_KT_KIB_SECT:
        /* whole sectors: DiskSim's segments may be an odd count of them */
        if (fx / 1000000000 > UINT32_MAX / 2) {
            *why = "value too large";
            return -1;
        }
        *(uint32_t *)base = (uint32_t)(fx / 500000000);
        return 0;
    case NCQ_KT_KIB_BYTES:
        if (fx / 1000000000 > UINT32_MAX / 1024) {
            *why = "value too large";
            return -1;
        }
        *(uint32_t *)base = (uint32_t)(fx / 1000000000 * 1024);
        return 0;
    default:
        *why = "internal: bad key type";
        return -1;
    }
}

/* A code as the standard writes it, e.g. IDENTIFY word 81's 0x001d */
static int ncq_set_hex16(const char *val, uint32_t *out, const char **why)
{
    static const char digits[] = "0123456789abcdef";
    uint32_t v = 0;
    const char *c;

    if (val[0] != '0' || (val[1] != 'x' && val[1] != 'X') || !val[2]) {
        *why = "expected a hexadecimal code such as 0x001d";
        return -1;
    }
    for (c = val + 2; *c; c++) {
        const char *d = strchr(digits, *c >= 'A' && *c <= 'F' ?
                               *c - 'A' + 'a' : *c);

        if (!d || !*d) {
            *why = "expected a hexadecimal code such as 0x001d";
            return -1;
        }
        v = v * 16 + (uint32_t)(d - digits);
        if (v > 0xffff) {
            *why = "expected a 16-bit code, 0x0000 to 0xffff";
            return -1;
        }
    }
    *out = v;
    return 0;
}

static int ncq_set_key(NcqParse *ps, const NcqParamRow *k, char *val,
                       const char **why)
{
    NcqParams *p = ps->p;
    char *base = (char *)p + k->off;
    uint64_t u;

    switch (k->type) {
    case NCQ_KT_STR:
    case NCQ_KT_KIND:
    case NCQ_KT_POLICY:
    case NCQ_KT_SEEKTYPE:
    case NCQ_KT_BOOL:
        return ncq_set_word(p, k, val, why);
    case NCQ_KT_U32:
        if (ncq_param_uint(val, UINT32_MAX, &u) < 0) {
            *why = "expected an unsigned 32-bit integer";
            return -1;
        }
        *(uint32_t *)base = (uint32_t)u;
        return 0;
    case NCQ_KT_U64:
        if (ncq_param_uint(val, UINT64_MAX, &u) < 0) {
            *why = "expected an unsigned integer";
            return -1;
        }
        *(uint64_t *)base = u;
        return 0;
    case NCQ_KT_HEX16:
        return ncq_set_hex16(val, (uint32_t *)base, why);
    case NCQ_KT_ZONE:
        return ncq_add_zone(ps, val, why);
    case NCQ_KT_POINT:
        return ncq_add_point(p, val, why);
    default:
        return ncq_set_scaled(p, k, val, why);
    }
}

/*
 * Each row's default, as a file would write it; sata_gen, buffer_kib and
 * the spin times are settled after the file (ncq_finish_link, _power).
 */
void ncq_params_defaults(NcqParams *p)
{
    NcqParse ps = { .p = p, .fname = "default" };
    const char *why = NULL;
    char val[32];
    size_t i;

    memset(p, 0, sizeof(*p));
    for (i = 0; i < NCQ_NROWS; i++) {
        if (ncq_rows[i].key && ncq_rows[i].def[0]) {
            snprintf(val, sizeof(val), "%s", ncq_rows[i].def);
            if (ncq_set_key(&ps, &ncq_rows[i], val, &why) < 0) {
                abort();    /* the table's own default: test-params */
            }
        }
    }
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); \
                      return NCQ_ERR_PARSE; } while (0)

/* A row's stored value, as a whole number; false for arrays. */
static bool ncq_row_value(const NcqParams *p, const NcqParamRow *k,
                          bool *neg, uint64_t *v)
{
    const char *base = (const char *)p + k->off;

    *neg = false;
    switch (k->type) {
    case NCQ_KT_STR:
    case NCQ_KT_ZONE:
    case NCQ_KT_POINT:
        return false;
    case NCQ_KT_BOOL:
        *v = *(const bool *)base;
        return true;
    case NCQ_KT_MS:
    case NCQ_KT_US:
        *neg = *(const int64_t *)base < 0;
        *v = *neg ? 0 : (uint64_t)*(const int64_t *)base;
        return true;
    default:
        if (k->len == 8) {
            *v = *(const uint64_t *)base;
        } else {
            *v = *(const uint32_t *)base;   /* uint32_t and the enums */
        }
        return true;
    }
}

/*
 * Every row's range (ncq-params.h), for the kinds of drive it applies
 * to: one line naming the key, its range in the file's units and what
 * it is.
 */
static int ncq_validate_rows(const NcqParams *p, char *err, size_t errlen)
{
    unsigned skip = p->kind == NCQ_KIND_SSD ? NCQ_PF_HDD : NCQ_PF_SSD;
    char lo[48], hi[48];
    uint64_t v;
    bool neg;
    size_t i;

    for (i = 0; i < NCQ_NROWS; i++) {
        const NcqParamRow *k = &ncq_rows[i];

        if (!k->key || !k->field || (k->flags & skip) ||
            !ncq_row_value(p, k, &neg, &v) ||
            (!neg && v >= k->min && v <= k->max)) {
            continue;
        }
        ncq_param_format_raw(k, k->min, lo, sizeof(lo));
        if (k->max == NCQ_PB_MAX) {
            snprintf(err, errlen, "%s: %s must be %s or more%s%s (%s)",
                     p->name, k->key, lo, k->unit[0] ? " " : "", k->unit,
                     k->doc);
        } else {
            ncq_param_format_raw(k, k->max, hi, sizeof(hi));
            snprintf(err, errlen, "%s: %s must be %s..%s%s%s (%s)",
                     p->name, k->key, lo, hi, k->unit[0] ? " " : "",
                     k->unit, k->doc);
        }
        return NCQ_ERR_PARSE;
    }
    return 0;
}

/* Limits every kind of drive shares that are not one row's range. */
static int ncq_validate_common(const NcqParams *p, char *err, size_t errlen)
{
    if (!p->name[0] || !p->model[0]) {
        BAD("%s: name and model must be set", p->name);
    }
    return 0;
}

/* Seek points are far from overflow, as the rows' times are. */
static int ncq_validate_times(const NcqParams *p, char *err, size_t errlen)
{
    uint32_t i;

    for (i = 0; i < p->seek_npoints; i++) {
        if (p->seek_points[i].ns > 10000000000LL ||
            p->seek_points[i].dist > 10000000) {
            BAD("%s: seek points must be within 10 s and 10,000,000 "
                "cylinders", p->name);
        }
    }
    return 0;
}

uint64_t ncq_sata_link_bytes_per_s(uint32_t sata_gen)
{
    /* 1.5 Gb/s with 8b/10b coding carries 150 MB/s; each generation x2 */
    return sata_gen >= 1 && sata_gen <= NCQ_SATA_GEN_MAX ?
           150000000ULL << (sata_gen - 1) : 0;
}

/* What IDENTIFY says of the drive, and the link its bus rate needs. */
static int ncq_validate_identify(const NcqParams *p, char *err,
                                 size_t errlen)
{
    uint64_t link = ncq_sata_link_bytes_per_s(p->sata_gen);

    if (p->bus_bytes_per_s > link) {
        BAD("%s: bus_mb_s %llu.%03llu is above the SATA Gen%u link's "
            "%llu MB/s; lower bus_mb_s or raise sata_gen", p->name,
            (unsigned long long)(p->bus_bytes_per_s / 1000000),
            (unsigned long long)(p->bus_bytes_per_s / 1000 % 1000),
            p->sata_gen, (unsigned long long)(link / 1000000));
    }
    return 0;
}

static int ncq_validate_ssd(const NcqParams *p, char *err, size_t errlen)
{
    if (p->page_bytes < 512 || p->page_bytes % 512) {
        BAD("%s: ssd page_kib must be a multiple of 0.5", p->name);
    }
    if (p->channel_bytes_per_s < 1000000) {
        BAD("%s: ssd channel_mb_s must be at least 1", p->name);
    }
    if (p->write_buffer_bytes < p->page_bytes ||
        p->write_buffer_bytes / p->page_bytes > NCQ_SSD_CHUNKS - 2) {
        BAD("%s: ssd write buffer must hold 1..%d pages", p->name,
            NCQ_SSD_CHUNKS - 2);
    }
    return 0;
}

/* Zones follow each other from cylinder 0 and hold the capacity. */
static int ncq_validate_zones(const NcqParams *p, char *err, size_t errlen)
{
    uint64_t total = 0;
    uint32_t i;

    if (p->nzones < 1 || p->nzones > NCQ_MAX_ZONES) {
        BAD("%s: need 1..%d zones", p->name, NCQ_MAX_ZONES);
    }
    for (i = 0; i < p->nzones; i++) {
        const NcqZone *z = &p->zones[i];
        uint32_t expect = i ? p->zones[i - 1].cyl_start +
                          p->zones[i - 1].cyl_count : 0;

        if (z->cyl_count > 10000000 || expect > 10000000) {
            BAD("%s: at most 10,000,000 cylinders", p->name);
        }
        if (z->cyl_start != expect || z->cyl_count == 0) {
            BAD("%s: zone %u must start at cylinder %u and be non-empty",
                p->name, i, expect);
        }
        if (z->spt == 0 || z->spt > 100000 ||
            ncq_zone_lbas(p, z) == UINT64_MAX) {
            BAD("%s: zone %u sectors per track out of range (or its "
                "spares and front leave no sector)", p->name, i);
        }
        if (z->track_skew_ppb >= 1000000000 ||
            z->cyl_skew_ppb >= 1000000000 || z->first_ppb >= 1000000000) {
            BAD("%s: zone %u skews must be below one revolution", p->name,
                i);
        }
        total += ncq_zone_lbas(p, z);
    }
    if (total < p->capacity) {
        BAD("%s: layout holds %llu sectors, less than capacity %llu",
            p->name, (unsigned long long)total,
            (unsigned long long)p->capacity);
    }
    return 0;
}

static int ncq_validate_hdd(const NcqParams *p, char *err, size_t errlen)
{
    if (ncq_validate_zones(p, err, errlen) < 0) {
        return NCQ_ERR_PARSE;
    }
    if (p->seek_type == NCQ_SEEK_TABLE && p->seek_npoints < 2) {
        BAD("%s: seek table needs at least 2 points", p->name);
    }
    if (p->seek_type == NCQ_SEEK_TWOPART && p->seek_b_ns > 100000000) {
        BAD("%s: seek b_ms too large", p->name);
    }
    if (p->segment_sectors == 0 && p->cache_segments) {
        BAD("%s: segment_kib must be positive", p->name);
    }
    return 0;
}
/* Host-managed zones: whole zones of a power of two (docs/smr.md). */
static int ncq_validate_wzones(const NcqParams *p, char *err, size_t errlen)
{
    uint64_t zs = p->zone_sectors, nz;

    if (!zs) {
        if (p->zone_conv || p->zone_max_open) {
            BAD("%s: [zones] conventional or max_open without zone_sectors; "
                "set zone_sectors (e.g. 524288 for 256 MiB zones)", p->name);
        }
        return 0;
    }
    if (zs & (zs - 1)) {
        BAD("%s: zone_sectors %llu is not a power of two; use one, e.g. "
            "524288 (256 MiB)", p->name, (unsigned long long)zs);
    }
    if (p->capacity % zs) {
        BAD("%s: capacity %llu is not whole zones of %llu sectors; make it "
            "a multiple, e.g. %llu", p->name,
            (unsigned long long)p->capacity, (unsigned long long)zs,
            (unsigned long long)(p->capacity / zs * zs));
    }
    nz = p->capacity / zs;
    if (nz > (1u << 24)) {
        BAD("%s: %llu zones, more than the model's 16,777,216; use larger "
            "zones", p->name, (unsigned long long)nz);
    }
    if (p->zone_conv >= nz) {
        BAD("%s: %u conventional zones leave no sequential zone among the "
            "%llu the capacity holds; lower conventional", p->name,
            p->zone_conv, (unsigned long long)nz);
    }
    if (p->zone_max_open < 1 || p->zone_max_open > NCQ_ZONE_MAX_OPEN) {
        BAD("%s: max_open must be 1..%d (the open-zone limit a host-managed "
            "drive reports)", p->name, NCQ_ZONE_MAX_OPEN);
    }
    if (p->kind == NCQ_KIND_SSD) {
        BAD("%s: host-managed zones are modelled for hard disks only; "
            "remove [zones]", p->name);
    }
    return 0;
}

/* Drive-managed SMR's media cache (docs/smr.md). */
static int ncq_validate_mcache(const NcqParams *p, char *err, size_t errlen)
{
    if (!p->mc_sectors) {
        if (p->mc_map || p->mc_band_sectors || p->mc_lba) {
            BAD("%s: [media_cache] without sectors; set sectors (the "
                "cache's size, e.g. 52428800 for 25 GiB)", p->name);
        }
        return 0;
    }
    if (p->kind == NCQ_KIND_SSD || p->zone_sectors) {
        BAD("%s: a media cache is modelled for conventional hard disks "
            "only; remove [media_cache] or [zones]", p->name);
    }
    if (p->mc_sectors > UINT32_MAX || p->mc_sectors > p->capacity ||
        p->mc_lba > p->capacity - p->mc_sectors) {
        BAD("%s: media cache of %llu sectors at LBA %llu does not fit in "
            "the capacity (and at most 4294967295 sectors); lower sectors "
            "or lba", p->name, (unsigned long long)p->mc_sectors,
            (unsigned long long)p->mc_lba);
    }
    if (p->mc_map < 1 || p->mc_map > 16777216) {
        BAD("%s: media_cache map_extents must be 1..16777216", p->name);
    }
    if (p->mc_band_sectors < 8 || p->mc_band_sectors > 1048576) {
        BAD("%s: media_cache band_kib must be 4..524288 (a shingled band, "
            "e.g. 30720 for 30 MiB)", p->name);
    }
    if (p->mc_idle_ns < 0 || p->mc_clean_ns < 0 ||
        p->mc_idle_ns > NCQ_MAX_SPIN_NS || p->mc_clean_ns > NCQ_MAX_SPIN_NS) {
        BAD("%s: media_cache idle_ms and clean_ms must be within 0..60000",
            p->name);
    }
    return 0;
}

#undef BAD

int ncq_params_validate(const NcqParams *p, char *err, size_t errlen)
{
    if (ncq_validate_common(p, err, errlen) < 0 ||
        ncq_validate_rows(p, err, errlen) < 0 ||
        ncq_validate_identify(p, err, errlen) < 0 ||
        ncq_validate_times(p, err, errlen) < 0 ||
        ncq_validate_wzones(p, err, errlen) < 0 ||
        ncq_validate_mcache(p, err, errlen) < 0) {
        return NCQ_ERR_PARSE;
    }
    if (p->kind == NCQ_KIND_SSD) {
        if (p->cdl) {
            snprintf(err, errlen, "cdl: Command Duration Limits are "
                     "modelled for hard disks only; remove 'cdl = yes'");
            return NCQ_ERR_PARSE;
        }
        if (p->spinup_ns || p->spindown_ns) {
            snprintf(err, errlen, "%s: an SSD has no spindle; remove "
                     "spinup_ms and spindown_ms", p->name);
            return NCQ_ERR_PARSE;
        }
        return ncq_validate_ssd(p, err, errlen);
    }
    return ncq_validate_hdd(p, err, errlen);
}

/* Build nzones zones from outer/inner spt (stored in zones[0..1]). */
static void ncq_analytic_zones(NcqParams *p)
{
    uint32_t outer = p->zones[0].spt, inner = p->zones[1].spt;
    uint32_t n = p->nzones, i, per = p->cylinders / n, start = 0;

    for (i = 0; i < n; i++) {
        NcqZone *z = &p->zones[i];

        z->cyl_start = start;
        z->cyl_count = i + 1 == n ? p->cylinders - start : per;
        z->spt = n == 1 ? outer :
                 outer - (uint32_t)((uint64_t)(outer - inner) * i / (n - 1));
        start += z->cyl_count;
    }
}


static const NcqParamRow *ncq_find_key(const char *section, const char *key,
                                  size_t *index)
{
    size_t i;

    for (i = 0; i < NCQ_NROWS; i++) {
        if (ncq_rows[i].key && !strcmp(ncq_rows[i].section, section) &&
            !strcmp(ncq_rows[i].key, key)) {
            *index = i;
            return &ncq_rows[i];
        }
    }
    return NULL;
}

/* Zones come either from zone lines or from zones/outer_spt/inner_spt. */
static int ncq_count_zone_keys(NcqParse *ps, const NcqParamRow *k,
                               const char *key, char *err, size_t errlen)
{
    if (k->type == NCQ_KT_ZONE) {
        if (ps->analytic) {
            snprintf(err, errlen, "%s:%d: key '%s': cannot mix zone "
                     "lines with zones/outer_spt/inner_spt", ps->fname,
                     ps->lineno, key);
            return -1;
        }
        ps->explicit_zones++;
    }
    if (!strcmp(ps->section, "layout") &&
        (!strcmp(key, "zones") || !strcmp(key, "outer_spt") ||
         !strcmp(key, "inner_spt"))) {
        if (ps->explicit_zones) {
            snprintf(err, errlen, "%s:%d: key '%s': cannot mix with "
                     "zone lines", ps->fname, ps->lineno, key);
            return -1;
        }
        ps->analytic++;
    }
    return 0;
}

/* "key = value" (comment and blanks removed) */
static int ncq_parse_assignment(NcqParse *ps, char *l, char *err,
                                size_t errlen)
{
    char *eq = strchr(l, '='), *key, *val;
    const char *why = NULL;
    const NcqParamRow *k;
    size_t i = 0;

    if (!eq) {
        snprintf(err, errlen, "%s:%d: expected key = value", ps->fname,
                 ps->lineno);
        return -1;
    }
    *eq = 0;
    key = ncq_trim(l);
    val = ncq_trim(eq + 1);
    k = ncq_find_key(ps->section, key, &i);
    if (!k) {
        snprintf(err, errlen, "%s:%d: key '%s': unknown key in "
                 "section [%s]", ps->fname, ps->lineno, key, ps->section);
        return -1;
    }
    if (ps->seen[i] && k->type != NCQ_KT_ZONE && k->type != NCQ_KT_POINT) {
        snprintf(err, errlen, "%s:%d: key '%s': duplicate", ps->fname,
                 ps->lineno, key);
        return -1;
    }
    if (!*val) {
        snprintf(err, errlen, "%s:%d: key '%s': missing value", ps->fname,
                 ps->lineno, key);
        return -1;
    }
    if (ncq_count_zone_keys(ps, k, key, err, errlen) < 0) {
        return -1;
    }
    if (ncq_set_key(ps, k, val, &why) < 0) {
        snprintf(err, errlen, "%s:%d: key '%s': %s", ps->fname, ps->lineno,
                 key, why);
        return -1;
    }
    ps->seen[i] = true;
    return 0;
}

/* One line of the file: a section header, an assignment or nothing. */
static int ncq_parse_line(NcqParse *ps, char *line, char *err, size_t errlen)
{
    char *hash = strchr(line, '#'), *l;

    if (hash) {
        *hash = 0;
    }
    l = ncq_trim(line);
    if (!*l) {
        return 0;
    }
    if (*l == '[') {
        char *e = strchr(l, ']');

        if (!e || e[1] || e - l - 1 <= 0 ||
            (size_t)(e - l - 1) >= sizeof(ps->section)) {
            snprintf(err, errlen, "%s:%d: malformed section header",
                     ps->fname, ps->lineno);
            return -1;
        }
        *e = 0;
        strcpy(ps->section, l + 1);
        return 0;
    }
    return ncq_parse_assignment(ps, l, err, errlen);
}

static int ncq_check_required(const NcqParse *ps, char *err, size_t errlen)
{
    size_t j;

    for (j = 0; j < NCQ_NROWS; j++) {
        const NcqParamRow *k = &ncq_rows[j];

        if ((k->flags & NCQ_PF_REQUIRED) && !ps->seen[j]) {
            /* No line number: the key is missing from the whole file */
            snprintf(err, errlen, "%s: key '%s.%s': missing required "
                     "key; add %s = ... to section [%s]", ps->fname,
                     k->section, k->key, k->key, k->section);
            return -1;
        }
    }
    return 0;
}

/*
 * Zones without spares= take spare_per_track; zones without their own
 * skews take the global ones; spares per cylinder become per tracks.
 */
static void ncq_zone_defaults(const NcqParse *ps)
{
    NcqParams *p = ps->p;
    uint32_t i;

    for (i = 0; i < p->nzones && i < NCQ_MAX_ZONES; i++) {
        NcqZone *z = &p->zones[i];

        if (!(ps->zone_flags[i] & ZONE_SPARES)) {
            z->spares = p->spare_per_track;
            z->spare_tracks = 1;
        } else if (ps->zone_flags[i] & ZONE_PER_CYL) {
            z->spare_tracks *= p->heads;
        }
        if (!z->own_skew) {
            z->track_skew_ppb = p->track_skew_ppb;
            z->cyl_skew_ppb = p->cyl_skew_ppb;
        }
    }
}

/* Zones from the analytic keys, or the cylinders from the zone lines. */
static int ncq_finish_zones(const NcqParse *ps, char *err, size_t errlen)
{
    NcqParams *p = ps->p;

    if (p->kind == NCQ_KIND_HDD && ps->analytic) {
        if (ps->analytic != 3 || p->nzones < 1 ||
            p->nzones > NCQ_MAX_ZONES ||
            p->cylinders < p->nzones || p->zones[1].spt > p->zones[0].spt) {
            snprintf(err, errlen, "%s: key 'layout.zones': zones, outer_spt "
                     ">= inner_spt and cylinders >= zones are all needed",
                     ps->fname);
            return -1;
        }
        ncq_analytic_zones(p);
    } else if (p->kind == NCQ_KIND_HDD && ps->explicit_zones &&
               p->cylinders == 0) {
        p->cylinders = p->zones[p->nzones - 1].cyl_start +
                       p->zones[p->nzones - 1].cyl_count;
    }
    ncq_zone_defaults(ps);
    return 0;
}

static bool ncq_seen(const NcqParse *ps, const char *section,
                     const char *key)
{
    size_t i;

    return ncq_find_key(section, key, &i) && ps->seen[i];
}

/*
 * The link and the bus rate follow each other: a file that gives only
 * sata_gen transfers at the link's rate; one that gives only bus_mb_s
 * (every file before these keys) gets the slowest link that carries it.
 * The buffer defaults to what the model simulates of it.
 */
static void ncq_finish_link(const NcqParse *ps)
{
    NcqParams *p = ps->p;

    if (!ncq_seen(ps, "drive", "sata_gen")) {
        p->sata_gen = 1;
        while (p->sata_gen < NCQ_SATA_GEN_MAX &&
               p->bus_bytes_per_s > ncq_sata_link_bytes_per_s(p->sata_gen)) {
            p->sata_gen++;
        }
    } else if (!ncq_seen(ps, "drive", "bus_mb_s") &&
               ncq_sata_link_bytes_per_s(p->sata_gen)) {
        p->bus_bytes_per_s = ncq_sata_link_bytes_per_s(p->sata_gen);
    }
    if (!ncq_seen(ps, "drive", "buffer_kib")) {
        uint64_t s = p->kind == NCQ_KIND_SSD ? p->write_buffer_bytes / 512 :
                     (uint64_t)p->cache_segments * p->segment_sectors +
                     p->write_cache_sectors;

        p->buffer_sectors = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
    }
}

/*
 * A hard disk whose file gives no spin times gets the Barracuda 7200.8's
 * (estimate for other drives: docs/power-modes.md); an SSD has none.
 */
static void ncq_finish_power(const NcqParse *ps)
{
    NcqParams *p = ps->p;

    if (p->kind == NCQ_KIND_SSD) {
        return;
    }
    if (!ncq_seen(ps, "power", "spinup_ms")) {
        p->spinup_ns = NCQ_DEFAULT_SPINUP_NS;
    }
    if (!ncq_seen(ps, "power", "spindown_ms")) {
        p->spindown_ns = NCQ_DEFAULT_SPINDOWN_NS;
    }
}

static int ncq_parse_text(NcqParse *ps, const char *s, char *err,
                          size_t errlen)
{
    char line[512];

    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);

        ps->lineno++;
        if (len >= sizeof(line)) {
            snprintf(err, errlen, "%s:%d: line too long", ps->fname,
                     ps->lineno);
            return -1;
        }
        memcpy(line, s, len);
        line[len] = 0;
        s += len + (nl ? 1 : 0);
        if (ncq_parse_line(ps, line, err, errlen) < 0) {
            return -1;
        }
    }
    return 0;
}

int ncq_params_parse(const char *text, const char *fname,
                     NcqParams **out, char *err, size_t errlen)
{
    NcqParse ps = { .fname = fname };

    *out = NULL;
    ps.p = calloc(1, sizeof(*ps.p));
    if (!ps.p) {
        snprintf(err, errlen, "%s: out of memory", fname);
        return NCQ_ERR_NOMEM;
    }
    ncq_params_defaults(ps.p);
    if (ncq_parse_text(&ps, text, err, errlen) < 0 ||
        ncq_check_required(&ps, err, errlen) < 0 ||
        ncq_finish_zones(&ps, err, errlen) < 0) {
        goto fail;
    }
    ncq_finish_link(&ps);
    ncq_finish_power(&ps);
    if (ncq_params_validate(ps.p, err, errlen) < 0) {
        char tmp[256];

        snprintf(tmp, sizeof(tmp), "%s", err);
        snprintf(err, errlen, "%s: %s", fname, tmp);
        goto fail;
    }
    *out = ps.p;
    return 0;
fail:
    free(ps.p);
    return NCQ_ERR_PARSE;
}

int ncq_params_load_file(const char *path, NcqParams **out,
                         char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    int rc;

    *out = NULL;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return NCQ_ERR_IO;
    }
    buf = malloc(1 << 20);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return NCQ_ERR_NOMEM;
    }
    n = fread(buf, 1, (1 << 20) - 1, f);
    if (ferror(f) || n == (1 << 20) - 1) {
        int read_errno = errno;
        bool failed = ferror(f);

        fclose(f);
        free(buf);
        if (failed) {
            snprintf(err, errlen, "%s: cannot read: %s", path,
                     strerror(read_errno));
        } else {
            snprintf(err, errlen, "%s: larger than 1 MiB; a model file "
                     "is a few KiB of text", path);
        }
        return NCQ_ERR_IO;
    }
    fclose(f);
    buf[n] = 0;
    if (memchr(buf, 0, n)) {
        free(buf);
        snprintf(err, errlen, "%s: not a text file", path);
        return NCQ_ERR_PARSE;
    }
    rc = ncq_params_parse(buf, path, out, err, errlen);
    free(buf);
    return rc;
}

void ncq_params_free(NcqParams *p)
{
    free(p);
}

const char *ncq_params_builtin_text(const char *name)
{
    int i;

    for (i = 0; i < ncq_builtin_count; i++) {
        if (!strcmp(ncq_builtin_names[i], name)) {
            return ncq_builtin_texts[i];
        }
    }
    return NULL;
}

NcqParams *ncq_params_builtin(const char *name)
{
    const char *text = name ? ncq_params_builtin_text(name) : NULL;
    NcqParams *p;
    char err[256], fname[64];

    if (!text) {
        return NULL;
    }
    snprintf(fname, sizeof(fname), "%s.ncqm", name);
    if (ncq_params_parse(text, fname, &p, err, sizeof(err)) < 0) {
        return NULL;
    }
    return p;
}

const char *ncq_params_builtin_names(void)
{
    return ncq_builtin_list;
}
