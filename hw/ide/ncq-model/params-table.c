/*
 * ncq-model: the parameter table (include/hw/ide/ncq-params.h) as rows,
 * and a stored value in a file's units.  params.c parses, defaults and
 * checks from the rows, state.c fingerprints them, params-doc.c prints
 * them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ncq-int.h"

_Static_assert(sizeof(NcqKind) == 4 && sizeof(NcqPolicy) == 4 &&
               sizeof(NcqSeekType) == 4, "enum rows are read as uint32_t");

#define NCQ_ROW(ctype, field, dim, sec, key, kt, unit, def, lo, hi, flags, \
                fp, doc) \
    { #sec, #key, NCQ_KT_##kt, offsetof(NcqParams, field), \
      sizeof(((NcqParams *)0)->field), unit, def, lo, hi, flags, fp, doc, \
      #field, _Alignof(ctype) },
#define NCQ_KEY_ROW(sec, key, kt, lval, unit, doc) \
    { #sec, #key, NCQ_KT_##kt, offsetof(NcqParams, lval), \
      sizeof(((NcqParams *)0)->lval), unit, "", 0, NCQ_PB_MAX, 0, 0, doc, \
      NULL, 1 },
#define NCQ_FIELD_ROW(ctype, field, dim, doc) \
    { NULL, NULL, NCQ_KT_U32, offsetof(NcqParams, field), \
      sizeof(((NcqParams *)0)->field), "", "", 0, NCQ_PB_MAX, 0, 0, doc, \
      #field, _Alignof(ctype) },

/* ncq-params.h's list, in its order: keys, and fields without a key. */
const NcqParamRow ncq_param_table[] = {
    NCQ_PARAMS(NCQ_ROW, NCQ_KEY_ROW, NCQ_FIELD_ROW)
};

#define NCQ_NROWS (sizeof(ncq_param_table) / sizeof(ncq_param_table[0]))

_Static_assert(NCQ_NROWS <= NCQ_PARAM_MAX_ROWS,
               "raise NCQ_PARAM_MAX_ROWS (ncq-int.h)");

const size_t ncq_param_table_len = NCQ_NROWS;

const NcqParamRow *ncq_param_rows(size_t *n)
{
    *n = NCQ_NROWS;
    return ncq_param_table;
}

static const char *const ncq_sections[] = { NCQ_PARAM_SECTIONS };

#define NCQ_NSECTIONS (sizeof(ncq_sections) / sizeof(ncq_sections[0]))

const char *ncq_param_section(size_t i)
{
    return i < NCQ_NSECTIONS ? ncq_sections[i] : NULL;
}

/* @v / 10^@digits with its fraction, trailing zeros dropped. */
void ncq_fixed_text(uint64_t v, unsigned digits, char *buf, size_t len)
{
    uint64_t scale = 1;
    unsigned i;
    size_t n;

    for (i = 0; i < digits; i++) {
        scale *= 10;
    }
    n = snprintf(buf, len, "%" PRIu64, v / scale);
    if (v % scale && n + digits + 1 < len) {
        snprintf(buf + n, len - n, ".%0*" PRIu64, (int)digits, v % scale);
        n = strlen(buf);
        while (buf[n - 1] == '0') {
            buf[--n] = 0;
        }
    }
}

void ncq_param_format_raw(const NcqParamRow *k, uint64_t v, char *buf,
                          size_t len)
{
    switch (k->type) {
    case NCQ_KT_MS:
        ncq_fixed_text(v, 6, buf, len);
        break;
    case NCQ_KT_US:
    case NCQ_KT_MILLI:
        ncq_fixed_text(v, 3, buf, len);
        break;
    case NCQ_KT_FRAC:
        ncq_fixed_text(v, 9, buf, len);
        break;
    case NCQ_KT_MBPS:
        ncq_fixed_text(v, 6, buf, len);
        break;
    case NCQ_KT_KIB_SECT:
        ncq_fixed_text(v * 5, 1, buf, len);
        break;
    case NCQ_KT_KIB_BYTES:
        ncq_fixed_text(v * 1000 / 1024, 3, buf, len);
        break;
    case NCQ_KT_HEX16:
        snprintf(buf, len, "0x%04" PRIx64, v);
        break;
    case NCQ_KT_BOOL:
        snprintf(buf, len, "%s", v ? "on" : "off");
        break;
    case NCQ_KT_KIND:
        snprintf(buf, len, "%s", v == NCQ_KIND_SSD ? "ssd" : "hdd");
        break;
    case NCQ_KT_SEEKTYPE:
        snprintf(buf, len, "%s", v == NCQ_SEEK_TABLE ? "table" : "twopart");
        break;
    case NCQ_KT_POLICY:
        snprintf(buf, len, "%s", ncq_policy_name((NcqPolicy)v));
        break;
    default:
        snprintf(buf, len, "%" PRIu64, v);
        break;
    }
}
