/*
 * ncq-disk qtests: what a misbehaving guest gets, the ATA error
 * behaviour of queued and non-queued commands
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * Guest mistakes (issue 6): each case asserts the ATA outcome and that the
 * drive still serves afterwards.
 */

/* An LBA range beyond the capacity: IDNF, reported in log 10h. */
static void test_error_lba_range(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;
    uint8_t slot;

    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096,
                      DISK_SECTORS - 4);
    slot = ahci_command_slot(cmd);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_IDNF);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, slot, ATA_ERR_IDNF, DISK_SECTORS - 4);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A tag that is already active: every queued command is aborted. */
static void test_error_duplicate_tag(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *a, *b;
    QDict *info;

    a = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 1000);
    ahci_command_issue_async(ahci, a);
    b = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096, 4096, 2000);
    ncq_forge_tag(ahci, port, b, ahci_command_slot(a));
    ahci_command_issue_async(ahci, b);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    info = query_disk(ahci);
    g_assert_null(qdict_get_qlist(info, "queue") ?
                  qlist_peek(qdict_get_qlist(info, "queue")) : NULL);
    g_assert_cmpint(qdict_get_int(info, "guest-errors"), ==, 1);
    qobject_unref(info);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, ahci_command_slot(a), ATA_ERR_ABRT, 0);
    ahci_command_free(a);
    ahci_command_free(b);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * queue-depth is how many commands the drive holds, not a limit on the
 * tag (docs/device.md, "Queue depth below 32"): at queue-depth=8, eight
 * reads tagged 24 to 31, all in the drive at once, are all served, each
 * into its own buffer.
 * (Linux numbers tags round-robin over the port's 32 and keeps at most
 * the drive's depth outstanding.)
 */
static void test_depth_any_tag_served(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "queue-depth=8", &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 8 * 4096);
    AHCICommand *cmd[8];
    uint8_t out[4096], in[4096];
    QDict *info;
    int i, n;

    for (i = 0; i < 8; i++) {
        memset(out, 0x30 + i, sizeof(out));
        ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, sizeof(out),
               2000 + 8 * i);
    }
    /* slots (and so tags: AHCI's NCQ tag is the slot) 24 to 31 */
    ahci->port[port].next = 24;
    for (i = 0; i < 8; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 2000 + 8 * i);
        g_assert_cmpint(ahci_command_slot(cmd[i]), ==, 24 + i);
        ahci_command_issue_async(ahci, cmd[i]);
    }
    /* all eight are in the drive at once */
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 8);
    qobject_unref(info);
    for (n = 0; ahci_px_rreg(ahci, port, AHCI_PX_SACT) ||
                ahci_px_rreg(ahci, port, AHCI_PX_CI); n++) {
        g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR));
        g_assert_cmpint(n, <, 100000);
        qtest_clock_step_next(qts);
    }
    g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) & AHCI_PX_TFD_STS_ERR));
    for (i = 0; i < 8; i++) {
        memset(out, 0x30 + i, sizeof(out));
        qtest_memread(qts, gbuf + 4096 * i, in, sizeof(in));
        g_assert(!memcmp(out, in, sizeof(in)));
        ahci_command_free(cmd[i]);
    }
    info = query_disk(ahci);
    g_assert_cmpint(qdict_get_int(info, "guest-errors"), ==, 0);
    qobject_unref(info);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * A command beyond the advertised depth (the ninth at queue-depth=8,
 * whatever its tag): ABRT, the queue dropped, log 10h names its tag.
 */
static void test_error_beyond_depth(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "queue-depth=8", &port);
    uint64_t gbuf = ahci_alloc(ahci, 9 * 4096);
    AHCICommand *cmd[9];
    int i;

    for (i = 0; i < 9; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 1000 + 8 * i);
        ahci_command_issue_async(ahci, cmd[i]);
    }
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, ahci_command_slot(cmd[8]),
                    ATA_ERR_ABRT, 1000 + 8 * 8);
    for (i = 0; i < 9; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A non-queued command while queued ones are outstanding: NQ error. */
static void test_error_nonqueued_while_queued(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096 + 512);
    AHCICommand *q, *id;

    q = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 5000);
    ahci_command_issue_async(ahci, q);
    id = ahci_command_create(CMD_IDENTIFY);
    ahci_command_set_buffer(id, gbuf + 4096);
    ahci_command_set_size(id, 512);
    ahci_command_commit(ahci, id, port);
    ahci_command_issue_async(ahci, id);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, true, 0, ATA_ERR_ABRT, 0);
    ahci_command_free(q);
    ahci_command_free(id);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * LBA ranges the drive must refuse with IDNF: one sector past the end
 * with the maximum count, beyond capacity, and lba + count past 2^48
 * (where a 48-bit sum would wrap).
 */
static void test_error_lba_out_of_range(void)
{
    static const struct {
        uint64_t lba;
        size_t len;
    } cases[] = {
        { DISK_SECTORS - FPDMA_MAX_SECTORS + 1, FPDMA_MAX_BYTES },
        { DISK_SECTORS, 512 },
        { (1ULL << 48) - 1, 4096 },
        { (1ULL << 48) - 8, FPDMA_MAX_BYTES },
    };
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, FPDMA_MAX_BYTES);
    size_t i;

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        AHCICommand *cmd = ncq_prepare_len(ahci, port, READ_FPDMA_QUEUED,
                                           gbuf, cases[i].len,
                                           cases[i].lba);

        ahci_command_issue_async(ahci, cmd);
        g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_IDNF);
        ncq_recover(ahci, port);
        check_error_log(ahci, port, false, ahci_command_slot(cmd),
                        ATA_ERR_IDNF, cases[i].lba);
        ahci_command_free(cmd);
    }
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Non-queued media commands while queued ones run: the drive aborts them
 * all (NQ set in log 10h), as for IDENTIFY.
 */
static void test_error_nonqueued_media_while_queued(gconstpointer data)
{
    uint8_t ide_cmd = GPOINTER_TO_UINT(data);
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *q, *nq;

    q = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, 6000);
    ahci_command_issue_async(ahci, q);
    nq = ahci_command_create(ide_cmd);
    if (ide_cmd != CMD_FLUSH_CACHE) {
        ahci_command_adjust(nq, 7000, gbuf + 4096, 4096, 0);
    }
    ahci_command_commit(ahci, nq, port);
    ahci_command_issue_async(ahci, nq);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    /* The HBA keeps failed tags in PxSACT until the port is stopped. */
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==, 0);
    check_error_log(ahci, port, true, 0, ATA_ERR_ABRT, 0);
    ahci_command_free(q);
    ahci_command_free(nq);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * After an NCQ error the drive aborts every new queued command until the
 * host reads log 10h (SATA 3.x 13.6.3.2); reading it re-opens the queue.
 */
static void test_error_queued_before_log_read(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *bad, *next;

    bad = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096,
                      DISK_SECTORS);
    ahci_command_issue_async(ahci, bad);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_IDNF);
    ncq_recover(ahci, port);

    next = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096, 4096,
                       100);
    ahci_command_issue_async(ahci, next);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    /* The log still names the first failure, not the aborted command. */
    check_error_log(ahci, port, false, ahci_command_slot(bad), ATA_ERR_IDNF,
                    DISK_SECTORS);
    ahci_command_free(bad);
    ahci_command_free(next);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A PRDT shorter than the sector count: the HBA refuses the command with
 * an overflow (PxIS.OFS, AHCI 1.3.1 6.1.2), a fatal error the host
 * recovers from by restarting the port.  The drive never sees it.
 */
static void test_error_short_prdt(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommandHeader hdr;
    AHCICommand *cmd;
    uint16_t id[256];
    QDict *info;

    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 300);
    /* 8 sectors in the FIS, no PRD at all */
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    hdr.prdtl = 0;
    ahci_set_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    ahci_command_issue_async(ahci, cmd);
    g_assert(ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_OFS);
    info = query_disk(ahci);
    g_assert_cmpint(qdict_get_int(info, "submitted"), ==, 0);
    qobject_unref(info);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    /* As libata does after a host bus error: COMRESET, IDENTIFY. */
    ncq_recover(ahci, port);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Fuzzing finding 7: commands fetched while the drive drops its queue.
 * To drop a queued command whose DMA is still going, the drive waits for
 * it, and that wait runs the main loop's bottom halves: AHCI's command
 * fetch among them, which a non-queued command that completed earlier in
 * the same PxCI write had scheduled.  Here: IDENTIFY (schedules the
 * fetch), a queued 32 MiB read into unmapped memory (its DMA crawls
 * through the bounce buffer), the same tag again (an NCQ error: the drive
 * drops the read and waits), and a CHS READ DMA, which the drive passes
 * to the IDE core at once.  The nested fetch used to start that READ
 * DMA's transfer while the queue was being dropped; the NCQ error then
 * overwrote the port's status with DRDY|ERR, the fetch loop ran the READ
 * DMA a second time over the first one's scatter list, and QEMU crashed
 * in dma_blk_unmap() (UBSan: NULL AddressSpace).  Now a command fetched
 * while the queue is dropped is aborted (a guest error, as a non-queued
 * command beside queued ones is); the abort leaves it in PxCI, as AHCI
 * does with failed commands, and the fetch loop runs it once, after the
 * error.  Without the fix the drive counts one guest error, not two.
 */
static void test_error_fetch_during_drop(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t idbuf = ahci_alloc(ahci, 512);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *id, *a, *b, *r;
    AHCICommandHeader hdr;
    uint32_t mask;
    QDict *info;
    int i;

    id = ahci_command_create(CMD_IDENTIFY);
    ahci_command_set_buffer(id, idbuf);
    ahci_command_set_size(id, 512);
    ahci_command_commit(ahci, id, port);
    a = ncq_prepare_len(ahci, port, READ_FPDMA_QUEUED, UNMAPPED_GPA,
                        FPDMA_MAX_BYTES, 0);
    b = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 2000);
    ncq_forge_tag(ahci, port, b, ahci_command_slot(a));
    /* READ DMA of CHS 0/0/1, 64 KiB, into unmapped memory */
    r = ahci_command_create(CMD_READ_DMA);
    ahci_command_adjust(r, 1, UNMAPPED_GPA, 64 * 1024, 0);
    ahci_command_commit(ahci, r, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(r), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, device), 0xa0);
    g_assert_cmpuint(ahci_command_slot(id), <, ahci_command_slot(a));
    g_assert_cmpuint(ahci_command_slot(b), <, ahci_command_slot(r));

    mask = 1u << ahci_command_slot(id) | 1u << ahci_command_slot(a) |
           1u << ahci_command_slot(b) | 1u << ahci_command_slot(r);
    ahci_px_wreg(ahci, port, AHCI_PX_SACT, 1u << ahci_command_slot(a));
    ahci_px_wreg(ahci, port, AHCI_PX_CI, mask);

    /*
     * The NCQ error is reported (PxIS.TFES), and the READ DMA, left in
     * PxCI by its abort, is fetched again after it and runs once.
     */
    for (i = 0; ahci_px_rreg(ahci, port, AHCI_PX_CI) & mask; i++) {
        g_assert_cmpint(i, <, 100000);
        qtest_clock_step_next(qts);
    }
    g_assert(ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_TFES);
    ahci_get_command_header(ahci, port, ahci_command_slot(r), &hdr);
    g_test_message("READ DMA: %u bytes moved", le32_to_cpu(hdr.prdbc));
    g_assert_cmpuint(le32_to_cpu(hdr.prdbc), ==, 64 * 1024);
    /* The duplicate tag, and the READ DMA that met the queued read */
    info = query_disk(ahci);
    g_assert_cmpint(qdict_get_int(info, "guest-errors"), ==, 2);
    qobject_unref(info);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, ahci_command_slot(a), ATA_ERR_ABRT, 0);
    ahci_command_free(id);
    ahci_command_free(a);
    ahci_command_free(b);
    ahci_command_free(r);
    ahci_free(ahci, idbuf);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

void add_errors_tests(void)
{
    qtest_add_func("/ncq-disk/error/lba-range", test_error_lba_range);
    qtest_add_func("/ncq-disk/error/duplicate-tag", test_error_duplicate_tag);
    qtest_add_func("/ncq-disk/error/beyond-depth", test_error_beyond_depth);
    qtest_add_func("/ncq-disk/ncq/depth-any-tag", test_depth_any_tag_served);
    qtest_add_func("/ncq-disk/error/non-queued-while-queued",
                   test_error_nonqueued_while_queued);
    qtest_add_func("/ncq-disk/error/lba-out-of-range",
                   test_error_lba_out_of_range);
    qtest_add_data_func("/ncq-disk/error/non-queued-while-queued/read-dma",
                        GUINT_TO_POINTER(CMD_READ_DMA_EXT),
                        test_error_nonqueued_media_while_queued);
    qtest_add_data_func("/ncq-disk/error/non-queued-while-queued/flush",
                        GUINT_TO_POINTER(CMD_FLUSH_CACHE),
                        test_error_nonqueued_media_while_queued);
    qtest_add_func("/ncq-disk/error/queued-before-log-read",
                   test_error_queued_before_log_read);
    qtest_add_func("/ncq-disk/error/short-prdt", test_error_short_prdt);
    qtest_add_func("/ncq-disk/error/fetch-during-drop",
                   test_error_fetch_during_drop);
}
