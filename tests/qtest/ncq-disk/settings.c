/*
 * ncq-disk qtests: run-time settings on every surface (QMP, HMP,
 * -device) and configurations the device refuses
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/* ncq-disk-set with one argument; the error's text, or NULL */
/* A QMP response's error description (to be freed), or NULL; frees it */
static char *qmp_error_of(QDict *rsp)
{
    char *err = NULL;

    if (qdict_haskey(rsp, "error")) {
        err = g_strdup(qdict_get_str(qdict_get_qdict(rsp, "error"), "desc"));
    }
    qobject_unref(rsp);
    return err;
}

static char *ncq_set(QTestState *qts, const char *key, QObject *value)
{
    QDict *args = qdict_new();
    QDict *rsp;

    qdict_put_str(args, "id", "disk0");
    qdict_put_obj(args, key, value);
    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-set', 'arguments': %p }",
                    args);
    return qmp_error_of(rsp);
}

/*
 * ncq-disk-set and HMP's ncq_disk_set check settings as the properties
 * do, with the same messages; HMP reads a setting as the property does
 * (the model file's form), an old "-ns" spelling in nanoseconds.
 */
static void test_set_checks(void)
{
    static const struct {
        const char *key;
        int64_t value;
        const char *error;
    } bad[] = {
        { "starvation-timeout-ns", 3600000000001LL,
          "starvation-timeout=3600000.000001ms is out of range; use "
          "0..3600000 ms" },
        { "prio-timeout-ns", -1, "prio-timeout=-1ns is out of range" },
        { "queue-depth", 33, "queue-depth=33 is out of range; use 1 to 32" },
        { "clustering", 65537, "clustering=65537 is out of range; use "
          "0..65536 sectors" },
    };
    static const struct {
        const char *cmd;
        const char *error;
    } hmp_bad[] = {
        { "ncq_disk_set disk0 clustering 65537",
          "clustering='65537' is out of range; use 0..65536 sectors" },
        { "ncq_disk_set disk0 aging-weight -1",
          "aging-weight='-1' is not a value of aging-weight" },
        { "ncq_disk_set disk0 queue-depth 0",
          "queue-depth=0 is out of range; use 1 to 32" },
        { "ncq_disk_set disk0 honour-prio yes",
          "honour-prio='yes' is not a value of honour-prio; use on or off" },
        { "ncq_disk_set disk0 policy lifo", "policy='lifo' is not a value "
          "of policy; use fcfs, sstf, clook, sptf or aged-sptf" },
        { "ncq_disk_set disk0 depth 8", "unknown setting 'depth'" },
    };
    AHCIQState *ahci = ncq_boot(NULL);
    QTestState *qts = ahci->parent->qts;
    QDict *info;
    char *out;
    int i;

    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        out = ncq_set(qts, bad[i].key, QOBJECT(qnum_from_int(bad[i].value)));
        g_assert(out && strstr(out, bad[i].error));
        g_free(out);
    }
    out = ncq_set(qts, "policy", QOBJECT(qstring_from_str("lifo")));
    g_assert_cmpstr(out, ==, "policy='lifo' is not a value of policy; use "
                    "fcfs, sstf, clook, sptf or aged-sptf");
    g_free(out);
    g_assert_null(ncq_set(qts, "starvation-timeout-ns",
                          QOBJECT(qnum_from_int(NCQ_MAX_TIMEOUT_NS))));
    for (i = 0; i < ARRAY_SIZE(hmp_bad); i++) {
        out = qtest_hmp(qts, "%s", hmp_bad[i].cmd);
        g_assert(strstr(out, hmp_bad[i].error));
        g_free(out);
    }
    out = qtest_hmp(qts, "ncq_disk_set disk0 aging-weight 0.032");
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    out = qtest_hmp(qts, "ncq_disk_set disk0 prio-timeout-ns 2500000");
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    out = qtest_hmp(qts, "ncq_disk_set disk0 timeout 2s");
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    info = query_disk(ahci);
    g_assert_cmpint(qdict_get_int(info, "aging-weight"), ==, 32);
    g_assert_cmpint(qdict_get_int(info, "prio-timeout-ns"), ==, 2500000);
    g_assert_cmpint(qdict_get_int(info, "starvation-timeout-ns"), ==,
                    2000000000);
    qobject_unref(info);
    ncq_shutdown(ahci);
}

/* The value of setting @name in query-ncq-disk's settings list */
static char *info_setting(AHCIQState *ahci, const char *name)
{
    QDict *info = query_disk(ahci);
    QListEntry *e;
    char *value = NULL;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(info, "settings"), e) {
        QDict *s = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(s, "name"), name)) {
            value = g_strdup(qdict_get_str(s, "value"));
        }
    }
    qobject_unref(info);
    return value;
}

/* Setting @i at stored value @v, as its text */
static char *setting_text(int i, uint64_t v)
{
    NcqSettings st = { 0 };
    char text[64];

    ncq_setting_put(i, &st, v);
    ncq_setting_format(i, &st, text, sizeof(text));
    return g_strdup(text);
}

/* ncq-disk-set's settings list with one setting; the error, or NULL */
static char *qmp_set_one(QTestState *qts, const char *name,
                         const char *value)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-set', 'arguments': "
                           "{ 'id': 'disk0', 'settings': [ { 'name': %s, "
                           "'value': %s } ] } }", name, value);

    return qmp_error_of(rsp);
}

/* device_add of the drive with NAME=@value; the error, or NULL */
static char *plug_with(QTestState *qts, const char *name, const char *value)
{
    QDict *args = qdict_new();
    QDict *rsp;

    qdict_put_str(args, "driver", "ncq-disk");
    qdict_put_str(args, "id", "disk0");
    qdict_put_str(args, "drive", "drive0");
    qdict_put_str(args, "bus", "ide.0");
    qdict_put_str(args, "model", "quantum-atlas10k");
    qdict_put_str(args, name, value);
    rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': %p }",
                    args);
    return qmp_error_of(rsp);
}

/*
 * Every setting of the library's table (ncq-params.h's NCQ_SETTINGS) on
 * every surface of the device, by its one name: the -device property
 * (device_add), QMP's ncq-disk-set and query-ncq-disk, HMP's
 * ncq_disk_set and info ncq-disk; each takes the row's bounds and
 * refuses one step past them, naming the setting.  A surface that lacks
 * a setting, or bounds that differ, fail here.  quantum-atlas10k has
 * zero-latency access, so every value of every setting is valid on it.
 */
static void test_settings_every_surface(void)
{
    AHCIQState *ahci = ncq_boot("model=quantum-atlas10k");
    QTestState *qts = ahci->parent->qts;
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t limit = d->size == 1 ? 1 : d->size == 4 ? UINT32_MAX :
                         INT64_MAX;
        g_autofree char *lo = setting_text(i, d->min);
        g_autofree char *hi = setting_text(i, d->max);
        g_autofree char *past = d->max < limit ?
                                setting_text(i, d->max + 1) : NULL;
        g_autofree char *cmd = g_strdup_printf("ncq_disk_set disk0 %s %s",
                                               d->name, hi);
        g_autofree char *shown = g_strdup_printf(" %s %s", d->name, hi);
        g_autofree char *got = NULL;
        g_autofree char *err = NULL;
        char *out;

        out = qtest_hmp(qts, "%s", cmd);
        g_assert_cmpstr(out, ==, "");
        g_free(out);
        got = info_setting(ahci, d->name);
        g_assert_cmpstr(got, ==, hi);
        out = qtest_hmp(qts, "info ncq-disk");
        g_assert_nonnull(strstr(out, shown));
        g_free(out);
        g_assert_null(qmp_set_one(qts, d->name, lo));
        g_free(got);
        got = info_setting(ahci, d->name);
        g_assert_cmpstr(got, ==, lo);
        if (past) {
            err = qmp_set_one(qts, d->name, past);
            g_assert_nonnull(err);
            g_assert_nonnull(strstr(err, d->name));
            g_assert_nonnull(strstr(err, "; use "));
            out = qtest_hmp(qts, "ncq_disk_set disk0 %s %s", d->name, past);
            g_assert_nonnull(strstr(out, d->name));
            g_assert_nonnull(strstr(out, "; use "));
            g_free(out);
        }
    }

    /* the property: each setting at its bound, and one step past it */
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t limit = d->size == 1 ? 1 : d->size == 4 ? UINT32_MAX :
                         INT64_MAX;
        g_autofree char *hi = setting_text(i, d->max);
        g_autofree char *got = NULL;
        char *err;

        qtest_qmp_device_del(qts, "disk0");
        err = plug_with(qts, d->name, hi);
        g_assert_null(err);
        got = info_setting(ahci, d->name);
        g_assert_cmpstr(got, ==, hi);
        if (d->max < limit) {
            g_autofree char *past = setting_text(i, d->max + 1);

            qtest_qmp_device_del(qts, "disk0");
            err = plug_with(qts, d->name, past);
            g_assert_nonnull(err);
            g_assert_nonnull(strstr(err, d->name));
            g_free(err);
            g_assert_null(plug_with(qts, "policy", "sptf"));
        }
    }
    ncq_shutdown(ahci);
}

/*
 * The write cache at power-on is the model's (its write_cache, the
 * drive's factory setting: SAS drives off, SATA on) unless QEMU's
 * write-cache property says on or off; IDENTIFY word 85 bit 5 reports
 * it and query-ncq-disk agrees.
 */
static void test_write_cache_default(void)
{
    static const struct {
        const char *props;
        bool on;
    } cases[] = {
        { "model=fujitsu-max3036rc", false },
        { "model=fujitsu-max3036rc,write-cache=on", true },
        { "model=st3400620as", true },
        { "model=st3400620as,write-cache=off", false },
    };
    int i;

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        uint8_t port;
        AHCIQState *ahci = ncq_boot_ready(img_path, cases[i].props, &port);
        QDict *info = query_disk(ahci);

        g_assert_cmpint(!!(identify_word(ahci, port, 85) & (1 << 5)), ==,
                        cases[i].on);
        g_assert_cmpint(qdict_get_bool(info, "write-cache"), ==,
                        cases[i].on);
        qobject_unref(info);
        ncq_shutdown(ahci);
    }
}

/*
 * Issue 29, defect 4: a parallel ATA bus (PIIX) has no NCQ: it would
 * never hand the drive a queued command, so ncq-disk refuses it at
 * startup with one line that names the fix.
 */
static void test_piix_refused(void)
{
    g_autofree char *err = NULL;
    int status = spawn_startup("-M pc -device ncq-disk,drive=d1,bus=ide.0",
                               &err);

    /* stopped at startup with exit status 1, not a signal */
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err, "ncq-disk needs an AHCI port"));
    g_assert(strstr(err, "a parallel ATA bus has no NCQ"));
    /* one line of QEMU's (a sanitizer build adds its "==PID==" notes) */
    g_assert_cmpint(count_own_lines(err), ==, 1);
}

void add_settings_tests(void)
{
    qtest_add_func("/ncq-disk/qmp/set-checks", test_set_checks);
    qtest_add_func("/ncq-disk/settings/every-surface",
                   test_settings_every_surface);
    qtest_add_func("/ncq-disk/settings/write-cache-default",
                   test_write_cache_default);
    qtest_add_func("/ncq-disk/piix-refused", test_piix_refused);
}
