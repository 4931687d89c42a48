/*
 * ncq-disk qtests: drive-managed SMR's media cache (docs/smr.md)
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

#define DM_MS               1000000LL
#define DM_MAP              8       /* the test's map: 8 extents */

/*
 * seagate-st8000as0002 with its media cache's map cut to DM_MAP extents
 * (a model file of the test's, so that a few writes fill it) and the
 * write cache off (each write's own time): the path, to unlink.
 */
static char *dm_model_file(void)
{
    const char *text = ncq_params_builtin_text("seagate-st8000as0002");
    char *path = g_strdup("/tmp/qtest.ncq-disk-dmsmr.XXXXXX");
    const char *map = strstr(text, "\nmap_extents = ");
    const char *eol = map ? strchr(map + 1, '\n') : NULL;
    g_autofree char *out = NULL;
    int fd = g_mkstemp(path);

    g_assert(fd >= 0 && map && eol);
    out = g_strdup_printf("%.*s\nmap_extents = %d%s", (int)(map - text),
                          text, DM_MAP, eol);
    g_assert(g_file_set_contents(path, out, -1, NULL));
    close(fd);
    return path;
}

static QDict *dm_cache(AHCIQState *ahci, QDict **info)
{
    *info = query_disk(ahci);
    g_assert(qdict_haskey(*info, "media-cache"));
    return qdict_get_qdict(*info, "media-cache");
}

static void dm_write(AHCIQState *ahci, uint8_t port, uint64_t lba)
{
    uint8_t data[4096];

    memset(data, 0x5a, sizeof(data));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), lba);
}

/* The trace file's "# clean" lines with "forced=@forced done=1". */
static int dm_trace_cleanings(const char *path, int forced)
{
    g_autofree char *text = NULL;
    g_autofree char *want = g_strdup_printf(" forced=%d done=1\n", forced);
    const char *p;
    int n = 0;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    for (p = text; (p = strstr(p, "# clean band=")); p++) {
        const char *eol = strchr(p, '\n');
        g_autofree char *line = NULL;

        g_assert(eol);
        line = g_strndup(p, eol - p + 1);
        n += g_str_has_suffix(line, want);
    }
    return n;
}

/*
 * Idle, a drive cleans its media cache band after band (after its 1 s
 * delay) until it is empty; @cleaned: the bands cleaned in all by then
 */
static void dm_idle_until_clean(AHCIQState *ahci, uint64_t cleaned)
{
    QTestState *qts = ahci->parent->qts;
    QDict *info, *mc;
    int i;

    qtest_clock_step(qts, 1100 * DM_MS);
    mc = dm_cache(ahci, &info);
    g_assert_cmpstr(qdict_get_str(mc, "cleaning"), ==, "cleaning");
    qobject_unref(info);
    for (i = 0; i < 1000; i++) {
        mc = dm_cache(ahci, &info);
        if (!strcmp(qdict_get_str(mc, "cleaning"), "none")) {
            break;
        }
        qobject_unref(info);
        qtest_clock_step_next(qts);
    }
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, 0);
    g_assert_cmpuint(qdict_get_int(mc, "sectors"), ==, 0);
    g_assert_cmpuint(qdict_get_int(mc, "cleaned"), ==, cleaned);
    qobject_unref(info);
}

/*
 * query-ncq-disk's media cache, forced and idle cleaning on the device's
 * virtual clock, the trace's "# clean" lines, and the cache across a
 * migration: DM_MAP writes fill the map (idle, the cleaning waits its
 * 1 s delay); the next write waits behind a band's cleaning (0.6-1.6 s,
 * Skylight's range); after a migration the destination holds the same
 * extents and, idle, cleans them band by band until the cache is empty.
 */
static void test_dmsmr_media_cache(void)
{
    g_autofree char *file = dm_model_file();
    g_autofree char *tr_src = g_strdup_printf("%s.src.trace", file);
    g_autofree char *tr_dst = g_strdup_printf("%s.dst.trace", file);
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw",
                                             big_img_path);
    g_autofree char *psrc = g_strdup_printf("model-file=%s,write-cache=off,"
                                            "trace=%s", file, tr_src);
    g_autofree char *pdst = g_strdup_printf("model-file=%s,write-cache=off,"
                                            "trace=%s", file, tr_dst);
    AHCIQState *src, *dst;
    QTestState *qts;
    QDict *info, *mc;
    int64_t t0, t1, until;
    uint8_t port;
    int i;

    src = ncq_boot_drive(drive, psrc, &port);
    dst = ncq_boot_incoming(drive, pdst);
    qts = src->parent->qts;
    mc = dm_cache(src, &info);
    g_assert_cmpuint(qdict_get_int(mc, "map-extents"), ==, DM_MAP);
    g_assert_cmpuint(qdict_get_int(mc, "capacity-sectors"), ==, 52428800);
    g_assert_cmpuint(qdict_get_int(mc, "band-sectors"), ==, 61440);
    qobject_unref(info);
    for (i = 0; i < DM_MAP; i++) {
        dm_write(src, port, 1000000 + i * 10000000ULL);
    }
    t0 = qtest_clock_step(qts, 1);    /* reads the clock (+1 ns) */
    mc = dm_cache(src, &info);
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, DM_MAP);
    g_assert_cmpuint(qdict_get_int(mc, "sectors"), ==, DM_MAP * 8);
    g_assert_cmpuint(qdict_get_int(mc, "cleaned"), ==, 0);
    g_assert_cmpstr(qdict_get_str(mc, "cleaning"), ==, "waiting");
    until = qdict_get_int(mc, "until-ns");
    g_assert_cmpint(until - t0, >, 900 * DM_MS);    /* the 1 s idle delay */
    g_assert_cmpint(until - t0, <=, 1000 * DM_MS);
    qobject_unref(info);

    /* the map is full: the next write waits behind a band's cleaning */
    dm_write(src, port, 1000000 + DM_MAP * 10000000ULL);
    t1 = qtest_clock_step(qts, 1);
    g_assert_cmpint(t1 - t0, >, 600 * DM_MS);
    g_assert_cmpint(t1 - t0, <, 1600 * DM_MS);
    mc = dm_cache(src, &info);
    g_assert_cmpuint(qdict_get_int(mc, "forced"), ==, 1);
    g_assert_cmpuint(qdict_get_int(mc, "cleaned"), ==, 1);
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, DM_MAP);
    qobject_unref(info);

    ncq_migrate(src, dst);      /* the source's trace is flushed */
    g_assert_cmpint(dm_trace_cleanings(tr_src, 1), ==, 1);
    mc = dm_cache(dst, &info);
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, DM_MAP);
    g_assert_cmpuint(qdict_get_int(mc, "forced"), ==, 1);
    qobject_unref(info);
    dm_idle_until_clean(dst, 1 + DM_MAP);
    ncq_shutdown(src);
    ncq_shutdown(dst);          /* the destination's trace is written */
    g_assert_cmpint(dm_trace_cleanings(tr_dst, 0), ==, DM_MAP);
    unlink(tr_src);
    unlink(tr_dst);
    unlink(file);
}

void add_dm_smr_tests(void)
{
    qtest_add_func("/ncq-disk/dmsmr/media-cache", test_dmsmr_media_cache);
}
