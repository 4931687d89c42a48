"""A sequential writer with fsync against random readers: one buffered
writer of 64 KiB blocks calling fsync every `fsync` writes (a database
log, say) in the upper half of the disk, beside `readers` synchronous
4 KiB O_DIRECT random readers in the lower half.  The flushes and the
write-back compete with the reads for the drive.

Metric that matters: the readers' latency tail (p99, max) and the
writer's throughput.
"""

NAME = "fsync-writer"
METRIC = "the random readers' p99 and max latency, and the writer's MB/s"
PARAMS = {"readers": 4, "fsync": 8, "duration": 10}


def fio(p):
    # size bounds what the writer dirties on the host's qcow2: the time-
    # based job wraps round within it.
    return f"""[writer]
direct=0
ioengine=psync
rw=write
bs=64k
fsync={p['fsync']}
offset=50%
size=128m
time_based=1
runtime={p['duration']}s
[reader]
direct=1
ioengine=psync
rw=randread
bs=4k
offset=0
size=50%
numjobs={p['readers']}
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-reader
"""
