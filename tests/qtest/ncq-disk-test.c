/*
 * qtests for ncq-disk behind QEMU's AHCI controller: one program,
 * its cases in tests/qtest/ncq-disk/, one file per concern
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

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
    add_identify_tests();
    add_hotplug_tests();
    add_queue_tests();
    add_errors_tests();
    add_reset_tests();
    add_dma_tests();
    add_fault_tests();
    add_smart_tests();
    add_power_tests();
    add_nonqueued_tests();
    add_time_tests();
    add_settings_tests();
    add_migration_tests();
    add_logs_tests();
    add_cdl_tests();
    add_zones_tests();
    add_zones_queued_tests();
    add_zone_state_tests();
    add_dm_smr_tests();
    add_models_tests();

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
