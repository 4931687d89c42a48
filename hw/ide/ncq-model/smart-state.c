/*
 * ncq-model: the SMART state as bytes, for migration and snapshots.
 *
 * Magic "NCQSMRT1", then every field of NcqSmart in the order below as a
 * big-endian u64 (arrays: each element), so the stream does not depend on
 * the in-memory layout or the host.  A new field goes at the end, with a
 * new magic digit; older digits still load.  2 (issue 26): the spindle
 * time (a 1 stream's spindle turned whenever the drive was powered).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"
#include "hw/ide/ncq-smart.h"

#define SMART_MAGIC "NCQSMRT"     /* and the version digit */
#define SMART_VERSION 2

typedef struct NcqSmartIo {
    uint8_t *out;           /* save: here; NULL: load or size */
    const uint8_t *in;      /* load: from here */
    size_t off;
    size_t len;             /* load: bytes available */
    bool bad;
} NcqSmartIo;

static uint64_t ncq_smart_io(NcqSmartIo *io, uint64_t v)
{
    int i;

    if (io->out) {
        for (i = 0; i < 8; i++) {
            io->out[io->off + i] = (uint8_t)(v >> (56 - 8 * i));
        }
    } else if (io->in) {
        if (io->off + 8 > io->len) {
            io->bad = true;
            io->off += 8;
            return v;
        }
        v = 0;
        for (i = 0; i < 8; i++) {
            v = (v << 8) | io->in[io->off + i];
        }
    }
    io->off += 8;
    return v;
}

#define IO(field) ((field) = (__typeof__(field))ncq_smart_io(io, \
                                                        (uint64_t)(field)))

static void ncq_smart_io_cmd(NcqSmartIo *io, NcqSmartCmdRec *c)
{
    IO(c->cmd);
    IO(c->feature);
    IO(c->count);
    IO(c->lba);
    IO(c->device);
    IO(c->at_ms);
}

static void ncq_smart_io_logs(NcqSmartIo *io, NcqSmart *sm)
{
    int i, j;

    for (i = 0; i < NCQ_SMART_HISTORY; i++) {
        ncq_smart_io_cmd(io, &sm->recent[i]);
    }
    IO(sm->nrecent);
    for (i = 0; i < NCQ_SMART_MAX_ERRORS; i++) {
        NcqSmartError *e = &sm->err[i];

        for (j = 0; j <= NCQ_SMART_HISTORY; j++) {
            ncq_smart_io_cmd(io, &e->cmd[j]);
        }
        IO(e->error);
        IO(e->status);
        IO(e->lba);
        IO(e->count);
        IO(e->poh);
    }
    IO(sm->nerr);
    for (i = 0; i < NCQ_SMART_MAX_TESTS; i++) {
        IO(sm->test[i].type);
        IO(sm->test[i].status);
        IO(sm->test[i].poh);
        IO(sm->test[i].fail_lba);
    }
    IO(sm->ntests);
    IO(sm->run.type);
    IO(sm->run.captive);
    IO(sm->run.total_ns);
    IO(sm->run.stop_ns);
    IO(sm->run.fail_lba);
    IO(sm->run.done_ns);
    IO(sm->exec_status);
    for (i = 0; i < NCQ_SMART_SPANS; i++) {
        IO(sm->span[i].start);
        IO(sm->span[i].end);
    }
    IO(sm->sel_flags);
    IO(sm->sel_pending_min);
    IO(sm->offline_status);
}

static void ncq_smart_io_all(NcqSmartIo *io, NcqSmart *sm, int version)
{
    uint32_t i;

    IO(sm->power_on_ns);
    IO(sm->at_ns);
    IO(sm->cycle_ns);
    IO(sm->power_cycles);
    IO(sm->start_stops);
    IO(sm->read_cmds);
    IO(sm->write_cmds);
    IO(sm->sectors_read);
    IO(sm->sectors_written);
    IO(sm->reported_unc);
    IO(sm->resets);
    IO(sm->crc_errors);
    IO(sm->realloc);
    IO(sm->npending);
    if (sm->npending > NCQ_SMART_MAX_PENDING) {
        io->bad = true;
        return;
    }
    for (i = 0; i < sm->npending; i++) {
        IO(sm->pending[i]);
        IO(sm->pending_offline[i]);
    }
    IO(sm->nremap);
    if (sm->nremap > NCQ_SMART_MAX_REMAP) {
        io->bad = true;
        return;
    }
    for (i = 0; i < sm->nremap; i++) {
        IO(sm->remap[i]);
    }
    IO(sm->busy);
    IO(sm->activity_milli);
    IO(sm->act_at_ns);
    IO(sm->temp_min);
    IO(sm->temp_max);
    IO(sm->life_min);
    IO(sm->life_max);
    for (i = 0; i < NCQ_SMART_MAX_ATTRS; i++) {
        IO(sm->worst[i]);
    }
    ncq_smart_io_logs(io, sm);
    IO(sm->enabled);
    IO(sm->autosave);
    IO(sm->auto_offline);
    if (version >= 2) {
        IO(sm->spindle_ns);
        IO(sm->spindle_off);
        IO(sm->spindle_stop_ns);
    } else {
        sm->spindle_ns = sm->power_on_ns;
    }
}

size_t ncq_smart_state_size(const NcqSmart *sm)
{
    NcqSmartIo io = { 0 };

    ncq_smart_io_all(&io, (NcqSmart *)sm, SMART_VERSION);
    return 8 + io.off;
}

void ncq_smart_state_save(const NcqSmart *sm, uint8_t *buf)
{
    NcqSmartIo io = { .out = buf + 8 };

    memcpy(buf, SMART_MAGIC, 7);
    buf[7] = '0' + SMART_VERSION;
    ncq_smart_io_all(&io, (NcqSmart *)sm, SMART_VERSION);
}

int ncq_smart_state_load(NcqSmart *sm, const uint8_t *buf, size_t len)
{
    NcqSmart tmp;
    NcqSmartIo io = { .in = buf + 8, .len = len - 8 };

    int version;

    if (len < 8 || memcmp(buf, SMART_MAGIC, 7) || buf[7] < '1' ||
        buf[7] > '0' + SMART_VERSION) {
        return NCQ_ERR_PARSE;
    }
    version = buf[7] - '0';
    memset(&tmp, 0, sizeof(tmp));
    ncq_smart_io_all(&io, &tmp, version);
    if (io.bad || io.off != io.len) {
        return NCQ_ERR_PARSE;
    }
    *sm = tmp;
    return 0;
}
