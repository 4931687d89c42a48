/*
 * ncq-fit-probe: capacity and what the drive says about itself
 * (IDENTIFY DEVICE: model, firmware, NCQ depth, whether the write cache
 * is on, nominal rotation rate).  The fit takes the write cache state
 * from here; everything timed is measured by the other files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "probe.h"

/* An ATA string: two characters per word, high byte first, blank-padded */
static void ata_string(const uint16_t *id, int first, int words, char *out)
{
    int n = 0;

    for (int i = 0; i < words; i++) {
        char c[2] = { (char)(id[first + i] >> 8), (char)(id[first + i]) };

        for (int k = 0; k < 2; k++) {
            /* keep the JSON simple: printable ASCII without quotes */
            out[n++] = c[k] >= 32 && c[k] < 127 && c[k] != '"' &&
                       c[k] != '\\' ? c[k] : ' ';
        }
    }
    while (n > 0 && out[n - 1] == ' ') {
        n--;
    }
    out[n] = 0;
    while (out[0] == ' ') {
        memmove(out, out + 1, strlen(out));
    }
}

double probe_identity_plan(Probe *p)
{
    (void)p;
    return 0.1;
}

int probe_identity(Probe *p)
{
    uint16_t id[256];
    char model[41], fw[9], serial[21];
    uint64_t lba48 = 0;

    probe_phase_start(p, "identify", probe_identity_plan(p));
    fprintf(p->out, "{\"type\":\"capacity\",\"sectors\":%llu}\n",
            (unsigned long long)p->sectors);
    if (probe_identify(p, id) != 0) {
        probe_skipped(p, "identify", "IDENTIFY DEVICE through ATA "
                      "PASS-THROUGH failed (not an ATA drive, or a bridge "
                      "that does not pass it)");
        probe_phase_end(p);
        return 0;
    }
    ata_string(id, 27, 20, model);
    ata_string(id, 23, 4, fw);
    ata_string(id, 10, 10, serial);
    for (int i = 3; i >= 0; i--) {
        lba48 = lba48 << 16 | id[100 + i];
    }
    fprintf(p->out, "{\"type\":\"identify\",\"model\":\"%s\","
            "\"firmware\":\"%s\",\"serial_present\":%s,"
            "\"lba48_sectors\":%llu,\"ncq\":%s,\"ncq_depth\":%d,"
            "\"ncq_prio\":%s,\"write_cache_supported\":%s,"
            "\"write_cache_enabled\":%s,\"rotation_rate\":%d,"
            "\"words\":[", model, fw, serial[0] ? "true" : "false",
            (unsigned long long)lba48, id[76] & (1 << 8) ? "true" : "false",
            (id[75] & 31) + 1, id[76] & (1 << 12) ? "true" : "false",
            id[82] & (1 << 5) ? "true" : "false",
            id[85] & (1 << 5) ? "true" : "false", id[217]);
    for (int i = 0; i < 256; i++) {
        fprintf(p->out, "%s%u", i ? "," : "", id[i]);
    }
    fprintf(p->out, "]}\n");
    probe_phase_end(p);
    return 0;
}
