/*
 * ncq-model: the one parser of numbers and durations.
 *
 * Parameter files, fault rules, the device's properties and ncq-sim all
 * read numbers through these three functions, so "2s" or "0x10" means the
 * same everywhere.  Integers only: the model has no floating point, so a
 * decimal is read as a fixed-point integer.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "ncq-int.h"

#define NCQ_NS_PER_S 1000000000ULL

static bool ncq_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int ncq_hex_digit(char c)
{
    if (ncq_is_digit(c)) {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

int ncq_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    unsigned base = 10;
    uint64_t v = 0;
    bool over = false;
    size_t i = 0;

    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i == len) {
        return NCQ_ERR_PARSE;
    }
    for (; i < len; i++) {
        int d = ncq_hex_digit(s[i]);

        if (d < 0 || (unsigned)d >= base) {
            return NCQ_ERR_PARSE;
        }
        over |= v > (UINT64_MAX - d) / base;
        v = v * base + d;
    }
    if (over || v > max) {
        return NCQ_ERR_RANGE;
    }
    *out = v;
    return 0;
}

/* Integer part and nine fractional digits (truncated) of "123.456". */
static int ncq_parse_parts(const char *s, size_t len, uint64_t *ip,
                           uint64_t *frac9)
{
    uint64_t scale = NCQ_NS_PER_S;
    bool over = false;
    size_t i = 0;

    *ip = 0;
    *frac9 = 0;
    if (!len || !ncq_is_digit(s[0])) {
        return NCQ_ERR_PARSE;
    }
    for (; i < len && ncq_is_digit(s[i]); i++) {
        over |= *ip > (UINT64_MAX - (s[i] - '0')) / 10;
        *ip = *ip * 10 + (s[i] - '0');
    }
    if (i < len && s[i] == '.') {
        if (++i == len || !ncq_is_digit(s[i])) {
            return NCQ_ERR_PARSE;
        }
        for (; i < len && ncq_is_digit(s[i]); i++) {
            scale /= 10;
            *frac9 += (s[i] - '0') * scale;
        }
    }
    if (i != len) {
        return NCQ_ERR_PARSE;
    }
    return over ? NCQ_ERR_RANGE : 0;
}

int ncq_parse_decimal(const char *s, size_t len, unsigned frac,
                      uint64_t *out)
{
    uint64_t ip, frac9, mul = 1;
    unsigned i;
    int ret;

    if (frac > 9) {
        return NCQ_ERR_INVAL;
    }
    ret = ncq_parse_parts(s, len, &ip, &frac9);
    if (ret < 0) {
        return ret;
    }
    for (i = 0; i < frac; i++) {
        mul *= 10;
    }
    if (ip > (UINT64_MAX - mul) / mul) {
        return NCQ_ERR_RANGE;
    }
    *out = ip * mul + frac9 / (NCQ_NS_PER_S / mul);
    return 0;
}

/* Whether "123.456..." has a non-zero fractional digit past the ninth. */
static bool ncq_frac_beyond_ninth(const char *s, size_t len)
{
    const char *dot = memchr(s, '.', len);
    size_t i;

    if (!dot) {
        return false;
    }
    for (i = (size_t)(dot - s) + 10; i < len; i++) {
        if (s[i] != '0') {
            return true;
        }
    }
    return false;
}

int ncq_parse_duration(const char *s, size_t len, int64_t bare_unit_ns,
                       int64_t *ns)
{
    static const struct {
        const char *suffix;
        uint64_t ns;
    } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
        { "s", NCQ_NS_PER_S },
    };
    size_t num = 0, i;
    uint64_t unit = bare_unit_ns, ip, frac9, v;
    int ret;

    while (num < len && (ncq_is_digit(s[num]) || s[num] == '.')) {
        num++;
    }
    if (num < len) {
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            if (strlen(units[i].suffix) == len - num &&
                !strncmp(s + num, units[i].suffix, len - num)) {
                break;
            }
        }
        if (i == sizeof(units) / sizeof(units[0])) {
            return NCQ_ERR_PARSE;
        }
        unit = units[i].ns;
    }
    if (bare_unit_ns <= 0 || (uint64_t)bare_unit_ns > NCQ_NS_PER_S) {
        return NCQ_ERR_INVAL;
    }
    ret = ncq_parse_parts(s, num, &ip, &frac9);
    if (ret < 0) {
        return ret;
    }
    if (ip > (uint64_t)INT64_MAX / unit) {
        return NCQ_ERR_RANGE;
    }
    /*
     * frac9 < 10^9 and unit <= 10^9: the product fits in 64 bits.  A part
     * of a nanosecond is refused rather than dropped: "0.5ns" silently
     * becoming 0 would turn a delay into none.
     */
    if (frac9 * unit % NCQ_NS_PER_S || ncq_frac_beyond_ninth(s, num)) {
        return NCQ_ERR_PARSE;
    }
    v = ip * unit + frac9 * unit / NCQ_NS_PER_S;
    if (v > (uint64_t)INT64_MAX) {
        return NCQ_ERR_RANGE;
    }
    *ns = (int64_t)v;
    return 0;
}
