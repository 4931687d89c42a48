/*
 * ncq-disk: a host-managed drive's zone state across QEMU runs, the
 * zone-state=FILE property (docs/smr.md, "Persistence across restarts")
 *
 * A real drive keeps its write pointers (and full, read-only and offline
 * zones) on its media across power cycles; the model keeps them in
 * memory.  With zone-state=FILE the device reads them at realize (a
 * missing FILE is a new drive: created with every zone empty) and writes
 * them back whenever what the drive would keep on its media is due:
 *
 *   - a FLUSH CACHE / FLUSH CACHE EXT (and every command held as a flush:
 *     STANDBY, IDLE IMMEDIATE, SLEEP, SET FEATURES 82h): the host asks for
 *     everything acknowledged to be on the media;
 *   - a RESET WRITE POINTER or FINISH ZONE (queued or not, one zone or
 *     all): they move write pointers without a write, and the host
 *     expects them done when they complete; OPEN and CLOSE change only
 *     which zones are open, which no power-on keeps;
 *   - the VM stopping (stop, savevm, the end of an outgoing migration),
 *     QEMU exiting, the drive unplugged;
 *   - the project's power cut (ncq-disk-power-cut), after the model's
 *     power loss: what the drive keeps on a cut.
 *
 * Each write replaces FILE whole (a temporary file renamed over it), and
 * is skipped when the text is what was last written.  The text is the
 * model library's (ncq_model_zone_state_format(), zone-file.c); so is the
 * power-on rule applied when it is read.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "system/runstate.h"
#include "system/system.h"
#include "ncq-disk.h"
#include "trace.h"

/* ZAC MANAGEMENT OUT actions whose effect the drive keeps at once */
static bool ncq_disk_zstate_kept_action(uint8_t action)
{
    return action == NCQ_ZONE_RESET || action == NCQ_ZONE_FINISH;
}

/*
 * Write the zone state to FILE unless it is what was last written;
 * false with @err set if that failed.
 */
static bool ncq_disk_zstate_write(NcqDisk *d, const char *why, GError **err)
{
    char *text = ncq_model_zone_state_format(d->model);
    bool ok;

    if (!text || (d->zstate.last && !strcmp(d->zstate.last, text))) {
        free(text);
        return true;
    }
    /* CONSISTENT: a temporary file renamed over FILE, never a torn one */
    ok = g_file_set_contents_full(d->prop.zone_state, text, -1,
                                  G_FILE_SET_CONTENTS_CONSISTENT, 0644, err);
    trace_ncq_disk_zone_state_write(d, why, strlen(text), ok);
    if (!ok) {
        free(text);
        return false;
    }
    free(d->zstate.last);
    d->zstate.last = text;
    d->zstate.writes++;
    d->zstate.reason = why;
    d->zstate.last_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    return true;
}

void ncq_disk_zstate_save(NcqDisk *d, const char *why)
{
    g_autoptr(GError) err = NULL;

    if (!d->prop.zone_state || !d->model) {
        return;
    }
    if (ncq_disk_zstate_write(d, why, &err)) {
        d->zstate.failing = false;
        return;
    }
    if (!d->zstate.failing) {
        /* once until a write succeeds again: a flush comes often */
        warn_report("ncq-disk: zone-state %s not written: %s",
                    d->prop.zone_state, err->message);
    }
    d->zstate.failing = true;
}

/* A zone action completed (@action: its ZAC MANAGEMENT OUT code) */
void ncq_disk_zstate_action(NcqDisk *d, uint8_t action)
{
    if (ncq_disk_zstate_kept_action(action)) {
        ncq_disk_zstate_save(d, action == NCQ_ZONE_RESET ? "reset-zone" :
                             "finish-zone");
    }
}

/*
 * Not while an incoming migration has not finished (the drive has not
 * run here: FILE holds a newer state than this QEMU), nor after an
 * outgoing one (the destination owns the drive now; it was written
 * when the VM stopped for it).
 */
static bool ncq_disk_zstate_owned(void)
{
    return !runstate_check(RUN_STATE_INMIGRATE) &&
           !runstate_check(RUN_STATE_POSTMIGRATE);
}

static void ncq_disk_zstate_exit(Notifier *n, void *data)
{
    if (ncq_disk_zstate_owned()) {
        ncq_disk_zstate_save(container_of(n, NcqDisk, zstate.exit), "exit");
    }
}

static void ncq_disk_zstate_vm_change(void *opaque, bool running,
                                      RunState state)
{
    if (!running && ncq_disk_zstate_owned()) {
        ncq_disk_zstate_save(opaque, "stop");
    }
}

static bool ncq_disk_zstate_load(NcqDisk *d, Error **errp)
{
    const char *path = d->prop.zone_state;
    g_autoptr(GError) err = NULL;
    g_autofree char *buf = NULL;
    char msg[512];
    gsize len;

    if (!g_file_get_contents(path, &buf, &len, &err)) {
        error_setg(errp, "zone-state %s cannot be read: %s; give a "
                   "readable file, or a path that does not exist yet",
                   path, err->message);
        return false;
    }
    if (ncq_model_zone_state_parse(d->model, buf, len, msg,
                                   sizeof(msg)) < 0) {
        error_setg(errp, "zone-state %s: %s", path, msg);
        return false;
    }
    return true;
}

bool ncq_disk_zstate_init(NcqDisk *d, Error **errp)
{
    const char *path = d->prop.zone_state;

    if (!path) {
        return true;
    }
    if (!ncq_model_zone_count(d->model)) {
        error_setg(errp, "zone-state=%s: model '%s' is not host-managed "
                   "(it has no zones); drop zone-state, or use a zoned "
                   "model (e.g. model=wd-hc620)", path, d->params->name);
        return false;
    }
    if (g_file_test(path, G_FILE_TEST_EXISTS)) {
        if (!ncq_disk_zstate_load(d, errp)) {
            return false;
        }
    } else {
        g_autoptr(GError) err = NULL;

        /* a new drive: every zone empty, and FILE made now */
        if (!ncq_disk_zstate_write(d, "create", &err)) {
            error_setg(errp, "zone-state %s cannot be created: %s; give a "
                       "path in a writable directory", path, err->message);
            return false;
        }
    }
    d->zstate.exit.notify = ncq_disk_zstate_exit;
    qemu_add_exit_notifier(&d->zstate.exit);
    d->zstate.has_exit = true;
    d->zstate.vm = qemu_add_vm_change_state_handler(
        ncq_disk_zstate_vm_change, d);
    return true;
}

void ncq_disk_zstate_cleanup(NcqDisk *d)
{
    if (d->zstate.has_exit) {
        qemu_remove_exit_notifier(&d->zstate.exit);
        d->zstate.has_exit = false;
    }
    if (d->zstate.vm) {
        qemu_del_vm_change_state_handler(d->zstate.vm);
        d->zstate.vm = NULL;
    }
    free(d->zstate.last);
    d->zstate.last = NULL;
}
