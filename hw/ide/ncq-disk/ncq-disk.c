/*
 * ncq-disk: a SATA hard disk whose NCQ command queue is owned by a timing
 * model of a real drive.
 *
 * This file is the QEMU glue: properties, realize and the resets (each
 * part's share of a reset in turn, the parts calling no one up).  IDENTIFY
 * data is built in ncq-disk-identify.c, the queue lives in
 * ncq-disk-queue.c, the logs in ncq-disk-log.c; everything about timing
 * and ordering belongs to the model library in hw/ide/ncq-model/, which
 * includes no QEMU header.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/bswap.h"
#include "qemu/module.h"
#include "hw/ide/ide-dev.h"
#include "hw/qdev-properties.h"
#include "system/block-backend.h"
#include "../ide-internal.h"
#include "ncq-disk.h"

/* IDENTIFY's serial number and firmware revision fields, in characters */
#define ID_SERIAL_LEN           20
#define ID_FIRMWARE_LEN         8

/* A check that both the property and ncq-disk-set (QMP) take */
bool ncq_disk_check_depth(uint32_t depth, Error **errp)
{
    if (depth < 1 || depth > NCQ_DISK_MAX_DEPTH) {
        error_setg(errp, "queue-depth=%u is out of range; use 1 to %d",
                   depth, NCQ_DISK_MAX_DEPTH);
        return false;
    }
    return true;
}

/*
 * A time property: "2s", "2030ms", "500us", "100000ns"; a bare number is
 * milliseconds; "0" disables the time-out.
 */
static bool ncq_disk_parse_time(const char *prop, const char *text,
                                int64_t *ns, Error **errp)
{
    int ret = ncq_parse_duration(text, strlen(text), NCQ_NS_PER_MS, ns);

    if (ret == NCQ_ERR_RANGE) {
        *ns = INT64_MAX;        /* too long for int64_t: too long anyway */
    } else if (ret < 0) {
        error_setg(errp, "%s='%s' is not a time; use e.g. 2s, 2030ms, 500us "
                   "(whole nanoseconds) or 0 for none", prop, text);
        return false;
    }
    /* The model file's limit; it keeps deadlines far from overflow */
    if (*ns > NCQ_MAX_TIMEOUT_NS) {
        error_setg(errp, "%s='%s' is too long; use at most %" PRId64 "s",
                   prop, text,
                   (int64_t)(NCQ_MAX_TIMEOUT_NS / NANOSECONDS_PER_SECOND));
        return false;
    }
    return true;
}

/* The settings properties give, checked; they override the model's. */
typedef struct NcqDiskOverrides {
    NcqSettings st;                     /* the settings given ... */
    bool given[NCQ_SETTING__MAX];       /* ... these of them */
    bool has_recovery;
    int64_t recovery_ns;
} NcqDiskOverrides;

static bool ncq_disk_check_settings(NcqDisk *d, NcqDiskOverrides *o,
                                    Error **errp)
{
    NcqDiskProps *p = &d->prop;
    char err[256];
    int i;

    *o = (NcqDiskOverrides) { .has_recovery = p->recovery };
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        if (!p->setting[i]) {
            continue;
        }
        if (ncq_setting_parse(i, ncq_setting(i)->name, p->setting[i],
                              &o->st, err, sizeof(err)) < 0) {
            error_setg(errp, "%s", err);
            return false;
        }
        o->given[i] = true;
    }
    /* QEMU's own write-cache property: auto leaves the model's */
    if (d->dev.conf.wce != ON_OFF_AUTO_AUTO) {
        o->st.write_cache = d->dev.conf.wce == ON_OFF_AUTO_ON;
        o->given[NCQ_SETTING_ID(write_cache)] = true;
    }
    /* Both would leave one silently ignored; a typo'd command line. */
    if (p->model_file && p->model_name) {
        error_setg(errp, "model=%s and model-file=%s both given; give one "
                   "(model-file is a model of your own)", p->model_name,
                   p->model_file);
        return false;
    }
    if (!ncq_disk_check_depth(p->queue_depth, errp)) {
        return false;
    }
    return !p->recovery ||
           ncq_disk_parse_time("recovery", p->recovery, &o->recovery_ns, errp);
}

/* The drive and IDENTIFY's strings */
static bool ncq_disk_check_drive(IDEDevice *dev, Error **errp)
{
    if (!dev->conf.blk) {
        error_setg(errp, "drive property not set; give drive=ID of a "
                   "-drive if=none,id=ID,...");
        return false;
    }
    if (!blk_is_inserted(dev->conf.blk)) {
        error_setg(errp, "drive '%s' has no medium; give its -drive a "
                   "file=IMAGE", blk_name(dev->conf.blk));
        return false;
    }
    /* Caught here, the generic "Block node is read-only" says no fix. */
    if (!blk_supports_write_perm(dev->conf.blk)) {
        error_setg(errp, "drive '%s' is read-only; ncq-disk needs a "
                   "writable image: drop readonly=on from its -drive",
                   blk_name(dev->conf.blk));
        return false;
    }
    /* Do not cut them to fit IDENTIFY. */
    if (dev->serial && strlen(dev->serial) > ID_SERIAL_LEN) {
        error_setg(errp, "serial='%s' is longer than ATA's %d characters; "
                   "shorten it", dev->serial, ID_SERIAL_LEN);
        return false;
    }
    if (dev->version && strlen(dev->version) > ID_FIRMWARE_LEN) {
        error_setg(errp, "ver='%s' is longer than ATA's %d characters; "
                   "shorten it", dev->version, ID_FIRMWARE_LEN);
        return false;
    }
    return true;
}

/* Add fault rules (docs/faults.md): all of them, or none. */
bool ncq_disk_add_faults(NcqDisk *d, const char *text, Error **errp)
{
    NcqFaultRule r[NCQ_MAX_FAULTS];
    char err[512];
    int n, i, first = ncq_model_fault_list(d->model, r, NCQ_MAX_FAULTS);

    n = ncq_fault_parse(text, r, NCQ_MAX_FAULTS, err, sizeof(err));
    if (n < 0) {
        error_setg(errp, "faults: %s", err);
        return false;
    }
    for (i = 0; i < n; i++) {
        if (ncq_model_fault_add(d->model, &r[i], err, sizeof(err)) < 0) {
            while (i--) {
                ncq_model_fault_clear(d->model, first + i);
            }
            error_setg(errp, "faults: %s", err);
            return false;
        }
    }
    return true;
}

/* The model's parameters: model-file, or a built-in model */
static bool ncq_disk_load_params(NcqDisk *d, Error **errp)
{
    NcqDiskProps *p = &d->prop;
    char err[512];
    struct stat st;

    if (!p->model_file) {
        /* qom-get model then names the model in use */
        if (!p->model_name) {
            p->model_name = g_strdup(NCQ_DISK_DEFAULT_MODEL);
        }
        d->params = ncq_params_builtin(p->model_name);
        if (!d->params) {
            error_setg(errp, "unknown model '%s'; known models: %s "
                       "(or give model-file=PATH)", p->model_name,
                       ncq_params_builtin_names());
            return false;
        }
        return true;
    }
    if (access(p->model_file, R_OK) < 0) {
        error_setg_errno(errp, errno, "model-file=%s cannot be read",
                         p->model_file);
        return false;
    }
    /* A directory opens fine and fails only on read: say what it is. */
    if (stat(p->model_file, &st) == 0 && !S_ISREG(st.st_mode)) {
        error_setg(errp, "model-file=%s is not a regular file; give the "
                   "path of a .ncqm model file", p->model_file);
        return false;
    }
    if (ncq_params_load_file(p->model_file, &d->params,
                             err, sizeof(err)) < 0) {
        error_setg(errp, "model-file: %s (the format is in docs/model.md)",
                   err);
        return false;
    }
    return true;
}

/* The model, with the properties' settings and fault rules */
static bool ncq_disk_load_model(NcqDisk *d, const NcqDiskOverrides *o,
                                Error **errp)
{
    NcqSettings st;
    char err[512];
    int i;

    if (!ncq_disk_load_params(d, errp) || !ncq_disk_cdl_realize(d, errp)) {
        return false;
    }
    if (o->has_recovery) {
        d->params->recovery_ns = o->recovery_ns;
    }
    d->model = ncq_model_new(d->params, d->prop.seed, err, sizeof(err));
    if (!d->model) {
        error_setg(errp, "model '%s': %s", d->params->name, err);
        return false;
    }
    ncq_model_get_settings(d->model, &st);
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        if (o->given[i]) {
            ncq_setting_put(i, &st, ncq_setting_get(i, &o->st));
        }
    }
    st.honour_prio = st.honour_prio && d->prop.ncq_prio;
    if (ncq_model_set_settings(d->model, &st, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return false;
    }
    return !d->prop.faults || ncq_disk_add_faults(d, d->prop.faults, errp);
}

/* The image must fit the model; a smaller one maps onto its first LBAs. */
static bool ncq_disk_check_image(NcqDisk *d, Error **errp)
{
    int64_t len = blk_getlength(d->dev.conf.blk);

    if (len < 0) {
        error_setg_errno(errp, -len, "cannot get the image size");
        return false;
    }
    if (!ncq_disk_zac_check(d, len / BDRV_SECTOR_SIZE, errp)) {
        return false;
    }
    if (len / BDRV_SECTOR_SIZE > d->params->capacity) {
        error_setg(errp, "image has %" PRId64 " sectors, more than model "
                   "%s's capacity of %" PRIu64 "; use a smaller image or "
                   "another model", (int64_t)(len / BDRV_SECTOR_SIZE),
                   d->params->name, (uint64_t)d->params->capacity);
        return false;
    }
    return true;
}

/* The trace file, the IDE device the model describes, the queue */
static bool ncq_disk_init(NcqDisk *d, Error **errp)
{
    ERRP_GUARD();
    IDEDevice *dev = &d->dev;
    NcqSettings st;

    if (d->prop.trace_path) {
        d->trace = fopen(d->prop.trace_path, "w");
        if (!d->trace) {
            error_setg_errno(errp, errno, "cannot open trace file '%s'",
                             d->prop.trace_path);
            return false;
        }
        ncq_trace_header(d->trace, d->params->name, d->prop.seed);
    }

    g_free(dev->model);
    dev->model = g_strdup(d->params->model);
    if (!dev->version) {
        dev->version = g_strdup(d->params->firmware);
    }
    dev->rotation_rate = d->params->kind == NCQ_KIND_SSD ? 1 : d->params->rpm;
    /*
     * TRIM (DATA SET MANAGEMENT) is an SSD's command: the hard disks
     * modelled here predate it.  discard_granularity=512 gives a hard
     * disk TRIM all the same; 0 takes it from an SSD.
     */
    if (dev->conf.discard_granularity == (uint32_t)-1) {
        dev->conf.discard_granularity =
            d->params->kind == NCQ_KIND_SSD ? BDRV_SECTOR_SIZE : 0;
    }
    ncq_disk_queue_init(d);
    ncq_disk_power_init(d);
    ncq_disk_pm_init(d);
    if (!ncq_disk_smart_init(d, errp) || !ncq_disk_zstate_init(d, errp)) {
        return false;
    }
    ide_dev_initfn(dev, IDE_HD, errp);
    if (*errp) {
        return false;
    }
    ncq_model_get_settings(d->model, &st);
    ncq_disk_set_write_cache(d, st.write_cache);
    return true;
}

/*
 * The write cache's setting, in the model and in QEMU's block layer:
 * the block layer's is what SET FEATURES changes and IDENTIFY reports,
 * and whether a host write goes through to the image (FUA) when off.
 */
void ncq_disk_set_write_cache(NcqDisk *d, bool on)
{
    blk_set_enable_write_cache(d->dev.conf.blk, on);
}

static void ncq_disk_release(NcqDisk *d)
{
    g_free(d->mig.model);
    d->mig.model = NULL;
    g_free(d->mig.undo);
    d->mig.undo = NULL;
    ncq_disk_queue_cleanup(d);
    ncq_disk_power_cleanup(d);
    ncq_disk_pm_cleanup(d);
    ncq_disk_smart_cleanup(d);
    ncq_disk_zstate_cleanup(d);
    if (d->trace) {
        fclose(d->trace);
        d->trace = NULL;
    }
    ncq_model_free(d->model);
    d->model = NULL;
    ncq_params_free(d->params);
    d->params = NULL;
}

/*
 * The drive owns an NCQ queue: only an HBA that takes NCQ commands hands
 * it over, and only such an HBA tells it of its resets.
 */
static bool ncq_disk_check_bus(IDEDevice *dev, Error **errp)
{
    IDEBus *bus = IDE_BUS(qdev_get_parent_bus(DEVICE(dev)));

    if (!bus->ncq) {
        error_setg(errp, "ncq-disk needs an AHCI port (bus=ide.0 of q35, or "
                   "of a -device ich9-ahci); a parallel ATA bus has no NCQ");
        return false;
    }
    return true;
}

static void ncq_disk_realize(IDEDevice *dev, Error **errp)
{
    NcqDisk *d = NCQ_DISK(dev);
    NcqDiskOverrides o;

    if (!ncq_disk_check_bus(dev, errp) ||
        !ncq_disk_check_settings(d, &o, errp) ||
        !ncq_disk_check_drive(dev, errp)) {
        return;
    }
    if (!ncq_disk_load_model(d, &o, errp) ||
        !ncq_disk_check_image(d, errp) ||
        !ncq_disk_init(d, errp)) {
        ncq_disk_release(d);
    }
}

/*
 * Unplugged (device_del on an ich9-ahci port, docs/power-and-unplug.md):
 * the HBA has made the drive drop its queue already.  The trace file
 * gets what it holds; the SMART and zone states are saved as at QEMU's
 * exit.
 */
static void ncq_disk_unrealize(IDEDevice *dev)
{
    NcqDisk *d = NCQ_DISK(dev);

    ncq_disk_smart_save_file(d);
    ncq_disk_zstate_save(d, "unplug");
    ncq_disk_release(d);
}

static void ncq_disk_instance_finalize_settings(NcqDisk *d)
{
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        g_free(d->prop.setting[i]);
        d->prop.setting[i] = NULL;
    }
}

/*
 * The model string realize gave the IDE core (dev->model is no property of
 * ncq-disk, so qdev does not free it): a drive unplugged and plugged again
 * would leak one each time.
 */
static void ncq_disk_instance_finalize(Object *obj)
{
    IDEDevice *dev = IDE_DEVICE(obj);

    g_free(dev->model);
    dev->model = NULL;
    ncq_disk_instance_finalize_settings(NCQ_DISK(obj));
}


static const Property ncq_disk_properties[] = {
    DEFINE_BLOCK_PROPERTIES(NcqDisk, dev.conf),
    DEFINE_BLOCK_ERROR_PROPERTIES(NcqDisk, dev.conf),
    DEFINE_PROP_STRING("ver", NcqDisk, dev.version),
    DEFINE_PROP_UINT64("wwn", NcqDisk, dev.wwn, 0),
    DEFINE_PROP_STRING("serial", NcqDisk, dev.serial),
    DEFINE_PROP_STRING("model", NcqDisk, prop.model_name),
    DEFINE_PROP_STRING("model-file", NcqDisk, prop.model_file),
    DEFINE_PROP_UINT32("queue-depth", NcqDisk, prop.queue_depth,
                       NCQ_DISK_MAX_DEPTH),
    DEFINE_PROP_STRING("recovery", NcqDisk, prop.recovery),
    DEFINE_PROP_UINT64("seed", NcqDisk, prop.seed, 1),
    DEFINE_PROP_STRING("trace", NcqDisk, prop.trace_path),
    DEFINE_PROP_BOOL("timing", NcqDisk, prop.timing, true),
    DEFINE_PROP_BOOL("ncq-prio", NcqDisk, prop.ncq_prio, true),
    DEFINE_PROP_STRING("faults", NcqDisk, prop.faults),
    DEFINE_PROP_BOOL("power-loss", NcqDisk, prop.power_loss, true),
    DEFINE_PROP_STRING("smart-file", NcqDisk, prop.smart_file),
    DEFINE_PROP_STRING("zone-state", NcqDisk, prop.zone_state),
    /* For tests: how long a stuck host I/O may hold virtual time */
    DEFINE_PROP_UINT32("x-host-wait-ms", NcqDisk, prop.host_wait_ms, 30000),
    DEFINE_PROP_BOOL("x-hold-clock", NcqDisk, prop.hold_clock, true),
    DEFINE_PROP_ON_OFF_AUTO("cdl", NcqDisk, prop.cdl, ON_OFF_AUTO_AUTO),
};

/*
 * What -device ncq-disk,help says of each property: its unit and range.
 * A default that depends on the model is given here, as a user would
 * say it; qdev prints the fixed ones itself.  Limits come from where they
 * are checked.
 */
static const struct {
    const char *name;
    const char *text;
} ncq_disk_property_help[] = {
    { "wwn", "world wide name in IDENTIFY, 64 bits; 0 for none" },
    { "model-file", "a model of your own: path of a .ncqm parameter file "
      "(docs/model.md); give it instead of model" },
    { "seed", "seed of the model's generator (spindle phase at power-on, "
      "seek jitter), 64 bits" },
    { "trace", "host file for the per-command trace "
      "(docs/trace-schema.md) (default: none)" },
    { "timing", "on/off; off: each command completes as soon as its host "
      "I/O does, like ide-hd" },
    { "ncq-prio", "on/off: advertise NCQ priority; off also makes the "
      "firmware ignore the PRIO bit" },
    { "faults", "fault rules, e.g. unc@2002+1;hang@6000:once "
      "(docs/faults.md) (default: none)" },
    { "power-loss", "on/off: keep the old contents of sectors not yet on "
      "the media, for ncq-disk-power-cut; off saves a host read per write" },
    { "smart-file", "host file keeping the drive's SMART state across QEMU "
      "runs, read at start, written at exit and power cut (docs/smart.md) "
      "(default: none)" },
    { "zone-state", "host file keeping a host-managed drive's write pointers "
      "and zone conditions across QEMU runs: read at start (missing: "
      "created, every zone empty), written at flush, zone reset/finish, "
      "stop, exit and power cut (docs/smr.md) (default: none)" },
    { "discard_granularity", "TRIM (DSM) granularity in bytes: 0 (no "
      "TRIM) or 512; 4294967295 means the model's: 512 for an SSD, 0 for "
      "a hard disk" },
    { "cdl", "on/off/auto: Command Duration Limits (ACS-5, docs/cdl.md); "
      "auto: the model's (on for a hard disk model that declares them), "
      "on: any hard disk model" },
    { "x-host-wait-ms", "for tests: wall-clock ms a deadline waits for a "
      "stuck host I/O before failing its command, 0 to 4294967295" },
    { "x-hold-clock", "experimental: at a deadline whose host I/O is in "
      "flight, go on when it ends instead of waiting in the timer "
      "callback; under icount virtual time is held meanwhile "
      "(docs/device.md, \"Time\")" },
};

/*
 * The settings' properties, one per row of the library's table, as text
 * (its model file's form, checked in realize).  A name QEMU's block
 * layer already gives is its property: write-cache, whose auto (its
 * default) leaves the model's value, the drive's factory setting,
 * rather than the -drive's cache mode.
 */
static void ncq_disk_get_setting(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    NcqDisk *d = NCQ_DISK(obj);
    int i = GPOINTER_TO_INT(opaque);
    char text[64] = "";
    char *value = text;

    if (d->model) {
        NcqSettings st;

        ncq_model_get_settings(d->model, &st);
        ncq_setting_format(i, &st, text, sizeof(text));
    } else if (d->prop.setting[i]) {
        value = d->prop.setting[i];
    }
    visit_type_str(v, name, &value, errp);
}

static void ncq_disk_set_setting(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    NcqDisk *d = NCQ_DISK(obj);
    int i = GPOINTER_TO_INT(opaque);
    char *value;

    if (DEVICE(obj)->realized) {
        error_setg(errp, "%s: the drive runs; use ncq-disk-set (QMP) or "
                   "ncq_disk_set (HMP)", name);
        return;
    }
    if (visit_type_str(v, name, &value, errp)) {
        g_free(d->prop.setting[i]);
        d->prop.setting[i] = value;
    }
}

static void ncq_disk_add_settings(ObjectClass *klass)
{
    char range[160];
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *s = ncq_setting(i);
        g_autofree char *help = NULL;

        ncq_setting_range(i, range, sizeof(range));
        if (object_class_property_find(klass, s->name)) {
            help = g_strdup_printf("on/off/auto: %s; auto: the model's "
                                   "(its write_cache)", s->doc);
        } else {
            object_class_property_add(klass, s->name, "str",
                                      ncq_disk_get_setting,
                                      ncq_disk_set_setting, NULL,
                                      GINT_TO_POINTER(i));
            help = g_strdup_printf("%s: %s (default: the model's)", s->doc,
                                   range);
        }
        object_class_property_set_description(klass, s->name, help);
    }
}

static void ncq_disk_describe(ObjectClass *klass, const char *name,
                              char *text)
{
    object_class_property_set_description(klass, name, text);
    g_free(text);
}

static void ncq_disk_describe_properties(ObjectClass *klass)
{
    int64_t max_s = NCQ_MAX_TIMEOUT_NS / NANOSECONDS_PER_SECOND;
    int i;

    for (i = 0; i < ARRAY_SIZE(ncq_disk_property_help); i++) {
        object_class_property_set_description(klass,
                                              ncq_disk_property_help[i].name,
                                              ncq_disk_property_help[i].text);
    }
    ncq_disk_describe(klass, "model", g_strdup_printf(
        "built-in model: %s (default: %s, unless model-file is given)",
        ncq_params_builtin_names(), NCQ_DISK_DEFAULT_MODEL));
    ncq_disk_describe(klass, "queue-depth", g_strdup_printf(
        "NCQ depth: the queued commands the drive holds at once, "
        "in IDENTIFY word 75 (tags 0-31 all taken), 1 to %d commands",
        NCQ_DISK_MAX_DEPTH));
    ncq_disk_describe(klass, "recovery", g_strdup_printf(
        "how long the firmware retries a sector it cannot read or write "
        "before reporting it, unless SCT Error Recovery Control sets a "
        "shorter limit: 0 (at once) to %" PRId64 "s (default: the "
        "model's recovery_ms)", max_s));
    ncq_disk_describe(klass, "serial", g_strdup_printf(
        "serial number in IDENTIFY, at most %d characters", ID_SERIAL_LEN));
    ncq_disk_describe(klass, "ver", g_strdup_printf(
        "firmware revision in IDENTIFY, at most %d characters "
        "(default: the model's)", ID_FIRMWARE_LEN));
}

/*
 * The drive drops every command it holds, queued or a held non-queued
 * one: a reset, or the HBA forgetting the commands it issued (its port
 * stopped).  No data moves for them any more and no completion follows;
 * the host issues them again.  A queued command's host I/O, which starts
 * when it arrives, is cancelled or waited for: what reached the image
 * stays there, as a real drive's cache keeps what it was sent.  So does
 * a held WRITE's data (ncq_disk_drop_held()); a held READ has read
 * nothing.
 */
static void ncq_disk_drop_all(NcqDisk *d)
{
    ncq_disk_queue_void(d);
    ncq_disk_drop_held(d);
    ncq_disk_sct_drop(d);
    ncq_disk_queue_drop(d);
}

/*
 * The port stops (PxCMD.ST=0): the HBA forgets its commands, so the drive
 * drops them.  Not a reset: an NCQ error stays until the host reads log
 * 10h, as Linux's error handler stops and starts the port before it does.
 */
void ncq_disk_hba_stop(IDEDevice *dev)
{
    NcqDisk *d = NCQ_DISK(dev);
    bool held = d->held.active || d->sct.parked;

    ncq_disk_drop_all(d);
    if (held) {
        /* no longer busy with it: the port takes commands again */
        ncq_disk_state(d)->status = READY_STAT | SEEK_STAT;
    }
}

/*
 * IDEDeviceClass.bus_reset: the bus is reset (SRST, COMRESET, an HBA or
 * machine reset, an unplug).  The drive loses its queue and what it held,
 * and its NCQ error with them.
 */
void ncq_disk_bus_reset(IDEDevice *dev)
{
    NcqDisk *d = NCQ_DISK(dev);

    ncq_disk_smart_cancel(d);
    ncq_disk_drop_all(d);
    ncq_disk_pm_reset(d);
    d->ncq_halted = false;
    d->errlog.valid = false;
}

/*
 * DeviceClass reset: power on (QEMU starting, or a system reset).  SMART
 * counts it and SCT's settings return to their power-on values; then the
 * spindle comes up.
 */
static void ncq_disk_reset(DeviceState *dev)
{
    NcqDisk *d = NCQ_DISK(dev);

    if (!d->model) {
        return;
    }
    ncq_disk_smart_reset(d);
    ncq_disk_pm_power_on(d);
}

/*
 * IDENTIFY DEVICE data (IDEDeviceClass.identify): the model's words, then
 * each part's, then word 255 over them all.  Here, above the parts, as
 * the resets are: ncq-disk-identify.c calls no part that serves a log,
 * and the log table calls it (log 30h).  Command Duration Limits ride on
 * NCQ commands: only where AHCI sets up queues.
 */
static void ncq_disk_identify(IDEDevice *dev, uint16_t *words)
{
    NcqDisk *d = NCQ_DISK(dev);

    if (ncq_disk_identify_model(d, words)) {
        ncq_disk_cdl_identify(d, words);
    }
    ncq_disk_smart_identify(d, words);
    ncq_disk_log_identify(d, words);
    ncq_disk_pm_identify(words);
    ncq_disk_sct_identify(d, words);
    ncq_disk_zac_identify(d, words);
    ncq_disk_identify_checksum(words);
}

static void ncq_disk_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    IDEDeviceClass *k = IDE_DEVICE_CLASS(klass);

    k->realize = ncq_disk_realize;
    k->unrealize = ncq_disk_unrealize;
    k->identify = ncq_disk_identify;
    k->signature = ncq_disk_zac_signature;
    k->sata_gen = ncq_disk_sata_gen;
    k->exec_cmd = ncq_disk_exec_cmd;
    k->hba_stop = ncq_disk_hba_stop;
    k->ncq_submit = ncq_disk_ncq_submit;
    k->ncq_error = ncq_disk_ncq_error;
    k->bus_reset = ncq_disk_bus_reset;
    k->ncq_restore = ncq_disk_ncq_restore;
    dc->vmsd = &vmstate_ncq_disk;
    /* A system reset is a power cycle for SMART */
    device_class_set_legacy_reset(dc, ncq_disk_reset);
    dc->fw_name = "drive";
    dc->desc = "SATA hard disk with a modelled NCQ queue";
    device_class_set_props(dc, ncq_disk_properties);
    ncq_disk_add_settings(klass);
    ncq_disk_describe_properties(klass);
}

static const TypeInfo ncq_disk_info = {
    .name          = TYPE_NCQ_DISK,
    .parent        = TYPE_IDE_DEVICE,
    .instance_size = sizeof(NcqDisk),
    .instance_finalize = ncq_disk_instance_finalize,
    .class_init    = ncq_disk_class_init,
};

static void ncq_disk_register_types(void)
{
    type_register_static(&ncq_disk_info);
}

type_init(ncq_disk_register_types)
