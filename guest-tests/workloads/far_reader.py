"""A far reader among near readers (scenario 2, Stanovich et al. 2008):
`near` synchronous 4 KiB random readers on the lowest 20 % of the LBAs and
one on the highest 20 %.  A drive that picks the shortest positioning
time first never chooses the far read on its merits; only the drive's
starvation time-out (or a scheduler that limits reordering) serves it.

Metric that matters: the far reader's worst case (max latency) and the
forced time-outs in the device trace (reason "timeout").
"""

NAME = "far-reader"
METRIC = "the far reader's max latency and the forced time-outs"
PARAMS = {"near": 20, "duration": 10}


def fio(p):
    return f"""[near]
direct=1
ioengine=psync
rw=randread
bs=4k
offset=0
size=20%
numjobs={p['near']}
time_based=1
runtime={p['duration']}s
[far]
direct=1
ioengine=psync
rw=randread
bs=4k
offset=80%
size=20%
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-far
"""
