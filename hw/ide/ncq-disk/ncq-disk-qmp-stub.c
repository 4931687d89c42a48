/*
 * ncq-disk QMP commands (and HMP's entry) when the device is not built in
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-ncq-disk.h"
#include "ncq-disk.h"

static void ncq_disk_not_built(Error **errp)
{
    error_setg(errp, "ncq-disk is not built into this QEMU");
}

NcqDiskInfoList *qmp_query_ncq_disk(const char *id, Error **errp)
{
    ncq_disk_not_built(errp);
    return NULL;
}

void qmp_ncq_disk_set(const char *id, const char *policy,
                      bool has_aging_weight, uint32_t aging_weight,
                      bool has_starvation_timeout_ns,
                      int64_t starvation_timeout_ns,
                      bool has_prio_timeout_ns, int64_t prio_timeout_ns,
                      bool has_honour_prio, bool honour_prio,
                      bool has_clustering, uint32_t clustering,
                      bool has_queue_depth, uint32_t queue_depth,
                      bool has_reset_stats, bool reset_stats,
                      bool has_settings, NcqDiskSettingList *settings,
                      Error **errp)
{
    ncq_disk_not_built(errp);
}

NcqDiskFaultRuleList *qmp_query_ncq_disk_faults(const char *id, Error **errp)
{
    ncq_disk_not_built(errp);
    return NULL;
}

void qmp_ncq_disk_fault_add(const char *id, const char *rules, Error **errp)
{
    ncq_disk_not_built(errp);
}

void qmp_ncq_disk_fault_clear(const char *id, bool has_index, uint32_t index,
                              Error **errp)
{
    ncq_disk_not_built(errp);
}

NcqDiskPowerCut *qmp_ncq_disk_power_cut(const char *id, bool has_quit,
                                        bool quit, Error **errp)
{
    ncq_disk_not_built(errp);
    return NULL;
}

NcqDiskCdlInfo *qmp_query_ncq_disk_cdl(const char *id, Error **errp)
{
    ncq_disk_not_built(errp);
    return NULL;
}

void qmp_ncq_disk_set_cdl(const char *id, bool has_enabled, bool enabled,
                          bool has_read, NcqDiskCdlDescriptorList *read,
                          bool has_write, NcqDiskCdlDescriptorList *write,
                          Error **errp)
{
    ncq_disk_not_built(errp);
}

void ncq_disk_set_text(const char *id, const char *key, const char *value,
                       Error **errp)
{
    ncq_disk_not_built(errp);
}
