/*
 * ncq-disk qtests: SMART and SCT Command Transport (status, error
 * recovery control)
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * SCT Command Transport (docs/smart.md, "SCT Command Transport"): the
 * commands travel in log E0h through SMART READ LOG and SMART WRITE LOG.
 */
#define LOG_SCT_DATA        0xe1
#define SCT_ERC             3

static void sct_status(AHCIQState *ahci, uint8_t port, uint8_t *buf)
{
    uint16_t ret;

    g_assert_cmphex(ncq_smart_log(ahci, port, false, LOG_SCT, 1, buf, 512,
                                  &ret), ==, 0);
}

/* The last SCT command's extended status, action and function codes */
static void check_sct_last(AHCIQState *ahci, uint8_t port, uint16_t status,
                           uint16_t action, uint16_t function)
{
    uint8_t st[512];

    sct_status(ahci, port, st);
    g_assert_cmphex(lduw_le_p(st + 14), ==, status);
    g_assert_cmphex(lduw_le_p(st + 16), ==, action);
    g_assert_cmphex(lduw_le_p(st + 18), ==, function);
}

/* ERC get (function 2, or 4 for the power-on value) of a timer */
static uint16_t sct_erc_get(AHCIQState *ahci, uint8_t port,
                            uint16_t function, uint16_t selection)
{
    uint16_t ret = 0xffff;

    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, function, selection,
                                0, &ret), ==, 0);
    return ret;
}

/* The same get through WRITE LOG EXT (GPL, 3Fh): the same registers */
static uint16_t sct_erc_get_gpl(AHCIQState *ahci, uint8_t port,
                                uint16_t selection)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t d2h = ahci->port[port].fb + 0x40;
    uint8_t cmd[512] = { 0 };

    stw_le_p(cmd, SCT_ERC);
    stw_le_p(cmd + 2, 2);
    stw_le_p(cmd + 4, selection);
    g_assert_cmphex(log_write(ahci, port, 0x3f, LOG_SCT, 0, 1, cmd,
                              sizeof(cmd)), ==, 0);
    return qtest_readb(qts, d2h + 12) | qtest_readb(qts, d2h + 4) << 8;
}

/*
 * IDENTIFY word 206 claims SCT with Error Recovery Control; both log
 * directories list E0h; the SCT status holds the drive's temperatures
 * (as SMART's) and the SMART status.
 */
static void test_sct_status(void)
{
    uint8_t port, st[512], dir[512];
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint16_t id[256], ret;
    QDict *info;
    int64_t temp;

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    /* SCT, Error Recovery Control, Data Tables */
    g_assert_cmphex(le16_to_cpu(id[206]), ==, 0x0029);
    g_assert_cmphex(ncq_smart_log(ahci, port, false, 0x00, 1, dir,
                                  sizeof(dir), &ret), ==, 0);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT), ==, 1);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT_DATA), ==, 1);
    ncq_read_log(ahci, port, 0x00, 0, dir);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT), ==, 1);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT_DATA), ==, 1);

    qtest_clock_step(ahci->parent->qts, 600 * 1000 * FAULT_MS);
    sct_status(ahci, port, st);
    info = query_disk(ahci);
    temp = qdict_get_int(qdict_get_qdict(info, "smart"), "temperature");
    qobject_unref(info);
    g_assert_cmpuint(lduw_le_p(st), ==, 3);             /* format */
    g_assert_cmphex(lduw_le_p(st + 14), ==, 0);         /* no command yet */
    g_assert_cmpint((int8_t)st[200], ==, temp);         /* now */
    g_assert_cmpint((int8_t)st[201], ==, 25);           /* power-on */
    g_assert_cmpint((int8_t)st[202], ==, temp);         /* warmed up */
    g_assert_cmpint(temp, >, 25);
    g_assert_cmpint((int8_t)st[203], <=, (int8_t)st[201]);
    g_assert_cmpint((int8_t)st[204], >=, (int8_t)st[202]);
    g_assert_cmpint(st[205], ==, 60);
    g_assert_cmphex(lduw_le_p(st + 214), ==, 0xc24f);   /* passed */
    g_assert_cmpuint(lduw_le_p(st + 216), ==, 10);      /* 1.0 s minimum */
    /* the same through READ LOG EXT */
    ncq_read_log(ahci, port, LOG_SCT, 0, dir);
    g_assert_cmpmem(dir, 200, st, 200);
    /* E1h holds nothing before a Data Table command: 000Bh */
    g_assert_cmphex(ncq_smart_log(ahci, port, false, LOG_SCT_DATA, 1, dir,
                                  sizeof(dir), &ret), ==, ATA_ERR_ABRT);
    check_sct_last(ahci, port, 0x000b, 0, 0);

    /* the temperature history: an entry a minute, 10 minutes so far */
    g_assert_cmphex(sct_command(ahci, port, 5, 1, 2, 0, &ret), ==, 0);
    g_assert_cmphex(ncq_smart_log(ahci, port, false, LOG_SCT_DATA, 1, dir,
                                  sizeof(dir), &ret), ==, 0);
    check_sct_last(ahci, port, 0, 5, 1);
    g_assert_cmpuint(lduw_le_p(dir), ==, 2);            /* version */
    g_assert_cmpuint(lduw_le_p(dir + 2), ==, 1);        /* sampling, min */
    g_assert_cmpuint(lduw_le_p(dir + 4), ==, 1);        /* interval, min */
    g_assert_cmpuint(lduw_le_p(dir + 30), ==, 128);     /* entries */
    g_assert_cmpuint(lduw_le_p(dir + 32), ==, 10);      /* the 11th */
    g_assert_cmpint((int8_t)dir[34 + 10], ==, temp);
    g_assert_cmpint((int8_t)dir[34 + 11], ==, -128);    /* none yet */
    ncq_shutdown(ahci);
}

/*
 * Error Recovery Control: the current limits start at 0 (none), a set is
 * read back, the power-on values are apart and become the current ones
 * at a power-on (system reset), restore brings the factory's 0 back.
 */
static void test_sct_erc(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint16_t ret;

    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 2), ==, 0);
    check_sct_last(ahci, port, 0, SCT_ERC, 2);
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 70, &ret), ==, 0);
    check_sct_last(ahci, port, 0, SCT_ERC, 1);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 70);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 2), ==, 0);
    /* a value above 255 comes back in both registers */
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 2, 0x123, &ret), ==,
                    0);
    g_assert_cmphex(sct_erc_get(ahci, port, 2, 2), ==, 0x123);
    g_assert_cmphex(sct_erc_get_gpl(ahci, port, 2), ==, 0x123);
    g_assert_cmphex(sct_erc_get_gpl(ahci, port, 1), ==, 70);
    /* power-on values */
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 3, 1, 100, &ret), ==,
                    0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 1), ==, 100);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 70);
    /* a power-on: the machine's reset, then the host sets the HBA up */
    system_reset(ahci->parent->qts);
    ahci_clean_mem(ahci);
    ahci_pci_enable(ahci);
    ahci_hba_enable(ahci);
    port = ahci_port_select(ahci);
    ahci_port_clear(ahci, port);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 1), ==, 100);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 100);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 2), ==, 0);
    /* restore the factory's */
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 5, 1, 0, &ret), ==, 0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 1), ==, 0);
    ncq_shutdown(ahci);
}

/*
 * Bad SCT input: ABRT, the extended status code in Count/LBA Low and in
 * the SCT status (ACS-3 table 186), nothing changed, the drive serves on.
 */
static void test_sct_bad_input(void)
{
    static const struct {
        uint16_t action, function, selection, limit, status;
    } bad[] = {
        { 0x0099, 1, 1, 70, 0x0010 },   /* unknown action code */
        { 4, 2, 3, 0, 0x0010 },         /* Feature Control: not offered */
        { 5, 2, 2, 0, 0x0001 },         /* Data Tables: no such function */
        { 5, 1, 7, 0, 0x0011 },         /* ...nor table */
        { SCT_ERC, 9, 1, 70, 0x0004 },  /* unknown ERC function */
        { SCT_ERC, 0, 1, 70, 0x0004 },
        { SCT_ERC, 1, 3, 70, 0x0005 },  /* unknown timer */
        { SCT_ERC, 1, 1, 5, 0x0006 },   /* 0.5 s: below the minimum */
        { SCT_ERC, 3, 2, 9, 0x0007 },
    };
    uint8_t port, cmd[1024] = { 0 };
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint16_t ret;
    int i;

    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 70, &ret), ==, 0);
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        g_assert_cmphex(sct_command(ahci, port, bad[i].action,
                                    bad[i].function, bad[i].selection,
                                    bad[i].limit, &ret), ==, ATA_ERR_ABRT);
        g_assert_cmphex(ret, ==, bad[i].status);
        check_sct_last(ahci, port, bad[i].status, bad[i].action,
                       bad[i].function);
    }
    /* an SCT command is one sector: two are refused before any data */
    stw_le_p(cmd, SCT_ERC);
    g_assert_cmphex(ncq_smart_log(ahci, port, true, LOG_SCT, 2, cmd,
                                  sizeof(cmd), &ret), ==, ATA_ERR_ABRT);
    g_assert_cmphex(ret, ==, 0x0003);
    /* E1h takes data only after a Write Same or Long Sector command */
    g_assert_cmphex(ncq_smart_log(ahci, port, true, LOG_SCT_DATA, 1, cmd,
                                  512, &ret), ==, ATA_ERR_ABRT);
    g_assert_cmphex(ret, ==, 0x000b);
    check_sct_last(ahci, port, 0x000b, SCT_ERC, 3);     /* the last that ran */
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 70);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 2), ==, 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A queued read of an unrecoverable sector: how long until UNC */
static int64_t ncq_unc_latency(AHCIQState *ahci, uint8_t port, uint64_t lba)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096,
                                   lba);
    int64_t t0 = qtest_clock_step(qts, 1), now;

    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_UNC);
    now = qtest_clock_step(qts, 1);
    ncq_recover(ahci, port);
    check_media_error_log(ahci, port, ahci_command_slot(cmd), ATA_ERR_UNC,
                          lba, 8);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    return now - t0;
}

/*
 * The firmware honours ERC (docs/faults.md): with recovery=150s the drive
 * retries an unrecoverable sector 150 s of virtual time before UNC; with
 * a 7 s read limit, 7 s; a limit back at 0 gives the 150 s again.
 */
static void test_sct_erc_limits_unc(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path,
                                      "recovery=150s,faults=unc@2000+8",
                                      &port);
    int64_t own, limited, again;
    uint16_t ret;

    own = ncq_unc_latency(ahci, port, 2000);
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 70, &ret), ==, 0);
    limited = ncq_unc_latency(ahci, port, 2000);
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 0, &ret), ==, 0);
    again = ncq_unc_latency(ahci, port, 2000);
    g_assert_cmpint(own, >=, 150000 * FAULT_MS);
    g_assert_cmpint(own, <, 150100 * FAULT_MS);
    g_assert_cmpint(limited, >=, 7000 * FAULT_MS);
    g_assert_cmpint(limited, <, 7100 * FAULT_MS);
    g_assert_cmpint(again, >=, 150000 * FAULT_MS);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

void add_smart_tests(void)
{
    qtest_add_func("/ncq-disk/sct/status", test_sct_status);
    qtest_add_func("/ncq-disk/sct/erc", test_sct_erc);
    qtest_add_func("/ncq-disk/sct/bad-input", test_sct_bad_input);
    qtest_add_func("/ncq-disk/sct/erc-limits-unc", test_sct_erc_limits_unc);
}
