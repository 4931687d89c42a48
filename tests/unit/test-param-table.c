/*
 * The parameter table (include/hw/ide/ncq-params.h): every byte of
 * NcqParams is a row's field or padding, every key has a known section
 * and is named once, every field is in the saved state's fingerprint, and
 * each key's range is what a file is checked against.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "ncq-int.h"

/* A row that has a field of its own (P and F rows; K rows alias). */
static bool owns_field(const NcqParamRow *k)
{
    return k->field != NULL;
}

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/*
 * The field rows, by offset, tile NcqParams: each starts where the one
 * before ended, moved up to its type's alignment, and the struct ends
 * where the last one does, moved up to the largest alignment.  A field
 * added to NcqParams by hand, outside the table, shifts a row or the
 * end (one hidden in padding is caught by
 * tests/repo/test_params_table.py, which reads the struct's body).
 */
static void test_fields_covered(void)
{
    size_t n, i, j, end = 0, covered = 0, max_align = 1;
    const NcqParamRow *rows = ncq_param_rows(&n);
    bool done[256] = { false };

    CHECK(n <= 256, "%zu rows", n);
    for (;;) {
        const NcqParamRow *next = NULL;
        size_t at = 0;

        for (i = 0; i < n; i++) {
            if (!done[i] && owns_field(&rows[i]) &&
                (!next || rows[i].off < next->off)) {
                next = &rows[i];
                at = i;
            }
        }
        if (!next) {
            break;
        }
        done[at] = true;
        CHECK(next->off == align_up(end, next->align), "bytes %zu..%zu, "
              "before field %s, belong to no row of ncq-params.h: add the "
              "field there, not to NcqParams", end, next->off, next->field);
        end = next->off + next->len;
        max_align = next->align > max_align ? next->align : max_align;
        covered += next->len;
    }
    CHECK(sizeof(NcqParams) == align_up(end, max_align), "bytes %zu..%zu, "
          "after the last row's field, belong to no row of ncq-params.h",
          end, sizeof(NcqParams));
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++) {
            CHECK(!owns_field(&rows[i]) || !owns_field(&rows[j]) ||
                  strcmp(rows[i].field, rows[j].field),
                  "field %s has two rows", rows[i].field);
        }
    }
    printf("fields: %zu of %zu bytes in rows, the rest padding\n", covered,
           sizeof(NcqParams));
}

/* Keys: a known section, named once, a doc line; defaults parse. */
static void test_keys(void)
{
    size_t n, i, j, s;
    const NcqParamRow *rows = ncq_param_rows(&n);
    NcqParams *p = ncq_params_builtin("st3400620as");

    for (i = 0; i < n; i++) {
        const NcqParamRow *k = &rows[i];

        CHECK(k->doc && k->doc[0], "row %zu has no doc line", i);
        if (!k->key) {
            continue;
        }
        for (s = 0; ncq_param_section(s); s++) {
            if (!strcmp(ncq_param_section(s), k->section)) {
                break;
            }
        }
        CHECK(ncq_param_section(s) != NULL, "key %s: section [%s] is not "
              "in NCQ_PARAM_SECTIONS", k->key, k->section);
        for (j = 0; j < i; j++) {
            CHECK(!rows[j].key || strcmp(rows[j].key, k->key) ||
                  strcmp(rows[j].section, k->section),
                  "key %s.%s has two rows", k->section, k->key);
        }
    }
    /* ncq_defaults() parses every row's default, or aborts */
    CHECK(p != NULL, "st3400620as parses with the table's defaults");
    ncq_params_free(p);
}

/*
 * Every field is in the parameters' fingerprint (from v8 on): its row's
 * fp is set, or another row's visit covers it (the zones' count with
 * zone, the points' count with point).
 */
static void test_fingerprint_covers(void)
{
    size_t n, i;
    const NcqParamRow *rows = ncq_param_rows(&n);

    for (i = 0; i < n; i++) {
        const NcqParamRow *k = &rows[i];

        CHECK(k->fp <= 9 || k->fp == NCQ_FP_NAMED, "row %s has fp %u: a "
              "version of the linear states (1..9) or, for a row added "
              "since, NCQ_FP_NAMED", k->field ? k->field : k->key,
              (unsigned)k->fp);
        if (!owns_field(k) || k->fp) {
            continue;
        }
        CHECK(!strcmp(k->field, "nzones") || !strcmp(k->field,
              "seek_npoints"), "field %s is in no fingerprint: give its "
              "row NCQ_FP_NAMED in the fp column", k->field);
    }
}

/* A hard disk and an SSD whose keys a test may replace one by one. */
static const char *const hdd_lines[][3] = {
    { "drive", "name", "x" }, { "drive", "model", "X" },
    { "drive", "kind", "hdd" }, { "drive", "capacity", "100" },
    { "drive", "rpm", "6000" }, { "layout", "heads", "1" },
    { "layout", "zone", "0 10 10" }, { "seek", "type", "table" },
    { "seek", "point", "1 1" },
};
static const char *const ssd_lines[][3] = {
    { "drive", "name", "x" }, { "drive", "model", "X" },
    { "drive", "kind", "ssd" }, { "drive", "capacity", "100" },
    { "ssd", "channels", "1" }, { "ssd", "dies_per_channel", "1" },
    { "ssd", "page_kib", "4" }, { "ssd", "channel_mb_s", "100" },
    { "ssd", "write_buffer_kib", "64" },
};

/* The base file of @kind with @key = @val in place of its own line. */
static void file_with(char *buf, size_t len, bool ssd, const NcqParamRow *k,
                      const char *val)
{
    size_t i, o = 0;
    const char *const (*l)[3] = ssd ? ssd_lines : hdd_lines;

    for (i = 0; i < 9; i++) {
        if (!strcmp(l[i][1], k->key) && !strcmp(l[i][0], k->section)) {
            continue;
        }
        o += snprintf(buf + o, len - o, "[%s]\n%s = %s\n", l[i][0], l[i][1],
                      l[i][2]);
    }
    if (!strcmp(k->key, "point") || !strcmp(k->key, "zone")) {
        return;
    }
    snprintf(buf + o, len - o, "[%s]\n%s = %s\n%s", k->section, k->key, val,
             ssd ? "" : "[seek]\npoint = 9 2\n");
}

/* A file one past a row's bound is refused, naming the key. */
static void expect_refused(const NcqParamRow *k, bool ssd, uint64_t v)
{
    char val[48], text[1024], err[512] = "";
    NcqParams *p = NULL;

    ncq_param_format_raw(k, v, val, sizeof(val));
    file_with(text, sizeof(text), ssd, k, val);
    CHECK(ncq_params_parse(text, "bound.ncqm", &p, err, sizeof(err)) < 0,
          "%s = %s accepted, outside its row's range", k->key, val);
    CHECK(strstr(err, k->key) != NULL, "%s = %s: error '%s' does not name "
          "the key", k->key, val, err);
    ncq_params_free(p);
}

static void test_ranges(void)
{
    size_t n, i, checked = 0;
    const NcqParamRow *rows = ncq_param_rows(&n);

    for (i = 0; i < n; i++) {
        const NcqParamRow *k = &rows[i];
        bool ssd = k->flags & NCQ_PF_SSD;

        if (!k->key || !k->field || k->type == NCQ_KT_STR ||
            k->type == NCQ_KT_BOOL || k->type == NCQ_KT_KIND ||
            k->type == NCQ_KT_POLICY || k->type == NCQ_KT_SEEKTYPE ||
            k->type == NCQ_KT_ZONE || k->type == NCQ_KT_POINT) {
            continue;
        }
        if (k->max != NCQ_PB_MAX) {
            /* one unit of the file past it (a KiB is 2 sectors) */
            uint64_t step = k->type == NCQ_KT_MS ? 1000000 :
                            k->type == NCQ_KT_US ? 1000 :
                            k->type == NCQ_KT_KIB_SECT ? 2 : 1;

            expect_refused(k, ssd, k->max + step);
            checked++;
        }
        if (k->min > 0 && k->type != NCQ_KT_MBPS) {
            expect_refused(k, ssd, k->min - 1);
            checked++;
        }
    }
    printf("ranges: %zu bounds refused one step past, each naming its key\n",
           checked);
}

int main(void)
{
    test_fields_covered();
    test_keys();
    test_fingerprint_covers();
    test_ranges();
    return ncq_test_done("test-param-table");
}
