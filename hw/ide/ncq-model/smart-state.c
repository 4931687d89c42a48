/*
 * ncq-model: the SMART state as bytes, for migration, snapshots and the
 * device's smart-file.
 *
 * A sectioned stream (sections.c): magic "NCQSMART", version 3, and the
 * section "smart" with every field of NcqSmart in the walk's order below
 * as a big-endian u64 (arrays: each element), so the stream does not
 * depend on the in-memory layout or the host.  New state goes in a new
 * section (docs/model-state.md), not at the end of this one.
 *
 * Versions 1 and 2, which the builds before issue 39 wrote: magic
 * "NCQSMRT" and the version digit, then the same fields; they still load
 * (tests/unit/test-saved.c loads the golden streams of each).  2 (issue
 * 26) added the spindle time (a 1 stream's spindle turned whenever the
 * drive was powered).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"
#include "sections.h"
#include "hw/ide/ncq-smart.h"

#define SMART_MAGIC "NCQSMRT"     /* versions 1, 2: and the digit */
#define SMART_LINEAR_LAST 2
#define SMART_HEAD 8

/* Every field, whatever its C type, is 8 bytes in the stream. */
#define F(name, lval) NCQ_VIS_AS_U64(v, name, lval)

static void ncq_smart_vis_cmd(NcqVis *v, NcqSmartCmdRec *c)
{
    F("cmd", c->cmd);
    F("feature", c->feature);
    F("count", c->count);
    F("lba", c->lba);
    F("device", c->device);
    F("at_ms", c->at_ms);
}

static void ncq_smart_vis_error(NcqVis *v, NcqSmartError *e)
{
    int j;

    for (j = 0; j <= NCQ_SMART_HISTORY; j++) {
        ncq_smart_vis_cmd(v, &e->cmd[j]);
    }
    F("error", e->error);
    F("status", e->status);
    F("lba", e->lba);
    F("count", e->count);
    F("poh", e->poh);
}

static void ncq_smart_vis_logs(NcqVis *v, NcqSmart *sm)
{
    int i;

    for (i = 0; i < NCQ_SMART_HISTORY; i++) {
        ncq_smart_vis_cmd(v, &sm->recent[i]);
    }
    F("nrecent", sm->nrecent);
    for (i = 0; i < NCQ_SMART_MAX_ERRORS; i++) {
        ncq_smart_vis_error(v, &sm->err[i]);
    }
    F("nerr", sm->nerr);
    for (i = 0; i < NCQ_SMART_MAX_TESTS; i++) {
        F("test.type", sm->test[i].type);
        F("test.status", sm->test[i].status);
        F("test.poh", sm->test[i].poh);
        F("test.fail_lba", sm->test[i].fail_lba);
    }
    F("ntests", sm->ntests);
    F("run.type", sm->run.type);
    F("run.captive", sm->run.captive);
    F("run.total_ns", sm->run.total_ns);
    F("run.stop_ns", sm->run.stop_ns);
    F("run.fail_lba", sm->run.fail_lba);
    F("run.done_ns", sm->run.done_ns);
    F("exec_status", sm->exec_status);
    for (i = 0; i < NCQ_SMART_SPANS; i++) {
        F("span.start", sm->span[i].start);
        F("span.end", sm->span[i].end);
    }
    F("sel_flags", sm->sel_flags);
    F("sel_pending_min", sm->sel_pending_min);
    F("offline_status", sm->offline_status);
}

/*
 * The pending and remapped sectors: a count (at most @max), then each;
 * the shape hash visits one of each.
 */
static void ncq_smart_vis_sectors(NcqVis *v, NcqSmart *sm)
{
    bool schema = v->mode == NCQ_VIS_SCHEMA;
    uint32_t i;

    F("npending", sm->npending);
    if (sm->npending > NCQ_SMART_MAX_PENDING) {
        ncq_vis_fail(v, "%u pending sectors", sm->npending);
        return;
    }
    for (i = 0; i < (schema ? 1 : sm->npending) && !v->failed; i++) {
        F("pending", sm->pending[i]);
        F("pending_offline", sm->pending_offline[i]);
    }
    F("nremap", sm->nremap);
    if (sm->nremap > NCQ_SMART_MAX_REMAP) {
        ncq_vis_fail(v, "%u remapped sectors", sm->nremap);
        return;
    }
    for (i = 0; i < (schema ? 1 : sm->nremap) && !v->failed; i++) {
        F("remap", sm->remap[i]);
    }
}

static void ncq_smart_vis_all(NcqVis *v, NcqSmart *sm)
{
    uint32_t i;

    F("power_on_ns", sm->power_on_ns);
    F("at_ns", sm->at_ns);
    F("cycle_ns", sm->cycle_ns);
    F("power_cycles", sm->power_cycles);
    F("start_stops", sm->start_stops);
    F("read_cmds", sm->read_cmds);
    F("write_cmds", sm->write_cmds);
    F("sectors_read", sm->sectors_read);
    F("sectors_written", sm->sectors_written);
    F("reported_unc", sm->reported_unc);
    F("resets", sm->resets);
    F("crc_errors", sm->crc_errors);
    F("realloc", sm->realloc);
    ncq_smart_vis_sectors(v, sm);
    if (v->failed) {
        return;
    }
    F("busy", sm->busy);
    F("activity_milli", sm->activity_milli);
    F("act_at_ns", sm->act_at_ns);
    F("temp_min", sm->temp_min);
    F("temp_max", sm->temp_max);
    F("life_min", sm->life_min);
    F("life_max", sm->life_max);
    for (i = 0; i < NCQ_SMART_MAX_ATTRS; i++) {
        F("worst", sm->worst[i]);
    }
    ncq_smart_vis_logs(v, sm);
    F("enabled", sm->enabled);
    F("autosave", sm->autosave);
    F("auto_offline", sm->auto_offline);
    if (v->version >= 2) {
        F("spindle_ns", sm->spindle_ns);
        F("spindle_off", sm->spindle_off);
        F("spindle_stop_ns", sm->spindle_stop_ns);
    } else {
        sm->spindle_ns = sm->power_on_ns;
    }
}

static void ncq_smart_sec_all(NcqVis *v, void *obj)
{
    ncq_smart_vis_all(v, obj);
}

/* New state goes in a new section here (docs/model-state.md). */
static const NcqSection ncq_smart_sections[] = {
    { "smart", 0, NULL, ncq_smart_sec_all, NULL },
};

static const NcqSectioned ncq_smart_format = {
    .magic = "NCQSMART", .version = 3, .walk_version = SMART_LINEAR_LAST,
    .what = "SMART state", .sec = ncq_smart_sections,
    .n = sizeof(ncq_smart_sections) / sizeof(ncq_smart_sections[0]),
};

size_t ncq_smart_state_size(const NcqSmart *sm)
{
    /* SIZE mode only reads */
    return ncq_sections_size(&ncq_smart_format, (NcqSmart *)sm);
}

void ncq_smart_state_save(const NcqSmart *sm, uint8_t *buf)
{
    /* SAVE mode only reads */
    ncq_sections_save(&ncq_smart_format, (NcqSmart *)sm, buf);
}

/* Versions 1 and 2: the digit, then the fields to the end. */
static int ncq_smart_state_load_linear(NcqSmart *tmp, const uint8_t *buf,
                                       size_t len)
{
    NcqVis v = { .mode = NCQ_VIS_LOAD, .in = buf, .pos = SMART_HEAD,
                 .len = len, .index = -1 };

    if (len < SMART_HEAD || memcmp(buf, SMART_MAGIC, 7) || buf[7] < '1' ||
        buf[7] > '0' + SMART_LINEAR_LAST) {
        return NCQ_ERR_PARSE;
    }
    v.version = buf[7] - '0';
    ncq_smart_vis_all(&v, tmp);
    return v.failed || v.pos != v.len ? NCQ_ERR_PARSE : 0;
}

int ncq_smart_state_load(NcqSmart *sm, const uint8_t *buf, size_t len)
{
    NcqSmart tmp;
    char err[160];
    int rc;

    memset(&tmp, 0, sizeof(tmp));
    if (ncq_sections_is(&ncq_smart_format, buf, len)) {
        rc = ncq_sections_load(&ncq_smart_format, &tmp, buf, len, err,
                               sizeof(err)) < 0 ? NCQ_ERR_PARSE : 0;
    } else {
        rc = ncq_smart_state_load_linear(&tmp, buf, len);
    }
    if (rc < 0) {
        return rc;
    }
    *sm = tmp;
    return 0;
}
