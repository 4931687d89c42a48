/*
 * fwcfg-read: copy a QEMU fw_cfg file to stdout through fw_cfg's DMA
 * interface, from user space in the guest image (built statically by
 * images/build-image.sh; images/init reads the workload with it).
 *
 *   fwcfg-read NAME      e.g. fwcfg-read opt/ncq/workload >workload.cpio
 *
 * Why: Linux's qemu_fw_cfg driver reads a file's sysfs 'raw' attribute one
 * byte per port read, and each read() of at most a page starts again at
 * the file's first byte and skips to its offset (fw_cfg_read_blob's
 * 'while (pos-- > 0) ioread8(...)'), so a file of N bytes costs about
 * N * N / 8192 port reads: minutes for 1 MB, hours for 10 MB under TCG.
 * The DMA interface (QEMU's docs/specs/fw_cfg.rst) copies a whole page per
 * request, synchronously (the transfer is done when the port write that
 * starts it returns), so the guest's timing stays deterministic.
 *
 * The key and size come from the driver's sysfs directory
 * /sys/firmware/qemu_fw_cfg/by_name/NAME/{key,size}.  A DMA request names
 * guest-physical addresses: the buffer is locked in memory and its pages'
 * frame numbers read from /proc/self/pagemap (root only), one request per
 * page.  Exit status 0 when the whole file was copied, 1 otherwise (with a
 * message); 2 when the interface is missing (the caller falls back to the
 * sysfs file).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <unistd.h>

#define FW_CFG_PORT_SEL 0x510
#define FW_CFG_PORT_DMA 0x514
#define FW_CFG_ID 0x01
#define FW_CFG_VERSION_DMA 0x02
#define DMA_CTL_ERROR 0x01
#define DMA_CTL_READ 0x02
#define DMA_CTL_SELECT 0x08

#define PAGE 4096
#define BUF_PAGES 64

struct dma_access {             /* big-endian, as the device reads it */
    uint32_t control;
    uint32_t length;
    uint64_t address;
} __attribute__((packed));

static int pagemap = -1;

static uint64_t phys_addr(const void *p)
{
    uint64_t entry;
    uintptr_t v = (uintptr_t)p;
    off_t off = (off_t)(v / PAGE) * 8;

    if (pread(pagemap, &entry, 8, off) != 8) {
        perror("fwcfg-read: /proc/self/pagemap");
        exit(1);
    }
    if (!(entry >> 63) || !(entry & ((1ULL << 55) - 1))) {
        fprintf(stderr, "fwcfg-read: no frame number for a locked page "
                "(not root?)\n");
        exit(1);
    }
    return (entry & ((1ULL << 55) - 1)) * PAGE + v % PAGE;
}

static unsigned long read_sysfs(const char *name, const char *what)
{
    char path[512], buf[64];
    unsigned long value;
    FILE *f;

    snprintf(path, sizeof(path), "/sys/firmware/qemu_fw_cfg/by_name/%s/%s",
             name, what);
    f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof(buf), f)) {
        fprintf(stderr, "fwcfg-read: cannot read %s: %s\n", path,
                strerror(errno));
        exit(1);
    }
    fclose(f);
    if (sscanf(buf, "%lu", &value) != 1) {
        fprintf(stderr, "fwcfg-read: %s: not a number\n", path);
        exit(1);
    }
    return value;
}

/* One DMA request: len bytes into the page at dst (within one page). */
static void dma(volatile struct dma_access *acc, uint64_t acc_phys,
                uint32_t control, void *dst, uint32_t len)
{
    acc->control = htobe32(control);
    acc->length = htobe32(len);
    acc->address = htobe64(phys_addr(dst));
    __sync_synchronize();
    outl(htobe32((uint32_t)(acc_phys >> 32)), FW_CFG_PORT_DMA);
    outl(htobe32((uint32_t)acc_phys), FW_CFG_PORT_DMA + 4);
    __sync_synchronize();
    if (be32toh(acc->control) & DMA_CTL_ERROR) {
        fprintf(stderr, "fwcfg-read: DMA request failed\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    unsigned long key, size, done = 0;
    unsigned char *mem;
    volatile struct dma_access *acc; /* the device writes it back */
    uint64_t acc_phys;
    uint32_t features;
    int first = 1;

    if (argc != 2) {
        fprintf(stderr, "usage: fwcfg-read NAME  (a file of "
                "/sys/firmware/qemu_fw_cfg/by_name)\n");
        return 1;
    }
    key = read_sysfs(argv[1], "key");
    size = read_sysfs(argv[1], "size");
    if (ioperm(FW_CFG_PORT_SEL, 12, 1) != 0) {
        perror("fwcfg-read: ioperm");
        return 2;
    }
    /* The interface's feature bits (FW_CFG_ID, little-endian) */
    outw(FW_CFG_ID, FW_CFG_PORT_SEL);
    features = inb(FW_CFG_PORT_SEL + 1);
    if (!(features & FW_CFG_VERSION_DMA)) {
        fprintf(stderr, "fwcfg-read: fw_cfg has no DMA interface\n");
        return 2;
    }
    pagemap = open("/proc/self/pagemap", O_RDONLY);
    if (pagemap < 0) {
        perror("fwcfg-read: /proc/self/pagemap");
        return 1;
    }
    /* page 0: the request; pages 1..BUF_PAGES: data */
    mem = mmap(NULL, (BUF_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
    if (mem == MAP_FAILED || mlock(mem, (BUF_PAGES + 1) * PAGE) != 0) {
        perror("fwcfg-read: locked buffer");
        return 1;
    }
    acc = (volatile struct dma_access *)mem; /* the device writes it */
    acc_phys = phys_addr(mem);
    while (done < size) {
        unsigned long chunk = size - done, n = 0;

        if (chunk > BUF_PAGES * PAGE) {
            chunk = BUF_PAGES * PAGE;
        }
        while (n < chunk) {
            uint32_t len = chunk - n > PAGE ? PAGE : chunk - n;
            uint32_t ctl = DMA_CTL_READ;

            if (first) {
                ctl |= DMA_CTL_SELECT | ((uint32_t)key << 16);
                first = 0;
            }
            dma(acc, acc_phys, ctl, mem + PAGE + n, len);
            n += len;
        }
        for (n = 0; n < chunk;) {
            ssize_t w = write(1, mem + PAGE + n, chunk - n);

            if (w <= 0) {
                perror("fwcfg-read: write");
                return 1;
            }
            n += w;
        }
        done += chunk;
    }
    return 0;
}
