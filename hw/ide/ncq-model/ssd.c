/*
 * ncq-model: SSD back end.
 *
 * A controller serves commands in arrival order (per-command firmware
 * time), flash is channels x dies, LBAs are striped page by page over
 * channels then dies.  Reads occupy the die (page read) and the channel
 * (transfer), then the SATA bus.  Writes are acknowledged once in the
 * RAM write buffer; full pages are programmed round-robin over the dies
 * and free their buffer space when the program ends.  Large requests span
 * several channels; a full buffer delays acknowledgements.  All resources
 * are reserved at submit time in arrival order, so the completion time of
 * a command is known as soon as it arrives.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"

static int64_t ncq_max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t ncq_ch_ns(const NcqModel *m, uint64_t bytes)
{
    uint64_t r = m->p.channel_bytes_per_s;

    return (int64_t)((bytes * 1000000000ULL + r - 1) / r);
}

void ncq_ssd_init(NcqModel *m)
{
    memset(&m->ssd, 0, sizeof(m->ssd));
}

/* Drop buffer chunks programmed by @t; return bytes still held. */
static uint64_t ncq_buf_used(NcqModel *m, int64_t t)
{
    NcqSsd *d = &m->ssd;
    uint64_t used = d->open_bytes;
    uint32_t i, j = 0;

    for (i = 0; i < d->nchunks; i++) {
        if (d->chunk[i].free_ns > t) {
            d->chunk[j++] = d->chunk[i];
            used += d->chunk[i].bytes;
        }
    }
    d->nchunks = j;
    return used;
}

/* Earliest time >= t at which @bytes more fit in the write buffer. */
static int64_t ncq_buf_space(NcqModel *m, int64_t t, uint64_t bytes)
{
    NcqSsd *d = &m->ssd;
    uint64_t cap = m->p.write_buffer_bytes;
    uint64_t used = ncq_buf_used(m, t);

    if (bytes > cap) {
        bytes = cap;
    }
    while (used + bytes > cap && d->nchunks) {
        uint32_t i, first = 0;

        for (i = 1; i < d->nchunks; i++) {
            if (d->chunk[i].free_ns < d->chunk[first].free_ns) {
                first = i;
            }
        }
        t = ncq_max64(t, d->chunk[first].free_ns);
        used = ncq_buf_used(m, t);
    }
    return t;
}

/* Program one page from the buffer, data available at @t. */
static int64_t ncq_program_page(NcqModel *m, int64_t t, uint32_t bytes)
{
    NcqSsd *d = &m->ssd;
    uint32_t ndie = m->p.channels * m->p.dies_per_channel;
    uint32_t die = d->rr++ % ndie;
    uint32_t ch = die % m->p.channels;
    int64_t xs = ncq_max64(t, d->ch_free[ch]);
    int64_t ps, pe;

    d->ch_free[ch] = xs + ncq_ch_ns(m, m->p.page_bytes);
    ps = ncq_max64(d->ch_free[ch], d->die_free[die]);
    pe = ps + m->p.page_program_ns;
    d->die_free[die] = pe;
    if (d->nchunks < NCQ_SSD_CHUNKS) {
        d->chunk[d->nchunks].free_ns = pe;
        d->chunk[d->nchunks].bytes = bytes;
        d->nchunks++;
    } else {
        /*
         * Many partial pages (FUA): fold into the latest chunk, which
         * frees no earlier than this one.
         */
        uint32_t i, last = 0;

        for (i = 1; i < d->nchunks; i++) {
            if (d->chunk[i].free_ns > d->chunk[last].free_ns) {
                last = i;
            }
        }
        if (pe > d->chunk[last].free_ns) {
            d->chunk[last].free_ns = pe;
        }
        d->chunk[last].bytes += bytes;
    }
    if (pe > d->last_program_end) {
        d->last_program_end = pe;
    }
    return pe;
}

static int64_t ncq_ssd_read(NcqModel *m, const NcqSlot *s, int64_t cs,
                            NcqService *sv)
{
    NcqSsd *d = &m->ssd;
    uint32_t spp = m->p.page_bytes / 512;
    uint64_t lba = s->cmd.lba, end = lba + s->cmd.sectors;
    int64_t first = INT64_MAX, last = 0, bus0, bus1;

    while (lba < end) {
        uint64_t page = lba / spp;
        uint64_t pend = (page + 1) * spp;
        uint32_t n = (uint32_t)((pend < end ? pend : end) - lba);
        uint32_t ch = page % m->p.channels;
        uint32_t die = ch + m->p.channels *
                       ((page / m->p.channels) % m->p.dies_per_channel);
        int64_t rs = ncq_max64(cs, d->die_free[die]);
        int64_t re = rs + m->p.page_read_ns;
        int64_t xs = ncq_max64(re, d->ch_free[ch]);
        int64_t xe = xs + ncq_ch_ns(m, (uint64_t)n * 512);

        d->die_free[die] = re;
        d->ch_free[ch] = xe;
        if (xe < first) {
            first = xe;
        }
        if (xe > last) {
            last = xe;
        }
        lba += n;
    }
    bus0 = ncq_bus_start(m, first);
    bus1 = ncq_max64(bus0 + ncq_bus_ns(m, s->cmd.sectors),
                     last + ncq_bus_ns(m, spp < s->cmd.sectors ?
                                       spp : s->cmd.sectors));
    ncq_bus_busy(m, bus1);
    sv->transfer_ns = bus1 - cs;
    return bus1;
}

static int64_t ncq_ssd_write(NcqModel *m, const NcqSlot *s, int64_t cs,
                             NcqService *sv)
{
    NcqSsd *d = &m->ssd;
    uint64_t bytes = (uint64_t)s->cmd.sectors * 512;
    int64_t bs = ncq_bus_start(m, cs);
    int64_t be = bs + ncq_bus_ns(m, s->cmd.sectors);
    int64_t ack, last = be;

    ncq_bus_busy(m, be);
    ack = ncq_buf_space(m, be, bytes);
    d->open_bytes += bytes;
    while (d->open_bytes >= m->p.page_bytes) {
        d->open_bytes -= m->p.page_bytes;
        last = ncq_program_page(m, ack, m->p.page_bytes);
    }
    if (s->cmd.fua || !m->s.write_cache) {
        if (d->open_bytes) {
            last = ncq_program_page(m, ack, d->open_bytes);
            d->open_bytes = 0;
        }
        ack = ncq_max64(ack, last);
    }
    sv->transfer_ns = be - bs;
    return ack;
}

void ncq_ssd_submit(NcqModel *m, NcqSlot *s, int64_t now)
{
    NcqSsd *d = &m->ssd;
    int64_t cs = ncq_max64(now, d->ctrl_free), done;
    NcqService sv = {
        .dispatch_ns = cs, .reason = NCQ_REASON_POLICY, .media_start_ns = cs,
    };

    switch (s->cmd.op) {
    case NCQ_OP_READ:
        d->ctrl_free = cs + m->p.ssd_read_cmd_ns;
        sv.overhead_ns = m->p.ssd_read_cmd_ns;
        done = ncq_ssd_read(m, s, cs + m->p.ssd_read_cmd_ns, &sv);
        m->st.sectors_read += s->cmd.sectors;
        break;
    case NCQ_OP_WRITE:
        d->ctrl_free = cs + m->p.ssd_write_cmd_ns;
        sv.overhead_ns = m->p.ssd_write_cmd_ns;
        done = ncq_ssd_write(m, s, cs + m->p.ssd_write_cmd_ns, &sv);
        m->st.sectors_written += s->cmd.sectors;
        break;
    case NCQ_OP_FLUSH:
        d->ctrl_free = cs + m->p.ovh_other_ns;
        sv.overhead_ns = m->p.ovh_other_ns;
        if (d->open_bytes) {
            ncq_program_page(m, d->ctrl_free, d->open_bytes);
            d->open_bytes = 0;
        }
        done = ncq_max64(d->ctrl_free, d->last_program_end);
        break;
    default:
        d->ctrl_free = cs + m->p.ovh_other_ns;
        sv.overhead_ns = m->p.ovh_other_ns;
        done = d->ctrl_free;
        break;
    }
    sv.media_end_ns = done;
    sv.complete_ns = done;
    ncq_slot_complete(m, s, &sv);
}
