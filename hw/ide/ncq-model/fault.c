/*
 * ncq-model: fault injection rules.
 *
 * A rule names an LBA range and what happens to READ/WRITE commands that
 * touch it: an uncorrectable read (UNC), a failed write, a command that
 * never completes, extra latency, a power cut, or silently corrupt data
 * (a read returns altered bytes with good status until a write heals the
 * sector).  The decision is taken
 * when the command arrives, from the rule's counters only, so runs stay
 * deterministic; the outcome leaves the model with the completion
 * (NcqCompletion.fault), except for a hang, which never completes.
 * Syntax and what a guest sees: docs/faults.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"

#define NCQ_FAULT_SECTOR_BYTES 512

#define NCQ_FAULT_SYNTAX "syntax: KIND@LBA[+SECTORS][:once|:every=N]" \
    "[:reads|:writes][:delay=TIME], KIND one of unc, werr, hang, slow, " \
    "powercut, corrupt, rules separated by ';'"

static const char *const ncq_fault_names[NCQ_FAULT__MAX] = {
    "none", "unc", "werr", "hang", "slow", "powercut", "corrupt",
};

const char *ncq_fault_kind_name(NcqFaultKind k)
{
    return (unsigned)k < NCQ_FAULT__MAX ? ncq_fault_names[k] : "?";
}

/* Which ops a kind acts on unless the rule says otherwise. */
static uint32_t ncq_fault_default_ops(NcqFaultKind k)
{
    switch (k) {
    case NCQ_FAULT_UNC:
    case NCQ_FAULT_CORRUPT:     /* a write heals it, whatever the rule */
        return NCQ_FAULT_READS;
    case NCQ_FAULT_WRITE:
        return NCQ_FAULT_WRITES;
    default:
        return NCQ_FAULT_READS | NCQ_FAULT_WRITES;
    }
}

/* One option after ':'; NULL or what is wrong with it. */
static const char *ncq_fault_option(NcqFaultRule *r, const char *s,
                                    size_t len, bool *ops_given)
{
    uint64_t v;

#define NCQ_OPT_IS(name) (len == strlen(name) && !strncmp(s, name, len))
#define NCQ_OPT_ARG(name) (len > strlen(name) && \
                           !strncmp(s, name, strlen(name)))
    if (NCQ_OPT_IS("once")) {
        r->mode = NCQ_FAULT_ONCE;
    } else if (NCQ_OPT_IS("always")) {
        r->mode = NCQ_FAULT_ALWAYS;
    } else if (NCQ_OPT_ARG("every=")) {
        if (ncq_parse_uint(s + 6, len - 6, UINT64_MAX, &v) < 0 || v < 1 ||
            v > UINT32_MAX) {
            return "every=N needs a count of at least 1";
        }
        r->mode = NCQ_FAULT_EVERY;
        r->every = (uint32_t)v;
    } else if (NCQ_OPT_IS("reads") || NCQ_OPT_IS("writes")) {
        uint32_t op = s[0] == 'r' ? NCQ_FAULT_READS : NCQ_FAULT_WRITES;

        r->ops = *ops_given ? r->ops | op : op;
        *ops_given = true;
    } else if (NCQ_OPT_ARG("delay=")) {
        if (ncq_parse_duration(s + 6, len - 6, NCQ_NS_PER_MS,
                               &r->delay_ns) < 0 ||
            r->delay_ns <= 0) {
            return "delay= needs a time above 0 such as 50ms, 2s or 500us";
        }
    } else {
        return "unknown option";
    }
#undef NCQ_OPT_IS
#undef NCQ_OPT_ARG
    return NULL;
}

/* One rule from [s, s + len); NULL or what is wrong with it. */
static const char *ncq_fault_parse_one(const char *s, size_t len,
                                       NcqFaultRule *r)
{
    const char *at = memchr(s, '@', len), *p, *end = s + len, *colon;
    const char *why;
    bool ops_given = false;
    size_t n;
    int k;

    memset(r, 0, sizeof(*r));
    if (!at) {
        return "no '@LBA'";
    }
    for (k = 1; k < NCQ_FAULT__MAX; k++) {
        if ((size_t)(at - s) == strlen(ncq_fault_names[k]) &&
            !strncmp(s, ncq_fault_names[k], at - s)) {
            break;
        }
    }
    if (k == NCQ_FAULT__MAX) {
        return "unknown kind";
    }
    r->kind = (NcqFaultKind)k;
    r->ops = ncq_fault_default_ops(r->kind);
    r->sectors = 1;

    p = at + 1;
    colon = memchr(p, ':', end - p);
    if (!colon) {
        colon = end;
    }
    n = strcspn(p, "+:;");
    if (n > (size_t)(colon - p)) {
        n = colon - p;
    }
    if (ncq_parse_uint(p, n, UINT64_MAX, &r->lba) < 0) {
        return "LBA is not a number";
    }
    if (p + n < colon) {        /* '+SECTORS' */
        if (ncq_parse_uint(p + n + 1, colon - (p + n + 1), UINT64_MAX,
                           &r->sectors) < 0 ||
            r->sectors < 1) {
            return "+SECTORS needs a count of at least 1";
        }
    }
    while (colon < end) {
        const char *next;

        p = colon + 1;
        next = memchr(p, ':', end - p);
        colon = next ? next : end;
        why = ncq_fault_option(r, p, colon - p, &ops_given);
        if (why) {
            return why;
        }
    }
    if (r->kind == NCQ_FAULT_SLOW && r->delay_ns == 0) {
        return "slow needs :delay=TIME";
    }
    if (r->kind != NCQ_FAULT_SLOW && r->delay_ns) {
        return "only slow takes :delay=";
    }
    if (r->kind == NCQ_FAULT_CORRUPT &&
        r->sectors > NCQ_FAULT_CORRUPT_MAX) {
        return "corrupt covers at most 64 sectors; give several rules";
    }
    if (r->ops & ~ncq_fault_default_ops(r->kind)) {
        return r->kind == NCQ_FAULT_UNC ? "unc applies to reads only" :
               r->kind == NCQ_FAULT_CORRUPT ?
               "corrupt applies to reads only (a write heals it)" :
               "werr applies to writes only";
    }
    return NULL;
}

int ncq_fault_parse(const char *text, NcqFaultRule *out, int max,
                    char *err, size_t errlen)
{
    const char *s = text;
    int n = 0, index = 0;

    while (*s) {
        size_t len = strcspn(s, ";");
        const char *why;

        index++;
        while (len && isspace((unsigned char)*s)) {
            s++;
            len--;
        }
        while (len && isspace((unsigned char)s[len - 1])) {
            len--;
        }
        if (len) {
            if (n >= max) {
                snprintf(err, errlen, "more than %d fault rules", max);
                return NCQ_ERR_PARSE;
            }
            why = ncq_fault_parse_one(s, len, &out[n]);
            if (why) {
                snprintf(err, errlen, "fault rule %d '%.*s': %s; %s", index,
                         (int)len, s, why, NCQ_FAULT_SYNTAX);
                return NCQ_ERR_PARSE;
            }
            n++;
        }
        s += strcspn(s, ";");
        if (*s == ';') {
            s++;
        }
    }
    return n;
}

int ncq_fault_format(const NcqFaultRule *r, char *buf, size_t len)
{
    char mode[32] = "", ops[16] = "", delay[40] = "";

    if (r->mode == NCQ_FAULT_ONCE) {
        snprintf(mode, sizeof(mode), ":once");
    } else if (r->mode == NCQ_FAULT_EVERY) {
        snprintf(mode, sizeof(mode), ":every=%u", r->every);
    }
    if (r->ops != ncq_fault_default_ops(r->kind)) {
        snprintf(ops, sizeof(ops), ":%s",
                 r->ops == NCQ_FAULT_READS ? "reads" : "writes");
    }
    if (r->kind == NCQ_FAULT_SLOW) {
        snprintf(delay, sizeof(delay), ":delay=%" PRId64 "ns", r->delay_ns);
    }
    return snprintf(buf, len, "%s@%" PRIu64 "+%" PRIu64 "%s%s%s",
                    ncq_fault_kind_name(r->kind), r->lba, r->sectors, mode,
                    ops, delay);
}

int ncq_model_fault_add(NcqModel *m, const NcqFaultRule *r,
                        char *err, size_t errlen)
{
    if ((unsigned)r->kind >= NCQ_FAULT__MAX || r->kind == NCQ_FAULT_NONE ||
        r->sectors < 1 || !(r->ops & (NCQ_FAULT_READS | NCQ_FAULT_WRITES)) ||
        (r->mode == NCQ_FAULT_EVERY && r->every < 1) ||
        (r->kind == NCQ_FAULT_SLOW && r->delay_ns <= 0) ||
        (r->kind == NCQ_FAULT_CORRUPT &&
         r->sectors > NCQ_FAULT_CORRUPT_MAX)) {
        snprintf(err, errlen, "malformed fault rule");
        return NCQ_ERR_INVAL;
    }
    if (r->lba >= m->p.capacity || r->sectors > m->p.capacity - r->lba) {
        snprintf(err, errlen, "fault rule range %" PRIu64 "+%" PRIu64
                 " is beyond the drive's %" PRIu64 " sectors; give a range "
                 "inside the disk", r->lba,
                 r->sectors, m->p.capacity);
        return NCQ_ERR_RANGE;
    }
    if (m->faults.n >= NCQ_MAX_FAULTS) {
        snprintf(err, errlen, "already %d fault rules; clear some first",
                 NCQ_MAX_FAULTS);
        return NCQ_ERR_QUEUE_FULL;
    }
    m->faults.rule[m->faults.n] = *r;
    m->faults.rule[m->faults.n].matched = 0;
    m->faults.rule[m->faults.n].hits = 0;
    if (r->kind == NCQ_FAULT_CORRUPT && !r->seed) {
        /*
         * The altered bytes' seed: from the model's seeded generator, on
         * a copy of its state so that the model's own draws (and hence
         * its timing) do not move when a rule is added.
         */
        uint64_t st = m->rng + r->lba;

        m->faults.rule[m->faults.n].seed = ncq_rng_next(&st) | 1;
        m->faults.rule[m->faults.n].healed = 0;
    } else if (r->kind != NCQ_FAULT_CORRUPT) {
        m->faults.rule[m->faults.n].seed = 0;
        m->faults.rule[m->faults.n].healed = 0;
    }
    return m->faults.n++;
}

int ncq_model_fault_clear(NcqModel *m, int index)
{
    if (index < 0) {
        m->faults.n = 0;
        return 0;
    }
    if (index >= m->faults.n) {
        return NCQ_ERR_INVAL;
    }
    memmove(&m->faults.rule[index], &m->faults.rule[index + 1],
            (m->faults.n - index - 1) * sizeof(m->faults.rule[0]));
    m->faults.n--;
    return 0;
}

int ncq_model_fault_list(const NcqModel *m, NcqFaultRule *out, int max)
{
    int n = m->faults.n < max ? m->faults.n : max;

    memcpy(out, m->faults.rule, n * sizeof(out[0]));
    return n;
}

NcqFaultKind ncq_model_fault_of(const NcqModel *m, uint32_t id)
{
    const NcqSlot *s;

    if (id > NCQ_ID_NONQUEUED) {
        return NCQ_FAULT_NONE;
    }
    s = &m->q.slot[id];
    if (s->state != NCQ_SLOT_QUEUED && s->state != NCQ_SLOT_SERVICE) {
        return NCQ_FAULT_NONE;
    }
    return (NcqFaultKind)s->c.fault;
}

/* Bits of a corrupt rule's sectors that [lo, hi) covers. */
static uint64_t ncq_fault_bits(const NcqFaultRule *r, uint64_t lo,
                               uint64_t hi)
{
    uint64_t a = lo > r->lba ? lo - r->lba : 0;
    uint64_t b = hi < r->lba + r->sectors ? hi - r->lba : r->sectors;
    uint64_t upto = b >= 64 ? ~0ULL : (1ULL << b) - 1;

    return a >= b ? 0 : upto & ~((1ULL << a) - 1);
}

/*
 * A corrupt rule over a read that fires: its sectors that no write healed
 * read altered.  False if every sector it covers is healed.
 */
static bool ncq_fault_corrupt_fate(NcqFaultRule *r, uint64_t lo,
                                   uint64_t hi, NcqFaultFate *fate)
{
    uint64_t bits = ncq_fault_bits(r, lo, hi) & ~r->healed;
    int first;

    if (!bits) {
        return false;
    }
    first = __builtin_ctzll(bits);
    fate->lba = r->lba + first;
    fate->corrupt_mask = bits >> first;
    fate->corrupt_seed = r->seed;
    return true;
}

int ncq_fault_corrupt(const NcqCompletion *c, uint8_t *buf)
{
    int i, k, n = 0;

    if (c->fault != NCQ_FAULT_CORRUPT || c->fault_lba < c->lba) {
        return 0;
    }
    for (i = 0; i < 64 && (c->corrupt_mask >> i); i++) {
        uint64_t lba = c->fault_lba + i, st;
        uint8_t *s;
        uint32_t pos;

        if (!((c->corrupt_mask >> i) & 1) || lba >= c->lba + c->sectors) {
            continue;
        }
        /*
         * Eight bytes 64 apart, each XORed with a non-zero value: the
         * sector always differs from what was written, the same way on
         * every read (the seed is the rule's, the walk the sector's).
         */
        s = buf + (lba - c->lba) * NCQ_FAULT_SECTOR_BYTES;
        st = c->corrupt_seed ^ (lba * 0x9e3779b97f4a7c15ULL);
        pos = (uint32_t)(ncq_rng_next(&st) % 64);
        for (k = 0; k < 8; k++) {
            s[pos + 64 * k] ^= (uint8_t)(ncq_rng_next(&st) | 1);
        }
        n++;
    }
    return n;
}

/* At submit: decide the command's fate from the rules' counters. */
void ncq_fault_fate(NcqModel *m, const NcqCmd *cmd, NcqFaultFate *fate)
{
    uint64_t lo = cmd->lba, hi = lo + cmd->sectors, first;
    uint32_t op;
    int i;

    memset(fate, 0, sizeof(*fate));
    if (cmd->op == NCQ_OP_READ) {
        op = NCQ_FAULT_READS;
    } else if (cmd->op == NCQ_OP_WRITE) {
        op = NCQ_FAULT_WRITES;
    } else {
        return;
    }
    for (i = 0; i < m->faults.n; i++) {
        NcqFaultRule *r = &m->faults.rule[i];
        bool fire;

        if (hi <= r->lba || lo >= r->lba + r->sectors) {
            continue;
        }
        if (r->kind == NCQ_FAULT_CORRUPT && op == NCQ_FAULT_WRITES) {
            /* New data with its new ECC: the sectors read right again */
            r->healed |= ncq_fault_bits(r, lo, hi);
            continue;
        }
        if (!(r->ops & op)) {
            continue;
        }
        r->matched++;
        fire = r->mode == NCQ_FAULT_ALWAYS ||
               (r->mode == NCQ_FAULT_ONCE && r->hits == 0) ||
               (r->mode == NCQ_FAULT_EVERY && r->matched % r->every == 0);
        if (!fire) {
            continue;
        }
        if (r->kind == NCQ_FAULT_SLOW) {
            fate->delay_ns += r->delay_ns;
            r->hits++;
            continue;
        }
        if (fate->kind != NCQ_FAULT_NONE) {
            continue;
        }
        first = lo > r->lba ? lo : r->lba;
        if (r->kind == NCQ_FAULT_UNC && m->smart) {
            /* A reallocated sector reads fine (docs/smart.md) */
            uint64_t end = hi < r->lba + r->sectors ? hi :
                           r->lba + r->sectors;

            while (first < end && ncq_smart_remapped(m->smart, first)) {
                first++;
            }
            if (first == end) {
                continue;
            }
        }
        if (r->kind == NCQ_FAULT_CORRUPT &&
            (!cmd->queued || !ncq_fault_corrupt_fate(r, lo, hi, fate))) {
            /* Healed; or a non-queued read, which ncq-disk serves as-is */
            continue;
        }
        r->hits++;
        fate->kind = r->kind;
        if (r->kind != NCQ_FAULT_CORRUPT) {
            fate->lba = first;
        }
        fate->hang = r->kind == NCQ_FAULT_HANG;
    }
    fate->delay_ns += ncq_fault_recovery_ns(m, fate->kind);
}

/*
 * How long the firmware retries a sector it cannot read or write before
 * it reports the error: the drive's own recovery time, or SCT Error
 * Recovery Control's limit when the host set a shorter one
 * (docs/faults.md).
 */
int64_t ncq_fault_recovery_ns(const NcqModel *m, NcqFaultKind kind)
{
    int64_t erc;

    if (kind == NCQ_FAULT_UNC) {
        erc = m->erc_read_ns;
    } else if (kind == NCQ_FAULT_WRITE) {
        erc = m->erc_write_ns;
    } else {
        return 0;
    }
    /* the limit cuts the drive's own recovery short, never lengthens it */
    return erc && erc < m->p.recovery_ns ? erc : m->p.recovery_ns;
}

/*
 * The mechanism, busy until @end, serves a sector the firmware retries
 * (an unrecoverable read or write): the firmware is taken up until then,
 * whatever the host does meanwhile (docs/faults.md).
 */
void ncq_fault_note_recovery(NcqModel *m, const int *members, int n,
                             int64_t end)
{
    int i;

    for (i = 0; i < n; i++) {
        const NcqSlot *s = &m->q.slot[members[i]];

        if ((s->c.fault == NCQ_FAULT_UNC || s->c.fault == NCQ_FAULT_WRITE) &&
            s->fault_delay_ns > 0 && end > m->recover_until) {
            m->recover_until = end;
        }
    }
}

int64_t ncq_model_recovery_until(const NcqModel *m)
{
    return m->recover_until;
}

void ncq_model_set_erc(NcqModel *m, int64_t read_ns, int64_t write_ns)
{
    m->erc_read_ns = read_ns > 0 ? read_ns : 0;
    m->erc_write_ns = write_ns > 0 ? write_ns : 0;
}

/* A media access keeps the mechanism retrying as long as its slowest. */
int64_t ncq_fault_hold(const NcqModel *m, const int *members, int n)
{
    int64_t hold = 0;
    int i;

    for (i = 0; i < n; i++) {
        if (m->q.slot[members[i]].fault_delay_ns > hold) {
            hold = m->q.slot[members[i]].fault_delay_ns;
        }
    }
    return hold;
}
