/*
 * The IDENTIFY keys of a parameter file (sata_gen, ata_major, ata_minor,
 * buffer_kib): their defaults, the link and bus rate following each
 * other, and one clear error for each bad value.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define DRIVE "[drive]\nname = x\nmodel = X\nkind = hdd\ncapacity = 100\n" \
              "rpm = 6000\n"
#define REST  "[layout]\nheads = 1\nzone = 0 10 10\n[seek]\n" \
              "type = table\npoint = 1 1\npoint = 9 2\n" \
              "[cache]\nsegments = 3\nsegment_kib = 64\n" \
              "write_cache_kib = 32\n"

static NcqParams *parse_ok(const char *drive_keys)
{
    char text[1024], err[256] = "";
    NcqParams *p = NULL;

    snprintf(text, sizeof(text), DRIVE "%s" REST, drive_keys);
    CHECK_EQ(ncq_params_parse(text, "ok.ncqm", &p, err, sizeof(err)), 0);
    CHECK(p != NULL, "parsed [%s]: %s", drive_keys, err);
    return p;
}

static void expect_error(const char *drive_keys, const char *want)
{
    char text[1024], err[256] = "";
    NcqParams *p = (NcqParams *)1;

    snprintf(text, sizeof(text), DRIVE "%s" REST, drive_keys);
    CHECK_EQ(ncq_params_parse(text, "bad.ncqm", &p, err, sizeof(err)),
             NCQ_ERR_PARSE);
    CHECK(p == NULL, "no params on error");
    CHECK(strstr(err, want) != NULL, "'%s' missing in '%s'", want, err);
    CHECK(strchr(err, '\n') == NULL, "one line: '%s'", err);
}

/* Without the keys: ATA/ATAPI-7, the link the bus needs, the cache. */
static void test_defaults(void)
{
    NcqParams *p = parse_ok("");

    if (p) {
        CHECK_EQ(p->ata_major, 7);
        CHECK_EQ(p->ata_minor, 0x001d);
        CHECK_EQ(p->bus_bytes_per_s, 300000000);  /* bus_mb_s default */
        CHECK_EQ(p->sata_gen, 2);
        CHECK_EQ(p->buffer_sectors, (3 * 64 + 32) * 2);
        ncq_params_free(p);
    }
    p = parse_ok("bus_mb_s = 5.1\n");       /* a DiskSim drive's bulk rate */
    if (p) {
        CHECK_EQ(p->sata_gen, 1);
        CHECK_EQ(p->bus_bytes_per_s, 5100000);
        ncq_params_free(p);
    }
    p = parse_ok("bus_mb_s = 300.001\n");
    if (p) {
        CHECK_EQ(p->sata_gen, 3);
        ncq_params_free(p);
    }
}

/* Given keys are kept; sata_gen alone sets the bus to the link's rate. */
static void test_given(void)
{
    NcqParams *p = parse_ok("sata_gen = 1\nata_major = 8\n"
                            "ata_minor = 0x0107\nbuffer_kib = 16384\n");

    if (p) {
        CHECK_EQ(p->sata_gen, 1);
        CHECK_EQ(p->bus_bytes_per_s, 150000000);
        CHECK_EQ(p->ata_major, 8);
        CHECK_EQ(p->ata_minor, 0x0107);
        CHECK_EQ(p->buffer_sectors, 32768);
        ncq_params_free(p);
    }
    p = parse_ok("sata_gen = 3\nbus_mb_s = 4.83\n");
    if (p) {
        CHECK_EQ(p->sata_gen, 3);
        CHECK_EQ(p->bus_bytes_per_s, 4830000);    /* kept: the drive's own */
        ncq_params_free(p);
    }
    CHECK_EQ(ncq_sata_link_bytes_per_s(2), 300000000);
    p = parse_ok("sata_gen = 3\nata_major = 12\nbuffer_kib = 0\n");
    if (p) {
        CHECK_EQ(p->ata_major, 12);             /* ACS-5 */
        CHECK_EQ(p->buffer_sectors, 0);         /* word 21 not reported */
        ncq_params_free(p);
    }
    CHECK_EQ(ncq_sata_link_bytes_per_s(4), 0);
}

static void test_errors(void)
{
    expect_error("sata_gen = 2\nbus_mb_s = 540\n",
                 "bus_mb_s 540.000 is above the SATA Gen2 link's 300 MB/s; "
                 "lower bus_mb_s or raise sata_gen");
    expect_error("bus_mb_s = 601\n", "above the SATA Gen3 link's 600 MB/s");
    expect_error("sata_gen = 0\n", "sata_gen must be 1..3 (SATA link, 1, "
                 "2, 3 = 1.5, 3.0, 6.0 Gb/s");
    expect_error("sata_gen = 4\n", "sata_gen must be 1..3 (");
    expect_error("ata_major = 3\n", "ata_major must be 4..12 (IDENTIFY "
                 "word 80, newest standard (7 = ATA/ATAPI-7");
    expect_error("ata_major = 13\n", "ata_major must be 4..12");
    expect_error("ata_minor = 29\n", "key 'ata_minor': expected a "
                 "hexadecimal code such as 0x001d");
    expect_error("ata_minor = 0x1g\n", "expected a hexadecimal code");
    expect_error("ata_minor = 0x10000\n", "expected a 16-bit code");
    expect_error("ata_minor = 0xffff\n", "ata_minor must be 0x0000..0xfffe "
                 "hex (IDENTIFY word 81, minor version code; 0xffff would "
                 "mean not reported");
    expect_error("buffer_kib = 32767.5\n",
                 "buffer_kib must be 0..32767 KiB (IDENTIFY word 21, 0: not "
                 "reported");
}

/* Every built-in model: a valid link that carries its bus rate. */
static void test_builtins(void)
{
    char names[4096], *save = NULL, *n;

    snprintf(names, sizeof(names), "%s", ncq_params_builtin_names());
    for (n = strtok_r(names, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
        NcqParams *p = ncq_params_builtin(n);

        CHECK(p != NULL, "builtin %s", n);
        if (!p) {
            continue;
        }
        CHECK(p->bus_bytes_per_s <= ncq_sata_link_bytes_per_s(p->sata_gen),
              "%s: bus within its link", n);
        /* 0 only where the file says the drive does not report it */
        CHECK(p->buffer_sectors > 0 || !strcmp(n, "seagate-exos-x18") ||
              !strcmp(n, "seagate-st8000as0002") ||
              !strcmp(n, "wd-hc620"),
              "%s: buffer", n);
        ncq_params_free(p);
    }
    {
        NcqParams *p = ncq_params_builtin("st3400620as");

        if (p) {
            CHECK_EQ(p->sata_gen, 2);
            CHECK_EQ(p->ata_major, 7);
            CHECK_EQ(p->buffer_sectors, 32768);   /* 16 MB */
            ncq_params_free(p);
        }
        p = ncq_params_builtin("seagate-exos-x18");
        if (p) {
            CHECK_EQ(p->sata_gen, 3);
            CHECK_EQ(p->ata_major, 11);
            CHECK_EQ(p->buffer_sectors, 0);
            CHECK(p->cdl, "seagate-exos-x18 declares CDL");
            ncq_params_free(p);
        }
    }
}

int main(void)
{
    test_defaults();
    test_given();
    test_errors();
    test_builtins();
    return ncq_test_done("test-link");
}
