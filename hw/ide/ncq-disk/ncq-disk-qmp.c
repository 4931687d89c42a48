/*
 * ncq-disk: QMP commands
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-ncq-disk.h"
#include "qemu/cutils.h"
#include "qemu/timer.h"
#include "system/block-backend.h"
#include "../ide-internal.h"
#include "ncq-disk.h"

static int ncq_disk_collect(Object *obj, void *opaque)
{
    GSList **list = opaque;

    if (object_dynamic_cast(obj, TYPE_NCQ_DISK)) {
        *list = g_slist_append(*list, obj);
    }
    return 0;
}

/* Every realized ncq-disk, in QOM tree order. */
static GSList *ncq_disk_all(void)
{
    GSList *list = NULL;

    object_child_foreach_recursive(object_get_root(), ncq_disk_collect,
                                   &list);
    return list;
}

static NcqDisk *ncq_disk_find(const char *id, Error **errp)
{
    g_autoptr(GSList) all = ncq_disk_all();
    GSList *l;

    for (l = all; l; l = l->next) {
        NcqDisk *d = NCQ_DISK(l->data);
        g_autofree char *path = object_get_canonical_path(OBJECT(d));

        if ((d->dev.qdev.id && !strcmp(d->dev.qdev.id, id)) ||
            !strcmp(path, id)) {
            return d;
        }
    }
    error_setg(errp, "no ncq-disk with id or QOM path '%s'", id);
    return NULL;
}

static NcqDiskHistogramBucketList *ncq_disk_histogram(const uint64_t *count,
                                                      int n, bool latency)
{
    NcqDiskHistogramBucketList *head = NULL, **tail = &head;
    int i;

    for (i = 0; i < n; i++) {
        NcqDiskHistogramBucket *b = g_new0(NcqDiskHistogramBucket, 1);

        b->count = count[i];
        if (i < n - 1) {
            b->has_below = true;
            b->below = latency ? ncq_stats_lat_bound(i) :
                       (i == 0 ? 1 : (int64_t)1 << i);
        }
        QAPI_LIST_APPEND(tail, b);
    }
    return head;
}

/* The SMART state, as SMART READ DATA would give it now */
static NcqDiskSmartInfo *ncq_disk_smart_info(NcqDisk *d)
{
    NcqDiskSmartInfo *info = g_new0(NcqDiskSmartInfo, 1);
    NcqDiskSmartAttributeList **tail = &info->attributes;
    NcqSmart *sm = &d->smart.st;
    NcqSmartAttr a[NCQ_SMART_MAX_ATTRS];
    int n, i;

    ncq_smart_update(sm, d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    n = ncq_smart_attrs(sm, d->model, a, NCQ_SMART_MAX_ATTRS);
    info->enabled = sm->enabled;
    info->failing = ncq_smart_failing(sm, d->model);
    info->power_on_seconds = sm->power_on_ns / NANOSECONDS_PER_SECOND;
    info->power_cycles = sm->power_cycles;
    info->temperature = ncq_smart_temperature(sm);
    info->reallocated = sm->realloc;
    info->pending = sm->npending;
    info->errors = sm->nerr;
    info->self_tests = sm->ntests;
    info->self_test_status = ncq_smart_exec_status(sm);
    for (i = 0; i < n; i++) {
        NcqDiskSmartAttribute *e = g_new0(NcqDiskSmartAttribute, 1);

        e->id = a[i].id;
        e->name = g_strdup(a[i].name);
        e->value = a[i].value;
        e->worst = a[i].worst;
        e->threshold = a[i].threshold;
        e->raw = a[i].raw;
        QAPI_LIST_APPEND(tail, e);
    }
    return info;
}

/* A host-managed drive's zones: counts by condition, the open ones */
static NcqDiskZonesInfo *ncq_disk_zones_info(NcqDisk *d)
{
    NcqDiskZonesInfo *info = g_new0(NcqDiskZonesInfo, 1);
    NcqDiskZoneCountList **ctail = &info->conditions;
    NcqDiskOpenZoneList **otail = &info->open;
    uint32_t count[16] = { 0 };
    NcqZoneInfo zi;
    uint32_t z;
    int c;

    info->zones = ncq_model_zone_count(d->model);
    info->zone_sectors = d->params->zone_sectors;
    info->conventional = d->params->zone_conv;
    info->max_open = d->params->zone_max_open;
    for (z = 0; z < info->zones; z++) {
        if (ncq_model_zone_info(d->model, z, &zi) < 0) {
            continue;
        }
        count[zi.cond & 0xf]++;
        if (zi.cond == NCQ_ZC_IMP_OPEN || zi.cond == NCQ_ZC_EXP_OPEN) {
            NcqDiskOpenZone *o = g_new0(NcqDiskOpenZone, 1);

            o->zone = z;
            o->start = zi.start;
            o->write_pointer = zi.wp;
            o->condition = g_strdup(ncq_zone_cond_name(zi.cond));
            QAPI_LIST_APPEND(otail, o);
        }
    }
    for (c = 0; c < ARRAY_SIZE(count); c++) {
        if (count[c]) {
            NcqDiskZoneCount *e = g_new0(NcqDiskZoneCount, 1);

            e->condition = g_strdup(ncq_zone_cond_name(c));
            e->count = count[c];
            QAPI_LIST_APPEND(ctail, e);
        }
    }
    if (d->prop.zone_state) {
        info->state_file = g_strdup(d->prop.zone_state);
        info->has_state_writes = true;
        info->state_writes = d->zstate.writes;
    }
    if (d->zstate.reason) {
        info->state_reason = g_strdup(d->zstate.reason);
        info->has_state_written_ns = true;
        info->state_written_ns = d->zstate.last_ns;
    }
    return info;
}

/* A drive-managed SMR drive's media cache: what it holds, its cleaning */
static NcqDiskMediaCacheInfo *ncq_disk_mc_info(NcqDisk *d)
{
    NcqDiskMediaCacheInfo *info = g_new0(NcqDiskMediaCacheInfo, 1);
    NcqMcInfo mi;
    NcqMcState st;
    uint32_t band;
    int64_t until;

    ncq_model_mc_info(d->model, &mi);
    info->sectors = mi.sectors;
    info->capacity_sectors = d->params->mc_sectors;
    info->extents = mi.extents;
    info->map_extents = d->params->mc_map;
    info->band_sectors = d->params->mc_band_sectors;
    info->cleaned = mi.cleaned;
    info->forced = mi.forced;
    st = ncq_model_mc_state(d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                            &band, &until);
    info->cleaning = g_strdup(ncq_mc_state_name(st));
    if (st != NCQ_MC_NONE) {
        info->has_band = true;
        info->band = band;
        info->has_until_ns = true;
        info->until_ns = until;
    }
    return info;
}

/* Every setting by its one name, in its text form */
static NcqDiskSettingList *ncq_disk_settings_info(const NcqSettings *st)
{
    NcqDiskSettingList *head = NULL, **tail = &head;
    char text[64];
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        NcqDiskSetting *e = g_new0(NcqDiskSetting, 1);

        ncq_setting_format(i, st, text, sizeof(text));
        e->name = g_strdup(ncq_setting(i)->name);
        e->value = g_strdup(text);
        QAPI_LIST_APPEND(tail, e);
    }
    return head;
}

static NcqDiskInfo *ncq_disk_info(NcqDisk *d)
{
    NcqDiskInfo *info = g_new0(NcqDiskInfo, 1);
    NcqQueueEntry q[NCQ_MAX_TAGS + 1];
    NcqDiskQueueEntryList **qtail = &info->queue;
    NcqSettings st;
    NcqStats s;
    int i, n;

    ncq_model_get_settings(d->model, &st);
    ncq_model_stats(d->model, &s);
    info->qom_path = object_get_canonical_path(OBJECT(d));
    info->id = g_strdup(d->dev.qdev.id);
    info->model = g_strdup(d->params->name);
    info->timing = d->prop.timing;
    info->policy = g_strdup(ncq_policy_name(st.policy));
    info->aging_weight = st.aging_weight_milli;
    info->starvation_timeout_ns = st.starvation_timeout_ns;
    info->prio_timeout_ns = st.prio_timeout_ns;
    info->honour_prio = st.honour_prio;
    info->clustering = st.clustering_sectors;
    info->queue_depth = d->prop.queue_depth;
    info->write_cache = st.write_cache;
    info->settings = ncq_disk_settings_info(&st);

    n = ncq_model_queue_list(d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                             q, ARRAY_SIZE(q));
    for (i = 0; i < n; i++) {
        NcqDiskQueueEntry *e = g_new0(NcqDiskQueueEntry, 1);

        e->tag = q[i].id;
        e->op = g_strdup(ncq_op_name(q[i].op));
        e->lba = q[i].lba;
        e->sectors = q[i].sectors;
        e->prio = q[i].prio;
        e->in_service = q[i].in_service;
        e->age_ns = q[i].age_ns;
        QAPI_LIST_APPEND(qtail, e);
    }

    info->submitted = s.submitted;
    info->completed_reads = s.completed[NCQ_OP_READ];
    info->completed_writes = s.completed[NCQ_OP_WRITE];
    info->cache_hits = s.cache_hits;
    info->timeouts_forced = s.timeouts_forced;
    info->prio_forced = s.prio_forced;
    info->clustered = s.clustered;
    info->guest_errors = d->count.guest_errors;
    info->host_waits = d->count.host_waits;
    info->max_latency_ns = s.max_latency_ns;
    info->max_delay_count = s.max_delay_count;
    info->max_queue_len = s.max_queue_len;
    info->latency_histogram = ncq_disk_histogram(s.lat_hist,
                                                 NCQ_LAT_BUCKETS, true);
    info->delay_count_histogram = ncq_disk_histogram(s.delay_hist,
                                                     NCQ_DELAY_BUCKETS,
                                                     false);
    info->smart = ncq_disk_smart_info(d);
    info->power_mode = g_strdup(ncq_disk_pm_mode_name(d->pm.mode));
    info->standby_timer_ns = ncq_disk_pm_timer_ns(d->pm.timer_count);
    if (ncq_disk_zoned(d)) {
        info->zones = ncq_disk_zones_info(d);
    }
    if (d->params->mc_sectors) {
        info->media_cache = ncq_disk_mc_info(d);
    }
    return info;
}

NcqDiskInfoList *qmp_query_ncq_disk(const char *id, Error **errp)
{
    NcqDiskInfoList *head = NULL, **tail = &head;
    g_autoptr(GSList) all = NULL;
    GSList *l;

    if (id) {
        NcqDisk *d = ncq_disk_find(id, errp);

        if (d) {
            QAPI_LIST_APPEND(tail, ncq_disk_info(d));
        }
        return head;
    }
    all = ncq_disk_all();
    for (l = all; l; l = l->next) {
        if (NCQ_DISK(l->data)->model) {
            QAPI_LIST_APPEND(tail, ncq_disk_info(NCQ_DISK(l->data)));
        }
    }
    return head;
}

/* The settings named in @list into @st, each read as its property */
static bool ncq_disk_settings_from(NcqDiskSettingList *list,
                                   NcqSettings *st, Error **errp)
{
    char err[256];

    for (; list; list = list->next) {
        int i = ncq_setting_find(list->value->name);

        if (i < 0) {
            error_setg(errp, "unknown setting '%s'; see docs/device.md's "
                       "settings table", list->value->name);
            return false;
        }
        if (ncq_setting_parse(i, list->value->name, list->value->value, st,
                              err, sizeof(err)) < 0) {
            error_setg(errp, "%s", err);
            return false;
        }
    }
    return true;
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
    NcqDisk *d = ncq_disk_find(id, errp);
    NcqSettings st;
    char err[256];

    if (!d) {
        return;
    }
    ncq_model_get_settings(d->model, &st);
    if (policy && ncq_setting_parse(NCQ_SETTING_ID(policy), "policy", policy,
                                    &st, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return;
    }
    /* the typed members: stored values, checked with the rest below */
    if (has_aging_weight) {
        st.aging_weight_milli = aging_weight;
    }
    if (has_starvation_timeout_ns) {
        st.starvation_timeout_ns = starvation_timeout_ns;
    }
    if (has_prio_timeout_ns) {
        st.prio_timeout_ns = prio_timeout_ns;
    }
    if (has_honour_prio) {
        st.honour_prio = honour_prio;
    }
    if (has_clustering) {
        st.clustering_sectors = clustering;
    }
    if (!ncq_disk_settings_from(settings, &st, errp) ||
        (has_queue_depth && !ncq_disk_check_depth(queue_depth, errp))) {
        return;
    }
    if (ncq_model_set_settings_at(d->model, &st,
                                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                                  err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return;
    }
    ncq_disk_set_write_cache(d, st.write_cache);
    if (has_queue_depth && queue_depth != d->prop.queue_depth) {
        IDEBus *bus = DO_UPCAST(IDEBus, qbus, d->dev.qdev.parent_bus);

        d->prop.queue_depth = queue_depth;
        /* IDENTIFY data is built once; rebuild it with the new depth. */
        bus->ifs[d->dev.unit].identify_set = 0;
    }
    if (has_reset_stats && reset_stats) {
        ncq_model_stats_clear(d->model);
        d->count.guest_errors = 0;
        d->count.host_waits = 0;
    }
}

NcqDiskFaultRuleList *qmp_query_ncq_disk_faults(const char *id, Error **errp)
{
    NcqDiskFaultRuleList *head = NULL, **tail = &head;
    NcqDisk *d = ncq_disk_find(id, errp);
    NcqFaultRule r[NCQ_MAX_FAULTS];
    char text[128];
    int i, n;

    if (!d) {
        return NULL;
    }
    n = ncq_model_fault_list(d->model, r, NCQ_MAX_FAULTS);
    for (i = 0; i < n; i++) {
        NcqDiskFaultRule *e = g_new0(NcqDiskFaultRule, 1);

        ncq_fault_format(&r[i], text, sizeof(text));
        e->index = i;
        e->rule = g_strdup(text);
        e->kind = g_strdup(ncq_fault_kind_name(r[i].kind));
        e->lba = r[i].lba;
        e->sectors = r[i].sectors;
        e->matched = r[i].matched;
        e->hits = r[i].hits;
        QAPI_LIST_APPEND(tail, e);
    }
    return head;
}

void qmp_ncq_disk_fault_add(const char *id, const char *rules, Error **errp)
{
    NcqDisk *d = ncq_disk_find(id, errp);

    if (d) {
        ncq_disk_add_faults(d, rules, errp);
    }
}

void qmp_ncq_disk_fault_clear(const char *id, bool has_index, uint32_t index,
                              Error **errp)
{
    NcqDisk *d = ncq_disk_find(id, errp);

    if (!d) {
        return;
    }
    if (ncq_model_fault_clear(d->model, has_index ? (int)index : -1) < 0) {
        error_setg(errp, "ncq-disk '%s' has no fault rule %u; "
                   "query-ncq-disk-faults lists them", id, index);
    }
}

NcqDiskPowerCut *qmp_ncq_disk_power_cut(const char *id, bool has_quit,
                                        bool quit, Error **errp)
{
    NcqDisk *d = ncq_disk_find(id, errp);
    NcqRange lost[NCQ_MAX_VOLATILE];
    NcqDiskRangeList **tail;
    NcqDiskPowerCut *ret;
    int i, n = 0;

    if (!d) {
        return NULL;
    }
    if (!d->prop.power_loss) {
        error_setg(errp, "ncq-disk '%s' has power-loss=off and keeps no old "
                   "contents to lose; start it with power-loss=on", id);
        return NULL;
    }
    if (d->power.off) {
        error_setg(errp, "ncq-disk '%s' has no power already", id);
        return NULL;
    }
    if (ncq_disk_image_inactive(d)) {
        /* The restore would fail sector by sector: refuse it whole. */
        error_setg(errp, "ncq-disk '%s': its image is inactive (an incoming "
                   "migration not yet resumed); run 'cont' or "
                   "blockdev-set-active first", id);
        return NULL;
    }
    ret = g_new0(NcqDiskPowerCut, 1);
    tail = &ret->lost;
    ret->lost_sectors = ncq_disk_power_cut(d, !has_quit || quit, lost, &n);
    for (i = 0; i < n; i++) {
        NcqDiskRange *r = g_new0(NcqDiskRange, 1);

        r->lba = lost[i].lba;
        r->sectors = lost[i].sectors;
        QAPI_LIST_APPEND(tail, r);
    }
    return ret;
}

NcqDiskCdlInfo *qmp_query_ncq_disk_cdl(const char *id, Error **errp)
{
    NcqDisk *d = ncq_disk_find(id, errp);

    return d ? ncq_disk_cdl_query(d) : NULL;
}

void qmp_ncq_disk_set_cdl(const char *id, bool has_enabled, bool enabled,
                          bool has_read, NcqDiskCdlDescriptorList *read,
                          bool has_write, NcqDiskCdlDescriptorList *write,
                          Error **errp)
{
    NcqDisk *d = ncq_disk_find(id, errp);

    if (d) {
        ncq_disk_cdl_set(d, has_enabled, enabled, read, write, errp);
    }
}

/* HMP's "cdl-read 2:total=20ms/abort" (or cdl-write): one descriptor */
static void ncq_disk_set_cdl_text(const char *id, bool write,
                                  const char *value, Error **errp)
{
    g_autoptr(NcqDiskCdlDescriptorList) list = NULL;
    NcqDiskCdlDescriptor *e = g_new0(NcqDiskCdlDescriptor, 1);
    NcqCdlDesc t;
    char err[256];
    int index;

    QAPI_LIST_PREPEND(list, e);
    if (ncq_cdl_desc_parse(value, &index, &t, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return;
    }
    *e = (NcqDiskCdlDescriptor) {
        .index = index,
        .total_us = t.total_us, .total_policy = t.total_policy,
        .active_us = t.active_us, .active_policy = t.active_policy,
        .inactive_us = t.inactive_us, .inactive_policy = t.inactive_policy,
    };
    qmp_ncq_disk_set_cdl(id, false, false, !write, write ? NULL : list,
                         write, write ? list : NULL, errp);
}

/*
 * The keys ncq_disk_set_text() takes besides the settings (whose names
 * come from the library's table), as HMP's ncq_disk_set names them
 */
typedef enum NcqDiskKey {
    NCQ_KEY_QUEUE_DEPTH,
    NCQ_KEY_FAULTS,
    NCQ_KEY_CDL,
    NCQ_KEY_CDL_READ,
    NCQ_KEY_CDL_WRITE,
    NCQ_KEY__MAX,
} NcqDiskKey;

static const struct {
    const char *name;
} ncq_disk_keys[NCQ_KEY__MAX] = {
    [NCQ_KEY_QUEUE_DEPTH]        = { "queue-depth" },
    [NCQ_KEY_FAULTS]             = { "faults" },
    [NCQ_KEY_CDL]                = { "cdl" },
    [NCQ_KEY_CDL_READ]           = { "cdl-read" },
    [NCQ_KEY_CDL_WRITE]          = { "cdl-write" },
};

/* The key named @name; NCQ_KEY__MAX if none */
static NcqDiskKey ncq_disk_key(const char *name)
{
    NcqDiskKey k;

    for (k = 0; k < NCQ_KEY__MAX; k++) {
        if (!strcmp(name, ncq_disk_keys[k].name)) {
            break;
        }
    }
    return k;
}

static void ncq_disk_set_faults(const char *id, const char *value,
                                Error **errp)
{
    /* "clear" removes every rule; anything else is rules to add */
    if (!strcmp(value, "clear")) {
        qmp_ncq_disk_fault_clear(id, false, 0, errp);
    } else {
        qmp_ncq_disk_fault_add(id, value, errp);
    }
}

/* "unknown setting" names every key: the settings', then the others */
static void ncq_disk_unknown_key(const char *key, Error **errp)
{
    g_autoptr(GString) known = g_string_new(NULL);
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        g_string_append_printf(known, "%s, ", ncq_setting(i)->name);
    }
    for (i = 0; i < NCQ_KEY__MAX; i++) {
        g_string_append_printf(known, "%s%s", i == NCQ_KEY__MAX - 1 ?
                               "or " : "", ncq_disk_keys[i].name);
        if (i < NCQ_KEY__MAX - 1) {
            g_string_append(known, ", ");
        }
    }
    error_setg(errp, "unknown setting '%s'; use %s", key, known->str);
}

void ncq_disk_set_text(const char *id, const char *key, const char *value,
                       Error **errp)
{
    NcqDiskKey k = ncq_disk_key(key);
    bool on = !strcmp(value, "on");
    uint64_t v = 0;

    if (ncq_setting_find(key) >= 0) {
        NcqDiskSetting one = { .name = (char *)key, .value = (char *)value };
        NcqDiskSettingList list = { .value = &one };

        qmp_ncq_disk_set(id, NULL, false, 0, false, 0, false, 0, false,
                         false, false, 0, false, 0, false, false, true,
                         &list, errp);
        return;
    }
    if (k == NCQ_KEY__MAX) {
        ncq_disk_unknown_key(key, errp);
        return;
    }
    if (k == NCQ_KEY_FAULTS) {
        ncq_disk_set_faults(id, value, errp);
        return;
    }
    if (k == NCQ_KEY_CDL_READ || k == NCQ_KEY_CDL_WRITE) {
        ncq_disk_set_cdl_text(id, k == NCQ_KEY_CDL_WRITE, value, errp);
        return;
    }
    if (k == NCQ_KEY_CDL) {
        if (!on && strcmp(value, "off")) {
            error_setg(errp, "cdl takes on or off, not '%s'", value);
            return;
        }
        qmp_ncq_disk_set_cdl(id, true, on, false, NULL, false, NULL, errp);
        return;
    }
    if (ncq_parse_uint(value, strlen(value), UINT32_MAX, &v) < 0) {
        error_setg(errp, "%s takes a number from 0 to %u, not '%s'", key,
                   UINT32_MAX, value);
        return;
    }
    qmp_ncq_disk_set(id, NULL, false, 0, false, 0, false, 0, false, false,
                     false, 0, true, v, false, false, false, NULL, errp);
}
