/*
 * ncq-disk: HMP commands, on top of the QMP ones
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-ncq-disk.h"
#include "qobject/qdict.h"
#include "monitor/hmp.h"
#include "monitor/monitor.h"
#include "ncq-disk.h"

static void hmp_print_ms(Monitor *mon, const char *name, int64_t ns)
{
    if (ns) {
        monitor_printf(mon, " %s %.3f ms", name, ns / 1e6);
    } else {
        monitor_printf(mon, " %s none", name);
    }
}

/* Every setting, as ncq_disk_set takes it: "name value" */
static void hmp_info_ncq_disk_settings(Monitor *mon, NcqDiskSettingList *l)
{
    monitor_printf(mon, " ");
    for (; l; l = l->next) {
        monitor_printf(mon, " %s %s%s", l->value->name, l->value->value,
                       l->next ? "," : "\n");
    }
}

static void hmp_info_ncq_disk_faults(Monitor *mon, const char *path)
{
    g_autoptr(NcqDiskFaultRuleList) list =
        qmp_query_ncq_disk_faults(path, NULL);
    NcqDiskFaultRuleList *l;

    for (l = list; l; l = l->next) {
        monitor_printf(mon, "  fault %u %s: matched %" PRIu64 " hits %"
                       PRIu64 "\n", l->value->index, l->value->rule,
                       l->value->matched, l->value->hits);
    }
}

static void hmp_print_cdl_limit(Monitor *mon, const char *name,
                                uint32_t us, uint8_t policy)
{
    if (us) {
        monitor_printf(mon, " %s %.3f ms/0x%x", name, us / 1e3, policy);
    }
}

/* Command Duration Limits: on or off, and the descriptors with limits */
static void hmp_info_ncq_disk_cdl(Monitor *mon, const char *path)
{
    g_autoptr(NcqDiskCdlInfo) cdl = qmp_query_ncq_disk_cdl(path, NULL);
    NcqDiskCdlDescriptorList *l;
    int dir;

    if (!cdl || !cdl->supported) {
        return;
    }
    monitor_printf(mon, "  cdl %s\n", cdl->enabled ? "on" : "off");
    for (dir = 0; dir < 2; dir++) {
        for (l = dir ? cdl->write : cdl->read; l; l = l->next) {
            NcqDiskCdlDescriptor *e = l->value;

            if (!e->total_us && !e->active_us && !e->inactive_us) {
                continue;
            }
            monitor_printf(mon, "  cdl-%s %u:", dir ? "write" : "read",
                           e->index);
            hmp_print_cdl_limit(mon, "total", e->total_us, e->total_policy);
            hmp_print_cdl_limit(mon, "active", e->active_us,
                                e->active_policy);
            hmp_print_cdl_limit(mon, "inactive", e->inactive_us,
                                e->inactive_policy);
            monitor_printf(mon, "\n");
        }
    }
}

/* One line of SMART (docs/smart.md) */
static void hmp_info_ncq_disk_smart(Monitor *mon, NcqDiskSmartInfo *s)
{
    monitor_printf(mon, "  SMART %s%s: power-on %" PRIu64 " s, %u power "
                   "cycles, %d C, %u reallocated, %u pending, %u errors, "
                   "%u self-tests, self-test status %02x\n",
                   s->enabled ? "on" : "off",
                   s->failing ? " FAILING" : "", s->power_on_seconds,
                   s->power_cycles, s->temperature, s->reallocated,
                   s->pending, s->errors, s->self_tests,
                   s->self_test_status);
}

void hmp_info_ncq_disk(Monitor *mon, const QDict *qdict)
{
    g_autoptr(NcqDiskInfoList) list = qmp_query_ncq_disk(NULL, NULL);
    NcqDiskInfoList *l;

    if (!list) {
        monitor_printf(mon, "no ncq-disk\n");
        return;
    }
    for (l = list; l; l = l->next) {
        NcqDiskInfo *i = l->value;
        NcqDiskQueueEntryList *q;

        monitor_printf(mon, "%s (%s): model %s, %s, depth %u\n",
                       i->id ? i->id : "-", i->qom_path, i->model,
                       i->timing ? "timing on" : "timing off",
                       i->queue_depth);
        hmp_info_ncq_disk_settings(mon, i->settings);
        monitor_printf(mon, "  power mode %s,", i->power_mode);
        hmp_print_ms(mon, "standby timer", i->standby_timer_ns);
        monitor_printf(mon, "\n");
        monitor_printf(mon, "  submitted %" PRIu64 " reads %" PRIu64
                       " writes %" PRIu64 " cache hits %" PRIu64
                       " timeouts forced %" PRIu64 " guest errors %" PRIu64
                       "\n  max latency %.3f ms, max delay count %u, "
                       "max queue length %u\n",
                       i->submitted, i->completed_reads, i->completed_writes,
                       i->cache_hits, i->timeouts_forced, i->guest_errors,
                       i->max_latency_ns / 1e6, i->max_delay_count,
                       i->max_queue_len);
        for (q = i->queue; q; q = q->next) {
            monitor_printf(mon, "  tag %2u %-5s lba %" PRIu64 " +%u%s%s "
                           "age %.3f ms\n", q->value->tag, q->value->op,
                           q->value->lba, q->value->sectors,
                           q->value->prio ? " prio" : "",
                           q->value->in_service ? " in service" : "",
                           q->value->age_ns / 1e6);
        }
        hmp_info_ncq_disk_smart(mon, i->smart);
        hmp_info_ncq_disk_faults(mon, i->qom_path);
        hmp_info_ncq_disk_cdl(mon, i->qom_path);
    }
}

void hmp_ncq_disk_set(Monitor *mon, const QDict *qdict)
{
    Error *err = NULL;

    ncq_disk_set_text(qdict_get_str(qdict, "id"), qdict_get_str(qdict, "key"),
                      qdict_get_str(qdict, "value"), &err);
    hmp_handle_error(mon, err);
}
