/*
 * ncq-disk qtests: the zone-state file (docs/smr.md) across restart,
 * migration and power cut
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

#define ZS_HEADER "# ncq-disk zone state v1 model=wd-hc620 zones=52156 " \
    "zone_sectors=524288 conventional=524\n"

/* A fresh path for a zone-state file (none there yet) */
static char *zstate_path(void)
{
    char *path = g_strdup("/tmp/qtest.ncq-disk-zstate.XXXXXX");
    int fd = g_mkstemp(path);

    g_assert(fd >= 0);
    close(fd);
    unlink(path);
    return path;
}

/* The zoned drive's properties with zone-state=@path */
static char *zstate_props(const char *path)
{
    return g_strdup_printf(ZAC_PROPS ",zone-state=%s", path);
}

static char *zstate_read(const char *path)
{
    char *text = NULL;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

/* Does the zone-state text hold the line "@zone @cond @wp"? */
static bool zstate_has(const char *text, uint32_t zone, const char *cond,
                       uint64_t wp)
{
    g_autofree char *line = g_strdup_printf("\n%u %s %" PRIu64 "\n", zone,
                                            cond, wp);

    return strstr(text, line) != NULL;
}

static bool zstate_lists(const char *text, uint32_t zone)
{
    g_autofree char *start = g_strdup_printf("\n%u ", zone);

    return strstr(text, start) != NULL;
}

static char *zstate_reason(AHCIQState *ahci)
{
    QDict *info = query_disk(ahci);
    QDict *zones = qdict_get_qdict(info, "zones");
    char *why = g_strdup(qdict_get_try_str(zones, "state-reason"));

    qobject_unref(info);
    return why;
}

/*
 * The QEMU after test_zac_zone_state_restart's: a power-on, the zones as
 * FILE kept them (open ones closed), and the drive writes on from there.
 */
static void zstate_restart_power_on(const char *props, const char *path)
{
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE, z3 = z2 + ZAC_ZONE;
    const uint64_t z4 = z3 + ZAC_ZONE, z5 = z4 + ZAC_ZONE;
    uint8_t port, data[4096];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, props, &port);
    QDict *info;
    char *text;
    uint64_t wp;

    memset(data, 0x5e, sizeof(data));
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x4);     /* closed */
    g_assert_cmphex(wp, ==, z1 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z2, &wp), ==, 0x1);     /* empty */
    g_assert_cmphex(wp, ==, z2);
    g_assert_cmphex(zac_cond(ahci, port, z3, &wp), ==, 0xe);     /* full */
    g_assert_cmphex(wp, ==, z3 + ZAC_ZONE);
    g_assert_cmphex(zac_cond(ahci, port, z4, &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, z4 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z5, &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, z5 + 8);
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(qdict_get_qdict(info,
                                                               "zones"),
                                               "open")), ==, 0);
    qobject_unref(info);
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x2);
    g_assert_cmphex(wp, ==, z1 + 16);
    g_assert_cmphex(zac_out(ahci, port, 0x04, 0, true), ==, 0); /* RESET */
    text = zstate_read(path);
    g_assert(g_str_has_suffix(text, "are empty\n"));     /* none listed */
    g_free(text);
    ncq_shutdown(ahci);
}

/*
 * zone-state=FILE: a new drive creates FILE with every zone empty; a
 * RESET or FINISH goes to it when it completes, every write pointer at a
 * FLUSH CACHE EXT, the rest when QEMU exits.  The next QEMU on FILE and
 * the same image finds the zones as a power-on leaves them: write
 * pointers and full zones kept, open zones closed (or empty when nothing
 * was written), no zone open; and goes on writing at the pointers.
 */
static void test_zac_zone_state_restart(void)
{
    g_autofree char *path = zstate_path();
    g_autofree char *props = zstate_props(path);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE, z3 = z2 + ZAC_ZONE;
    const uint64_t z4 = z3 + ZAC_ZONE, z5 = z4 + ZAC_ZONE;
    uint8_t port, status, data[4096];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, props, &port);
    char *text, *why;
    QDict *info;

    memset(data, 0x5e, sizeof(data));
    text = zstate_read(path);
    g_assert(g_str_has_prefix(text, ZS_HEADER));
    g_assert(g_str_has_suffix(text, "are empty\n"));     /* none listed */
    g_free(text);
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1);
    g_assert_cmphex(zac_out(ahci, port, 0x03, z2, false), ==, 0); /* OPEN */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z3);
    g_assert_cmphex(zac_out(ahci, port, 0x02, z3, false), ==, 0); /* FINISH */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z4);
    g_assert_cmphex(zac_out(ahci, port, 0x01, z4, false), ==, 0); /* CLOSE */
    /* the FINISH wrote FILE: zone 526 full; zone 527's write came after */
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV + 2, "full", z3 + ZAC_ZONE));
    g_assert(!zstate_lists(text, ZAC_CONV + 3));
    g_free(text);
    why = zstate_reason(ahci);
    g_assert_cmpstr(why, ==, "finish-zone");
    g_free(why);
    /* FLUSH CACHE EXT: every pointer */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, 0xea, 0, 0, 0, 0,
                            0, &status), ==, 0);
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV, "implicitly-open", z1 + 8));
    g_assert(zstate_has(text, ZAC_CONV + 1, "explicitly-open", z2));
    g_assert(zstate_has(text, ZAC_CONV + 3, "closed", z4 + 8));
    g_free(text);
    info = query_disk(ahci);
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(info, "zones"),
                                  "state-file"), ==, path);
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(info, "zones"),
                                  "state-reason"), ==, "flush");
    qobject_unref(info);
    /* a write after the flush: in FILE when QEMU exits */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z5);
    text = zstate_read(path);
    g_assert(!zstate_lists(text, ZAC_CONV + 4));
    g_free(text);
    ncq_shutdown(ahci);
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV + 4, "implicitly-open", z5 + 8));
    g_free(text);

    zstate_restart_power_on(props, path);
    unlink(path);
}

/*
 * A bad zone-state stops QEMU at startup with one line naming the file,
 * the line and the problem: a write pointer outside its zone, a file of
 * another model; and zone-state on a drive without zones.
 */
static void test_zac_zone_state_bad(void)
{
    g_autofree char *path = zstate_path();
    g_autofree char *dev = g_strdup_printf(
        "-M q35 -drive if=none,id=z,file=%s,format=raw "
        "-device ncq-disk,drive=z,bus=ide.0," ZAC_PROPS ",zone-state=%s",
        zoned_img_path, path);
    g_autofree char *plain = g_strdup_printf(
        "-M q35 -device ncq-disk,drive=d1,bus=ide.0,zone-state=%s", path);
    g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;
    g_autofree char *want = g_strdup_printf(
        "zone-state %s: line 4: write pointer 123 outside zone 527 "
        "(LBAs 276299776-276824063", path);
    int status;

    g_assert(g_file_set_contents(path, ZS_HEADER "# two zones\n"
                                 "526 full 276299776\n527 closed 123\n",
                                 -1, NULL));
    status = spawn_startup(dev, &err);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err, want));
    g_assert_cmpint(count_own_lines(err), ==, 1);
    g_assert(g_file_set_contents(path, "# ncq-disk zone state v1 "
                                 "model=zsmall zones=14 zone_sectors=128 "
                                 "conventional=2\n", -1, NULL));
    status = spawn_startup(dev, &err2);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err2, "line 1: written for model zsmall, but this "
                    "drive is wd-hc620; the file is another drive's: give "
                    "this drive a new zone-state file"));
    g_assert_cmpint(count_own_lines(err2), ==, 1);
    status = spawn_startup(plain, &err3);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err3, "model 'st3400620as' is not host-managed"));
    g_assert_cmpint(count_own_lines(err3), ==, 1);
    unlink(path);
}

/*
 * An incoming migration: the destination read its zone-state file at
 * startup, and the migrated zones replace what it read (a zone the file
 * says is full arrives empty, the source's open zone arrives open); the
 * destination writes the migrated state back, the source wrote its own
 * when it stopped for the migration.
 */
static void test_zac_zone_state_migrate(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw",
                                             zoned_img_path);
    g_autofree char *pa = zstate_path(), *pb = zstate_path();
    g_autofree char *propa = zstate_props(pa);
    g_autofree char *propb = zstate_props(pb);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE;
    uint8_t port, data[4096];
    AHCIQState *src, *dst;
    char *text;
    uint64_t wp;

    g_assert(g_file_set_contents(pb, ZS_HEADER "525 full 275775488\n", -1,
                                 NULL));
    src = ncq_boot_drive(drive, propa, &port);
    dst = ncq_boot_incoming(drive, propb);
    memset(data, 0x31, sizeof(data));
    ncq_io(src, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1);
    ncq_migrate(src, dst);
    text = zstate_read(pa);                 /* the source, at its stop */
    g_assert(zstate_has(text, ZAC_CONV, "implicitly-open", z1 + 8));
    g_free(text);
    g_assert_cmphex(zac_cond(dst, port, z1, &wp), ==, 0x2);
    g_assert_cmphex(wp, ==, z1 + 8);
    g_assert_cmphex(zac_cond(dst, port, z2, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z2);
    ncq_shutdown(src);
    ncq_shutdown(dst);
    text = zstate_read(pb);
    g_assert(zstate_has(text, ZAC_CONV, "implicitly-open", z1 + 8));
    g_assert(!zstate_lists(text, ZAC_CONV + 1));
    g_free(text);
    unlink(pa);
    unlink(pb);
}

/*
 * ncq-disk-power-cut: FILE gets what the drive keeps, the model's state
 * after the power loss (the dropped queued write's pointer back, open
 * zones closed).
 */
static void test_zac_zone_state_power_cut(void)
{
    g_autofree char *path = zstate_path();
    g_autofree char *props = zstate_props(path);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE;
    uint8_t port, data[4096];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, props, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *w;
    QDict *rsp;
    char *text, *why;

    memset(data, 0x6c, sizeof(data));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z2);
    ahci_command_issue_async(ahci, w);
    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0', 'quit': false } }");
    g_assert_nonnull(qdict_get_qdict(rsp, "return"));
    qobject_unref(rsp);
    why = zstate_reason(ahci);
    g_assert_cmpstr(why, ==, "power-cut");
    g_free(why);
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV, "closed", z1 + 8));
    g_assert(!zstate_lists(text, ZAC_CONV + 1));
    g_free(text);
    ahci_command_free(w);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
    unlink(path);
}

void add_zone_state_tests(void)
{
    qtest_add_func("/ncq-disk/zac/zone-state/restart",
                   test_zac_zone_state_restart);
    qtest_add_func("/ncq-disk/zac/zone-state/bad-file",
                   test_zac_zone_state_bad);
    qtest_add_func("/ncq-disk/zac/zone-state/migrate",
                   test_zac_zone_state_migrate);
    qtest_add_func("/ncq-disk/zac/zone-state/power-cut",
                   test_zac_zone_state_power_cut);
}
