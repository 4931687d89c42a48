/*
 * ncq-sim: the command line.
 *
 * One table names each option and the handler that reads its value.
 * Numbers and durations go through the model library's parser
 * (ncq_parse_uint, ncq_parse_decimal, ncq_parse_duration): decimal or 0x
 * hex whole numbers, decimals such as "0.5", durations such as "1.5"
 * (in the option's unit), "500us" or "2s".  No floating point.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-sim.h"

#define NCQ_BILLION 1000000000ULL
/* longest time an option takes, in ns */
#define MAX_TIME_NS 9000000000000000000LL

/* A whole number up to @max, decimal or 0x hex, for option @what. */
static uint64_t parse_uint_max(const char *s, uint64_t max, const char *what)
{
    uint64_t v;
    int ret = ncq_parse_uint(s, strlen(s), max, &v);

    if (ret == NCQ_ERR_RANGE) {
        char limit[96];

        snprintf(limit, sizeof(limit), "%s (at most %" PRIu64 ")", what, max);
        die("value too large for %s", limit);
    }
    if (ret < 0) {
        die("bad value for %s (expected a non-negative integer)", what);
    }
    return v;
}

static long parse_long(const char *s, const char *what)
{
    return (long)parse_uint_max(s, LONG_MAX, what);
}

/* For a field of 32 bits: a larger value is refused, not wrapped. */
static uint32_t parse_u32(const char *s, const char *what)
{
    return (uint32_t)parse_uint_max(s, UINT32_MAX, what);
}

static int parse_int(const char *s, const char *what)
{
    return (int)parse_uint_max(s, INT_MAX, what);
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
        v[n++] = parse_u32(tok, what);
    }
    if (n == 0) {
        die("empty list for %s", what);
    }
    return n;
}

/* A sector: a number, or a percentage of @cap such as "20%" or "0.5%". */
uint64_t opts_sector(const char *s, uint64_t cap, const char *what)
{
    size_t l = strlen(s);

    if (l && s[l - 1] == '%') {
        uint64_t p7;    /* percent * 10^7: the share of @cap in 10^-9 */

        if (ncq_parse_decimal(s, l - 1, 7, &p7) < 0 ||
            p7 > 100 * 10000000ULL) {
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

/*
 * The run-time settings, one option --NAME each (and --ALIAS for an old
 * spelling), from the library's table: the model's value unless given.
 */
static void usage_settings(void)
{
    char range[160], opt[64];
    int i;

    printf("settings (default: the model's):\n");
    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);

        ncq_setting_range(i, range, sizeof(range));
        snprintf(opt, sizeof(opt), "--%s V", d->name);
        printf("  %-21s %s\n  %-21s %s\n", opt, d->doc, "", range);
    }
}

static void opt_setting(Opts *o, int i, const char *as, const char *arg)
{
    char err[256], name[64];

    snprintf(name, sizeof(name), "--%s", as);
    if (ncq_setting_parse(i, name, arg, &o->settings, err,
                          sizeof(err)) < 0) {
        die("%s", err);
    }
    o->set[i] = true;
}

static void usage(void)
{
    printf(
"usage: ncq-sim [options]\n"
"model:\n"
"  --model NAME          built-in model (default st3400620as)\n"
"  --model-file PATH     parameter file\n"
"  --list-models         print built-in model names\n"
"  --list-params         the parameter table as docs/model.md's markdown\n"
"                        (with --json: as JSON)\n"
"  --list-settings       the run-time settings as the docs' markdown table\n"
"  --dump-model          the model's parameters as parsed, JSON in the\n"
"                        file's units, with its zones laid out\n"
"  --seed N              model and workload seed (default 1)\n");
    usage_settings();
    printf(
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
"  --interval S          also print the throughput of each S seconds (a\n"
"                        drive-managed SMR drive's collapse, docs/smr.md)\n"
"  --sweep-depth D,D...  one summary row per depth\n"
"  --end-flush           after the last completion, one FLUSH CACHE; the run\n"
"                        ends when it completes (fio's end_fsync)\n"
"  --zoned               host-managed models: client i writes the i-th\n"
"                        sequential zone at its write pointer and resets it\n"
"                        when full (docs/smr.md)\n"
"  --zone-state FILE     host-managed models: start from the zones a\n"
"                        device's zone-state file holds (read only;\n"
"                        --zoned writers go on at their pointers)\n"
"open loop:\n"
"  --replay FILE         CSV time_ns,op,lba,sectors[,prio] or ncq-trace;\n"
"                        op zopen, zclose, zfinish, zreset[-all]: a zone\n"
"                        action on the zone starting at lba\n"
"validation (docs/validation/README.md):\n"
"  --validate MODEL|all  the model's validation sheet (all: every model's)\n"
"  --figures PATH        figures file (default\n"
"                        docs/validation/figures/MODEL.fig; all: the folder)\n"
"  --json                the sheet's rows as JSON\n"
"  --out PATH            write the sheet there (all: the folder, default\n"
"                        docs/validation)\n"
"output:\n"
"  --trace FILE          write the per-command ncq-trace\n"
"  --quiet               summary on one line\n");
}

static void opt_model(Opts *o, const char *arg)
{
    o->model = arg;
    o->model_set = true;
}

static void opt_model_file(Opts *o, const char *arg)
{
    o->model_file = arg;
}

static void opt_list_models(Opts *o, const char *arg)
{
    printf("%s\n", ncq_params_builtin_names());
    exit(0);
}

static void opt_list_params(Opts *o, const char *arg)
{
    o->list_params = true;
}

static void opt_list_settings(Opts *o, const char *arg)
{
    ncq_settings_list(stdout);
    exit(0);
}

static void opt_dump_model(Opts *o, const char *arg)
{
    o->dump_model = true;
}

static void opt_seed(Opts *o, const char *arg)
{
    o->seed = (uint64_t)parse_long(arg, "--seed");
    o->seed_set = true;
}

static void opt_clients(Opts *o, const char *arg)
{
    o->def_clients = parse_int(arg, "--clients");
    if (o->def_clients < 1 || o->def_clients > 100000) {
        die("--clients must be 1..100000%s", "");
    }
}

static void opt_lba_range(Opts *o, const char *arg)
{
    parse_range(arg, &o->def, "--lba-range");
    o->def_range_set = true;
}

/* One ":OPT" of --group. */
static void group_option(Group *g, const char *f)
{
    if (!strcmp(f, "prio")) {
        g->prio = true;
    } else if (!strncmp(f, "size=", 5)) {
        g->size = parse_u32(f + 5, "--group size");
        if (g->size < 1 || g->size > NCQ_MAX_SECTORS) {
            die("--group size must be 1..65536%s", "");
        }
    } else if (!strncmp(f, "read=", 5)) {
        if (!parse_read_ratio(f + 5, &g->read_limit)) {
            die("--group read= expects 0..1, not '%s'", f);
        }
        g->has_read = true;
    } else if (!strcmp(f, "random")) {
        g->pattern = 0;
    } else if (!strcmp(f, "seq")) {
        g->pattern = 1;
    } else if (!strcmp(f, "stream")) {
        g->pattern = 2;
    } else {
        die("--group: unknown option '%s'", f);
    }
}

static void opt_group(Opts *o, const char *arg)
{
    Group *g;
    char buf[160], *f[10], *save = NULL, *tok;
    int nf = 0, k;

    if (o->ngroups == MAX_GROUPS) {
        die("too many --group options%s", "");
    }
    g = &o->group[o->ngroups++];
    memset(g, 0, sizeof(*g));
    g->pattern = -1;
    snprintf(buf, sizeof(buf), "%s", arg);
    for (tok = strtok_r(buf, ":", &save); tok && nf < 10;
         tok = strtok_r(NULL, ":", &save)) {
        f[nf++] = tok;
    }
    if (nf < 3 || tok) {
        die("--group expects N:LO:HI[:prio][:size=S][:read=R]"
            "[:random|seq|stream], not '%s'", arg);
    }
    g->clients = parse_int(f[0], "--group clients");
    snprintf(g->lo_s, sizeof(g->lo_s), "%s", f[1]);
    snprintf(g->hi_s, sizeof(g->hi_s), "%s", f[2]);
    for (k = 3; k < nf; k++) {
        group_option(g, f[k]);
    }
    if (g->clients < 1) {
        die("--group needs at least one client%s", "");
    }
}

static void opt_think_ns(Opts *o, const char *arg)
{
    o->think_ns = parse_long(arg, "--think-ns");
}

static void opt_host_delay_ns(Opts *o, const char *arg)
{
    o->host_delay_ns = parse_long(arg, "--host-delay-ns");
}

static void opt_size(Opts *o, const char *arg)
{
    int i;

    o->nsizes = parse_list(arg, o->sizes, MAX_SIZES, "--size");
    for (i = 0; i < o->nsizes; i++) {
        if (o->sizes[i] < 1 || o->sizes[i] > NCQ_MAX_SECTORS) {
            die("--size values must be 1..65536%s", "");
        }
    }
}

static void opt_align(Opts *o, const char *arg)
{
    o->align = parse_u32(arg, "--align");
    if (o->align < 1) {
        die("--align must be at least 1%s", "");
    }
}

static void opt_read_ratio(Opts *o, const char *arg)
{
    if (!parse_read_ratio(arg, &o->read_limit)) {
        die("--read-ratio expects a number in 0..1, not '%s'", arg);
    }
}

static void opt_pattern(Opts *o, const char *arg)
{
    if (strcmp(arg, "random") && strcmp(arg, "seq") &&
        strcmp(arg, "stream")) {
        die("--pattern expects random, seq or stream, not '%s'", arg);
    }
    o->seq = strcmp(arg, "random") != 0;
    o->shared = !strcmp(arg, "stream");
}

static void opt_depth(Opts *o, const char *arg)
{
    o->depth = parse_int(arg, "--depth");
    if (o->depth < 1 || o->depth > NCQ_MAX_TAGS) {
        die("--depth must be 1..32%s", "");
    }
}

static void opt_count(Opts *o, const char *arg)
{
    o->count = parse_long(arg, "--count");
}

static void opt_interval(Opts *o, const char *arg)
{
    o->interval_ns = parse_time(arg, NCQ_BILLION, "--interval");
    if (o->interval_ns <= 0) {
        die("--interval expects a positive duration, not '%s'", arg);
    }
}

static void opt_duration(Opts *o, const char *arg)
{
    o->duration_ns = parse_time(arg, NCQ_BILLION, "--duration");
    o->count = 0;
}

static void opt_sweep_depth(Opts *o, const char *arg)
{
    uint32_t v[MAX_SWEEP];
    int i;

    o->nsweep = parse_list(arg, v, MAX_SWEEP, "--sweep-depth");
    for (i = 0; i < o->nsweep; i++) {
        if (v[i] < 1 || v[i] > NCQ_MAX_TAGS) {
            die("--sweep-depth values must be 1..32%s", "");
        }
        o->sweep[i] = v[i];
    }
}

static void opt_replay(Opts *o, const char *arg)
{
    o->replay = arg;
}

static void opt_trace(Opts *o, const char *arg)
{
    o->trace = arg;
}

static void opt_quiet(Opts *o, const char *arg)
{
    o->quiet = true;
}

static void opt_end_flush(Opts *o, const char *arg)
{
    o->end_flush = true;
}

static void opt_zoned(Opts *o, const char *arg)
{
    o->zoned = true;
}

static void opt_zone_state(Opts *o, const char *arg)
{
    o->zone_state = arg;
}

static void opt_validate(Opts *o, const char *arg)
{
    o->validate = arg;
}

static void opt_figures(Opts *o, const char *arg)
{
    o->figures = arg;
}

static void opt_json(Opts *o, const char *arg)
{
    o->json = true;
}

static void opt_out(Opts *o, const char *arg)
{
    o->out = arg;
}

static void opt_help(Opts *o, const char *arg)
{
    usage();
    exit(0);
}

/* In the order getopt_long() resolves abbreviations against. */
static const struct {
    const char *name;
    bool has_arg;
    void (*fn)(Opts *o, const char *arg);
} opt_table[] = {
    { "model", true, opt_model },
    { "model-file", true, opt_model_file },
    { "list-models", false, opt_list_models },
    { "list-params", false, opt_list_params },
    { "list-settings", false, opt_list_settings },
    { "dump-model", false, opt_dump_model },
    { "seed", true, opt_seed },
    { "clients", true, opt_clients },
    { "lba-range", true, opt_lba_range },
    { "group", true, opt_group },
    { "think-ns", true, opt_think_ns },
    { "host-delay-ns", true, opt_host_delay_ns },
    { "size", true, opt_size },
    { "align", true, opt_align },
    { "read-ratio", true, opt_read_ratio },
    { "pattern", true, opt_pattern },
    { "depth", true, opt_depth },
    { "count", true, opt_count },
    { "duration", true, opt_duration },
    { "interval", true, opt_interval },
    { "sweep-depth", true, opt_sweep_depth },
    { "end-flush", false, opt_end_flush },
    { "zoned", false, opt_zoned },
    { "zone-state", true, opt_zone_state },
    { "replay", true, opt_replay },
    { "trace", true, opt_trace },
    { "quiet", false, opt_quiet },
    { "validate", true, opt_validate },
    { "figures", true, opt_figures },
    { "json", false, opt_json },
    { "out", true, opt_out },
    { "help", false, opt_help },
};

#define NOPTS (sizeof(opt_table) / sizeof(opt_table[0]))
/* getopt_long()'s value for opt_table[i]: clear of '?' and 'h' */
#define OPT_VAL(i) (0x100 + (int)(i))

/* a setting's options: getopt_long()'s value, clear of opt_table's */
#define OPT_SETTING(i) (0x200 + (int)(i))
#define MAX_SETTING_OPTS (4 * NCQ_SETTING__MAX)

/* --NAME and --ALIAS of every setting into @lo; their count */
static size_t setting_options(struct option *lo, char names[][48])
{
    size_t n = 0, len;
    const char *a;
    int i;

    for (i = 0; i < NCQ_SETTING__MAX; i++) {
        const NcqSettingDesc *d = ncq_setting(i);

        snprintf(names[n], sizeof(names[n]), "%s", d->name);
        lo[n] = (struct option){ .name = names[n],
                                 .has_arg = required_argument,
                                 .val = OPT_SETTING(i) };
        n++;
        for (a = d->aliases; *a && n < MAX_SETTING_OPTS; a += len) {
            a += strspn(a, " ");
            len = strcspn(a, " ");
            snprintf(names[n], sizeof(names[n]), "%.*s", (int)len, a);
            lo[n] = lo[n - 1];
            lo[n].name = names[n];
            n++;
        }
    }
    return n;
}

static void opts_defaults(Opts *o)
{
    memset(o, 0, sizeof(*o));
    o->model = "st3400620as";
    o->seed = 1;
    o->sizes[0] = 8;
    o->nsizes = 1;
    o->align = 8;
    o->read_limit = READ_ALL;
    o->depth = 32;
    o->count = 3200;
    o->def.pattern = -1;
    o->def_clients = 32;
    snprintf(o->def.lo_s, sizeof(o->def.lo_s), "0");
    snprintf(o->def.hi_s, sizeof(o->def.hi_s), "100%%");
}

/* The default group runs unless --group alone describes the clients. */
static void opts_finish(Opts *o)
{
    if (o->ngroups == 0 || o->def_range_set || o->def_clients != 32) {
        if (o->ngroups < MAX_GROUPS) {
            o->def.clients = o->def_clients;
            if (o->ngroups == 0 || o->def_range_set) {
                o->group[o->ngroups++] = o->def;
            }
        }
    }
    if (o->count == 0 && o->duration_ns == 0) {
        die("--count must be positive%s", "");
    }
}

void opts_parse(Opts *o, int argc, char **argv)
{
    struct option lo[NOPTS + MAX_SETTING_OPTS + 1];
    char names[MAX_SETTING_OPTS][48];
    size_t i, n = NOPTS;
    int c, li;

    for (i = 0; i < NOPTS; i++) {
        lo[i] = (struct option){
            .name = opt_table[i].name,
            .has_arg = opt_table[i].has_arg ? required_argument : no_argument,
            .val = OPT_VAL(i),
        };
    }
    n += setting_options(lo + NOPTS, names);
    lo[n] = (struct option){ 0 };
    opts_defaults(o);
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
        if (c == 'h') {
            opt_help(o, NULL);
        }
        if (c >= OPT_SETTING(0) && c < OPT_SETTING(NCQ_SETTING__MAX)) {
            opt_setting(o, c - OPT_SETTING(0), lo[li].name, optarg);
            continue;
        }
        if (c < OPT_VAL(0) || c >= OPT_VAL(NOPTS)) {
            die("unknown option or missing value: '%s' (see --help)",
                argv[optind - 1]);
        }
        opt_table[c - OPT_VAL(0)].fn(o, optarg);
    }
    if (optind < argc) {
        die("unexpected argument '%s' (see --help)", argv[optind]);
    }
    opts_finish(o);
}
