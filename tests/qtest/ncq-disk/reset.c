/*
 * ncq-disk qtests: resets, COMRESET and port stops while commands
 * are queued, parked or held
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * A port reset (COMRESET through PxSCTL) with commands queued drops them:
 * none completes afterwards, however far virtual time moves.
 */
static void test_reset_drops_queue(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 8 * 4096);
    AHCICommand *cmd[8];
    uint16_t id[256];
    QDict *info;
    int i;

    for (i = 0; i < 8; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 7919 * (i + 1));
        ahci_command_issue_async(ahci, cmd[i]);
    }
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 8);
    qobject_unref(info);

    /* COMRESET: DET=1, then DET=0 */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    qtest_clock_step(qts, 5000000000LL);  /* 5 s */

    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 0);
    g_assert_cmpint(qdict_get_int(info, "submitted"), ==, 8);
    g_assert_cmpint(qdict_get_int(info, "completed-reads"), ==, 0);
    qobject_unref(info);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==, 0);

    for (i = 0; i < 8; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    /* As a host does after a reset: IDENTIFY, then carry on. */
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* Issue a WRITE SECTORS EXT of @len bytes from @gbuf to @lba. */
static AHCICommand *pio_write_issue(AHCIQState *ahci, uint8_t port,
                                   uint64_t gbuf, size_t len, uint64_t lba)
{
    AHCICommand *cmd = ahci_command_create(CMD_WRITE_PIO_EXT);

    ahci_command_adjust(cmd, lba, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_command_issue_async(ahci, cmd);
    return cmd;
}

/*
 * Stop the port and start it again at once; what was in flight, if
 * anything, completes while QEMU idles.
 */
static void port_restart(AHCIQState *ahci, uint8_t port)
{
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    qtest_clock_step(ahci->parent->qts, 100000000);
}

/*
 * Fuzzing finding 8: a reset during a PIO write left a block write behind.
 * The IDE core's reset cancels the write's block in flight, which, as a
 * block request cannot be cancelled, means waiting for it; its completion
 * then sends the next block, and the reset forgot that one.  It completed
 * after the reset, raising PxIS.PSS (3 of 3 runs with ide-hd), and into the
 * next command's state: here a second PIO write, then a port stop and
 * restart, which hung (4 of 4 without the PSS check); the fuzzer met NULL
 * cur_cmd in ahci_pio_transfer() after such state.  Patch "hw/ide: finish a
 * PIO transfer chain on reset": the reset finishes the chain it interrupts,
 * as it waits for DMA.  A held write (timing on) is run by the drive before
 * the reset, so it passed before the patch too.
 */
static void test_reset_during_pio_write(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ahci_boot_spec(data, &port);
    size_t len = 256 * 512;
    uint64_t gbuf = ahci_alloc(ahci, len);
    AHCICommand *w1, *w2;
    uint16_t id[256];

    w1 = pio_write_issue(ahci, port, gbuf, len, 0);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);          /* COMRESET */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    ahci_command_free(w1);
    ahci_px_wreg(ahci, port, AHCI_PX_SERR, 0xffffffff);
    ahci_px_wreg(ahci, port, AHCI_PX_IS, 0xffffffff);
    /* Nothing of the interrupted write is left to raise PxIS.PSS */
    qtest_clock_step(ahci->parent->qts, 1000000);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS), ==, 0);

    w2 = pio_write_issue(ahci, port, gbuf, len, 1000);
    port_restart(ahci, port);
    ahci_command_free(w2);
    ahci_free(ahci, gbuf);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * The port stopped and started again while a PIO write is in flight (found
 * by the fuzzer).  Each 512-byte block of WRITE SECTORS EXT goes to the
 * image as its own asynchronous write, and its completion fetches the next
 * block through the port's current command header; starting the port clears
 * that header, so the next completion dereferenced NULL and QEMU died.
 * Upstream's ide-hd, and ncq-disk with timing off, whose non-queued commands
 * take the same path.  Patch "hw/ide/ahci: let a PIO write in flight finish
 * before the port stops" lets the write finish before the port stops.
 */
static void test_port_restart_during_pio_write(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ahci_boot_spec(data, &port);
    size_t len = 256 * 512;
    uint64_t gbuf = ahci_alloc(ahci, len);
    AHCICommand *cmd;
    uint16_t id[256];

    cmd = pio_write_issue(ahci, port, gbuf, len, 0);
    port_restart(ahci, port);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* None of the dropped commands completes, however far time moves. */
static void check_queue_dropped(AHCIQState *ahci, uint8_t port, int n)
{
    QDict *info;

    qtest_clock_step(ahci->parent->qts, 5000000000LL);     /* 5 s */
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 0);
    g_assert_cmpint(qdict_get_int(info, "submitted"), ==, n);
    g_assert_cmpint(qdict_get_int(info, "completed-reads"), ==, 0);
    qobject_unref(info);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==, 0);
}

/* Software reset: SRST set, then clear (AHCI 1.3.1, 10.4.1). */
static void ncq_soft_reset(AHCIQState *ahci, uint8_t port)
{
    QTestState *qts = ahci->parent->qts;
    int i;

    for (i = 0; i < 2; i++) {
        AHCICommand *cmd = ahci_command_create(CMD_FLUSH_CACHE);
        AHCICommandHeader hdr;

        if (i == 0) {
            ahci_command_set_flags(cmd, CMDH_RESET | CMDH_CLR_BSY);
        }
        ahci_command_commit(ahci, cmd, port);
        ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
        /* A control FIS: C bit clear, SRST in the device control field */
        qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, flags), 0);
        qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, control),
                     i == 0 ? 0x04 : 0);
        ahci_command_issue_async(ahci, cmd);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI) &
                        (1u << ahci_command_slot(cmd)), ==, 0);
        ahci_command_free(cmd);
    }
}

/* Each kind of reset with 8 commands queued drops them all. */
static void test_reset_kinds(gconstpointer data)
{
    const char *kind = data;
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 8 * 4096);
    AHCICommand *cmd[8];
    uint16_t id[256];
    int i;

    ncq_queue_reads(ahci, port, gbuf, cmd, 8);
    if (!strcmp(kind, "hba")) {
        ahci_set(ahci, AHCI_GHC, AHCI_GHC_HR);
        g_assert_cmphex(ahci_rreg(ahci, AHCI_GHC) & AHCI_GHC_HR, ==, 0);
    } else {
        ncq_soft_reset(ahci, port);
    }
    check_queue_dropped(ahci, port, 8);
    for (i = 0; i < 8; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    if (!strcmp(kind, "hba")) {
        /* As after power-on: the host sets the HBA up again. */
        ahci_clean_mem(ahci);
        ahci_hba_enable(ahci);
        port = ahci_port_select(ahci);
    }
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Commands issued while COMRESET is asserted (PxSCTL.DET=1) are dropped
 * when it is released; commands issued right after the reset, before
 * any IDENTIFY, are served.
 */
static void test_reset_commands_during_and_after(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4 * 4096);
    AHCICommand *cmd[4], *c;
    uint8_t out[4096], in[4096];
    uint16_t id[256];
    int i;

    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ncq_queue_reads(ahci, port, gbuf, cmd, 4);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    check_queue_dropped(ahci, port, 4);
    for (i = 0; i < 4; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_port_clear(ahci, port);

    /*
     * No IDENTIFY first: PxTFD still holds the reset's diagnostic code
     * (error register 01h, ERR clear), which libqos's checks would take
     * for an error; ncq_wait_done() checks the ERR bit itself.
     */
    memset(out, 0xc3, sizeof(out));
    qtest_memwrite(qts, gbuf, out, sizeof(out));
    c = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, 555);
    ahci_command_issue_async(ahci, c);
    ncq_wait_done(ahci, port, ahci_command_slot(c));
    ahci_command_free(c);
    c = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096, 4096, 555);
    ahci_command_issue_async(ahci, c);
    ncq_wait_done(ahci, port, ahci_command_slot(c));
    ahci_command_free(c);
    qtest_memread(qts, gbuf + 4096, in, sizeof(in));
    g_assert(!memcmp(out, in, sizeof(in)));
    ahci_free(ahci, gbuf);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Stopping the port (PxCMD.ST=0) makes the HBA forget its commands, and
 * the drive drops them (issue 29): a host that restarts the port and
 * reuses their tags at once is served, and the dropped read never
 * completes.  (The drive used to keep them, and took the reuse for a
 * duplicate tag.)
 */
static void test_port_stop_then_reuse_tags(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *a, *b;
    QDict *info;
    int i;

    a = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 1234);
    ahci_command_issue_async(ahci, a);
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==, 0);
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    b = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096, 4096, 4321);
    ncq_forge_tag(ahci, port, b, ahci_command_slot(a));
    ahci_command_issue_async(ahci, b);
    for (i = 0; i < 100000; i++) {
        size_t n;

        g_assert_false(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                       AHCI_PX_TFD_STS_ERR);
        info = query_disk(ahci);
        n = qlist_size(qdict_get_qlist(info, "queue"));
        qobject_unref(info);
        if (!n) {
            break;
        }
        qtest_clock_step_next(ahci->parent->qts);
    }
    qtest_clock_step(ahci->parent->qts, 5000000000LL);     /* 5 s */
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 0);
    g_assert_cmpint(qdict_get_int(info, "completed-reads"), ==, 1);
    qobject_unref(info);
    g_assert_false(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR);
    ahci_command_free(a);
    ahci_command_free(b);
    ahci_free(ahci, gbuf);
    /* b's slot keeps its PxSACT bit (the drive completed tag a) */
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(ahci, port);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A host that never reads its completions: PxIS is never cleared and tags
 * are reissued as soon as PxSACT frees them.  Every write lands.
 */
static void test_never_clears_interrupts(void)
{
    enum { ROUNDS = 4, TAGS = 32 };
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, TAGS * 4096);
    AHCICommand *cmd[TAGS] = { 0 };
    uint8_t out[4096], in[4096];
    int r, i;

    for (r = 0; r < ROUNDS; r++) {
        for (i = 0; i < TAGS; i++) {
            if (cmd[i]) {
                ncq_wait_done(ahci, port, ahci_command_slot(cmd[i]));
                ahci_command_free(cmd[i]);
            }
            memset(out, r * TAGS + i, sizeof(out));
            qtest_memwrite(qts, gbuf + 4096 * i, out, sizeof(out));
            cmd[i] = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED,
                                 gbuf + 4096 * i, 4096, 8 * (r * TAGS + i));
            ahci_command_issue_async(ahci, cmd[i]);
        }
    }
    for (i = 0; i < TAGS; i++) {
        ncq_wait_done(ahci, port, ahci_command_slot(cmd[i]));
        ahci_command_free(cmd[i]);
    }
    g_assert(ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_SDBS);
    ahci_free(ahci, gbuf);

    ahci_port_clear(ahci, port);
    for (i = 0; i < ROUNDS * TAGS; i += 17) {
        memset(out, i, sizeof(out));
        ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 8 * i);
        g_assert(!memcmp(out, in, sizeof(in)));
    }
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * Issue 29, defect 4: a reset or a port stop while a non-queued READ is
 * held for its deadline drops it.  A real drive has not read the media
 * yet: no data reaches the guest's buffer, and no completion follows,
 * however far time moves.
 */
static void test_reset_drops_held_read(gconstpointer data)
{
    const char *kind = data;
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint8_t disk[4096], buf[4096], want[4096];
    uint64_t gbuf = ahci_alloc(ahci, sizeof(buf));
    AHCICommand *cmd;
    uint16_t id[256];

    memset(disk, 0x3c, sizeof(disk));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, disk, sizeof(disk), 777);
    memset(want, 0xa5, sizeof(want));
    qtest_memwrite(qts, gbuf, want, sizeof(want));
    cmd = issue_held(ahci, port, CMD_READ_DMA_EXT, gbuf, sizeof(buf), 777);

    if (!strcmp(kind, "hba")) {
        ahci_set(ahci, AHCI_GHC, AHCI_GHC_HR);
    } else if (!strcmp(kind, "comreset")) {
        ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
        ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    } else {
        ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    }
    ahci_px_wreg(ahci, port, AHCI_PX_IS, 0xffffffff);
    qtest_clock_step(qts, 5000000000LL);        /* 5 s */
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS), ==, 0);
    qtest_memread(qts, gbuf, buf, sizeof(buf));
    g_assert(!memcmp(buf, want, sizeof(buf)));
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);

    if (!strcmp(kind, "hba")) {
        ahci_clean_mem(ahci);
        ahci_hba_enable(ahci);
        port = ahci_port_select(ahci);
    } else if (!strcmp(kind, "port-stop")) {
        ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    }
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, buf, sizeof(buf), 777);
    g_assert(!memcmp(buf, disk, sizeof(buf)));
    ncq_shutdown(ahci);
}

/*
 * A held WRITE is dropped by a reset too, with no completion, but its
 * data, which a real drive takes right after the command, reaches the
 * image (as QEMU's ahci-test expects of a write pending during a reset).
 */
static void test_reset_held_write_lands(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint8_t out[4096], in[4096];
    uint64_t gbuf = ahci_alloc(ahci, sizeof(out));
    AHCICommand *cmd;
    uint16_t id[256];

    memset(out, 0x97, sizeof(out));
    qtest_memwrite(qts, gbuf, out, sizeof(out));
    cmd = issue_held(ahci, port, CMD_WRITE_DMA_EXT, gbuf, sizeof(out), 888);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);          /* COMRESET */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    ahci_px_wreg(ahci, port, AHCI_PX_IS, 0xffffffff);
    qtest_clock_step(qts, 5000000000LL);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS), ==, 0);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 888);
    g_assert(!memcmp(out, in, sizeof(in)));
    ncq_shutdown(ahci);
}

void add_reset_tests(void)
{
    qtest_add_func("/ncq-disk/reset/drops-queue", test_reset_drops_queue);
    qtest_add_data_func("/ncq-disk/reset/hba", "hba", test_reset_kinds);
    qtest_add_data_func("/ncq-disk/reset/srst", "srst", test_reset_kinds);
    qtest_add_func("/ncq-disk/reset/commands-during-and-after",
                   test_reset_commands_during_and_after);
    qtest_add_func("/ncq-disk/reset/port-stop-then-reuse-tags",
                   test_port_stop_then_reuse_tags);
    qtest_add_func("/ncq-disk/guest/never-clears-interrupts",
                   test_never_clears_interrupts);
    qtest_add_data_func("/ncq-disk/reset/port-restart-during-pio-write",
                        "ncq-disk,timing=off",
                        test_port_restart_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/port-restart-before-held-pio-write",
                        "ncq-disk", test_port_restart_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/reset-during-pio-write",
                        "ncq-disk,timing=off", test_reset_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/reset-during-held-pio-write",
                        "ncq-disk", test_reset_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/drops-held-read/comreset",
                        "comreset", test_reset_drops_held_read);
    qtest_add_data_func("/ncq-disk/reset/drops-held-read/hba", "hba",
                        test_reset_drops_held_read);
    qtest_add_data_func("/ncq-disk/reset/drops-held-read/port-stop",
                        "port-stop", test_reset_drops_held_read);
    qtest_add_func("/ncq-disk/reset/held-write-lands",
                   test_reset_held_write_lands);
}
