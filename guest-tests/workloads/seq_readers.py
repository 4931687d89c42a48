"""Interleaved sequential readers: `readers` synchronous streams of 64 KiB
O_DIRECT reads, each in its own quarter (or 1/readers) of the disk.  A
scheduler that idles (bfq) keeps serving one stream while its next read
comes; without idling the drive's queue holds one read of every stream
and the head moves between them on every command.

Metric that matters: aggregate throughput (MB/s) and fairness among the
streams (Jain's index).
"""

NAME = "seq-readers"
METRIC = "aggregate MB/s and Jain's fairness among the streams"
PARAMS = {"readers": 4, "bs": "64k", "duration": 10}


def fio(p):
    n = p["readers"]
    out = []
    for i in range(n):
        out.append(f"""[seq{i}]
direct=1
ioengine=psync
rw=read
bs={p['bs']}
offset={100 * i // n}%
size={100 // n}%
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-seq{i}
""")
    return "".join(out)
