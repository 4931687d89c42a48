/*
 * ncq-model: writing the per-command trace (docs/trace-schema.md), shared
 * by the QEMU device and ncq-sim so that both write the same schema.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include "hw/ide/ncq-model.h"

void ncq_trace_header(FILE *f, const char *model, uint64_t seed)
{
    fprintf(f, "%s%d model=%s seed=%" PRIu64 "\n%s\n", NCQ_TRACE_MAGIC,
            NCQ_TRACE_VERSION, model, seed, NCQ_TRACE_COLUMNS);
}

void ncq_trace_spin(FILE *f, int64_t t_ns, int64_t ready_ns,
                    const char *why)
{
    if (ready_ns >= 0) {
        fprintf(f, "# spin-up t_ns=%" PRId64 " ready_ns=%" PRId64 "\n", t_ns,
                ready_ns);
    } else {
        fprintf(f, "# spin-down t_ns=%" PRId64 " why=%s\n", t_ns, why);
    }
}

void ncq_trace_clean(FILE *f, const NcqMcEvent *e)
{
    fprintf(f, "# clean band=%u extents=%u start_ns=%" PRId64 " end_ns=%"
            PRId64 " forced=%d done=%d\n", e->band, e->extents, e->start_ns,
            e->end_ns, e->forced, e->done);
}

void ncq_trace_record(FILE *f, const NcqCompletion *c)
{
    fprintf(f, "%u,%s,%" PRIu64 ",%u,%d,%d,%" PRId64 ",%" PRId64 ",%" PRId64
            ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%u,%u,%s,%u,%s\n",
            c->id, ncq_op_name(c->op), c->lba, c->sectors, c->fua, c->prio,
            c->arrival_ns, c->dispatch_ns, c->complete_ns, c->seek_ns,
            c->rotate_ns, c->transfer_ns, c->cache_hit ? "hit" : "miss",
            c->queue_len_at_arrival, c->delay_count,
            ncq_reason_name(c->reason), c->cdl,
            ncq_cdl_outcome_name(c->cdl_outcome));
}
