/*
 * cdl-hint: run I/O with a Command Duration Limit hint (Linux 6.5+).
 *
 *   cdl-hint N CMD [ARG...]     run CMD with I/O priority hint
 *                               IOPRIO_HINT_DEV_DURATION_LIMIT_N (1-7)
 *   cdl-hint N --read DEV COUNT [STRIDE [FIRST]]
 *                               COUNT 4 KiB O_DIRECT reads, one at a
 *                               time, from sector FIRST (default 0),
 *                               STRIDE sectors apart (default 1000003),
 *                               wrapping at the device's end; one line
 *                               per read: "read I lat_us errno"
 *
 * N = 0 gives no hint.  Debian 13's fio (3.33) predates fio's
 * cmdprio_hint, so the guest tests set the hint on the process, which the
 * block layer gives every request that has no priority of its own, and
 * sd turns into the command's duration limit descriptor (docs/cdl.md).
 * Built statically by images/build-image.sh.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#define IOPRIO_WHO_PROCESS  1
#define IOPRIO_CLASS_BE     2
#define IOPRIO_CLASS_SHIFT  13
#define IOPRIO_HINT_SHIFT   3
#define BE_LEVEL            4       /* the default best-effort level */
#define BLOCK               4096

static int64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A decimal number; false if @s is not one (no sign, no overflow). */
static bool number(const char *s, uint64_t *v)
{
    *v = 0;
    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || *v > (UINT64_MAX - 9) / 10) {
            return false;
        }
        *v = *v * 10 + (uint64_t)(*s - '0');
    }
    return true;
}

static int reads(const char *dev, long count, uint64_t stride,
                 uint64_t sector)
{
    uint64_t bytes, sectors;
    void *buf;
    long i;
    int fd = open(dev, O_RDONLY | O_DIRECT);

    if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
        perror(dev);
        return 1;
    }
    if (posix_memalign(&buf, BLOCK, BLOCK)) {
        return 1;
    }
    sectors = bytes / 512 - BLOCK / 512;
    for (i = 0; i < count; i++) {
        int64_t t0 = now_us();
        ssize_t n = pread(fd, buf, BLOCK, (off_t)(sector * 512));
        int err = n == BLOCK ? 0 : (n < 0 ? errno : EIO);

        printf("read %ld %lld %d\n", i, (long long)(now_us() - t0), err);
        sector = (sector + stride) % sectors & ~7ULL;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n, count, stride = 1000003, first = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: cdl-hint N CMD [ARG...] | "
                "cdl-hint N --read DEV COUNT [STRIDE [FIRST]]\n");
        return 2;
    }
    if (!number(argv[1], &n) || n > 7) {
        fprintf(stderr, "cdl-hint: N is 0 to 7, got %s\n", argv[1]);
        return 2;
    }
    if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
                IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT |
                (int)n << IOPRIO_HINT_SHIFT | BE_LEVEL) < 0) {
        perror("cdl-hint: ioprio_set");
        return 1;
    }
    if (!strcmp(argv[2], "--read")) {
        if (argc < 5 || !number(argv[4], &count) ||
            (argc > 5 && !number(argv[5], &stride)) ||
            (argc > 6 && !number(argv[6], &first))) {
            fprintf(stderr, "cdl-hint: --read DEV COUNT [STRIDE [FIRST]], "
                    "numbers in decimal\n");
            return 2;
        }
        return reads(argv[3], (long)count, stride, first);
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
