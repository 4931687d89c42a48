/*
 * The model library's other saved streams, beside the model state
 * (test-state.c): the SMART state (smart-state.c: migration and the
 * device's smart-file) and the power-loss undo data (undo.c: migration).
 * Each golden stream in tests/data was written by the build that last
 * changed its format and must load in every later one:
 *
 * - smart-state-v3.bin: NCQSMART v3, the sectioned stream, written by
 *   ncq_smart_state_save() of the build of issue 39 (a SMART state after
 *   a seeded run: golden_smart() below);
 * - smart-state-v2.bin: the same state as NCQSMRT2, written by the build
 *   before issue 27;
 * - smart-state-v1.bin: the same state as NCQSMRT1 (before the spindle
 *   time was kept: v2 without its last three fields);
 * - undo-v2.bin: NCQUNDOD v2, sectioned, ncq_undo_save() of the build of
 *   issue 39 (golden_undo());
 * - undo-v1.bin: the same data as v1 (no header), by the build before
 *   issue 27.
 *
 * A load of each, saved again, gives the newest golden's bytes (v1: with
 * the spindle time as a v1 load sets it), and each value in its field:
 * the golden runs, made again, leave the same state.
 *
 * Usage: test-saved DATA_DIR                 (meson passes tests/data)
 *        test-saved --write-golden DATA_DIR  (never again for existing
 *                                             files: see tests/data)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "hw/ide/ncq-smart.h"

#define S 1000000000LL

/* The SMART state the goldens hold: errors, a test, a reset, spin-downs */
static void golden_smart(NcqSmart *sm)
{
    NcqModel *m = ncq_test_new(ncq_params_builtin("st3400620as"), 7);
    NcqFaultRule r[2];
    NcqSmartCmdRec rec = { .cmd = 0x25, .count = 8, .lba = 4096,
                           .device = 0x40 };
    char err[256];
    int i, n;

    n = ncq_fault_parse("unc@4096+2", r, 2, err, sizeof(err));
    CHECK(n == 1, "%s", err);
    CHECK_EQ(ncq_model_fault_add(m, &r[0], err, sizeof(err)), 0);
    ncq_smart_init(sm, 0);
    ncq_smart_power_cycle(sm, m, 0);
    for (i = 0; i < 5; i++) {
        rec.lba = 1000 * i;
        ncq_smart_command_done(sm, m, &rec, NCQ_OP_READ, rec.lba, 8, 0, 0,
                               (i + 1) * S);
    }
    rec.lba = 4096;
    ncq_smart_command_done(sm, m, &rec, NCQ_OP_READ, 4096, 8, NCQ_FAULT_UNC,
                           4097, 7 * S);
    rec.cmd = 0x35;
    ncq_smart_command_done(sm, m, &rec, NCQ_OP_WRITE, 4096, 8, 0, 0, 8 * S);
    ncq_smart_activity(sm, m, 9 * S, true);
    ncq_smart_activity(sm, m, 20 * S, false);
    ncq_smart_spindle(sm, m, 30 * S, false);
    ncq_smart_spindle(sm, m, 90 * S, true);
    CHECK_EQ(ncq_smart_test_start(sm, m, NCQ_SMART_EXTENDED, 100 * S), 0);
    ncq_smart_power_cycle(sm, m, 200 * S);
    CHECK_EQ(ncq_smart_test_start(sm, m, NCQ_SMART_SHORT, 210 * S), 0);
    ncq_smart_update(sm, m, 220 * S);
    ncq_model_free(m);
}

/* Three extents of kept sectors, each sector's bytes its own pattern */
static NcqUndo *golden_undo(void)
{
    static const struct { uint64_t lba, n; } ext[] = {
        { 8, 3 }, { 100, 1 }, { 1000000, 5 },
    };
    NcqUndo *u = ncq_undo_new();
    uint8_t data[5 * 512];
    size_t e, i;

    for (e = 0; e < sizeof(ext) / sizeof(ext[0]); e++) {
        for (i = 0; i < ext[e].n * 512; i++) {
            data[i] = (uint8_t)(ext[e].lba * 7 + i * 13 + e);
        }
        CHECK_EQ(ncq_undo_keep(u, ext[e].lba, ext[e].n, data), 0);
    }
    return u;
}

static uint8_t *read_file(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    uint8_t *buf;
    long n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    CHECK(f, "open %s", path);
    if (!f) {
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(n ? n : 1);
    CHECK_EQ(fread(buf, 1, n, f), (size_t)n);
    fclose(f);
    *len = n;
    return buf;
}

static void write_file(const char *dir, const char *name, const void *buf,
                       size_t len)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    CHECK(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0,
          "write %s", path);
    printf("wrote %s (%zu bytes)\n", path, len);
}

static void write_golden(const char *dir)
{
    static NcqSmart sm;
    NcqUndo *u = golden_undo();
    uint8_t *buf;
    size_t n;

    /* the older goldens were written by the builds that wrote them */
    golden_smart(&sm);
    n = ncq_smart_state_size(&sm);
    buf = malloc(n);
    ncq_smart_state_save(&sm, buf);
    CHECK(!memcmp(buf, "NCQSMART", 8), "writes v3");
    write_file(dir, "smart-state-v3.bin", buf, n);
    free(buf);
    n = ncq_undo_save_size(u);
    buf = malloc(n);
    ncq_undo_save(u, buf);
    CHECK(!memcmp(buf, "NCQUNDOD", 8), "writes v2");
    write_file(dir, "undo-v2.bin", buf, n);
    free(buf);
    ncq_undo_free(u);
}

/* Save @sm and compare with @want (@len bytes). */
static void check_saves_as(const NcqSmart *sm, const uint8_t *want,
                           size_t len, const char *what)
{
    size_t n = ncq_smart_state_size(sm);
    uint8_t *buf = malloc(n);

    CHECK(n == len, "%s: saves %zu bytes, the golden has %zu", what, n,
          len);
    ncq_smart_state_save(sm, buf);
    CHECK(n == len && !memcmp(buf, want, n), "%s: saves the same bytes",
          what);
    free(buf);
}

/* Every cut of @g, and every byte of it damaged: refused. */
static void check_damage_refused(const uint8_t *g, size_t n,
                                 const char *what)
{
    static NcqSmart sm;
    uint8_t *x = malloc(n);
    size_t i, refused = 0;

    for (i = 0; i < n; i++) {
        memcpy(x, g, n);
        x[i] ^= 0x20;
        refused += ncq_smart_state_load(&sm, x, n) == NCQ_ERR_PARSE;
        refused += ncq_smart_state_load(&sm, g, i) == NCQ_ERR_PARSE;
    }
    CHECK(refused == 2 * n, "%s: %zu of %zu cuts and damaged bytes refused",
          what, refused, 2 * n);
    free(x);
}

static void test_smart_goldens(const char *dir)
{
    static NcqSmart v3, v2, v1, fresh, again;
    size_t n3, n2, n1;
    uint8_t *g3 = read_file(dir, "smart-state-v3.bin", &n3);
    uint8_t *g2 = read_file(dir, "smart-state-v2.bin", &n2);
    uint8_t *g1 = read_file(dir, "smart-state-v1.bin", &n1);

    CHECK_EQ(ncq_smart_state_load(&v3, g3, n3), 0);
    check_saves_as(&v3, g3, n3, "smart-state-v3");
    check_damage_refused(g3, n3, "smart-state-v3");
    CHECK_EQ(ncq_smart_state_load(&v2, g2, n2), 0);
    CHECK(!memcmp(&v2, &v3, sizeof(v2)), "smart-state-v2 and -v3 hold "
          "the same state");
    check_saves_as(&v2, g3, n3, "smart-state-v2 saved again");
    /*
     * Each field where it was: the golden run, made again by this build,
     * gives the same state (a walk that saves and loads two fields in
     * swapped order still saves the same bytes; this catches it).  A
     * change to smart.c that changes what the run leaves shows here too:
     * then compare the fields by hand and say so.
     */
    golden_smart(&again);
    CHECK(!memcmp(&v2, &again, sizeof(again)),
          "smart-state-v2 loads as the golden run leaves the state");
    /* what the golden run left, as a check that the file holds it */
    CHECK_EQ(v2.power_cycles, 2);
    CHECK_EQ(v2.reported_unc, 1);
    CHECK_EQ(v2.npending, 1);
    CHECK_EQ(v2.pending[0], 4096);
    CHECK_EQ(v2.nerr, 1);
    CHECK_EQ(v2.ntests, 2);         /* the one a power cycle aborted */
    CHECK(v2.spindle_ns < v2.power_on_ns, "the spindle stopped a while");

    CHECK_EQ(ncq_smart_state_load(&v1, g1, n1), 0);
    /* v1 kept no spindle time: it turned whenever the drive was on */
    CHECK_EQ(v1.spindle_ns, v2.power_on_ns);
    v2.spindle_ns = v2.power_on_ns;
    v2.spindle_off = false;
    v2.spindle_stop_ns = 0;
    CHECK_EQ(ncq_smart_state_size(&v1), n3);
    {
        size_t n = ncq_smart_state_size(&v1);
        uint8_t *a = malloc(n), *b = malloc(n);

        ncq_smart_state_save(&v1, a);
        ncq_smart_state_save(&v2, b);
        CHECK(!memcmp(a, b, n), "smart-state-v1 loads as v2 with the "
              "spindle time of a v1 load");
        free(a);
        free(b);
    }

    /* damage: short, long, wrong magic, a digit from the future */
    CHECK_EQ(ncq_smart_state_load(&fresh, g2, n2 - 1), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_smart_state_load(&fresh, g1, n1 + 8), NCQ_ERR_PARSE);
    g2[7] = '3';
    CHECK_EQ(ncq_smart_state_load(&fresh, g2, n2), NCQ_ERR_PARSE);
    g2[0] = 'X';
    g2[7] = '2';
    CHECK_EQ(ncq_smart_state_load(&fresh, g2, n2), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_smart_state_load(&fresh, g2, 4), NCQ_ERR_PARSE);
    g3[8 + 3] = 4;                  /* v4, a later framing */
    CHECK_EQ(ncq_smart_state_load(&fresh, g3, n3), NCQ_ERR_PARSE);
    free(g1);
    free(g2);
    free(g3);
}

static int count_sectors(void *opaque, uint64_t lba, uint64_t n,
                         const uint8_t *data)
{
    uint64_t *sum = opaque;
    uint64_t i;

    for (i = 0; i < n * 512; i++) {
        *sum += data[i] * (lba + i / 512);
    }
    return 0;
}

/* Golden undo stream @name loads as golden_undo() and saves @want. */
static void check_undo_golden(NcqUndo *u, const uint8_t *g, size_t n,
                              const uint8_t *want, size_t wn,
                              const char *name)
{
    NcqRange all = { 0, UINT64_MAX / 2 };
    NcqUndo *golden = golden_undo();
    uint64_t got_sum = 0, want_sum = 0;
    char err[256];
    uint8_t *buf;

    CHECK(ncq_undo_load(u, g, n, err, sizeof(err)) == 0, "%s: %s", name,
          err);
    CHECK_EQ(ncq_undo_extents(u), 3);
    CHECK_EQ(ncq_undo_sectors(u), 9);
    ncq_undo_foreach(u, &all, 1, count_sectors, &got_sum);
    ncq_undo_foreach(golden, &all, 1, count_sectors, &want_sum);
    CHECK(got_sum == want_sum, "%s: the data of golden_undo()", name);
    CHECK_EQ(ncq_undo_save_size(u), wn);
    buf = malloc(wn);
    ncq_undo_save(u, buf);
    CHECK(!memcmp(buf, want, wn), "%s: saves undo-v2.bin's bytes", name);
    free(buf);
    ncq_undo_free(golden);
}

static void test_undo_golden(const char *dir)
{
    NcqUndo *u = ncq_undo_new();
    char err[256];
    size_t n, n2, i, refused = 0;
    uint8_t *g = read_file(dir, "undo-v1.bin", &n);
    uint8_t *g2 = read_file(dir, "undo-v2.bin", &n2), *x = malloc(n2);

    check_undo_golden(u, g2, n2, g2, n2, "undo-v2");
    check_undo_golden(u, g, n, g2, n2, "undo-v1");
    for (i = 0; i < n2; i++) {
        memcpy(x, g2, n2);
        x[i] ^= 0x20;
        refused += ncq_undo_load(u, x, n2, err, sizeof(err)) < 0;
        /* no byte at all: v1's empty stream */
        refused += i > 0 && ncq_undo_load(u, g2, i, err, sizeof(err)) < 0;
    }
    CHECK(refused == 2 * n2 - 1, "undo-v2: %zu of %zu cuts and damaged "
          "bytes refused", refused, 2 * n2 - 1);
    free(x);
    free(g2);
    /* damage: cut inside an extent's header, inside its data */
    CHECK(ncq_undo_load(u, g, 1557, err, sizeof(err)) < 0, "cut header");
    CHECK(strstr(err, "cut short at byte 1552 of 1557"), "%s", err);
    CHECK(ncq_undo_load(u, g, n - 1, err, sizeof(err)) < 0, "cut data");
    CHECK(strstr(err, "malformed at byte"), "%s", err);
    CHECK_EQ(ncq_undo_sectors(u), 0);
    free(g);
    ncq_undo_free(u);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-golden")) {
        write_golden(argv[2]);
        return ncq_test_done("saved (write golden)");
    }
    if (argc != 2) {
        fprintf(stderr, "usage: test-saved DATA_DIR | --write-golden DIR\n");
        return 2;
    }
    test_smart_goldens(argv[1]);
    test_undo_golden(argv[1]);
    return ncq_test_done("saved");
}
