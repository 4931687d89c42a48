/*
 * ncq-sim: the shared per-command trace schema (docs/trace-schema.md).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_SIM_TRACE_H
#define NCQ_SIM_TRACE_H

#include <stdio.h>
#include "hw/ide/ncq-model.h"


/* One request to replay. */
typedef struct NcqReq {
    int64_t t;
    NcqOp op;
    uint64_t lba;
    uint32_t sectors;
    bool fua;
    bool prio;
    int64_t order;      /* tie-break at equal times */
    int tag;            /* NCQ tag of a captured trace, or -1 */
    uint8_t zone_action; /* NCQ_OP_OTHER: NcqZoneAction, 0 none */
    bool zone_all;
} NcqReq;

/*
 * Read requests from a CSV file: either plain "time_ns,op,lba,sectors[,prio]"
 * lines (op R/W/F or read/write/flush, or a zone action zopen, zclose,
 * zfinish, zreset on the zone starting at lba, -all appended for every
 * zone; its sectors 0) or an ncq-trace (replays arrival_ns).
 * Returns count or -1 with a message in err.
 */
long ncq_trace_load(const char *path, NcqReq **out, char *err, size_t errlen);
/* model=NAME and seed=N of an ncq-trace header line ("" / -1 if none) */
void ncq_trace_origin(const char *path, char *model, size_t len,
                      int64_t *seed);

#endif
