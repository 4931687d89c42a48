/*
 * ncq-disk qtests: queued (NCQ) commands that succeed, in the order
 * the model serves them
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/* Data written with WRITE FPDMA QUEUED reads back identical. */
static void test_ncq_write_read_back(void)
{
    AHCIQState *ahci = ncq_boot(NULL);
    unsigned port = ahci_port_select(ahci);
    const size_t len = 64 * 1024;
    g_autofree uint8_t *out = g_malloc(len);
    g_autofree uint8_t *in = g_malloc0(len);
    size_t i;

    for (i = 0; i < len; i++) {
        out[i] = (i * 131 + 7) ^ (i >> 9);
    }
    ahci_port_clear(ahci, port);
    /*
     * As libata and ahci-test do: IDENTIFY first, which clears the port's
     * power-on error state.
     */
    ahci_io(ahci, port, CMD_IDENTIFY, in, 512, 0);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, len, 4096);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, len, 4096);
    g_assert(memcmp(out, in, len) == 0);
    ncq_shutdown(ahci);
}

/*
 * Completion times and order of n_cmds queued 4 KiB reads submitted at t0
 * straight to the model library, as st3400620as with props' policy.
 */
static void model_completions(const char *props, const uint8_t *slot,
                              const uint64_t *lba, int n_cmds, int64_t t0,
                              int64_t *model_done, int *model_order)
{
    NcqParams *params = ncq_params_builtin("st3400620as");
    NcqModel *m;
    NcqSettings st;
    char err[256];
    int nmodel = 0, i;

    g_assert_nonnull(params);
    m = ncq_model_new(params, 1, err, sizeof(err));
    g_assert_nonnull(m);
    ncq_model_get_settings(m, &st);
    st.write_cache = true;          /* as the drive's block backend says */
    if (props && strstr(props, "policy=fcfs")) {
        ncq_policy_from_name("fcfs", &st.policy);
    }
    g_assert_cmpint(ncq_model_set_settings(m, &st, err, sizeof(err)), ==, 0);
    for (i = 0; i < n_cmds; i++) {
        NcqCmd c = {
            .id = slot[i], .op = NCQ_OP_READ, .lba = lba[i], .sectors = 8,
            .queued = true,
        };
        g_assert_cmpint(ncq_model_submit(m, &c, t0), ==, 0);
    }
    while (nmodel < n_cmds) {
        NcqCompletion done[32];
        int64_t t = ncq_model_next_event(m);
        int n;

        g_assert_cmpint(t, !=, INT64_MAX);
        n = ncq_model_advance(m, t, done, 32);
        for (i = 0; i < n; i++) {
            int k = 0;

            while (slot[k] != done[i].id) {
                k++;
            }
            model_done[k] = t;
            model_order[nmodel++] = k;
        }
    }
    ncq_model_free(m);
    ncq_params_free(params);
}

/*
 * The device completes a crafted set of queued reads in the order and at
 * the virtual times the model library (what ncq-sim runs) computes for
 * the same input: the glue adds nothing and loses nothing.
 */
static void test_matches_model(gconstpointer data)
{
    const char *props = data;
    enum { N = 24 };
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(big_img_path, props, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, N * 4096);
    AHCICommand *cmd[N];
    uint64_t lba[N];
    uint8_t slot[N];
    int64_t dev_done[N], model_done[N];
    int dev_order[N], model_order[N];
    int ndev = 0, i;
    uint32_t pending = 0;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    int64_t t0;

    t0 = qtest_clock_step(qts, 1);    /* reads the clock (+1 ns) */
    for (i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        lba[i] = (x % (BIG_SECTORS / 8)) * 8;
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, lba[i]);
        slot[i] = ahci_command_slot(cmd[i]);
        ahci_command_issue_async(ahci, cmd[i]);
        pending |= 1u << i;
    }
    while (pending) {
        int64_t now = qtest_clock_step_next(qts);
        uint32_t sact = ahci_px_rreg(ahci, port, AHCI_PX_SACT);

        g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR));
        for (i = 0; i < N; i++) {
            if ((pending & (1u << i)) && !(sact & (1u << slot[i]))) {
                dev_done[i] = now;
                dev_order[ndev++] = i;
                pending &= ~(1u << i);
            }
        }
    }

    /* The same commands, straight into the library. */
    model_completions(props, slot, lba, N, t0, model_done, model_order);

    for (i = 0; i < N; i++) {
        g_assert_cmpint(dev_order[i], ==, model_order[i]);
        g_assert_cmpint(dev_done[i], ==, model_done[i]);
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/* Count 0 means 65,536 sectors: 32 MiB go out and come back intact. */
static void test_ncq_count_zero(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    g_autofree uint8_t *out = g_malloc(FPDMA_MAX_BYTES);
    g_autofree uint8_t *in = g_malloc(FPDMA_MAX_BYTES);
    uint64_t gbuf = ahci_alloc(ahci, FPDMA_MAX_BYTES);
    /* from LBA 0, and ending exactly at the last sector */
    const uint64_t lbas[] = { 0, DISK_SECTORS - FPDMA_MAX_SECTORS };
    AHCICommand *cmd;
    size_t i, k;

    for (k = 0; k < ARRAY_SIZE(lbas); k++) {
        for (i = 0; i < FPDMA_MAX_BYTES; i++) {
            out[i] = (i >> 9) * 7 + k + (i & 0xff);
        }
        ncq_bufwrite(qts, gbuf, out, FPDMA_MAX_BYTES);
        cmd = ncq_prepare_len(ahci, port, WRITE_FPDMA_QUEUED, gbuf,
                              FPDMA_MAX_BYTES, lbas[k]);
        ahci_command_issue_async(ahci, cmd);
        ncq_wait_done(ahci, port, ahci_command_slot(cmd));
        ahci_command_free(cmd);

        qtest_memset(qts, gbuf, 0, FPDMA_MAX_BYTES);
        cmd = ncq_prepare_len(ahci, port, READ_FPDMA_QUEUED, gbuf,
                              FPDMA_MAX_BYTES, lbas[k]);
        ahci_command_issue_async(ahci, cmd);
        ncq_wait_done(ahci, port, ahci_command_slot(cmd));
        ahci_command_free(cmd);
        ncq_bufread(qts, gbuf, in, FPDMA_MAX_BYTES);
        g_assert(!memcmp(out, in, FPDMA_MAX_BYTES));
    }
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * A queued command after a non-queued DMA command the drive aborted, as
 * Linux's TRUSTED RECEIVE DMA probe once was (code 5Dh, which neither the
 * drive nor QEMU's IDE core knows): the error handler restarts the port
 * and issues queued reads.  The FIS that accepts the first one must
 * carry no error (no TFES), its PxCI bit must clear, and each read's data
 * must land in its own PRDT buffer and nowhere else, even after the host
 * has reused that buffer and issued the next command (a slot left in
 * PxCI was fetched and run again then: a guest's heap corrupted).
 */
#define ATA_TRUSTED_RCV_DMA 0x5d

static void ncq_wait_sact(AHCIQState *ahci, uint8_t port, uint8_t slot)
{
    int i;

    for (i = 0; i < 100000; i++) {
        uint32_t is = ahci_px_rreg(ahci, port, AHCI_PX_IS);

        g_assert_cmphex(is & AHCI_PX_IS_TFES, ==, 0);
        if (!(ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1u << slot))) {
            return;
        }
        qtest_clock_step_next(ahci->parent->qts);
    }
    g_assert_not_reached();
}

static void test_ncq_after_aborted_non_queued(void)
{
    enum { LEN = 4096, GUARD = 4096, AREA = 3 * GUARD + 2 * LEN };
    static uint8_t data[2][LEN], want[AREA], got[AREA];
    const uint64_t lba[2] = { 200, 300 };
    uint8_t port, status, slot[2];
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t area = ahci_alloc(ahci, AREA), scratch = ahci_alloc(ahci, LEN);
    const uint64_t off[2] = { GUARD, 2 * GUARD + LEN };
    AHCICommand *cmd;
    int i, j;

    for (i = 0; i < 2; i++) {
        for (j = 0; j < LEN; j++) {
            data[i][j] = 0x11 * (i + 1) + j * 7;
        }
        ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data[i], LEN, lba[i]);
    }
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, ATA_TRUSTED_RCV_DMA,
                            0, 0, LEN / 512, scratch, LEN, &status),
                    ==, ATA_ERR_ABRT);

    memset(want, 0xa5, AREA);
    qtest_memset(qts, area, 0xa5, AREA);
    for (i = 0; i < 2; i++) {
        cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, area + off[i], LEN,
                          lba[i]);
        slot[i] = ahci_command_slot(cmd);
        ahci_command_issue_async(ahci, cmd);
        /* accepted: no error in the FIS, TFD or IS; PxCI clear */
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS) &
                        AHCI_PX_IS_TFES, ==, 0);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                        AHCI_PX_TFD_STS_ERR, ==, 0);
        g_assert_cmphex(d2h_status(ahci, port) & 0x01, ==, 0);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI), ==, 0);
        ncq_wait_sact(ahci, port, slot[i]);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI), ==, 0);
        ahci_command_free(cmd);

        memcpy(want + off[i], data[i], LEN);
        qtest_memread(qts, area, got, AREA);
        g_assert(!memcmp(got, want, AREA));
        /* the host reuses the buffer: nothing may write it again */
        memset(want + off[i], 0x3c, LEN);
        qtest_memset(qts, area + off[i], 0x3c, LEN);
    }
    g_assert_cmpuint(slot[0], !=, slot[1]);
    qtest_memread(qts, area, got, AREA);
    g_assert(!memcmp(got, want, AREA));
    ahci_free(ahci, area);
    ahci_free(ahci, scratch);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

void add_queue_tests(void)
{
    qtest_add_func("/ncq-disk/ncq/write-read-back", test_ncq_write_read_back);
    qtest_add_data_func("/ncq-disk/ncq/matches-model/sptf", NULL,
                        test_matches_model);
    qtest_add_data_func("/ncq-disk/ncq/matches-model/fcfs", "policy=fcfs",
                        test_matches_model);
    qtest_add_func("/ncq-disk/ncq/count-zero-is-65536", test_ncq_count_zero);
    qtest_add_func("/ncq-disk/ncq/after-aborted-non-queued",
                   test_ncq_after_aborted_non_queued);
}
