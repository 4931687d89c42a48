/*
 * ncq-model: Command Duration Limits (ACS-5 CDL)
 *
 * A command may name one of 7 read or 7 write descriptors (its CDL
 * index).  Each descriptor has three limits, in microseconds, 0 for
 * none: the max inactive time (queued, not yet processed), the max
 * active time (being processed) and the total time limit (from arrival
 * to completion), each with a policy saying what the drive does when
 * the limit is missed.  Here live the table, its log page (18h) form,
 * and what the scheduler asks of it: which queued command is nearing its
 * limit (served first), and the outcome of a command when it is taken
 * off the queue or completes.  The drive checks limits when it decides
 * (whenever the mechanism is free): a miss is acted on at the first
 * decision after it, at most one access late, and the completion of a
 * command being processed is moved up to the moment its active or total
 * limit runs out.  docs/cdl.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>
#include "ncq-int.h"

/* The log page: a 64-byte header, then 7 read and 7 write descriptors */
#define CDL_LOG_RD      64
#define CDL_LOG_WR      288
#define CDL_DESC_BYTES  32

static uint32_t ld32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void st32(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

const char *ncq_cdl_outcome_name(NcqCdlOutcome o)
{
    static const char *const names[NCQ_CDL_OUTCOME__MAX] = {
        "-", "met", "missed", "abort-inactive", "abort-active",
        "abort-erp", "unavailable",
    };

    return o < NCQ_CDL_OUTCOME__MAX ? names[o] : "?";
}

const char *ncq_cdl_policy_name(NcqCdlPolicy p)
{
    switch (p) {
    case NCQ_CDL_CONTINUE:
        return "continue";
    case NCQ_CDL_NEXT:
        return "next";
    case NCQ_CDL_NO_LIMIT:
        return "no-limit";
    case NCQ_CDL_UNAVAILABLE:
        return "unavailable";
    case NCQ_CDL_ABORT_RECOVERY:
        return "abort-erp";
    case NCQ_CDL_ABORT:
        return "abort";
    }
    return "?";
}

/*
 * The policies ACS-5 defines for each limit: the total time limit may go
 * on under the next descriptor or without limits.  The active time
 * limit's "abort due to error recovery" (Eh) is SCSI's (SPC-6's T2A
 * page); for ATA it is reserved, as Western Digital's CDL test suite
 * says (cdl-tools tests 0112, 0302, 0412, 0512, 0612 skip it on ATA
 * drives for that reason): an ATA drive refuses it.
 */
static bool ncq_cdl_policy_ok(uint8_t pol, char which)
{
    switch (pol) {
    case NCQ_CDL_CONTINUE:
    case NCQ_CDL_UNAVAILABLE:
    case NCQ_CDL_ABORT:
        return true;
    case NCQ_CDL_NEXT:
    case NCQ_CDL_NO_LIMIT:
        return which == 't';
    }
    return false;
}

static int ncq_cdl_desc_check(const NcqCdlDesc *d, const char *dir, int i,
                              char *err, size_t errlen)
{
    static const char *const what[] = {
        "total time", "max active time", "max inactive time"
    };
    const uint8_t pol[] = { d->total_policy, d->active_policy,
                            d->inactive_policy };
    const uint32_t lim[] = { d->total_us, d->active_us, d->inactive_us };
    const char which[] = { 't', 'a', 'i' };
    int k;

    for (k = 0; k < 3; k++) {
        if (!ncq_cdl_policy_ok(pol[k], which[k])) {
            snprintf(err, errlen, "%s descriptor %d: %s policy 0x%x is "
                     "reserved (use 0x0, 0xd or 0xf%s)", dir, i + 1,
                     what[k], pol[k], which[k] == 't' ? ", 0x1, 0x2" : "");
            return NCQ_ERR_INVAL;
        }
        if (lim[k] > NCQ_CDL_MAX_LIMIT_US) {
            snprintf(err, errlen, "%s descriptor %d: %s %u us is beyond "
                     "the longest limit, %u us", dir, i + 1, what[k],
                     lim[k], NCQ_CDL_MAX_LIMIT_US);
            return NCQ_ERR_INVAL;
        }
    }
    return 0;
}

int ncq_cdl_validate(const NcqCdl *cdl, char *err, size_t errlen)
{
    int i, ret;

    if (cdl->guideline > NCQ_CDL_GUIDELINE_MAX) {
        snprintf(err, errlen, "performance versus command duration "
                 "guideline 0x%x is reserved (0x0 to 0x%x)", cdl->guideline,
                 NCQ_CDL_GUIDELINE_MAX);
        return NCQ_ERR_INVAL;
    }
    for (i = 0; i < NCQ_CDL_DESCS; i++) {
        ret = ncq_cdl_desc_check(&cdl->rd[i], "read", i, err, errlen);
        if (!ret) {
            ret = ncq_cdl_desc_check(&cdl->wr[i], "write", i, err, errlen);
        }
        if (ret) {
            return ret;
        }
    }
    return 0;
}

static void ncq_cdl_desc_encode(const NcqCdlDesc *d, uint8_t *b)
{
    st32(b, d->total_policy | d->active_policy << 4 |
            d->inactive_policy << 8);
    st32(b + 4, d->active_us);
    st32(b + 8, d->inactive_us);
    st32(b + 16, d->total_us);
}

void ncq_cdl_log_encode(const NcqCdl *cdl, uint8_t *buf)
{
    int i;

    memset(buf, 0, NCQ_CDL_LOG_BYTES);
    buf[0] = cdl->guideline;
    for (i = 0; i < NCQ_CDL_DESCS; i++) {
        ncq_cdl_desc_encode(&cdl->rd[i], buf + CDL_LOG_RD +
                            i * CDL_DESC_BYTES);
        ncq_cdl_desc_encode(&cdl->wr[i], buf + CDL_LOG_WR +
                            i * CDL_DESC_BYTES);
    }
}

static bool ncq_cdl_zero(const uint8_t *b, int from, int to)
{
    int i;

    for (i = from; i < to; i++) {
        if (b[i]) {
            return false;
        }
    }
    return true;
}

/* One descriptor; false if a reserved field is set. */
static bool ncq_cdl_desc_decode(const uint8_t *b, NcqCdlDesc *d)
{
    uint32_t pol = ld32(b);

    d->total_policy = pol & 0xf;
    d->active_policy = (pol >> 4) & 0xf;
    d->inactive_policy = (pol >> 8) & 0xf;
    d->active_us = ld32(b + 4);
    d->inactive_us = ld32(b + 8);
    d->total_us = ld32(b + 16);
    return !(pol >> 12) && ncq_cdl_zero(b, 12, 16) &&
           ncq_cdl_zero(b, 20, CDL_DESC_BYTES);
}

int ncq_cdl_log_decode(const uint8_t *buf, NcqCdl *cdl, char *err,
                       size_t errlen)
{
    NcqCdl t = { .enabled = cdl->enabled };
    int i;

    if ((buf[0] & 0xf0) || !ncq_cdl_zero(buf, 1, CDL_LOG_RD)) {
        snprintf(err, errlen, "reserved bytes of the log header are set");
        return NCQ_ERR_INVAL;
    }
    t.guideline = buf[0] & 0x0f;
    for (i = 0; i < NCQ_CDL_DESCS; i++) {
        if (!ncq_cdl_desc_decode(buf + CDL_LOG_RD + i * CDL_DESC_BYTES,
                                 &t.rd[i]) ||
            !ncq_cdl_desc_decode(buf + CDL_LOG_WR + i * CDL_DESC_BYTES,
                                 &t.wr[i])) {
            snprintf(err, errlen, "%s descriptor %d: reserved fields set",
                     ncq_cdl_desc_decode(buf + CDL_LOG_RD +
                                         i * CDL_DESC_BYTES, &t.rd[i]) ?
                     "write" : "read", i + 1);
            return NCQ_ERR_INVAL;
        }
    }
    if (ncq_cdl_validate(&t, err, errlen)) {
        return NCQ_ERR_INVAL;
    }
    *cdl = t;
    return 0;
}

void ncq_model_cdl_get(const NcqModel *m, NcqCdl *cdl)
{
    *cdl = m->cdl;
}

int ncq_cdl_check(const NcqModel *m, const NcqCdl *cdl, char *err,
                  size_t errlen)
{
    if (!m->p.cdl && cdl->enabled) {
        snprintf(err, errlen, "model %s has no Command Duration Limits",
                 m->p.name);
        return NCQ_ERR_INVAL;
    }
    return ncq_cdl_validate(cdl, err, errlen);
}

int ncq_model_cdl_set(NcqModel *m, const NcqCdl *cdl, char *err,
                      size_t errlen)
{
    if (ncq_cdl_check(m, cdl, err, errlen)) {
        return NCQ_ERR_INVAL;
    }
    m->cdl = *cdl;
    return 0;
}

/* ---- what the scheduler asks (ncq-int.h) ---- */

/* The descriptor a queued command is under now; NULL: no limits. */
static const NcqCdlDesc *ncq_cdl_desc(const NcqModel *m, const NcqSlot *s)
{
    if (!m->cdl.enabled || !s->cdl_desc || s->cdl_desc > NCQ_CDL_DESCS) {
        return NULL;
    }
    return s->cmd.op == NCQ_OP_WRITE ? &m->cdl.wr[s->cdl_desc - 1] :
           &m->cdl.rd[s->cdl_desc - 1];
}

static int64_t ncq_us(uint32_t us)
{
    return (int64_t)us * 1000;
}

/* The earliest moment a limit of a queued command runs out, or none. */
static int64_t ncq_cdl_queued_deadline(const NcqModel *m, const NcqSlot *s)
{
    const NcqCdlDesc *d = ncq_cdl_desc(m, s);
    int64_t dl = INT64_MAX, a = s->c.arrival_ns;

    if (!d) {
        return INT64_MAX;
    }
    if (d->inactive_us) {
        dl = a + ncq_us(d->inactive_us);
    }
    if (d->total_us && a + ncq_us(d->total_us) < dl) {
        dl = a + ncq_us(d->total_us);
    }
    return dl;
}

/*
 * How soon before its deadline a command must be started: decisions come
 * when an access ends, so a command chosen at the last decision that
 * leaves room for two of the longest accesses (a full-stroke seek with a
 * write's settle, a whole revolution, the longest overhead, the
 * firmware's evaluation of a full queue) meets its deadline: the one
 * under way when the deadline nears, and its own.
 */
void ncq_cdl_init(NcqModel *m)
{
    const NcqParams *p = &m->p;
    int64_t rev = p->rpm > 1 ? (int64_t)(NCQ_REV / p->rpm) : 0;
    int64_t ovh = p->ovh_read_miss_ns > p->ovh_write_ns ?
                  p->ovh_read_miss_ns : p->ovh_write_ns;
    uint32_t far = p->cylinders ? p->cylinders - 1 : 0;

    m->cdl_margin_ns = 2 * (ncq_seek_time(p, far) + p->write_settle_ns +
                            p->seek_jitter_ns + rev + ovh +
                            p->sched_eval_ns * NCQ_MAX_TAGS);
}

int ncq_cdl_pick_urgent(const NcqModel *m, int64_t t)
{
    int64_t best_dl = INT64_MAX;
    int i, best = -1;

    if (!m->cdl.enabled) {
        return -1;
    }
    for (i = 0; i < m->q.n; i++) {
        const NcqSlot *s = &m->q.slot[m->q.order[i]];
        int64_t dl = ncq_cdl_queued_deadline(m, s);

        if (dl - m->cdl_margin_ns <= t && dl < best_dl) {
            best_dl = dl;
            best = m->q.order[i];
        }
    }
    return best;
}

/*
 * A missed limit's policy: true when the command ends here.  @met, the
 * limit's NCQ_CDL_MET_* bit, is recorded for the drive's statistics when
 * the policy is one the drive carries out (not 0h): a selector counts
 * the commands for which the drive processed the limit's policy
 * (cdladm's words for ACS-5's selectors 1h-3h), and Western Digital's
 * suite expects a limit with policy 0h to leave the counts alone
 * (cdl-tools tests 0720, 0730: "Using policy 0x0, we should not see any
 * change in the statistics counters").
 */
static bool ncq_cdl_policy(NcqSlot *s, uint8_t pol, NcqCdlOutcome abort,
                           uint8_t met)
{
    if (pol != NCQ_CDL_CONTINUE) {
        s->c.cdl_met |= met;
    }
    switch (pol) {
    case NCQ_CDL_ABORT:
        s->c.cdl_outcome = abort;
        return true;
    case NCQ_CDL_ABORT_RECOVERY:
        s->c.cdl_outcome = NCQ_CDL_ABORT_ERP;
        return true;
    case NCQ_CDL_UNAVAILABLE:
        s->c.cdl_outcome = NCQ_CDL_DATA_UNAVAILABLE;
        return true;
    case NCQ_CDL_NEXT:
        s->cdl_desc = s->cdl_desc < NCQ_CDL_DESCS ? s->cdl_desc + 1 : 0;
        break;
    case NCQ_CDL_NO_LIMIT:
        s->cdl_desc = 0;
        break;
    }
    s->c.cdl_outcome = NCQ_CDL_MISSED;
    return false;
}

/*
 * The limits a queued command has missed at @t (limits of the next
 * descriptor included); true when its policy ends the command now.
 */
static bool ncq_cdl_queued_miss(const NcqModel *m, NcqSlot *s, int64_t t)
{
    const NcqCdlDesc *d;
    int guard;

    for (guard = 0; guard <= NCQ_CDL_DESCS && (d = ncq_cdl_desc(m, s));
         guard++) {
        int64_t wait = t - s->c.arrival_ns;
        uint8_t desc = s->cdl_desc;

        if (d->inactive_us && wait > ncq_us(d->inactive_us) &&
            !s->cdl_inactive_seen) {
            s->cdl_inactive_seen = true;
            if (ncq_cdl_policy(s, d->inactive_policy,
                               NCQ_CDL_ABORT_INACTIVE,
                               NCQ_CDL_MET_INACTIVE)) {
                return true;
            }
        }
        if (d->total_us && wait > ncq_us(d->total_us) &&
            !s->cdl_total_seen) {
            s->cdl_total_seen = true;
            if (ncq_cdl_policy(s, d->total_policy, NCQ_CDL_ABORT_INACTIVE,
                               NCQ_CDL_MET_TOTAL)) {
                return true;
            }
            if (s->cdl_desc != desc) {
                /* a new descriptor: its limits count afresh */
                s->cdl_inactive_seen = s->cdl_total_seen = false;
                continue;
            }
        }
        break;
    }
    return false;
}

bool ncq_cdl_queued_ends(NcqModel *m, NcqSlot *s, int64_t t)
{
    return m->cdl.enabled && s->cmd.queued && ncq_cdl_queued_miss(m, s, t);
}

/*
 * A command being processed from sv->dispatch_ns: its outcome, and its
 * completion moved up to when a limit whose policy ends it runs out.
 * A non-queued command (READ/WRITE DMA EXT with NCQ off) has its max
 * active time only: it is processed as it arrives (never inactive), and
 * the total time limit, the command duration guideline, applies to NCQ
 * commands alone (libata's maintainer in cdl-tools commit 40b0b10: "The
 * duration guideline limit applies only to NCQ commands and is ignored
 * for non-NCQ commands"; the suite's tests 0503, 0504, 0521 and 0522
 * expect no error from them).
 */
void ncq_cdl_service(NcqModel *m, NcqSlot *s, NcqService *sv)
{
    const NcqCdlDesc *d;
    int guard;

    if (!m->cdl.enabled || !s->cmd.cdl ||
        s->c.cdl_outcome >= NCQ_CDL_ABORT_INACTIVE) {
        return;
    }
    if (s->cmd.queued && ncq_cdl_queued_miss(m, s, sv->dispatch_ns)) {
        sv->complete_ns = sv->dispatch_ns;
        return;
    }
    for (guard = 0; guard <= NCQ_CDL_DESCS && (d = ncq_cdl_desc(m, s));
         guard++) {
        int64_t end_a = d->active_us ?
                        sv->dispatch_ns + ncq_us(d->active_us) : INT64_MAX;
        int64_t end_t = d->total_us && s->cmd.queued ?
                        s->c.arrival_ns + ncq_us(d->total_us) : INT64_MAX;
        uint8_t desc = s->cdl_desc;

        if (sv->complete_ns > end_a && end_a <= end_t) {
            if (ncq_cdl_policy(s, d->active_policy, NCQ_CDL_ABORT_ACTIVE,
                               NCQ_CDL_MET_ACTIVE)) {
                sv->complete_ns = end_a;
                return;
            }
            end_a = INT64_MAX;
        }
        if (sv->complete_ns > end_t) {
            if (ncq_cdl_policy(s, d->total_policy, NCQ_CDL_ABORT_ACTIVE,
                               NCQ_CDL_MET_TOTAL)) {
                sv->complete_ns = end_t > sv->dispatch_ns ? end_t :
                                  sv->dispatch_ns;
                return;
            }
            if (s->cdl_desc != desc) {
                continue;
            }
        }
        break;
    }
    if (s->c.cdl_outcome == NCQ_CDL_NONE) {
        s->c.cdl_outcome = NCQ_CDL_MET;
    }
}

/*
 * When the mechanism is free after an access that would end at @end: at
 * once when a missed limit ended every command of it (the drive stops
 * its retries and the transfer), else at @end.
 */
int64_t ncq_cdl_mech_end(const NcqModel *m, const int *members, int n,
                         int64_t end)
{
    int64_t last = INT64_MIN;
    int i;

    if (!m->cdl.enabled) {
        return end;
    }
    for (i = 0; i < n; i++) {
        const NcqSlot *s = &m->q.slot[members[i]];

        if (s->c.cdl_outcome < NCQ_CDL_ABORT_INACTIVE) {
            return end;
        }
        last = s->c.complete_ns > last ? s->c.complete_ns : last;
    }
    return last < end ? last : end;
}

/* ---- one descriptor as text (HMP's ncq_disk_set, docs/cdl.md) ---- */

static int ncq_cdl_policy_parse(const char *s, size_t n, uint8_t *pol)
{
    static const uint8_t all[] = {
        NCQ_CDL_CONTINUE, NCQ_CDL_NEXT, NCQ_CDL_NO_LIMIT,
        NCQ_CDL_UNAVAILABLE, NCQ_CDL_ABORT_RECOVERY, NCQ_CDL_ABORT,
    };
    uint64_t v;
    size_t i;

    for (i = 0; i < sizeof(all); i++) {
        const char *name = ncq_cdl_policy_name(all[i]);

        if (strlen(name) == n && !strncmp(s, name, n)) {
            *pol = all[i];
            return 0;
        }
    }
    if (ncq_parse_uint(s, n, 15, &v) < 0) {
        return NCQ_ERR_PARSE;
    }
    *pol = (uint8_t)v;
    return 0;
}

/* "total=50ms/abort": one limit and its policy (default continue) */
static int ncq_cdl_limit_parse(const char *s, size_t n, NcqCdlDesc *d,
                               char *err, size_t errlen)
{
    const char *eq = memchr(s, '=', n), *sl;
    uint32_t *lim;
    uint8_t *pol;
    int64_t ns;
    size_t k;

    if (!eq) {
        goto bad;
    }
    k = eq - s;
    if (k == 5 && !strncmp(s, "total", 5)) {
        lim = &d->total_us;
        pol = &d->total_policy;
    } else if (k == 6 && !strncmp(s, "active", 6)) {
        lim = &d->active_us;
        pol = &d->active_policy;
    } else if (k == 8 && !strncmp(s, "inactive", 8)) {
        lim = &d->inactive_us;
        pol = &d->inactive_policy;
    } else {
        goto bad;
    }
    eq++;
    sl = memchr(eq, '/', n - (eq - s));
    *pol = NCQ_CDL_CONTINUE;
    if (sl && ncq_cdl_policy_parse(sl + 1, n - (sl + 1 - s), pol) < 0) {
        goto bad;
    }
    if (ncq_parse_duration(eq, (sl ? sl : s + n) - eq, NCQ_NS_PER_MS,
                           &ns) < 0 || ns / 1000 > NCQ_CDL_MAX_LIMIT_US) {
        goto bad;
    }
    *lim = (uint32_t)(ns / 1000);
    return 0;
bad:
    snprintf(err, errlen, "cdl: bad limit '%.*s'; give total=, active= or "
             "inactive= a duration (e.g. 50ms), optionally /POLICY: "
             "continue, next, no-limit, unavailable, abort-erp, abort or "
             "0 to 15", (int)n, s);
    return NCQ_ERR_PARSE;
}

int ncq_cdl_desc_parse(const char *text, int *index, NcqCdlDesc *d,
                       char *err, size_t errlen)
{
    const char *p = strchr(text, ':'), *end;
    uint64_t idx;

    *d = (NcqCdlDesc) { 0 };
    if (!p || ncq_parse_uint(text, p - text, NCQ_CDL_DESCS, &idx) < 0 ||
        idx < 1) {
        snprintf(err, errlen, "cdl: '%s' should start with a descriptor "
                 "index 1 to %d and ':', e.g. 1:total=50ms/abort", text,
                 NCQ_CDL_DESCS);
        return NCQ_ERR_PARSE;
    }
    *index = (int)idx;
    for (p++; *p; p = *end ? end + 1 : end) {
        end = p + strcspn(p, ",");
        if (ncq_cdl_limit_parse(p, end - p, d, err, errlen) < 0) {
            return NCQ_ERR_PARSE;
        }
    }
    return 0;
}
