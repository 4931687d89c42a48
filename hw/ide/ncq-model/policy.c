/*
 * ncq-model: the firmware's scheduling policies, one row each
 *
 * Like Linux's elevator_type, a policy is a name, its aliases and its
 * operations: which queued command goes next (pick), which dirty extent
 * of the write cache is destaged next (destage), and whether a read-ahead
 * stream may serve a command that is not the oldest (the streaming rule).
 * Everything else that lists the policies (the parameter parser, the
 * property's help, ncq-sim's options, the QAPI documentation, the Python
 * tools) takes the names from ncq_policy_ops[] or NCQ_POLICY_NAMES, and
 * tests/unit/test-policy.c and tests/repo/test_tables.py check the copies.
 *
 * A pick sees the candidates sched.c allowed (priority, plan-ahead cut,
 * window), in arrival order, never fewer than two; it returns one of them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"

/* First come, first served: the oldest candidate. */
static int ncq_pick_fcfs(const NcqModel *m, int64_t t, const int *cand,
                         int ncand, NcqReason *reason, int64_t *decide_ns)
{
    return cand[0];
}

/* Shortest seek: the nearest cylinder, the oldest of equals. */
static int ncq_pick_sstf(const NcqModel *m, int64_t t, const int *cand,
                         int ncand, NcqReason *reason, int64_t *decide_ns)
{
    uint32_t bd = UINT32_MAX, cyl = m->mech.cyl;
    int i, best = -1;

    for (i = 0; i < ncand; i++) {
        uint32_t c = m->q.slot[cand[i]].tgt.ph.cyl;
        uint32_t d = c > cyl ? c - cyl : cyl - c;

        if (d < bd) {
            bd = d;
            best = cand[i];
        }
    }
    return best;
}

/* The lowest LBA at or after the head's, else the lowest of all. */
static int ncq_pick_clook(const NcqModel *m, int64_t t, const int *cand,
                          int ncand, NcqReason *reason, int64_t *decide_ns)
{
    int i, best = -1, wrap = -1;

    for (i = 0; i < ncand; i++) {
        const NcqSlot *q = &m->q.slot[cand[i]];

        if (q->cmd.lba >= m->mech.lba_end) {
            if (best < 0 || q->cmd.lba < m->q.slot[best].cmd.lba) {
                best = cand[i];
            }
        } else if (wrap < 0 || q->cmd.lba < m->q.slot[wrap].cmd.lba) {
            wrap = cand[i];
        }
    }
    return best < 0 ? wrap : best;
}

/*
 * Shortest positioning time, less an age credit of @weight_milli per
 * microsecond waited (0: pure SPTF).
 */
static int ncq_pick_positioning(const NcqModel *m, int64_t t,
                                const int *cand, int ncand,
                                NcqReason *reason, int64_t *decide_ns,
                                int64_t w)
{
    int64_t dec = m->p.sched_eval_ns * ncand;
    int64_t be = INT64_MAX, bp = INT64_MAX;
    int i, best = -1, best_pure = -1;
    NcqMechState rd, wr;
    NcqPosTime pt;

    /* where the head is when the seek can start, per op type */
    rd = ncq_mech_state_at(m, t + dec + m->p.ovh_read_miss_ns);
    wr = rd;
    wr.angle = ncq_rot_advance(m, rd.angle,
                               m->p.ovh_write_ns - m->p.ovh_read_miss_ns);
    *decide_ns = dec;
    for (i = 0; i < ncand; i++) {
        const NcqSlot *q = &m->q.slot[cand[i]];
        int64_t pos = ncq_chained(m, q, t) ? 0 :
                      ncq_pos_plan(m, q->tgt.write ? wr : rd, &q->tgt, &pt);
        int64_t eff = pos;

        if (pos < bp) {
            bp = pos;
            best_pure = cand[i];
        }
        if (w) {
            int64_t age_us = (t - q->c.arrival_ns) / 1000;

            eff -= age_us > INT64_MAX / 4 / w ? INT64_MAX / 4 : age_us * w;
        }
        if (eff < be) {
            be = eff;
            best = cand[i];
        }
    }
    if (best != best_pure && *reason == NCQ_REASON_POLICY) {
        *reason = NCQ_REASON_AGED;
    }
    return best;
}

static int ncq_pick_sptf(const NcqModel *m, int64_t t, const int *cand,
                         int ncand, NcqReason *reason, int64_t *decide_ns)
{
    return ncq_pick_positioning(m, t, cand, ncand, reason, decide_ns, 0);
}

/* aged SPTF: credit = weight * age = age_us * weight_milli */
static int ncq_pick_aged_sptf(const NcqModel *m, int64_t t, const int *cand,
                              int ncand, NcqReason *reason,
                              int64_t *decide_ns)
{
    return ncq_pick_positioning(m, t, cand, ncand, reason, decide_ns,
                                m->s.aging_weight_milli);
}

/* The dirty extent whose positioning time from the head is shortest. */
static int ncq_destage_positioning(const NcqModel *m, int64_t t)
{
    const NcqWriteCache *wc = &m->wc;
    int64_t bp = INT64_MAX;
    int i, best = -1;
    NcqMechState from = ncq_mech_state_at(m, t);
    NcqTarget to;
    NcqPosTime pt;

    for (i = 0; i < wc->ndirty; i++) {
        int64_t pos;

        ncq_target_of(m, wc->dirty[i].lba, true, &to);
        pos = ncq_pos_plan(m, from, &to, &pt);
        if (pos < bp) {
            bp = pos;
            best = i;
        }
    }
    return best;
}

/* The lowest dirty LBA at or after the head's, else the lowest of all. */
static int ncq_destage_clook(const NcqModel *m, int64_t t)
{
    const NcqWriteCache *wc = &m->wc;
    int i, best = -1, wrap = -1;

    for (i = 0; i < wc->ndirty; i++) {
        uint64_t l = wc->dirty[i].lba;

        if (l >= m->mech.lba_end) {
            if (best < 0 || l < wc->dirty[best].lba) {
                best = i;
            }
        } else if (wrap < 0 || l < wc->dirty[wrap].lba) {
            wrap = i;
        }
    }
    return best < 0 ? wrap : best;
}

static const char *const ncq_sptf_aliases[] = { "satf", NULL };
static const char *const ncq_aged_sptf_aliases[] = { "asptf", NULL };

const NcqPolicyOps ncq_policy_ops[NCQ_POLICY__MAX] = {
    [NCQ_POLICY_FCFS] = {
        .name = "fcfs",
        .pick = ncq_pick_fcfs,
        .destage = ncq_destage_clook,
        .stream_oldest_only = true,
    },
    [NCQ_POLICY_SSTF] = {
        .name = "sstf",
        .pick = ncq_pick_sstf,
        .destage = ncq_destage_clook,
    },
    [NCQ_POLICY_CLOOK] = {
        .name = "clook",
        .pick = ncq_pick_clook,
        .destage = ncq_destage_clook,
    },
    [NCQ_POLICY_SPTF] = {
        .name = "sptf",
        .aliases = ncq_sptf_aliases,
        .pick = ncq_pick_sptf,
        .destage = ncq_destage_positioning,
    },
    [NCQ_POLICY_ASPTF] = {
        .name = "aged-sptf",
        .aliases = ncq_aged_sptf_aliases,
        .pick = ncq_pick_aged_sptf,
        .destage = ncq_destage_positioning,
    },
};

const char *ncq_policy_name(NcqPolicy p)
{
    return (unsigned)p < NCQ_POLICY__MAX ? ncq_policy_ops[p].name : "?";
}

int ncq_policy_from_name(const char *s, NcqPolicy *out)
{
    const char *const *a;
    int i;

    for (i = 0; i < NCQ_POLICY__MAX; i++) {
        if (!strcmp(s, ncq_policy_ops[i].name)) {
            *out = (NcqPolicy)i;
            return 0;
        }
    }
    for (i = 0; i < NCQ_POLICY__MAX; i++) {
        for (a = ncq_policy_ops[i].aliases; a && *a; a++) {
            if (!strcmp(s, *a)) {
                *out = (NcqPolicy)i;
                return 0;
            }
        }
    }
    return NCQ_ERR_INVAL;
}
