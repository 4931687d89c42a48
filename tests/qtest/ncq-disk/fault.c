/*
 * ncq-disk qtests: injected faults (UNC, write errors, hangs, slow
 * sectors) and their QMP commands
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * Fault injection and power loss (docs/faults.md): the ATA outcome byte
 * for byte, and a drive that goes on serving afterwards.
 */

/* An injected fault's counters, from query-ncq-disk-faults. */
static void check_fault_counts(AHCIQState *ahci, int index, int64_t matched,
                               int64_t hits)
{
    QDict *rsp = qtest_qmp(ahci->parent->qts,
                           "{ 'execute': 'query-ncq-disk-faults', "
                           "  'arguments': { 'id': 'disk0' } }");
    QListEntry *e;
    QDict *rule = NULL;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(rsp, "return"), e) {
        QDict *r = qobject_to(QDict, qlist_entry_obj(e));

        if (qdict_get_int(r, "index") == index) {
            rule = r;
        }
    }
    g_assert_nonnull(rule);
    g_assert_cmpint(qdict_get_int(rule, "matched"), ==, matched);
    g_assert_cmpint(qdict_get_int(rule, "hits"), ==, hits);
    qobject_unref(rsp);
}

/*
 * An injected UNC on a queued read: NCQ error, status DRDY|ERR, error
 * UNC, log 10h names the tag and the first failing LBA; the queued read
 * beside it is aborted; then the drive serves again.
 */
static void test_fault_unc_ncq(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "faults=unc@2000+8", &port);
    uint64_t gbuf = ahci_alloc(ahci, 8192 + 4096);
    AHCICommand *cmd, *other;
    uint32_t tfd;

    other = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 8192, 4096,
                        90000);
    ahci_command_issue_async(ahci, other);
    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 8192, 1996);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_UNC);
    tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);
    g_assert_cmphex(tfd & 0xff, ==, ATA_STS_DRDY_ERR);
    ncq_recover(ahci, port);
    check_media_error_log(ahci, port, ahci_command_slot(cmd), ATA_ERR_UNC,
                          2000, 16);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==, 0);
    check_fault_counts(ahci, 0, 1, 1);
    ahci_command_free(cmd);
    ahci_command_free(other);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A one-shot write error: ABRT with the LBA in log 10h; the retry works. */
static void test_fault_write_ncq(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "faults=werr@3000+4:once",
                                      &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    uint8_t out[4096], in[4096];
    AHCICommand *cmd;

    memset(out, 0xc3, sizeof(out));
    qtest_memwrite(ahci->parent->qts, gbuf, out, sizeof(out));
    cmd = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, 3000);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    check_media_error_log(ahci, port, ahci_command_slot(cmd), ATA_ERR_ABRT,
                          3000, 8);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, sizeof(out), 3000);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 3000);
    g_assert(!memcmp(out, in, sizeof(in)));
    check_fault_counts(ahci, 0, 2, 1);
    ncq_shutdown(ahci);
}

/*
 * A non-queued READ DMA EXT meets an UNC: the D2H Register FIS carries
 * DRDY|ERR, UNC and, in its LBA fields, the first failing sector.
 */
static void test_fault_unc_non_queued(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "faults=unc@0x10002+8",
                                      &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *cmd = ahci_command_create(CMD_READ_DMA_EXT);
    uint8_t fis[20];
    uint16_t id[256];
    uint64_t lba;

    ahci_command_adjust(cmd, 0x10000, gbuf, 8192, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_UNC);
    qtest_memread(qts, ahci->port[port].fb + 0x40, fis, sizeof(fis));
    g_assert_cmphex(fis[0], ==, 0x34);                  /* D2H Register */
    g_assert_cmphex(fis[2], ==, ATA_STS_DRDY_ERR);
    g_assert_cmphex(fis[3], ==, ATA_ERR_UNC);
    lba = fis[4] | (fis[5] << 8) | (fis[6] << 16) | ((uint64_t)fis[8] << 24) |
          ((uint64_t)fis[9] << 32) | ((uint64_t)fis[10] << 40);
    g_assert_cmphex(lba, ==, 0x10002);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    /* as a host's error handler does: recover, IDENTIFY, carry on */
    ncq_recover(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A hung command never completes, however long the clock runs, while the
 * others do; a COMRESET drops it and the retry (one-shot rule) completes.
 */
static void test_fault_hang(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "faults=hang@4000:once",
                                      &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *hung, *ok;
    uint8_t in[4096];
    uint16_t id[256];
    QDict *info;
    QList *queue;

    hung = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 4000);
    ahci_command_issue_async(ahci, hung);
    ok = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096, 4096, 50000);
    ahci_command_issue_async(ahci, ok);
    qtest_clock_step(qts, 60000 * FAULT_MS);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==,
                    1u << ahci_command_slot(hung));
    info = query_disk(ahci);
    queue = qdict_get_qlist(info, "queue");
    g_assert_cmpint(qlist_size(queue), ==, 1);
    g_assert_cmpint(qdict_get_int(qobject_to(QDict, qlist_peek(queue)),
                                  "lba"), ==, 4000);
    qobject_unref(info);

    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    qtest_clock_step(qts, 1000 * FAULT_MS);
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 0);
    qobject_unref(info);
    ahci_command_free(hung);
    ahci_command_free(ok);
    ahci_free(ahci, gbuf);
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 4000);
    check_fault_counts(ahci, 0, 2, 1);
    ncq_shutdown(ahci);
}

/* A slow region adds its delay; without the rule the same read is fast. */
static void test_fault_slow(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path,
                                      "faults=slow@5000+8:delay=250ms",
                                      &port);
    int64_t slow, fast;
    QDict *rsp;

    slow = ncq_read_latency(ahci, port, 5000);
    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-fault-clear', "
                    "  'arguments': { 'id': 'disk0' } }");
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    fast = ncq_read_latency(ahci, port, 5000);
    g_assert_cmpint(slow, >=, 250 * FAULT_MS);
    g_assert_cmpint(slow, <, 250 * FAULT_MS + 50 * FAULT_MS);
    g_assert_cmpint(fast, <, 50 * FAULT_MS);
    ncq_shutdown(ahci);
}

/* Rules over QMP: add, list with counters, clear one, clear all, errors. */
static void test_fault_qmp(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "power-loss=off", &port);
    QTestState *qts = ahci->parent->qts;
    QDict *rsp;
    QList *list;
    uint8_t in[4096];
    int i;

    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-fault-add', 'arguments': "
                    "{ 'id': 'disk0', 'rules': "
                    "  'unc@10+2:every=2;slow@20+1:delay=1ms:writes' } }");
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    for (i = 0; i < 3; i++) {
        uint64_t gbuf = ahci_alloc(ahci, 4096);
        AHCICommand *cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf,
                                       4096, 8);

        ahci_command_issue_async(ahci, cmd);
        if (i == 1) {
            g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_UNC);
            ncq_recover(ahci, port);
            check_media_error_log(ahci, port, ahci_command_slot(cmd),
                                  ATA_ERR_UNC, 10, 8);
        } else {
            ncq_wait_done(ahci, port, ahci_command_slot(cmd));
        }
        ahci_command_free(cmd);
        ahci_free(ahci, gbuf);
    }
    rsp = qtest_qmp(qts, "{ 'execute': 'query-ncq-disk-faults', "
                    "  'arguments': { 'id': 'disk0' } }");
    list = qdict_get_qlist(rsp, "return");
    g_assert_cmpint(qlist_size(list), ==, 2);
    g_assert_cmpstr(qdict_get_str(qobject_to(QDict, qlist_peek(list)),
                                  "rule"), ==, "unc@10+2:every=2");
    qobject_unref(rsp);
    check_fault_counts(ahci, 0, 3, 1);
    check_fault_counts(ahci, 1, 0, 0);

    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-fault-clear', "
                    "  'arguments': { 'id': 'disk0', 'index': 0 } }");
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    rsp = qtest_qmp(qts, "{ 'execute': 'query-ncq-disk-faults', "
                    "  'arguments': { 'id': 'disk0' } }");
    list = qdict_get_qlist(rsp, "return");
    g_assert_cmpint(qlist_size(list), ==, 1);
    g_assert_cmpstr(qdict_get_str(qobject_to(QDict, qlist_peek(list)),
                                  "kind"), ==, "slow");
    qobject_unref(rsp);

    /* a bad rule: nothing is added, the error names the fix */
    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-fault-add', 'arguments': "
                    "{ 'id': 'disk0', 'rules': 'unc@1;slow@2' } }");
    g_assert(strstr(qdict_get_str(qdict_get_qdict(rsp, "error"), "desc"),
                    "fault rule 2 'slow@2': slow needs :delay=TIME"));
    qobject_unref(rsp);
    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-fault-clear', "
                    "  'arguments': { 'id': 'disk0', 'index': 1 } }");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0' } }");
    g_assert(strstr(qdict_get_str(qdict_get_qdict(rsp, "error"), "desc"),
                    "start it with power-loss=on"));
    qobject_unref(rsp);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 10);
    ncq_shutdown(ahci);
}

void add_fault_tests(void)
{
    qtest_add_func("/ncq-disk/fault/unc-ncq", test_fault_unc_ncq);
    qtest_add_func("/ncq-disk/fault/write-ncq", test_fault_write_ncq);
    qtest_add_func("/ncq-disk/fault/unc-non-queued",
                   test_fault_unc_non_queued);
    qtest_add_func("/ncq-disk/fault/hang", test_fault_hang);
    qtest_add_func("/ncq-disk/fault/slow", test_fault_slow);
    qtest_add_func("/ncq-disk/fault/qmp", test_fault_qmp);
}
