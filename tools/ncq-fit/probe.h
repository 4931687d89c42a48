/*
 * ncq-fit-probe: measures a hard disk through the Linux block layer for
 * ncq-fit (docs/ncq-fit.md).  The types and functions its files share.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_FIT_PROBE_H
#define NCQ_FIT_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PROBE_SECTOR     512
#define PROBE_MAX_DEPTH  32

/* What the user asked for and what the probe learnt so far */
typedef struct Probe {
    const char *dev;          /* /dev/sdX */
    char name[64];            /* sdX */
    int fd;                   /* O_RDONLY | O_DIRECT */
    uint64_t sectors;         /* capacity in 512-byte sectors */
    double minutes;           /* the budget, in minutes of disk time */
    double scale;             /* minutes / 30: how much of a full plan */
    bool force;
    bool allow_writes;
    bool quiet;               /* no progress bar */
    FILE *out;                /* samples, JSON lines */
    int64_t start_ns;
    double planned_s;         /* the whole plan's estimated length */
    double done_s;            /* estimated length of the finished phases */
    const char *phase;
    double phase_s;           /* the current phase's estimated length */
    int64_t rev_ns;           /* one revolution, once measured */
    double outer_spt;         /* sectors per revolution at LBA 0 */
    char saved_depth[16];     /* sysfs settings to restore */
    char saved_sched[64];
} Probe;

/* probe-dev.c: checks before touching the device, sysfs settings */
int probe_open(Probe *p);
void probe_restore(Probe *p);
int probe_set_depth(Probe *p, int depth);

/* probe-io.c: one timed command */
int64_t probe_now(void);
void probe_spin_until(int64_t t);
int probe_sg_read(Probe *p, uint64_t lba, uint32_t count, bool fua,
                  int64_t *done);
int probe_pread(Probe *p, void *buf, uint64_t lba, uint32_t bytes);
int probe_identify(Probe *p, uint16_t id[256]);
void *probe_buffer(size_t bytes);
uint64_t probe_rand(uint64_t *state);

/* probe-out.c: samples and progress */
void probe_progress(Probe *p, double phase_frac);
void probe_phase_start(Probe *p, const char *name, double estimate_s);
void probe_phase_end(Probe *p);
void probe_skipped(Probe *p, const char *what, const char *why);

/* the measurements, one file each; @budget_s is their share of the plan */
double probe_identity_plan(Probe *p);
int probe_identity(Probe *p);
double probe_rot_plan(Probe *p);
int probe_rot(Probe *p);
double probe_zones_plan(Probe *p);
int probe_zones(Probe *p);
double probe_seek_plan(Probe *p);
int probe_seek(Probe *p);
double probe_queue_plan(Probe *p);
int probe_queue(Probe *p);
double probe_starve_plan(Probe *p);
int probe_starve(Probe *p);
double probe_cache_plan(Probe *p);
int probe_cache(Probe *p);
double probe_wcache_plan(Probe *p);
int probe_wcache(Probe *p);

#endif
