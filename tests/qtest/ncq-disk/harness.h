/*
 * ncq-disk qtests: the harness every concern file shares, and each
 * file's registration function
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef NCQ_DISK_TEST_HARNESS_H
#define NCQ_DISK_TEST_HARNESS_H

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

/* The HBA links at up to 6.0 Gb/s (q35's AHCI comes up at 1.5 Gb/s). */
#define HBA_GEN3 "-global ich9-ahci.sata-gen=3"

#define FPDMA_MAX_SECTORS 65536             /* count field 0 */
#define FPDMA_MAX_BYTES   (FPDMA_MAX_SECTORS * 512)

/* Where q35 with the qtests' RAM has nothing mapped (above the 64-bit hole) */
#define UNMAPPED_GPA 0x4000000000ULL

#define ATA_ERR_UNC    0x40
#define ATA_STS_DRDY_ERR 0x41
#define FAULT_MS       1000000LL

#define ATA_SMART           0xb0
#define SMART_READ_LOG      0xd5
#define SMART_WRITE_LOG     0xd6
#define LOG_SCT             0xe0        /* SCT Command Transport's log */

#define ATA_WRITE_LOG_EXT       0x3f
#define ATA_READ_LOG_DMA_EXT    0x47
#define ATA_WRITE_LOG_DMA_EXT   0x57

#define CDL_PROPS               "model=seagate-exos-x18,cdl=on"

/*
 * Host-managed zones over ATA (ZAC, docs/smr.md), on wd-hc620: 52,156
 * zones of 524,288 sectors, the first 524 conventional, 128 open at most.
 */
#define ZAC_PROPS           "model=wd-hc620"
#define ZAC_ZONE            524288ULL
#define ZAC_CONV            524
#define ZAC_ZONES           52156
#define ZAC_SWR0            (ZAC_CONV * ZAC_ZONE)   /* first SWR zone */

/* The images the cases run on: main() makes and unlinks them */
extern char *img_path;
extern char *big_img_path;
extern char *zoned_img_path;    /* wd-hc620's capacity, sparse */
extern char *mig_uri;

/* Booting a drive on the first AHCI port; shutting it down */
AHCIQState *ahci_boot_device_args(const char *device, const char *img,
                                  const char *props, const char *extra);
AHCIQState *ahci_boot_device(const char *device, const char *img,
                             const char *props);
AHCIQState *ncq_boot(const char *props);
AHCIQState *ahci_boot_ready(const char *device, const char *img,
                            const char *props, uint8_t *port);
AHCIQState *ncq_boot_ready(const char *img, const char *props,
                           uint8_t *port);
AHCIQState *ahci_boot_spec_img(gconstpointer data, const char *img,
                               uint8_t *port);
AHCIQState *ahci_boot_spec(gconstpointer data, uint8_t *port);
void ncq_shutdown(AHCIQState *ahci);

/* Issuing commands, waiting for them, the queued error log (10h) */
bool ncq_busy(AHCIQState *ahci, uint8_t port, uint8_t slot);
void ncq_wait(AHCIQState *ahci, uint8_t port, AHCICommand *cmd);
void ncq_io(AHCIQState *ahci, uint8_t port, uint8_t ide_cmd,
            void *buf, size_t len, uint64_t sector);
AHCICommand *ncq_prepare(AHCIQState *ahci, uint8_t port,
                         uint8_t ide_cmd, uint64_t gbuf, size_t len,
                         uint64_t lba);
void ncq_forge_tag(AHCIQState *ahci, uint8_t port, AHCICommand *cmd,
                   uint8_t tag);
void ncq_recover(AHCIQState *ahci, uint8_t port);
void ncq_read_log(AHCIQState *ahci, uint8_t port, uint8_t log,
                  uint8_t page, uint8_t *buf);
uint8_t ncq_wait_error(AHCIQState *ahci, uint8_t port);
void check_error_log(AHCIQState *ahci, uint8_t port, bool nq,
                     uint8_t tag, uint8_t error, uint64_t lba);
void check_still_serving(AHCIQState *ahci, uint8_t port);

/* QMP, IDENTIFY strings, SET FEATURES */
QDict *query_disk(AHCIQState *ahci);
void ata_string(const uint16_t *words, int first, int count, char *out);
AHCICommand *ncq_set_features_async(AHCIQState *ahci, uint8_t port,
                                    uint8_t feature);
void ncq_set_features(AHCIQState *ahci, uint8_t port, uint8_t feature);

/* Queued commands of any length; guest memory in pieces */
void ncq_wait_done(AHCIQState *ahci, uint8_t port, uint8_t slot);
AHCICommand *ncq_prepare_len(AHCIQState *ahci, uint8_t port,
                             uint8_t ide_cmd, uint64_t gbuf,
                             size_t len, uint64_t lba);
void ncq_bufwrite(QTestState *qts, uint64_t addr, const uint8_t *buf,
                  size_t len);
void ncq_bufread(QTestState *qts, uint64_t addr, uint8_t *buf,
                 size_t len);

/* DMA, held commands, queues of reads */
void hold_bounce_buffer(AHCIQState *ahci);
AHCICommand *issue_held(AHCIQState *ahci, uint8_t port,
                        uint8_t ide_cmd, uint64_t gbuf, size_t len,
                        uint64_t lba);
void ncq_queue_reads(AHCIQState *ahci, uint8_t port, uint64_t gbuf,
                     AHCICommand **cmd, int n);

/* Faults and latencies */
void check_media_error_log(AHCIQState *ahci, uint8_t port,
                           uint8_t tag, uint8_t error, uint64_t lba,
                           uint16_t count);
int64_t ncq_read_latency(AHCIQState *ahci, uint8_t port, uint64_t lba);

/* SMART and SCT */
uint8_t ncq_smart_log(AHCIQState *ahci, uint8_t port, bool write,
                      uint8_t log, uint8_t count, uint8_t *buf,
                      size_t len, uint16_t *ret);
uint8_t sct_command(AHCIQState *ahci, uint8_t port, uint16_t action,
                    uint16_t function, uint16_t w2, uint16_t w3,
                    uint16_t *ret);

/* The image file, system reset, IDENTIFY words */
void check_image(const char *path, uint64_t lba, uint8_t byte);
void ncq_write_fill(AHCIQState *ahci, uint8_t port, uint64_t lba,
                    uint8_t byte, bool fua);
void system_reset(QTestState *qts);
uint16_t identify_word(AHCIQState *ahci, uint8_t port, int w);

/* A QEMU that should refuse to start */
int count_own_lines(const char *text);
int spawn_startup(const char *args, char **err);

/* Migration and stopped VMs */
AHCIQState *ncq_boot_incoming(const char *drive, const char *props);
AHCIQState *ncq_boot_drive(const char *drive, const char *props,
                           uint8_t *port);
void ncq_migrate(AHCIQState *from, AHCIQState *to);
void make_temp_file(char *tmpl);
void wait_vm_stopped(AHCIQState *ahci);

/* Commands libqos does not know; logs; REQUEST SENSE */
uint8_t raw_cmd(AHCIQState *ahci, uint8_t port, uint8_t base,
                uint8_t code, uint16_t feature, uint64_t lba,
                uint16_t count, uint64_t gbuf, uint32_t bytes,
                uint8_t *status);
uint8_t log_cmd(AHCIQState *ahci, uint8_t port, uint8_t code,
                uint8_t feature, uint8_t log, uint16_t page,
                uint16_t count, uint64_t gbuf, uint32_t prdt_bytes);
uint8_t log_read(AHCIQState *ahci, uint8_t port, uint8_t code,
                 uint8_t log, uint16_t page, uint16_t count,
                 uint8_t *buf);
uint8_t log_write(AHCIQState *ahci, uint8_t port, uint8_t code,
                  uint8_t log, uint16_t page, uint16_t count,
                  const uint8_t *buf, uint32_t prdt_bytes);
uint32_t sense_lba(AHCIQState *ahci, uint8_t port);
uint8_t request_sense(AHCIQState *ahci, uint8_t port, uint8_t *status);
uint8_t d2h_status(AHCIQState *ahci, uint8_t port);

/* Zones (ZAC) */
uint8_t zac_report(AHCIQState *ahci, uint8_t port, uint64_t lba,
                   uint8_t options, uint16_t pages, uint8_t *buf);
uint8_t zac_out(AHCIQState *ahci, uint8_t port, uint8_t action,
                uint64_t lba, bool all);
uint8_t zac_cond(AHCIQState *ahci, uint8_t port, uint64_t lba,
                 uint64_t *wp);
AHCIQState *zac_boot(uint8_t *port);

/* Each concern file registers its cases (main() calls these in turn) */
void add_identify_tests(void);
void add_hotplug_tests(void);
void add_queue_tests(void);
void add_errors_tests(void);
void add_reset_tests(void);
void add_dma_tests(void);
void add_fault_tests(void);
void add_smart_tests(void);
void add_power_tests(void);
void add_nonqueued_tests(void);
void add_time_tests(void);
void add_settings_tests(void);
void add_migration_tests(void);
void add_logs_tests(void);
void add_cdl_tests(void);
void add_zones_tests(void);
void add_zones_queued_tests(void);
void add_zone_state_tests(void);
void add_dm_smr_tests(void);
void add_models_tests(void);

#endif
