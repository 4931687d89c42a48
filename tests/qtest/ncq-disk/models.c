/*
 * ncq-disk qtests: every built-in model boots and serves commands
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * Every built-in model (DiskSim's drive library among them) realizes and
 * serves queued reads: IDENTIFY reports its rotation rate, and a batch of
 * random and sequential READ FPDMA QUEUED commands completes without
 * error, taking model time on the virtual clock.
 */
static void test_builtin_model_serves(gconstpointer data)
{
    const char *name = data;
    g_autofree char *props = g_strdup_printf("model=%s", name);
    NcqParams *params = ncq_params_builtin(name);
    enum { N = 8 };
    uint8_t port;
    AHCIQState *ahci;
    QTestState *qts;
    uint64_t gbuf;
    AHCICommand *cmd[N];
    uint16_t id[256];
    uint32_t pending = 0;
    int64_t t0, now = 0;
    int i;

    g_assert_nonnull(params);
    /*
     * a host-managed model on an image of its capacity (its LBAs here are
     * in its conventional zones)
     */
    ahci = ncq_boot_ready(params->zone_sectors ? zoned_img_path : img_path,
                          props, &port);
    qts = ahci->parent->qts;
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmpuint(le16_to_cpu(id[217]), ==,
                     params->kind == NCQ_KIND_SSD ? 1 : params->rpm);
    gbuf = ahci_alloc(ahci, N * 65536);
    t0 = qtest_clock_step(qts, 1);    /* reads the clock (+1 ns) */
    for (i = 0; i < N; i++) {
        /* half random 4 KiB reads, half one sequential run of 64 KiB */
        uint64_t lba = i < N / 2 ? (i * 40503ULL % (DISK_SECTORS / 8)) * 8
                                 : 4096 + (i - N / 2) * 128;
        size_t len = i < N / 2 ? 4096 : 65536;

        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED,
                             gbuf + 65536 * i, len, lba);
        ahci_command_issue_async(ahci, cmd[i]);
        pending |= 1u << ahci_command_slot(cmd[i]);
    }
    while (ahci_px_rreg(ahci, port, AHCI_PX_SACT) & pending) {
        g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR));
        now = qtest_clock_step_next(qts);
    }
    /* all done without error, through Set Device Bits FISes */
    g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) & AHCI_PX_TFD_STS_ERR));
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_SDBS,
                    ==, AHCI_PX_IS_SDBS);
    /* a mechanical drive needs at least one seek or rotation for these */
    if (params->kind == NCQ_KIND_HDD) {
        g_assert_cmpint(now - t0, >, 1000000);
    }
    for (i = 0; i < N; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    ncq_params_free(params);
    ncq_shutdown(ahci);
}

/* One test per built-in model, from the library's own list. */
void add_models_tests(void)
{
    g_auto(GStrv) names = g_strsplit(ncq_params_builtin_names(), ", ", -1);
    int i;

    for (i = 0; names[i]; i++) {
        g_autofree char *path = g_strdup_printf("/ncq-disk/models/%s",
                                                names[i]);
        /* the test data must outlive g_test_run(): not freed */
        qtest_add_data_func(path, g_strdup(names[i]),
                            test_builtin_model_serves);
    }
}
