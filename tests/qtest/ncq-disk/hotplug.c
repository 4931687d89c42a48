/*
 * ncq-disk qtests: hot-plug and hot-unplug, with commands queued or
 * halted
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * device_del of a drive on an ich9-ahci port with commands queued (patch
 * 21, docs/power-and-unplug.md): QEMU stays up, the port reports the lost
 * link (PxSSTS.DET 0, PxSERR.DIAG.N/X, PxIS.PRCS/PCS); device_add of a
 * new drive brings the link back and the host can talk to it.
 */
static void test_hotplug_unplug(gconstpointer data)
{
    const char *type = data;
    uint8_t port;
    AHCIQState *ahci = ahci_boot_ready(type, img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 8 * 4096);
    AHCICommand *cmd[8];
    uint16_t id[256];
    int i;

    for (i = 0; i < 8; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 7919 * (i + 1));
        ahci_command_issue_async(ahci, cmd[i]);
    }
    ahci_px_wreg(ahci, port, AHCI_PX_IS, 0xffffffff);
    qtest_qmp_device_del(qts, "disk0");

    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_DET, ==, 0);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SERR) &
                    (AHCI_PX_SERR_DIAG_X | (1 << 16)), ==,
                    AHCI_PX_SERR_DIAG_X | (1 << 16));
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS) &
                    (AHCI_PX_IS_PRCS | AHCI_PX_IS_PCS), ==,
                    AHCI_PX_IS_PRCS | AHCI_PX_IS_PCS);
    /* nothing completes any more, the clock runs on */
    qtest_clock_step(qts, 5000000000LL);
    for (i = 0; i < 8; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);

    /* a new drive in the same port */
    ahci_px_wreg(ahci, port, AHCI_PX_SERR, 0xffffffff);
    ahci_px_wreg(ahci, port, AHCI_PX_IS, 0xffffffff);
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-add', "
                             "'arguments': { 'driver': 'raw', "
                             "'node-name': 'img1', 'file': { "
                             "'driver': 'file', 'filename': %s } } }",
                             img_path);
    qtest_qmp_device_add(qts, type, "disk1",
                         "{ 'drive': 'img1', 'bus': 'ide.0' }");
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_DET, ==, 3);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_IS) &
                    AHCI_PX_IS_PRCS, ==, AHCI_PX_IS_PRCS);
    /* as a host does: COMRESET, then IDENTIFY */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    ncq_shutdown(ahci);
}

/* The fw_cfg file @name as a string ("" when empty or absent). */
static char *fw_cfg_file(QTestState *qts, const char *name)
{
    QFWCFG *fw_cfg = pc_fw_cfg_init(qts);
    size_t len = qfw_cfg_get_file(fw_cfg, name, NULL, 0);
    char *buf = g_malloc0(len + 1);

    qfw_cfg_get_file(fw_cfg, name, buf, len);
    pc_fw_cfg_uninit(fw_cfg);
    return buf;
}

/*
 * device_del of a drive with a bootindex, then system_reset (issue 29):
 * the firmware's boot order no longer names it (the reset used to walk
 * the freed device, a use after free under ASan).  A device_add that
 * fails to realize leaves the port free: the next drive goes there, with
 * the same bootindex, and is the only boot entry after the next reset.
 */
static void test_hotplug_bootindex(gconstpointer data)
{
    const char *type = data;
    uint8_t port;
    AHCIQState *ahci = ahci_boot_ready(type, img_path, "bootindex=1", &port);
    QTestState *qts = ahci->parent->qts;
    g_autofree char *before = NULL;
    g_autofree char *unplugged = NULL;
    g_autofree char *replugged = NULL;
    QDict *rsp;

    system_reset(qts);
    before = fw_cfg_file(qts, "bootorder");
    g_assert_nonnull(strstr(before, "/disk@0"));

    qtest_qmp_device_del(qts, "disk0");
    system_reset(qts);
    unplugged = fw_cfg_file(qts, "bootorder");
    g_assert_cmpstr(unplugged, ==, "");

    /* ncq-disk fails on its model, ide-hd on its geometry */
    if (strcmp(type, "ide-hd")) {
        rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': { "
                        "'driver': %s, 'id': 'bad', 'drive': 'drive0', "
                        "'bus': 'ide.0', 'bootindex': 1, "
                        "'model': 'no-such-model' } }", type);
    } else {
        rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': { "
                        "'driver': %s, 'id': 'bad', 'drive': 'drive0', "
                        "'bus': 'ide.0', 'bootindex': 1, "
                        "'cyls': 70000 } }", type);
    }
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    qtest_qmp_device_add(qts, type, "disk1",
                         "{ 'drive': 'drive0', 'bus': 'ide.0', "
                         "'bootindex': 1 }");
    system_reset(qts);
    replugged = fw_cfg_file(qts, "bootorder");
    g_assert_cmpstr(replugged, ==, before);
    ncq_shutdown(ahci);
}

/*
 * device_del while a PIO write is in flight and a READ FPDMA QUEUED waits
 * behind it in PxCI (issue 29).  Unplugging waits for the write, whose
 * completion schedules AHCI's command fetch in a bottom half; a read by
 * the drive's other user (qemu-io) is still in flight when the device is
 * unrealized, so the drain there runs bottom halves.  The fetch used to
 * run then and submit the queued read to the drive on its way out, its
 * model already freed.  Now the port fetches nothing after the unplug:
 * the read stays in PxCI.  ahci-test's /ahci/hotplug/unplug-pending-cmd
 * is the same with an IDENTIFY, for ide-hd.
 */
static void test_hotplug_unplug_pending_ncq(void)
{
    AHCIQState *ahci = g_new0(AHCIQState, 1);
    QTestState *qts;
    AHCICommand *write, *read;
    uint64_t wbuf, rbuf;
    uint8_t port;
    uint32_t ci;
    char *out;

    /* Each request takes 50 ms of host time */
    ahci->parent = qtest_pc_boot("-M q35 "
                                 "-drive if=none,id=drive0,driver=null-co,"
                                 "size=64M,latency-ns=50000000 "
                                 "-device ncq-disk,id=disk0,drive=drive0,"
                                 "bus=ide.0,timing=off");
    alloc_set_flags(&ahci->parent->alloc, ALLOC_LEAK_ASSERT);
    ahci->dev = get_ahci_device(ahci->parent->qts, &ahci->fingerprint);
    ahci_pci_enable(ahci);
    ahci_hba_enable(ahci);
    qts = ahci->parent->qts;
    port = ahci_port_select(ahci);
    ahci_port_clear(ahci, port);
    wbuf = ahci_alloc(ahci, 512);
    rbuf = ahci_alloc(ahci, 4096);

    write = ahci_command_create(CMD_WRITE_PIO_EXT);
    ahci_command_adjust(write, 0, wbuf, 512, 0);
    ahci_command_commit(ahci, write, port);
    ahci_command_issue_async(ahci, write);
    read = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, rbuf, 4096, 100);
    ahci_command_issue_async(ahci, read);
    ci = ahci_px_rreg(ahci, port, AHCI_PX_CI);
    g_assert_cmphex(ci, ==, (1u << ahci_command_slot(write)) |
                            (1u << ahci_command_slot(read)));

    /* The qemu-io read ends well after the write */
    g_usleep(10000);
    out = qtest_hmp(qts, "qemu-io drive0 \"aio_read 0 512\"");
    g_free(out);
    qtest_qmp_device_del(qts, "disk0");
    ci = ahci_px_rreg(ahci, port, AHCI_PX_CI);
    g_assert_cmphex(ci & (1u << ahci_command_slot(read)), !=, 0);

    ahci_command_free(write);
    ahci_command_free(read);
    ahci_free(ahci, wbuf);
    ahci_free(ahci, rbuf);
    ncq_shutdown(ahci);
}

/*
 * device_del of a drive whose write failed on the host under werror=stop
 * (issue 37): the VM stops on the failed command, the drive is pulled,
 * and 'cont' must not retry the command.  It used to: AHCI's restart ran
 * the halted NCQ slot (the IDE core's restart a non-queued DMA) on the
 * device that was gone, and QEMU died (SIGSEGV); with another drive
 * plugged into the port before 'cont', the old command went to that one.
 * On an added ich9-ahci, as the report had it; ahci-test's
 * /ahci/hotplug/unplug-halted/ cases are the same for ide-hd and ide-cd.
 */
typedef struct UnplugHalted {
    uint8_t cmd;            /* WRITE FPDMA QUEUED or WRITE DMA */
    bool replug;            /* a new drive in the port before 'cont' */
} UnplugHalted;

#define ADDED_HBA_SLOT 0x10

/* COMRESET as a host does, then IDENTIFY if a drive is there; PxSSTS.DET */
static uint32_t comreset_greet(AHCIQState *ahci, uint8_t port)
{
    uint16_t id[256];
    uint32_t det;

    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    det = ahci_px_rreg(ahci, port, AHCI_PX_SSTS) & AHCI_PX_SSTS_DET;
    ahci_px_wreg(ahci, port, AHCI_PX_SERR, 0xffffffff);
    ahci_port_clear(ahci, port);
    if (det) {
        ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    }
    return det;
}

/* query-blockstats: write operations of drive @id */
static int64_t drive_wr_operations(QTestState *qts, const char *id)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-blockstats' }");
    const QListEntry *e;
    int64_t ops = -1;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(rsp, "return"), e) {
        QDict *dev = qobject_to(QDict, qlist_entry_obj(e));

        if (!g_strcmp0(qdict_get_try_str(dev, "device"), id)) {
            ops = qdict_get_int(qdict_get_qdict(dev, "stats"),
                                "wr_operations");
        }
    }
    qobject_unref(rsp);
    g_assert_cmpint(ops, >=, 0);
    return ops;
}

static void assert_runstate(QTestState *qts, const char *status)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-status' }");

    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(rsp, "return"), "status"),
                    ==, status);
    qobject_unref(rsp);
}

/*
 * The unplug-halted cases' machine: an ncq-disk on an added ich9-ahci
 * whose first write fails on the host (blkdebug, werror=stop), a spare
 * drive1 for the replug, the port up.  script and img1 are mkstemp
 * templates, filled in.
 */
static AHCIQState *unplug_halted_boot(char *script, char *img1,
                                      uint8_t *port)
{
    AHCIQState *ahci = g_new0(AHCIQState, 1);
    QPCIBus *pcibus;
    int fd;

    make_temp_file(script);
    g_assert(g_file_set_contents(script, "[inject-error]\n"
                                 "event = \"write_aio\"\nerrno = \"5\"\n"
                                 "once = \"on\"\n", -1, NULL));
    fd = g_mkstemp(img1);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, DISK_SECTORS * 512) == 0);
    close(fd);

    ahci->parent = qtest_pc_boot("-M q35 "
                                 "-device ich9-ahci,id=a1,addr=0x%x "
                                 "-drive if=none,id=drive0,format=raw,"
                                 "file=blkdebug:%s:%s,"
                                 "werror=stop,rerror=stop "
                                 "-drive if=none,id=drive1,format=raw,"
                                 "file=%s "
                                 "-device ncq-disk,id=disk0,drive=drive0,"
                                 "bus=a1.0",
                                 ADDED_HBA_SLOT, script, img_path, img1);
    alloc_set_flags(&ahci->parent->alloc, ALLOC_LEAK_ASSERT);
    pcibus = qpci_new_pc(ahci->parent->qts, NULL);
    ahci->dev = qpci_device_find(pcibus, QPCI_DEVFN(ADDED_HBA_SLOT, 0));
    g_assert(ahci->dev);
    ahci->fingerprint = qpci_config_readl(ahci->dev, PCI_VENDOR_ID);
    ahci_pci_enable(ahci);
    ahci_hba_enable(ahci);
    *port = ahci_port_select(ahci);
    g_assert_cmpint(*port, ==, 0);
    g_assert_cmphex(comreset_greet(ahci, *port), ==, 3);
    return ahci;
}

static void test_hotplug_unplug_halted(gconstpointer data)
{
    const UnplugHalted *t = data;
    g_autofree char *script = g_strdup("/tmp/qtest.ncq-disk-dbg.XXXXXX");
    g_autofree char *img1 = g_strdup("/tmp/qtest.ncq-disk-hp.XXXXXX");
    uint8_t out[4096], in[4096], zero[4096] = { 0 };
    AHCIQState *ahci;
    AHCICommand *cmd;
    QTestState *qts;
    uint64_t gbuf;
    uint8_t port;

    ahci = unplug_halted_boot(script, img1, &port);
    qts = ahci->parent->qts;

    /* At its deadline the write fails on the host: the VM stops. */
    gbuf = ahci_alloc(ahci, sizeof(out));
    memset(out, 0x37, sizeof(out));
    qtest_memwrite(qts, gbuf, out, sizeof(out));
    cmd = ahci_command_create(t->cmd);
    ahci_command_adjust(cmd, 0, gbuf, sizeof(out), 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_command_issue_async(ahci, cmd);
    wait_vm_stopped(ahci);
    assert_runstate(qts, "io-error");

    qtest_qmp_device_del(qts, "disk0");
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_DET, ==, 0);
    if (t->replug) {
        qtest_qmp_device_add(qts, "ncq-disk", "disk1",
                             "{ 'drive': 'drive1', 'bus': 'a1.0' }");
    }

    /* QEMU runs on; nothing is retried, on no drive */
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    qtest_qmp_eventwait(qts, "RESUME");
    qtest_clock_step(qts, 5000000000LL);
    assert_runstate(qts, "running");
    if (!t->replug) {
        g_assert_cmphex(comreset_greet(ahci, port), ==, 0);
        qtest_qmp_device_add(qts, "ncq-disk", "disk1",
                             "{ 'drive': 'drive1', 'bus': 'a1.0' }");
    }
    g_assert_cmphex(comreset_greet(ahci, port), ==, 3);
    ahci_command_free(cmd);
    g_assert_cmpint(drive_wr_operations(qts, "drive1"), ==, 0);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 0);
    g_assert(!memcmp(in, zero, sizeof(in)));

    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
    unlink(script);
    unlink(img1);
}

static const UnplugHalted unplug_halted_ncq = { WRITE_FPDMA_QUEUED, false };
static const UnplugHalted unplug_halted_dma = { CMD_WRITE_DMA, false };
static const UnplugHalted unplug_halted_ncq_replug = {
    WRITE_FPDMA_QUEUED, true
};
static const UnplugHalted unplug_halted_dma_replug = { CMD_WRITE_DMA, true };

void add_hotplug_tests(void)
{
    qtest_add_data_func("/ncq-disk/hotplug/unplug-with-queued-commands",
                        "ncq-disk", test_hotplug_unplug);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-hotplug-unplug",
                        "ide-hd", test_hotplug_unplug);
    qtest_add_data_func("/ncq-disk/hotplug/unplug-bootindex-reset",
                        "ncq-disk", test_hotplug_bootindex);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-unplug-bootindex-reset",
                        "ide-hd", test_hotplug_bootindex);
    qtest_add_func("/ncq-disk/hotplug/unplug-pending-ncq",
                   test_hotplug_unplug_pending_ncq);
    qtest_add_data_func("/ncq-disk/hotplug/unplug-halted/ncq-write",
                        &unplug_halted_ncq, test_hotplug_unplug_halted);
    qtest_add_data_func("/ncq-disk/hotplug/unplug-halted/dma-write",
                        &unplug_halted_dma, test_hotplug_unplug_halted);
    qtest_add_data_func("/ncq-disk/hotplug/unplug-halted/ncq-write-replug",
                        &unplug_halted_ncq_replug,
                        test_hotplug_unplug_halted);
    qtest_add_data_func("/ncq-disk/hotplug/unplug-halted/dma-write-replug",
                        &unplug_halted_dma_replug,
                        test_hotplug_unplug_halted);
}
