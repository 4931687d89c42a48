"""The RAID soak (issue 17 part 4; docs/soak.md): rounds of guest time on
md RAID-5 over four ncq-disks with ext4 on top, mixed faults and firmware
changes over QMP, and a power cut of the whole machine at the end of each
round but the last; every file that was fsync'd is checked after every
cut.

One round is one QEMU process (a boot) on the same images:

1. The guest assembles the array (round 0 creates it and makes ext4),
   waits for md's resync (the cut left it unclean), replays the journal,
   runs e2fsck -fn, and checks every file of the manifest, the files the
   earlier rounds fsync'd (name, MD5, size; the host keeps it).
2. For ROUND_S seconds of guest time it writes files one by one, each
   fsync'd and printed as `SYNCED name md5 size` once fsync returned,
   while fio keeps direct random reads and writes going on a file of its
   own; every few files it changes a member's queue depth (sysfs).
   Meanwhile the host, about every second of wall time, changes a
   member's firmware policy, starvation time-out or clustering
   (ncq-disk-set), adds a fault
   rule to a member (slow, unc or hang; the seeded choice is this
   module's, the LBA range inside the array's data), and reads the
   rules' counters.
3. It writes to the guest's own disk at the sector of a powercut rule:
   every ncq-disk of the machine loses its cache at that instant and
   QEMU quits.  The last round unmounts and stops the array instead.

The host then adds the round's SYNCED files to the manifest (dropping
the oldest beyond MAX_FILES, which the next round deletes first).  A
file that is missing or differs after a cut is an error: that is data
the drives acknowledged as flushed and lost.

Used by scripts/soak.sh (long runs) and guest-tests/test_raid_soak.py
(the smoke run in the README's test command).
"""

import asyncio
import dataclasses
import random
import re
import time
from pathlib import Path

import ncqguest
from ncqguest import Guest, GuestError, Workload

TRIGGER = 8192          # sector of the guest's own disk: the powercut rule
MEMBERS = 4
MEMBER_MIB = 256
MAX_FILES = 800         # the manifest's bound (about 100 MiB of files)


def table_policies():
    """The firmware policies, from the name list the model's header keeps
    beside its enum (tests/unit/test-policy.c checks it against the table):
    a policy added there is soaked with no edit here."""
    text = (ncqguest.ROOT / "include/hw/ide/ncq-model.h").read_text()
    names = re.search(r'#define NCQ_POLICY_NAMES "([^"]*)"', text).group(1)
    return tuple(re.split(r",\s*|\s+or\s+", names))


POLICIES = table_policies()
DEPTHS = (32, 1, 8, 31, 4, 16)
# md's data on a member starts after its superblock and bitmap area;
# fault rules go from there to 4 MiB before the end
DATA_LO = 8192
CUT_LINE = re.compile(r"ncq-disk (\S+): power cut; (\d+) sectors")

SCRIPT = r"""
ROUND={round}
DURATION={duration}
modprobe raid456
# md fails a member whose command timed out (a hang rule): put it back
# (the write-intent bitmap makes the recovery short)
readd() {{
    for f in /sys/block/md0/md/dev-*; do
        grep -q faulty $f/state 2>/dev/null || continue
        d=${{f##*/dev-}}
        echo "KICKED $d"
        n=0
        until mdadm /dev/md0 --remove /dev/$d >/dev/null 2>&1 &&
              {{ mdadm /dev/md0 --re-add /dev/$d >/dev/null 2>&1 ||
                mdadm /dev/md0 --add /dev/$d >/dev/null 2>&1; }}; do
            n=$((n + 1))
            [ $n -lt 30 ] || {{ echo "ERROR re-add $d"; break; }}
            sleep 1
        done
    done
}}
if [ $ROUND = 0 ]; then
    mdadm --create /dev/md0 --run --quiet --level=5 --raid-devices=4 \
        --bitmap=internal --assume-clean /dev/sdb /dev/sdc /dev/sdd /dev/sde \
        || echo ERROR mdadm-create
    mkfs.ext4 -q -F /dev/md0 || echo ERROR mkfs
else
    mdadm --assemble /dev/md0 /dev/sdb /dev/sdc /dev/sdd /dev/sde >/dev/null 2>&1 \
        || echo ERROR assemble
    mdadm --wait /dev/md0
    echo "RESYNCS $(dmesg | grep -c 'resync of RAID array md0')"
    echo "DEGRADED $(cat /sys/block/md0/md/degraded)"
    mount -t ext4 /dev/md0 /mnt && umount /mnt
    e2fsck -fn /dev/md0 >$RESULTS/fsck.txt 2>&1
    echo "FSCK $?"
fi
mount -t ext4 /dev/md0 /mnt || {{ echo ERROR mount; exit 1; }}
while read name; do rm -f /mnt/$name; done </workload/delete.txt
sync
ok=0; bytes=0
while read name sum size; do
    s=missing
    [ -f /mnt/$name ] && s=$(md5sum </mnt/$name | cut -d' ' -f1)
    if [ "$s" = "$sum" ]; then ok=$((ok + 1)); bytes=$((bytes + size))
    else echo "BAD $name $s"; fi
done </workload/manifest.txt
echo "VERIFIED $ok $bytes"
fio --name=load --filename=/mnt/load.bin --size=48m --rw=randrw --bs=16k \
    --direct=1 --ioengine=libaio --iodepth=8 --time_based --runtime=100000 \
    --randrepeat=1 --randseed=$((ROUND + 1)) >/dev/null 2>&1 &
load=$!
start=$(cut -d. -f1 /proc/uptime)
echo "START $start"
seq=0
while [ $(cut -d. -f1 /proc/uptime) -lt $((start + DURATION)) ]; do
    seq=$((seq + 1))
    name=r${{ROUND}}f$seq
    size=$(( (seq * 7919 % 48 + 1) * 4096 ))
    yes "$name" | head -c $size | dd of=/mnt/$name bs=4k conv=fsync 2>/dev/null \
        && echo "SYNCED $name $(md5sum </mnt/$name | cut -d' ' -f1) $size"
    [ "$(cat /sys/block/md0/md/degraded)" = 0 ] || readd
    if [ $((seq % 8)) = 0 ]; then
        set -- {depths}
        shift $(( (seq / 8) % $# )); d=$1
        m=$(echo b c d e | cut -d' ' -f$(( (seq / 8) % 4 + 1 )))
        echo $d >/sys/block/sd$m/device/queue_depth 2>/dev/null && echo "DEPTH sd$m $d"
    fi
    sleep 0.5
done
echo "END $(cut -d. -f1 /proc/uptime)"
if [ {last} = 1 ]; then
    kill $load 2>/dev/null; wait $load
    umount /mnt && mdadm --stop /dev/md0 >/dev/null && echo CLEAN-END
else
    # the cut is to test what a power loss loses, not a degraded RAID-5's
    # write hole (md refuses to start a dirty degraded array): whole first
    n=0
    until [ "$(cat /sys/block/md0/md/degraded)" = 0 ]; do
        readd
        mdadm --wait /dev/md0     # returns at once until md starts it
        n=$((n + 1))
        [ $n -lt 120 ] || {{ echo ERROR degraded-before-cut; break; }}
        sleep 1
    done
    echo CUT
    dd if=/dev/zero of=/dev/sda bs=4k count=1 seek=$(({trigger} / 8)) \
        oflag=direct 2>/dev/null
    echo ERROR not-cut
fi
"""


@dataclasses.dataclass
class Totals:
    rounds: int = 0
    guest_s: float = 0.0
    wall_s: float = 0.0
    cuts: int = 0
    lost_sectors: int = 0
    files_synced: int = 0
    bytes_synced: int = 0
    files_verified: int = 0
    bytes_verified: int = 0
    rules: dict = dataclasses.field(default_factory=dict)
    hits: dict = dataclasses.field(default_factory=dict)
    qmp_changes: int = 0
    depth_changes: int = 0
    resyncs: int = 0
    kicked: int = 0
    errors: list = dataclasses.field(default_factory=list)

    def summary(self):
        kinds = sorted(set(self.rules) | set(self.hits))
        faults = ", ".join(f"{k} {self.rules.get(k, 0)} rules/"
                           f"{self.hits.get(k, 0)} hits" for k in kinds)
        ratio = self.wall_s / self.guest_s if self.guest_s else 0
        return "\n".join([
            "=== soak summary ===",
            f"rounds (boots):     {self.rounds}",
            f"guest time:         {self.guest_s:.0f} s "
            f"({self.guest_s / 60:.1f} min)",
            f"wall time:          {self.wall_s:.0f} s "
            f"({self.wall_s / 60:.1f} min); wall/guest {ratio:.2f}",
            f"faults injected:    {faults or 'none'}",
            f"QMP changes:        {self.qmp_changes} (ncq-disk-set: policy, "
            f"starvation time-out, clustering); guest queue_depth "
            f"changes {self.depth_changes}",
            f"power cuts:         {self.cuts} (every drive at once; "
            f"{self.lost_sectors} sectors lost from the drives' caches), "
            f"{self.resyncs} md resyncs after them; members md failed "
            f"after a fault and re-added: {self.kicked}",
            f"written (fsync'd):  {self.files_synced} files, "
            f"{self.bytes_synced / 2**20:.1f} MiB",
            f"verified:           {self.files_verified} file checks, "
            f"{self.bytes_verified / 2**20:.1f} MiB",
            f"errors:             {len(self.errors)}"
            + "".join(f"\n  {e}" for e in self.errors[:20]),
        ])


class Soak:
    def __init__(self, workdir, minutes, round_s=300, seed=1,
                 log=print, member_mib=MEMBER_MIB):
        self.workdir = Path(workdir)
        self.target_s = minutes * 60
        self.round_s = round_s
        self.rng = random.Random(seed)
        self.log = log
        self.manifest = {}          # name -> (md5, size), oldest first
        self.delete = []
        self.totals = Totals()
        self.data_hi = member_mib * 2048 - 8192
        self.members = ncqguest.multi_drive_args(
            self.workdir / "members",
            ["ncq-disk,model=st3400620as"] * MEMBERS,
            disk_size=f"{member_mib}M")
        self.guest_disk = None

    # ------------------------------------------------------------ host side
    def _rule(self):
        kind = self.rng.choice(("slow", "slow", "unc", "hang"))
        lba = self.rng.randrange(DATA_LO, self.data_hi - 65536)
        if kind == "slow":
            return kind, (f"slow@{lba}+65536:every=20:"
                          f"delay={self.rng.choice((20, 50, 200))}ms")
        if kind == "unc":
            return kind, f"unc@{lba}+65536:once"
        return kind, f"hang@{lba}+65536:once"

    async def _churn(self, qmp, stats, console):
        """Until QEMU goes away: about once a second, a firmware change
        or a fault rule on a member, and the rules' counters.  It begins
        with the workload (the guest's START line): the check after the
        reboot (assembly, resync, e2fsck, the files) reads what the last
        cut left, not what a new fault does meanwhile (a hang there made
        md fail a member before the check, round 7 of the 2-hour run)."""
        hangs = 0
        try:
            while not re.search(r"^START ", console.read_text(
                    errors="replace") if console.exists() else "", re.M):
                await qmp.execute("query-status")   # raises once QEMU quit
                await asyncio.sleep(0.5)
            while True:
                member = f"extra{self.rng.randrange(MEMBERS)}"
                roll = self.rng.random()
                if roll < 0.5:
                    # The firmware's settings.  Not queue-depth: Linux
                    # does not read IDENTIFY again, and a drive whose
                    # depth falls below the commands Linux keeps in
                    # flight aborts the ones beyond it (docs/device.md);
                    # the guest changes the depth it
                    # uses through sysfs instead.
                    args = {"id": member}
                    which = self.rng.random()
                    if which < 0.6:
                        args["policy"] = self.rng.choice(POLICIES)
                    elif which < 0.8:
                        args["starvation-timeout-ns"] = self.rng.choice(
                            (0, 500_000_000, 2_000_000_000))
                    else:
                        args["clustering"] = self.rng.choice((0, 256))
                    await qmp.execute("ncq-disk-set", args)
                    stats["qmp"] += 1
                elif roll < 0.7:
                    kind, rule = self._rule()
                    if kind == "hang" and hangs >= 1:
                        kind, rule = "slow", \
                            f"slow@{DATA_LO}+65536:every=50:delay=20ms"
                    hangs += kind == "hang"
                    await qmp.execute("ncq-disk-fault-add",
                                      {"id": member, "rules": rule})
                    stats["rules"][kind] = stats["rules"].get(kind, 0) + 1
                for i in range(MEMBERS):
                    rules = await qmp.execute("query-ncq-disk-faults",
                                              {"id": f"extra{i}"})
                    stats["hits"][i] = {}
                    for r in rules:
                        h = stats["hits"][i]
                        h[r["kind"]] = h.get(r["kind"], 0) + r["hits"]
                await asyncio.sleep(1)
        except Exception:
            return stats            # QEMU quit: the round is over

    # ------------------------------------------------------------- a round
    def run_round(self, i, last):
        files = {
            "manifest.txt": "".join(f"{n} {s} {z}\n" for n, (s, z)
                                    in self.manifest.items()),
            "delete.txt": "".join(f"{n}\n" for n in self.delete),
        }
        script = SCRIPT.format(round=i, duration=self.round_s,
                               depths=" ".join(map(str, DEPTHS)),
                               trigger=TRIGGER, last=int(last))
        device = f"ncq-disk,model=st3400620as,faults=powercut@{TRIGGER}:writes"
        g = Guest(self.workdir / f"round{i}", device=device, disk_size="64M",
                  disk=self.guest_disk, extra_args=self.members,
                  snapshot=False,
                  timeout_s=int(900 + self.round_s * 4))
        self.guest_disk = g.disk
        stats = {"qmp": 0, "rules": {}, "hits": {}}

        async def churn(qmp):
            return await self._churn(qmp, stats, g.workdir / "console.log")

        t0 = time.monotonic()
        try:
            g.run(Workload(script=script, files=files), qmp_actions=churn)
            ended = "results"
        except GuestError as e:
            ended = str(e).splitlines()[0]
        wall = time.monotonic() - t0
        console = (g.workdir / "console.log").read_text(errors="replace")
        stderr = (g.workdir / "qemu.stderr").read_text(errors="replace")
        self._account(i, last, console, stderr, ended, stats, wall)

    def _account(self, i, last, console, stderr, ended, stats, wall):
        t = self.totals
        t.rounds += 1
        t.wall_s += wall
        t.qmp_changes += stats["qmp"]
        for k, n in stats["rules"].items():
            t.rules[k] = t.rules.get(k, 0) + n
        for per in stats["hits"].values():
            for k, n in per.items():
                t.hits[k] = t.hits.get(k, 0) + n
        # the guest's uptime when its workload ended: boot, resync,
        # checks and workload
        end = re.search(r"^END (\d+)", console, re.M)
        if end:
            t.guest_s += int(end.group(1))
        for m in re.finditer(r"^ERROR (.*)$", console, re.M):
            t.errors.append(f"round {i}: {m.group(1)}")
        for m in re.finditer(r"^BAD (\S+) (\S+)$", console, re.M):
            t.errors.append(f"round {i}: fsync'd file {m.group(1)} "
                            f"{'missing' if m.group(2) == 'missing' else 'differs'}")
        fsck = re.search(r"^FSCK (\d+)$", console, re.M)
        if fsck and fsck.group(1) != "0":
            t.errors.append(f"round {i}: e2fsck -fn exit {fsck.group(1)}")
        resyncs = re.search(r"^RESYNCS (\d+)$", console, re.M)
        if resyncs and int(resyncs.group(1)) > 0:
            t.resyncs += 1
        deg = re.search(r"^DEGRADED (\d+)$", console, re.M)
        if deg and deg.group(1) != "0":
            t.errors.append(f"round {i}: array degraded ({deg.group(1)})")
        v = re.search(r"^VERIFIED (\d+) (\d+)$", console, re.M)
        if v:
            t.files_verified += int(v.group(1))
            t.bytes_verified += int(v.group(2))
            if int(v.group(1)) != len(self.manifest):
                t.errors.append(f"round {i}: verified {v.group(1)} of "
                                f"{len(self.manifest)} files")
        else:
            t.errors.append(f"round {i}: no verification ({ended})")
        t.depth_changes += len(re.findall(r"^DEPTH ", console, re.M))
        t.kicked += len(re.findall(r"^KICKED ", console, re.M))
        cuts = {m.group(1): int(m.group(2))
                for m in CUT_LINE.finditer(stderr)}
        if last:
            if "CLEAN-END" not in console:
                t.errors.append(f"round {i}: no clean end ({ended})")
        elif "CUT" in console:
            t.cuts += 1
            t.lost_sectors += sum(cuts.values())
            if len(cuts) != MEMBERS + 1:
                t.errors.append(f"round {i}: {len(cuts)} drives said they "
                                f"lost power, not {MEMBERS + 1}")
        else:
            t.errors.append(f"round {i}: no power cut ({ended})")
        # the files this round fsync'd join the manifest, oldest first
        self.delete = []
        for name, md5, size in re.findall(r"^SYNCED (\S+) (\S+) (\d+)$",
                                          console, re.M):
            self.manifest[name] = (md5, int(size))
            t.files_synced += 1
            t.bytes_synced += int(size)
        while len(self.manifest) > MAX_FILES:
            name = next(iter(self.manifest))
            del self.manifest[name]
            self.delete.append(name)
        self.log(f"soak: round {i + 1}{' (last)' if last else ''}: "
                 f"{wall:.0f} s wall, {t.guest_s:.0f} s of guest time so far, "
                 f"{len(self.manifest)} files in the manifest, "
                 f"{len(t.errors)} errors so far")

    def run(self):
        """Rounds until the guest time reaches the target: the last one,
        which ends cleanly, is the one the previous round's length says
        will reach it (at least one round with a cut comes first)."""
        i, per_round = 0, self.round_s + 90
        # a bound, should rounds fail before their guest time is known
        most = 2 + 2 * int(self.target_s // self.round_s + 1)
        while True:
            before = self.totals.guest_s
            last = i >= 1 and (before + per_round >= self.target_s or
                               i + 1 >= most)
            self.run_round(i, last)
            per_round = max(self.totals.guest_s - before, self.round_s)
            i += 1
            if last:
                return self.totals
