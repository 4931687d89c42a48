/*
 * ncq-disk qtests: IDENTIFY DEVICE data, per model and per HBA, and
 * the IDE hooks' contract
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

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

void add_identify_tests(void)
{
    qtest_add_func("/ncq-disk/identify", test_identify);
    qtest_add_func("/ncq-disk/identify/model-words",
                   test_identify_model_words);
    qtest_add_func("/ncq-disk/identify/hba-default-gen1",
                   test_identify_hba_default_gen1);
    qtest_add_func("/ncq-disk/identify/link-per-model",
                   test_identify_link_per_model);
    qtest_add_func("/ncq-disk/identify/queue-depth",
                   test_identify_queue_depth);
    qtest_add_data_func("/ncq-disk/hook/contract", "ncq-disk",
                        test_hook_contract);
    qtest_add_data_func("/ncq-disk/upstream/ide-hd-hook-contract", "ide-hd",
                        test_hook_contract);
}
