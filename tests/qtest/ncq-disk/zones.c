/*
 * ncq-disk qtests: host-managed zones (ZAC) through non-queued
 * commands
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/* The sense REQUEST SENSE DATA EXT returns: key << 16 | ASC << 8 | ASCQ */
static uint32_t zac_sense(AHCIQState *ahci, uint8_t port)
{
    uint8_t status;

    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    return status & 0x02 ? sense_lba(ahci, port) : 0;
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

void add_zones_tests(void)
{
    qtest_add_func("/ncq-disk/zac/identify", test_zac_identify);
    qtest_add_func("/ncq-disk/zac/report-zones", test_zac_report_zones);
    qtest_add_func("/ncq-disk/zac/zone-actions", test_zac_zone_actions);
    qtest_add_func("/ncq-disk/zac/write-errors", test_zac_write_errors);
    qtest_add_func("/ncq-disk/zac/signature", test_zac_signature);
    qtest_add_func("/ncq-disk/zac/open-limit", test_zac_open_limit);
    qtest_add_func("/ncq-disk/zac/bad-image", test_zac_bad_image);
    qtest_add_func("/ncq-disk/zac/migrate", test_zac_migrate);
}
