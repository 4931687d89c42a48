/*
 * ncq-sim: offline simulator on the ncq-model library.
 *
 * Closed-loop synthetic workloads (clients, think time, host queue depth
 * limit) and open-loop replay of a CSV trace or of an ncq-trace captured
 * by the device.  See docs/ncq-sim.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw/ide/ncq-model.h"
#include "trace.h"

#define MAX_GROUPS 16
#define MAX_SIZES 16
#define NCQ_BILLION 1000000000ULL
/* longest time an option takes, in ns */
#define MAX_TIME_NS 9000000000000000000LL
/* read limit: every request is a read, no draw */
#define READ_ALL UINT64_MAX

typedef struct Group {
    int clients;
    char lo_s[32], hi_s[32];
    uint64_t lo, hi;            /* sector range [lo, hi) */
    bool prio;
    uint32_t size;              /* 0: the global --size list */
    bool has_read;
    uint64_t read_limit;        /* as Opts.read_limit */
    int pattern;                /* -1 global, 0 random, 1 seq, 2 stream */
} Group;

typedef struct Opts {
    const char *model;
    const char *model_file;
    uint64_t seed;
    bool model_set, seed_set;
    char origin_model[48];
    bool set_policy, set_timeout, set_ptimeout, set_clust, set_wc, set_aw;
    NcqPolicy policy;
    int64_t timeout_ns, prio_timeout_ns;
    uint32_t clustering, aging_milli;
    bool write_cache;
    const char *replay;
    int ngroups;
    Group group[MAX_GROUPS];
    int64_t think_ns;
    int64_t host_delay_ns;
    uint32_t sizes[MAX_SIZES];
    int nsizes;
    uint32_t align;
    uint64_t read_limit;        /* see parse_read_ratio() */
    bool seq;
    bool shared;        /* one sequential stream per group */
    int depth;
    long count;
    int64_t duration_ns;
    const char *trace;
    int sweep[32];
    int nsweep;
    bool quiet;
} Opts;

typedef struct Result {
    long done;
    int64_t t_end;
    uint64_t sectors;
    int64_t *lat;               /* host latency */
    int64_t *dlat;              /* drive latency */
    uint32_t *delay;
    int *grp;
    long nlat, caplat;
    int ngroups;
    long gdone[MAX_GROUPS];
    uint64_t gsect[MAX_GROUPS];
    NcqStats st;
} Result;

typedef struct HostReq {
    int client;
    int64_t issue;
    NcqReq r;
} HostReq;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "ncq-sim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return n ? ncq_rng_next(s) % n : 0;
}

/* A whole number, decimal or 0x hex, for option @what. */
static long parse_long(const char *s, const char *what)
{
    uint64_t v;
    int ret = ncq_parse_uint(s, strlen(s), LONG_MAX, &v);

    if (ret == NCQ_ERR_RANGE) {
        die("value too large for %s", what);
    }
    if (ret < 0) {
        die("bad value for %s (expected a non-negative integer)", what);
    }
    return (long)v;
}

/* A duration such as "1.5" (in @bare_unit_ns), "500us" or "2s". */
static int64_t parse_time(const char *s, int64_t bare_unit_ns,
                          const char *what)
{
    int64_t ns;

    if (ncq_parse_duration(s, strlen(s), bare_unit_ns, &ns) < 0 ||
        ns > MAX_TIME_NS) {
        die("bad value for %s (expected a non-negative number)", what);
    }
    return ns;
}

/* A dimensionless decimal such as "0.5", in thousandths rounded half up. */
static int64_t parse_milli(const char *s, const char *what)
{
    uint64_t v4;

    /* floor(x * 1000 + 0.5) == floor((floor(x * 10^4) + 5) / 10) */
    if (ncq_parse_decimal(s, strlen(s), 4, &v4) < 0 ||
        v4 / 10 > MAX_TIME_NS) {
        die("bad value for %s (expected a non-negative number)", what);
    }
    return (int64_t)((v4 + 5) / 10);
}

/*
 * The share of reads, "0" to "1" with up to nine decimals, as a limit on a
 * 53-bit draw: a request is a read if the draw is below the limit, or
 * always (no draw) for READ_ALL.  The limit is ceil(r' * 2^53), r' the
 * ratio rounded to 53 significant bits: the same split of the draws as
 * the earlier floating-point comparison "draw * 2^-53 < ratio".
 */
static bool parse_read_ratio(const char *s, uint64_t *limit)
{
    const uint64_t five9 = 1953125;     /* 10^9 = 2^9 * 5^9 */
    const char *dot = strchr(s, '.');
    uint64_t r9, q, rem;
    unsigned j = 0, i;

    if (ncq_parse_decimal(s, strlen(s), 9, &r9) < 0 || r9 > NCQ_BILLION ||
        (r9 == NCQ_BILLION && dot && strpbrk(dot, "123456789"))) {
        return false;
    }
    if (r9 == NCQ_BILLION || r9 == 0) {
        *limit = r9 ? READ_ALL : 0;
        return true;
    }
    /* r in [2^-(j+1), 2^-j): r' * 2^53 is a multiple of 2^-j */
    while ((r9 << (j + 1)) < NCQ_BILLION) {
        j++;
    }
    /* q = round(r * 2^(53 + j)) = round(r9 * 2^(44 + j) / 5^9), no ties */
    q = r9 / five9;
    rem = r9 % five9;
    for (i = 0; i < 44 + j; i++) {
        q <<= 1;
        rem <<= 1;
        if (rem >= five9) {
            rem -= five9;
            q++;
        }
    }
    if (2 * rem > five9) {
        q++;
    }
    *limit = (q + (1ULL << j) - 1) >> j;
    return true;
}

static int parse_list(const char *s, uint32_t *v, int max, const char *what)
{
    char buf[256], *tok, *save = NULL;
    int n = 0;

    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            die("too many values for %s", what);
        }
        v[n++] = (uint32_t)parse_long(tok, what);
    }
    if (n == 0) {
        die("empty list for %s", what);
    }
    return n;
}

static uint64_t parse_pos(const char *s, uint64_t cap, const char *what)
{
    size_t l = strlen(s);

    if (l && s[l - 1] == '%') {
        uint64_t p7;    /* percent * 10^7: the share of @cap in 10^-9 */

        if (ncq_parse_decimal(s, l - 1, 7, &p7) < 0 || p7 > 100 * 10000000ULL) {
            die("bad percentage in %s", what);
        }
        return cap / NCQ_BILLION * p7 + cap % NCQ_BILLION * p7 / NCQ_BILLION;
    }
    return (uint64_t)parse_long(s, what);
}

static void parse_range(const char *s, Group *g, const char *what)
{
    const char *c = strchr(s, ':');

    if (!c || (size_t)(c - s) >= sizeof(g->lo_s) ||
        strlen(c + 1) >= sizeof(g->hi_s)) {
        die("%s expects LO:HI (sectors or percent, e.g. 0:20%%)", what);
    }
    snprintf(g->lo_s, sizeof(g->lo_s), "%.*s", (int)(c - s), s);
    snprintf(g->hi_s, sizeof(g->hi_s), "%s", c + 1);
}

static void usage(void)
{
    printf(
"usage: ncq-sim [options]\n"
"model:\n"
"  --model NAME          built-in model (default st3400620as)\n"
"  --model-file PATH     parameter file\n"
"  --list-models         print built-in model names\n"
"  --seed N              model and workload seed (default 1)\n"
"  --policy P            fcfs, sstf, clook, sptf, aged-sptf\n"
"  --aging-weight W      aged-sptf weight (dimensionless, e.g. 0.5)\n"
"  --timeout MS          starvation time-out in ms (0 = none)\n"
"  --prio-timeout MS     NCQ priority time-out in ms (enables priority)\n"
"  --clustering N        in-queue clustering threshold, sectors (0 = off)\n"
"  --write-cache on|off\n"
"workload (closed loop):\n"
"  --clients N           clients of the default group (default 32)\n"
"  --lba-range LO:HI     range of the default group (sectors or %%)\n"
"  --group N:LO:HI[:OPT...] add a client group (repeatable); OPT: prio,\n"
"                        size=S, read=R, random, seq, stream\n"
"  --think-ns NS         think time between a completion and the next issue\n"
"  --host-delay-ns NS    host turnaround: a completion frees a drive slot for\n"
"                        the host queue NS later (default 0)\n"
"  --size S[,S...]       request size(s) in sectors (default 8)\n"
"  --align N             LBA alignment in sectors (default 8)\n"
"  --read-ratio R        fraction of reads (default 1)\n"
"  --pattern random|seq|stream  random offsets, a sequential stream per\n"
"                        client, or one stream shared by a group's clients\n"
"                        (an asynchronous sequential reader, depth = clients)\n"
"  --depth D             host limit on commands in the drive (default 32)\n"
"  --count N             total requests (default 3200)\n"
"  --duration S          stop issuing after S seconds of simulated time\n"
"  --sweep-depth D,D...  one summary row per depth\n"
"open loop:\n"
"  --replay FILE         CSV time_ns,op,lba,sectors[,prio] or ncq-trace\n"
"output:\n"
"  --trace FILE          write the per-command ncq-trace\n"
"  --quiet               summary on one line\n");
}

static void opts_parse(Opts *o, int argc, char **argv)
{
    static const struct option lo[] = {
        { "model", required_argument, NULL, 'm' },
        { "model-file", required_argument, NULL, 'M' },
        { "list-models", no_argument, NULL, 'L' },
        { "seed", required_argument, NULL, 's' },
        { "policy", required_argument, NULL, 'p' },
        { "aging-weight", required_argument, NULL, 'a' },
        { "timeout", required_argument, NULL, 't' },
        { "prio-timeout", required_argument, NULL, 'P' },
        { "clustering", required_argument, NULL, 'c' },
        { "write-cache", required_argument, NULL, 'w' },
        { "clients", required_argument, NULL, 'n' },
        { "lba-range", required_argument, NULL, 'r' },
        { "group", required_argument, NULL, 'g' },
        { "think-ns", required_argument, NULL, 'T' },
        { "host-delay-ns", required_argument, NULL, 'H' },
        { "size", required_argument, NULL, 'z' },
        { "align", required_argument, NULL, 'A' },
        { "read-ratio", required_argument, NULL, 'R' },
        { "pattern", required_argument, NULL, 'x' },
        { "depth", required_argument, NULL, 'd' },
        { "count", required_argument, NULL, 'C' },
        { "duration", required_argument, NULL, 'D' },
        { "sweep-depth", required_argument, NULL, 'S' },
        { "replay", required_argument, NULL, 'y' },
        { "trace", required_argument, NULL, 'o' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, default_clients = 32;
    bool range_set = false;
    Group def = { .pattern = -1 };

    memset(o, 0, sizeof(*o));
    o->model = "st3400620as";
    o->seed = 1;
    o->sizes[0] = 8;
    o->nsizes = 1;
    o->align = 8;
    o->read_limit = READ_ALL;
    o->depth = 32;
    o->count = 3200;
    snprintf(def.lo_s, sizeof(def.lo_s), "0");
    snprintf(def.hi_s, sizeof(def.hi_s), "100%%");

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'm':
            o->model = optarg;
            o->model_set = true;
            break;
        case 'M':
            o->model_file = optarg;
            break;
        case 'L':
            printf("%s\n", ncq_params_builtin_names());
            exit(0);
        case 's':
            o->seed = (uint64_t)parse_long(optarg, "--seed");
            o->seed_set = true;
            break;
        case 'p':
            if (ncq_policy_from_name(optarg, &o->policy) < 0) {
                die("unknown policy '%s' (fcfs, sstf, clook, sptf, "
                    "aged-sptf)", optarg);
            }
            o->set_policy = true;
            break;
        case 'a':
            o->aging_milli = (uint32_t)parse_milli(optarg, "--aging-weight");
            o->set_aw = true;
            break;
        case 't':
            o->timeout_ns = parse_time(optarg, NCQ_NS_PER_MS, "--timeout");
            o->set_timeout = true;
            break;
        case 'P':
            o->prio_timeout_ns = parse_time(optarg, NCQ_NS_PER_MS,
                                            "--prio-timeout");
            o->set_ptimeout = true;
            break;
        case 'c':
            o->clustering = (uint32_t)parse_long(optarg, "--clustering");
            o->set_clust = true;
            break;
        case 'w':
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                die("--write-cache expects on or off, not '%s'", optarg);
            }
            o->write_cache = !strcmp(optarg, "on");
            o->set_wc = true;
            break;
        case 'n':
            default_clients = (int)parse_long(optarg, "--clients");
            if (default_clients < 1 || default_clients > 100000) {
                die("--clients must be 1..100000%s", "");
            }
            break;
        case 'r':
            parse_range(optarg, &def, "--lba-range");
            range_set = true;
            break;
        case 'g': {
            Group *g;
            char buf[160], *f[10], *save = NULL, *tok;
            int nf = 0, k;

            if (o->ngroups == MAX_GROUPS) {
                die("too many --group options%s", "");
            }
            g = &o->group[o->ngroups++];
            memset(g, 0, sizeof(*g));
            g->pattern = -1;
            snprintf(buf, sizeof(buf), "%s", optarg);
            for (tok = strtok_r(buf, ":", &save); tok && nf < 10;
                 tok = strtok_r(NULL, ":", &save)) {
                f[nf++] = tok;
            }
            if (nf < 3 || tok) {
                die("--group expects N:LO:HI[:prio][:size=S][:read=R]"
                    "[:random|seq|stream], not '%s'", optarg);
            }
            g->clients = (int)parse_long(f[0], "--group clients");
            snprintf(g->lo_s, sizeof(g->lo_s), "%s", f[1]);
            snprintf(g->hi_s, sizeof(g->hi_s), "%s", f[2]);
            for (k = 3; k < nf; k++) {
                if (!strcmp(f[k], "prio")) {
                    g->prio = true;
                } else if (!strncmp(f[k], "size=", 5)) {
                    g->size = (uint32_t)parse_long(f[k] + 5, "--group size");
                    if (g->size < 1 || g->size > NCQ_MAX_SECTORS) {
                        die("--group size must be 1..65536%s", "");
                    }
                } else if (!strncmp(f[k], "read=", 5)) {
                    if (!parse_read_ratio(f[k] + 5, &g->read_limit)) {
                        die("--group read= expects 0..1, not '%s'", f[k]);
                    }
                    g->has_read = true;
                } else if (!strcmp(f[k], "random")) {
                    g->pattern = 0;
                } else if (!strcmp(f[k], "seq")) {
                    g->pattern = 1;
                } else if (!strcmp(f[k], "stream")) {
                    g->pattern = 2;
                } else {
                    die("--group: unknown option '%s'", f[k]);
                }
            }
            if (g->clients < 1) {
                die("--group needs at least one client%s", "");
            }
            break;
        }
        case 'T':
            o->think_ns = parse_long(optarg, "--think-ns");
            break;
        case 'H':
            o->host_delay_ns = parse_long(optarg, "--host-delay-ns");
            break;
        case 'z':
            o->nsizes = parse_list(optarg, o->sizes, MAX_SIZES, "--size");
            for (c = 0; c < o->nsizes; c++) {
                if (o->sizes[c] < 1 || o->sizes[c] > NCQ_MAX_SECTORS) {
                    die("--size values must be 1..65536%s", "");
                }
            }
            break;
        case 'A':
            o->align = (uint32_t)parse_long(optarg, "--align");
            if (o->align < 1) {
                die("--align must be at least 1%s", "");
            }
            break;
        case 'R':
            if (!parse_read_ratio(optarg, &o->read_limit)) {
                die("--read-ratio expects a number in 0..1, not '%s'",
                    optarg);
            }
            break;
        case 'x':
            if (strcmp(optarg, "random") && strcmp(optarg, "seq") &&
                strcmp(optarg, "stream")) {
                die("--pattern expects random, seq or stream, not '%s'",
                    optarg);
            }
            o->seq = strcmp(optarg, "random") != 0;
            o->shared = !strcmp(optarg, "stream");
            break;
        case 'd':
            o->depth = (int)parse_long(optarg, "--depth");
            if (o->depth < 1 || o->depth > NCQ_MAX_TAGS) {
                die("--depth must be 1..32%s", "");
            }
            break;
        case 'C':
            o->count = parse_long(optarg, "--count");
            break;
        case 'D':
            o->duration_ns = parse_time(optarg, NCQ_BILLION, "--duration");
            o->count = 0;
            break;
        case 'S': {
            uint32_t v[32];
            int i;

            o->nsweep = parse_list(optarg, v, 32, "--sweep-depth");
            for (i = 0; i < o->nsweep; i++) {
                if (v[i] < 1 || v[i] > NCQ_MAX_TAGS) {
                    die("--sweep-depth values must be 1..32%s", "");
                }
                o->sweep[i] = v[i];
            }
            break;
        }
        case 'y':
            o->replay = optarg;
            break;
        case 'o':
            o->trace = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage();
            exit(0);
        default:
            die("unknown option or missing value: '%s' (see --help)",
                argv[optind - 1]);
        }
    }
    if (optind < argc) {
        die("unexpected argument '%s' (see --help)", argv[optind]);
    }
    if (o->ngroups == 0 || range_set || default_clients != 32) {
        if (o->ngroups < MAX_GROUPS) {
            def.clients = default_clients;
            if (o->ngroups == 0 || range_set) {
                o->group[o->ngroups++] = def;
            }
        }
    }
    if (o->count == 0 && o->duration_ns == 0) {
        die("--count must be positive%s", "");
    }
}

static NcqModel *make_model(const Opts *o, char *name, size_t namelen)
{
    NcqParams *p = NULL;
    NcqModel *m;
    NcqSettings s;
    char err[512];

    if (o->model_file) {
        if (ncq_params_load_file(o->model_file, &p, err, sizeof(err)) < 0) {
            die("%s", err);
        }
    } else {
        p = ncq_params_builtin(o->model);
        if (!p) {
            fprintf(stderr, "ncq-sim: unknown model '%s' (known models: "
                    "%s)\n", o->model, ncq_params_builtin_names());
            exit(2);
        }
    }
    m = ncq_model_new(p, o->seed, err, sizeof(err));
    snprintf(name, namelen, "%s", p->name);
    ncq_params_free(p);
    if (!m) {
        die("%s", err);
    }
    ncq_model_get_settings(m, &s);
    if (o->set_policy) {
        s.policy = o->policy;
    }
    if (o->set_aw) {
        s.aging_weight_milli = o->aging_milli;
    }
    if (o->set_timeout) {
        s.starvation_timeout_ns = o->timeout_ns;
    }
    if (o->set_ptimeout) {
        s.prio_timeout_ns = o->prio_timeout_ns;
        s.honour_prio = true;
    }
    if (o->set_clust) {
        s.clustering_sectors = o->clustering;
    }
    if (o->set_wc) {
        s.write_cache = o->write_cache;
    }
    if (ncq_model_set_settings(m, &s, err, sizeof(err)) < 0) {
        die("%s", err);
    }
    return m;
}

static void result_add(Result *r, int64_t lat, const NcqCompletion *c,
                       int group)
{
    if (r->nlat == r->caplat) {
        r->caplat = r->caplat ? r->caplat * 2 : 4096;
        r->lat = realloc(r->lat, r->caplat * sizeof(*r->lat));
        r->dlat = realloc(r->dlat, r->caplat * sizeof(*r->dlat));
        r->delay = realloc(r->delay, r->caplat * sizeof(*r->delay));
        r->grp = realloc(r->grp, r->caplat * sizeof(*r->grp));
        if (!r->lat || !r->dlat || !r->delay || !r->grp) {
            die("out of memory%s", "");
        }
    }
    r->grp[r->nlat] = group;
    r->gdone[group]++;
    r->gsect[group] += c->sectors;
    r->lat[r->nlat] = lat;
    r->dlat[r->nlat] = c->complete_ns - c->arrival_ns;
    r->delay[r->nlat] = c->delay_count;
    r->nlat++;
    r->done++;
    r->sectors += c->sectors;
    if (c->complete_ns > r->t_end) {
        r->t_end = c->complete_ns;
    }
}

/*
 * The host: a FIFO of issued requests (noop scheduler), dispatched to the
 * drive while fewer than @depth commands are in it.
 */
static void run(const Opts *o, int depth, const NcqReq *reqs, long nreq,
                Result *r)
{
    char name[64];
    NcqModel *m = make_model(o, name, sizeof(name));
    const NcqParams *p = ncq_model_params(m);
    int nclients = 0, i, g;
    int64_t *next_issue;
    uint64_t *seqpos;
    int *cgroup;
    int gfirst[MAX_GROUPS];
    HostReq *hq;
    long hq_head = 0, hq_n = 0, hq_cap, issued = 0, ri = 0;
    HostReq inflight[NCQ_MAX_TAGS + 1];
    bool tag_busy[NCQ_MAX_TAGS + 1] = { false };
    int64_t last_t = -1;
    int in_drive = 0, ncredit = depth;
    int64_t credit[NCQ_MAX_TAGS + 1] = { 0 };   /* when a slot is usable */
    uint64_t wrng = o->seed ^ 0x5deece66dULL;
    FILE *tf = NULL;
    NcqCompletion comp[64];
    Group groups[MAX_GROUPS];

    memset(r, 0, sizeof(*r));
    r->ngroups = reqs ? 1 : o->ngroups;
    for (g = 0; g < o->ngroups; g++) {
        groups[g] = o->group[g];
        groups[g].lo = parse_pos(groups[g].lo_s, p->capacity, "range");
        groups[g].hi = parse_pos(groups[g].hi_s, p->capacity, "range");
        if (groups[g].hi > p->capacity) {
            groups[g].hi = p->capacity;
        }
        if (groups[g].hi <= groups[g].lo) {
            die("empty LBA range in a client group%s", "");
        }
        nclients += groups[g].clients;
    }
    if (reqs) {
        nclients = 0;
    }
    next_issue = calloc(nclients + 1, sizeof(*next_issue));
    seqpos = calloc(nclients + 1, sizeof(*seqpos));
    cgroup = calloc(nclients + 1, sizeof(*cgroup));
    hq_cap = (reqs ? nreq : nclients) + 1;
    hq = calloc(hq_cap, sizeof(*hq));
    if (!next_issue || !seqpos || !cgroup || !hq) {
        die("out of memory%s", "");
    }
    for (g = 0, i = 0; g < o->ngroups && !reqs; g++) {
        int k;

        gfirst[g] = i;
        for (k = 0; k < groups[g].clients; k++, i++) {
            cgroup[i] = g;
            next_issue[i] = 0;
            seqpos[i] = groups[g].lo + rng_below(&wrng, groups[g].hi -
                                                 groups[g].lo);
            seqpos[i] -= seqpos[i] % o->align;
            if (seqpos[i] < groups[g].lo) {
                seqpos[i] += o->align;
            }
        }
    }
    if (o->trace) {
        tf = fopen(o->trace, "w");
        if (!tf) {
            die("cannot write trace file '%s'", o->trace);
        }
        ncq_trace_header(tf, name, o->seed);
    }

    for (;;) {
        int64_t t = ncq_model_next_event(m), ti = INT64_MAX;
        int64_t m_now = last_t;
        bool more;
        int n;

        if (reqs) {
            if (ri < nreq) {
                ti = reqs[ri].t;
            }
        } else {
            more = o->count ? issued < o->count : true;
            for (i = 0; i < nclients && more; i++) {
                if (next_issue[i] >= 0 && next_issue[i] < ti) {
                    ti = next_issue[i];
                }
            }
            if (o->duration_ns && ti >= o->duration_ns) {
                ti = INT64_MAX;
            }
        }
        if (ti < t) {
            t = ti;
        }
        if (hq_n > 0) {
            for (i = 0; i < ncredit; i++) {
                if (credit[i] < t && credit[i] > m_now) {
                    t = credit[i];
                }
            }
        }
        if (t == INT64_MAX) {
            if (hq_n == 0 && in_drive == 0) {
                break;
            }
            die("internal: host requests stuck%s", "");
        }
        last_t = t;
        do {
            n = ncq_model_advance(m, t, comp, 64);
            for (i = 0; i < n; i++) {
                int tag = comp[i].queued ? (int)comp[i].id : NCQ_MAX_TAGS;
                HostReq *h = &inflight[tag];

                tag_busy[tag] = false;
                in_drive--;
                credit[ncredit++] = comp[i].complete_ns + o->host_delay_ns;
                result_add(r, comp[i].complete_ns - h->issue, &comp[i],
                           h->client >= 0 ? cgroup[h->client] : 0);
                if (tf) {
                    ncq_trace_record(tf, &comp[i]);
                }
                if (h->client >= 0) {
                    next_issue[h->client] = comp[i].complete_ns + o->think_ns;
                }
            }
        } while (n == 64);
        /* issue */
        if (reqs) {
            while (ri < nreq && reqs[ri].t == t) {
                hq[(hq_head + hq_n++) % hq_cap] =
                    (HostReq){ .client = -1, .issue = t, .r = reqs[ri++] };
            }
        } else {
            for (i = 0; i < nclients; i++) {
                const Group *gr;
                HostReq h;
                uint32_t sz;
                uint64_t rl;
                bool gseq, gshared;

                if (next_issue[i] != t || (o->count && issued >= o->count) ||
                    (o->duration_ns && t >= o->duration_ns)) {
                    continue;
                }
                gr = &groups[cgroup[i]];
                sz = o->sizes[rng_below(&wrng, o->nsizes)];
                if (gr->size) {
                    sz = gr->size;
                }
                rl = gr->has_read ? gr->read_limit : o->read_limit;
                gseq = gr->pattern >= 0 ? gr->pattern > 0 : o->seq;
                gshared = gr->pattern >= 0 ? gr->pattern == 2 : o->shared;
                if (sz > gr->hi - gr->lo) {
                    sz = gr->hi - gr->lo;
                }
                h.client = i;
                h.issue = t;
                h.r.t = t;
                h.r.op = (rl == READ_ALL || (ncq_rng_next(&wrng) >> 11) < rl) ?
                         NCQ_OP_READ : NCQ_OP_WRITE;
                h.r.fua = false;
                h.r.tag = -1;
                h.r.prio = gr->prio;
                h.r.sectors = sz;
                if (gseq) {
                    /* stream: the group's clients share its first cursor */
                    int ci = gshared ? gfirst[cgroup[i]] : i;

                    if (seqpos[ci] + sz > gr->hi) {
                        seqpos[ci] = gr->lo;
                    }
                    h.r.lba = seqpos[ci];
                    seqpos[ci] += sz;
                } else {
                    uint64_t span = (gr->hi - gr->lo - sz) / o->align + 1;

                    h.r.lba = gr->lo + rng_below(&wrng, span) * o->align;
                    if (h.r.lba + sz > gr->hi) {
                        h.r.lba = gr->hi - sz;
                    }
                }
                next_issue[i] = -1;
                hq[(hq_head + hq_n++) % hq_cap] = h;
                issued++;
            }
        }
        /* dispatch */
        while (hq_n > 0) {
            HostReq *h = &hq[hq_head];
            NcqCmd cmd = { 0 };
            int tag = -1, rc, cr = -1;

            for (i = 0; i < ncredit; i++) {
                if (credit[i] <= t && (cr < 0 || credit[i] < credit[cr])) {
                    cr = i;
                }
            }
            if (cr < 0) {
                break;
            }
            cmd.op = h->r.op;
            cmd.lba = h->r.lba;
            cmd.sectors = h->r.sectors;
            cmd.fua = h->r.fua;
            cmd.prio = h->r.prio;
            cmd.queued = h->r.op == NCQ_OP_READ || h->r.op == NCQ_OP_WRITE;
            if (!cmd.queued) {
                if (in_drive > 0) {
                    break;      /* non-queued waits for an empty queue */
                }
                tag = NCQ_MAX_TAGS;
            } else {
                if (tag_busy[NCQ_MAX_TAGS]) {
                    break;
                }
                if (h->r.tag >= 0 && h->r.tag < (int)p->queue_depth &&
                    !tag_busy[h->r.tag]) {
                    tag = h->r.tag;     /* as captured */
                }
                for (i = 0; tag < 0 && i < (int)p->queue_depth; i++) {
                    if (!tag_busy[i]) {
                        tag = i;
                    }
                }
                if (tag < 0) {
                    break;
                }
                cmd.id = tag;
            }
            rc = ncq_model_submit(m, &cmd, t);
            if (rc < 0) {
                fprintf(stderr, "ncq-sim: request lba %" PRIu64 " sectors "
                        "%u rejected: %s\n", cmd.lba, cmd.sectors,
                        ncq_strerror(rc));
                exit(1);
            }
            inflight[tag] = *h;
            tag_busy[tag] = true;
            in_drive++;
            credit[cr] = credit[--ncredit];
            hq_head = (hq_head + 1) % hq_cap;
            hq_n--;
        }
    }
    ncq_model_stats(m, &r->st);
    if (tf) {
        fclose(tf);
    }
    ncq_model_free(m);
    free(next_issue);
    free(seqpos);
    free(cgroup);
    free(hq);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, long n, double q)
{
    long i = (long)(q * (n - 1) + 0.5);

    return n ? v[i] / 1e6 : 0;
}

static void summarize(const Opts *o, int depth, Result *r, bool row)
{
    double secs = r->t_end / 1e9, mean = 0, dmean = 0;
    double iops = secs > 0 ? r->done / secs : 0;
    uint32_t maxd = 0;
    long i;
    int b;

    for (i = 0; i < r->nlat; i++) {
        mean += r->lat[i] / 1e6;
        dmean += r->dlat[i] / 1e6;
        if (r->delay[i] > maxd) {
            maxd = r->delay[i];
        }
    }
    if (r->nlat) {
        mean /= r->nlat;
        dmean /= r->nlat;
    }
    if (r->ngroups > 1 && !row && !o->quiet) {
        int64_t *tmp = malloc((r->nlat + 1) * sizeof(*tmp));

        for (b = 0; b < r->ngroups; b++) {
            long k = 0;
            double gm = 0;

            for (i = 0; i < r->nlat; i++) {
                if (r->grp[i] == b) {
                    tmp[k++] = r->lat[i];
                    gm += r->lat[i] / 1e6;
                }
            }
            qsort(tmp, k, sizeof(*tmp), cmp64);
            printf("group %d      %d client(s) %s..%s%s: %ld commands, "
                   "%.1f IOPS %.2f MB/s, latency ms mean %.2f p50 %.2f "
                   "p99 %.2f max %.2f\n", b,
                   o->group[b].clients, o->group[b].lo_s, o->group[b].hi_s,
                   o->group[b].prio ? " prio" : "", k,
                   secs > 0 ? r->gdone[b] / secs : 0,
                   secs > 0 ? r->gsect[b] * 512 / 1e6 / secs : 0,
                   k ? gm / k : 0,
                   pct(tmp, k, 0.5), pct(tmp, k, 0.99), pct(tmp, k, 1.0));
        }
        free(tmp);
    }
    qsort(r->lat, r->nlat, sizeof(*r->lat), cmp64);
    qsort(r->dlat, r->nlat, sizeof(*r->dlat), cmp64);
    if (row) {
        printf("%5d %9.1f %8.2f %9.2f %9.2f %9.2f %9.2f %10.2f %8u\n",
               depth, iops, r->sectors * 512 / 1e6 / (secs > 0 ? secs : 1),
               mean, pct(r->lat, r->nlat, 0.5), pct(r->lat, r->nlat, 0.9),
               pct(r->lat, r->nlat, 0.99), pct(r->lat, r->nlat, 1.0), maxd);
        return;
    }
    if (o->quiet) {
        printf("iops %.1f mbs %.2f mean_ms %.2f p50_ms %.2f p99_ms %.2f "
               "max_ms %.2f max_delay %u\n", iops,
               r->sectors * 512 / 1e6 / (secs > 0 ? secs : 1), mean,
               pct(r->lat, r->nlat, 0.5), pct(r->lat, r->nlat, 0.99),
               pct(r->lat, r->nlat, 1.0), maxd);
        return;
    }
    printf("commands     %ld in %.3f s simulated\n", r->done, secs);
    printf("throughput   %.1f IOPS  %.2f MB/s\n", iops,
           r->sectors * 512 / 1e6 / (secs > 0 ? secs : 1));
    printf("latency ms   mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f"
           "  (host: issue to completion)\n", mean, pct(r->lat, r->nlat, 0.5),
           pct(r->lat, r->nlat, 0.9), pct(r->lat, r->nlat, 0.99),
           pct(r->lat, r->nlat, 1.0));
    printf("drive ms     mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f"
           "  (arrival in the drive to completion)\n", dmean,
           pct(r->dlat, r->nlat, 0.5), pct(r->dlat, r->nlat, 0.9),
           pct(r->dlat, r->nlat, 0.99), pct(r->dlat, r->nlat, 1.0));
    printf("delay count  max %u  histogram:", maxd);
    for (b = 0; b < NCQ_DELAY_BUCKETS; b++) {
        if (b == 0) {
            printf(" 0:%" PRIu64, r->st.delay_hist[0]);
        } else if (b == NCQ_DELAY_BUCKETS - 1) {
            printf(" >=%d:%" PRIu64, 1 << (b - 1), r->st.delay_hist[b]);
        } else {
            printf(" %d-%d:%" PRIu64, 1 << (b - 1), (1 << b) - 1,
                   r->st.delay_hist[b]);
        }
    }
    printf("\ndrive        cache hits %" PRIu64 "  time-outs forced %" PRIu64
           "  clustered %" PRIu64 "  max queue %u\n", r->st.cache_hits,
           r->st.timeouts_forced + r->st.prio_forced, r->st.clustered,
           r->st.max_queue_len);
}

static void result_free(Result *r)
{
    free(r->lat);
    free(r->dlat);
    free(r->delay);
    free(r->grp);
}

int main(int argc, char **argv)
{
    Opts o;
    Result r;
    NcqReq *reqs = NULL;
    long nreq = 0;
    int i;

    opts_parse(&o, argc, argv);
    if (o.replay) {
        char err[512];

        int64_t seed;

        nreq = ncq_trace_load(o.replay, &reqs, err, sizeof(err));
        if (nreq < 0) {
            die("%s", err);
        }
        /* an ncq-trace names its model and seed: default to them */
        ncq_trace_origin(o.replay, o.origin_model, sizeof(o.origin_model),
                         &seed);
        if (!o.model_set && !o.model_file && o.origin_model[0]) {
            o.model = o.origin_model;
        }
        if (!o.seed_set && seed >= 0) {
            o.seed = seed;
        }
    }
    if (o.nsweep) {
        if (o.trace) {
            die("--trace cannot be combined with --sweep-depth%s", "");
        }
        printf("%5s %9s %8s %9s %9s %9s %9s %10s %8s\n", "depth", "IOPS",
               "MB/s", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms",
               "maxdelay");
        for (i = 0; i < o.nsweep; i++) {
            run(&o, o.sweep[i], reqs, nreq, &r);
            summarize(&o, o.sweep[i], &r, true);
            result_free(&r);
        }
    } else {
        run(&o, o.depth, reqs, nreq, &r);
        summarize(&o, o.depth, &r, false);
        result_free(&r);
    }
    free(reqs);
    return 0;
}
