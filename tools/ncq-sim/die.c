/*
 * ncq-sim: how every part reports an error it cannot go on from.
 *
 * A leaf of ncq-sim's files: each part calls down to it, none calls up to
 * main (tests/repo/test_code_shape.py checks that ncq-sim's files call
 * each other in no circle).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include "ncq-sim.h"

void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "ncq-sim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}
