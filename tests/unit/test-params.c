/*
 * Parameter files: every built-in parses and validates; malformed text
 * gives an error naming the file, the line and the key, and no params.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

static void expect_error(const char *text, const char *want1,
                         const char *want2)
{
    NcqParams *p = (NcqParams *)1;
    char err[256] = "";
    int rc = ncq_params_parse(text, "bad.ncqm", &p, err, sizeof(err));

    CHECK(rc == NCQ_ERR_PARSE, "rc %d for [%s]", rc, text);
    CHECK(p == NULL, "no params on error");
    CHECK(strstr(err, "bad.ncqm") != NULL, "file missing in '%s'", err);
    CHECK(strstr(err, want1) != NULL, "'%s' missing in '%s'", want1, err);
    if (want2) {
        CHECK(strstr(err, want2) != NULL, "'%s' missing in '%s'", want2,
              err);
    }
}

#define HEAD "[drive]\nname = x\nmodel = X\nkind = hdd\ncapacity = 100\n" \
             "rpm = 6000\n[layout]\nheads = 1\nzone = 0 10 10\n" \
             "[seek]\ntype = table\npoint = 1 1\npoint = 9 2\n"

/* Zone options fill the zone; zones without them take the global keys. */
static void test_zone_options(void)
{
    NcqParams *p;
    char err[256];

    CHECK_EQ(ncq_params_parse(
        HEAD "[layout]\nspare_per_track = 1\ntrack_skew = 0.25\n"
        "zone = 10 5 10 track_skew=2.5 cyl_skew=5 first=1 front=3 "
        "spares=4/2cyl\nzone = 15 5 10 spares=6/zone\n", "ok.ncqm", &p,
        err, sizeof(err)), 0);
    CHECK(p != NULL, "parsed: %s", err);
    if (!p) {
        return;
    }
    CHECK_EQ(p->nzones, 3);
    CHECK_EQ(p->zones[0].spares, 1);           /* spare_per_track */
    CHECK_EQ(p->zones[0].spare_tracks, 1);
    CHECK_EQ(p->zones[0].track_skew_ppb, 250000000);
    CHECK(!p->zones[0].own_skew, "zone 0 takes the global skews");
    CHECK(p->zones[1].own_skew, "zone 1 has its own");
    CHECK_EQ(p->zones[1].track_skew_ppb, 250000000);  /* 2.5 of 10 */
    CHECK_EQ(p->zones[1].cyl_skew_ppb, 500000000);
    CHECK_EQ(p->zones[1].first_ppb, 100000000);
    CHECK_EQ(p->zones[1].front, 3);
    CHECK_EQ(p->zones[1].spares, 4);
    CHECK_EQ(p->zones[1].spare_tracks, 2);     /* 2 cylinders x 1 head */
    CHECK_EQ(p->zones[2].spares, 6);
    CHECK_EQ(p->zones[2].spare_tracks, 0);     /* the whole zone */
    CHECK_EQ(p->zones[2].track_skew_ppb, 250000000);
    ncq_params_free(p);
    /* DiskSim's segments of an odd count of blocks: 281 = 140.5 KiB */
    CHECK_EQ(ncq_params_parse(HEAD "[cache]\nsegment_kib = 140.5\n",
                              "ok.ncqm", &p, err, sizeof(err)), 0);
    CHECK(p && p->segment_sectors == 281, "half KiB kept");
    ncq_params_free(p);
}

static void test_errors(void)
{
    NcqParams *p;
    char err[256];

    expect_error(HEAD "bogus = 1\n", ":14:", "'bogus'");
    expect_error(HEAD "[cache]\nsegments = many\n", ":15:", "'segments'");
    expect_error("[drive]\nname = a\nname = b\n", ":3:", "'name'");
    expect_error("[drive]\nname = a\nrpm = -5\n", ":3:", "'rpm'");
    expect_error("[drive]\nname = a\nrpm\n", ":3:", "key = value");
    expect_error("[drive\nname = a\n", ":1:", "section");
    expect_error("[drive]\nkind = tape\n", ":2:", "'kind'");
    expect_error("[drive]\nname = x\nmodel = X\nkind = hdd\n",
                 "'drive.capacity'", "missing");
    expect_error(HEAD "[layout]\ntrack_skew = 1.5\n", ":15:",
                 "'track_skew'");
    expect_error(HEAD "[seek]\npoint = 5 1\n", ":15:", "'point'");
    expect_error(HEAD "[firmware]\npolicy = elevator\n", ":15:", "'policy'");
    expect_error(HEAD "[drive]\nqueue_depth = 40\n", "queue_depth", NULL);
    expect_error("[drive]\nname = x\nmodel = X\nkind = hdd\n"
                 "capacity = 100000\nrpm = 6000\n[layout]\nheads = 1\n"
                 "zone = 0 10 10\n[seek]\ntype = table\npoint = 1 1\n"
                 "point = 9 2\n", "less than capacity", NULL);
    /* zone options (DiskSim's per-zone skews and sparing) */
    expect_error(HEAD "[layout]\nzone = 10 5 10 tilt=3\n", ":15:",
                 "zone options are");
    expect_error(HEAD "[layout]\nzone = 10 5 10 spares=3/row\n", ":15:",
                 "spares=N/track");
    expect_error(HEAD "[layout]\nzone = 10 5 10 spares=3/0cyl\n", ":15:",
                 "spares=N/track");
    expect_error(HEAD "[layout]\nzone = 10 5 10 track_skew=10\n", ":15:",
                 "below the zone's spt");
    expect_error(HEAD "[layout]\nzone = 10 5 10 front=x\n", ":15:",
                 "front=sectors");
    expect_error(HEAD "[layout]\nzone = 10 5 10 spares\n", ":15:",
                 "name=value");
    expect_error(HEAD "[layout]\nzone = 10 5 10 spares=10/track\n",
                 "zone 1 sectors per track out of range", NULL);
    expect_error(HEAD "[layout]\nzone = 10 5 10 spares=51/zone\n",
                 "zone 1 sectors per track out of range", NULL);
    expect_error(HEAD "[layout]\nzone = 10 5 10 front=51\n",
                 "zone 1 sectors per track out of range", NULL);
    CHECK_EQ(ncq_params_parse(HEAD, "ok.ncqm", &p, err, sizeof(err)), 0);
    CHECK(p && p->capacity == 100 && p->nzones == 1, "parsed");
    ncq_params_free(p);
    CHECK_EQ(ncq_params_load_file("/nonexistent/x.ncqm", &p, err,
                                  sizeof(err)), NCQ_ERR_IO);
    CHECK(strstr(err, "/nonexistent/x.ncqm") != NULL, "path in message");
}

static void test_builtins(void)
{
    const char *names = ncq_params_builtin_names();
    const char *want[] = {
        "st3400620as", "fujitsu-max3036rc", "maxtor-atlas10kv",
        "ibm-40k1044", "quantum-atlas10k", "seagate-cheetah9lp",
        "intel-530",
    };
    size_t i;

    CHECK(!strncmp(names, "st3400620as", 11), "default first: %s", names);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        NcqParams *p = ncq_params_builtin(want[i]);
        char err[256];

        CHECK(strstr(names, want[i]) != NULL, "%s listed", want[i]);
        CHECK(p != NULL, "%s parses", want[i]);
        if (!p) {
            continue;
        }
        CHECK_EQ(ncq_params_validate(p, err, sizeof(err)), 0);
        CHECK(!strcmp(p->name, want[i]), "name %s", p->name);
        CHECK(p->queue_depth == 32, "%s depth", want[i]);
        CHECK(p->model[0] != 0, "model string");
        ncq_params_free(p);
    }
    /* every built-in in the list parses and validates */
    {
        char list[512], *tok, *save = NULL;
        int count = 0;

        snprintf(list, sizeof(list), "%s", names);
        for (tok = strtok_r(list, ", ", &save); tok;
             tok = strtok_r(NULL, ", ", &save)) {
            NcqParams *p = ncq_params_builtin(tok);
            char err[256];

            CHECK(p && ncq_params_validate(p, err, sizeof(err)) == 0,
                  "built-in %s", tok);
            ncq_params_free(p);
            count++;
        }
        CHECK(count >= 7, "%d built-ins", count);
    }
    CHECK(ncq_params_builtin("nope") == NULL, "unknown");
    CHECK(ncq_params_builtin(NULL) == NULL, "NULL");
    {
        NcqParams *p = ncq_params_builtin("st3400620as");

        CHECK(p && p->capacity == 781422768ULL && p->rpm == 7200 &&
              !strcmp(p->model, "ST3400620AS") && p->kind == NCQ_KIND_HDD,
              "st3400620as facts");
        CHECK(p && p->starvation_timeout_ns == 2000000000LL, "timeout");
        ncq_params_free(p);
        p = ncq_params_builtin("fujitsu-max3036rc");
        CHECK(p && p->capacity == 71819496ULL && p->rpm == 15000 &&
              p->starvation_timeout_ns == 2030000000LL, "fujitsu facts");
        ncq_params_free(p);
        p = ncq_params_builtin("intel-530");
        CHECK(p && p->kind == NCQ_KIND_SSD && p->channels == 8 &&
              p->rpm == 1, "intel facts");
        ncq_params_free(p);
    }
}

static void test_file(void)
{
    char path[] = "/tmp/ncq-test-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    NcqParams *p;
    char err[256];

    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) {
        return;
    }
    f = fdopen(fd, "w");
    fputs(ncq_params_builtin_text("st3400620as"), f);
    fputs("[extra]\nfoo = 1\n", f);
    fclose(f);
    CHECK_EQ(ncq_params_load_file(path, &p, err, sizeof(err)),
             NCQ_ERR_PARSE);
    f = fopen(path, "w");
    fputs(ncq_params_builtin_text("st3400620as"), f);
    fclose(f);
    CHECK_EQ(ncq_params_load_file(path, &p, err, sizeof(err)), 0);
    CHECK(p && p->capacity == 781422768ULL, "file load");
    ncq_params_free(p);
    remove(path);
}

/* Mutated parameter texts: an error or a usable model, never a crash. */
static void test_mutations(void)
{
    const char *names[] = { "st3400620as", "quantum-atlas10k", "intel-530" };
    const char junk[] = "0123456789.=#[]\n -xz";
    uint64_t rs = 11;
    int k, ok = 0;

    for (k = 0; k < 3000; k++) {
        const char *base = ncq_params_builtin_text(names[k % 3]);
        size_t len = strlen(base);
        char *t = malloc(len + 1);
        NcqParams *p;
        char err[256];
        int j, edits = 1 + ncq_test_rng(&rs) % 4;

        memcpy(t, base, len + 1);
        for (j = 0; j < edits; j++) {
            size_t pos = ncq_test_rng(&rs) % len;

            t[pos] = junk[ncq_test_rng(&rs) % (sizeof(junk) - 1)];
        }
        if (ncq_params_parse(t, "mut.ncqm", &p, err, sizeof(err)) == 0) {
            NcqModel *m = ncq_model_new(p, 1, err, sizeof(err));

            if (m) {
                NcqCompletion c[8];
                int i;

                for (i = 0; i < 8; i++) {
                    ncq_test_submit(m, i, i % 2 ? NCQ_OP_WRITE : NCQ_OP_READ,
                                    ncq_test_rng(&rs) % p->capacity, 8, 0);
                }
                ncq_test_drain(m, c, 8);
                ncq_model_free(m);
                ok++;
            }
            ncq_params_free(p);
        } else {
            CHECK(strstr(err, "mut.ncqm") != NULL, "file in '%s'", err);
        }
        free(t);
    }
    printf("mutations: %d of 3000 still gave a usable model\n", ok);
}

int main(void)
{
    test_mutations();
    test_errors();
    test_zone_options();
    test_builtins();
    test_file();
    return ncq_test_done("test-params");
}
