/*
 * ncq-fit-probe: one timed command.  Reads go either through SG_IO
 * (SCSI READ(16), which libata turns into READ FPDMA QUEUED, with FUA
 * when the probe must read the media and not the drive's buffer) or as
 * O_DIRECT pread (the block layer's ordinary path, for streams and
 * queues).  IDENTIFY DEVICE goes through ATA PASS-THROUGH(16).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <scsi/sg.h>

#include "probe.h"

#define SG_TIMEOUT_MS   30000
#define READ16          0x88
#define READ16_FUA      0x08
#define ATA_PT16        0x85
#define ATA_IDENTIFY    0xec
#define SPIN_NS         200000  /* spin this last part of a wait */

int64_t probe_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Wait until @t: sleep while far from it (an idle CPU costs nothing, and
 * under QEMU's icount with sleep=off idle time passes at once), then spin
 * the last stretch, where a sleep's wake-up would be late (the probe sets
 * its timer slack to 1 ns, but wake-ups still vary).
 */
void probe_spin_until(int64_t t)
{
    int64_t now = probe_now();

    if (t - now > SPIN_NS + SPIN_NS / 2) {
        struct timespec ts = {
            .tv_sec = (t - SPIN_NS) / 1000000000,
            .tv_nsec = (t - SPIN_NS) % 1000000000,
        };

        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    while (probe_now() < t) {
        /* spin */
    }
}

void *probe_buffer(size_t bytes)
{
    void *b = NULL;

    if (posix_memalign(&b, 4096, bytes) != 0) {
        return NULL;
    }
    memset(b, 0, bytes);
    return b;
}

/* xorshift64*: the probe's own, seeded, so a plan is reproducible */
uint64_t probe_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static int sg_cmd(Probe *p, unsigned char *cdb, int cdb_len, void *buf,
                  unsigned len)
{
    unsigned char sense[32];
    sg_io_hdr_t io = {
        .interface_id = 'S',
        .dxfer_direction = SG_DXFER_FROM_DEV,
        .cmd_len = (unsigned char)cdb_len,
        .mx_sb_len = sizeof(sense),
        .dxfer_len = len,
        .dxferp = buf,
        .cmdp = cdb,
        .sbp = sense,
        .timeout = SG_TIMEOUT_MS,
    };

    if (ioctl(p->fd, SG_IO, &io) != 0) {
        return -errno;
    }
    if (io.status || io.host_status || io.driver_status) {
        /* ATA PASS-THROUGH with CK_COND may report a sense and succeed */
        if (cdb[0] == ATA_PT16 && io.status == 2 && io.host_status == 0) {
            return 0;
        }
        return -EIO;
    }
    return 0;
}

/*
 * Read @count sectors at @lba through SG_IO; @done gets the instant the
 * ioctl returned.  Returns 0 or a negative errno.
 */
int probe_sg_read(Probe *p, uint64_t lba, uint32_t count, bool fua,
                  int64_t *done)
{
    static unsigned char *buf;
    unsigned char cdb[16] = { READ16 };
    int rc;

    if (!buf) {
        buf = probe_buffer(1 << 20);
        if (!buf) {
            return -ENOMEM;
        }
    }
    if ((uint64_t)count * PROBE_SECTOR > (1 << 20)) {
        return -EINVAL;
    }
    cdb[1] = fua ? READ16_FUA : 0;
    for (int i = 0; i < 8; i++) {
        cdb[2 + i] = (unsigned char)(lba >> (56 - 8 * i));
    }
    for (int i = 0; i < 4; i++) {
        cdb[10 + i] = (unsigned char)(count >> (24 - 8 * i));
    }
    rc = sg_cmd(p, cdb, 16, buf, count * PROBE_SECTOR);
    *done = probe_now();
    return rc;
}

int probe_pread(Probe *p, void *buf, uint64_t lba, uint32_t bytes)
{
    ssize_t n = pread(p->fd, buf, bytes, (off_t)(lba * PROBE_SECTOR));

    if (n < 0) {
        return -errno;
    }
    return n == (ssize_t)bytes ? 0 : -EIO;
}

/* IDENTIFY DEVICE: ATA PASS-THROUGH(16), PIO data-in, one block */
int probe_identify(Probe *p, uint16_t id[256])
{
    unsigned char cdb[16] = { ATA_PT16 };
    unsigned char *raw = probe_buffer(512);
    int rc;

    if (!raw) {
        return -ENOMEM;
    }
    cdb[1] = 4 << 1;            /* protocol 4: PIO data-in */
    cdb[2] = 0x0e;              /* T_DIR in, BYT_BLOK, T_LENGTH in count */
    cdb[6] = 1;                 /* one block */
    cdb[14] = ATA_IDENTIFY;
    rc = sg_cmd(p, cdb, 16, raw, 512);
    for (int i = 0; i < 256; i++) {
        id[i] = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
    }
    free(raw);
    return rc;
}
