/*
 * ncq-fit-probe: what must hold before the probe touches a device (root,
 * a whole disk, not in use), opening it, and the sysfs settings it
 * changes for its measurements and restores at the end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>

#include "probe.h"

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");

    if (!f) {
        return -1;
    }
    if (!fgets(buf, (int)len, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static int write_line(const char *path, const char *val)
{
    FILE *f = fopen(path, "w");
    int rc;

    if (!f) {
        return -1;
    }
    rc = fputs(val, f) < 0 ? -1 : 0;
    if (fclose(f) != 0) {
        rc = -1;
    }
    return rc;
}

/* Does a directory hold anything besides . and ..? */
static bool dir_has_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    bool any = false;

    if (!d) {
        return false;
    }
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            any = true;
            break;
        }
    }
    closedir(d);
    return any;
}

/*
 * Is the disk or one of its partitions mounted or used as swap?  Names in
 * /proc/mounts and /proc/swaps start with /dev/NAME for the disk and its
 * partitions (sda, sda1; nvme0n1, nvme0n1p1).
 */
static bool mounted(const char *name, char *what, size_t len)
{
    static const char *const files[] = { "/proc/mounts", "/proc/swaps" };
    char line[1024], prefix[80];
    size_t n;

    snprintf(prefix, sizeof(prefix), "/dev/%s", name);
    n = strlen(prefix);
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "r");

        if (!f) {
            continue;
        }
        while (fgets(line, sizeof(line), f)) {
            if (!strncmp(line, prefix, n)) {
                line[strcspn(line, " \t\n")] = 0;
                snprintf(what, len, "%s is in %s", line, files[i]);
                fclose(f);
                return true;
            }
        }
        fclose(f);
    }
    return false;
}

/* Holders of the disk or of any of its partitions (md, dm, bcache) */
static bool held(const char *name, char *what, size_t len)
{
    char path[256];
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "/sys/class/block/%s/holders", name);
    if (dir_has_entries(path)) {
        snprintf(what, len, "/dev/%s has holders (%s)", name, path);
        return true;
    }
    snprintf(path, sizeof(path), "/sys/class/block/%s", name);
    d = opendir(path);
    if (!d) {
        return false;
    }
    while ((e = readdir(d))) {
        char sub[600];

        if (strncmp(e->d_name, name, strlen(name))) {
            continue;
        }
        snprintf(sub, sizeof(sub), "%s/%s/holders", path, e->d_name);
        if (dir_has_entries(sub)) {
            snprintf(what, len, "/dev/%s has holders (%s)", e->d_name, sub);
            closedir(d);
            return true;
        }
    }
    closedir(d);
    return false;
}

static int refuse(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "ncq-fit-probe: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return -1;
}

static int check_device(Probe *p, struct stat *st)
{
    char path[256], what[1200];
    const char *base;

    if (geteuid() != 0) {
        return refuse("%s%snot root: the probe opens the raw device and "
                      "sets its queue depth; run it as root (sudo)", "", "");
    }
    if (stat(p->dev, st) != 0) {
        return refuse("cannot open %s: %s", p->dev, strerror(errno));
    }
    if (!S_ISBLK(st->st_mode)) {
        return refuse("%s is not a block device%s; give a whole disk such "
                      "as /dev/sdb", p->dev, "");
    }
    base = strrchr(p->dev, '/');
    base = base ? base + 1 : p->dev;
    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition",
             major(st->st_rdev), minor(st->st_rdev));
    if (access(path, F_OK) == 0) {
        return refuse("%s is a partition%s; give the whole disk it is on "
                      "(the fit needs every LBA)", p->dev, "");
    }
    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent",
             major(st->st_rdev), minor(st->st_rdev));
    snprintf(p->name, sizeof(p->name), "%s", base);
    {
        FILE *f = fopen(path, "r");
        char line[256];

        while (f && fgets(line, sizeof(line), f)) {
            if (!strncmp(line, "DEVNAME=", 8)) {
                line[strcspn(line, "\n")] = 0;
                snprintf(p->name, sizeof(p->name), "%.60s", line + 8);
            }
        }
        if (f) {
            fclose(f);
        }
    }
    if (!p->force && (mounted(p->name, what, sizeof(what)) ||
                      held(p->name, what, sizeof(what)))) {
        return refuse("%s: the device is in use; unmount it (or give "
                      "--force to measure it anyway)", what, "");
    }
    return 0;
}

int probe_open(Probe *p)
{
    struct stat st;
    int flags = O_RDONLY | O_DIRECT | O_CLOEXEC;
    char path[256];

    if (check_device(p, &st) < 0) {
        return -1;
    }
    if (!p->force) {
        flags |= O_EXCL;
    }
    p->fd = open(p->dev, flags);
    if (p->fd < 0 && errno == EBUSY) {
        return refuse("%s is in use (an exclusive open failed: %s); give "
                      "--force to measure it anyway", p->dev,
                      strerror(EBUSY));
    }
    if (p->fd < 0) {
        return refuse("cannot open %s: %s", p->dev, strerror(errno));
    }
    if (ioctl(p->fd, BLKGETSIZE64, &p->sectors) != 0) {
        return refuse("%s: BLKGETSIZE64 failed: %s", p->dev, strerror(errno));
    }
    p->sectors /= PROBE_SECTOR;
    snprintf(path, sizeof(path), "/sys/block/%s/device/queue_depth", p->name);
    if (read_line(path, p->saved_depth, sizeof(p->saved_depth)) != 0) {
        p->saved_depth[0] = 0;
    }
    snprintf(path, sizeof(path), "/sys/block/%s/queue/scheduler", p->name);
    if (read_line(path, p->saved_sched, sizeof(p->saved_sched)) == 0) {
        /* "mq-deadline [none]": keep the bracketed one */
        char *l = strchr(p->saved_sched, '[');
        char *r = l ? strchr(l, ']') : NULL;

        if (r) {
            *r = 0;
            memmove(p->saved_sched, l + 1, strlen(l + 1) + 1);
        }
        /* the block layer must pass requests on in the probe's order */
        write_line(path, "none");
    } else {
        p->saved_sched[0] = 0;
    }
    return 0;
}

/* NCQ depth through sysfs (libata turns NCQ off at depth 1) */
int probe_set_depth(Probe *p, int depth)
{
    char path[256], val[16];

    snprintf(path, sizeof(path), "/sys/block/%s/device/queue_depth", p->name);
    snprintf(val, sizeof(val), "%d", depth);
    return write_line(path, val);
}

void probe_restore(Probe *p)
{
    char path[256];

    if (p->saved_depth[0]) {
        snprintf(path, sizeof(path), "/sys/block/%s/device/queue_depth",
                 p->name);
        write_line(path, p->saved_depth);
    }
    if (p->saved_sched[0]) {
        snprintf(path, sizeof(path), "/sys/block/%s/queue/scheduler",
                 p->name);
        write_line(path, p->saved_sched);
    }
}
