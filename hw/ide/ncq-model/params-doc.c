/*
 * ncq-model: the parameter table as text: a value in a file's units,
 * docs/model.md's table (ncq-sim --list-params) and a parsed model as
 * JSON (ncq-sim --dump-model, what ncq-fit reads instead of parsing).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ncq-int.h"

/* A scalar row's value in @p, in the file's units. */
static void ncq_param_format(const NcqParams *p, const NcqParamRow *k,
                             char *buf, size_t len)
{
    const char *base = (const char *)p + k->off;
    uint64_t v;

    switch (k->type) {
    case NCQ_KT_STR:
        snprintf(buf, len, "%s", base);
        return;
    case NCQ_KT_BOOL:
        v = *(const bool *)base;
        break;
    case NCQ_KT_MS:
    case NCQ_KT_US:
        v = (uint64_t)*(const int64_t *)base;
        break;
    default:
        v = k->len == 8 ? *(const uint64_t *)base : *(const uint32_t *)base;
        break;
    }
    ncq_param_format_raw(k, v, buf, len);
}

/* The range column: the stored bounds in the file's units. */
static void ncq_param_range(const NcqParamRow *k, char *buf, size_t len)
{
    char lo[40], hi[40];

    if (k->type == NCQ_KT_STR) {
        snprintf(buf, len, "up to %zu characters", k->len - 1);
        return;
    }
    if (k->type == NCQ_KT_ZONE || k->type == NCQ_KT_POINT ||
        k->type == NCQ_KT_BOOL || k->type == NCQ_KT_KIND ||
        k->type == NCQ_KT_SEEKTYPE || k->type == NCQ_KT_POLICY ||
        (k->min == 0 && k->max == NCQ_PB_MAX)) {
        buf[0] = 0;
        return;
    }
    ncq_param_format_raw(k, k->min, lo, sizeof(lo));
    if (k->max == NCQ_PB_MAX) {
        snprintf(buf, len, "%s or more", lo);
    } else {
        ncq_param_format_raw(k, k->max, hi, sizeof(hi));
        snprintf(buf, len, "%s..%s", lo, hi);
    }
    if (k->flags & (NCQ_PF_HDD | NCQ_PF_SSD)) {
        size_t n = strlen(buf);

        snprintf(buf + n, len - n, " (%s)",
                 k->flags & NCQ_PF_HDD ? "hard disks" : "SSDs");
    }
}

static void ncq_param_list_row(FILE *f, const NcqParamRow *k)
{
    char range[128], fp[48];
    const char *d;

    ncq_param_range(k, range, sizeof(range));
    if (k->fp == NCQ_FP_NAMED) {
        snprintf(fp, sizeof(fp), "by name%s",
                 k->flags & NCQ_PF_SETTING ? ", a setting" : "");
    } else if (k->fp) {
        snprintf(fp, sizeof(fp), "v%" PRIu32 "%s", k->fp,
                 k->flags & NCQ_PF_SETTING ? ", a setting" : "");
    } else {
        snprintf(fp, sizeof(fp), "through `zone`");
    }
    fprintf(f, "| `%s` | %s | %s | %s | %s | ", k->key, k->unit,
            k->def[0] ? k->def : "", range, fp);
    for (d = k->doc; *d; d++) {
        fprintf(f, *d == '|' ? "\\|" : "%c", *d);
    }
    fprintf(f, " |\n");
}

void ncq_params_list(FILE *f)
{
    size_t n, i, s;
    const NcqParamRow *rows = ncq_param_rows(&n);

    for (s = 0; ncq_param_section(s); s++) {
        fprintf(f, "%s`[%s]`\n\n", s ? "\n" : "", ncq_param_section(s));
        fprintf(f, "| key | unit | default | range | saved state | "
                "what |\n|---|---|---|---|---|---|\n");
        for (i = 0; i < n; i++) {
            if (rows[i].key && !strcmp(rows[i].section, ncq_param_section(s))) {
                ncq_param_list_row(f, &rows[i]);
            }
        }
    }
}

/* @s as a JSON string. */
static void ncq_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
        } else if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", (unsigned char)*s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static void ncq_json_zones(FILE *f, const NcqParams *p)
{
    uint64_t lba = 0, n;
    uint32_t i;

    fprintf(f, "[");
    for (i = 0; p->kind == NCQ_KIND_HDD && i < p->nzones; i++) {
        const NcqZone *z = &p->zones[i];
        char ts[24], cs[24], first[24];

        ncq_fixed_text(z->track_skew_ppb, 9, ts, sizeof(ts));
        ncq_fixed_text(z->cyl_skew_ppb, 9, cs, sizeof(cs));
        ncq_fixed_text(z->first_ppb, 9, first, sizeof(first));
        n = ncq_zone_lbas(p, z);
        fprintf(f, "%s\n      {\"first_cyl\": %" PRIu32 ", \"cyl_count\": %"
                PRIu32 ", \"spt\": %" PRIu32 ", \"spares\": %" PRIu32
                ", \"spare_tracks\": %" PRIu32 ", \"front\": %" PRIu32
                ", \"track_skew\": %s, \"cyl_skew\": %s, \"first\": %s, "
                "\"own_skew\": %s, \"lbas\": %" PRIu64 ", \"first_lba\": %"
                PRIu64 "}", i ? "," : "", z->cyl_start, z->cyl_count,
                z->spt, z->spares, z->spare_tracks, z->front, ts, cs, first,
                z->own_skew ? "true" : "false", n, lba);
        lba += n;
    }
    fprintf(f, "]");
}

static void ncq_json_points(FILE *f, const NcqParams *p)
{
    char ms[32];
    uint32_t i;

    fprintf(f, "[");
    for (i = 0; i < p->seek_npoints; i++) {
        ncq_fixed_text((uint64_t)p->seek_points[i].ns, 6, ms, sizeof(ms));
        fprintf(f, "%s[%" PRIu32 ", %s]", i ? ", " : "",
                p->seek_points[i].dist, ms);
    }
    fprintf(f, "]");
}

static void ncq_json_value(FILE *f, const NcqParams *p, const NcqParamRow *k)
{
    char v[64];

    switch (k->type) {
    case NCQ_KT_ZONE:
        ncq_json_zones(f, p);
        return;
    case NCQ_KT_POINT:
        ncq_json_points(f, p);
        return;
    default:
        break;
    }
    ncq_param_format(p, k, v, sizeof(v));
    if (k->type == NCQ_KT_BOOL) {
        fprintf(f, "%s", !strcmp(v, "on") ? "true" : "false");
    } else if (k->type == NCQ_KT_STR || k->type == NCQ_KT_KIND ||
               k->type == NCQ_KT_SEEKTYPE || k->type == NCQ_KT_POLICY ||
               k->type == NCQ_KT_HEX16) {
        ncq_json_str(f, v);
    } else {
        fprintf(f, "%s", v);
    }
}

void ncq_params_dump_json(FILE *f, const NcqParams *p)
{
    size_t n, i, s;
    const NcqParamRow *rows = ncq_param_rows(&n);
    bool first;

    fprintf(f, "{");
    for (s = 0; ncq_param_section(s); s++) {
        fprintf(f, "%s\n  \"%s\": {", s ? "," : "", ncq_param_section(s));
        first = true;
        for (i = 0; i < n; i++) {
            if (!rows[i].key || !rows[i].field ||
                strcmp(rows[i].section, ncq_param_section(s))) {
                continue;
            }
            fprintf(f, "%s\n    \"%s\": ", first ? "" : ",", rows[i].key);
            ncq_json_value(f, p, &rows[i]);
            first = false;
        }
        fprintf(f, "\n  }");
    }
    fprintf(f, "\n}\n");
}

void ncq_params_list_json(FILE *f)
{
    size_t n, i;
    const NcqParamRow *rows = ncq_param_rows(&n);
    bool first = true;

    fprintf(f, "{\"sections\": [");
    for (i = 0; ncq_param_section(i); i++) {
        fprintf(f, "%s\"%s\"", i ? ", " : "", ncq_param_section(i));
    }
    fprintf(f, "],\n \"keys\": [");
    for (i = 0; i < n; i++) {
        if (!rows[i].key) {
            continue;
        }
        fprintf(f, "%s\n  {\"section\": \"%s\", \"key\": \"%s\", "
                "\"own_field\": %s, \"fingerprint\": %" PRIu32
                ", \"default\": ", first ? "" : ",", rows[i].section,
                rows[i].key, rows[i].field ? "true" : "false", rows[i].fp);
        ncq_json_str(f, rows[i].def);
        fprintf(f, ", \"doc\": ");
        ncq_json_str(f, rows[i].doc);
        fprintf(f, "}");
        first = false;
    }
    fprintf(f, "\n]}\n");
}
