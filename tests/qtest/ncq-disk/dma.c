/*
 * ncq-disk qtests: DMA to MMIO, bounce buffers and parked DMA, on
 * ncq-disk and upstream's ide-hd
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

static void test_dma_to_mmio_does_not_hang(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "x-host-wait-ms=100", &port);
    uint64_t mmio = ahci->hba_bar.addr;
    AHCICommand *cmd;
    QDict *info;
    uint8_t p, err;

    hold_bounce_buffer(ahci);
    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, mmio, 4096, 300);
    ahci_command_issue_async(ahci, cmd);
    err = ncq_wait_error(ahci, port);
    g_assert_cmphex(err & ATA_ERR_ABRT, ==, ATA_ERR_ABRT);
    info = query_disk(ahci);                /* QEMU still answers */
    g_assert_cmpint(qdict_get_int(info, "submitted"), ==, 1);
    qobject_unref(info);
    ahci_command_free(cmd);
    /* The other ports let go of the bounce buffer; the drive serves. */
    for (p = 1; p <= 4; p++) {
        ahci_px_wreg(ahci, p, AHCI_PX_CMD, 0);
    }
    ncq_recover(ahci, port);
    ncq_read_log(ahci, port, 0x10, 0, (uint8_t[512]) {});
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Fuzzing finding 10: a port stop while a non-queued DMA waits for the
 * bounce buffer.  AHCI's port stop waits for the port's DMA by draining the
 * block layer, then asserts that it ended; a DMA parked for the bounce
 * buffer has no request in flight, so QEMU aborted (ide-hd too). Patch
 * "hw/ide: cancel a DMA parked for a bounce buffer when the port stops"
 * cancels it, and the command ends with an ATA abort.  With timing on,
 * ncq-disk starts the READ DMA at its model deadline, which the clock step
 * passes.
 */
static void test_port_stop_cancels_parked_dma(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ahci_boot_spec(data, &port);
    AHCICommand *cmd;
    uint32_t slot_bit;
    uint16_t id[256];
    uint8_t p;

    hold_bounce_buffer(ahci);
    cmd = ahci_command_create(CMD_READ_DMA_EXT);
    ahci_command_adjust(cmd, 300, ahci->hba_bar.addr, 4096, 0);
    ahci_command_commit(ahci, cmd, port);
    slot_bit = 1u << ahci_command_slot(cmd);
    ahci_command_issue_async(ahci, cmd);
    /* its DMA cannot start: the command stays issued */
    qtest_clock_step(ahci->parent->qts, 100000000);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI) & slot_bit, ==,
                    slot_bit);
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                    (AHCI_PX_TFD_STS_BSY | AHCI_PX_TFD_STS_DRQ), ==, 0);
    ahci_command_free(cmd);

    for (p = 1; p <= 4; p++) {
        ahci_px_wreg(ahci, p, AHCI_PX_CMD, 0);
    }
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * How far the image has been written: the block layer's own high-water
 * mark (query-blockstats), which counts every piece of a DMA as it lands.
 */
static uint64_t drive_written_to(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-blockstats' }");
    const QListEntry *e;
    int64_t end = -1;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(rsp, "return"), e) {
        QDict *dev = qobject_to(QDict, qlist_entry_obj(e));

        if (!g_strcmp0(qdict_get_try_str(dev, "device"), "drive0")) {
            end = qdict_get_int(qdict_get_qdict(dev, "stats"),
                                "wr_highest_offset");
        }
    }
    qobject_unref(rsp);
    g_assert_cmpint(end, >=, 0);
    return end;
}

/*
 * A reset stops a DMA from MMIO part-way.  A queued 32 MiB write from LBA 0
 * whose PRDs point where nothing is mapped goes through the bounce buffer
 * one 4 KiB piece at a time; a COMRESET right after it is issued cancels it.
 * The cancel used to wait for all 8,192 pieces (minutes under the fuzzer's
 * ASan build: a guest could stall QEMU that long); patch
 * "system/dma-helpers: stop a cancelled DMA at the next piece" stops the
 * DMA at the next piece, so the image is written far less than the
 * command asked.
 * Upstream's ide-hd, whose port reset cancels the same way, and ncq-disk
 * alike (power-loss=off: else the reset finds the write still reading the
 * sectors' old contents).  The image is null-co with 5 ms per request, so
 * that the whole DMA takes 41 s: on a raw file it took a few seconds, and a
 * test process the machine's load held back that long saw 6.9 MB of it
 * written before its reset arrived (and once all 32 MiB).
 */
#define SLOW_NULL_IMG "null-co://,file.latency-ns=5000000"

static void test_reset_stops_dma_from_mmio(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ahci_boot_spec_img(data, SLOW_NULL_IMG, &port);
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd;
    uint16_t id[256];
    uint8_t buf[4096];
    uint64_t written;

    g_assert_cmpuint(drive_written_to(qts), ==, 0);
    cmd = ncq_prepare_len(ahci, port, WRITE_FPDMA_QUEUED, UNMAPPED_GPA,
                          FPDMA_MAX_BYTES, 0);
    ahci_command_issue_async(ahci, cmd);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);          /* COMRESET */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    written = drive_written_to(qts);
    g_test_message("%s: %" PRIu64 " of %d bytes written when the reset "
                   "returned", (const char *)data, written, FPDMA_MAX_BYTES);
    g_assert_cmpuint(written, <, FPDMA_MAX_BYTES / 2);
    ahci_command_free(cmd);

    /* Still serving (null-co keeps no data to compare) */
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, buf, sizeof(buf), 100);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, buf, sizeof(buf), 100);
    g_assert_cmpuint(drive_written_to(qts), ==, 100 * 512 + sizeof(buf));
    ncq_shutdown(ahci);
}

/*
 * Fuzzing finding 11: a DMA piece that stops at an unaligned size must not
 * leak the bounce buffer.  A WRITE DMA EXT of 17 sectors whose PRDs are 7
 * bytes of RAM, 8 KiB where nothing is mapped (through the 4 KiB bounce
 * buffer) and 505 bytes of RAM: the first piece maps 7 + 4,096 bytes and
 * stops.  dma_blk_cb() used to keep the 7 unaligned bytes and drop the
 * bounce buffer from its vector without unmapping it, so the bounce
 * buffer stayed taken for good: the rest of the DMA waited for it for
 * ever (or, with a little of it left, crawled a few bytes per request).
 * Now the unaligned tail goes with the next piece: all 8,704 bytes are
 * written, and a second such command runs too.  Upstream's ide-hd and
 * ncq-disk (which holds the command for its deadline) alike.
 */
static void dma_unaligned_write(AHCIQState *ahci, uint8_t port,
                                uint64_t gbuf, uint64_t lba)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ahci_command_create(CMD_WRITE_DMA_EXT);
    uint64_t prdt;
    uint8_t slot;
    int i;
    struct {
        uint64_t addr;
        uint32_t len;
    } prds[3] = {
        { gbuf, 7 }, { UNMAPPED_GPA, 8192 }, { gbuf + 7, 505 },
    };

    /* 17 sectors in 4 KiB PRDs: three of them, rewritten below */
    ahci_command_adjust(cmd, lba, gbuf, 17 * 512, 4096);
    ahci_command_commit(ahci, cmd, port);
    slot = ahci_command_slot(cmd);
    prdt = ahci->port[port].ctba[slot] + 0x80;
    g_assert_cmpuint(ahci->port[port].prdtl[slot], ==, 3);
    for (i = 0; i < 3; i++) {
        qtest_writeq(qts, prdt + 16 * i, prds[i].addr);
        qtest_writel(qts, prdt + 16 * i + 8, 0);
        qtest_writel(qts, prdt + 16 * i + 12, prds[i].len - 1);
    }
    ahci_command_issue_async(ahci, cmd);
    for (i = 0; i < 1000 && (ahci_px_rreg(ahci, port, AHCI_PX_CI) &
                             (1u << slot)); i++) {
        qtest_clock_step_next(qts);
    }
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot), ==,
                    0);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                    AHCI_PX_TFD_STS_ERR, ==, 0);
    ahci_command_free(cmd);
    ahci_port_clear(ahci, port);
}

static void test_dma_unaligned_piece_keeps_bounce(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ahci_boot_spec(data, &port);
    uint64_t gbuf = ahci_alloc(ahci, 512);

    dma_unaligned_write(ahci, port, gbuf, 0);
    g_assert_cmpuint(drive_written_to(ahci->parent->qts), ==, 17 * 512);
    dma_unaligned_write(ahci, port, gbuf, 17);
    g_assert_cmpuint(drive_written_to(ahci->parent->qts), ==, 34 * 512);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Issue 37 item 5: the same write with the HBA's bounce buffer below the
 * 512-byte alignment (x-max-bounce-buffer-size=256).  Patch
 * "system/dma-helpers: keep what a DMA piece mapped when aligning it"
 * gave every short piece back to wait for more of the bounce buffer,
 * which can never hold an aligned piece: the DMA waited for ever, the
 * bounce buffer free.  Now such a piece goes as it is.
 */
static void test_dma_small_bounce_buffer(gconstpointer data)
{
    const char *spec = data;
    const char *props = strchr(spec, ',');
    g_autofree char *type = g_strndup(spec, props ? props - spec
                                                  : strlen(spec));
    AHCIQState *ahci = ahci_boot_device_args(
        type, img_path, props ? props + 1 : NULL,
        "-global ich9-ahci.x-max-bounce-buffer-size=256");
    uint64_t gbuf;
    uint16_t id[256];
    uint8_t port;

    port = ahci_port_select(ahci);
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    gbuf = ahci_alloc(ahci, 512);
    dma_unaligned_write(ahci, port, gbuf, 0);
    g_assert_cmpuint(drive_written_to(ahci->parent->qts), ==, 17 * 512);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

void add_dma_tests(void)
{
    qtest_add_func("/ncq-disk/error/dma-to-mmio-does-not-hang",
                   test_dma_to_mmio_does_not_hang);
    qtest_add_data_func("/ncq-disk/reset/stops-dma-from-mmio",
                        "ncq-disk,power-loss=off",
                        test_reset_stops_dma_from_mmio);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-reset-stops-dma-from-mmio",
                        "ide-hd", test_reset_stops_dma_from_mmio);
    qtest_add_data_func("/ncq-disk/dma/small-bounce-buffer", "ncq-disk",
                        test_dma_small_bounce_buffer);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-dma-small-bounce-buffer",
                        "ide-hd", test_dma_small_bounce_buffer);
    qtest_add_data_func("/ncq-disk/dma/unaligned-piece-keeps-bounce-buffer",
                        "ncq-disk", test_dma_unaligned_piece_keeps_bounce);
    qtest_add_data_func(
        "/ncq-disk/upstream/ide-hd-dma-unaligned-piece-keeps-bounce-buffer",
        "ide-hd", test_dma_unaligned_piece_keeps_bounce);
    qtest_add_data_func("/ncq-disk/reset/port-stop-cancels-parked-dma",
                        "ncq-disk", test_port_stop_cancels_parked_dma);
    qtest_add_data_func(
        "/ncq-disk/reset/port-stop-cancels-parked-dma/timing-off",
        "ncq-disk,timing=off", test_port_stop_cancels_parked_dma);
    qtest_add_data_func(
        "/ncq-disk/upstream/ide-hd-port-stop-cancels-parked-dma", "ide-hd",
        test_port_stop_cancels_parked_dma);
}
