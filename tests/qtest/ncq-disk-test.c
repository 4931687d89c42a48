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
#include "qemu/bswap.h"

#define DISK_SECTORS   (64 * 1024 * 2)     /* 64 MiB image */

static char *img_path;

static AHCIQState *ncq_boot(const char *props)
{
    AHCIQState *s = g_new0(AHCIQState, 1);

    s->parent = qtest_pc_boot("-M q35 "
                              "-drive if=none,id=drive0,file=%s,format=raw "
                              "-device ncq-disk,drive=drive0,bus=ide.0%s%s",
                              img_path, props ? "," : "", props ? props : "");
    alloc_set_flags(&s->parent->alloc, ALLOC_LEAK_ASSERT);
    s->dev = get_ahci_device(s->parent->qts, &s->fingerprint);
    ahci_pci_enable(s);
    ahci_hba_enable(s);
    return s;
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
    ncq_shutdown(ahci);
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
    /* As libata and ahci-test do: IDENTIFY first, which clears the port's
     * power-on error state. */
    ahci_io(ahci, port, CMD_IDENTIFY, in, 512, 0);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, len, 4096);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, len, 4096);
    g_assert(memcmp(out, in, len) == 0);
    ncq_shutdown(ahci);
}

int main(int argc, char **argv)
{
    int fd, ret;

    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("ncq-disk")) {
        g_test_skip("ncq-disk is not built in");
        return g_test_run();
    }

    img_path = g_strdup("/tmp/qtest.ncq-disk.XXXXXX");
    fd = g_mkstemp(img_path);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, DISK_SECTORS * 512) == 0);
    close(fd);

    qtest_add_func("/ncq-disk/identify", test_identify);
    qtest_add_func("/ncq-disk/identify/queue-depth",
                   test_identify_queue_depth);
    qtest_add_func("/ncq-disk/ncq/write-read-back", test_ncq_write_read_back);

    ret = g_test_run();
    unlink(img_path);
    g_free(img_path);
    return ret;
}
