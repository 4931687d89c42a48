/*
 * ncq-disk qtests: migration with commands queued, stopped or
 * flagged
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/* Step the clock until the drive's queue is empty. */
static void ncq_wait_queue_empty(AHCIQState *ahci)
{
    int i;

    for (i = 0; i < 100000; i++) {
        QDict *info = query_disk(ahci);
        size_t n = qlist_size(qdict_get_qlist(info, "queue"));

        qobject_unref(info);
        if (!n) {
            return;
        }
        qtest_clock_step_next(ahci->parent->qts);
    }
    g_assert_not_reached();
}

/*
 * A guest that stops the port (PxCMD.ST=0) with commands queued: the
 * drive drops them, and migration works (it used to fail in AHCI's
 * post_load, which looked for the commands in the unmapped command list).
 */
static void test_migrate_port_stopped(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img_path);
    uint8_t port;
    AHCIQState *src = ncq_boot_drive(drive, NULL, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, NULL);
    uint64_t gbuf = ahci_alloc(src, 4 * 4096);
    AHCICommand *cmd[4];
    QDict *info;
    int i;

    ncq_queue_reads(src, port, gbuf, cmd, 4);
    ahci_px_clr(src, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ncq_migrate(src, dst);
    for (i = 0; i < 4; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(dst, gbuf);

    info = query_disk(dst);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 0);
    qobject_unref(info);
    ahci_px_set(dst, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(dst, port);
    check_still_serving(dst, port);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

/*
 * A queued write whose NCQ tag differs from its slot number, held by the
 * drive when the state moves: it completes on the other side (AHCI's
 * post_load used to refuse such a slot and fail the migration).
 */
static void test_migrate_tag_not_slot(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img_path);
    uint8_t port;
    AHCIQState *src = ncq_boot_drive(drive, NULL, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, NULL);
    uint64_t gbuf = ahci_alloc(src, 4096);
    uint8_t out[4096], in[4096];
    AHCICommand *cmd;
    QDict *info;
    uint8_t tag;

    memset(out, 0x6b, sizeof(out));
    qtest_memwrite(src->parent->qts, gbuf, out, sizeof(out));
    cmd = ncq_prepare(src, port, WRITE_FPDMA_QUEUED, gbuf, 4096, 4242);
    tag = (ahci_command_slot(cmd) + 5) % 32;
    ncq_forge_tag(src, port, cmd, tag);
    ahci_command_issue_async(src, cmd);
    info = query_disk(src);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 1);
    g_assert_cmpint(qdict_get_int(qobject_to(QDict, qlist_peek(
                        qdict_get_qlist(info, "queue"))), "tag"), ==, tag);
    qobject_unref(info);

    ncq_migrate(src, dst);
    ncq_wait_queue_empty(dst);
    info = query_disk(dst);
    g_assert_cmpint(qdict_get_int(info, "completed-writes"), ==, 1);
    qobject_unref(info);
    g_assert_false(ahci_px_rreg(dst, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR);
    ahci_command_free(cmd);
    ahci_free(dst, gbuf);
    /* PxSACT keeps the slot's bit (the drive completed the tag's): */
    ahci_px_clr(dst, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_px_set(dst, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(dst, port);
    ncq_io(dst, port, READ_FPDMA_QUEUED, in, sizeof(in), 4242);
    g_assert(!memcmp(out, in, sizeof(in)));
    check_still_serving(dst, port);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

/*
 * Issue 37 item 4: a guest that rewrites a held queued command's PRDTL
 * (here to 0) before the state moves.  AHCI's post_load used to rebuild
 * the command's scatter list from the command table and fail the load
 * (0 bytes against 8 sectors); the list now comes with the stream, and
 * the write completes on the other side with its data.
 */
static void test_migrate_prdt_rewritten(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img_path);
    uint8_t port;
    AHCIQState *src = ncq_boot_drive(drive, NULL, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, NULL);
    uint64_t gbuf = ahci_alloc(src, 4096);
    uint8_t out[4096], in[4096];
    AHCICommandHeader hdr;
    AHCICommand *cmd;
    QDict *info;
    uint8_t slot;

    memset(out, 0x3d, sizeof(out));
    qtest_memwrite(src->parent->qts, gbuf, out, sizeof(out));
    cmd = ncq_prepare(src, port, WRITE_FPDMA_QUEUED, gbuf, 4096, 3737);
    slot = ahci_command_slot(cmd);
    ahci_command_issue_async(src, cmd);
    ahci_get_command_header(src, port, slot, &hdr);
    hdr.prdtl = 0;
    ahci_set_command_header(src, port, slot, &hdr);
    info = query_disk(src);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 1);
    qobject_unref(info);

    ncq_migrate(src, dst);
    ncq_wait_queue_empty(dst);
    info = query_disk(dst);
    g_assert_cmpint(qdict_get_int(info, "completed-writes"), ==, 1);
    qobject_unref(info);
    g_assert_false(ahci_px_rreg(dst, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR);
    ahci_command_free(cmd);
    ahci_free(dst, gbuf);
    ahci_port_clear(dst, port);
    ncq_io(dst, port, READ_FPDMA_QUEUED, in, sizeof(in), 3737);
    g_assert(!memcmp(out, in, sizeof(in)));
    check_still_serving(dst, port);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

/* The trace record of @tag: its fua, prio and cdl columns */
static void trace_flags(const char *path, int tag, int *fua, int *prio,
                        int *cdl)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    int i, found = 0;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    for (i = 2; lines[i] && lines[i][0]; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);

        g_assert_cmpint(g_strv_length(f), >=, 17);
        if (atoi(f[0]) == tag && !strcmp(f[1], "W")) {
            *fua = atoi(f[4]);
            *prio = atoi(f[5]);
            *cdl = atoi(f[16]);
            found++;
        }
    }
    g_assert_cmpint(found, ==, 1);
}

/*
 * Issue a WRITE FPDMA QUEUED with FUA, PRIO high and CDL index 3, then
 * clear those fields in its command table, as a guest reusing the table
 * before the command completes would.  Returns the command.
 */
static AHCICommand *issue_flagged_write(AHCIQState *ahci, uint8_t port,
                                        uint64_t gbuf, uint64_t lba)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf,
                                   4096, lba);
    AHCICommandHeader hdr;

    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, device),
                 0x40 | 0x80);                          /* FUA */
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, prio),
                 2 << 6);                               /* PRIO high */
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, aux), 3);
    ahci_command_issue_async(ahci, cmd);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, device), 0x40);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, prio), 0);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, aux), 0);
    return cmd;
}

static void test_migrate_keeps_fua_prio_cdl(void)
{
    g_autofree char *script = g_strdup("/tmp/qtest.ncq-disk-dbg.XXXXXX");
    g_autofree char *trace = g_strdup("/tmp/qtest.ncq-disk-trace.XXXXXX");
    g_autofree char *src_drive = NULL;
    g_autofree char *dst_drive = NULL;
    g_autofree char *dst_props = NULL;
    AHCIQState *src, *dst;
    AHCICommand *cmd;
    uint8_t port, slot, out[4096], in[4096];
    uint64_t gbuf;
    int fua = -1, prio = -1, cdl = -1;

    make_temp_file(script);
    make_temp_file(trace);
    g_assert(g_file_set_contents(script, "[inject-error]\n"
                                 "event = \"write_aio\"\nerrno = \"5\"\n"
                                 "once = \"on\"\n", -1, NULL));
    src_drive = g_strdup_printf("file=blkdebug:%s:%s,format=raw,"
                                "werror=stop,rerror=stop", script, img_path);
    dst_drive = g_strdup_printf("file=%s,format=raw,werror=stop,"
                                "rerror=stop", img_path);
    dst_props = g_strdup_printf("trace=%s", trace);
    src = ncq_boot_drive(src_drive, NULL, &port);
    dst = ncq_boot_incoming(dst_drive, dst_props);

    gbuf = ahci_alloc(src, 4096);
    memset(out, 0x29, sizeof(out));
    qtest_memwrite(src->parent->qts, gbuf, out, sizeof(out));
    cmd = issue_flagged_write(src, port, gbuf, 2929);
    slot = ahci_command_slot(cmd);
    /* At its deadline the write fails on the host: the VM stops. */
    wait_vm_stopped(src);

    ncq_migrate(src, dst);
    qtest_qmp_assert_success(dst->parent->qts, "{ 'execute': 'cont' }");
    ncq_wait_done(dst, port, slot);
    ahci_command_free(cmd);
    ahci_port_clear(dst, port);
    ncq_io(dst, port, READ_FPDMA_QUEUED, in, sizeof(in), 2929);
    g_assert(!memcmp(out, in, sizeof(in)));
    ahci_free(dst, gbuf);
    /* The device closes its trace file when it goes. */
    qtest_qmp_device_del(dst->parent->qts, "disk0");
    trace_flags(trace, slot, &fua, &prio, &cdl);
    g_assert_cmpint(fua, ==, 1);
    g_assert_cmpint(prio, ==, 1);
    g_assert_cmpint(cdl, ==, 3);
    ncq_shutdown(src);
    ncq_shutdown(dst);
    unlink(script);
    unlink(trace);
}

void add_migration_tests(void)
{
    qtest_add_func("/ncq-disk/migrate/port-stopped-with-queued",
                   test_migrate_port_stopped);
    qtest_add_func("/ncq-disk/migrate/tag-not-slot",
                   test_migrate_tag_not_slot);
    qtest_add_func("/ncq-disk/migrate/prdt-rewritten",
                   test_migrate_prdt_rewritten);
    qtest_add_func("/ncq-disk/migrate/keeps-fua-prio-cdl",
                   test_migrate_keeps_fua_prio_cdl);
}
