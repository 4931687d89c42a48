/*
 * ncq-disk qtests: power modes (docs/power-modes.md) and the power
 * cut
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * Power cut: flushed data and FUA data survive; data only in the write
 * cache is lost, i.e. the image holds those sectors' old contents.
 */
static void test_power_cut(void)
{
    g_autofree char *path = g_strdup("/tmp/qtest.ncq-disk-power.XXXXXX");
    int fd = g_mkstemp(path);
    AHCIQState *ahci;
    AHCICommand *flush;
    QDict *rsp, *ret;
    QListEntry *e;
    uint8_t port;
    bool lost_1000 = false, lost_5000 = false;

    g_assert(fd >= 0);
    g_assert(ftruncate(fd, 16 * 1024 * 1024) == 0);
    close(fd);
    ahci = ncq_boot_ready(path, NULL, &port);

    ncq_write_fill(ahci, port, 1000, 0x11, false);      /* then flushed */
    flush = ahci_command_create(CMD_FLUSH_CACHE);
    ahci_command_commit(ahci, flush, port);
    ahci_command_issue_async(ahci, flush);
    ncq_wait(ahci, port, flush);
    ahci_command_verify(ahci, flush);
    ahci_command_free(flush);
    ncq_write_fill(ahci, port, 3000, 0x33, true);       /* FUA */
    ncq_write_fill(ahci, port, 1000, 0x22, false);      /* cached only */
    ncq_write_fill(ahci, port, 5000, 0x55, false);      /* cached only */
    check_image(path, 5000, 0x55);      /* the device wrote it at once */

    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0', 'quit': false } }");
    ret = qdict_get_qdict(rsp, "return");
    g_assert_nonnull(ret);
    QLIST_FOREACH_ENTRY(qdict_get_qlist(ret, "lost"), e) {
        QDict *r = qobject_to(QDict, qlist_entry_obj(e));
        uint64_t lba = qdict_get_int(r, "lba");

        g_assert_cmpint(qdict_get_int(r, "sectors"), ==, 8);
        lost_1000 |= lba == 1000;
        lost_5000 |= lba == 5000;
        g_assert(lba == 1000 || lba == 5000);
    }
    /* the last write cannot have been destaged: the cut came with it */
    g_assert(lost_5000);
    g_assert_cmpint(qdict_get_int(ret, "lost-sectors"), ==,
                    8 * (lost_1000 + lost_5000));
    qobject_unref(rsp);
    rsp = qtest_qmp(ahci->parent->qts, "{ 'execute': 'query-status' }");
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(rsp, "return"), "status"),
                    ==, "shutdown");
    qobject_unref(rsp);

    check_image(path, 5000, 0x00);
    check_image(path, 3000, 0x33);
    check_image(path, 1000, lost_1000 ? 0x11 : 0x22);
    ncq_shutdown(ahci);
    unlink(path);
}

/* ---- Power modes (docs/power-modes.md) ---- */

#define PM_S                1000000000LL
#define PM_MS               1000000LL
#define PM_SPINUP           (10 * PM_S)     /* st3400620as's spinup_ms */
#define ATA_STANDBY_IMM     0xe0
#define ATA_IDLE_IMM        0xe1
#define ATA_STANDBY         0xe2
#define ATA_IDLE            0xe3
#define ATA_CHECK_POWER     0xe5
#define ATA_SLEEP           0xe6
#define PM_ABORTED          (-1)

/*
 * A power command (libqos knows none: patch it into a FLUSH CACHE) with
 * @count in its count register; steps the clock until it completes.
 * Returns the count register of its D2H FIS, or PM_ABORTED (the port is
 * recovered); *took: the virtual time it took, if asked.
 */
static int pm_cmd(AHCIQState *ahci, uint8_t port, uint8_t code,
                  uint8_t count, int64_t *took)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ahci_command_create(CMD_FLUSH_CACHE);
    AHCICommandHeader hdr;
    int64_t t0 = qtest_clock_step(qts, 1), now = t0;
    uint8_t slot;
    int ret;

    ahci_command_commit(ahci, cmd, port);
    slot = ahci_command_slot(cmd);
    ahci_get_command_header(ahci, port, slot, &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command), code);
    qtest_writew(qts, hdr.ctba + offsetof(RegH2DFIS, count), count);
    ahci_command_issue_async(ahci, cmd);
    while (!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) & AHCI_PX_TFD_STS_ERR) &&
           (ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot))) {
        now = qtest_clock_step_next(qts);
    }
    if (ahci_px_rreg(ahci, port, AHCI_PX_TFD) & AHCI_PX_TFD_STS_ERR) {
        g_assert_cmphex((ahci_px_rreg(ahci, port, AHCI_PX_TFD) >> 8) &
                        0xff, ==, 0x04);                    /* ABRT */
        ncq_recover(ahci, port);
        ret = PM_ABORTED;
    } else {
        ret = qtest_readw(qts, ahci->port[port].fb + 0x40 +
                          offsetof(RegD2HFIS, count)) & 0xff;
        ahci_px_wreg(ahci, port, AHCI_PX_IS,
                     ahci_px_rreg(ahci, port, AHCI_PX_IS));
    }
    ahci_command_free(cmd);
    if (took) {
        *took = now - t0;
    }
    return ret;
}

/* A power command that must succeed; the virtual time it took */
static int64_t pm_ok(AHCIQState *ahci, uint8_t port, uint8_t code,
                     uint8_t count)
{
    int64_t took;

    g_assert_cmpint(pm_cmd(ahci, port, code, count, &took), !=, PM_ABORTED);
    return took;
}

static int pm_check(AHCIQState *ahci, uint8_t port)
{
    return pm_cmd(ahci, port, ATA_CHECK_POWER, 0, NULL);
}

/* The raw value of SMART attribute @id */
static uint64_t smart_raw(AHCIQState *ahci, int id)
{
    QDict *info = query_disk(ahci);
    QList *attrs = qdict_get_qlist(qdict_get_qdict(info, "smart"),
                                   "attributes");
    QListEntry *e;
    uint64_t raw = UINT64_MAX;

    QLIST_FOREACH_ENTRY(attrs, e) {
        QDict *a = qobject_to(QDict, qlist_entry_obj(e));

        if (qdict_get_int(a, "id") == id) {
            raw = qdict_get_int(a, "raw");
        }
    }
    qobject_unref(info);
    g_assert(raw != UINT64_MAX);
    return raw;
}

/*
 * Each command and the CHECK POWER MODE value it leaves (hdparm -C:
 * FFh active/idle, 80h idle, 00h standby), by its current and its
 * retired code; a reserved standby timer count is aborted.  IDENTIFY
 * claims the Power Management feature set (words 82/85 bit 3, still after
 * SET FEATURES rewrote word 85) and the standard's timer values (49/13).
 */
static void test_pm_check_power_mode(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QDict *info;

    g_assert_cmphex(identify_word(ahci, port, 49) & (1 << 13), !=, 0);
    g_assert_cmphex(identify_word(ahci, port, 82) & (1 << 3), !=, 0);
    ncq_set_features(ahci, port, 0x82);         /* write cache off */
    g_assert_cmphex(identify_word(ahci, port, 85) & (1 << 3), !=, 0);
    ncq_set_features(ahci, port, 0x02);

    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    pm_ok(ahci, port, ATA_IDLE_IMM, 0);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    pm_ok(ahci, port, ATA_STANDBY_IMM, 0);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmphex(pm_cmd(ahci, port, 0x98, 0, NULL), ==, 0x00);
    info = query_disk(ahci);
    g_assert_cmpstr(qdict_get_str(info, "power-mode"), ==, "standby");
    g_assert_cmpint(qdict_get_int(info, "standby-timer-ns"), ==, 0);
    qobject_unref(info);
    pm_ok(ahci, port, 0x95, 0);  /* IDLE */
    g_assert_cmphex(pm_cmd(ahci, port, 0x98, 0, NULL), ==, 0x80);
    pm_ok(ahci, port, 0x94, 0);  /* STANDBY */
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmpint(pm_cmd(ahci, port, ATA_IDLE, 254, NULL), ==, PM_ABORTED);
    g_assert_cmpint(pm_cmd(ahci, port, ATA_STANDBY, 254, NULL), ==,
                    PM_ABORTED);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    pm_ok(ahci, port, ATA_STANDBY, 0);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    check_still_serving(ahci, port);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    ncq_shutdown(ahci);
}

/*
 * After STANDBY IMMEDIATE the first read waits the model's spin-up
 * (10 s for st3400620as), queued or not; the next one does not.  IDLE
 * IMMEDIATE from standby takes the spin-up itself.  Each spin-up counts
 * in Start_Stop_Count (attribute 4).
 */
static void test_pm_spin_up_delay(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t starts = smart_raw(ahci, 4);
    int64_t t;

    g_assert_cmpint(ncq_read_latency(ahci, port, 1000), <, 50 * PM_MS);
    g_assert_cmpint(pm_ok(ahci, port, ATA_STANDBY_IMM, 0), <, 100 * PM_MS);
    t = ncq_read_latency(ahci, port, 5000);
    g_assert_cmpint(t, >=, PM_SPINUP);
    g_assert_cmpint(t, <, PM_SPINUP + 50 * PM_MS);
    g_assert_cmpint(ncq_read_latency(ahci, port, 9000), <, 50 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    g_assert_cmpint(smart_raw(ahci, 4), ==, starts + 1);

    pm_ok(ahci, port, ATA_STANDBY_IMM, 0);
    t = pm_ok(ahci, port, ATA_IDLE_IMM, 0);
    g_assert_cmpint(t, >=, PM_SPINUP);
    g_assert_cmpint(t, <, PM_SPINUP + 50 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    g_assert_cmpint(ncq_read_latency(ahci, port, 3000), <, 50 * PM_MS);
    g_assert_cmpint(smart_raw(ahci, 4), ==, starts + 2);
    ncq_shutdown(ahci);
}

/*
 * The standby timer (IDLE's count 1: 5 s) spins an idle drive down 5 s
 * after its last command, in virtual time; a read restarts it; count 0
 * turns it off.
 */
static void test_pm_standby_timer(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    QDict *info;

    pm_ok(ahci, port, ATA_IDLE, 1);
    info = query_disk(ahci);
    g_assert_cmpstr(qdict_get_str(info, "power-mode"), ==, "idle");
    g_assert_cmpint(qdict_get_int(info, "standby-timer-ns"), ==, 5 * PM_S);
    qobject_unref(info);
    qtest_clock_step(qts, 4900 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    ncq_read_latency(ahci, port, 2000);
    qtest_clock_step(qts, 4900 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    qtest_clock_step(qts, 200 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmpint(ncq_read_latency(ahci, port, 7000), >=, PM_SPINUP);

    pm_ok(ahci, port, ATA_IDLE, 0);
    qtest_clock_step(qts, 60 * PM_S);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    ncq_shutdown(ahci);
}

/* COMRESET: DET=1, then released */
static void pm_comreset(AHCIQState *ahci, uint8_t port)
{
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    ahci_port_clear(ahci, port);
}

/*
 * In SLEEP every command is aborted, CHECK POWER MODE and reads too; a
 * COMRESET wakes the drive into standby, and the next read spins it up.
 */
static void test_pm_sleep_needs_reset(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;

    pm_ok(ahci, port, ATA_SLEEP, 0);
    g_assert_cmpint(pm_check(ahci, port), ==, PM_ABORTED);
    g_assert_cmpint(pm_cmd(ahci, port, ATA_IDLE_IMM, 0, NULL), ==,
                    PM_ABORTED);
    cmd = issue_held(ahci, port, CMD_READ_DMA_EXT, gbuf, 4096, 100);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, 0x04);
    ahci_command_free(cmd);
    ncq_recover(ahci, port);
    pm_comreset(ahci, port);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmpint(ncq_read_latency(ahci, port, 100), >=, PM_SPINUP);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * The mode and the standby timer move with the VM: idle with a 10 s
 * timer, migrated 5 s on; the timer fires 10 s after the command on the
 * other side, and the read after it waits the spin-up.
 */
static void test_pm_migrate(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img_path);
    uint8_t port;
    AHCIQState *src = ncq_boot_drive(drive, NULL, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, NULL);

    pm_ok(src, port, ATA_IDLE, 2);
    qtest_clock_step(src->parent->qts, 5 * PM_S);
    ncq_migrate(src, dst);
    g_assert_cmphex(pm_check(dst, port), ==, 0x80);
    qtest_clock_step(dst->parent->qts, 4800 * PM_MS);
    g_assert_cmphex(pm_check(dst, port), ==, 0x80);
    qtest_clock_step(dst->parent->qts, 400 * PM_MS);
    g_assert_cmphex(pm_check(dst, port), ==, 0x00);
    g_assert_cmpint(ncq_read_latency(dst, port, 100), >=, PM_SPINUP);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

void add_power_tests(void)
{
    qtest_add_func("/ncq-disk/power-cut", test_power_cut);
    qtest_add_func("/ncq-disk/pm/check-power-mode", test_pm_check_power_mode);
    qtest_add_func("/ncq-disk/pm/spin-up-delay", test_pm_spin_up_delay);
    qtest_add_func("/ncq-disk/pm/standby-timer", test_pm_standby_timer);
    qtest_add_func("/ncq-disk/pm/sleep-needs-reset",
                   test_pm_sleep_needs_reset);
    qtest_add_func("/ncq-disk/pm/migrate", test_pm_migrate);
}
