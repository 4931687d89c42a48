"""Random readers at a given depth: the Table V set-up of Yu et al. 2010
(scenario 1), 4 KiB random reads, O_DIRECT, over the whole disk, here
through libaio with `depth` reads in flight per reader.

Metric that matters: throughput (IOPS) and how it grows with depth, and
the price paid for it in the latency tail (p99, max) and the delay count
(reads overtaken by later ones under the drive's SPTF).
"""

NAME = "random-readers"
METRIC = "IOPS, and the latency tail (p99, max) and delay count it costs"
PARAMS = {"depth": 32, "readers": 1, "duration": 10}


def fio(p):
    return f"""[reader]
direct=1
ioengine=libaio
rw=randread
bs=4k
iodepth={p['depth']}
numjobs={p['readers']}
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-reader
"""
