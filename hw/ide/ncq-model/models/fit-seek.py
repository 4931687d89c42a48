#!/usr/bin/env python3
# Helper used to choose seek-curve constants and layouts for the built-in
# models (docs/model.md).  Not part of the build.
#
# fit-seek.py CYLS X T1_MS TAVG_MS TFULL_MS [SPT_OUTER SPT_INNER ZONES]
# Solves t(d) = a + b*sqrt(d) (d < x), c + e*d (d >= x) for
#   t(1) = T1, t(CYLS-1) = TFULL, continuity at x, and mean over random
#   pairs of LBAs (cylinder density proportional to sectors per track when
#   zone figures are given, uniform otherwise) = TAVG.
# SPDX-License-Identifier: GPL-2.0-or-later
import math
import random
import sys


def main():
    cyl, x = int(sys.argv[1]), int(sys.argv[2])
    t1, tavg, tfull = map(float, sys.argv[3:6])
    if len(sys.argv) > 6:
        so, si, nz = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
        w = [so - (so - si) * min(nz - 1, c * nz // cyl) // max(1, nz - 1)
             for c in range(cyl)]
    else:
        w = [1] * cyl
    rnd = random.Random(1)
    cs = rnd.choices(range(cyl), weights=w, k=400000)
    ds = [abs(cs[i] - cs[i + 1]) for i in range(0, len(cs), 2)]
    n = len(ds)
    p1 = sum(1 for d in ds if 0 < d < x) / n
    s = sum(math.sqrt(d) for d in ds if 0 < d < x) / n
    p2 = sum(1 for d in ds if d >= x) / n
    dd = sum(d for d in ds if d >= x) / n
    # unknowns a, b, c, e
    rows = [[1, 1, 0, 0, t1],
            [0, 0, 1, cyl - 1, tfull],
            [1, math.sqrt(x), -1, -x, 0],
            [p1, s, p2, dd, tavg]]
    for i in range(4):
        piv = max(range(i, 4), key=lambda r: abs(rows[r][i]))
        rows[i], rows[piv] = rows[piv], rows[i]
        for r in range(4):
            if r != i:
                f = rows[r][i] / rows[i][i]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[i])]
    a, b, c, e = (rows[i][4] / rows[i][i] for i in range(4))
    print('a_ms = %.4f\nb_ms = %.5f\nx = %d\nc_ms = %.4f\ne_ms = %.8f'
          % (a, b, x, c, e))


if __name__ == '__main__':
    main()
