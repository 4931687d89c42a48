/*
 * qtests for ncq-disk behind QEMU's AHCI controller
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/ahci.h"
#include "libqos/pci-pc.h"
#include "libqos/fw_cfg.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qnum.h"
#include "qobject/qstring.h"
#include "hw/ide/ncq-model.h"
#include "hw/pci/pci_regs.h"

#define DISK_SECTORS   (64 * 1024 * 2)     /* 64 MiB image */
#define BIG_SECTORS    (100ULL << 21)      /* 100 GiB sparse image */
#define ZAC_SECTORS    27344764928ULL      /* wd-hc620: 14 TB sparse */

#define ATA_ERR_ABRT   0x04
#define ATA_ERR_IDNF   0x10
#define ATA_READ_LOG_EXT 0x2f
#define ATA_DSM        0x06
#define ATA_DSM_TRIM   0x01
#define ID_TRIM        169                 /* IDENTIFY word, bit 0 */
#define ATA_SET_FEATURES 0xef
#define ATA_SF_WCACHE_OFF 0x82

static char *img_path;
static char *big_img_path;
static char *zoned_img_path;    /* wd-hc620's capacity, sparse */

/*
 * Boot with @device (ncq-disk, or upstream's ide-hd) on AHCI port 0, and
 * @extra on QEMU's command line.
 */
static AHCIQState *ahci_boot_device_args(const char *device, const char *img,
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

static AHCIQState *ahci_boot_device(const char *device, const char *img,
                                    const char *props)
{
    return ahci_boot_device_args(device, img, props, "");
}

/* The HBA links at up to 6.0 Gb/s (q35's AHCI comes up at 1.5 Gb/s). */
#define HBA_GEN3 "-global ich9-ahci.sata-gen=3"

static AHCIQState *ncq_boot_img(const char *img, const char *props)
{
    return ahci_boot_device("ncq-disk", img, props);
}

static AHCIQState *ncq_boot(const char *props)
{
    return ncq_boot_img(img_path, props);
}

/* Boot @device, and IDENTIFY as a host does first; returns the port. */
static AHCIQState *ahci_boot_ready(const char *device, const char *img,
                                   const char *props, uint8_t *port)
{
    AHCIQState *ahci = ahci_boot_device(device, img, props);
    uint16_t id[256];

    *port = ahci_port_select(ahci);
    ahci_port_clear(ahci, *port);
    ahci_io(ahci, *port, CMD_IDENTIFY, id, sizeof(id), 0);
    return ahci;
}

static AHCIQState *ncq_boot_ready(const char *img, const char *props,
                                  uint8_t *port)
{
    return ahci_boot_ready("ncq-disk", img, props, port);
}

/*
 * ahci_boot_ready() of a test's data, "ide-hd", "ncq-disk,timing=off"...,
 * on image @img.
 */
static AHCIQState *ahci_boot_spec_img(gconstpointer data, const char *img,
                                      uint8_t *port)
{
    const char *spec = data;
    const char *props = strchr(spec, ',');
    g_autofree char *type = g_strndup(spec, props ? props - spec
                                                  : strlen(spec));

    return ahci_boot_ready(type, img, props ? props + 1 : NULL, port);
}

static AHCIQState *ahci_boot_spec(gconstpointer data, uint8_t *port)
{
    return ahci_boot_spec_img(data, img_path, port);
}

static void ncq_shutdown(AHCIQState *ahci)
{
    QOSState *qs = ahci->parent;

    ahci_clean_mem(ahci);
    free_ahci_device(ahci->dev);
    g_free(ahci);
    qtest_shutdown(qs);
}

static bool ncq_busy(AHCIQState *ahci, uint8_t port, uint8_t slot)
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
static void ncq_wait(AHCIQState *ahci, uint8_t port, AHCICommand *cmd)
{
    while (ncq_busy(ahci, port, ahci_command_slot(cmd))) {
        qtest_clock_step_next(ahci->parent->qts);
    }
}

/* Like libqos's ahci_io(), but steps the virtual clock while waiting. */
static void ncq_io(AHCIQState *ahci, uint8_t port, uint8_t ide_cmd,
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
static AHCICommand *ncq_prepare(AHCIQState *ahci, uint8_t port,
                                uint8_t ide_cmd, uint64_t gbuf, size_t len,
                                uint64_t lba)
{
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    ahci_command_adjust(cmd, lba, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    return cmd;
}

/* Give a committed command another NCQ tag than its slot number. */
static void ncq_forge_tag(AHCIQState *ahci, uint8_t port, AHCICommand *cmd,
                          uint8_t tag)
{
    AHCICommandHeader hdr;

    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(ahci->parent->qts, hdr.ctba + offsetof(NCQFIS, tag),
                 tag << 3);
}

/* Clear an error the way a host's error handler does. */
static void ncq_recover(AHCIQState *ahci, uint8_t port)
{
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(ahci, port);
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
}

/* READ LOG EXT of one page (libqos knows no such command: patch it in). */
static void ncq_read_log(AHCIQState *ahci, uint8_t port, uint8_t log,
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
static uint8_t ncq_wait_error(AHCIQState *ahci, uint8_t port)
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

static void check_error_log(AHCIQState *ahci, uint8_t port, bool nq,
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
static void check_still_serving(AHCIQState *ahci, uint8_t port)
{
    uint8_t out[4096], in[4096];

    memset(out, 0x5a, sizeof(out));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, sizeof(out), 100);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 100);
    g_assert(!memcmp(out, in, sizeof(in)));
}

static QDict *query_disk(AHCIQState *ahci)
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
static void ata_string(const uint16_t *words, int first, int count, char *out)
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

static void test_identify(void)
{
    AHCIQState *ahci = ncq_boot(NULL);
    uint16_t id[256];
    char str[41];
    unsigned port = ahci_port_select(ahci);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);

    ata_string(id, 27, 20, str);
    g_assert_cmpstr(str, ==, "ST3400620AS");
    ata_string(id, 23, 4, str);
    g_assert_cmpstr(str, ==, "3.AAK");
    ata_string(id, 10, 10, str);
    g_assert_cmpuint(strlen(str), >, 0);
    g_assert_cmphex(le16_to_cpu(id[76]) & (1 << 8), ==, 1 << 8);
    g_assert_cmpuint(le16_to_cpu(id[75]) & 0x1f, ==, 31);
    g_assert_cmpuint(le16_to_cpu(id[217]), ==, 7200);
    /* native SATA: no PATA reset result, or Linux applies bridge limits */
    g_assert_cmphex(le16_to_cpu(id[93]), ==, 0);
    ncq_shutdown(ahci);
}

/* Word 255: signature A5h, and the 512 bytes sum to zero. */
static void check_identify_integrity(const uint16_t *id)
{
    const uint8_t *b = (const uint8_t *)id;
    uint8_t sum = 0;
    int i;

    for (i = 0; i < 512; i++) {
        sum += b[i];
    }
    g_assert_cmphex(le16_to_cpu(id[255]) & 0xff, ==, 0xa5);
    g_assert_cmphex(sum, ==, 0);
}

/*
 * SET FEATURES (libqos knows no such command: patch it in), issued; the
 * caller waits for it.
 */
static AHCICommand *ncq_set_features_async(AHCIQState *ahci, uint8_t port,
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

/*
 * Issue 37 item 6, the contract of IDEDeviceClass.exec_cmd: the hook
 * comes before the generic table's permission check, so a device may add
 * commands the table refuses, and what it does not take is checked and
 * refused as without it.  A reserved command code (0Bh, in the table
 * for no drive) ends with ABRT, leaving the drive serving, on ide-hd
 * (no hook) and on ncq-disk (a hook that does not take it); READ LOG EXT,
 * which the table refuses, is refused by ide-hd and served by ncq-disk.
 */
static void test_hook_contract(gconstpointer data)
{
    bool hook = !strcmp(data, "ncq-disk");
    uint8_t port;
    AHCIQState *ahci = ahci_boot_spec(data, &port);
    QTestState *qts = ahci->parent->qts;
    uint8_t codes[] = { 0x0b, ATA_READ_LOG_EXT };
    uint8_t log[512];
    AHCICommandHeader hdr;
    int i;

    for (i = 0; i < ARRAY_SIZE(codes); i++) {
        AHCICommand *cmd;
        uint32_t tfd;

        if (hook && codes[i] == ATA_READ_LOG_EXT) {
            ncq_read_log(ahci, port, 0x10, 0, log);     /* verified */
            continue;
        }
        cmd = ahci_command_create(CMD_FLUSH_CACHE);
        ahci_command_commit(ahci, cmd, port);
        ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
        qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command), codes[i]);
        ahci_command_issue(ahci, cmd);
        tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);
        g_test_message("%s, command %02xh: TFD %08x", (const char *)data,
                       codes[i], tfd);
        g_assert_cmphex(tfd & AHCI_PX_TFD_STS_ERR, ==, AHCI_PX_TFD_STS_ERR);
        g_assert_cmphex((tfd >> 8) & ATA_ERR_ABRT, ==, ATA_ERR_ABRT);
        ahci_command_free(cmd);
        ncq_recover(ahci, port);
    }
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* SET FEATURES, stepping the clock: 82h is held until a deadline */
static void ncq_set_features(AHCIQState *ahci, uint8_t port, uint8_t feature)
{
    AHCICommand *cmd = ncq_set_features_async(ahci, port, feature);

    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
}

/*
 * The model's words (st3400620as: ATA/ATAPI-7, a 16 MB buffer, SATA
 * 3.0 Gb/s), the link the port reports, and a checksum that stays right
 * when SET FEATURES changes a word.
 */
static void test_identify_model_words(void)
{
    AHCIQState *ahci = ahci_boot_device_args("ncq-disk", img_path, NULL,
                                             HBA_GEN3);
    uint16_t id[256];
    unsigned port = ahci_port_select(ahci);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    check_identify_integrity(id);
    g_assert_cmphex(le16_to_cpu(id[80]), ==, 0x00f0);   /* ATA-4..7 */
    g_assert_cmphex(le16_to_cpu(id[81]), ==, 0x001d);   /* ATA-7 published */
    g_assert_cmpuint(le16_to_cpu(id[21]), ==, 32768);   /* 16 MiB */
    g_assert_cmphex(le16_to_cpu(id[76]) & 0xe, ==, 0x6); /* Gen1, Gen2 */
    g_assert_cmphex(le16_to_cpu(id[77]) & 0xe, ==, 2 << 1);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_SPD, ==, 0x20);
    g_assert_cmphex(ahci_rreg(ahci, AHCI_CAP) & AHCI_CAP_ISS, ==, 3 << 20);
    /*
     * The guest's speed limit (PxSCTL.SPD) holds the link at Gen1 from the
     * next COMRESET on, when the link is negotiated again; not before.
     */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1 << 4);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_SPD, ==, 0x20);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, (1 << 4) | 1);   /* DET=1 */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1 << 4);         /* released */
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_SPD, ==, 0x10);
    /* lifted, it holds until the next COMRESET too */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_SPD, ==, 0x10);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                    AHCI_PX_SSTS_SPD, ==, 0x20);
    ahci_port_clear(ahci, port);

    g_assert_cmphex(le16_to_cpu(id[85]) & (1 << 5), ==, 1 << 5);
    ncq_set_features(ahci, port, ATA_SF_WCACHE_OFF);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(le16_to_cpu(id[85]) & (1 << 5), ==, 0);
    check_identify_integrity(id);
    ncq_shutdown(ahci);
}

/* A drive slower than the link's first generation, and a Gen3 SSD. */
static void test_identify_link_per_model(void)
{
    static const struct {
        const char *props;
        uint16_t gens, spd;
    } cases[] = {
        { "model=hp-c2247a", 0x2, 0x10 },
        { "model=intel-530", 0xe, 0x30 },
    };
    int i;

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        AHCIQState *ahci = ahci_boot_device_args("ncq-disk", img_path,
                                                 cases[i].props, HBA_GEN3);
        uint16_t id[256];
        unsigned port = ahci_port_select(ahci);

        ahci_port_clear(ahci, port);
        ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
        check_identify_integrity(id);
        g_assert_cmphex(le16_to_cpu(id[76]) & 0xe, ==, cases[i].gens);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                        AHCI_PX_SSTS_SPD, ==, cases[i].spd);
        ncq_shutdown(ahci);
    }
}

/*
 * q35's AHCI advertises 1.5 Gb/s (CAP.ISS) as it always has, whatever
 * drive is on the port: the link speed a device reports is for HBAs
 * given sata-gen (guest-tests/test_bad_input.py: a bad one stops QEMU).
 */
static void test_identify_hba_default_gen1(void)
{
    static const char *const devices[] = { "ncq-disk", "ide-hd" };
    int i;

    for (i = 0; i < ARRAY_SIZE(devices); i++) {
        AHCIQState *ahci = ahci_boot_device(devices[i], img_path, NULL);
        unsigned port = ahci_port_select(ahci);

        g_assert_cmphex(ahci_rreg(ahci, AHCI_CAP) & AHCI_CAP_ISS, ==,
                        1 << 20);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SSTS) &
                        AHCI_PX_SSTS_SPD, ==, 0x10);
        ncq_shutdown(ahci);
    }
}

static void test_identify_queue_depth(void)
{
    AHCIQState *ahci = ncq_boot("queue-depth=8");
    uint16_t id[256];
    unsigned port = ahci_port_select(ahci);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmpuint(le16_to_cpu(id[75]) & 0x1f, ==, 7);
    ncq_shutdown(ahci);
}

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

/*
 * Guest mistakes (issue 6): each case asserts the ATA outcome and that the
 * drive still serves afterwards.
 */

#define FPDMA_MAX_SECTORS 65536             /* count field 0 */
#define FPDMA_MAX_BYTES   (FPDMA_MAX_SECTORS * 512)

/* Step the virtual clock until the command's tag leaves PxSACT. */
static void ncq_wait_done(AHCIQState *ahci, uint8_t port, uint8_t slot)
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
static AHCICommand *ncq_prepare_len(AHCIQState *ahci, uint8_t port,
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

static void ncq_bufwrite(QTestState *qts, uint64_t addr, const uint8_t *buf,
                         size_t len)
{
    size_t off;

    for (off = 0; off < len; off += QTEST_PIECE) {
        qtest_bufwrite(qts, addr + off, buf + off, MIN(QTEST_PIECE,
                                                       len - off));
    }
}

static void ncq_bufread(QTestState *qts, uint64_t addr, uint8_t *buf,
                        size_t len)
{
    size_t off;

    for (off = 0; off < len; off += QTEST_PIECE) {
        qtest_bufread(qts, addr + off, buf + off, MIN(QTEST_PIECE,
                                                      len - off));
    }
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
static void hold_bounce_buffer(AHCIQState *ahci)
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

/* Where q35 with the qtests' RAM has nothing mapped (above the 64-bit hole) */
#define UNMAPPED_GPA 0x4000000000ULL

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
 * Issue a non-queued DMA command, which the drive (timing on) holds busy
 * until the model's deadline: it is still in PxCI.
 */
static AHCICommand *issue_held(AHCIQState *ahci, uint8_t port,
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
/*
 * A queued read dropped by the COMRESET while the host still reads: the
 * drive used to wait for the host in the register write, without a
 * bound (as ide-hd's reset does); it now stops waiting after a moment
 * and leaves the read to end on its own.
 */
static const StallCase stall_queued_reset = { READ_FPDMA_QUEUED, false, true };

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

/* Queue @n reads of 4 KiB at distinct LBAs; returns the commands. */
static void ncq_queue_reads(AHCIQState *ahci, uint8_t port, uint64_t gbuf,
                            AHCICommand **cmd, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 7919 * (i + 1));
        ahci_command_issue_async(ahci, cmd[i]);
    }
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
 * Fault injection and power loss (docs/faults.md): the ATA outcome byte
 * for byte, and a drive that goes on serving afterwards.
 */

#define ATA_ERR_UNC    0x40
#define ATA_STS_DRDY_ERR 0x41
#define FAULT_MS       1000000LL

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

/* The whole NCQ Command Error log page after a media error. */
static void check_media_error_log(AHCIQState *ahci, uint8_t port,
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

/* Virtual time from issue to completion of one queued read. */
static int64_t ncq_read_latency(AHCIQState *ahci, uint8_t port, uint64_t lba)
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

/* Eight sectors of the image file at @lba equal @byte everywhere. */
/*
 * SCT Command Transport (docs/smart.md, "SCT Command Transport"): the
 * commands travel in log E0h through SMART READ LOG and SMART WRITE LOG.
 */
#define ATA_SMART           0xb0
#define SMART_READ_LOG      0xd5
#define SMART_WRITE_LOG     0xd6
#define SMART_KEY_LBA       0xc24f00
#define LOG_SCT             0xe0
#define LOG_SCT_DATA        0xe1
#define SCT_ERC             3

static void system_reset(QTestState *qts);

/*
 * SMART READ LOG (or WRITE LOG) of @log with @count in the Count
 * register, moving @len bytes of @buf; returns the error register (0:
 * none) and, in *ret, Count | LBA Low << 8 of the D2H Register FIS (where
 * an SCT command returns its value, or its extended status code).
 */
static uint8_t ncq_smart_log(AHCIQState *ahci, uint8_t port, bool write,
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
static uint8_t sct_command(AHCIQState *ahci, uint8_t port, uint16_t action,
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

static void sct_status(AHCIQState *ahci, uint8_t port, uint8_t *buf)
{
    uint16_t ret;

    g_assert_cmphex(ncq_smart_log(ahci, port, false, LOG_SCT, 1, buf, 512,
                                  &ret), ==, 0);
}

/* The last SCT command's extended status, action and function codes */
static void check_sct_last(AHCIQState *ahci, uint8_t port, uint16_t status,
                           uint16_t action, uint16_t function)
{
    uint8_t st[512];

    sct_status(ahci, port, st);
    g_assert_cmphex(lduw_le_p(st + 14), ==, status);
    g_assert_cmphex(lduw_le_p(st + 16), ==, action);
    g_assert_cmphex(lduw_le_p(st + 18), ==, function);
}

/* ERC get (function 2, or 4 for the power-on value) of a timer */
static uint16_t sct_erc_get(AHCIQState *ahci, uint8_t port,
                            uint16_t function, uint16_t selection)
{
    uint16_t ret = 0xffff;

    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, function, selection,
                                0, &ret), ==, 0);
    return ret;
}

static uint8_t log_write(AHCIQState *ahci, uint8_t port, uint8_t code,
                         uint8_t log, uint16_t page, uint16_t count,
                         const uint8_t *buf, uint32_t prdt_bytes);

/* The same get through WRITE LOG EXT (GPL, 3Fh): the same registers */
static uint16_t sct_erc_get_gpl(AHCIQState *ahci, uint8_t port,
                                uint16_t selection)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t d2h = ahci->port[port].fb + 0x40;
    uint8_t cmd[512] = { 0 };

    stw_le_p(cmd, SCT_ERC);
    stw_le_p(cmd + 2, 2);
    stw_le_p(cmd + 4, selection);
    g_assert_cmphex(log_write(ahci, port, 0x3f, LOG_SCT, 0, 1, cmd,
                              sizeof(cmd)), ==, 0);
    return qtest_readb(qts, d2h + 12) | qtest_readb(qts, d2h + 4) << 8;
}

/*
 * IDENTIFY word 206 claims SCT with Error Recovery Control; both log
 * directories list E0h; the SCT status holds the drive's temperatures
 * (as SMART's) and the SMART status.
 */
static void test_sct_status(void)
{
    uint8_t port, st[512], dir[512];
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint16_t id[256], ret;
    QDict *info;
    int64_t temp;

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    /* SCT, Error Recovery Control, Data Tables */
    g_assert_cmphex(le16_to_cpu(id[206]), ==, 0x0029);
    g_assert_cmphex(ncq_smart_log(ahci, port, false, 0x00, 1, dir,
                                  sizeof(dir), &ret), ==, 0);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT), ==, 1);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT_DATA), ==, 1);
    ncq_read_log(ahci, port, 0x00, 0, dir);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT), ==, 1);
    g_assert_cmpuint(lduw_le_p(dir + 2 * LOG_SCT_DATA), ==, 1);

    qtest_clock_step(ahci->parent->qts, 600 * 1000 * FAULT_MS);
    sct_status(ahci, port, st);
    info = query_disk(ahci);
    temp = qdict_get_int(qdict_get_qdict(info, "smart"), "temperature");
    qobject_unref(info);
    g_assert_cmpuint(lduw_le_p(st), ==, 3);             /* format */
    g_assert_cmphex(lduw_le_p(st + 14), ==, 0);         /* no command yet */
    g_assert_cmpint((int8_t)st[200], ==, temp);         /* now */
    g_assert_cmpint((int8_t)st[201], ==, 25);           /* power-on */
    g_assert_cmpint((int8_t)st[202], ==, temp);         /* warmed up */
    g_assert_cmpint(temp, >, 25);
    g_assert_cmpint((int8_t)st[203], <=, (int8_t)st[201]);
    g_assert_cmpint((int8_t)st[204], >=, (int8_t)st[202]);
    g_assert_cmpint(st[205], ==, 60);
    g_assert_cmphex(lduw_le_p(st + 214), ==, 0xc24f);   /* passed */
    g_assert_cmpuint(lduw_le_p(st + 216), ==, 10);      /* 1.0 s minimum */
    /* the same through READ LOG EXT */
    ncq_read_log(ahci, port, LOG_SCT, 0, dir);
    g_assert_cmpmem(dir, 200, st, 200);
    /* E1h holds nothing before a Data Table command: 000Bh */
    g_assert_cmphex(ncq_smart_log(ahci, port, false, LOG_SCT_DATA, 1, dir,
                                  sizeof(dir), &ret), ==, ATA_ERR_ABRT);
    check_sct_last(ahci, port, 0x000b, 0, 0);

    /* the temperature history: an entry a minute, 10 minutes so far */
    g_assert_cmphex(sct_command(ahci, port, 5, 1, 2, 0, &ret), ==, 0);
    g_assert_cmphex(ncq_smart_log(ahci, port, false, LOG_SCT_DATA, 1, dir,
                                  sizeof(dir), &ret), ==, 0);
    check_sct_last(ahci, port, 0, 5, 1);
    g_assert_cmpuint(lduw_le_p(dir), ==, 2);            /* version */
    g_assert_cmpuint(lduw_le_p(dir + 2), ==, 1);        /* sampling, min */
    g_assert_cmpuint(lduw_le_p(dir + 4), ==, 1);        /* interval, min */
    g_assert_cmpuint(lduw_le_p(dir + 30), ==, 128);     /* entries */
    g_assert_cmpuint(lduw_le_p(dir + 32), ==, 10);      /* the 11th */
    g_assert_cmpint((int8_t)dir[34 + 10], ==, temp);
    g_assert_cmpint((int8_t)dir[34 + 11], ==, -128);    /* none yet */
    ncq_shutdown(ahci);
}

/*
 * Error Recovery Control: the current limits start at 0 (none), a set is
 * read back, the power-on values are apart and become the current ones
 * at a power-on (system reset), restore brings the factory's 0 back.
 */
static void test_sct_erc(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint16_t ret;

    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 2), ==, 0);
    check_sct_last(ahci, port, 0, SCT_ERC, 2);
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 70, &ret), ==, 0);
    check_sct_last(ahci, port, 0, SCT_ERC, 1);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 70);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 2), ==, 0);
    /* a value above 255 comes back in both registers */
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 2, 0x123, &ret), ==,
                    0);
    g_assert_cmphex(sct_erc_get(ahci, port, 2, 2), ==, 0x123);
    g_assert_cmphex(sct_erc_get_gpl(ahci, port, 2), ==, 0x123);
    g_assert_cmphex(sct_erc_get_gpl(ahci, port, 1), ==, 70);
    /* power-on values */
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 3, 1, 100, &ret), ==,
                    0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 1), ==, 100);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 70);
    /* a power-on: the machine's reset, then the host sets the HBA up */
    system_reset(ahci->parent->qts);
    ahci_clean_mem(ahci);
    ahci_pci_enable(ahci);
    ahci_hba_enable(ahci);
    port = ahci_port_select(ahci);
    ahci_port_clear(ahci, port);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 1), ==, 100);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 100);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 2), ==, 0);
    /* restore the factory's */
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 5, 1, 0, &ret), ==, 0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 0);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 1), ==, 0);
    ncq_shutdown(ahci);
}

/*
 * Bad SCT input: ABRT, the extended status code in Count/LBA Low and in
 * the SCT status (ACS-3 table 186), nothing changed, the drive serves on.
 */
static void test_sct_bad_input(void)
{
    static const struct {
        uint16_t action, function, selection, limit, status;
    } bad[] = {
        { 0x0099, 1, 1, 70, 0x0010 },   /* unknown action code */
        { 4, 2, 3, 0, 0x0010 },         /* Feature Control: not offered */
        { 5, 2, 2, 0, 0x0001 },         /* Data Tables: no such function */
        { 5, 1, 7, 0, 0x0011 },         /* ...nor table */
        { SCT_ERC, 9, 1, 70, 0x0004 },  /* unknown ERC function */
        { SCT_ERC, 0, 1, 70, 0x0004 },
        { SCT_ERC, 1, 3, 70, 0x0005 },  /* unknown timer */
        { SCT_ERC, 1, 1, 5, 0x0006 },   /* 0.5 s: below the minimum */
        { SCT_ERC, 3, 2, 9, 0x0007 },
    };
    uint8_t port, cmd[1024] = { 0 };
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint16_t ret;
    int i;

    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 70, &ret), ==, 0);
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        g_assert_cmphex(sct_command(ahci, port, bad[i].action,
                                    bad[i].function, bad[i].selection,
                                    bad[i].limit, &ret), ==, ATA_ERR_ABRT);
        g_assert_cmphex(ret, ==, bad[i].status);
        check_sct_last(ahci, port, bad[i].status, bad[i].action,
                       bad[i].function);
    }
    /* an SCT command is one sector: two are refused before any data */
    stw_le_p(cmd, SCT_ERC);
    g_assert_cmphex(ncq_smart_log(ahci, port, true, LOG_SCT, 2, cmd,
                                  sizeof(cmd), &ret), ==, ATA_ERR_ABRT);
    g_assert_cmphex(ret, ==, 0x0003);
    /* E1h takes data only after a Write Same or Long Sector command */
    g_assert_cmphex(ncq_smart_log(ahci, port, true, LOG_SCT_DATA, 1, cmd,
                                  512, &ret), ==, ATA_ERR_ABRT);
    g_assert_cmphex(ret, ==, 0x000b);
    check_sct_last(ahci, port, 0x000b, SCT_ERC, 3);     /* the last that ran */
    g_assert_cmpuint(sct_erc_get(ahci, port, 2, 1), ==, 70);
    g_assert_cmpuint(sct_erc_get(ahci, port, 4, 2), ==, 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A queued read of an unrecoverable sector: how long until UNC */
static int64_t ncq_unc_latency(AHCIQState *ahci, uint8_t port, uint64_t lba)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096,
                                   lba);
    int64_t t0 = qtest_clock_step(qts, 1), now;

    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_UNC);
    now = qtest_clock_step(qts, 1);
    ncq_recover(ahci, port);
    check_media_error_log(ahci, port, ahci_command_slot(cmd), ATA_ERR_UNC,
                          lba, 8);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    return now - t0;
}

/*
 * The firmware honours ERC (docs/faults.md): with recovery=150s the drive
 * retries an unrecoverable sector 150 s of virtual time before UNC; with
 * a 7 s read limit, 7 s; a limit back at 0 gives the 150 s again.
 */
static void test_sct_erc_limits_unc(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path,
                                      "recovery=150s,faults=unc@2000+8",
                                      &port);
    int64_t own, limited, again;
    uint16_t ret;

    own = ncq_unc_latency(ahci, port, 2000);
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 70, &ret), ==, 0);
    limited = ncq_unc_latency(ahci, port, 2000);
    g_assert_cmphex(sct_command(ahci, port, SCT_ERC, 1, 1, 0, &ret), ==, 0);
    again = ncq_unc_latency(ahci, port, 2000);
    g_assert_cmpint(own, >=, 150000 * FAULT_MS);
    g_assert_cmpint(own, <, 150100 * FAULT_MS);
    g_assert_cmpint(limited, >=, 7000 * FAULT_MS);
    g_assert_cmpint(limited, <, 7100 * FAULT_MS);
    g_assert_cmpint(again, >=, 150000 * FAULT_MS);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

static void check_image(const char *path, uint64_t lba, uint8_t byte)
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
static void ncq_write_fill(AHCIQState *ahci, uint8_t port, uint64_t lba,
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

/*
 * Power cut: flushed data and FUA data survive; data only in the write
 * cache is lost, i.e. the image holds those sectors' old contents.
 */
static void test_power_cut(void)
{
    g_autofree char *path = g_strdup("/tmp/qtest.ncq-disk-power.XXXXXX");
    int fd = g_mkstemp(path);
    AHCIQState *ahci;
    AHCICommand *flush;
    QDict *rsp, *ret;
    QListEntry *e;
    uint8_t port;
    bool lost_1000 = false, lost_5000 = false;

    g_assert(fd >= 0);
    g_assert(ftruncate(fd, 16 * 1024 * 1024) == 0);
    close(fd);
    ahci = ncq_boot_ready(path, NULL, &port);

    ncq_write_fill(ahci, port, 1000, 0x11, false);      /* then flushed */
    flush = ahci_command_create(CMD_FLUSH_CACHE);
    ahci_command_commit(ahci, flush, port);
    ahci_command_issue_async(ahci, flush);
    ncq_wait(ahci, port, flush);
    ahci_command_verify(ahci, flush);
    ahci_command_free(flush);
    ncq_write_fill(ahci, port, 3000, 0x33, true);       /* FUA */
    ncq_write_fill(ahci, port, 1000, 0x22, false);      /* cached only */
    ncq_write_fill(ahci, port, 5000, 0x55, false);      /* cached only */
    check_image(path, 5000, 0x55);      /* the device wrote it at once */

    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0', 'quit': false } }");
    ret = qdict_get_qdict(rsp, "return");
    g_assert_nonnull(ret);
    QLIST_FOREACH_ENTRY(qdict_get_qlist(ret, "lost"), e) {
        QDict *r = qobject_to(QDict, qlist_entry_obj(e));
        uint64_t lba = qdict_get_int(r, "lba");

        g_assert_cmpint(qdict_get_int(r, "sectors"), ==, 8);
        lost_1000 |= lba == 1000;
        lost_5000 |= lba == 5000;
        g_assert(lba == 1000 || lba == 5000);
    }
    /* the last write cannot have been destaged: the cut came with it */
    g_assert(lost_5000);
    g_assert_cmpint(qdict_get_int(ret, "lost-sectors"), ==,
                    8 * (lost_1000 + lost_5000));
    qobject_unref(rsp);
    rsp = qtest_qmp(ahci->parent->qts, "{ 'execute': 'query-status' }");
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(rsp, "return"), "status"),
                    ==, "shutdown");
    qobject_unref(rsp);

    check_image(path, 5000, 0x00);
    check_image(path, 3000, 0x33);
    check_image(path, 1000, lost_1000 ? 0x11 : 0x22);
    ncq_shutdown(ahci);
    unlink(path);
}

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

/* system_reset, back when the reset is done (fw_cfg's files are new). */
static void system_reset(QTestState *qts)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(qts, "RESET");
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

/* IDENTIFY word @w, from a fresh IDENTIFY. */
static uint16_t identify_word(AHCIQState *ahci, uint8_t port, int w)
{
    uint16_t id[256];

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    return le16_to_cpu(id[w]);
}

/*
 * DATA SET MANAGEMENT with TRIM of one range (ACS-2: 6-byte LBA and a
 * 2-byte count per 8-byte entry); libqos knows no such command, so a
 * one-block WRITE DMA is patched into it.
 */
static AHCICommand *ncq_trim_prepare(AHCIQState *ahci, uint8_t port,
                                     uint64_t gbuf, uint64_t lba,
                                     uint16_t count)
{
    QTestState *qts = ahci->parent->qts;
    uint8_t range[512] = { 0 };
    AHCICommand *cmd = ahci_command_create(CMD_WRITE_DMA);
    AHCICommandHeader hdr;

    stq_le_p(range, lba | ((uint64_t)count << 48));
    qtest_memwrite(qts, gbuf, range, sizeof(range));
    ahci_command_adjust(cmd, 0, gbuf, sizeof(range), 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command), ATA_DSM);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, feature_low),
                 ATA_DSM_TRIM);
    return cmd;
}

/* A hard disk of the NCQ era has no TRIM: not in IDENTIFY, DSM aborts. */
static void test_trim_hdd_aborts(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 512);
    AHCICommand *cmd;

    g_assert_cmphex(identify_word(ahci, port, ID_TRIM) & 1, ==, 0);
    cmd = ncq_trim_prepare(ahci, port, gbuf, 2048, 8);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    /* as libata's error handler does: IDENTIFY again (clears TFD.ERR) */
    g_assert_cmphex(identify_word(ahci, port, ID_TRIM) & 1, ==, 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * An SSD model has TRIM.  The command is held until the model's deadline
 * (its completion must not depend on when the host's discard finishes),
 * and then the range reads back as zeros.
 */
static void test_trim_ssd_held_then_done(void)
{
    g_autofree char *path = g_strdup("/tmp/qtest.ncq-disk-trim.XXXXXX");
    int fd = g_mkstemp(path);
    AHCIQState *ahci;
    AHCICommand *cmd;
    uint64_t gbuf;
    uint8_t port;

    g_assert(fd >= 0);
    g_assert(ftruncate(fd, 16 * 1024 * 1024) == 0);
    close(fd);
    ahci = ncq_boot_ready(path, "model=intel-530", &port);
    g_assert_cmphex(identify_word(ahci, port, ID_TRIM) & 1, ==, 1);

    ncq_write_fill(ahci, port, 2048, 0x77, true);
    check_image(path, 2048, 0x77);
    gbuf = ahci_alloc(ahci, 512);
    cmd = ncq_trim_prepare(ahci, port, gbuf, 2048, 8);
    ahci_command_issue_async(ahci, cmd);
    /* the virtual clock has not moved: the drive is still busy with it */
    g_assert(ncq_busy(ahci, port, ahci_command_slot(cmd)));
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    check_image(path, 2048, 0x00);
    ncq_shutdown(ahci);
    unlink(path);
}

/*
 * Non-queued media commands reach the model decoded from their registers
 * as the IDE core reads them: held busy in the drive's queue (tag 32)
 * with that LBA and count until the model's deadline.
 */
static void test_nonqueued_decoded(void)
{
    static const struct {
        uint8_t cmd;
        uint64_t lba;           /* LBA28 commands: bits 24-27 too */
        size_t sectors;         /* a count register of 0: 256 for LBA28 */
        const char *op;
        uint8_t code;           /* sent instead of cmd (a retired form) */
    } c[] = {
        { CMD_READ_DMA, 0x5000123, 256, "R" },
        { CMD_READ_DMA_EXT, 0x6000456, 8, "R" },
        { CMD_WRITE_DMA, 0x7000789, 16, "W" },
        { CMD_WRITE_DMA_EXT, 0x8000abc, 1, "W" },
        { CMD_READ_PIO, 0x9000def, 4, "R" },
        { CMD_FLUSH_CACHE, 0, 0, "F" },
        /* the "without retries" forms and WRITE VERIFY (retired) */
        { CMD_READ_DMA, 0x5000200, 2, "R", 0xc9 },
        { CMD_WRITE_DMA, 0x7000300, 3, "W", 0xcb },
        { CMD_READ_PIO, 0x9000400, 1, "R", 0x21 },
        { CMD_WRITE_PIO, 0x9000500, 1, "W", 0x31 },
        { CMD_WRITE_PIO, 0x9000600, 2, "W", 0x3c },
    };
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(big_img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 256 * 512);
    int i;

    for (i = 0; i < ARRAY_SIZE(c); i++) {
        AHCICommand *cmd = ahci_command_create(c[i].cmd);
        QDict *info, *e;
        QList *queue;

        if (c[i].sectors) {
            ahci_command_adjust(cmd, c[i].lba, gbuf, c[i].sectors * 512, 0);
        }
        ahci_command_commit(ahci, cmd, port);
        if (c[i].code) {
            AHCICommandHeader hdr;

            ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
            qtest_writeb(ahci->parent->qts,
                         hdr.ctba + offsetof(RegH2DFIS, command), c[i].code);
        }
        ahci_command_issue_async(ahci, cmd);
        info = query_disk(ahci);
        queue = qdict_get_qlist(info, "queue");
        g_assert_cmpint(qlist_size(queue), ==, 1);
        e = qobject_to(QDict, qlist_peek(queue));
        g_assert_cmpint(qdict_get_int(e, "tag"), ==, NCQ_ID_NONQUEUED);
        g_assert_cmpstr(qdict_get_str(e, "op"), ==, c[i].op);
        g_assert_cmphex(qdict_get_int(e, "lba"), ==, c[i].lba);
        g_assert_cmpint(qdict_get_int(e, "sectors"), ==, c[i].sectors);
        qobject_unref(info);
        ncq_wait(ahci, port, cmd);
        ahci_command_verify(ahci, cmd);
        ahci_command_free(cmd);
    }
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * SET FEATURES 82h (write cache off) writes the cache back first: the
 * drive holds it as a FLUSH (tag 32, op F) until the model's deadline,
 * however soon the host's flush returns, so the guest sees it complete at
 * a virtual time the host does not choose.  Before, QEMU's generic handler
 * completed it when the host's flush did: two identical guest runs on a
 * loaded host drifted apart from an `hdparm -W0` on.
 */
static void test_nonqueued_wc_off_held(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    AHCICommand *cmd = ncq_set_features_async(ahci, port, ATA_SF_WCACHE_OFF);
    uint8_t slot = ahci_command_slot(cmd);
    QDict *info = query_disk(ahci), *e;
    QList *queue = qdict_get_qlist(info, "queue");

    g_assert_cmpint(qlist_size(queue), ==, 1);
    e = qobject_to(QDict, qlist_peek(queue));
    g_assert_cmpint(qdict_get_int(e, "tag"), ==, NCQ_ID_NONQUEUED);
    g_assert_cmpstr(qdict_get_str(e, "op"), ==, "F");
    qobject_unref(info);
    g_usleep(100 * 1000);       /* the host's flush has long returned */
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot), !=,
                    0);
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    g_assert_cmphex(identify_word(ahci, port, 85) & (1 << 5), ==, 0);
    ncq_shutdown(ahci);
}

/* ncq-disk-set with one argument; the error's text, or NULL */
/* A QMP response's error description (to be freed), or NULL; frees it */
static char *qmp_error_of(QDict *rsp)
{
    char *err = NULL;

    if (qdict_haskey(rsp, "error")) {
        err = g_strdup(qdict_get_str(qdict_get_qdict(rsp, "error"), "desc"));
    }
    qobject_unref(rsp);
    return err;
}

static char *ncq_set(QTestState *qts, const char *key, QObject *value)
{
    QDict *args = qdict_new();
    QDict *rsp;

    qdict_put_str(args, "id", "disk0");
    qdict_put_obj(args, key, value);
    rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-set', 'arguments': %p }",
                    args);
    return qmp_error_of(rsp);
}

/*
 * ncq-disk-set and HMP's ncq_disk_set check settings as the properties
 * do, with the same messages; HMP reads a setting as the property does
 * (the model file's form), an old "-ns" spelling in nanoseconds.
 */
static void test_set_checks(void)
{
    static const struct {
        const char *key;
        int64_t value;
        const char *error;
    } bad[] = {
        { "starvation-timeout-ns", 3600000000001LL,
          "starvation-timeout=3600000.000001ms is out of range; use "
          "0..3600000 ms" },
        { "prio-timeout-ns", -1, "prio-timeout=-1ns is out of range" },
        { "queue-depth", 33, "queue-depth=33 is out of range; use 1 to 32" },
        { "clustering", 65537, "clustering=65537 is out of range; use "
          "0..65536 sectors" },
    };
    static const struct {
        const char *cmd;
        const char *error;
    } hmp_bad[] = {
        { "ncq_disk_set disk0 clustering 65537",
          "clustering='65537' is out of range; use 0..65536 sectors" },
        { "ncq_disk_set disk0 aging-weight -1",
          "aging-weight='-1' is not a value of aging-weight" },
        { "ncq_disk_set disk0 queue-depth 0",
          "queue-depth=0 is out of range; use 1 to 32" },
        { "ncq_disk_set disk0 honour-prio yes",
          "honour-prio='yes' is not a value of honour-prio; use on or off" },
        { "ncq_disk_set disk0 policy lifo", "policy='lifo' is not a value "
          "of policy; use fcfs, sstf, clook, sptf or aged-sptf" },
        { "ncq_disk_set disk0 depth 8", "unknown setting 'depth'" },
    };
    AHCIQState *ahci = ncq_boot(NULL);
    QTestState *qts = ahci->parent->qts;
    QDict *info;
    char *out;
    int i;

    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        out = ncq_set(qts, bad[i].key, QOBJECT(qnum_from_int(bad[i].value)));
        g_assert(out && strstr(out, bad[i].error));
        g_free(out);
    }
    out = ncq_set(qts, "policy", QOBJECT(qstring_from_str("lifo")));
    g_assert_cmpstr(out, ==, "policy='lifo' is not a value of policy; use "
                    "fcfs, sstf, clook, sptf or aged-sptf");
    g_free(out);
    g_assert_null(ncq_set(qts, "starvation-timeout-ns",
                          QOBJECT(qnum_from_int(NCQ_MAX_TIMEOUT_NS))));
    for (i = 0; i < ARRAY_SIZE(hmp_bad); i++) {
        out = qtest_hmp(qts, "%s", hmp_bad[i].cmd);
        g_assert(strstr(out, hmp_bad[i].error));
        g_free(out);
    }
    out = qtest_hmp(qts, "ncq_disk_set disk0 aging-weight 0.032");
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    out = qtest_hmp(qts, "ncq_disk_set disk0 prio-timeout-ns 2500000");
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    out = qtest_hmp(qts, "ncq_disk_set disk0 timeout 2s");
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    info = query_disk(ahci);
    g_assert_cmpint(qdict_get_int(info, "aging-weight"), ==, 32);
    g_assert_cmpint(qdict_get_int(info, "prio-timeout-ns"), ==, 2500000);
    g_assert_cmpint(qdict_get_int(info, "starvation-timeout-ns"), ==,
                    2000000000);
    qobject_unref(info);
    ncq_shutdown(ahci);
}

/* The value of setting @name in query-ncq-disk's settings list */
static char *info_setting(AHCIQState *ahci, const char *name)
{
    QDict *info = query_disk(ahci);
    QListEntry *e;
    char *value = NULL;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(info, "settings"), e) {
        QDict *s = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(s, "name"), name)) {
            value = g_strdup(qdict_get_str(s, "value"));
        }
    }
    qobject_unref(info);
    return value;
}

/* Setting @i at stored value @v, as its text */
static char *setting_text(int i, uint64_t v)
{
    NcqSettings st = { 0 };
    char text[64];

    ncq_setting_put(i, &st, v);
    ncq_setting_format(i, &st, text, sizeof(text));
    return g_strdup(text);
}

/* ncq-disk-set's settings list with one setting; the error, or NULL */
static char *qmp_set_one(QTestState *qts, const char *name,
                         const char *value)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'ncq-disk-set', 'arguments': "
                           "{ 'id': 'disk0', 'settings': [ { 'name': %s, "
                           "'value': %s } ] } }", name, value);

    return qmp_error_of(rsp);
}

/* device_add of the drive with NAME=@value; the error, or NULL */
static char *plug_with(QTestState *qts, const char *name, const char *value)
{
    QDict *args = qdict_new();
    QDict *rsp;

    qdict_put_str(args, "driver", "ncq-disk");
    qdict_put_str(args, "id", "disk0");
    qdict_put_str(args, "drive", "drive0");
    qdict_put_str(args, "bus", "ide.0");
    qdict_put_str(args, "model", "quantum-atlas10k");
    qdict_put_str(args, name, value);
    rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': %p }",
                    args);
    return qmp_error_of(rsp);
}

/*
 * Every setting of the library's table (ncq-params.h's NCQ_SETTINGS) on
 * every surface of the device, by its one name: the -device property
 * (device_add), QMP's ncq-disk-set and query-ncq-disk, HMP's
 * ncq_disk_set and info ncq-disk; each takes the row's bounds and
 * refuses one step past them, naming the setting.  A surface that lacks
 * a setting, or bounds that differ, fail here.  quantum-atlas10k has
 * zero-latency access, so every value of every setting is valid on it.
 */
static void test_settings_every_surface(void)
{
    AHCIQState *ahci = ncq_boot("model=quantum-atlas10k");
    QTestState *qts = ahci->parent->qts;
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t limit = d->size == 1 ? 1 : d->size == 4 ? UINT32_MAX :
                         INT64_MAX;
        g_autofree char *lo = setting_text(i, d->min);
        g_autofree char *hi = setting_text(i, d->max);
        g_autofree char *past = d->max < limit ?
                                setting_text(i, d->max + 1) : NULL;
        g_autofree char *cmd = g_strdup_printf("ncq_disk_set disk0 %s %s",
                                               d->name, hi);
        g_autofree char *shown = g_strdup_printf(" %s %s", d->name, hi);
        g_autofree char *got = NULL;
        g_autofree char *err = NULL;
        char *out;

        out = qtest_hmp(qts, "%s", cmd);
        g_assert_cmpstr(out, ==, "");
        g_free(out);
        got = info_setting(ahci, d->name);
        g_assert_cmpstr(got, ==, hi);
        out = qtest_hmp(qts, "info ncq-disk");
        g_assert_nonnull(strstr(out, shown));
        g_free(out);
        g_assert_null(qmp_set_one(qts, d->name, lo));
        g_free(got);
        got = info_setting(ahci, d->name);
        g_assert_cmpstr(got, ==, lo);
        if (past) {
            err = qmp_set_one(qts, d->name, past);
            g_assert_nonnull(err);
            g_assert_nonnull(strstr(err, d->name));
            g_assert_nonnull(strstr(err, "; use "));
            out = qtest_hmp(qts, "ncq_disk_set disk0 %s %s", d->name, past);
            g_assert_nonnull(strstr(out, d->name));
            g_assert_nonnull(strstr(out, "; use "));
            g_free(out);
        }
    }

    /* the property: each setting at its bound, and one step past it */
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);
        uint64_t limit = d->size == 1 ? 1 : d->size == 4 ? UINT32_MAX :
                         INT64_MAX;
        g_autofree char *hi = setting_text(i, d->max);
        g_autofree char *got = NULL;
        char *err;

        qtest_qmp_device_del(qts, "disk0");
        err = plug_with(qts, d->name, hi);
        g_assert_null(err);
        got = info_setting(ahci, d->name);
        g_assert_cmpstr(got, ==, hi);
        if (d->max < limit) {
            g_autofree char *past = setting_text(i, d->max + 1);

            qtest_qmp_device_del(qts, "disk0");
            err = plug_with(qts, d->name, past);
            g_assert_nonnull(err);
            g_assert_nonnull(strstr(err, d->name));
            g_free(err);
            g_assert_null(plug_with(qts, "policy", "sptf"));
        }
    }
    ncq_shutdown(ahci);
}

/*
 * The write cache at power-on is the model's (its write_cache, the
 * drive's factory setting: SAS drives off, SATA on) unless QEMU's
 * write-cache property says on or off; IDENTIFY word 85 bit 5 reports
 * it and query-ncq-disk agrees.
 */
static void test_write_cache_default(void)
{
    static const struct {
        const char *props;
        bool on;
    } cases[] = {
        { "model=fujitsu-max3036rc", false },
        { "model=fujitsu-max3036rc,write-cache=on", true },
        { "model=st3400620as", true },
        { "model=st3400620as,write-cache=off", false },
    };
    int i;

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        uint8_t port;
        AHCIQState *ahci = ncq_boot_ready(img_path, cases[i].props, &port);
        QDict *info = query_disk(ahci);

        g_assert_cmpint(!!(identify_word(ahci, port, 85) & (1 << 5)), ==,
                        cases[i].on);
        g_assert_cmpint(qdict_get_bool(info, "write-cache"), ==,
                        cases[i].on);
        qobject_unref(info);
        ncq_shutdown(ahci);
    }
}

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
static void add_builtin_model_tests(void)
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

/* Lines of @text that are not a sanitizer runtime's own ("==PID==..."). */
static int count_own_lines(const char *text)
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
static int spawn_startup(const char *args, char **err)
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

/*
 * Issue 29, defect 4: a parallel ATA bus (PIIX) has no NCQ: it would
 * never hand the drive a queued command, so ncq-disk refuses it at
 * startup with one line that names the fix.
 */
static void test_piix_refused(void)
{
    g_autofree char *err = NULL;
    int status = spawn_startup("-M pc -device ncq-disk,drive=d1,bus=ide.0",
                               &err);

    /* stopped at startup with exit status 1, not a signal */
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err, "ncq-disk needs an AHCI port"));
    g_assert(strstr(err, "a parallel ATA bus has no NCQ"));
    /* one line of QEMU's (a sanitizer build adds its "==PID==" notes) */
    g_assert_cmpint(count_own_lines(err), ==, 1);
}

/* Migration (issue 29, defect 3) */
static char *mig_uri;

/* Boot a destination for ncq_migrate() on @drive_opts (the -drive). */
static AHCIQState *ncq_boot_incoming(const char *drive, const char *props)
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
static AHCIQState *ncq_boot_drive(const char *drive, const char *props,
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
static void ncq_migrate(AHCIQState *from, AHCIQState *to)
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
 * A queued write with FUA, high priority and CDL index 3 halted by a
 * host I/O error (werror=stop), migrated, then resumed: the drive gets
 * it again with the flags it came with, although the guest has changed
 * its command table meanwhile (they used to be read again from it).
 */
/* An empty temporary file from @tmpl ("...XXXXXX"), changed in place. */
static void make_temp_file(char *tmpl)
{
    int fd = g_mkstemp(tmpl);

    g_assert(fd >= 0);
    close(fd);
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

/* Step the clock from deadline to deadline until the VM stops. */
static void wait_vm_stopped(AHCIQState *ahci)
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

/* The two sparse images the tests run on (unlinked at the end of main) */
/* ---- logs: one table, both directories, PIO and DMA forms ---- */

#define ATA_WRITE_LOG_EXT       0x3f
#define ATA_READ_LOG_DMA_EXT    0x47
#define ATA_WRITE_LOG_DMA_EXT   0x57
#define ATA_SMART               0xb0
#define SMART_READ_LOG          0xd5
#define SMART_WRITE_LOG         0xd6
#define CDL_PROPS               "model=seagate-exos-x18,cdl=on"

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
static uint8_t raw_cmd(AHCIQState *ahci, uint8_t port, uint8_t base,
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
static uint8_t log_cmd(AHCIQState *ahci, uint8_t port, uint8_t code,
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

static uint8_t log_read(AHCIQState *ahci, uint8_t port, uint8_t code,
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

static uint8_t log_write(AHCIQState *ahci, uint8_t port, uint8_t code,
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

/*
 * Every address 00h-FFh through GPL (READ LOG EXT, page by page) and
 * SMART (SMART READ LOG): a log the directory lists with N pages reads
 * pages 0..N-1 and aborts at N; an unlisted one aborts.  A served log
 * missing from its directory fails here.
 */
static void check_directory(AHCIQState *ahci, uint8_t port, uint8_t code)
{
    uint8_t dir[512], page[512];
    uint16_t ret;
    int addr, p;

    /*
     * Log E1h (SCT data transfer) has data once an SCT command chose it
     * (a Data Table command here; before one it aborts, 000Bh, which
     * /ncq-disk/sct/status checks)
     */
    g_assert_cmphex(sct_command(ahci, port, 5, 1, 2, 0, &ret), ==, 0);
    g_assert_cmphex(log_read(ahci, port, code, 0, 0, 1, dir), ==, 0);
    g_assert_cmphex(lduw_le_p(dir), ==, 1);
    for (addr = 0; addr < 256; addr++) {
        int n = addr ? lduw_le_p(dir + 2 * addr) : 1;

        if (code == ATA_SMART) {
            if (n) {
                g_assert_cmphex(log_read(ahci, port, code, addr, 0, n, NULL),
                                ==, 0);
            }
            g_assert_cmphex(log_read(ahci, port, code, addr, 0, n + 1, NULL),
                            ==, ATA_ERR_ABRT);
            continue;
        }
        for (p = 0; p < n; p++) {
            g_assert_cmphex(log_read(ahci, port, code, addr, p, 1, page), ==,
                            0);
        }
        g_assert_cmphex(log_read(ahci, port, code, addr, n, 1, page), ==,
                        ATA_ERR_ABRT);
    }
}

static void test_log_directories(gconstpointer data)
{
    uint8_t port, dir[512];
    AHCIQState *ahci = ncq_boot_ready(img_path, data, &port);

    check_directory(ahci, port, ATA_READ_LOG_EXT);
    check_directory(ahci, port, ATA_SMART);
    /* SATA Phy Event Counters are listed (smartctl -l sataphy) */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0, 0, 1, dir), ==,
                    0);
    g_assert_cmpint(lduw_le_p(dir + 2 * 0x11), ==, 1);
    /* ... and in IDENTIFY word 76 bit 10, where smartctl -l sataphy looks */
    g_assert_cmphex(identify_word(ahci, port, 76) & 0x0401, ==, 0x0400);
    ncq_shutdown(ahci);
}

/*
 * The IDENTIFY DEVICE data log: page 00h lists exactly the pages that
 * read with a valid header of their own number; page 01h is IDENTIFY.
 */
static void test_log_identify_pages(void)
{
    uint8_t port, list[512], page[512];
    uint16_t id[256];
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    int n, p, i;

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 0, 1, list),
                    ==, 0);
    n = list[8];
    for (p = 1; p < 9; p++) {
        bool listed = memchr(list + 9, p, n) != NULL;
        uint64_t head;

        g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, p, 1,
                                 page), ==, 0);
        head = ldq_le_p(page);
        if (p == 1) {
            g_assert_true(listed);
            g_assert_cmpmem(page, 512, id, 512);
            continue;
        }
        g_assert_cmpint(listed, ==, !!(head >> 63));
        if (listed) {
            g_assert_cmphex((head >> 16) & 0xff, ==, p);
            g_assert_cmphex(head & 0xffff, ==, 1);
        }
    }
    for (i = 0; i < n - 1; i++) {
        g_assert_cmphex(list[9 + i], <, list[10 + i]);
    }
    /* 02h: capacity as IDENTIFY words 100-103 say */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 2, 1, page),
                    ==, 0);
    g_assert_cmphex(ldq_le_p(page + 8) & 0xffffffffffffULL, ==,
                    ldq_le_p((uint8_t *)id + 200));
    /* 05h: the model number as in IDENTIFY words 27-46 */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 5, 1, page),
                    ==, 0);
    g_assert_cmpmem(page + 48, 40, (uint8_t *)id + 54, 40);
    /*
     * 06h: the trusted computing qword (byte 40) valid, bit 0 clear: the
     * drive has no TRUSTED SEND/RECEIVE (claiming it made Linux send
     * TRUSTED RECEIVE at probe, which the drive aborted)
     */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 6, 1, page),
                    ==, 0);
    g_assert_cmphex(ldq_le_p(page + 40), ==, 1ULL << 63);
    ncq_shutdown(ahci);
}

/*
 * READ LOG DMA EXT reads what READ LOG EXT reads, advertised as Linux
 * checks it (ata_id_has_read_log_dma_ext: word 86 bit 15, word 119 or
 * 120 with bits 15:14 = 01b and bit 3).  An ATA-7 drive has neither.
 */
static void test_log_dma(gconstpointer data)
{
    static const uint8_t logs[][2] = {
        { 0x00, 1 }, { 0x04, 2 }, { 0x11, 1 }, { 0x30, 2 },
    };
    bool has = data != NULL;
    uint8_t port, pio[512 * 2], dma[512 * 2];
    AHCIQState *ahci = ncq_boot_ready(img_path, data, &port);
    uint16_t w86 = identify_word(ahci, port, 86);
    uint16_t w119 = identify_word(ahci, port, 119);
    uint16_t w120 = identify_word(ahci, port, 120);
    int i;

    g_assert_cmpint(!!(w86 & 0x8000) && (w119 & 0xc008) == 0x4008 &&
                    (w120 & 0xc008) == 0x4008, ==, has);
    for (i = 0; i < ARRAY_SIZE(logs); i++) {
        g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, logs[i][0], 0,
                                 logs[i][1], pio), ==, 0);
        g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_DMA_EXT,
                                 logs[i][0], 0, logs[i][1], dma), ==,
                        has ? 0 : ATA_ERR_ABRT);
        if (has) {
            g_assert_cmpmem(pio, 512 * logs[i][1], dma, 512 * logs[i][1]);
        }
    }
    ncq_shutdown(ahci);
}

/*
 * WRITE LOG (DMA) EXT: the CDL log (18h) takes a valid page through
 * either form; bad input aborts and stores nothing: a read-only log or
 * page, a page beyond the log, a count of 0 or too many, a PRDT shorter
 * than the count; SMART WRITE LOG of a GPL-only log; a reserved
 * guideline or policy.
 */
static void test_log_write(void)
{
    uint8_t port, before[512], page[512], after[512];
    uint8_t pages2[1024];
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    uint64_t gbuf;

    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x18, 0, 1,
                             before), ==, 0);
    memcpy(page, before, 512);
    stl_le_p(page + 64 + 16, 30000);        /* read desc 1: total 30 ms */
    page[64] = 0x0f;                        /* ... policy abort */
    memset(pages2, 0, sizeof(pages2));
    memcpy(pages2, page, 512);

    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x10, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x30, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 1, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 0,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 2,
                              pages2, 1024), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_SMART, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    /* a DMA whose PRDT holds 256 bytes for a 512-byte page */
    gbuf = ahci_alloc(ahci, 512);
    qtest_memwrite(ahci->parent->qts, gbuf, page, 512);
    g_assert_cmphex(log_cmd(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0, 0x18, 0, 1,
                            gbuf, 256), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_cmd(ahci, port, ATA_READ_LOG_DMA_EXT, 0, 0x18, 0, 1,
                            gbuf, 256), ==, ATA_ERR_ABRT);
    ahci_free(ahci, gbuf);
    /* a reserved field: refused by the CDL table's own check */
    page[1] = 1;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[1] = 0;
    /* the guideline field, bits 3:0: Dh-Fh reserved, Ch (20 %) taken */
    page[0] = 0x0d;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[0] = 0x0c;
    /* the max active time policy Eh: SCSI's, reserved for ATA */
    page[64] = 0xef;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[64] = 0x0f;
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_DMA_EXT, 0x18, 0, 1,
                             after), ==, 0);
    g_assert_cmpmem(after, 512, before, 512);

    /* the valid page through DMA, then through PIO */
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_DMA_EXT, 0x18, 0, 1,
                             after), ==, 0);
    g_assert_cmpmem(after, 512, page, 512);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              before, 512), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x18, 0, 1,
                             after), ==, 0);
    g_assert_cmpmem(after, 512, before, 512);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* The LBA fields of the last D2H Register FIS: REQUEST SENSE's answer */
static uint32_t sense_lba(AHCIQState *ahci, uint8_t port)
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

static uint8_t request_sense(AHCIQState *ahci, uint8_t port, uint8_t *status)
{
    return raw_cmd_dev(ahci, port, CMD_FLUSH_CACHE, ATA_REQ_SENSE_EXT, 0,
                       0xa0, 0, 0, 0, 0, status);
}

/* The status of the last D2H Register FIS, where libata reads it */
static uint8_t d2h_status(AHCIQState *ahci, uint8_t port)
{
    uint8_t fis[4];

    qtest_memread(ahci->parent->qts, ahci->port[port].fb + 0x40, fis,
                  sizeof(fis));
    g_assert_cmphex(fis[0], ==, 0x34);
    return fis[2];
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

/*
 * CDL on a non-queued READ DMA EXT (the index in FEATURE bits 2:0, as
 * Linux puts it with NCQ off): the same policies as over NCQ.  Read
 * descriptor 1's active time limit of 10 us is missed by any access.
 * Abort (Fh): ERR, ABRT and status bit 1, the sense (ABORTED COMMAND,
 * 2Eh/02h) from REQUEST SENSE DATA EXT.  Data currently unavailable
 * (Dh): no error, status bit 1, the data read, sense COMPLETED 55h/0Ah.
 * Index 0: no limit, no sense.  Read descriptor 3's total time limit
 * (the command duration guideline) of 10 us with abort does not apply:
 * it is for NCQ commands only (cdl-tools commit 40b0b10; its tests 0503
 * and 0504 expect no error with NCQ off).
 */
static void test_cdl_non_queued(void)
{
    uint8_t port, page[512], status, data[4096], want[4096];
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, sizeof(data));
    const uint64_t lba = 100000;

    memset(want, 0x5c, sizeof(want));
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, want, sizeof(want), lba);
    memset(page, 0, sizeof(page));
    page[64] = 0xf0;                        /* read 1: active: abort */
    stl_le_p(page + 64 + 4, 10);            /* max active time 10 us */
    page[96] = 0xd0;                        /* read 2: active: unavail. */
    stl_le_p(page + 96 + 4, 10);
    page[128] = 0x0f;                       /* read 3: total: abort */
    stl_le_p(page + 128 + 16, 10);          /* total time limit 10 us */
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              page, 512), ==, 0);
    /* SET FEATURES: sense data reporting (C3h), then CDL (0Dh) on */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0xc3, 0, 1, 0, 0, &status), ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 1, 0, 0, &status), ==, 0);

    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            1, lba, 8, gbuf, sizeof(data), &status), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(status & 0x03, ==, 0x03);
    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    g_assert_cmphex(status & 0x02, ==, 0x02);
    g_assert_cmphex(sense_lba(ahci, port), ==, 0x0b2e02);
    /* read once: the next REQUEST SENSE DATA EXT has none */
    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    g_assert_cmphex(status & 0x02, ==, 0);

    qtest_memset(qts, gbuf, 0, sizeof(data));
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            2, lba, 8, gbuf, sizeof(data), &status), ==, 0);
    g_assert_cmphex(status & 0x03, ==, 0x02);
    /* libata reads the status from the received D2H Register FIS */
    g_assert_cmphex(d2h_status(ahci, port) & 0x03, ==, 0x02);
    qtest_memread(qts, gbuf, data, sizeof(data));
    g_assert_cmpmem(data, sizeof(data), want, sizeof(want));
    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    g_assert_cmphex(sense_lba(ahci, port), ==, 0x0f550a);

    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            0, lba, 8, gbuf, sizeof(data), &status), ==, 0);
    g_assert_cmphex(status & 0x03, ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            3, lba + 20000, 8, gbuf, sizeof(data), &status),
                    ==, 0);
    g_assert_cmphex(status & 0x03, ==, 0);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * CDL statistics (Device Statistics log 04h, page 09h, as cdladm reads
 * it): descriptor selectors in log 18h bytes 12/13 (A, B), counted per
 * descriptor, read then initialize (READ LOG EXT FEATURES bit 0).  A
 * limit counts where the drive carries out its policy: read descriptor
 * 1's active time limit (10 us, missed by any access) with policy 0h
 * leaves "active time limit met" at 0 (cdl-tools tests 0720 and 0730
 * expect no count with policy 0h), descriptor 2's with Dh counts.
 */
static void test_cdl_statistics(void)
{
    uint8_t port, page[512], back[512], stats[512], status;
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096), a, b;
    int i;

    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 0, 1,
                             stats), ==, 0);
    g_assert_nonnull(memchr(stats + 9, 0x09, stats[8]));
    memset(page, 0, sizeof(page));
    stl_le_p(page + 64 + 4, 10);            /* read 1: active 10 us, 0h */
    page[64 + 12] = 5;                      /* selector 5h: reserved */
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[64 + 12] = 2;                      /* A: active time limit met */
    page[64 + 13] = 4;                      /* B: commands */
    page[96] = 0xd0;                        /* read 2: active 10 us, Dh */
    stl_le_p(page + 96 + 4, 10);
    page[96 + 12] = 2;
    page[96 + 13] = 4;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              page, 512), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x18, 0, 1, back),
                    ==, 0);
    g_assert_cmpmem(back, 512, page, 512);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 1, 0, 0, &status), ==, 0);
    for (i = 0; i < 4; i++) {               /* indexes 1, 1, 2, 0 */
        g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT,
                                CMD_READ_DMA_EXT, (i < 2) + (i == 2) * 2,
                                50000 + 1000 * i, 8, gbuf, 4096, &status),
                        ==, 0);
    }
    /* read then initialize: the counts, then zero */
    g_assert_cmphex(log_cmd(ahci, port, ATA_READ_LOG_EXT, 1, 0x04, 9, 1,
                            gbuf, 512), ==, 0);
    qtest_memread(ahci->parent->qts, gbuf, stats, 512);
    g_assert_cmphex(ldq_le_p(stats), ==, 0x090001);
    a = ldq_le_p(stats + 16);               /* A, read descriptor 1 */
    b = ldq_le_p(stats + 16 + 8 * 14);      /* B, read descriptor 1 */
    g_assert_cmphex(a, ==, 0xc400000000000000ULL);  /* policy 0h */
    g_assert_cmphex(b, ==, 0xc400000000000002ULL);
    g_assert_cmphex(ldq_le_p(stats + 24), ==, 0xc400000000000001ULL);
    g_assert_cmphex(ldq_le_p(stats + 24 + 8 * 14), ==,
                    0xc400000000000001ULL);
    g_assert_cmphex(ldq_le_p(stats + 32), ==, 0);   /* descriptor 3: off */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 9, 1,
                             stats), ==, 0);
    g_assert_cmphex(ldq_le_p(stats + 16), ==, 0xc400000000000000ULL);
    g_assert_cmphex(ldq_le_p(stats + 16 + 8 * 14), ==,
                    0xc400000000000000ULL);
    /*
     * Disabling CDL keeps the counts, enabling it again starts them
     * afresh (cdl-tools test 0707 resets them so)
     */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            1, 60000, 8, gbuf, 4096, &status), ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 0, 0, 0, &status), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 9, 1,
                             stats), ==, 0);
    g_assert_cmphex(ldq_le_p(stats + 16 + 8 * 14), ==,
                    0xc400000000000001ULL);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 1, 0, 0, &status), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 9, 1,
                             stats), ==, 0);
    g_assert_cmphex(ldq_le_p(stats + 16 + 8 * 14), ==,
                    0xc400000000000000ULL);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * Host-managed zones over ATA (ZAC, docs/smr.md), on wd-hc620: 52,156
 * zones of 524,288 sectors, the first 524 conventional, 128 open at most.
 */
#define ZAC_PROPS           "model=wd-hc620"
#define ZAC_ZONE            524288ULL
#define ZAC_CONV            524
#define ZAC_ZONES           52156
#define ZAC_SWR0            (ZAC_CONV * ZAC_ZONE)   /* first SWR zone */
#define ATA_ZAC_MGMT_IN     0x4a
#define ATA_ZAC_MGMT_OUT    0x9f

/* REPORT ZONES EXT of @pages pages with @options into @buf */
static uint8_t zac_report(AHCIQState *ahci, uint8_t port, uint64_t lba,
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
static uint8_t zac_out(AHCIQState *ahci, uint8_t port, uint8_t action,
                       uint64_t lba, bool all)
{
    uint8_t status;

    return raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_ZAC_MGMT_OUT,
                   action | (all ? 0x100 : 0), lba, 0, 0, 0, &status);
}

/* The sense REQUEST SENSE DATA EXT returns: key << 16 | ASC << 8 | ASCQ */
static uint32_t zac_sense(AHCIQState *ahci, uint8_t port)
{
    uint8_t status;

    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    return status & 0x02 ? sense_lba(ahci, port) : 0;
}

/* The condition and write pointer of the zone at @lba, by REPORT ZONES */
static uint8_t zac_cond(AHCIQState *ahci, uint8_t port, uint64_t lba,
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
static AHCIQState *zac_boot(uint8_t *port)
{
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, ZAC_PROPS, port);
    uint8_t status;

    g_assert_cmphex(raw_cmd(ahci, *port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0xc3, 0, 1, 0, 0, &status), ==, 0);
    return ahci;
}

/*
 * What Linux's libata reads to see a host-managed drive: the signature
 * CDh/ABh (PxSIG, ata_dev_classify(): ATA_DEV_ZAC), sense data reporting
 * (words 119/120 bit 6) and NCQ autosense (word 78 bit 7), and the
 * IDENTIFY DEVICE data log's page 09h, listed in page 00h, with the
 * model's maximum open zones and URSWRZ (ata_dev_config_zac()).  A
 * conventional model keeps the ATA signature and lists no page 09h.
 */
static void test_zac_identify(void)
{
    uint8_t port, list[512], page[512];
    uint16_t id[256];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, ZAC_PROPS, &port);

    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SIG), ==, 0xabcd0101);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(le16_to_cpu(id[119]) & 0xc040, ==, 0x4040);
    g_assert_cmphex(le16_to_cpu(id[78]) & 0x80, ==, 0x80);
    g_assert_cmphex(le16_to_cpu(id[69]) & 3, ==, 0);
    g_assert_cmphex(ldq_le_p((uint8_t *)id + 200), ==, ZAC_SECTORS);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 0, 1, list),
                    ==, 0);
    g_assert_nonnull(memchr(list + 9, 0x09, list[8]));
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 9, 1, page),
                    ==, 0);
    g_assert_cmphex(ldq_le_p(page), ==, 0x8000000000090001ULL);
    g_assert_cmphex(ldq_le_p(page + 8), ==, (1ULL << 63) | 1); /* URSWRZ */
    g_assert_cmphex(ldq_le_p(page + 40), ==, (1ULL << 63) | 128);
    g_assert_cmphex(ldq_le_p(page + 48), ==, (1ULL << 63) | 0x05cf);
    ncq_shutdown(ahci);

    ahci = ncq_boot_ready(img_path, NULL, &port);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SIG), ==, 0x00000101);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 0, 1, list),
                    ==, 0);
    g_assert_null(memchr(list + 9, 0x09, list[8]));
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 9, 1, NULL),
                    ==, ATA_ERR_ABRT);
    ncq_shutdown(ahci);
}

/*
 * REPORT ZONES EXT as libata sends it (ZAC MANAGEMENT IN 4Ah/00h, the
 * options in FEATURE 15:8): the header (list length of every matching
 * zone, or with the partial bit of those returned; SAME 3: conventional
 * and SWR zones of one length; the maximum LBA), descriptors from the
 * zone holding the LBA; a reporting option that ZAC reserves and an LBA
 * beyond the capacity are ABRT with their sense.
 */
static void test_zac_report_zones(void)
{
    uint8_t port, *buf = g_malloc(512 * 8);
    AHCIQState *ahci = zac_boot(&port);
    int i;

    g_assert_cmphex(zac_report(ahci, port, 0, 0, 8, buf), ==, 0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * ZAC_ZONES);
    g_assert_cmphex(buf[4] & 0xf, ==, 3);
    g_assert_cmphex(ldq_le_p(buf + 8), ==, ZAC_SECTORS - 1);
    for (i = 0; i < 63; i++) {
        uint8_t *d = buf + 64 * (i + 1);

        g_assert_cmphex(d[0] & 0xf, ==, 1);             /* conventional */
        g_assert_cmphex(d[1] >> 4, ==, 0);              /* not WP */
        g_assert_cmphex(ldq_le_p(d + 8), ==, ZAC_ZONE);
        g_assert_cmphex(ldq_le_p(d + 16), ==, i * ZAC_ZONE);
    }
    /* from the last conventional zone, partial: 7 descriptors in 1 page */
    g_assert_cmphex(zac_report(ahci, port, ZAC_SWR0 - 1, 0x80, 1, buf), ==,
                    0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * 7);
    g_assert_cmphex(buf[64] & 0xf, ==, 1);
    g_assert_cmphex(buf[128] & 0xf, ==, 2);             /* SWR */
    g_assert_cmphex(buf[128 + 1] >> 4, ==, 1);          /* empty */
    g_assert_cmphex(ldq_le_p(buf + 128 + 16), ==, ZAC_SWR0);
    g_assert_cmphex(ldq_le_p(buf + 128 + 24), ==, ZAC_SWR0);
    /* option 01h (empty): every SWR zone, none conventional */
    g_assert_cmphex(zac_report(ahci, port, 0, 0x01, 1, buf), ==, 0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * (ZAC_ZONES - ZAC_CONV));
    g_assert_cmphex(buf[4] & 0xf, ==, 1);
    g_assert_cmphex(ldq_le_p(buf + 64 + 16), ==, ZAC_SWR0);
    /* bad input: ABRT, ILLEGAL REQUEST with its ASC */
    g_assert_cmphex(zac_report(ahci, port, 0, 0x08, 1, buf), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_report(ahci, port, ZAC_SECTORS, 0, 1, buf), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x052100);
    g_free(buf);
    ncq_shutdown(ahci);
}

/*
 * ZAC MANAGEMENT OUT (9Fh): OPEN, a write at the pointer, CLOSE, FINISH,
 * RESET, each seen in REPORT ZONES; RESET ALL; a RESET of a conventional
 * zone and an action on an LBA not a zone's start are ABRT, INVALID
 * FIELD, nothing changed.
 */
static void test_zac_zone_actions(void)
{
    uint8_t port, data[4096];
    AHCIQState *ahci = zac_boot(&port);
    const uint64_t z1 = ZAC_SWR0, z2 = ZAC_SWR0 + ZAC_ZONE;
    QDict *info, *zones, *oz;
    QList *open;
    uint64_t wp;

    memset(data, 0x3c, sizeof(data));
    g_assert_cmphex(zac_out(ahci, port, 0x03, z1, false), ==, 0);  /* OPEN */
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x3);
    g_assert_cmphex(wp, ==, z1);
    /* query-ncq-disk: the zones by condition, the open one */
    info = query_disk(ahci);
    zones = qdict_get_qdict(info, "zones");
    g_assert_cmpint(qdict_get_int(zones, "zones"), ==, ZAC_ZONES);
    g_assert_cmpint(qdict_get_int(zones, "max-open"), ==, 128);
    open = qdict_get_qlist(zones, "open");
    g_assert_cmpint(qlist_size(open), ==, 1);
    oz = qobject_to(QDict, qlist_peek(open));
    g_assert_cmpint(qdict_get_int(oz, "zone"), ==, ZAC_CONV);
    g_assert_cmpint(qdict_get_int(oz, "write-pointer"), ==, z1);
    g_assert_cmpstr(qdict_get_str(oz, "condition"), ==, "explicitly-open");
    qobject_unref(info);
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x3);
    g_assert_cmphex(wp, ==, z1 + 8);
    g_assert_cmphex(zac_out(ahci, port, 0x01, z1, false), ==, 0); /* CLOSE */
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, z1 + 8);
    /* a write at the pointer opens it implicitly */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x2);
    g_assert_cmphex(zac_out(ahci, port, 0x02, z1, false), ==, 0); /* FINISH */
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0xe);
    g_assert_cmphex(wp, ==, z1 + ZAC_ZONE);
    g_assert_cmphex(zac_out(ahci, port, 0x04, z1, false), ==, 0); /* RESET */
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    /* RESET ALL: the zone ID is ignored */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1);
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z2);
    g_assert_cmphex(zac_out(ahci, port, 0x04, 0, true), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, NULL), ==, 0x1);
    g_assert_cmphex(zac_cond(ahci, port, z2, NULL), ==, 0x1);
    /* bad input */
    g_assert_cmphex(zac_out(ahci, port, 0x04, 0, false), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_out(ahci, port, 0x03, z1 + 8, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_cond(ahci, port, z1, NULL), ==, 0x1);
    g_assert_cmphex(zac_out(ahci, port, 0x07, z1, false), ==, ATA_ERR_ABRT);
    ncq_shutdown(ahci);
}

/*
 * Writes the zones refuse, with the sense libata reports: non-queued,
 * ABRT and status bit 1, the sense by REQUEST SENSE DATA EXT (UNALIGNED
 * WRITE 5h/21h/04h off the pointer, WRITE BOUNDARY VIOLATION 5h/21h/05h
 * across zones); queued, an NCQ error whose log 10h holds the sense
 * (NCQ autosense, status bit 1); OPEN beyond the limit of 128 explicitly
 * open zones, INSUFFICIENT ZONE RESOURCES 7h/55h/0Eh.  Each changes
 * nothing.
 */
static void test_zac_write_errors(void)
{
    uint8_t port, status, log[512];
    AHCIQState *ahci = zac_boot(&port);
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    const uint64_t z1 = ZAC_SWR0;
    AHCICommand *cmd;
    uint64_t wp;
    int i;

    qtest_memset(ahci->parent->qts, gbuf, 0x5a, 8192);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, z1 + 8, 8, gbuf, 4096, &status), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(status & 0x03, ==, 0x03);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x052104);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, z1 - 8, 16, gbuf, 8192, &status), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x052105);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    /* the conventional zones take writes anywhere */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, 12345, 8, gbuf, 4096, &status), ==, 0);

    /* queued: WRITE FPDMA QUEUED off the pointer */
    cmd = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z1 + 64);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    ahci_command_free(cmd);
    ncq_read_log(ahci, port, 0x10, 0, log);
    g_assert_cmphex(log[0] & 0x80, ==, 0);
    g_assert_cmphex(log[2] & 0x02, ==, 0x02);
    g_assert_cmphex(log[3], ==, ATA_ERR_ABRT);
    g_assert_cmphex(log[14] << 16 | log[15] << 8 | log[16], ==, 0x052104);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);

    /* 128 zones open explicitly; the 129th OPEN finds no resource */
    for (i = 0; i < 128; i++) {
        g_assert_cmphex(zac_out(ahci, port, 0x03, z1 + i * ZAC_ZONE, false),
                        ==, 0);
    }
    g_assert_cmphex(zac_out(ahci, port, 0x03, z1 + 128 * ZAC_ZONE, false),
                    ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x07550e);
    g_assert_cmphex(zac_cond(ahci, port, z1 + 128 * ZAC_ZONE, NULL), ==,
                    0x1);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/* A sector both images have, in wd-hc620's conventional zones */
#define SIG_READ_LBA        0x01ff00ULL

/* READ DMA EXT of SIG_READ_LBA: LBA mid/high hold FFh/01h after it */
static void read_sector(AHCIQState *ahci, uint8_t port, uint64_t gbuf)
{
    uint8_t status;

    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            0, SIG_READ_LBA, 1, gbuf, 512, &status), ==, 0);
}

/*
 * The device signature in LBA mid/high as each client reads it: PxSIG
 * after a COMRESET (libata's classification), the D2H FIS of EXECUTE
 * DEVICE DIAGNOSTIC (libzbc's, through ATA PASS-THROUGH with CK_COND:
 * status 50h, error 01h "device 0 passed"), each time after a command
 * left other values in those registers.  CDh/ABh for a host-managed
 * model, 00h/00h for every other kind (one model of each kind: disk,
 * drive-managed SMR, SSD).  DEVICE RESET is the PACKET feature set's:
 * a disk aborts it (ACS-4 7.6).
 */
static void test_zac_signature(void)
{
    g_auto(GStrv) names = g_strsplit(ncq_params_builtin_names(), ", ", -1);
    unsigned seen = 0;
    int i;

    for (i = 0; names[i]; i++) {
        NcqParams *params = ncq_params_builtin(names[i]);
        bool zoned = params->zone_sectors != 0;
        unsigned kind = 1u << (params->kind * 3 + (zoned ? 2 :
                                                   params->mc_sectors ? 1 : 0));
        uint32_t sig = zoned ? 0xabcd : 0x0000;
        g_autofree char *props = g_strdup_printf("model=%s", names[i]);
        uint8_t port, status;
        AHCIQState *ahci;
        uint64_t gbuf;

        if (seen & kind) {
            ncq_params_free(params);
            continue;
        }
        seen |= kind;
        g_test_message("%s: signature %04x", names[i], sig);
        ahci = ncq_boot_ready(zoned ? zoned_img_path : img_path, props,
                              &port);
        gbuf = ahci_alloc(ahci, 512);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SIG), ==,
                        sig << 16 | 0x0101);
        /* LBA mid/high FFh/01h from a read, then the diagnostic */
        read_sector(ahci, port, gbuf);
        g_assert_cmphex(sense_lba(ahci, port) >> 8, ==, SIG_READ_LBA >> 8);
        g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, 0x90, 0,
                                SIG_READ_LBA, 0, 0, 0, &status), ==, 0);
        g_assert_cmphex(status, ==, 0x50);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_TFD) >> 8 & 0xff,
                        ==, 0x01);
        g_assert_cmphex(sense_lba(ahci, port) >> 8, ==, sig);
        g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, 0x08, 0, 0, 0,
                                0, 0, &status), ==, ATA_ERR_ABRT);
        /* COMRESET after a command that set LBA mid/high */
        read_sector(ahci, port, gbuf);
        ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
        ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
        g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SIG), ==,
                        sig << 16 | 0x0101);
        ahci_free(ahci, gbuf);
        ncq_shutdown(ahci);
        ncq_params_free(params);
    }
    /* a conventional disk, a drive-managed SMR one, an SSD, a zoned one */
    g_assert_cmphex(seen, ==, 0x0f);
}

/*
 * The open-zone limit on the full drive, which has more sequential
 * zones (51,632) than the limit (128), per ZAC-2 as docs/smr.md says:
 * a write that opens a zone implicitly at the limit closes the
 * implicitly open zone opened first; an explicit OPEN at the limit does
 * the same; once all 128 are explicitly open, a write to an empty zone
 * fails with INSUFFICIENT ZONE RESOURCES (DATA PROTECT 7h/55h/0Eh) and
 * changes nothing, and so does an OPEN, until a CLOSE frees a
 * resource.
 */
static void test_zac_open_limit(void)
{
    uint8_t port, status;
    AHCIQState *ahci = zac_boot(&port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    const uint64_t z1 = ZAC_SWR0;
    uint64_t wp;
    int i;

#define ZN(n) (z1 + (uint64_t)(n) * ZAC_ZONE)
    qtest_memset(ahci->parent->qts, gbuf, 0x6b, 4096);
    /* 128 zones opened by writes: implicitly open */
    for (i = 0; i < 128; i++) {
        g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT,
                                CMD_WRITE_DMA_EXT, 0, ZN(i), 8, gbuf, 4096,
                                &status), ==, 0);
    }
    g_assert_cmphex(zac_cond(ahci, port, ZN(0), NULL), ==, 0x2);
    /* the 129th write: zone 0, the first opened, is closed */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, ZN(128), 8, gbuf, 4096, &status), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, ZN(0), &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, ZN(0) + 8);
    g_assert_cmphex(zac_cond(ahci, port, ZN(1), NULL), ==, 0x2);
    g_assert_cmphex(zac_cond(ahci, port, ZN(128), NULL), ==, 0x2);
    /* an explicit OPEN at the limit: zone 1 is closed for it */
    g_assert_cmphex(zac_out(ahci, port, 0x03, ZN(200), false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, ZN(200), NULL), ==, 0x3);
    g_assert_cmphex(zac_cond(ahci, port, ZN(1), NULL), ==, 0x4);
    g_assert_cmphex(zac_cond(ahci, port, ZN(2), NULL), ==, 0x2);

    /* every open zone explicitly open: nothing to close */
    g_assert_cmphex(zac_out(ahci, port, 0x04, 0, true), ==, 0);
    for (i = 0; i < 128; i++) {
        g_assert_cmphex(zac_out(ahci, port, 0x03, ZN(i), false), ==, 0);
    }
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, ZN(128), 8, gbuf, 4096, &status), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(status & 0x03, ==, 0x03);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x07550e);
    g_assert_cmphex(zac_cond(ahci, port, ZN(128), &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, ZN(128));
    /* a write in an explicitly open zone needs no new resource */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, ZN(5), 8, gbuf, 4096, &status), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, ZN(5), NULL), ==, 0x3);
    g_assert_cmphex(zac_out(ahci, port, 0x03, ZN(129), false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(ahci, port), ==, 0x07550e);
    /* a CLOSE frees one: the write goes through, implicitly open */
    g_assert_cmphex(zac_out(ahci, port, 0x01, ZN(5), false), ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, ZN(128), 8, gbuf, 4096, &status), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, ZN(128), NULL), ==, 0x2);
#undef ZN
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * A host-managed model needs an image of its capacity, and timing on:
 * else one line at startup naming the problem and the fix.
 */
static void test_zac_bad_image(void)
{
    g_autofree char *err = NULL;
    g_autofree char *err2 = NULL;
    int status = spawn_startup("-M q35 -device ncq-disk,drive=d1,bus=ide.0,"
                               ZAC_PROPS, &err);

    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err, "need exactly 27344764928"));
    g_assert(strstr(err, "qemu-img create -f qcow2 FILE 14000519643136"));
    g_assert_cmpint(count_own_lines(err), ==, 1);
    status = spawn_startup("-M q35 -device ncq-disk,drive=d1,bus=ide.0,"
                           ZAC_PROPS ",timing=off", &err2);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err2, "drop timing=off"));
    g_assert_cmpint(count_own_lines(err2), ==, 1);
}

/*
 * Zone state migrates with the model's state: an explicitly open zone,
 * a closed one with its pointer, and sense data reporting arrive as they
 * left, and the destination goes on from them (a write at the pointer,
 * one off it refused with its sense).
 */
static void test_zac_migrate(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw",
                                             zoned_img_path);
    uint8_t port, status, data[4096];
    AHCIQState *src = ncq_boot_drive(drive, ZAC_PROPS, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, ZAC_PROPS);
    const uint64_t z1 = ZAC_SWR0, z2 = ZAC_SWR0 + ZAC_ZONE;
    uint64_t wp, gbuf;

    g_assert_cmphex(raw_cmd(src, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0xc3, 0, 1, 0, 0, &status), ==, 0);
    memset(data, 0x77, sizeof(data));
    g_assert_cmphex(zac_out(src, port, 0x03, z1, false), ==, 0);
    ncq_io(src, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z2);
    g_assert_cmphex(zac_out(src, port, 0x01, z2, false), ==, 0);
    ncq_migrate(src, dst);

    g_assert_cmphex(zac_cond(dst, port, z1, &wp), ==, 0x3);
    g_assert_cmphex(wp, ==, z1);
    g_assert_cmphex(zac_cond(dst, port, z2, &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, z2 + 8);
    ncq_io(dst, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z2 + 8);
    g_assert_cmphex(zac_cond(dst, port, z2, &wp), ==, 0x2);
    g_assert_cmphex(wp, ==, z2 + 16);
    gbuf = ahci_alloc(dst, 4096);
    g_assert_cmphex(raw_cmd(dst, port, CMD_WRITE_DMA_EXT, CMD_WRITE_DMA_EXT,
                            0, z2, 8, gbuf, 4096, &status), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_sense(dst, port), ==, 0x052104);
    ahci_free(dst, gbuf);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

/* ---- Drive-managed SMR's media cache (docs/smr.md) ---- */

#define DM_MS               1000000LL
#define DM_MAP              8       /* the test's map: 8 extents */

/*
 * seagate-st8000as0002 with its media cache's map cut to DM_MAP extents
 * (a model file of the test's, so that a few writes fill it) and the
 * write cache off (each write's own time): the path, to unlink.
 */
static char *dm_model_file(void)
{
    const char *text = ncq_params_builtin_text("seagate-st8000as0002");
    char *path = g_strdup("/tmp/qtest.ncq-disk-dmsmr.XXXXXX");
    const char *map = strstr(text, "\nmap_extents = ");
    const char *eol = map ? strchr(map + 1, '\n') : NULL;
    g_autofree char *out = NULL;
    int fd = g_mkstemp(path);

    g_assert(fd >= 0 && map && eol);
    out = g_strdup_printf("%.*s\nmap_extents = %d%s", (int)(map - text),
                          text, DM_MAP, eol);
    g_assert(g_file_set_contents(path, out, -1, NULL));
    close(fd);
    return path;
}

static QDict *dm_cache(AHCIQState *ahci, QDict **info)
{
    *info = query_disk(ahci);
    g_assert(qdict_haskey(*info, "media-cache"));
    return qdict_get_qdict(*info, "media-cache");
}

static void dm_write(AHCIQState *ahci, uint8_t port, uint64_t lba)
{
    uint8_t data[4096];

    memset(data, 0x5a, sizeof(data));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), lba);
}

/* The trace file's "# clean" lines with "forced=@forced done=1". */
static int dm_trace_cleanings(const char *path, int forced)
{
    g_autofree char *text = NULL;
    g_autofree char *want = g_strdup_printf(" forced=%d done=1\n", forced);
    const char *p;
    int n = 0;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    for (p = text; (p = strstr(p, "# clean band=")); p++) {
        const char *eol = strchr(p, '\n');
        g_autofree char *line = NULL;

        g_assert(eol);
        line = g_strndup(p, eol - p + 1);
        n += g_str_has_suffix(line, want);
    }
    return n;
}

/*
 * Idle, a drive cleans its media cache band after band (after its 1 s
 * delay) until it is empty; @cleaned: the bands cleaned in all by then
 */
static void dm_idle_until_clean(AHCIQState *ahci, uint64_t cleaned)
{
    QTestState *qts = ahci->parent->qts;
    QDict *info, *mc;
    int i;

    qtest_clock_step(qts, 1100 * DM_MS);
    mc = dm_cache(ahci, &info);
    g_assert_cmpstr(qdict_get_str(mc, "cleaning"), ==, "cleaning");
    qobject_unref(info);
    for (i = 0; i < 1000; i++) {
        mc = dm_cache(ahci, &info);
        if (!strcmp(qdict_get_str(mc, "cleaning"), "none")) {
            break;
        }
        qobject_unref(info);
        qtest_clock_step_next(qts);
    }
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, 0);
    g_assert_cmpuint(qdict_get_int(mc, "sectors"), ==, 0);
    g_assert_cmpuint(qdict_get_int(mc, "cleaned"), ==, cleaned);
    qobject_unref(info);
}

/*
 * query-ncq-disk's media cache, forced and idle cleaning on the device's
 * virtual clock, the trace's "# clean" lines, and the cache across a
 * migration: DM_MAP writes fill the map (idle, the cleaning waits its
 * 1 s delay); the next write waits behind a band's cleaning (0.6-1.6 s,
 * Skylight's range); after a migration the destination holds the same
 * extents and, idle, cleans them band by band until the cache is empty.
 */
static void test_dmsmr_media_cache(void)
{
    g_autofree char *file = dm_model_file();
    g_autofree char *tr_src = g_strdup_printf("%s.src.trace", file);
    g_autofree char *tr_dst = g_strdup_printf("%s.dst.trace", file);
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw",
                                             big_img_path);
    g_autofree char *psrc = g_strdup_printf("model-file=%s,write-cache=off,"
                                            "trace=%s", file, tr_src);
    g_autofree char *pdst = g_strdup_printf("model-file=%s,write-cache=off,"
                                            "trace=%s", file, tr_dst);
    AHCIQState *src, *dst;
    QTestState *qts;
    QDict *info, *mc;
    int64_t t0, t1, until;
    uint8_t port;
    int i;

    src = ncq_boot_drive(drive, psrc, &port);
    dst = ncq_boot_incoming(drive, pdst);
    qts = src->parent->qts;
    mc = dm_cache(src, &info);
    g_assert_cmpuint(qdict_get_int(mc, "map-extents"), ==, DM_MAP);
    g_assert_cmpuint(qdict_get_int(mc, "capacity-sectors"), ==, 52428800);
    g_assert_cmpuint(qdict_get_int(mc, "band-sectors"), ==, 61440);
    qobject_unref(info);
    for (i = 0; i < DM_MAP; i++) {
        dm_write(src, port, 1000000 + i * 10000000ULL);
    }
    t0 = qtest_clock_step(qts, 1);    /* reads the clock (+1 ns) */
    mc = dm_cache(src, &info);
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, DM_MAP);
    g_assert_cmpuint(qdict_get_int(mc, "sectors"), ==, DM_MAP * 8);
    g_assert_cmpuint(qdict_get_int(mc, "cleaned"), ==, 0);
    g_assert_cmpstr(qdict_get_str(mc, "cleaning"), ==, "waiting");
    until = qdict_get_int(mc, "until-ns");
    g_assert_cmpint(until - t0, >, 900 * DM_MS);    /* the 1 s idle delay */
    g_assert_cmpint(until - t0, <=, 1000 * DM_MS);
    qobject_unref(info);

    /* the map is full: the next write waits behind a band's cleaning */
    dm_write(src, port, 1000000 + DM_MAP * 10000000ULL);
    t1 = qtest_clock_step(qts, 1);
    g_assert_cmpint(t1 - t0, >, 600 * DM_MS);
    g_assert_cmpint(t1 - t0, <, 1600 * DM_MS);
    mc = dm_cache(src, &info);
    g_assert_cmpuint(qdict_get_int(mc, "forced"), ==, 1);
    g_assert_cmpuint(qdict_get_int(mc, "cleaned"), ==, 1);
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, DM_MAP);
    qobject_unref(info);

    ncq_migrate(src, dst);      /* the source's trace is flushed */
    g_assert_cmpint(dm_trace_cleanings(tr_src, 1), ==, 1);
    mc = dm_cache(dst, &info);
    g_assert_cmpuint(qdict_get_int(mc, "extents"), ==, DM_MAP);
    g_assert_cmpuint(qdict_get_int(mc, "forced"), ==, 1);
    qobject_unref(info);
    dm_idle_until_clean(dst, 1 + DM_MAP);
    ncq_shutdown(src);
    ncq_shutdown(dst);          /* the destination's trace is written */
    g_assert_cmpint(dm_trace_cleanings(tr_dst, 0), ==, DM_MAP);
    unlink(tr_src);
    unlink(tr_dst);
    unlink(file);
}

/*
 * The queued forms (docs/smr.md, "The queued forms"): NCQ NON-DATA 63h
 * with subcommand 07h (ZAC MANAGEMENT OUT) and RECEIVE FPDMA QUEUED 65h
 * with subcommand 02h (ZAC MANAGEMENT IN), the fields where libata's
 * ata_scsi_zbc_out_xlat()/ata_scsi_zbc_in_xlat() put them.
 */
#define ATA_NCQ_NON_DATA    0x63
#define ATA_RECV_FPDMA      0x65
#define ATA_SEND_FPDMA      0x64

/*
 * One queued command @code: FEATURE @feature, COUNT 15:8 @count_hi (the
 * tag is the slot's), AUXILIARY 15:0 @aux, LBA @lba; @bytes of data from
 * the device into @gbuf.  Returns the error register (0: it completed);
 * after an error the port is recovered, log 10h left unread.
 */
static uint8_t zac_ncq(AHCIQState *ahci, uint8_t port, uint8_t code,
                       uint16_t feature, uint8_t count_hi, uint16_t aux,
                       uint64_t lba, uint64_t gbuf, uint32_t bytes,
                       AHCICommand **keep)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf,
                                   bytes ? bytes : 512, lba);
    AHCICommandHeader hdr;
    uint8_t slot = ahci_command_slot(cmd), err = 0;
    int i;

    ahci_get_command_header(ahci, port, slot, &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, command), code);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, sector_low), feature);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, sector_hi), feature >> 8);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, prio), count_hi);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, aux), aux);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, aux) + 1, aux >> 8);
    ahci_command_issue_async(ahci, cmd);
    if (keep) {
        *keep = cmd;            /* the caller waits for it */
        return 0;
    }
    for (i = 0; i < 100000; i++) {
        if (ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_TFES) {
            err = ahci_px_rreg(ahci, port, AHCI_PX_TFD) >> 8;
            g_assert(err);
            ncq_recover(ahci, port);
            break;
        }
        if (!(ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1u << slot)) &&
            !(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot))) {
            break;
        }
        qtest_clock_step_next(qts);
    }
    g_assert_cmpint(i, <, 100000);
    ahci_command_free(cmd);
    return err;
}

/* NCQ NON-DATA, ZAC MANAGEMENT OUT @action on the zone at @lba, or ALL */
static uint8_t zac_ncq_out(AHCIQState *ahci, uint8_t port, uint8_t action,
                           uint64_t lba, bool all)
{
    return zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x07, 0,
                   action | (all ? 0x100 : 0), lba, 0, 0, NULL);
}

/* RECEIVE FPDMA QUEUED, REPORT ZONES of @pages pages into @buf */
static uint8_t zac_ncq_report(AHCIQState *ahci, uint8_t port, uint64_t lba,
                              uint8_t options, uint16_t pages, uint8_t *buf)
{
    uint64_t gbuf = ahci_alloc(ahci, 512 * pages);
    uint8_t err;

    qtest_memset(ahci->parent->qts, gbuf, 0xaa, 512 * pages);
    err = zac_ncq(ahci, port, ATA_RECV_FPDMA, pages, 0x02,
                  (uint16_t)options << 8, lba, gbuf, 512 * pages, NULL);
    if (!err && buf) {
        ncq_bufread(ahci->parent->qts, gbuf, buf, 512 * pages);
    }
    ahci_free(ahci, gbuf);
    return err;
}

/*
 * After a queued command failed: log 10h names a queued command (NQ 0),
 * with ABRT and the sense (status bit 1 and bytes 14-16), or none.
 */
static uint32_t zac_ncq_sense(AHCIQState *ahci, uint8_t port)
{
    uint8_t log[512];

    ncq_read_log(ahci, port, 0x10, 0, log);
    g_assert_cmphex(log[0] & 0x80, ==, 0);
    g_assert_cmphex(log[3], ==, ATA_ERR_ABRT);
    return log[2] & 0x02 ? log[14] << 16 | log[15] << 8 | log[16] : 0;
}

/*
 * What makes libata use the queued forms (ata_dev_config_ncq_send_recv(),
 * _non_data(); ata_fpdma_zac_mgmt_in_supported(), _out_supported()):
 * IDENTIFY word 77 bits 5 and 6, logs 12h and 13h in the GPL directory,
 * log 12h byte 28 bit 0 and log 13h byte 16 bit 1.  A conventional
 * model has none of them, and fails both commands with an NCQ error.
 */
static void test_zac_queued_advertised(void)
{
    uint8_t port, dir[512], page[512];
    uint16_t id[256];
    AHCIQState *ahci = zac_boot(&port);

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(le16_to_cpu(id[77]) & 0x60, ==, 0x60);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0, 0, 1, dir),
                    ==, 0);
    g_assert_cmphex(lduw_le_p(dir + 2 * 0x12), ==, 1);
    g_assert_cmphex(lduw_le_p(dir + 2 * 0x13), ==, 1);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x12, 0, 1, page),
                    ==, 0);
    g_assert_cmphex(page[28], ==, 0x01);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x13, 0, 1, page),
                    ==, 0);
    g_assert_cmphex(page[16], ==, 0x02);
    g_assert_cmphex(page[0] | page[28], ==, 0);
    ncq_shutdown(ahci);

    ahci = ncq_boot_ready(img_path, NULL, &port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(le16_to_cpu(id[77]) & 0x60, ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0, 0, 1, dir),
                    ==, 0);
    g_assert_cmphex(lduw_le_p(dir + 2 * 0x12) | lduw_le_p(dir + 2 * 0x13),
                    ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x13, 0, 1, NULL),
                    ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, 0, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    g_assert_cmphex(zac_ncq_report(ahci, port, 0, 0, 1, NULL), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    ncq_shutdown(ahci);
}

/*
 * The queued forms do what the non-queued ones do: REPORT ZONES from a
 * locator inside a zone (the zone holding it first, ZBC), OPEN, CLOSE,
 * FINISH, RESET and RESET ALL, each read back by the other form.
 */
static void test_zac_queued(void)
{
    uint8_t port, buf[512], data[4096], *big;
    AHCIQState *ahci = zac_boot(&port);
    const uint64_t z1 = ZAC_SWR0, z2 = ZAC_SWR0 + ZAC_ZONE;
    uint64_t wp;

    memset(data, 0x3c, sizeof(data));
    /* from the last conventional zone's middle, partial: 7 in 1 page */
    g_assert_cmphex(zac_ncq_report(ahci, port, ZAC_SWR0 - 1000, 0x80, 1, buf),
                    ==, 0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * 7);
    g_assert_cmphex(buf[4] & 0xf, ==, 3);
    g_assert_cmphex(ldq_le_p(buf + 8), ==, ZAC_SECTORS - 1);
    g_assert_cmphex(ldq_le_p(buf + 64 + 16), ==, ZAC_SWR0 - ZAC_ZONE);
    g_assert_cmphex(buf[128] & 0xf, ==, 2);
    g_assert_cmphex(ldq_le_p(buf + 128 + 16), ==, z1);
    /* not partial: every zone from there, option 00h */
    g_assert_cmphex(zac_ncq_report(ahci, port, z1, 0, 1, buf), ==, 0);
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * (ZAC_ZONES - ZAC_CONV));
    /* the buffer Linux's sd_zbc asks for on AHCI: 168 pages of 4 KiB */
    big = g_malloc(1344 * 512);
    g_assert_cmphex(zac_ncq_report(ahci, port, 0, 0, 1344, big), ==, 0);
    g_assert_cmphex(ldl_le_p(big), ==, 64 * ZAC_ZONES);
    g_assert_cmphex(ldq_le_p(big + 64 * 1343 + 16), ==, 1342 * ZAC_ZONE);
    g_free(big);

    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1, false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x3);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x01, z1, false), ==, 0);
    g_assert_cmphex(zac_ncq_report(ahci, port, z1, 0x80, 1, buf), ==, 0);
    g_assert_cmphex(buf[64 + 1] >> 4, ==, 0x4);            /* closed */
    g_assert_cmphex(ldq_le_p(buf + 64 + 24), ==, z1 + 8);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x02, z1, false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0xe);
    g_assert_cmphex(wp, ==, z1 + ZAC_ZONE);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x04, z1, false), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z2);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x04, 12345, true), ==, 0);
    g_assert_cmphex(zac_cond(ahci, port, z1, NULL), ==, 0x1);
    g_assert_cmphex(zac_cond(ahci, port, z2, NULL), ==, 0x1);
    ncq_shutdown(ahci);
}

/*
 * A queued REPORT ZONES (RECEIVE FPDMA QUEUED) the drive holds when the
 * state moves: AHCI sends the slot's device fields and the subcommand's
 * fields as two subsections.  The second was named "ncq state/backend-cmd",
 * which begins with the first's name: QEMU's loader took it for a
 * subsection of "ncq state/backend" and failed the load (ENOENT).  The
 * report completes on the other side, with the zones it asked for.
 */
static void test_migrate_queued_zac(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw",
                                             zoned_img_path);
    uint8_t port, slot, buf[512];
    AHCIQState *src = ncq_boot_drive(drive, ZAC_PROPS, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, ZAC_PROPS);
    uint64_t gbuf = ahci_alloc(src, 512);
    AHCICommand *cmd;
    QDict *info;

    qtest_memset(src->parent->qts, gbuf, 0xaa, 512);
    zac_ncq(src, port, ATA_RECV_FPDMA, 1, 0x02, 0, 0, gbuf, 512, &cmd);
    slot = ahci_command_slot(cmd);
    info = query_disk(src);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 1);
    qobject_unref(info);

    ncq_migrate(src, dst);
    ncq_wait_done(dst, port, slot);
    ncq_bufread(dst->parent->qts, gbuf, buf, sizeof(buf));
    g_assert_cmphex(ldl_le_p(buf), ==, 64 * ZAC_ZONES);
    g_assert_cmphex(ldq_le_p(buf + 64 + 16), ==, 0);
    g_assert_cmphex(ldq_le_p(buf + 128 + 16), ==, ZAC_ZONE);
    ahci_command_free(cmd);
    ahci_free(dst, gbuf);
    check_still_serving(dst, port);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

/*
 * Bad input in the queued forms: an NCQ error (ABRT), the failing tag in
 * log 10h with the sense of the non-queued form (NCQ autosense), and
 * nothing changed.  ZBC/ZAC: a reserved reporting option and a zone ID
 * that is not a zone's start, or a conventional zone's, are INVALID
 * FIELD 5h/24h/00h; a locator beyond the capacity LBA OUT OF RANGE
 * 5h/21h/00h; an OPEN with every open resource held by explicitly open
 * zones INSUFFICIENT ZONE RESOURCES 7h/55h/0Eh.  A subcommand the drive
 * lacks (NCQ NON-DATA 00h, ABORT NCQ QUEUE) or an action ZAC reserves:
 * ABRT, no sense.
 */
static void test_zac_queued_errors(void)
{
    uint8_t port;
    AHCIQState *ahci = zac_boot(&port);
    const uint64_t z1 = ZAC_SWR0;
    uint64_t wp;
    QDict *info;
    int i;

    g_assert_cmphex(zac_ncq_report(ahci, port, 0, 0x08, 1, NULL), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_ncq_report(ahci, port, ZAC_SECTORS, 0, 1, NULL), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052100);
    /* RESET of a conventional zone; OPEN of an LBA inside a zone */
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x04, 0, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1 + 8, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052400);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    /* a subcommand and an action the drive does not have */
    g_assert_cmphex(zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x00, 0, 0, 0, 0,
                            0, NULL), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x07, z1, false), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    /* 128 zones open explicitly; the 129th OPEN finds no resource */
    for (i = 0; i < 128; i++) {
        g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1 + i * ZAC_ZONE,
                                    false), ==, 0);
    }
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1 + 128 * ZAC_ZONE,
                                false), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x07550e);
    g_assert_cmphex(zac_cond(ahci, port, z1 + 128 * ZAC_ZONE, NULL), ==,
                    0x1);
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(qdict_get_qdict(info,
                                                               "zones"),
                                               "open")), ==, 128);
    qobject_unref(info);
    ncq_shutdown(ahci);
}

/*
 * SEND FPDMA QUEUED (64h), here DATA SET MANAGEMENT's TRIM (subcommand
 * 00h in COUNT 12:8, one block in FEATURE, TRIM in AUXILIARY bit 0): the
 * drive has none of its subcommands (log 13h lists none), so it is an
 * NCQ error with ABRT, timed or not, and its data never reaches the
 * medium at its LBA.
 */
static void test_ncq_send_aborted(gconstpointer data)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, data, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 512);
    uint8_t zero[512] = { 0 }, in[512];

    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, zero, sizeof(zero), 200);
    qtest_memset(qts, gbuf, 0x5a, 512);
    g_assert_cmphex(zac_ncq(ahci, port, ATA_SEND_FPDMA, 1, 0x00, 0x0001,
                            200, gbuf, 512, NULL), ==, ATA_ERR_ABRT);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 200);
    g_assert(memcmp(in, zero, sizeof(in)) == 0);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A write racing a RESET of its zone, both queued at once: SATA lets the
 * drive run queued commands in any order, so no order is defined for
 * the host; the model decides by arrival (docs/smr.md, "The model"), the
 * same every run.  A write at the pointer queued before the RESET: both
 * succeed and the zone is empty after them.  A RESET queued before a
 * write where the pointer was: the write fails UNALIGNED WRITE COMMAND,
 * and its NCQ error aborts the RESET too, which the drive applied when
 * it took it (the zone stays empty).
 */
static void test_zac_write_reset_race(void)
{
    uint8_t port, data[4096];
    AHCIQState *ahci = zac_boot(&port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    const uint64_t z1 = ZAC_SWR0;
    AHCICommand *w, *r;
    uint64_t wp;

    memset(data, 0x5a, sizeof(data));
    qtest_memset(ahci->parent->qts, gbuf, 0x5a, 4096);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z1);
    ahci_command_issue_async(ahci, w);
    zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x07, 0, 0x04, z1, 0, 0, &r);
    ncq_wait(ahci, port, w);
    ncq_wait(ahci, port, r);
    ahci_command_free(w);
    ahci_command_free(r);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);

    /* the other order: the write arrives after the RESET rewound it */
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    zac_ncq(ahci, port, ATA_NCQ_NON_DATA, 0x07, 0, 0x04, z1, 0, 0, &r);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z1 + 8);
    ahci_command_issue_async(ahci, w);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    ahci_command_free(w);
    ahci_command_free(r);
    g_assert_cmphex(zac_ncq_sense(ahci, port), ==, 0x052104);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z1);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/* How many zones query-ncq-disk counts in @cond */
static int64_t zac_count(QDict *zones, const char *cond)
{
    QListEntry *e;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(zones, "conditions"), e) {
        QDict *c = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(c, "condition"), cond)) {
            return qdict_get_int(c, "count");
        }
    }
    return 0;
}

/*
 * A power cut (ncq-disk-power-cut, docs/smr.md "Reset and power loss"):
 * write pointers are kept as the drive keeps them on its media, open
 * zones are closed.  A zone written at its pointer and acknowledged (from
 * the write cache) keeps its pointer and is closed; one opened explicitly
 * with nothing written is empty again; a queued write the cut caught in
 * flight never reached the media, and its zone's pointer goes back (the
 * zone empty).
 */
static void test_zac_power_cut(void)
{
    uint8_t port, data[4096];
    AHCIQState *ahci = zac_boot(&port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE, z3 = z2 + ZAC_ZONE;
    AHCICommand *w;
    QDict *info, *rsp, *zones;

    memset(data, 0x6b, sizeof(data));
    g_assert_cmphex(zac_ncq_out(ahci, port, 0x03, z1, false), ==, 0);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z2);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z3);
    ahci_command_issue_async(ahci, w);
    info = query_disk(ahci);
    zones = qdict_get_qdict(info, "zones");
    g_assert_cmpint(zac_count(zones, "explicitly-open"), ==, 1);
    g_assert_cmpint(zac_count(zones, "implicitly-open"), ==, 2);
    qobject_unref(info);

    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0', 'quit': false } }");
    g_assert_nonnull(qdict_get_qdict(rsp, "return"));
    qobject_unref(rsp);
    info = query_disk(ahci);
    zones = qdict_get_qdict(info, "zones");
    g_assert_cmpint(qlist_size(qdict_get_qlist(zones, "open")), ==, 0);
    g_assert_cmpint(zac_count(zones, "closed"), ==, 1);
    g_assert_cmpint(zac_count(zones, "empty"), ==, ZAC_ZONES - ZAC_CONV - 1);
    g_assert_cmpint(zac_count(zones, "not-write-pointer"), ==, ZAC_CONV);
    qobject_unref(info);
    ahci_command_free(w);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/* ---- zone-state: the zones across QEMU runs (docs/smr.md) ---- */

#define ZS_HEADER "# ncq-disk zone state v1 model=wd-hc620 zones=52156 " \
    "zone_sectors=524288 conventional=524\n"

/* A fresh path for a zone-state file (none there yet) */
static char *zstate_path(void)
{
    char *path = g_strdup("/tmp/qtest.ncq-disk-zstate.XXXXXX");
    int fd = g_mkstemp(path);

    g_assert(fd >= 0);
    close(fd);
    unlink(path);
    return path;
}

/* The zoned drive's properties with zone-state=@path */
static char *zstate_props(const char *path)
{
    return g_strdup_printf(ZAC_PROPS ",zone-state=%s", path);
}

static char *zstate_read(const char *path)
{
    char *text = NULL;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

/* Does the zone-state text hold the line "@zone @cond @wp"? */
static bool zstate_has(const char *text, uint32_t zone, const char *cond,
                       uint64_t wp)
{
    g_autofree char *line = g_strdup_printf("\n%u %s %" PRIu64 "\n", zone,
                                            cond, wp);

    return strstr(text, line) != NULL;
}

static bool zstate_lists(const char *text, uint32_t zone)
{
    g_autofree char *start = g_strdup_printf("\n%u ", zone);

    return strstr(text, start) != NULL;
}

static char *zstate_reason(AHCIQState *ahci)
{
    QDict *info = query_disk(ahci);
    QDict *zones = qdict_get_qdict(info, "zones");
    char *why = g_strdup(qdict_get_try_str(zones, "state-reason"));

    qobject_unref(info);
    return why;
}

/*
 * The QEMU after test_zac_zone_state_restart's: a power-on, the zones as
 * FILE kept them (open ones closed), and the drive writes on from there.
 */
static void zstate_restart_power_on(const char *props, const char *path)
{
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE, z3 = z2 + ZAC_ZONE;
    const uint64_t z4 = z3 + ZAC_ZONE, z5 = z4 + ZAC_ZONE;
    uint8_t port, data[4096];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, props, &port);
    QDict *info;
    char *text;
    uint64_t wp;

    memset(data, 0x5e, sizeof(data));
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x4);     /* closed */
    g_assert_cmphex(wp, ==, z1 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z2, &wp), ==, 0x1);     /* empty */
    g_assert_cmphex(wp, ==, z2);
    g_assert_cmphex(zac_cond(ahci, port, z3, &wp), ==, 0xe);     /* full */
    g_assert_cmphex(wp, ==, z3 + ZAC_ZONE);
    g_assert_cmphex(zac_cond(ahci, port, z4, &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, z4 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z5, &wp), ==, 0x4);
    g_assert_cmphex(wp, ==, z5 + 8);
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(qdict_get_qdict(info,
                                                               "zones"),
                                               "open")), ==, 0);
    qobject_unref(info);
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1 + 8);
    g_assert_cmphex(zac_cond(ahci, port, z1, &wp), ==, 0x2);
    g_assert_cmphex(wp, ==, z1 + 16);
    g_assert_cmphex(zac_out(ahci, port, 0x04, 0, true), ==, 0); /* RESET */
    text = zstate_read(path);
    g_assert(g_str_has_suffix(text, "are empty\n"));     /* none listed */
    g_free(text);
    ncq_shutdown(ahci);
}

/*
 * zone-state=FILE: a new drive creates FILE with every zone empty; a
 * RESET or FINISH goes to it when it completes, every write pointer at a
 * FLUSH CACHE EXT, the rest when QEMU exits.  The next QEMU on FILE and
 * the same image finds the zones as a power-on leaves them: write
 * pointers and full zones kept, open zones closed (or empty when nothing
 * was written), no zone open; and goes on writing at the pointers.
 */
static void test_zac_zone_state_restart(void)
{
    g_autofree char *path = zstate_path();
    g_autofree char *props = zstate_props(path);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE, z3 = z2 + ZAC_ZONE;
    const uint64_t z4 = z3 + ZAC_ZONE, z5 = z4 + ZAC_ZONE;
    uint8_t port, status, data[4096];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, props, &port);
    char *text, *why;
    QDict *info;

    memset(data, 0x5e, sizeof(data));
    text = zstate_read(path);
    g_assert(g_str_has_prefix(text, ZS_HEADER));
    g_assert(g_str_has_suffix(text, "are empty\n"));     /* none listed */
    g_free(text);
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1);
    g_assert_cmphex(zac_out(ahci, port, 0x03, z2, false), ==, 0); /* OPEN */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z3);
    g_assert_cmphex(zac_out(ahci, port, 0x02, z3, false), ==, 0); /* FINISH */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z4);
    g_assert_cmphex(zac_out(ahci, port, 0x01, z4, false), ==, 0); /* CLOSE */
    /* the FINISH wrote FILE: zone 526 full; zone 527's write came after */
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV + 2, "full", z3 + ZAC_ZONE));
    g_assert(!zstate_lists(text, ZAC_CONV + 3));
    g_free(text);
    why = zstate_reason(ahci);
    g_assert_cmpstr(why, ==, "finish-zone");
    g_free(why);
    /* FLUSH CACHE EXT: every pointer */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, 0xea, 0, 0, 0, 0,
                            0, &status), ==, 0);
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV, "implicitly-open", z1 + 8));
    g_assert(zstate_has(text, ZAC_CONV + 1, "explicitly-open", z2));
    g_assert(zstate_has(text, ZAC_CONV + 3, "closed", z4 + 8));
    g_free(text);
    info = query_disk(ahci);
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(info, "zones"),
                                  "state-file"), ==, path);
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(info, "zones"),
                                  "state-reason"), ==, "flush");
    qobject_unref(info);
    /* a write after the flush: in FILE when QEMU exits */
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z5);
    text = zstate_read(path);
    g_assert(!zstate_lists(text, ZAC_CONV + 4));
    g_free(text);
    ncq_shutdown(ahci);
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV + 4, "implicitly-open", z5 + 8));
    g_free(text);

    zstate_restart_power_on(props, path);
    unlink(path);
}

/*
 * A bad zone-state stops QEMU at startup with one line naming the file,
 * the line and the problem: a write pointer outside its zone, a file of
 * another model; and zone-state on a drive without zones.
 */
static void test_zac_zone_state_bad(void)
{
    g_autofree char *path = zstate_path();
    g_autofree char *dev = g_strdup_printf(
        "-M q35 -drive if=none,id=z,file=%s,format=raw "
        "-device ncq-disk,drive=z,bus=ide.0," ZAC_PROPS ",zone-state=%s",
        zoned_img_path, path);
    g_autofree char *plain = g_strdup_printf(
        "-M q35 -device ncq-disk,drive=d1,bus=ide.0,zone-state=%s", path);
    g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;
    g_autofree char *want = g_strdup_printf(
        "zone-state %s: line 4: write pointer 123 outside zone 527 "
        "(LBAs 276299776-276824063", path);
    int status;

    g_assert(g_file_set_contents(path, ZS_HEADER "# two zones\n"
                                 "526 full 276299776\n527 closed 123\n",
                                 -1, NULL));
    status = spawn_startup(dev, &err);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err, want));
    g_assert_cmpint(count_own_lines(err), ==, 1);
    g_assert(g_file_set_contents(path, "# ncq-disk zone state v1 "
                                 "model=zsmall zones=14 zone_sectors=128 "
                                 "conventional=2\n", -1, NULL));
    status = spawn_startup(dev, &err2);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err2, "line 1: written for model zsmall, but this "
                    "drive is wd-hc620; the file is another drive's: give "
                    "this drive a new zone-state file"));
    g_assert_cmpint(count_own_lines(err2), ==, 1);
    status = spawn_startup(plain, &err3);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(err3, "model 'st3400620as' is not host-managed"));
    g_assert_cmpint(count_own_lines(err3), ==, 1);
    unlink(path);
}

/*
 * An incoming migration: the destination read its zone-state file at
 * startup, and the migrated zones replace what it read (a zone the file
 * says is full arrives empty, the source's open zone arrives open); the
 * destination writes the migrated state back, the source wrote its own
 * when it stopped for the migration.
 */
static void test_zac_zone_state_migrate(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw",
                                             zoned_img_path);
    g_autofree char *pa = zstate_path(), *pb = zstate_path();
    g_autofree char *propa = zstate_props(pa);
    g_autofree char *propb = zstate_props(pb);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE;
    uint8_t port, data[4096];
    AHCIQState *src, *dst;
    char *text;
    uint64_t wp;

    g_assert(g_file_set_contents(pb, ZS_HEADER "525 full 275775488\n", -1,
                                 NULL));
    src = ncq_boot_drive(drive, propa, &port);
    dst = ncq_boot_incoming(drive, propb);
    memset(data, 0x31, sizeof(data));
    ncq_io(src, port, CMD_WRITE_DMA_EXT, data, sizeof(data), z1);
    ncq_migrate(src, dst);
    text = zstate_read(pa);                 /* the source, at its stop */
    g_assert(zstate_has(text, ZAC_CONV, "implicitly-open", z1 + 8));
    g_free(text);
    g_assert_cmphex(zac_cond(dst, port, z1, &wp), ==, 0x2);
    g_assert_cmphex(wp, ==, z1 + 8);
    g_assert_cmphex(zac_cond(dst, port, z2, &wp), ==, 0x1);
    g_assert_cmphex(wp, ==, z2);
    ncq_shutdown(src);
    ncq_shutdown(dst);
    text = zstate_read(pb);
    g_assert(zstate_has(text, ZAC_CONV, "implicitly-open", z1 + 8));
    g_assert(!zstate_lists(text, ZAC_CONV + 1));
    g_free(text);
    unlink(pa);
    unlink(pb);
}

/*
 * ncq-disk-power-cut: FILE gets what the drive keeps, the model's state
 * after the power loss (the dropped queued write's pointer back, open
 * zones closed).
 */
static void test_zac_zone_state_power_cut(void)
{
    g_autofree char *path = zstate_path();
    g_autofree char *props = zstate_props(path);
    const uint64_t z1 = ZAC_SWR0, z2 = z1 + ZAC_ZONE;
    uint8_t port, data[4096];
    AHCIQState *ahci = ncq_boot_ready(zoned_img_path, props, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *w;
    QDict *rsp;
    char *text, *why;

    memset(data, 0x6c, sizeof(data));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, data, sizeof(data), z1);
    w = ncq_prepare(ahci, port, WRITE_FPDMA_QUEUED, gbuf, 4096, z2);
    ahci_command_issue_async(ahci, w);
    rsp = qtest_qmp(ahci->parent->qts,
                    "{ 'execute': 'ncq-disk-power-cut', "
                    "  'arguments': { 'id': 'disk0', 'quit': false } }");
    g_assert_nonnull(qdict_get_qdict(rsp, "return"));
    qobject_unref(rsp);
    why = zstate_reason(ahci);
    g_assert_cmpstr(why, ==, "power-cut");
    g_free(why);
    text = zstate_read(path);
    g_assert(zstate_has(text, ZAC_CONV, "closed", z1 + 8));
    g_assert(!zstate_lists(text, ZAC_CONV + 1));
    g_free(text);
    ahci_command_free(w);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
    unlink(path);
}

static void make_images(void)
{
    int fd;

    img_path = g_strdup("/tmp/qtest.ncq-disk.XXXXXX");
    fd = g_mkstemp(img_path);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, DISK_SECTORS * 512) == 0);
    close(fd);
    big_img_path = g_strdup("/tmp/qtest.ncq-disk-big.XXXXXX");
    fd = g_mkstemp(big_img_path);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, BIG_SECTORS * 512) == 0);
    close(fd);
    zoned_img_path = g_strdup("/tmp/qtest.ncq-disk-zoned.XXXXXX");
    fd = g_mkstemp(zoned_img_path);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, ZAC_SECTORS * 512) == 0);
    close(fd);
}

/* IDENTIFY, hot-plug, and queued commands that succeed */
static void add_identify_and_ncq_tests(void)
{
    qtest_add_func("/ncq-disk/identify", test_identify);
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
    qtest_add_func("/ncq-disk/identify/model-words",
                   test_identify_model_words);
    qtest_add_func("/ncq-disk/identify/hba-default-gen1",
                   test_identify_hba_default_gen1);
    qtest_add_func("/ncq-disk/identify/link-per-model",
                   test_identify_link_per_model);
    qtest_add_func("/ncq-disk/identify/queue-depth",
                   test_identify_queue_depth);
    qtest_add_func("/ncq-disk/ncq/write-read-back", test_ncq_write_read_back);
    qtest_add_data_func("/ncq-disk/ncq/matches-model/sptf", NULL,
                        test_matches_model);
    qtest_add_data_func("/ncq-disk/ncq/matches-model/fcfs", "policy=fcfs",
                        test_matches_model);
}

/* What a misbehaving guest gets: the ATA error behaviour */
static void add_error_tests(void)
{
    qtest_add_func("/ncq-disk/error/lba-range", test_error_lba_range);
    qtest_add_func("/ncq-disk/error/duplicate-tag", test_error_duplicate_tag);
    qtest_add_func("/ncq-disk/error/beyond-depth", test_error_beyond_depth);
    qtest_add_func("/ncq-disk/ncq/depth-any-tag", test_depth_any_tag_served);
    qtest_add_func("/ncq-disk/error/non-queued-while-queued",
                   test_error_nonqueued_while_queued);
    qtest_add_func("/ncq-disk/reset/drops-queue", test_reset_drops_queue);
    qtest_add_func("/ncq-disk/ncq/count-zero-is-65536", test_ncq_count_zero);
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
    qtest_add_func("/ncq-disk/ncq/after-aborted-non-queued",
                   test_ncq_after_aborted_non_queued);
    qtest_add_func("/ncq-disk/error/dma-to-mmio-does-not-hang",
                   test_dma_to_mmio_does_not_hang);
    qtest_add_func("/ncq-disk/error/fetch-during-drop",
                   test_error_fetch_during_drop);
}

/* Resets and port stops while commands are queued, parked or held */
static void add_reset_tests(void)
{
    qtest_add_data_func("/ncq-disk/reset/hba", "hba", test_reset_kinds);
    qtest_add_data_func("/ncq-disk/reset/srst", "srst", test_reset_kinds);
    qtest_add_func("/ncq-disk/reset/commands-during-and-after",
                   test_reset_commands_during_and_after);
    qtest_add_func("/ncq-disk/reset/port-stop-then-reuse-tags",
                   test_port_stop_then_reuse_tags);
    qtest_add_func("/ncq-disk/guest/never-clears-interrupts",
                   test_never_clears_interrupts);
}

/* Injected faults, power, TRIM, non-queued commands, QMP */
static void add_fault_and_sct_tests(void)
{
    qtest_add_func("/ncq-disk/fault/unc-ncq", test_fault_unc_ncq);
    qtest_add_func("/ncq-disk/fault/write-ncq", test_fault_write_ncq);
    qtest_add_func("/ncq-disk/fault/unc-non-queued",
                   test_fault_unc_non_queued);
    qtest_add_func("/ncq-disk/fault/hang", test_fault_hang);
    qtest_add_func("/ncq-disk/fault/slow", test_fault_slow);
    qtest_add_func("/ncq-disk/fault/qmp", test_fault_qmp);
    qtest_add_func("/ncq-disk/sct/status", test_sct_status);
    qtest_add_func("/ncq-disk/sct/erc", test_sct_erc);
    qtest_add_func("/ncq-disk/sct/bad-input", test_sct_bad_input);
    qtest_add_func("/ncq-disk/sct/erc-limits-unc", test_sct_erc_limits_unc);
    qtest_add_func("/ncq-disk/power-cut", test_power_cut);
    qtest_add_func("/ncq-disk/trim/hdd-aborts", test_trim_hdd_aborts);
}

/* Resets, DMA and the host clock; then the rest of the non-queued path. */
static void add_reset_and_dma_tests(void)
{
    qtest_add_data_func("/ncq-disk/reset/stops-dma-from-mmio",
                        "ncq-disk,power-loss=off",
                        test_reset_stops_dma_from_mmio);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-reset-stops-dma-from-mmio",
                        "ide-hd", test_reset_stops_dma_from_mmio);
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
    qtest_add_data_func("/ncq-disk/time/host-stall/queued-reset",
                        &stall_queued_reset, test_host_stall);
    qtest_add_data_func("/ncq-disk/hook/contract", "ncq-disk",
                        test_hook_contract);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-hook-contract", "ide-hd",
                        test_hook_contract);
    qtest_add_data_func("/ncq-disk/dma/small-bounce-buffer", "ncq-disk",
                        test_dma_small_bounce_buffer);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-dma-small-bounce-buffer",
                        "ide-hd", test_dma_small_bounce_buffer);
    qtest_add_data_func("/ncq-disk/time/wait-blocks", NULL, test_host_wait);
    qtest_add_data_func("/ncq-disk/time/hold-clock-does-not-block", "on",
                        test_host_wait);
    qtest_add_data_func("/ncq-disk/dma/unaligned-piece-keeps-bounce-buffer",
                        "ncq-disk", test_dma_unaligned_piece_keeps_bounce);
    qtest_add_data_func(
        "/ncq-disk/upstream/ide-hd-dma-unaligned-piece-keeps-bounce-buffer",
        "ide-hd", test_dma_unaligned_piece_keeps_bounce);
    qtest_add_data_func("/ncq-disk/reset/port-restart-during-pio-write",
                        "ncq-disk,timing=off",
                        test_port_restart_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/port-restart-before-held-pio-write",
                        "ncq-disk", test_port_restart_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/port-stop-cancels-parked-dma",
                        "ncq-disk", test_port_stop_cancels_parked_dma);
    qtest_add_data_func(
        "/ncq-disk/reset/port-stop-cancels-parked-dma/timing-off",
        "ncq-disk,timing=off", test_port_stop_cancels_parked_dma);
    qtest_add_data_func(
        "/ncq-disk/upstream/ide-hd-port-stop-cancels-parked-dma", "ide-hd",
        test_port_stop_cancels_parked_dma);
    qtest_add_data_func("/ncq-disk/reset/reset-during-pio-write",
                        "ncq-disk,timing=off", test_reset_during_pio_write);
    qtest_add_data_func("/ncq-disk/reset/reset-during-held-pio-write",
                        "ncq-disk", test_reset_during_pio_write);
    qtest_add_func("/ncq-disk/trim/ssd-held-then-done",
                   test_trim_ssd_held_then_done);
    qtest_add_func("/ncq-disk/nonqueued/decoded", test_nonqueued_decoded);
    qtest_add_func("/ncq-disk/nonqueued/wc-off-held",
                   test_nonqueued_wc_off_held);
    qtest_add_func("/ncq-disk/qmp/set-checks", test_set_checks);
    qtest_add_func("/ncq-disk/settings/every-surface",
                   test_settings_every_surface);
    qtest_add_func("/ncq-disk/settings/write-cache-default",
                   test_write_cache_default);
    qtest_add_data_func("/ncq-disk/reset/drops-held-read/comreset",
                        "comreset", test_reset_drops_held_read);
    qtest_add_data_func("/ncq-disk/reset/drops-held-read/hba", "hba",
                        test_reset_drops_held_read);
    qtest_add_data_func("/ncq-disk/reset/drops-held-read/port-stop",
                        "port-stop", test_reset_drops_held_read);
    qtest_add_func("/ncq-disk/reset/held-write-lands",
                   test_reset_held_write_lands);
    qtest_add_func("/ncq-disk/piix-refused", test_piix_refused);
    qtest_add_func("/ncq-disk/migrate/port-stopped-with-queued",
                   test_migrate_port_stopped);
    qtest_add_func("/ncq-disk/migrate/tag-not-slot",
                   test_migrate_tag_not_slot);
    qtest_add_func("/ncq-disk/migrate/prdt-rewritten",
                   test_migrate_prdt_rewritten);
    qtest_add_func("/ncq-disk/migrate/keeps-fua-prio-cdl",
                   test_migrate_keeps_fua_prio_cdl);
    qtest_add_func("/ncq-disk/migrate/queued-zac",
                   test_migrate_queued_zac);
}

/* Logs, CDL and host-managed zones. */
static void add_log_cdl_zac_tests(void)
{
    qtest_add_data_func("/ncq-disk/log/directories-list-every-log", NULL,
                        test_log_directories);
    qtest_add_data_func("/ncq-disk/log/directories-list-every-log/cdl",
                        CDL_PROPS, test_log_directories);
    qtest_add_func("/ncq-disk/log/identify-pages", test_log_identify_pages);
    qtest_add_data_func("/ncq-disk/log/dma/ata7-has-none", NULL,
                        test_log_dma);
    qtest_add_data_func("/ncq-disk/log/dma/acs4", "model=seagate-exos-x18",
                        test_log_dma);
    qtest_add_func("/ncq-disk/log/write-bad-input", test_log_write);
    qtest_add_func("/ncq-disk/cdl/non-queued", test_cdl_non_queued);
    qtest_add_func("/ncq-disk/cdl/statistics", test_cdl_statistics);
    qtest_add_func("/ncq-disk/zac/identify", test_zac_identify);
    qtest_add_func("/ncq-disk/zac/report-zones", test_zac_report_zones);
    qtest_add_func("/ncq-disk/zac/zone-actions", test_zac_zone_actions);
    qtest_add_func("/ncq-disk/zac/write-errors", test_zac_write_errors);
    qtest_add_func("/ncq-disk/zac/signature", test_zac_signature);
    qtest_add_func("/ncq-disk/zac/open-limit", test_zac_open_limit);
    qtest_add_func("/ncq-disk/zac/bad-image", test_zac_bad_image);
    qtest_add_func("/ncq-disk/zac/migrate", test_zac_migrate);
    qtest_add_func("/ncq-disk/zac/queued/advertised",
                   test_zac_queued_advertised);
    qtest_add_func("/ncq-disk/zac/queued/actions", test_zac_queued);
    qtest_add_func("/ncq-disk/zac/queued/errors", test_zac_queued_errors);
    qtest_add_data_func("/ncq-disk/queue/send-aborted", NULL,
                        test_ncq_send_aborted);
    qtest_add_data_func("/ncq-disk/queue/send-aborted/timing-off",
                        "timing=off", test_ncq_send_aborted);
    qtest_add_func("/ncq-disk/zac/queued/write-reset-race",
                   test_zac_write_reset_race);
    qtest_add_func("/ncq-disk/zac/power-cut", test_zac_power_cut);
    qtest_add_func("/ncq-disk/zac/zone-state/restart",
                   test_zac_zone_state_restart);
    qtest_add_func("/ncq-disk/zac/zone-state/bad-file",
                   test_zac_zone_state_bad);
    qtest_add_func("/ncq-disk/zac/zone-state/migrate",
                   test_zac_zone_state_migrate);
    qtest_add_func("/ncq-disk/zac/zone-state/power-cut",
                   test_zac_zone_state_power_cut);
    qtest_add_func("/ncq-disk/dmsmr/media-cache", test_dmsmr_media_cache);
}

/* ---- Power modes (docs/power-modes.md) ---- */

#define PM_S                1000000000LL
#define PM_MS               1000000LL
#define PM_SPINUP           (10 * PM_S)     /* st3400620as's spinup_ms */
#define ATA_STANDBY_IMM     0xe0
#define ATA_IDLE_IMM        0xe1
#define ATA_STANDBY         0xe2
#define ATA_IDLE            0xe3
#define ATA_CHECK_POWER     0xe5
#define ATA_SLEEP           0xe6
#define PM_ABORTED          (-1)

/*
 * A power command (libqos knows none: patch it into a FLUSH CACHE) with
 * @count in its count register; steps the clock until it completes.
 * Returns the count register of its D2H FIS, or PM_ABORTED (the port is
 * recovered); *took: the virtual time it took, if asked.
 */
static int pm_cmd(AHCIQState *ahci, uint8_t port, uint8_t code,
                  uint8_t count, int64_t *took)
{
    QTestState *qts = ahci->parent->qts;
    AHCICommand *cmd = ahci_command_create(CMD_FLUSH_CACHE);
    AHCICommandHeader hdr;
    int64_t t0 = qtest_clock_step(qts, 1), now = t0;
    uint8_t slot;
    int ret;

    ahci_command_commit(ahci, cmd, port);
    slot = ahci_command_slot(cmd);
    ahci_get_command_header(ahci, port, slot, &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command), code);
    qtest_writew(qts, hdr.ctba + offsetof(RegH2DFIS, count), count);
    ahci_command_issue_async(ahci, cmd);
    while (!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) & AHCI_PX_TFD_STS_ERR) &&
           (ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot))) {
        now = qtest_clock_step_next(qts);
    }
    if (ahci_px_rreg(ahci, port, AHCI_PX_TFD) & AHCI_PX_TFD_STS_ERR) {
        g_assert_cmphex((ahci_px_rreg(ahci, port, AHCI_PX_TFD) >> 8) &
                        0xff, ==, 0x04);                    /* ABRT */
        ncq_recover(ahci, port);
        ret = PM_ABORTED;
    } else {
        ret = qtest_readw(qts, ahci->port[port].fb + 0x40 +
                          offsetof(RegD2HFIS, count)) & 0xff;
        ahci_px_wreg(ahci, port, AHCI_PX_IS,
                     ahci_px_rreg(ahci, port, AHCI_PX_IS));
    }
    ahci_command_free(cmd);
    if (took) {
        *took = now - t0;
    }
    return ret;
}

/* A power command that must succeed; the virtual time it took */
static int64_t pm_ok(AHCIQState *ahci, uint8_t port, uint8_t code,
                     uint8_t count)
{
    int64_t took;

    g_assert_cmpint(pm_cmd(ahci, port, code, count, &took), !=, PM_ABORTED);
    return took;
}

static int pm_check(AHCIQState *ahci, uint8_t port)
{
    return pm_cmd(ahci, port, ATA_CHECK_POWER, 0, NULL);
}

/* The raw value of SMART attribute @id */
static uint64_t smart_raw(AHCIQState *ahci, int id)
{
    QDict *info = query_disk(ahci);
    QList *attrs = qdict_get_qlist(qdict_get_qdict(info, "smart"),
                                   "attributes");
    QListEntry *e;
    uint64_t raw = UINT64_MAX;

    QLIST_FOREACH_ENTRY(attrs, e) {
        QDict *a = qobject_to(QDict, qlist_entry_obj(e));

        if (qdict_get_int(a, "id") == id) {
            raw = qdict_get_int(a, "raw");
        }
    }
    qobject_unref(info);
    g_assert(raw != UINT64_MAX);
    return raw;
}

/*
 * Each command and the CHECK POWER MODE value it leaves (hdparm -C:
 * FFh active/idle, 80h idle, 00h standby), by its current and its
 * retired code; a reserved standby timer count is aborted.  IDENTIFY
 * claims the Power Management feature set (words 82/85 bit 3, still after
 * SET FEATURES rewrote word 85) and the standard's timer values (49/13).
 */
static void test_pm_check_power_mode(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QDict *info;

    g_assert_cmphex(identify_word(ahci, port, 49) & (1 << 13), !=, 0);
    g_assert_cmphex(identify_word(ahci, port, 82) & (1 << 3), !=, 0);
    ncq_set_features(ahci, port, 0x82);         /* write cache off */
    g_assert_cmphex(identify_word(ahci, port, 85) & (1 << 3), !=, 0);
    ncq_set_features(ahci, port, 0x02);

    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    pm_ok(ahci, port, ATA_IDLE_IMM, 0);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    pm_ok(ahci, port, ATA_STANDBY_IMM, 0);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmphex(pm_cmd(ahci, port, 0x98, 0, NULL), ==, 0x00);
    info = query_disk(ahci);
    g_assert_cmpstr(qdict_get_str(info, "power-mode"), ==, "standby");
    g_assert_cmpint(qdict_get_int(info, "standby-timer-ns"), ==, 0);
    qobject_unref(info);
    pm_ok(ahci, port, 0x95, 0);  /* IDLE */
    g_assert_cmphex(pm_cmd(ahci, port, 0x98, 0, NULL), ==, 0x80);
    pm_ok(ahci, port, 0x94, 0);  /* STANDBY */
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmpint(pm_cmd(ahci, port, ATA_IDLE, 254, NULL), ==, PM_ABORTED);
    g_assert_cmpint(pm_cmd(ahci, port, ATA_STANDBY, 254, NULL), ==,
                    PM_ABORTED);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    pm_ok(ahci, port, ATA_STANDBY, 0);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    check_still_serving(ahci, port);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    ncq_shutdown(ahci);
}

/*
 * After STANDBY IMMEDIATE the first read waits the model's spin-up
 * (10 s for st3400620as), queued or not; the next one does not.  IDLE
 * IMMEDIATE from standby takes the spin-up itself.  Each spin-up counts
 * in Start_Stop_Count (attribute 4).
 */
static void test_pm_spin_up_delay(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t starts = smart_raw(ahci, 4);
    int64_t t;

    g_assert_cmpint(ncq_read_latency(ahci, port, 1000), <, 50 * PM_MS);
    g_assert_cmpint(pm_ok(ahci, port, ATA_STANDBY_IMM, 0), <, 100 * PM_MS);
    t = ncq_read_latency(ahci, port, 5000);
    g_assert_cmpint(t, >=, PM_SPINUP);
    g_assert_cmpint(t, <, PM_SPINUP + 50 * PM_MS);
    g_assert_cmpint(ncq_read_latency(ahci, port, 9000), <, 50 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    g_assert_cmpint(smart_raw(ahci, 4), ==, starts + 1);

    pm_ok(ahci, port, ATA_STANDBY_IMM, 0);
    t = pm_ok(ahci, port, ATA_IDLE_IMM, 0);
    g_assert_cmpint(t, >=, PM_SPINUP);
    g_assert_cmpint(t, <, PM_SPINUP + 50 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    g_assert_cmpint(ncq_read_latency(ahci, port, 3000), <, 50 * PM_MS);
    g_assert_cmpint(smart_raw(ahci, 4), ==, starts + 2);
    ncq_shutdown(ahci);
}

/*
 * The standby timer (IDLE's count 1: 5 s) spins an idle drive down 5 s
 * after its last command, in virtual time; a read restarts it; count 0
 * turns it off.
 */
static void test_pm_standby_timer(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    QDict *info;

    pm_ok(ahci, port, ATA_IDLE, 1);
    info = query_disk(ahci);
    g_assert_cmpstr(qdict_get_str(info, "power-mode"), ==, "idle");
    g_assert_cmpint(qdict_get_int(info, "standby-timer-ns"), ==, 5 * PM_S);
    qobject_unref(info);
    qtest_clock_step(qts, 4900 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    ncq_read_latency(ahci, port, 2000);
    qtest_clock_step(qts, 4900 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    qtest_clock_step(qts, 200 * PM_MS);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmpint(ncq_read_latency(ahci, port, 7000), >=, PM_SPINUP);

    pm_ok(ahci, port, ATA_IDLE, 0);
    qtest_clock_step(qts, 60 * PM_S);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x80);
    ncq_shutdown(ahci);
}

/* COMRESET: DET=1, then released */
static void pm_comreset(AHCIQState *ahci, uint8_t port)
{
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    ahci_port_clear(ahci, port);
}

/*
 * In SLEEP every command is aborted, CHECK POWER MODE and reads too; a
 * COMRESET wakes the drive into standby, and the next read spins it up.
 */
static void test_pm_sleep_needs_reset(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;

    pm_ok(ahci, port, ATA_SLEEP, 0);
    g_assert_cmpint(pm_check(ahci, port), ==, PM_ABORTED);
    g_assert_cmpint(pm_cmd(ahci, port, ATA_IDLE_IMM, 0, NULL), ==,
                    PM_ABORTED);
    cmd = issue_held(ahci, port, CMD_READ_DMA_EXT, gbuf, 4096, 100);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, 0x04);
    ahci_command_free(cmd);
    ncq_recover(ahci, port);
    pm_comreset(ahci, port);
    g_assert_cmphex(pm_check(ahci, port), ==, 0x00);
    g_assert_cmpint(ncq_read_latency(ahci, port, 100), >=, PM_SPINUP);
    g_assert_cmphex(pm_check(ahci, port), ==, 0xff);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * The mode and the standby timer move with the VM: idle with a 10 s
 * timer, migrated 5 s on; the timer fires 10 s after the command on the
 * other side, and the read after it waits the spin-up.
 */
static void test_pm_migrate(void)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img_path);
    uint8_t port;
    AHCIQState *src = ncq_boot_drive(drive, NULL, &port);
    AHCIQState *dst = ncq_boot_incoming(drive, NULL);

    pm_ok(src, port, ATA_IDLE, 2);
    qtest_clock_step(src->parent->qts, 5 * PM_S);
    ncq_migrate(src, dst);
    g_assert_cmphex(pm_check(dst, port), ==, 0x80);
    qtest_clock_step(dst->parent->qts, 4800 * PM_MS);
    g_assert_cmphex(pm_check(dst, port), ==, 0x80);
    qtest_clock_step(dst->parent->qts, 400 * PM_MS);
    g_assert_cmphex(pm_check(dst, port), ==, 0x00);
    g_assert_cmpint(ncq_read_latency(dst, port, 100), >=, PM_SPINUP);
    ncq_shutdown(src);
    ncq_shutdown(dst);
}

static void add_pm_tests(void)
{
    qtest_add_func("/ncq-disk/pm/check-power-mode", test_pm_check_power_mode);
    qtest_add_func("/ncq-disk/pm/spin-up-delay", test_pm_spin_up_delay);
    qtest_add_func("/ncq-disk/pm/standby-timer", test_pm_standby_timer);
    qtest_add_func("/ncq-disk/pm/sleep-needs-reset",
                   test_pm_sleep_needs_reset);
    qtest_add_func("/ncq-disk/pm/migrate", test_pm_migrate);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("ncq-disk")) {
        g_test_skip("ncq-disk is not built in");
        return g_test_run();
    }

    make_images();
    mig_uri = g_strdup_printf("unix:/tmp/qtest.ncq-disk-mig.%d.sock",
                              getpid());
    add_identify_and_ncq_tests();
    add_error_tests();
    add_reset_tests();
    add_fault_and_sct_tests();
    add_reset_and_dma_tests();
    add_log_cdl_zac_tests();
    add_builtin_model_tests();
    add_pm_tests();

    ret = g_test_run();
    unlink(img_path);
    unlink(big_img_path);
    unlink(zoned_img_path);
    g_free(img_path);
    g_free(big_img_path);
    g_free(zoned_img_path);
    g_free(mig_uri);
    return ret;
}
