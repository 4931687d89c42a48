/*
 * ncq-sim: what its parts share: the options, the closed-loop workload,
 * the results of a run.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_SIM_H
#define NCQ_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/ide/ncq-model.h"
#include "trace.h"

#define MAX_GROUPS 16
#define MAX_SIZES 16
#define MAX_SWEEP 32
/* read limit: every request is a read, without a draw */
#define READ_ALL UINT64_MAX

/* One client group of the closed loop (--group, or the default one). */
typedef struct Group {
    int clients;
    char lo_s[32], hi_s[32];    /* the range as given */
    uint64_t lo, hi;            /* sector range [lo, hi) */
    bool prio;
    uint32_t size;              /* 0: the global --size list */
    bool has_read;
    uint64_t read_limit;        /* as Opts.read_limit */
    int pattern;                /* -1 global, 0 random, 1 seq, 2 stream */
} Group;

/* The command line (opts.c). */
typedef struct Opts {
    const char *model;
    const char *model_file;
    uint64_t seed;
    bool model_set, seed_set;
    char origin_model[48];
    NcqSettings settings;       /* --NAME of a setting: its value ... */
    bool set[NCQ_SETTING__MAX];   /* ... over the model's when set */
    const char *replay;
    int ngroups;
    Group group[MAX_GROUPS];
    Group def;                  /* the default group (--clients, --lba-range) */
    int def_clients;
    bool def_range_set;
    int64_t think_ns;
    int64_t host_delay_ns;
    uint32_t sizes[MAX_SIZES];
    int nsizes;
    uint32_t align;
    /*
     * A request is a read when a 53-bit draw is below this, or always
     * (no draw) for READ_ALL; see parse_read_ratio().
     */
    uint64_t read_limit;
    bool seq;
    bool shared;        /* one sequential stream per group */
    int depth;
    long count;
    int64_t duration_ns;
    int64_t interval_ns;        /* --interval: throughput per interval */
    const char *trace;
    int sweep[MAX_SWEEP];
    int nsweep;
    bool quiet;
    bool end_flush;             /* --end-flush */
    bool zoned;                 /* --zoned: a sequential writer per zone */
    const char *zone_state;     /* --zone-state: the zones to start from */
    const char *validate;       /* --validate MODEL (or all) */
    const char *figures;        /* --figures FILE (or folder for all) */
    const char *out;            /* --out FILE (or folder for all) */
    bool json;
    bool list_params;           /* --list-params: the table, markdown */
    bool dump_model;            /* --dump-model: the parsed model, JSON */
} Opts;

/* A request between its issue by the host and its completion. */
typedef struct HostReq {
    int client;                 /* -1 for a replayed request */
    int64_t issue;
    NcqReq r;
} HostReq;

/* The closed-loop clients (workload.c). */
typedef struct Workload {
    const Opts *o;
    Group groups[MAX_GROUPS];   /* with their ranges in sectors */
    int nclients;
    int gfirst[MAX_GROUPS];     /* first client of each group */
    int *cgroup;                /* group of each client */
    int64_t *next_issue;        /* per client, -1 while one is out */
    uint64_t *seqpos;           /* per client: next sequential sector */
    uint64_t rng;
    long issued;
    uint64_t zone_sectors;      /* --zoned: client i writes SWR zone i */
    uint64_t zone_first;        /* the first SWR zone's start */
} Workload;

/* The figures of one run (report.c). */
typedef struct Result {
    long done;
    int64_t t_end;
    int64_t flush_ns;           /* --end-flush: the FLUSH's own time */
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
    int64_t interval_ns;        /* --interval: its length, 0: none */
    uint64_t *ivl_ops;          /* ... completions in each */
    uint64_t *ivl_sect;         /* ... and their sectors */
    long nivl;
} Result;

/* die.c: print "ncq-sim: " @fmt (one %s: @arg) and exit with 2. */
void die(const char *fmt, const char *arg) __attribute__((noreturn));

/* opts.c */
void opts_parse(Opts *o, int argc, char **argv);
uint64_t opts_sector(const char *s, uint64_t cap, const char *what);

/* workload.c */
void workload_init(Workload *w, const Opts *o, uint64_t capacity,
                   bool replay);
void workload_zones(Workload *w, const NcqModel *m);
void workload_free(Workload *w);
int64_t workload_next_issue(const Workload *w);
bool workload_issue(Workload *w, int client, int64_t t, HostReq *h);
void workload_done(Workload *w, int client, int64_t complete_ns);

/* run.c: one simulation at host queue depth @depth */
NcqParams *load_params(const Opts *o);
void run(const Opts *o, int depth, const NcqReq *reqs, long nreq,
         Result *r);

/* report.c */
void result_add(Result *r, int64_t lat, const NcqCompletion *c, int group);
void result_free(Result *r);
void report_sweep_header(void);
void report(const Opts *o, int depth, Result *r, bool row);

#endif
