/*
 * ncq-disk qtests: the virtual clock, a host that stalls and the
 * device's hold of the clock
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * Issue 29 item 7: the drive's wait for a host I/O still in flight at a
 * command's deadline.  The host takes 2 s per request (null-co latency);
 * a queued read's deadline comes long before.  By default the timer
 * callback waits for the host, blocking the main loop: the clock_step
 * that reaches the deadline returns only when the host has finished.
 * With x-hold-clock=on it returns at once, QEMU answers QMP meanwhile,
 * and the read completes when the host has finished, with no clock_step
 * after the deadline's (so at its virtual time).  Both count one host
 * wait.
 */
#define HOLD_CLOCK_IMG "null-co://,file.latency-ns=2000000000"

static void test_host_wait(gconstpointer data)
{
    bool hold = !!data;
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(HOLD_CLOCK_IMG,
                                      hold ? "x-hold-clock=on" :
                                      "x-hold-clock=off", &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;
    int64_t t0, step_us, wait_us;
    uint8_t slot;
    QDict *info;
    int i;

    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 100);
    slot = ahci_command_slot(cmd);
    ahci_command_issue_async(ahci, cmd);
    /* Step to the deadline: one clock_step, timed */
    t0 = g_get_monotonic_time();
    for (i = 0; i < 100; i++) {
        int64_t t = g_get_monotonic_time();

        qtest_clock_step_next(qts);
        step_us = g_get_monotonic_time() - t;
        info = query_disk(ahci);
        if (qdict_get_int(info, "host-waits")) {
            qobject_unref(info);
            break;
        }
        qobject_unref(info);
    }
    g_assert_cmpint(i, <, 100);
    g_test_message("x-hold-clock=%s: the clock_step to the deadline took "
                   "%" PRId64 " ms", hold ? "on" : "off", step_us / 1000);
    if (hold) {
        g_assert_cmpint(step_us, <, 1000 * 1000);
        /* Pending, and QEMU answers */
        g_assert(ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1u << slot));
    } else {
        g_assert_cmpint(step_us, >=, 1500 * 1000);
    }
    /* Wait for the completion without moving the clock */
    for (i = 0; i < 1000 && (ahci_px_rreg(ahci, port, AHCI_PX_SACT) &
                             (1u << slot)); i++) {
        g_usleep(10 * 1000);
    }
    wait_us = g_get_monotonic_time() - t0;
    g_test_message("completed %" PRId64 " ms after the step began",
                   wait_us / 1000);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1u << slot),
                    ==, 0);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                    AHCI_PX_TFD_STS_ERR, ==, 0);
    info = query_disk(ahci);
    g_assert_cmpint(qdict_get_int(info, "host-waits"), ==, 1);
    qobject_unref(info);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * Issue 37, items 2 and 3: a host I/O that does not finish must not stop
 * QEMU.  The ncq-disk on port 0 gets a command whose host I/O takes
 * STALL_MS (a null-co image with that latency stands for a host that
 * does not answer) or never starts (its PRDs in MMIO while other ports
 * hold the bounce buffer); an ide-hd of its own sits on port 5.  By
 * default the drive waits for no host I/O in the main loop or in the
 * vCPU's register write: the register write and the clock step to the
 * deadline return at once, QMP answers within a second, and port 5's
 * IDENTIFY completes with its interrupts (ahci_io() checks PxIS).
 */
#define STALL_MS 4000
#define STALL_IMG "null-co://,file.latency-ns=4000000000"
#define STALL_PORT 5

typedef struct StallCase {
    uint8_t cmd;        /* the command on port 0 */
    bool mmio;          /* its PRDs in MMIO, the bounce buffer taken */
    bool reset;         /* a COMRESET while the drive holds it */
} StallCase;

static const StallCase stall_queued = { READ_FPDMA_QUEUED, false, false };
static const StallCase stall_held_read = { CMD_READ_DMA_EXT, false, false };
static const StallCase stall_held_write = { CMD_WRITE_DMA_EXT, false, false };
static const StallCase stall_held_write_reset = {
    CMD_WRITE_DMA_EXT, false, true
};
static const StallCase stall_queued_mmio = { READ_FPDMA_QUEUED, true, false };
static const StallCase stall_held_write_mmio_reset = {
    CMD_WRITE_DMA_EXT, true, true
};

/* Microseconds since @t0, asserted under one second. */
static void assert_within_a_second(int64_t t0, const char *what)
{
    int64_t us = g_get_monotonic_time() - t0;

    g_test_message("%s took %" PRId64 " ms", what, us / 1000);
    g_assert_cmpint(us, <, 1000 * 1000);
}

/* QMP answers and the other port's drive serves, each within a second. */
static void check_qemu_answers(AHCIQState *ahci)
{
    uint16_t id[256];
    int64_t t0 = g_get_monotonic_time();
    QDict *info = query_disk(ahci);

    qobject_unref(info);
    assert_within_a_second(t0, "query-ncq-disk");
    t0 = g_get_monotonic_time();
    ahci_port_clear(ahci, STALL_PORT);
    ahci_io(ahci, STALL_PORT, CMD_IDENTIFY, id, sizeof(id), 0);
    assert_within_a_second(t0, "IDENTIFY on the other port");
}

static void test_host_stall(gconstpointer data)
{
    const StallCase *c = data;
    g_autofree char *extra = g_strdup_printf(
        "-drive if=none,id=drive1,file=null-co://,format=raw "
        "-device ide-hd,drive=drive1,bus=ide.%d", STALL_PORT);
    AHCIQState *ahci = ahci_boot_device_args("ncq-disk",
                                             c->mmio ? img_path : STALL_IMG,
                                             "x-host-wait-ms=2000", extra);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    uint64_t addr = c->mmio ? ahci->hba_bar.addr : gbuf;
    bool queued = c->cmd == READ_FPDMA_QUEUED;
    AHCICommand *cmd;
    uint16_t id[256];
    uint8_t port, p;
    int64_t t0;
    int i;

    port = ahci_port_select(ahci);
    g_assert_cmpuint(port, ==, 0);
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    if (c->mmio) {
        hold_bounce_buffer(ahci);
    }
    t0 = g_get_monotonic_time();
    if (queued) {
        cmd = ncq_prepare(ahci, port, c->cmd, addr, 4096, 300);
        ahci_command_issue_async(ahci, cmd);
    } else {
        cmd = issue_held(ahci, port, c->cmd, addr, 4096, 300);
    }
    assert_within_a_second(t0, "issuing the command");
    t0 = g_get_monotonic_time();
    if (c->reset) {
        ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);      /* COMRESET */
        ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
        assert_within_a_second(t0, "the COMRESET");
    } else {
        qtest_clock_step(qts, 1000000000);              /* its deadline */
        assert_within_a_second(t0, "the clock step to its deadline");
    }
    check_qemu_answers(ahci);

    if (!c->reset) {
        /* It ends when the host answers or gives up: no step needed */
        for (i = 0; i < 1000 && ncq_busy(ahci, port, ahci_command_slot(cmd));
             i++) {
            g_usleep(10 * 1000);
        }
        g_assert_false(ncq_busy(ahci, port, ahci_command_slot(cmd)));
    }
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    for (p = 1; c->mmio && p <= 4; p++) {
        ahci_px_wreg(ahci, p, AHCI_PX_CMD, 0);
    }
    ncq_recover(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    ncq_shutdown(ahci);
}

void add_time_tests(void)
{
    qtest_add_data_func("/ncq-disk/time/host-stall/queued", &stall_queued,
                        test_host_stall);
    qtest_add_data_func("/ncq-disk/time/host-stall/held-read",
                        &stall_held_read, test_host_stall);
    qtest_add_data_func("/ncq-disk/time/host-stall/held-write",
                        &stall_held_write, test_host_stall);
    qtest_add_data_func("/ncq-disk/time/host-stall/held-write-reset",
                        &stall_held_write_reset, test_host_stall);
    qtest_add_data_func("/ncq-disk/time/host-stall/queued-mmio",
                        &stall_queued_mmio, test_host_stall);
    qtest_add_data_func("/ncq-disk/time/host-stall/held-write-mmio-reset",
                        &stall_held_write_mmio_reset, test_host_stall);
    qtest_add_data_func("/ncq-disk/time/wait-blocks", NULL, test_host_wait);
    qtest_add_data_func("/ncq-disk/time/hold-clock-does-not-block", "on",
                        test_host_wait);
}
