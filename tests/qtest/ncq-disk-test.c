/*
 * qtests for ncq-disk behind QEMU's AHCI controller
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/ahci.h"
#include "libqos/pci-pc.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "hw/ide/ncq-model.h"

#define DISK_SECTORS   (64 * 1024 * 2)     /* 64 MiB image */
#define BIG_SECTORS    (100ULL << 21)      /* 100 GiB sparse image */

#define ATA_ERR_ABRT   0x04
#define ATA_ERR_IDNF   0x10
#define ATA_READ_LOG_EXT 0x2f

static char *img_path;
static char *big_img_path;

static AHCIQState *ncq_boot_img(const char *img, const char *props)
{
    AHCIQState *s = g_new0(AHCIQState, 1);

    s->parent = qtest_pc_boot("-M q35 "
                              "-drive if=none,id=drive0,file=%s,format=raw "
                              "-device ncq-disk,id=disk0,drive=drive0,"
                              "bus=ide.0%s%s",
                              img, props ? "," : "", props ? props : "");
    alloc_set_flags(&s->parent->alloc, ALLOC_LEAK_ASSERT);
    s->dev = get_ahci_device(s->parent->qts, &s->fingerprint);
    ahci_pci_enable(s);
    ahci_hba_enable(s);
    return s;
}

static AHCIQState *ncq_boot(const char *props)
{
    return ncq_boot_img(img_path, props);
}

/* Boot, and IDENTIFY as a host does first; returns the port. */
static AHCIQState *ncq_boot_ready(const char *img, const char *props,
                                  uint8_t *port)
{
    AHCIQState *ahci = ncq_boot_img(img, props);
    uint16_t id[256];

    *port = ahci_port_select(ahci);
    ahci_port_clear(ahci, *port);
    ahci_io(ahci, *port, CMD_IDENTIFY, id, sizeof(id), 0);
    return ahci;
}

static void ncq_shutdown(AHCIQState *ahci)
{
    QOSState *qs = ahci->parent;

    ahci_clean_mem(ahci);
    free_ahci_device(ahci->dev);
    g_free(ahci);
    qtest_shutdown(qs);
}

static bool ncq_busy(AHCIQState *ahci, uint8_t port, uint8_t slot)
{
    uint32_t tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);

    if (tfd & AHCI_PX_TFD_STS_ERR) {
        return false;
    }
    return (tfd & AHCI_PX_TFD_STS_BSY) ||
           (ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1 << slot)) ||
           (ahci_px_rreg(ahci, port, AHCI_PX_SACT) & (1 << slot));
}

/*
 * ncq-disk completes commands at model deadlines on the virtual clock,
 * which only moves here when the test steps it.
 */
static void ncq_wait(AHCIQState *ahci, uint8_t port, AHCICommand *cmd)
{
    while (ncq_busy(ahci, port, ahci_command_slot(cmd))) {
        qtest_clock_step_next(ahci->parent->qts);
    }
}

/* Like libqos's ahci_io(), but steps the virtual clock while waiting. */
static void ncq_io(AHCIQState *ahci, uint8_t port, uint8_t ide_cmd,
                   void *buf, size_t len, uint64_t sector)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, len);
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    qtest_memwrite(qts, gbuf, buf, len);
    ahci_command_adjust(cmd, sector, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_command_issue_async(ahci, cmd);
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    qtest_memread(qts, gbuf, buf, len);
    ahci_free(ahci, gbuf);
}

/* Build an NCQ command in a free slot without issuing it. */
static AHCICommand *ncq_prepare(AHCIQState *ahci, uint8_t port,
                                uint8_t ide_cmd, uint64_t gbuf, size_t len,
                                uint64_t lba)
{
    AHCICommand *cmd = ahci_command_create(ide_cmd);

    ahci_command_adjust(cmd, lba, gbuf, len, 0);
    ahci_command_commit(ahci, cmd, port);
    return cmd;
}

/* Give a committed command another NCQ tag than its slot number. */
static void ncq_forge_tag(AHCIQState *ahci, uint8_t port, AHCICommand *cmd,
                          uint8_t tag)
{
    AHCICommandHeader hdr;

    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(ahci->parent->qts, hdr.ctba + offsetof(NCQFIS, tag),
                 tag << 3);
}

/* Clear an error the way a host's error handler does. */
static void ncq_recover(AHCIQState *ahci, uint8_t port)
{
    ahci_px_clr(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
    ahci_port_clear(ahci, port);
    ahci_px_set(ahci, port, AHCI_PX_CMD, AHCI_PX_CMD_ST);
}

/* READ LOG EXT of one page (libqos knows no such command: patch it in). */
static void ncq_read_log(AHCIQState *ahci, uint8_t port, uint8_t log,
                         uint8_t page, uint8_t *buf)
{
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 512);
    AHCICommand *cmd = ahci_command_create(CMD_READ_PIO_EXT);
    AHCICommandHeader hdr;

    ahci_command_adjust(cmd, ((uint64_t)page << 8) | log, gbuf, 512, 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(NCQFIS, command),
                 ATA_READ_LOG_EXT);
    ahci_command_issue(ahci, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    qtest_memread(qts, gbuf, buf, 512);
    ahci_free(ahci, gbuf);
}

/* Wait until the port reports an error; returns the error register. */
static uint8_t ncq_wait_error(AHCIQState *ahci, uint8_t port)
{
    int i;

    for (i = 0; i < 100000; i++) {
        uint32_t tfd = ahci_px_rreg(ahci, port, AHCI_PX_TFD);

        if (tfd & AHCI_PX_TFD_STS_ERR) {
            g_assert(ahci_px_rreg(ahci, port, AHCI_PX_IS) & AHCI_PX_IS_TFES);
            return tfd >> 8;
        }
        qtest_clock_step_next(ahci->parent->qts);
    }
    g_assert_not_reached();
}

static void check_error_log(AHCIQState *ahci, uint8_t port, bool nq,
                            uint8_t tag, uint8_t error, uint64_t lba)
{
    uint8_t log[512];
    uint8_t sum = 0;
    int i;

    ncq_read_log(ahci, port, 0x10, 0, log);
    for (i = 0; i < 512; i++) {
        sum += log[i];
    }
    g_assert_cmpuint(sum, ==, 0);
    g_assert_cmpuint(!!(log[0] & 0x80), ==, nq);
    if (!nq) {
        g_assert_cmpuint(log[0] & 0x1f, ==, tag);
    }
    g_assert_cmphex(log[3], ==, error);
    g_assert_cmpuint(log[2] & 0x01, ==, 0x01);          /* status: ERR */
    if (lba) {
        g_assert_cmpuint(ldl_le_p(log + 4) & 0xffffff, ==, lba & 0xffffff);
    }
}

/* After an error is handled, the queue works again. */
static void check_still_serving(AHCIQState *ahci, uint8_t port)
{
    uint8_t out[4096], in[4096];

    memset(out, 0x5a, sizeof(out));
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, sizeof(out), 100);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, sizeof(in), 100);
    g_assert(!memcmp(out, in, sizeof(in)));
}

static QDict *query_disk(AHCIQState *ahci)
{
    QDict *rsp = qtest_qmp(ahci->parent->qts,
                           "{ 'execute': 'query-ncq-disk', "
                           "  'arguments': { 'id': 'disk0' } }");
    QList *list = qdict_get_qlist(rsp, "return");
    QDict *info = qobject_to(QDict, qlist_peek(list));

    qobject_ref(info);
    qobject_unref(rsp);
    return info;
}

/* ATA strings are stored with the two bytes of each word swapped. */
static void ata_string(const uint16_t *words, int first, int count, char *out)
{
    int i;

    for (i = 0; i < count; i++) {
        uint16_t w = le16_to_cpu(words[first + i]);

        out[2 * i] = w >> 8;
        out[2 * i + 1] = w & 0xff;
    }
    out[2 * count] = '\0';
    g_strchomp(out);
}

static void test_identify(void)
{
    AHCIQState *ahci = ncq_boot(NULL);
    uint16_t id[256];
    char str[41];
    unsigned port = ahci_port_select(ahci);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);

    ata_string(id, 27, 20, str);
    g_assert_cmpstr(str, ==, "ST3400620AS");
    ata_string(id, 23, 4, str);
    g_assert_cmpstr(str, ==, "3.AAK");
    ata_string(id, 10, 10, str);
    g_assert_cmpuint(strlen(str), >, 0);
    g_assert_cmphex(le16_to_cpu(id[76]) & (1 << 8), ==, 1 << 8);
    g_assert_cmpuint(le16_to_cpu(id[75]) & 0x1f, ==, 31);
    g_assert_cmpuint(le16_to_cpu(id[217]), ==, 7200);
    ncq_shutdown(ahci);
}

static void test_identify_queue_depth(void)
{
    AHCIQState *ahci = ncq_boot("queue-depth=8");
    uint16_t id[256];
    unsigned port = ahci_port_select(ahci);

    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmpuint(le16_to_cpu(id[75]) & 0x1f, ==, 7);
    ncq_shutdown(ahci);
}

/* Data written with WRITE FPDMA QUEUED reads back identical. */
static void test_ncq_write_read_back(void)
{
    AHCIQState *ahci = ncq_boot(NULL);
    unsigned port = ahci_port_select(ahci);
    const size_t len = 64 * 1024;
    g_autofree uint8_t *out = g_malloc(len);
    g_autofree uint8_t *in = g_malloc0(len);
    size_t i;

    for (i = 0; i < len; i++) {
        out[i] = (i * 131 + 7) ^ (i >> 9);
    }
    ahci_port_clear(ahci, port);
    /*
     * As libata and ahci-test do: IDENTIFY first, which clears the port's
     * power-on error state.
     */
    ahci_io(ahci, port, CMD_IDENTIFY, in, 512, 0);
    ncq_io(ahci, port, WRITE_FPDMA_QUEUED, out, len, 4096);
    ncq_io(ahci, port, READ_FPDMA_QUEUED, in, len, 4096);
    g_assert(memcmp(out, in, len) == 0);
    ncq_shutdown(ahci);
}

/* An LBA range beyond the capacity: IDNF, reported in log 10h. */
static void test_error_lba_range(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;
    uint8_t slot;

    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096,
                      DISK_SECTORS - 4);
    slot = ahci_command_slot(cmd);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_IDNF);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, slot, ATA_ERR_IDNF, DISK_SECTORS - 4);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A tag that is already active: every queued command is aborted. */
static void test_error_duplicate_tag(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 8192);
    AHCICommand *a, *b;
    QDict *info;

    a = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 1000);
    ahci_command_issue_async(ahci, a);
    b = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096, 4096, 2000);
    ncq_forge_tag(ahci, port, b, ahci_command_slot(a));
    ahci_command_issue_async(ahci, b);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    info = query_disk(ahci);
    g_assert_null(qdict_get_qlist(info, "queue") ?
                  qlist_peek(qdict_get_qlist(info, "queue")) : NULL);
    g_assert_cmpint(qdict_get_int(info, "guest-errors"), ==, 1);
    qobject_unref(info);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, ahci_command_slot(a), ATA_ERR_ABRT, 0);
    ahci_command_free(a);
    ahci_command_free(b);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A tag beyond the advertised queue depth is aborted.  (libqos hands out
 * slots round-robin whatever the depth: the depth leaves room for the
 * commands that follow.)
 */
static void test_error_tag_beyond_depth(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, "queue-depth=8", &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096);
    AHCICommand *cmd;

    cmd = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 1000);
    ncq_forge_tag(ahci, port, cmd, 20);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, false, 20, ATA_ERR_ABRT, 1000);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/* A non-queued command while queued ones are outstanding: NQ error. */
static void test_error_nonqueued_while_queued(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096 + 512);
    AHCICommand *q, *id;

    q = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf, 4096, 5000);
    ahci_command_issue_async(ahci, q);
    id = ahci_command_create(CMD_IDENTIFY);
    ahci_command_set_buffer(id, gbuf + 4096);
    ahci_command_set_size(id, 512);
    ahci_command_commit(ahci, id, port);
    ahci_command_issue_async(ahci, id);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    check_error_log(ahci, port, true, 0, ATA_ERR_ABRT, 0);
    ahci_command_free(q);
    ahci_command_free(id);
    ahci_free(ahci, gbuf);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * A port reset (COMRESET through PxSCTL) with commands queued drops them:
 * none completes afterwards, however far virtual time moves.
 */
static void test_reset_drops_queue(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, 8 * 4096);
    AHCICommand *cmd[8];
    uint16_t id[256];
    QDict *info;
    int i;

    for (i = 0; i < 8; i++) {
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, 7919 * (i + 1));
        ahci_command_issue_async(ahci, cmd[i]);
    }
    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 8);
    qobject_unref(info);

    /* COMRESET: DET=1, then DET=0 */
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 1);
    ahci_px_wreg(ahci, port, AHCI_PX_SCTL, 0);
    qtest_clock_step(qts, 5000000000LL);  /* 5 s */

    info = query_disk(ahci);
    g_assert_cmpint(qlist_size(qdict_get_qlist(info, "queue")), ==, 0);
    g_assert_cmpint(qdict_get_int(info, "submitted"), ==, 8);
    g_assert_cmpint(qdict_get_int(info, "completed-reads"), ==, 0);
    qobject_unref(info);
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_SACT), ==, 0);

    for (i = 0; i < 8; i++) {
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    /* As a host does after a reset: IDENTIFY, then carry on. */
    ahci_port_clear(ahci, port);
    ahci_io(ahci, port, CMD_IDENTIFY, &id, sizeof(id), 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * The device completes a crafted set of queued reads in the order and at
 * the virtual times the model library (what ncq-sim runs) computes for
 * the same input: the glue adds nothing and loses nothing.
 */
static void test_matches_model(gconstpointer data)
{
    const char *props = data;
    enum { N = 24 };
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(big_img_path, props, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, N * 4096);
    AHCICommand *cmd[N];
    uint64_t lba[N];
    uint8_t slot[N];
    int64_t dev_done[N], model_done[N];
    int dev_order[N], model_order[N];
    int ndev = 0, nmodel = 0, i;
    uint32_t pending = 0;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    NcqParams *params = ncq_params_builtin("st3400620as");
    NcqModel *m;
    NcqSettings st;
    char err[256];
    int64_t t0;

    t0 = qtest_clock_set(qts, 0);     /* only reads the clock */
    for (i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        lba[i] = (x % (BIG_SECTORS / 8)) * 8;
        cmd[i] = ncq_prepare(ahci, port, READ_FPDMA_QUEUED, gbuf + 4096 * i,
                             4096, lba[i]);
        slot[i] = ahci_command_slot(cmd[i]);
        ahci_command_issue_async(ahci, cmd[i]);
        pending |= 1u << i;
    }
    while (pending) {
        int64_t now = qtest_clock_step_next(qts);
        uint32_t sact = ahci_px_rreg(ahci, port, AHCI_PX_SACT);

        g_assert(!(ahci_px_rreg(ahci, port, AHCI_PX_TFD) &
                   AHCI_PX_TFD_STS_ERR));
        for (i = 0; i < N; i++) {
            if ((pending & (1u << i)) && !(sact & (1u << slot[i]))) {
                dev_done[i] = now;
                dev_order[ndev++] = i;
                pending &= ~(1u << i);
            }
        }
    }

    /* The same commands, straight into the library. */
    g_assert_nonnull(params);
    m = ncq_model_new(params, 1, err, sizeof(err));
    g_assert_nonnull(m);
    ncq_model_get_settings(m, &st);
    st.write_cache = true;          /* as the drive's block backend says */
    if (props && strstr(props, "policy=fcfs")) {
        ncq_policy_from_name("fcfs", &st.policy);
    }
    g_assert_cmpint(ncq_model_set_settings(m, &st, err, sizeof(err)), ==, 0);
    for (i = 0; i < N; i++) {
        NcqCmd c = {
            .id = slot[i], .op = NCQ_OP_READ, .lba = lba[i], .sectors = 8,
            .queued = true,
        };
        g_assert_cmpint(ncq_model_submit(m, &c, t0), ==, 0);
    }
    while (nmodel < N) {
        NcqCompletion done[N];
        int64_t t = ncq_model_next_event(m);
        int n;

        g_assert_cmpint(t, !=, INT64_MAX);
        n = ncq_model_advance(m, t, done, N);
        for (i = 0; i < n; i++) {
            int k = 0;

            while (slot[k] != done[i].id) {
                k++;
            }
            model_done[k] = t;
            model_order[nmodel++] = k;
        }
    }
    ncq_model_free(m);
    ncq_params_free(params);

    for (i = 0; i < N; i++) {
        g_assert_cmpint(dev_order[i], ==, model_order[i]);
        g_assert_cmpint(dev_done[i], ==, model_done[i]);
        ahci_command_free(cmd[i]);
    }
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

int main(int argc, char **argv)
{
    int fd, ret;

    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("ncq-disk")) {
        g_test_skip("ncq-disk is not built in");
        return g_test_run();
    }

    img_path = g_strdup("/tmp/qtest.ncq-disk.XXXXXX");
    fd = g_mkstemp(img_path);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, DISK_SECTORS * 512) == 0);
    close(fd);
    big_img_path = g_strdup("/tmp/qtest.ncq-disk-big.XXXXXX");
    fd = g_mkstemp(big_img_path);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, BIG_SECTORS * 512) == 0);
    close(fd);

    qtest_add_func("/ncq-disk/identify", test_identify);
    qtest_add_func("/ncq-disk/identify/queue-depth",
                   test_identify_queue_depth);
    qtest_add_func("/ncq-disk/ncq/write-read-back", test_ncq_write_read_back);
    qtest_add_data_func("/ncq-disk/ncq/matches-model/sptf", NULL,
                        test_matches_model);
    qtest_add_data_func("/ncq-disk/ncq/matches-model/fcfs", "policy=fcfs",
                        test_matches_model);
    qtest_add_func("/ncq-disk/error/lba-range", test_error_lba_range);
    qtest_add_func("/ncq-disk/error/duplicate-tag", test_error_duplicate_tag);
    qtest_add_func("/ncq-disk/error/tag-beyond-depth",
                   test_error_tag_beyond_depth);
    qtest_add_func("/ncq-disk/error/non-queued-while-queued",
                   test_error_nonqueued_while_queued);
    qtest_add_func("/ncq-disk/reset/drops-queue", test_reset_drops_queue);

    ret = g_test_run();
    unlink(img_path);
    unlink(big_img_path);
    g_free(img_path);
    g_free(big_img_path);
    return ret;
}
