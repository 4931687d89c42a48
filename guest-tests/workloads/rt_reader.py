"""A real-time reader with NCQ priority among best-effort readers
(scenario 4): `be` libaio random readers `be_depth` deep keep the drive's
queue full while one reader of I/O class RT (fio prioclass=1) reads 4 KiB
at random, one at a time.  ncq_prio_enable is set to 1 so that libata
marks the RT reader's commands high priority (the drive may ignore the
bit: the built-in st3400620as does, like the real drive).

Metric that matters: the RT reader's latency (p99, max) against the
best-effort readers' throughput.
"""

NAME = "rt-reader"
METRIC = "the RT reader's p99 and max latency, beside the BE readers' IOPS"
PARAMS = {"be": 4, "be_depth": 7, "duration": 10}
SETUP = ("echo 1 > /sys/block/sda/device/ncq_prio_enable 2>/dev/null || "
         "echo 'ncq_prio_enable could not be set'",
         "echo \"ncq_prio_enable $(cat /sys/block/sda/device/"
         "ncq_prio_enable 2>/dev/null)\"")


def fio(p):
    return f"""[be]
direct=1
ioengine=libaio
rw=randread
bs=4k
iodepth={p['be_depth']}
numjobs={p['be']}
time_based=1
runtime={p['duration']}s
[rt]
direct=1
ioengine=libaio
rw=randread
bs=4k
iodepth=1
prioclass=1
prio=0
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-rt
"""
