/*
 * The one parser of numbers and durations (num.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

static int64_t dur(const char *s, int64_t bare_unit_ns, int *ret)
{
    int64_t ns = -1;

    *ret = ncq_parse_duration(s, strlen(s), bare_unit_ns, &ns);
    return ns;
}

static void test_uint(void)
{
    uint64_t v = 0;

    CHECK_EQ(ncq_parse_uint("4096", 4, UINT64_MAX, &v), 0);
    CHECK_EQ(v, 4096);
    CHECK_EQ(ncq_parse_uint("0x10", 4, UINT64_MAX, &v), 0);
    CHECK_EQ(v, 16);
    CHECK_EQ(ncq_parse_uint("0XfF", 4, UINT64_MAX, &v), 0);
    CHECK_EQ(v, 255);
    /* only @len characters count */
    CHECK_EQ(ncq_parse_uint("12+8", 2, UINT64_MAX, &v), 0);
    CHECK_EQ(v, 12);
    CHECK_EQ(ncq_parse_uint("18446744073709551615", 20, UINT64_MAX, &v), 0);
    CHECK(v == UINT64_MAX, "UINT64_MAX read back as %" PRIu64, v);
    CHECK_EQ(ncq_parse_uint("18446744073709551616", 20, UINT64_MAX, &v),
             NCQ_ERR_RANGE);
    CHECK_EQ(ncq_parse_uint("4294967296", 10, UINT32_MAX, &v),
             NCQ_ERR_RANGE);
    CHECK_EQ(ncq_parse_uint("", 0, UINT64_MAX, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_uint("0x", 2, UINT64_MAX, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_uint("-1", 2, UINT64_MAX, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_uint("12a", 3, UINT64_MAX, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_uint(" 1", 2, UINT64_MAX, &v), NCQ_ERR_PARSE);
}

static void test_decimal(void)
{
    uint64_t v = 0;

    CHECK_EQ(ncq_parse_decimal("8.5", 3, 9, &v), 0);
    CHECK_EQ(v, 8500000000LL);
    CHECK_EQ(ncq_parse_decimal("0.25", 4, 3, &v), 0);
    CHECK_EQ(v, 250);
    CHECK_EQ(ncq_parse_decimal("7", 1, 0, &v), 0);
    CHECK_EQ(v, 7);
    /* digits below the resolution are dropped, not rounded */
    CHECK_EQ(ncq_parse_decimal("1.2349", 6, 3, &v), 0);
    CHECK_EQ(v, 1234);
    CHECK_EQ(ncq_parse_decimal("0.1234567891", 12, 9, &v), 0);
    CHECK_EQ(v, 123456789);
    CHECK_EQ(ncq_parse_decimal(".5", 2, 9, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_decimal("5.", 2, 9, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_decimal("1.2.3", 5, 9, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_decimal("-0.5", 4, 9, &v), NCQ_ERR_PARSE);
    CHECK_EQ(ncq_parse_decimal("1", 1, 10, &v), NCQ_ERR_INVAL);
    CHECK_EQ(ncq_parse_decimal("18446744073709551615", 20, 1, &v),
             NCQ_ERR_RANGE);
}

static void test_duration(void)
{
    int ret;

    CHECK_EQ(dur("2s", NCQ_NS_PER_MS, &ret), 2000000000LL);
    CHECK_EQ(ret, 0);
    CHECK_EQ(dur("2030ms", NCQ_NS_PER_MS, &ret), 2030000000LL);
    CHECK_EQ(dur("500us", NCQ_NS_PER_MS, &ret), 500000);
    CHECK_EQ(dur("100ns", NCQ_NS_PER_MS, &ret), 100);
    CHECK_EQ(dur("1.5ms", NCQ_NS_PER_MS, &ret), 1500000);
    CHECK_EQ(ret, 0);
    /* a bare number is in the caller's unit */
    CHECK_EQ(dur("50", NCQ_NS_PER_MS, &ret), 50000000);
    CHECK_EQ(dur("50", 1, &ret), 50);
    CHECK_EQ(dur("0.5", 1000000000, &ret), 500000000);
    CHECK_EQ(dur("0", NCQ_NS_PER_MS, &ret), 0);
    CHECK_EQ(ret, 0);
    CHECK_EQ(dur("9223372036854775807ns", 1, &ret), INT64_MAX);
    CHECK_EQ(ret, 0);
    dur("9223372036854775808ns", 1, &ret);
    CHECK_EQ(ret, NCQ_ERR_RANGE);
    dur("9223372037s", 1, &ret);
    CHECK_EQ(ret, NCQ_ERR_RANGE);
    /* a part of a nanosecond is refused, not dropped */
    dur("0.5ns", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("1.0000000001s", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("0.0000005", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    CHECK_EQ(dur("0.000001", NCQ_NS_PER_MS, &ret), 1);
    CHECK_EQ(ret, 0);
    CHECK_EQ(dur("1.000000001s", NCQ_NS_PER_MS, &ret), 1000000001LL);
    CHECK_EQ(ret, 0);
    dur("2 s", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("2min", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("ms", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("-1ms", NCQ_NS_PER_MS, &ret);
    CHECK_EQ(ret, NCQ_ERR_PARSE);
    dur("1", 0, &ret);
    CHECK_EQ(ret, NCQ_ERR_INVAL);
}

int main(void)
{
    test_uint();
    test_decimal();
    test_duration();
    return ncq_test_done("num");
}
