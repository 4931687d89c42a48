"""A buffered write-back burst beside a latency-sensitive reader: one job
writes `burst_mb` MiB through the page cache in 1 MiB blocks and fsyncs
at the end, while one synchronous 4 KiB O_DIRECT random reader runs for
the whole duration.  Write-back floods the drive's queue with large
writes; the reader's reads wait behind them unless the scheduler
prefers reads (mq-deadline, bfq) or the drive does.

Metric that matters: the reader's worst case (max) and p99 latency
during the burst.
"""

NAME = "writeback-burst"
METRIC = "the reader's max and p99 latency during the burst"
PARAMS = {"burst_mb": 128, "duration": 10}


def fio(p):
    return f"""[burst]
direct=0
ioengine=psync
rw=write
bs=1m
offset=50%
size={p['burst_mb']}m
end_fsync=1
[reader]
direct=1
ioengine=psync
rw=randread
bs=4k
offset=0
size=50%
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-reader
"""
