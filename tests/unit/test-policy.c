/*
 * The policy table (policy.c): every row complete, the names and aliases
 * parse back to their row, and NCQ_POLICY_NAMES, which messages and help
 * texts print, lists the rows in order.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"
#include "ncq-int.h"

static void test_rows_complete(void)
{
    int i, j;

    for (i = 0; i < NCQ_POLICY__MAX; i++) {
        const NcqPolicyOps *p = &ncq_policy_ops[i];

        CHECK(p->name && p->pick && p->destage,
              "policy %d lacks a name, a pick or a destage choice", i);
        for (j = 0; p->name && j < i; j++) {
            CHECK(strcmp(p->name, ncq_policy_ops[j].name) != 0,
                  "policies %d and %d are both '%s'", j, i, p->name);
        }
    }
}

static void test_names_parse_back(void)
{
    const char *const *a;
    NcqPolicy got;
    int i;

    for (i = 0; i < NCQ_POLICY__MAX; i++) {
        CHECK_EQ(ncq_policy_from_name(ncq_policy_ops[i].name, &got), 0);
        CHECK_EQ(got, i);
        CHECK(!strcmp(ncq_policy_name(i), ncq_policy_ops[i].name), "%s",
              ncq_policy_name(i));
        for (a = ncq_policy_ops[i].aliases; a && *a; a++) {
            CHECK_EQ(ncq_policy_from_name(*a, &got), 0);
            CHECK(got == i, "alias '%s' gives policy %d, not %d", *a,
                  (int)got, i);
        }
    }
    CHECK_EQ(ncq_policy_from_name("lifo", &got), NCQ_ERR_INVAL);
    CHECK_EQ(ncq_policy_from_name("", &got), NCQ_ERR_INVAL);
    CHECK(!strcmp(ncq_policy_name(NCQ_POLICY__MAX), "?"), "out of range");
}

/* "a, b, c or d", as NCQ_POLICY_NAMES writes them */
static void test_names_text(void)
{
    char want[256] = "";
    int i;

    for (i = 0; i < NCQ_POLICY__MAX; i++) {
        if (i) {
            strcat(want, i == NCQ_POLICY__MAX - 1 ? " or " : ", ");
        }
        strcat(want, ncq_policy_ops[i].name);
    }
    CHECK(!strcmp(want, NCQ_POLICY_NAMES),
          "NCQ_POLICY_NAMES is \"%s\"; the table says \"%s\"",
          NCQ_POLICY_NAMES, want);
}

int main(void)
{
    test_rows_complete();
    test_names_parse_back();
    test_names_text();
    return ncq_test_done("policy");
}
