/*
 * ncq-model: the run-time settings (ncq-params.h's NCQ_SETTINGS) as
 * rows: the name users type, the parameter row that gives the type,
 * doc line and bounds, the text form every surface reads and prints,
 * and the one range check (ncq_settings_check).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ncq-int.h"

typedef struct NcqSettingLine {
    const char *name;
    const char *aliases;
    const char *field;
    size_t off;             /* in NcqSettings */
    size_t len;
} NcqSettingLine;

#define NCQ_SETTING_LINE(field, name, aliases) \
    { name, aliases, #field, offsetof(NcqSettings, field), \
      sizeof(((NcqSettings *)0)->field) },

static const NcqSettingLine ncq_setting_lines[NCQ_SETTING__MAX] = {
    NCQ_SETTINGS(NCQ_SETTING_LINE)
};

/* The parameter row of @field; its absence is test-settings' failure */
static const NcqParamRow *ncq_setting_row(const char *field)
{
    size_t i;

    for (i = 0; i < ncq_param_table_len; i++) {
        const NcqParamRow *k = &ncq_param_table[i];

        if (k->field && k->key && !strcmp(k->field, field)) {
            return k;
        }
    }
    return NULL;
}

const NcqSettingDesc *ncq_setting(int i)
{
    static NcqSettingDesc desc[NCQ_SETTING__MAX];
    const NcqSettingLine *l;
    const NcqParamRow *k;

    if (i < 0 || i >= NCQ_SETTING__MAX) {
        return NULL;
    }
    if (desc[i].name) {
        return &desc[i];
    }
    l = &ncq_setting_lines[i];
    k = ncq_setting_row(l->field);
    if (!k) {
        return NULL;
    }
    desc[i] = (NcqSettingDesc) {
        .aliases = l->aliases, .field = l->field, .key = k->key,
        .unit = k->unit, .doc = k->doc, .min = k->min,
        .size = (unsigned)l->len, .since = k->fp,
        /* the stored value's own limit, for a row without a bound */
        .max = l->len == 4 && k->max > UINT32_MAX ? UINT32_MAX :
               l->len == 8 && k->max > INT64_MAX ? INT64_MAX : k->max,
    };
    if (!strcmp(k->unit, "on/off") || !strcmp(k->unit, "name")) {
        desc[i].unit = "";
    }
    desc[i].name = l->name;     /* last: the entry is complete */
    return &desc[i];
}

static bool ncq_word_in(const char *word, const char *list)
{
    size_t n = strlen(word);
    const char *p = list;

    while ((p = strstr(p, word)) != NULL) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) {
            return true;
        }
        p += n;
    }
    return false;
}

int ncq_setting_find(const char *name)
{
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        if (!strcmp(name, ncq_setting_lines[i].name) ||
            ncq_word_in(name, ncq_setting_lines[i].aliases)) {
            return i;
        }
    }
    return -1;
}

static NcqKeyType ncq_setting_type(int i)
{
    return ncq_setting_row(ncq_setting_lines[i].field)->type;
}

uint64_t ncq_setting_get(int i, const NcqSettings *s)
{
    const NcqSettingLine *l = &ncq_setting_lines[i];
    const char *base = (const char *)s + l->off;

    switch (l->len) {
    case 1:
        return *(const bool *)base;
    case 4:
        return *(const uint32_t *)base;     /* uint32_t and the enums */
    default:
        return (uint64_t)*(const int64_t *)base;
    }
}

void ncq_setting_put(int i, NcqSettings *s, uint64_t v)
{
    const NcqSettingLine *l = &ncq_setting_lines[i];
    char *base = (char *)s + l->off;

    switch (l->len) {
    case 1:
        *(bool *)base = v != 0;
        break;
    case 4:
        *(uint32_t *)base = (uint32_t)v;
        break;
    default:
        *(int64_t *)base = (int64_t)v;
        break;
    }
}

/* A stored value @v of setting @i as its text form */
static void ncq_setting_text(int i, uint64_t v, char *buf, size_t len)
{
    switch (ncq_setting_type(i)) {
    case NCQ_KT_MS:
        ncq_fixed_text(v, 6, buf, len);
        if (v) {
            snprintf(buf + strlen(buf), len - strlen(buf), "ms");
        }
        break;
    case NCQ_KT_BOOL:
        snprintf(buf, len, "%s", v ? "on" : "off");
        break;
    case NCQ_KT_POLICY:
        snprintf(buf, len, "%s", ncq_policy_name((NcqPolicy)v));
        break;
    case NCQ_KT_MILLI:
        ncq_fixed_text(v, 3, buf, len);
        break;
    default:
        snprintf(buf, len, "%" PRIu64, v);
        break;
    }
}

void ncq_setting_format(int i, const NcqSettings *s, char *buf, size_t len)
{
    ncq_setting_text(i, ncq_setting_get(i, s), buf, len);
}

void ncq_setting_range(int i, char *buf, size_t len)
{
    const NcqSettingDesc *d = ncq_setting(i);
    char lo[48], hi[48];

    switch (ncq_setting_type(i)) {
    case NCQ_KT_BOOL:
        snprintf(buf, len, "on or off");
        return;
    case NCQ_KT_POLICY:
        snprintf(buf, len, "%s", NCQ_POLICY_NAMES);
        return;
    case NCQ_KT_MS:
        ncq_fixed_text(d->min, 6, lo, sizeof(lo));
        ncq_fixed_text(d->max, 6, hi, sizeof(hi));
        break;
    default:
        ncq_setting_text(i, d->min, lo, sizeof(lo));
        ncq_setting_text(i, d->max, hi, sizeof(hi));
        break;
    }
    snprintf(buf, len, "%s..%s%s%s", lo, hi, d->unit[0] ? " " : "",
             d->unit);
}

/* @text as setting @i's stored value; false if it is not one */
static bool ncq_setting_read(int i, const char *as, const char *text,
                             uint64_t *v)
{
    size_t n = strlen(text), an = strlen(as);
    int64_t ns;
    NcqPolicy pol;
    int ret;

    switch (ncq_setting_type(i)) {
    case NCQ_KT_BOOL:
        *v = !strcmp(text, "on");
        return *v || !strcmp(text, "off");
    case NCQ_KT_POLICY:
        ret = ncq_policy_from_name(text, &pol);
        *v = pol;
        return ret == 0;
    case NCQ_KT_MS:
        ret = ncq_parse_duration(text, n, an > 3 &&
                                 !strcmp(as + an - 3, "-ns") ? 1 :
                                 NCQ_NS_PER_MS, &ns);
        *v = ret == NCQ_ERR_RANGE ? UINT64_MAX : (uint64_t)ns;
        return ret == 0 || ret == NCQ_ERR_RANGE;
    case NCQ_KT_MILLI:
        /* thousandths, rounded half up from the fourth decimal */
        ret = ncq_parse_decimal(text, n, 4, v);
        *v = ret == NCQ_ERR_RANGE ? UINT64_MAX : (*v + 5) / 10;
        return ret == 0 || ret == NCQ_ERR_RANGE;
    default:
        ret = ncq_parse_uint(text, n, UINT64_MAX, v);
        return ret == 0;
    }
}

int ncq_setting_parse(int i, const char *as, const char *text,
                      NcqSettings *s, char *err, size_t errlen)
{
    const NcqSettingDesc *d = ncq_setting(i);
    char range[160];
    uint64_t v;

    ncq_setting_range(i, range, sizeof(range));
    if (!ncq_setting_read(i, as, text, &v)) {
        snprintf(err, errlen, "%s='%s' is not a value of %s; use %s%s", as,
                 text, d->name, range,
                 ncq_setting_type(i) == NCQ_KT_MS ?
                 " (a bare number is ms; or 2s, 500us)" : "");
        return NCQ_ERR_PARSE;
    }
    if (v < d->min || v > d->max) {
        snprintf(err, errlen, "%s='%s' is out of range; use %s", as, text,
                 range);
        return NCQ_ERR_RANGE;
    }
    ncq_setting_put(i, s, v);
    return 0;
}

/* Every setting within its row's bounds, as a model file's would be */
int ncq_settings_check(const NcqModel *m, const NcqSettings *s,
                       char *err, size_t errlen)
{
    char range[160], text[48];
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t v = ncq_setting_get(i, s);

        if (v >= d->min && v <= d->max) {
            continue;
        }
        ncq_setting_range(i, range, sizeof(range));
        if (ncq_setting_lines[i].len == 8 && (int64_t)v < 0) {
            snprintf(text, sizeof(text), "%" PRId64 "ns", (int64_t)v);
        } else {
            ncq_setting_text(i, v, text, sizeof(text));
        }
        snprintf(err, errlen, "%s=%s is out of range; use %s", d->name,
                 text, range);
        return NCQ_ERR_INVAL;
    }
    if (s->zero_latency && !m->p.zero_latency) {
        snprintf(err, errlen, "zero-latency=on: model %s has no "
                 "zero-latency access; use off", m->p.name);
        return NCQ_ERR_INVAL;
    }
    return 0;
}

/* A new model's settings: its parameters' values */
void ncq_settings_from_params(NcqSettings *s, const NcqParams *p)
{
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqParamRow *k = ncq_setting_row(ncq_setting_lines[i].field);

        memcpy((char *)s + ncq_setting_lines[i].off, (const char *)p + k->off,
               ncq_setting_lines[i].len);
    }
}

/*
 * The settings as the docs' table (ncq-sim --list-settings): the name
 * every surface takes, the model file's key, the range, the old
 * spellings still taken, the row's doc line.
 */
void ncq_settings_list(FILE *f)
{
    char range[160];
    int i;

    fprintf(f, "| setting | model file key | range | also taken as | "
            "what |\n|---|---|---|---|---|\n");
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        const char *a = d->aliases;

        ncq_setting_range(i, range, sizeof(range));
        fprintf(f, "| `%s` | `%s` | %s | ", d->name, d->key, range);
        while (*a) {
            size_t len = strcspn(a, " ");

            fprintf(f, "%s`%.*s`", a == d->aliases ? "" : ", ", (int)len,
                    a);
            a += len + strspn(a + len, " ");
        }
        fprintf(f, " | %s |\n", d->doc);
    }
}
