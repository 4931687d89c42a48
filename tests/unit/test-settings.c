/*
 * The run-time settings (ncq-params.h's NCQ_SETTINGS): one line per row
 * flagged NCQ_PF_SETTING and no other; each setting's text form parses
 * back to itself; its bounds are its row's, refused one step past by
 * the text parser and by ncq_model_set_settings alike; old spellings
 * find their setting.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "ncq-int.h"

/* The flagged rows and the lines are the same fields */
static void test_lines_are_the_flagged_rows(void)
{
    size_t n, i, flagged = 0;
    const NcqParamRow *rows = ncq_param_rows(&n);
    int j;

    for (i = 0; i < n; i++) {
        bool listed = false;

        if (!rows[i].key || !(rows[i].flags & NCQ_PF_SETTING)) {
            continue;
        }
        flagged++;
        for (j = 0; ncq_setting(j); j++) {
            listed |= !strcmp(ncq_setting(j)->field, rows[i].field);
        }
        CHECK(listed, "row %s (%s) is flagged NCQ_PF_SETTING but has no "
              "line in NCQ_SETTINGS", rows[i].key, rows[i].field);
    }
    for (j = 0; j < NCQ_SETTING__MAX; j++) {
        const NcqSettingDesc *d = ncq_setting(j);

        CHECK(d != NULL, "setting %d has no parameter row", j);
        for (i = 0; d && i < n; i++) {
            if (rows[i].field && !strcmp(rows[i].field, d->field)) {
                CHECK(rows[i].flags & NCQ_PF_SETTING, "setting %s: row %s "
                      "lacks NCQ_PF_SETTING", d->name, rows[i].key);
            }
        }
    }
    CHECK_EQ(flagged, NCQ_SETTING__MAX);
    CHECK(ncq_setting(NCQ_SETTING__MAX) == NULL, "a setting past the last");
}

static NcqModel *new_model(const char *name)
{
    return ncq_test_new(ncq_params_builtin(name), 1);
}

/*
 * @v of setting @i: its text parses back to @v, and the model takes it
 * (@ok) or refuses it with a message naming the setting.
 */
static void check_value(NcqModel *m, int i, uint64_t v, bool ok)
{
    const NcqSettingDesc *d = ncq_setting(i);
    NcqSettings s, back;
    char text[64], err[256] = "";
    int rc;

    ncq_model_get_settings(m, &s);
    ncq_setting_put(i, &s, v);
    rc = ncq_model_set_settings(m, &s, err, sizeof(err));
    CHECK((rc == 0) == ok, "%s = %" PRIu64 ": set_settings gave %d (%s)",
          d->name, v, rc, err);
    CHECK(ok || strstr(err, d->name), "%s: message '%s' does not name it",
          d->name, err);
    ncq_setting_format(i, &s, text, sizeof(text));
    back = s;
    err[0] = 0;
    rc = ncq_setting_parse(i, d->name, text, &back, err, sizeof(err));
    CHECK((rc == 0) == ok, "%s='%s': parse gave %d (%s)", d->name, text,
          rc, err);
    CHECK(!ok || ncq_setting_get(i, &back) == v, "%s='%s' parsed back as "
          "%" PRIu64, d->name, text, ncq_setting_get(i, &back));
    CHECK(ok || strstr(err, d->name), "%s: message '%s' does not name it",
          d->name, err);
}

/* Each bound taken, one step past it refused, by both checks */
static void test_bounds(void)
{
    /* zero-latency=on needs a model that has it */
    NcqModel *m = new_model("quantum-atlas10k");
    int i, checked = 0;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t limit = d->size == 1 ? 1 : d->size == 4 ? UINT32_MAX :
                         INT64_MAX;

        check_value(m, i, d->min, true);
        check_value(m, i, d->max, true);
        if (d->max < limit) {
            check_value(m, i, d->max + 1, false);
            checked++;
        }
        if (d->min > 0) {
            check_value(m, i, d->min - 1, false);
            checked++;
        }
    }
    ncq_model_free(m);
    printf("bounds: %d settings, %d bounds refused one step past\n",
           NCQ_SETTING__MAX, checked);
}

/* Names and aliases find their setting; an "-ns" alias reads ns */
static void test_names(void)
{
    NcqSettings s = { 0 };
    char err[256];
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        CHECK_EQ(ncq_setting_find(ncq_setting(i)->name), i);
    }
    CHECK_EQ(ncq_setting_find("timeout"),
             NCQ_SETTING_ID(starvation_timeout_ns));
    CHECK_EQ(ncq_setting_find("starvation-timeout-ns"),
             NCQ_SETTING_ID(starvation_timeout_ns));
    CHECK_EQ(ncq_setting_find("prio-timeout-ns"),
             NCQ_SETTING_ID(prio_timeout_ns));
    CHECK_EQ(ncq_setting_find("time"), -1);
    CHECK_EQ(ncq_setting_find("prio"), -1);
    CHECK_EQ(ncq_setting_parse(NCQ_SETTING_ID(prio_timeout_ns),
                               "prio-timeout-ns", "2500000", &s, err,
                               sizeof(err)), 0);
    CHECK_EQ(s.prio_timeout_ns, 2500000);
    CHECK_EQ(ncq_setting_parse(NCQ_SETTING_ID(prio_timeout_ns), "prio-timeout",
                               "2500", &s, err, sizeof(err)), 0);
    CHECK_EQ(s.prio_timeout_ns, 2500000000LL);
    CHECK(ncq_setting_parse(NCQ_SETTING_ID(policy), "policy", "lifo", &s, err,
                            sizeof(err)) < 0 && strstr(err, "sptf"),
          "an unknown policy: '%s'", err);
}

/* zero-latency=on is refused on a drive without it, naming the fix */
static void test_zero_latency_needs_the_drive(void)
{
    NcqModel *m = new_model("st3400620as");
    NcqSettings s;
    char err[256] = "";

    ncq_model_get_settings(m, &s);
    s.zero_latency = true;
    CHECK(ncq_model_set_settings(m, &s, err, sizeof(err)) < 0 &&
          strstr(err, "zero-latency"), "zero-latency on st3400620as: '%s'",
          err);
    ncq_model_free(m);
}

int main(void)
{
    test_lines_are_the_flagged_rows();
    test_bounds();
    test_names();
    test_zero_latency_needs_the_drive();
    return ncq_test_done("test-settings");
}
