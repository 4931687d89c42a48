"""Sequential writers on a host-managed zoned drive (docs/smr.md): `writers`
libaio jobs of 128 KiB O_DIRECT writes, `depth` in flight each, every job
in its own `zones` sequential-write-required zones from the first one,
with fio's zoned mode (zonemode=zbd: a write goes at its zone's write
pointer; a full zone's range is reset when the job wraps).  The zones are
reset before the timed part.

Several writes in flight to one zone must reach the drive in order: Linux
6.10 on does it with zone write plugging in the block layer, whatever the
scheduler; before it mq-deadline's zone write locking let one write per
zone go at a time, and `none` had nothing (Linux 6.1: fio's writes of a
zone may reach the drive out of order, and the drive refuses those not at
the write pointer).  For a host-managed drive whose first sequential zone
is wd-hc620's (zone 524).

Metric that matters: aggregate MB/s, the write latency (the locking
serialises a zone's writes), and fio's errors (the `err` it prints).
"""

NAME = "zoned-writers"
METRIC = "aggregate write MB/s and latency; errors (unaligned writes) without zone ordering"
PARAMS = {"writers": 4, "depth": 4, "zones": 4, "duration": 10}
# the first sequential-write-required zone of wd-hc620 (524 conventional
# zones of 256 MiB): the job's offsets are relative to it
FIRST_SWR = 524 * (256 << 20)
SETUP = (
    "blkzone reset -o $((%d / 512)) -c 64 /dev/sda 2>/dev/null || true"
    % FIRST_SWR,
)


def fio(p):
    zone = 256 << 20
    span = p["zones"] * zone
    out = []
    for i in range(p["writers"]):
        out.append(f"""[writer{i}]
zonemode=zbd
direct=1
ioengine=libaio
iodepth={p['depth']}
rw=write
bs=128k
offset={FIRST_SWR + i * span}
size={span}
time_based=1
runtime={p['duration']}s
write_lat_log=/results/lat-writer{i}
""")
    return "".join(out)
