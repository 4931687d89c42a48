/*
 * ncq-disk qtests: queued zone commands (NCQ NON-DATA, RECEIVE and
 * SEND FPDMA QUEUED)
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * The queued forms (docs/smr.md, "The queued forms"): NCQ NON-DATA 63h
 * with subcommand 07h (ZAC MANAGEMENT OUT) and RECEIVE FPDMA QUEUED 65h
 * with subcommand 02h (ZAC MANAGEMENT IN), the fields where libata's
 * ata_scsi_zbc_out_xlat()/ata_scsi_zbc_in_xlat() put them.
 */
#define ATA_NCQ_NON_DATA    0x63
#define ATA_RECV_FPDMA      0x65
#define ATA_SEND_FPDMA      0x64

/*
 * One queued command @code: FEATURE @feature, COUNT 15:8 @count_hi (the
 * tag is the slot's), AUXILIARY 15:0 @aux, LBA @lba; @bytes of data from
 * the device into @gbuf.  Returns the error register (0: it completed);
 * after an error the port is recovered, log 10h left unread.
 */
static uint8_t zac_ncq(AHCIQState *ahci, uint8_t port, uint8_t code,
                       uint16_t feature, uint8_t count_hi, uint16_t aux,
                       uint64_t lba, uint64_t gbuf, uint32_t bytes,
                       AHCICommand **keep)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf,
                                   bytes ? bytes : 512, lba);
    AHCICommandHeader hdr;
    uint8_t slot = ahci_command_slot(cmd), err = 0;
    int i;

    ahci_get_command_header(ahci, port, slot, &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, command), code);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, sector_low), feature);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, sector_hi), feature >> 8);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, prio), count_hi);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, aux), aux);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, aux) + 1, aux >> 8);
    ahci_command_issue_async(ahci, cmd);
    if (keep) {
        *keep = cmd;            /* the caller waits for it */
        return 0;
    }
    for (i = 0; i < 100000; i++) {
        if (ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_TFES) {
            err = ahci_px_rreg(ahci, port, AHCI_PX_TFD) >> 8;
            g_assert(err);
            ncq_recover(ahci, port);
            break;
        }
        if (!(ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1u << slot)) &&
            !(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot))) {
            break;
        }
        qtest_clock_step_next(qts);
    }
    g_assert_cmpint(i, <, 100000);
    ahci_command_free(cmd);
    return err;
}

/* NCQ NON-DATA, ZAC MANAGEMENT OUT @action on the zone at @lba, or ALL */
static uint8_t zac_ncq_out(AHCIQState *ahci, uint8_t port, uint8_t action,
                           uint64_t lba, bool all)
{
    return zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x07, 0,
                   action | (all ? 0x100 : 0), lba, 0, 0, NULL);
}

/* RECEIVE FPDMA QUEUED, REPORT ZONES of @pages pages into @buf */
static uint8_t zac_ncq_report(AHCIQState *ahci, uint8_t port, uint64_t lba,
                              uint8_t options, uint16_t pages, uint8_t *buf)
{
    uint64_t gbuf = ahci_alloc(ahci, 512 * pages);
    uint8_t err;

    qtest_memset(ahci->parent->qts, gbuf, 0xaa, 512 * pages);
    err = zac_ncq(ahci, port, ATA_RECV_FPDMA, pages, 0x02,
                  (uint16_t)options << 8, lba, gbuf, 512 * pages, NULL);
    if (!err && buf) {
        ncq_bufread(ahci->parent->qts, gbuf, buf, 512 * pages);
    }
    ahci_free(ahci, gbuf);
    return err;
}

/*
 * After a queued command failed: log 10h names a queued command (NQ 0),
 * with ABRT and the sense (status bit 1 and bytes 14-16), or none.
 */
static uint32_t zac_ncq_sense(AHCIQState *ahci, uint8_t port)
{
    uint8_t log[512];

    ncq_read_log(ahci, port, 0x10, 0, log);
    g_assert_cmphex(log[0] & 0x80, ==, 0);
    g_assert_cmphex(log[3], ==, ATA_ERR_ABRT);
    return log[2] & 0x02 ? log[14] << 16 | log[15] << 8 | log[16] : 0;
}

/*
 * What makes libata use the queued forms (ata_dev_config_ncq_send_recv(),
 * _non_data(); ata_fpdma_zac_mgmt_in_supported(), _out_supported()):
 * IDENTIFY word 77 bits 5 and 6, logs 12h and 13h in the GPL directory,
 * log 12h byte 28 bit 0 and log 13h byte 16 bit 1.  A conventional
 * model has none of them, and fails both commands with an NCQ error.
 */
static void test_zac_queued_advertised(void)
{
    uint8_t port, dir[512], page[512];
    uint16_t id[256];
    AHCIQState *ahci = zac_boot(&port);

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(le16_to_cpu(id[77]) & 0x60, ==, 0x60);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0, 0, 1, dir),
                    ==, 0);
    g_assert_cmphex(lduw_le_p(dir + 2 * 0x12), ==, 1);
    g_assert_cmphex(lduw_le_p(dir + 2 * 0x13), ==, 1);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x12, 0, 1, page),
                    ==, 0);
    g_assert_cmphex(page[28], ==, 0x01);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x13, 0, 1, page),
                    ==, 0);
    g_assert_cmphex(page[16], ==, 0x02);
    g_assert_cmphex(page[0] | page[28], ==, 0);
    ncq_shutdown(ahci);

    ahci = ncq_boot_ready(img_path, NULL, &port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(le16_to_cpu(id[77]) & 0x60, ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0, 0, 1, dir),
                    ==, 0);
    g_assert_cmphex(lduw_le_p(dir + 2 * 0x12) | lduw_le_p(dir + 2 * 0x13),
                    ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x13, 0, 1, NULL),
                    ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, 0, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    g_assert_cmphex(zac_ncq_report(ahci, port, 0, 0, 1, NULL), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    ncq_shutdown(ahci);
}

/*
 * The queued forms do what the non-queued ones do: REPORT ZONES from a
 * locator inside a zone (the zone holding it first, ZBC), OPEN, CLOSE,
 * FINISH, RESET and RESET ALL, each read back by the other form.
 */
static void test_zac_queued(void)
{
    uint8_t port, buf[512], data[4096], *big;
    AHCIQState *ahci = zac_boot(&port);
    const uint64_t z1 = ZAC_SWR0, z2 = ZAC_SWR0 + ZAC_ZONE;
    uint64_t wp;

    memset(data, 0x3c, sizeof(data));
    /* from the last conventional zone's middle, partial: 7 in 1 page */
    g_assert_cmphex(zac_ncq_report(ahci, port, ZAC_SWR0 - 1000, 0x80, 1, buf),
                    ==, 0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * 7);
    g_assert_cmphex(buf[4] & 0xf, ==, 3);
    g_assert_cmphex(ldq_le_p(buf + 8), ==, ZAC_SECTORS - 1);
    g_assert_cmphex(ldq_le_p(buf + 64 + 16), ==, ZAC_SWR0 - ZAC_ZONE);
    g_assert_cmphex(buf[128] & 0xf, ==, 2);
    g_assert_cmphex(ldq_le_p(buf + 128 + 16), ==, z1);
    /* not partial: every zone from there, option 00h */
    g_assert_cmphex(zac_ncq_report(ahci, port, z1, 0, 1, buf), ==, 0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * (ZAC_ZONES - ZAC_CONV));
    /* the buffer Linux's sd_zbc asks for on AHCI: 168 pages of 4 KiB */
    big = g_malloc(1344 * 512);
    g_assert_cmphex(zac_ncq_report(ahci, port, 0, 0, 1344, big), ==, 0);
    g_assert_cmphex(ldl_le_p(big), ==, 64 * ZAC_ZONES);
    g_assert_cmphex(ldq_le_p(big + 64 * 1343 + 16), ==, 1342 * ZAC_ZONE);
    g_free(big);

    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1, false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x3);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x01, z1, false), ==, 0);
    g_assert_cmphex(zac_ncq_report(ahci, port, z1, 0x80, 1, buf), ==, 0);
    g_assert_cmphex(buf[64 + 1] >> 4, ==, 0x4);            /* closed */
    g_assert_cmphex(ldq_le_p(buf + 64 + 24), ==, z1 + 8);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x02, z1, false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0xe);
    g_assert_cmphex(wp, ==, z1 + ZAC_ZONE);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x04, z1, false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z2);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x04, 12345, true), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, NULL), ==, 0x1);
    g_assert_cmphex(zac_cond(ahci, port, z2, NULL), ==, 0x1);
    ncq_shutdown(ahci);
}

/*
 * Bad input in the queued forms: an NCQ error (ABRT), the failing tag in
 * log 10h with the sense of the non-queued form (NCQ autosense), and
 * nothing changed.  ZBC/ZAC: a reserved reporting option and a zone ID
 * that is not a zone's start, or a conventional zone's, are INVALID
 * FIELD 5h/24h/00h; a locator beyond the capacity LBA OUT OF RANGE
 * 5h/21h/00h; an OPEN with every open resource held by explicitly open
 * zones INSUFFICIENT ZONE RESOURCES 7h/55h/0Eh.  A subcommand the drive
 * lacks (NCQ NON-DATA 00h, ABORT NCQ QUEUE) or an action ZAC reserves:
 * ABRT, no sense.
 */
static void test_zac_queued_errors(void)
{
    uint8_t port;
    AHCIQState *ahci = zac_boot(&port);
    const uint64_t z1 = ZAC_SWR0;
    uint64_t wp;
    QDict *info;
    int i;

    g_assert_cmphex(zac_ncq_report(ahci, port, 0, 0x08, 1, NULL), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_ncq_report(ahci, port, ZAC_SECTORS, 0, 1, NULL), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052100);
    /* RESET of a conventional zone; OPEN of an LBA inside a zone */
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x04, 0, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1 + 8, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    /* a subcommand and an action the drive does not have */
    g_assert_cmphex(zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x00, 0, 0, 0, 0,
                            0, NULL), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x07, z1, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    /* 128 zones open explicitly; the 129th OPEN finds no resource */
    for (i = 0; i < 128; i++) {
        g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1 + i * ZAC_ZONE,
                                    false), ==, 0);
    }
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1 + 128 * ZAC_ZONE,
                                false), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x07550e);
    g_assert_cmphex(zac_cond(ahci, port, z1 + 128 * ZAC_ZONE, NULL), ==,
                    0x1);
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(qdict_get_qdict(info,
                                                               "zones"),
                                               "open")), ==, 128);
    qobject_unref(info);
    ncq_shutdown(ahci);
}

/*
 * SEND FPDMA QUEUED (64h), here DATA SET MANAGEMENT's TRIM (subcommand
 * 00h in COUNT 12:8, one block in FEATURE, TRIM in AUXILIARY bit 0): the
 * drive has none of its subcommands (log 13h lists none), so it is an
 * NCQ error with ABRT, timed or not, and its data never reaches the
 * medium at its LBA.
 */
static void test_ncq_send_aborted(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, data, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 512);
    uint8_t zero[512] = { 0 }, in[512];

    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, zero, sizeof(zero), 200);
    qtest_memset(qts, gbuf, 0x5a, 512);
    g_assert_cmphex(zac_ncq(ahci, port, ATA_SEND_FPDMA, 1, 0x00, 0x0001,
                            200, gbuf, 512, NULL), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 200);
    g_assert(memcmp(in, zero, sizeof(in)) == 0);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A write racing a RESET of its zone, both queued at once: SATA lets the
 * drive run queued commands in any order, so no order is defined for
 * the host; the model decides by arrival (docs/smr.md, "The model"), the
 * same every run.  A write at the pointer queued before the RESET: both
 * succeed and the zone is empty after them.  A RESET queued before a
 * write where the pointer was: the write fails UNALIGNED WRITE COMMAND,
 * and its NCQ error aborts the RESET too, which the drive applied when
 * it took it (the zone stays empty).
 */
static void test_zac_write_reset_race(void)
{
    uint8_t port, data[4096];
    AHCIQState *ahci = zac_boot(&port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    const uint64_t z1 = ZAC_SWR0;
    AHCICommand *w, *r;
    uint64_t wp;

    memset(data, 0x5a, sizeof(data));
    qtest_memset(ahci->parent->qts, gbuf, 0x5a, 4096);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z1);
    ahci_command_issue_async(ahci, w);
    zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x07, 0, 0x04, z1, 0, 0, &r);
    ncq_wait(ahci, port, w);
    ncq_wait(ahci, port, r);
    ahci_command_free(w);
    ahci_command_free(r);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);

    /* the other order: the write arrives after the RESET rewound it */
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x07, 0, 0x04, z1, 0, 0, &r);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z1 + 8);
    ahci_command_issue_async(ahci, w);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    ahci_command_free(w);
    ahci_command_free(r);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052104);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/* How many zones query-ncq-disk counts in @cond */
static int64_t zac_count(QDict *zones, const char *cond)
{
    QListEntry *e;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(zones, "conditions"), e) {
        QDict *c = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(c, "condition"), cond)) {
            return qdict_get_int(c, "count");
        }
    }
    return 0;
}

/*
 * A power cut (ncq-disk-power-cut, docs/smr.md "Reset and power loss"):
 * write pointers are kept as the drive keeps them on its media, open
 * zones are closed.  A zone written at its pointer and acknowledged (from
 * the write cache) keeps its pointer and is closed; one opened explicitly
 * with nothing written is empty again; a queued write the cut caught in
 * flight never reached the media, and its zone's pointer goes back (the
 * zone empty).
 */
static void test_zac_power_cut(void)
{
    uint8_t port, data[4096];
    AHCIQState *ahci = zac_boot(&port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE, z3 = z2 + ZAC_ZONE;
    AHCICommand *w;
    QDict *info, *rsp, *zones;

    memset(data, 0x6b, sizeof(data));
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1, false), ==, 0);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z2);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z3);
    ahci_command_issue_async(ahci, w);
    info = query_disk(ahci);
    zones = qdict_get_qdict(info, "zones");
    g_assert_cmpint(zac_count(zones, "explicitly-open"), ==, 1);
    g_assert_cmpint(zac_count(zones, "implicitly-open"), ==, 2);
    qobject_unref(info);

    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0', 'quit': false } }");
    g_assert_nonnull(qdict_get_qdict(rsp, "return"));
    qobject_unref(rsp);
    info = query_disk(ahci);
    zones = qdict_get_qdict(info, "zones");
    g_assert_cmpint(qlist_size(qdict_get_qlist(zones, "open")), ==, 0);
    g_assert_cmpint(zac_count(zones, "closed"), ==, 1);
    g_assert_cmpint(zac_count(zones, "empty"), ==, ZAC_ZONES - ZAC_CONV - 1);
    g_assert_cmpint(zac_count(zones, "not-write-pointer"), ==, ZAC_CONV);
    qobject_unref(info);
    ahci_command_free(w);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

void add_zones_queued_tests(void)
{
    qtest_add_func("/ncq-disk/zac/queued/advertised",
                   test_zac_queued_advertised);
    qtest_add_func("/ncq-disk/zac/queued/actions", test_zac_queued);
    qtest_add_func("/ncq-disk/zac/queued/errors", test_zac_queued_errors);
    qtest_add_data_func("/ncq-disk/queue/send-aborted", NULL,
                        test_ncq_send_aborted);
    qtest_add_data_func("/ncq-disk/queue/send-aborted/timing-off",
                        "timing=off", test_ncq_send_aborted);
    qtest_add_func("/ncq-disk/zac/queued/write-reset-race",
                   test_zac_write_reset_race);
    qtest_add_func("/ncq-disk/zac/power-cut", test_zac_power_cut);
}
