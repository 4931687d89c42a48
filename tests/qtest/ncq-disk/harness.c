/*
 * ncq-disk qtests: the harness every concern file shares: booting a
 * drive, issuing commands, reading FISes, logs and QMP answers
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

char *img_path;
char *big_img_path;
char *zoned_img_path;    /* wd-hc620's capacity, sparse */

/*
 * Boot with @device (ncq-disk, or upstream's ide-hd) on AHCI port 0, and
 * @extra on QEMU's command line.
 */
AHCIQState *ahci_boot_device_args(const char *device, const char *img,
                                  const char *props, const char *extra)
{
    AHCIQState *s = g_new0(AHCIQState, 1);

    s->parent = qtest_pc_boot("-M q35 %s "
                              "-drive if=none,id=drive0,file=%s,format=raw,"
                              "discard=unmap "
                              "-device %s,id=disk0,drive=drive0,"
                              "bus=ide.0%s%s",
                              extra, img, device, props ? "," : "",
                              props ? props : "");
    alloc_set_flags(&s->parent->alloc, ALLOC_LEAK_ASSERT);
    s->dev = get_ahci_device(s->parent->qts, &s->fingerprint);
    ahci_pci_enable(s);
    ahci_hba_enable(s);
    return s;
}

AHCIQState *ahci_boot_device(const char *device, const char *img,
                             const char *props)
{
    return ahci_boot_device_args(device, img, props, "");
}

static AHCIQState *ncq_boot_img(const char *img, const char *props)
{
    return ahci_boot_device("ncq-disk", img, props);
}

AHCIQState *ncq_boot(const char *props)
{
    return ncq_boot_img(img_path, props);
}

/* Boot @device, and IDENTIFY as a host does first; returns the port. */
AHCIQState *ahci_boot_ready(const char *device, const char *img,
                            const char *props, uint8_t *port)
{
    AHCIQState *ahci = ahci_boot_device(device, img, props);
    uint16_t id[256];

    *port = ahci_port_select(ahci);
    ahci_port_clear(ahci, *port);
    ahci_io(ahci, *port, CMD_IDENTIFY, id, sizeof(id), 0);
    return ahci;
}

AHCIQState *ncq_boot_ready(const char *img, const char *props,
                           uint8_t *port)
{
    return ahci_boot_ready("ncq-disk", img, props, port);
}

/*
 * ahci_boot_ready() of a test's data, "ide-hd", "ncq-disk,timing=off"...,
 * on image @img.
 */
AHCIQState *ahci_boot_spec_img(gconstpointer data, const char *img,
                               uint8_t *port)
{
    const char *spec = data;
    const char *props = strchr(spec, ',');
    g_autofree char *type = g_strndup(spec, props ? props - spec
                                                  : strlen(spec));

    return ahci_boot_ready(type, img, props ? props + 1 : NULL, port);
}

AHCIQState *ahci_boot_spec(gconstpointer data, uint8_t *port)
{
    return ahci_boot_spec_img(data, img_path, port);
}

void ncq_shutdown(AHCIQState *ahci)
{
    QOSState *qs = ahci->parent;

    ahci_clean_mem(ahci);
    free_ahci_device(ahci->dev);
    g_free(ahci);
    qtest_shutdown(qs);
}

bool ncq_busy(AHCIQState *ahci, uint8_t port, uint8_t slot)
{
    uint32_t tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);

    if (tfd & AHCI_PX_TFD_STS_ERR) {
        return false;
    }
    return (tfd & AHCI_PX_TFD_STS_BSY) ||
           (ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1 << slot)) ||
           (ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1 << slot));
}

/*
 * ncq-disk completes commands at model deadlines on the virtual clock,
 * which only moves here when the test steps it.
 */
void ncq_wait(AHCIQState *ahci, uint8_t port, AHCICommand *cmd)
{
    while (ncq_busy(ahci, port, ahci_command_slot(cmd))) {
        qtest_clock_step_next(ahci->parent->qts);
    }
}

/* Like libqos's ahci_io(), but steps the virtual clock while waiting. */
void ncq_io(AHCIQState *ahci, uint8_t port, uint8_t ide_cmd,
            void *buf, size_t len, uint64_t sector)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, len);
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    qtest_memwrite(qts, gbuf, buf, len);
    ahci_command_adjust(cmd, sector, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_command_issue_async(ahci, cmd);
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    qtest_memread(qts, gbuf, buf, len);
    ahci_free(ahci, gbuf);
}

/* Build an NCQ command in a free slot without issuing it. */
AHCICommand *ncq_prepare(AHCIQState *ahci, uint8_t port,
                         uint8_t ide_cmd, uint64_t gbuf, size_t len,
                         uint64_t lba)
{
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    ahci_command_adjust(cmd, lba, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    return cmd;
}

/* Give a committed command another NCQ tag than its slot number. */
void ncq_forge_tag(AHCIQState *ahci, uint8_t port, AHCICommand *cmd,
                   uint8_t tag)
{
    AHCICommandHeader hdr;

    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(ahci->parent->qts, hdr.ctba + offsetof(NCQFIS, tag),
                 tag << 3);
}

/* Clear an error the way a host's error handler does. */
void ncq_recover(AHCIQState *ahci, uint8_t port)
{
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(ahci, port);
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
}

/* READ LOG EXT of one page (libqos knows no such command: patch it in). */
void ncq_read_log(AHCIQState *ahci, uint8_t port, uint8_t log,
                  uint8_t page, uint8_t *buf)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 512);
    AHCICommand *cmd = ahci_command_create(CMD_READ_PIO_EXT);
    AHCICommandHeader hdr;

    ahci_command_adjust(cmd, ((uint64_t)page << 8) | log, gbuf, 512, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, command),
                 ATA_READ_LOG_EXT);
    ahci_command_issue(ahci, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    qtest_memread(qts, gbuf, buf, 512);
    ahci_free(ahci, gbuf);
}

/* Wait until the port reports an error; returns the error register. */
uint8_t ncq_wait_error(AHCIQState *ahci, uint8_t port)
{
    int i;

    for (i = 0; i < 100000; i++) {
        uint32_t tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);

        if (tfd & AHCI_PX_TFD_STS_ERR) {
            g_assert(ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_TFES);
            return tfd >> 8;
        }
        qtest_clock_step_next(ahci->parent->qts);
    }
    g_assert_not_reached();
}

void check_error_log(AHCIQState *ahci, uint8_t port, bool nq,
                     uint8_t tag, uint8_t error, uint64_t lba)
{
    uint8_t log[512];
    uint8_t sum = 0;
    int i;

    ncq_read_log(ahci, port, 0x10, 0, log);
    for (i = 0; i < 512; i++) {
        sum += log[i];
    }
    g_assert_cmpuint(sum, ==, 0);
    g_assert_cmpuint(!!(log[0] & 0x80), ==, nq);
    if (!nq) {
        g_assert_cmpuint(log[0] & 0x1f, ==, tag);
    }
    g_assert_cmphex(log[3], ==, error);
    g_assert_cmpuint(log[2] & 0x01, ==, 0x01);          /* status: ERR */
    if (lba) {
        g_assert_cmpuint(ldl_le_p(log + 4) & 0xffffff, ==, lba & 0xffffff);
    }
}

/* After an error is handled, the queue works again. */
void check_still_serving(AHCIQState *ahci, uint8_t port)
{
    uint8_t out[4096], in[4096];

    memset(out, 0x5a, sizeof(out));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, sizeof(out), 100);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 100);
    g_assert(!memcmp(out, in, sizeof(in)));
}

QDict *query_disk(AHCIQState *ahci)
{
    QDict *rsp = qtest_qmp(ahci->parent->qts,
                           "{ 'execute': 'query-ncq-disk', "
                           "  'arguments': { 'id': 'disk0' } }");
    QList *list = qdict_get_qlist(rsp, "return");
    QDict *info = qobject_to(QDict, qlist_peek(list));

    qobject_ref(info);
    qobject_unref(rsp);
    return info;
}

/* ATA strings are stored with the two bytes of each word swapped. */
void ata_string(const uint16_t *words, int first, int count, char *out)
{
    int i;

    for (i = 0; i < count; i++) {
        uint16_t w = le16_to_cpu(words[first + i]);

        out[2 * i] = w >> 8;
        out[2 * i + 1] = w & 0xff;
    }
    out[2 * count] = '\0';
    g_strchomp(out);
}

/*
 * SET FEATURES (libqos knows no such command: patch it in), issued; the
 * caller waits for it.
 */
AHCICommand *ncq_set_features_async(AHCIQState *ahci, uint8_t port,
                                    uint8_t feature)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ahci_command_create(CMD_FLUSH_CACHE);
    AHCICommandHeader hdr;

    ahci_command_commit(ahci, cmd, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command),
                 ATA_SET_FEATURES);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, feature_low), feature);
    ahci_command_issue_async(ahci, cmd);
    return cmd;
}

/* SET FEATURES, stepping the clock: 82h is held until a deadline */
void ncq_set_features(AHCIQState *ahci, uint8_t port, uint8_t feature)
{
    AHCICommand *cmd = ncq_set_features_async(ahci, port, feature);

    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
}

/* Step the virtual clock until the command's tag leaves PxSACT. */
void ncq_wait_done(AHCIQState *ahci, uint8_t port, uint8_t slot)
{
    int i;

    for (i = 0; i < 100000; i++) {
        g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR));
        if (!(ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1u << slot)) &&
            !(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot))) {
            return;
        }
        qtest_clock_step_next(ahci->parent->qts);
    }
    g_assert_not_reached();
}

/* An NCQ command of @len bytes (FPDMA_MAX_BYTES: count field 0) */
AHCICommand *ncq_prepare_len(AHCIQState *ahci, uint8_t port,
                             uint8_t ide_cmd, uint64_t gbuf,
                             size_t len, uint64_t lba)
{
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    ahci_command_adjust(cmd, lba, gbuf, len, 4 * 1024 * 1024);
    ahci_command_commit(ahci, cmd, port);
    return cmd;
}

/*
 * qtest's line protocol rescans its buffer for each piece of a line it
 * receives: move big buffers in pieces, or it takes minutes.
 */
#define QTEST_PIECE (256 * 1024)

void ncq_bufwrite(QTestState *qts, uint64_t addr, const uint8_t *buf,
                  size_t len)
{
    size_t off;

    for (off = 0; off < len; off += QTEST_PIECE) {
        qtest_bufwrite(qts, addr + off, buf + off, MIN(QTEST_PIECE,
                                                       len - off));
    }
}

void ncq_bufread(QTestState *qts, uint64_t addr, uint8_t *buf,
                 size_t len)
{
    size_t off;

    for (off = 0; off < len; off += QTEST_PIECE) {
        qtest_bufread(qts, addr + off, buf + off, MIN(QTEST_PIECE,
                                                      len - off));
    }
}

/*
 * A guest that fills the HBA's bounce buffer (the command lists and FIS
 * areas of four other ports placed in MMIO) and points a queued read's
 * PRD at MMIO too: that read's DMA can never start.  At the command's
 * deadline the drive must not hold QEMU forever waiting for it: after
 * x-host-wait-ms it fails the command, and QEMU goes on answering.
 */
/*
 * Ports 1-4 get their command lists and FIS areas in the HBA's MMIO:
 * mapping them takes the address space's bounce buffer, so a DMA to MMIO
 * on port 0 cannot start until they let go.
 */
void hold_bounce_buffer(AHCIQState *ahci)
{
    uint64_t mmio = ahci->hba_bar.addr;
    uint8_t p;

    g_assert(!ahci->hba_bar.is_io);
    for (p = 1; p <= 4; p++) {
        ahci_px_wreg(ahci, p, AHCI_PX_CLB, mmio);
        ahci_px_wreg(ahci, p, AHCI_PX_CLBU, 0);
        ahci_px_wreg(ahci, p, AHCI_PX_FB, mmio + 0x400);
        ahci_px_wreg(ahci, p, AHCI_PX_FBU, 0);
        ahci_px_wreg(ahci, p, AHCI_PX_CMD, AHCI_PX_CMD_ST | AHCI_PX_CMD_FRE);
    }
}

/*
 * Issue a non-queued DMA command, which the drive (timing on) holds busy
 * until the model's deadline: it is still in PxCI.
 */
AHCICommand *issue_held(AHCIQState *ahci, uint8_t port,
                        uint8_t ide_cmd, uint64_t gbuf, size_t len,
                        uint64_t lba)
{
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    ahci_command_adjust(cmd, lba, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_command_issue_async(ahci, cmd);
    g_assert(ahci_px_rreg(ahci, port, AHCI_PX_CI) &
             (1u << ahci_command_slot(cmd)));
    return cmd;
}

/* Queue @n reads of 4 KiB at distinct LBAs; returns the commands. */
void ncq_queue_reads(AHCIQState *ahci, uint8_t port, uint64_t gbuf,
                     AHCICommand **cmd, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 7919 * (i + 1));
        ahci_command_issue_async(ahci, cmd[i]);
    }
}

/* The whole NCQ Command Error log page after a media error. */
void check_media_error_log(AHCIQState *ahci, uint8_t port,
                           uint8_t tag, uint8_t error, uint64_t lba,
                           uint16_t count)
{
    uint8_t log[512], want[512] = { 0 };
    uint8_t sum = 0;
    int i;

    want[0] = tag;
    want[2] = ATA_STS_DRDY_ERR;
    want[3] = error;
    want[4] = lba;
    want[5] = lba >> 8;
    want[6] = lba >> 16;
    want[7] = 0x40;
    want[8] = lba >> 24;
    want[9] = lba >> 32;
    want[10] = lba >> 40;
    want[12] = count;
    want[13] = count >> 8;
    for (i = 0; i < 511; i++) {
        sum += want[i];
    }
    want[511] = -sum;
    ncq_read_log(ahci, port, 0x10, 0, log);
    g_assert_cmpmem(log, sizeof(log), want, sizeof(want));
}

/* Virtual time from issue to completion of one queued read. */
int64_t ncq_read_latency(AHCIQState *ahci, uint8_t port, uint64_t lba)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096,
                                   lba);
    int64_t t0 = qtest_clock_step(qts, 1), now = t0;  /* reads the clock */

    ahci_command_issue_async(ahci, cmd);
    while (ahci_px_rreg(ahci, port, AHCI_PX_SACT) &
           (1u << ahci_command_slot(cmd))) {
        now = qtest_clock_step_next(qts);
    }
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    return now - t0;
}

#define SMART_KEY_LBA       0xc24f00

/*
 * SMART READ LOG (or WRITE LOG) of @log with @count in the Count
 * register, moving @len bytes of @buf; returns the error register (0:
 * none) and, in *ret, Count | LBA Low << 8 of the D2H Register FIS (where
 * an SCT command returns its value, or its extended status code).
 */
uint8_t ncq_smart_log(AHCIQState *ahci, uint8_t port, bool write,
                      uint8_t log, uint8_t count, uint8_t *buf,
                      size_t len, uint16_t *ret)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, len);
    uint64_t d2h = ahci->port[port].fb + 0x40;
    AHCICommand *cmd = ahci_command_create(write ? CMD_WRITE_PIO :
                                           CMD_READ_PIO);
    AHCICommandHeader hdr;
    uint32_t tfd;
    uint8_t err = 0;

    if (write) {
        qtest_memwrite(qts, gbuf, buf, len);
    }
    ahci_command_adjust(cmd, SMART_KEY_LBA | log, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command), ATA_SMART);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, feature_low),
                 write ? SMART_WRITE_LOG : SMART_READ_LOG);
    qtest_writew(qts, hdr.ctba + offsetof(RegH2DFIS, count), count);
    ahci_command_issue_async(ahci, cmd);
    ncq_wait(ahci, port, cmd);
    tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);
    *ret = qtest_readb(qts, d2h + 12) | qtest_readb(qts, d2h + 4) << 8;
    if (tfd & AHCI_PX_TFD_STS_ERR) {
        err = tfd >> 8;
        ncq_recover(ahci, port);
    } else {
        ahci_command_verify(ahci, cmd);
        if (!write) {
            qtest_memread(qts, gbuf, buf, len);
        }
    }
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    return err;
}

/* One SCT command: its words, the rest zero; error register and return */
uint8_t sct_command(AHCIQState *ahci, uint8_t port, uint16_t action,
                    uint16_t function, uint16_t w2, uint16_t w3,
                    uint16_t *ret)
{
    uint8_t cmd[512] = { 0 };

    stw_le_p(cmd, action);
    stw_le_p(cmd + 2, function);
    stw_le_p(cmd + 4, w2);
    stw_le_p(cmd + 6, w3);
    return ncq_smart_log(ahci, port, true, LOG_SCT, 1, cmd, sizeof(cmd),
                         ret);
}

/* Eight sectors of the image file at @lba equal @byte everywhere. */
void check_image(const char *path, uint64_t lba, uint8_t byte)
{
    uint8_t buf[4096], want[4096];
    int fd = open(path, O_RDONLY);

    g_assert(fd >= 0);
    g_assert_cmpint(pread(fd, buf, sizeof(buf), lba * 512), ==, sizeof(buf));
    close(fd);
    memset(want, byte, sizeof(want));
    g_assert_cmpmem(buf, sizeof(buf), want, sizeof(want));
}

/* A queued write of @byte, with FUA if asked, to completion. */
void ncq_write_fill(AHCIQState *ahci, uint8_t port, uint64_t lba,
                    uint8_t byte, bool fua)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;
    AHCICommandHeader hdr;

    qtest_memset(qts, gbuf, byte, 4096);
    cmd = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, lba);
    if (fua) {
        ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
        qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, device), 0xc0);
    }
    ahci_command_issue_async(ahci, cmd);
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
}

/* system_reset, back when the reset is done (fw_cfg's files are new). */
void system_reset(QTestState *qts)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(qts, "RESET");
}

/* IDENTIFY word @w, from a fresh IDENTIFY. */
uint16_t identify_word(AHCIQState *ahci, uint8_t port, int w)
{
    uint16_t id[256];

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    return le16_to_cpu(id[w]);
}

/* Lines of @text that are not a sanitizer runtime's own ("==PID==..."). */
int count_own_lines(const char *text)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    int i, n = 0;

    for (i = 0; lines[i]; i++) {
        if (lines[i][0] && !g_str_has_prefix(lines[i], "==") &&
            !g_str_has_prefix(lines[i], "False positive error reports") &&
            !g_str_has_prefix(lines[i], "For details see")) {
            n++;
        }
    }
    return n;
}

/*
 * Start QEMU with @args (after -accel qtest -S, on img_path as drive d1)
 * and quit at once; the exit status, QEMU's stderr in @err.
 */
int spawn_startup(const char *args, char **err)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *script = g_strdup_printf(
        "printf '{\"execute\":\"qmp_capabilities\"}\\n"
        "{\"execute\":\"quit\"}\\n' | "
        "exec \"$0\" -accel qtest -S -display none -nodefaults "
        "-drive if=none,id=d1,file=%s,format=raw %s -qmp stdio",
        img_path, args);
    const char *argv[] = { "/bin/sh", "-c", script, qemu, NULL };
    g_autofree char *out = NULL;
    g_autoptr(GError) gerr = NULL;
    int status;

    g_assert(qemu);
    g_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL,
                          NULL, &out, err, &status, &gerr));
    g_test_message("exit status %d, stderr: %s", status, *err);
    return status;
}

/* Migration (issue 29, defect 3) */
char *mig_uri;

/* Boot a destination for ncq_migrate() on @drive_opts (the -drive). */
AHCIQState *ncq_boot_incoming(const char *drive, const char *props)
{
    AHCIQState *s = g_new0(AHCIQState, 1);

    s->parent = qtest_pc_boot("-M q35 -drive if=none,id=drive0,%s "
                              "-device ncq-disk,id=disk0,drive=drive0,"
                              "bus=ide.0%s%s -incoming %s",
                              drive, props ? "," : "", props ? props : "",
                              mig_uri);
    alloc_set_flags(&s->parent->alloc, ALLOC_LEAK_ASSERT);
    s->dev = get_ahci_device(s->parent->qts, &s->fingerprint);
    return s;
}

/* Like ahci_boot_device() for ncq-disk, with the -drive options given. */
AHCIQState *ncq_boot_drive(const char *drive, const char *props,
                           uint8_t *port)
{
    AHCIQState *s = g_new0(AHCIQState, 1);
    uint16_t id[256];

    s->parent = qtest_pc_boot("-M q35 -drive if=none,id=drive0,%s "
                              "-device ncq-disk,id=disk0,drive=drive0,"
                              "bus=ide.0%s%s",
                              drive, props ? "," : "", props ? props : "");
    alloc_set_flags(&s->parent->alloc, ALLOC_LEAK_ASSERT);
    s->dev = get_ahci_device(s->parent->qts, &s->fingerprint);
    ahci_pci_enable(s);
    ahci_hba_enable(s);
    *port = ahci_port_select(s);
    ahci_port_clear(s, *port);
    ahci_io(s, *port, CMD_IDENTIFY, id, sizeof(id), 0);
    return s;
}

/* Migrate @from to @to; @to then carries the test's AHCI state. */
void ncq_migrate(AHCIQState *from, AHCIQState *to)
{
    QOSState *parent = to->parent;
    QPCIDevice *dev = to->dev;
    /*
     * qtest's virtual clock is its own counter, which does not migrate;
     * the drive's model goes on from the source's time, as with KVM/TCG.
     */
    int64_t now = qtest_clock_step(from->parent->qts, 1);

    migrate(from->parent, to->parent, mig_uri);
    qtest_clock_set(to->parent->qts, now);
    memcpy(to, from, sizeof(*to));
    to->parent = parent;
    to->dev = dev;
    parent = from->parent;
    dev = from->dev;
    memset(from, 0, sizeof(*from));
    from->parent = parent;
    from->dev = dev;
}

/*
 * A queued write with FUA, high priority and CDL index 3 halted by a
 * host I/O error (werror=stop), migrated, then resumed: the drive gets
 * it again with the flags it came with, although the guest has changed
 * its command table meanwhile (they used to be read again from it).
 */
/* An empty temporary file from @tmpl ("...XXXXXX"), changed in place. */
void make_temp_file(char *tmpl)
{
    int fd = g_mkstemp(tmpl);

    g_assert(fd >= 0);
    close(fd);
}

/* Step the clock from deadline to deadline until the VM stops. */
void wait_vm_stopped(AHCIQState *ahci)
{
    QTestState *qts = ahci->parent->qts;
    int i;

    for (i = 0; i < 100000; i++) {
        QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-status' }");
        bool running = qdict_get_bool(qdict_get_qdict(rsp, "return"),
                                      "running");

        qobject_unref(rsp);
        if (!running) {
            return;
        }
        qtest_clock_step_next(qts);
    }
    g_assert_not_reached();
}

/*
 * A non-queued command libqos may not know: a command of @base's
 * protocol and direction is patched into @code with these registers
 * (DEVICE @device).  The PRDT covers @bytes at @gbuf.  Waits (stepping
 * the virtual clock) until it ends; returns the error register (0: no
 * error), *@status the status the drive ended with.
 */
static uint8_t raw_cmd_dev(AHCIQState *ahci, uint8_t port, uint8_t base,
                           uint8_t code, uint16_t feature, uint8_t device,
                           uint64_t lba, uint16_t count, uint64_t gbuf,
                           uint32_t bytes, uint8_t *status)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ahci_command_create(base);
    AHCICommandHeader hdr;
    uint64_t fis;
    uint8_t slot, err = 0;
    int i;

    ahci_command_adjust(cmd, 0, gbuf, bytes, 0);
    ahci_command_commit(ahci, cmd, port);
    slot = ahci_command_slot(cmd);
    ahci_get_command_header(ahci, port, slot, &hdr);
    fis = hdr.ctba;
    qtest_writeb(qts, fis + offsetof(RegH2DFIS, command), code);
    qtest_writeb(qts, fis + offsetof(RegH2DFIS, feature_low), feature);
    qtest_writeb(qts, fis + offsetof(RegH2DFIS, feature_high), feature >> 8);
    for (i = 0; i < 3; i++) {
        qtest_writeb(qts, fis + offsetof(RegH2DFIS, lba_lo) + i,
                     lba >> (8 * i));
        qtest_writeb(qts, fis + offsetof(RegH2DFIS, lba_hi) + i,
                     lba >> (24 + 8 * i));
    }
    qtest_writeb(qts, fis + offsetof(RegH2DFIS, device), device);
    qtest_writew(qts, fis + offsetof(RegH2DFIS, count), cpu_to_le16(count));
    ahci_command_issue_async(ahci, cmd);
    for (i = 0; i < 100000; i++) {
        uint32_t tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);

        *status = tfd;
        if (ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_TFES) {
            err = tfd >> 8;
            g_assert(err);
            ncq_recover(ahci, port);
            break;
        }
        if (!(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1 << slot)) &&
            !(tfd & (AHCI_PX_TFD_STS_BSY | AHCI_PX_TFD_STS_DRQ))) {
            uint32_t is = ahci_px_rreg(ahci, port, AHCI_PX_IS);

            /* ended with a D2H Register FIS (PIO data-in: PIO Setup) */
            g_assert(is & (AHCI_PX_IS_DHRS | AHCI_PX_IS_PSS));
            ahci_px_wreg(ahci, port, AHCI_PX_IS, is);
            break;
        }
        qtest_clock_step_next(qts);
    }
    g_assert_cmpint(i, <, 100000);
    ahci_command_free(cmd);
    return err;
}

/* raw_cmd_dev() with DEVICE 40h (the LBA bit) */
uint8_t raw_cmd(AHCIQState *ahci, uint8_t port, uint8_t base,
                uint8_t code, uint16_t feature, uint64_t lba,
                uint16_t count, uint64_t gbuf, uint32_t bytes,
                uint8_t *status)
{
    return raw_cmd_dev(ahci, port, base, code, feature, 0x40, lba, count,
                       gbuf, bytes, status);
}

/*
 * One log command: LBA low the log, LBA mid (and LBA 39:32) the page;
 * SMART's with its key in LBA mid/high.  The count register says
 * @count pages, the PRDT covers @prdt_bytes.
 */
uint8_t log_cmd(AHCIQState *ahci, uint8_t port, uint8_t code,
                uint8_t feature, uint8_t log, uint16_t page,
                uint16_t count, uint64_t gbuf, uint32_t prdt_bytes)
{
    bool smart = code == ATA_SMART;
    bool dma = code == ATA_READ_LOG_DMA_EXT || code == ATA_WRITE_LOG_DMA_EXT;
    bool write = code == ATA_WRITE_LOG_EXT || code == ATA_WRITE_LOG_DMA_EXT ||
                 (smart && feature == SMART_WRITE_LOG);
    uint8_t base = dma ? (write ? CMD_WRITE_DMA_EXT : CMD_READ_DMA_EXT) :
                   smart ? (write ? CMD_WRITE_PIO : CMD_READ_PIO) :
                   (write ? CMD_WRITE_PIO_EXT : CMD_READ_PIO_EXT);
    uint64_t lba = smart ? 0xc24f00 | log :
                   log | (uint64_t)(page & 0xff) << 8 |
                   (uint64_t)(page >> 8) << 32;
    uint8_t status;

    return raw_cmd(ahci, port, base, code, feature, lba, count, gbuf,
                   prdt_bytes, &status);
}

uint8_t log_read(AHCIQState *ahci, uint8_t port, uint8_t code,
                 uint8_t log, uint16_t page, uint16_t count,
                 uint8_t *buf)
{
    uint64_t gbuf = ahci_alloc(ahci, 512 * count);
    uint8_t err;

    qtest_memset(ahci->parent->qts, gbuf, 0xaa, 512 * count);
    err = log_cmd(ahci, port, code, code == ATA_SMART ? SMART_READ_LOG : 0,
                  log, page, count, gbuf, 512 * count);
    if (!err && buf) {
        qtest_memread(ahci->parent->qts, gbuf, buf, 512 * count);
    }
    ahci_free(ahci, gbuf);
    return err;
}

uint8_t log_write(AHCIQState *ahci, uint8_t port, uint8_t code,
                  uint8_t log, uint16_t page, uint16_t count,
                  const uint8_t *buf, uint32_t prdt_bytes)
{
    uint64_t gbuf = ahci_alloc(ahci, MAX(prdt_bytes, 512));
    uint8_t err;

    qtest_memwrite(ahci->parent->qts, gbuf, buf, prdt_bytes);
    err = log_cmd(ahci, port, code, code == ATA_SMART ? SMART_WRITE_LOG : 0,
                  log, page, count, gbuf, prdt_bytes);
    ahci_free(ahci, gbuf);
    return err;
}

/* The LBA fields of the last D2H Register FIS: REQUEST SENSE's answer */
uint32_t sense_lba(AHCIQState *ahci, uint8_t port)
{
    uint8_t fis[20];

    qtest_memread(ahci->parent->qts, ahci->port[port].fb + 0x40, fis,
                  sizeof(fis));
    g_assert_cmphex(fis[0], ==, 0x34);
    return fis[4] | (fis[5] << 8) | (fis[6] << 16);
}

/*
 * REQUEST SENSE DATA EXT as libata's ata_eh_request_sense() sends it:
 * DEVICE A0h (ata_tf_init(): no LBA bit), LBA 0.  Its answer is in the
 * LBA field all the same (sense_lba()).
 */
#define ATA_REQ_SENSE_EXT   0x0b

uint8_t request_sense(AHCIQState *ahci, uint8_t port, uint8_t *status)
{
    return raw_cmd_dev(ahci, port, CMD_FLUSH_CACHE, ATA_REQ_SENSE_EXT, 0,
                       0xa0, 0, 0, 0, 0, status);
}

/* The status of the last D2H Register FIS, where libata reads it */
uint8_t d2h_status(AHCIQState *ahci, uint8_t port)
{
    uint8_t fis[4];

    qtest_memread(ahci->parent->qts, ahci->port[port].fb + 0x40, fis,
                  sizeof(fis));
    g_assert_cmphex(fis[0], ==, 0x34);
    return fis[2];
}

#define ATA_ZAC_MGMT_IN     0x4a
#define ATA_ZAC_MGMT_OUT    0x9f

/* REPORT ZONES EXT of @pages pages with @options into @buf */
uint8_t zac_report(AHCIQState *ahci, uint8_t port, uint64_t lba,
                   uint8_t options, uint16_t pages, uint8_t *buf)
{
    uint64_t gbuf = ahci_alloc(ahci, 512 * pages);
    uint8_t status, err;

    qtest_memset(ahci->parent->qts, gbuf, 0xaa, 512 * pages);
    err = raw_cmd(ahci, port, CMD_READ_DMA_EXT, ATA_ZAC_MGMT_IN,
                  (uint16_t)options << 8, lba, pages, gbuf, 512 * pages,
                  &status);
    if (!err && buf) {
        ncq_bufread(ahci->parent->qts, gbuf, buf, 512 * pages);
    }
    ahci_free(ahci, gbuf);
    return err;
}

/* ZAC MANAGEMENT OUT @action on the zone at @lba, or ALL */
uint8_t zac_out(AHCIQState *ahci, uint8_t port, uint8_t action,
                uint64_t lba, bool all)
{
    uint8_t status;

    return raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_ZAC_MGMT_OUT,
                   action | (all ? 0x100 : 0), lba, 0, 0, 0, &status);
}

/* The condition and write pointer of the zone at @lba, by REPORT ZONES */
uint8_t zac_cond(AHCIQState *ahci, uint8_t port, uint64_t lba,
                 uint64_t *wp)
{
    uint8_t buf[512];

    g_assert_cmphex(zac_report(ahci, port, lba, 0x80, 1, buf), ==, 0);
    g_assert_cmphex(ldq_le_p(buf + 64 + 16), ==, lba);
    if (wp) {
        *wp = ldq_le_p(buf + 64 + 24);
    }
    return buf[64 + 1] >> 4;
}

/* Boot wd-hc620 with sense data reporting on, as Linux sets it up */
AHCIQState *zac_boot(uint8_t *port)
{
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, ZAC_PROPS, port);
    uint8_t status;

    g_assert_cmphex(raw_cmd(ahci, *port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0xc3, 0, 1, 0, 0, &status), ==, 0);
    return ahci;
}
