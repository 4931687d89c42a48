"""md arrays of ncq-disks in the guest: the shell functions a workload
uses to find its drives, build an array with mdadm, wait for its resync,
write and verify data, and record the array's state; and the host-side
parsers of what they record (/proc/mdstat, mdadm --detail, md's sysfs
counters).  docs/raid.md shows them at work.

The guest has no udev: the kernel's devtmpfs makes /dev/sdX and /dev/mdN,
and mdadm runs with --run (no question asked) and its map in /run/mdadm.
Drives are found by the serial number each ncq-disk is given
(ncqguest.multi_drive_args(serial_prefix=...)), read from the SCSI VPD page
80h libata builds from IDENTIFY: the sdX names follow the order in which
the kernel probes the ports, which an added AHCI controller changes.

A workload starts with ncqmd.GUEST_SH and calls the functions:

    md_setup                           modules, /run/mdadm, resync speed
    disk SERIAL                        /dev/sdX of the drive with that serial
    md_drives PREFIX N                 $D0..: drives PREFIX0.., printed
    host_step                          pause until the host's next step
                                       (at_pauses: add a fault, ...)
    md_create MD LEVEL N DEV...        array /dev/MD of N members, the
                                       devices after the N-th are spares
                                       ($MD_CREATE_OPTS: more options)
    md_wait MD [LIMIT_S]               until no resync/recovery runs
    md_record MD TAG                   /proc/mdstat, --detail, counters
                                       into $RESULTS/md-TAG.txt
    md_write_files DIR N KIB SUMS      N files of KIB KiB, each fsync'd,
                                       their sha256 appended to SUMS
    md_verify_files DIR SUMS           "verify ok N" or the failures
    md_drop_caches                     sync, then drop the page cache
    md_reassemble MD DEV...            stop and assemble again

Each step that can fail prints "NAME status N" (step_status() reads them
back).
"""

import re
from pathlib import Path

GUEST_SH = r"""
# --- ncqmd.GUEST_SH: md helpers (guest-tests/ncqmd.py) ---
md_setup() {
    modprobe -a md-mod raid1 raid456 || echo "md-modules status $?"
    mkdir -p /run/mdadm /etc/mdadm
    # no config file: arrays are named on the command line; no homehost
    # guessing from a hostname the guest does not have
    echo "HOMEHOST <none>" >/etc/mdadm/mdadm.conf
    # resync and recovery at the drives' own pace (the default minimum,
    # 1 MB/s, throttles them whenever other I/O runs)
    echo 50000 >/proc/sys/dev/raid/speed_limit_min
    echo 2000000 >/proc/sys/dev/raid/speed_limit_max
}

# disk SERIAL: the block device whose drive has serial number SERIAL
disk() {
    for d in /sys/block/sd*; do
        [ -e "$d/device/vpd_pg80" ] || continue
        # VPD page 80h: a 4-byte header, then the serial padded with spaces
        _s=$(tail -c +5 "$d/device/vpd_pg80" | tr -d ' \000')
        if [ "$_s" = "$1" ]; then
            echo "/dev/${d##*/}"
            return 0
        fi
    done
    echo "disk: no drive with serial $1" >&2
    return 1
}

# md_drives PREFIX N: D0..D<N-1> = the drives with serials PREFIX0..;
# prints "drive SERIAL /dev/sdX ataN" for each (ncqmd.drive_map)
md_drives() {
    _k=0
    while [ $_k -lt "$2" ]; do
        _d=$(disk "$1$_k") || return 1
        eval "D$_k=$_d"
        # and its libata port (ataN), the name libata's messages use
        echo "drive $1$_k $_d $(readlink -f "/sys/block/${_d#/dev/}" |
            grep -o 'ata[0-9]*' | head -1)"
        _k=$((_k + 1))
    done
}

# host_step: stop the VM here, at this very instruction, until the host has
# done its next step (ncqmd.at_pauses; needs ncqmd.PAUSE_ARGS): the
# pvpanic device pauses the machine, so guest time stands still meanwhile
host_step() {
    printf '\001' | dd of=/dev/port bs=1 seek=1285 count=1 2>/dev/null \
        || echo "host-step status 1"
}

# md_create MD LEVEL N DEV...: members are the first N devices, spares
# the rest
md_create() {
    _md=$1 _lvl=$2 _n=$3
    shift 3
    _spares=$(($# - _n))
    # shellcheck disable=SC2086 # options are words
    mdadm --create "/dev/$_md" --run --metadata=1.2 --level="$_lvl" \
        --raid-devices="$_n" --spare-devices="$_spares" $MD_CREATE_OPTS \
        "$@" >>/results/mdadm.log 2>&1
    echo "create-$_md status $?"
}

# md_wait MD [LIMIT_S]: until MD runs no resync, recovery or check (guest
# time: idle waiting is free under icount)
md_wait() {
    _i=0
    while [ $_i -lt "${2:-3600}" ]; do
        _a=$(cat "/sys/block/$1/md/sync_action" 2>/dev/null) || _a=gone
        if [ "$_a" = idle ] && ! grep -A2 "^$1 " /proc/mdstat |
            grep -q "recovery\|resync\|reshape\|check"; then
            echo "wait-$1 status 0"
            return 0
        fi
        sleep 1
        _i=$((_i + 1))
    done
    echo "wait-$1 status 1"
    return 1
}

# md_record MD TAG: the array's state, for the host (ncqmd.read_record)
md_record() {
    {
        echo "== mdstat"
        cat /proc/mdstat
        echo "== detail"
        mdadm --detail "/dev/$1" 2>&1
        echo "== sysfs"
        for f in array_state level raid_disks degraded mismatch_cnt \
            sync_action sync_completed last_sync_action; do
            [ -e "/sys/block/$1/md/$f" ] &&
                echo "$f $(cat "/sys/block/$1/md/$f")"
        done
        for m in /sys/block/"$1"/md/dev-*; do
            [ -d "$m" ] || continue
            echo "${m##*/} state=$(cat "$m/state") errors=$(cat "$m/errors")" \
                "slot=$(cat "$m/slot")"
        done
    } >"/results/md-$2.txt" 2>&1
}

# md_write_files DIR N KIB SUMS: N files of KIB KiB of random data, each
# written with fsync (dd conv=fsync); their sha256 appended to SUMS
md_write_files() {
    _k=1
    while [ $_k -le "$2" ]; do
        dd if=/dev/urandom of="$1/f$_k" bs=1k count="$3" conv=fsync \
            2>/dev/null || echo "write-f$_k status $?"
        (cd "$1" && sha256sum "f$_k") >>"$4"
        _k=$((_k + 1))
    done
    sync
}

# md_verify_files DIR SUMS: every file of SUMS read back and checked
md_verify_files() {
    if (cd "$1" && sha256sum -c "$2") >/tmp/verify.out 2>&1; then
        echo "verify ok $(grep -c ': OK$' /tmp/verify.out)"
    else
        echo "verify FAILED: $(grep -v ': OK$' /tmp/verify.out | head -5 |
            tr '\n' ' ')"
    fi
}

md_drop_caches() {
    sync
    echo 3 >/proc/sys/vm/drop_caches
}

# md_reassemble MD DEV...: stop the array and assemble it from DEV...
md_reassemble() {
    _md=$1
    shift
    mdadm --stop "/dev/$_md" >>/results/mdadm.log 2>&1
    echo "stop-$_md status $?"
    mdadm --assemble "/dev/$_md" --run "$@" >>/results/mdadm.log 2>&1
    echo "assemble-$_md status $?"
}
# --- end of ncqmd.GUEST_SH ---
"""


def member_guest(workdir, count, member_size, guest_disk="64M", seed=None,
                 serial_prefix=None, pause=False, timeout_s=300,
                 device="ncq-disk,model=st3400620as"):
    """A Guest on its own disk of guest_disk (sda) with count st3400620as
    drives of member_size beside it (ids extra0, extra1, ...), their images
    in workdir/members; it boots without a snapshot
    (ncqguest.multi_drive_args says why).  seed: drive i gets seed+i.
    serial_prefix: drive i gets the serial <prefix><i>, which GUEST_SH's
    `disk` finds it by.  pause: the guest can call host_step (at_pauses).
    device: the members' -device line without drive, serial and seed.
    Returns the Guest and the path of its console log, which console_line
    watches."""
    from ncqguest import Guest, multi_drive_args

    workdir = Path(workdir)
    devices = [device if seed is None else f"{device},seed={seed + i}"
               for i in range(count)]
    extra = multi_drive_args(workdir / "members", devices,
                             disk_size=member_size,
                             serial_prefix=serial_prefix)
    guest = Guest(workdir / "guest", disk_size=guest_disk,
                  extra_args=extra + (PAUSE_ARGS if pause else []),
                  snapshot=False, timeout_s=timeout_s)
    return guest, guest.workdir / "console.log"


async def console_line(console, pattern, poll_s=0.2):
    """For qmp_actions: wait until the guest's console log (a path) has a
    line matching the regular expression pattern; return the match.  A
    guest asks the host for a step this way when it must go on running
    meanwhile (host_step pauses it)."""
    import asyncio

    rx = re.compile(pattern, re.M)
    while True:
        text = console.read_text(errors="replace") if console.exists() \
            else ""
        m = rx.search(text)
        if m:
            return m
        await asyncio.sleep(poll_s)


# QEMU arguments for host_step: a pvpanic device whose "panic" pauses
PAUSE_ARGS = ["-device", "pvpanic", "-action", "panic=pause"]


def at_pauses(steps):
    """qmp_actions for Guest.run: at the guest's k-th host_step, await
    steps[k](qmp), then let the guest go on.  Returns the steps' results.
    The guest stands still during a step (its VM is paused), so a fault
    added there meets the same commands on every run."""
    import asyncio

    from qemu.qmp import QMPError

    async def actions(qmp):
        out = []
        try:
            for step in steps:
                while (await qmp.execute("query-status"))["status"] != \
                        "guest-panicked":
                    await asyncio.sleep(0.02)
                out.append(await step(qmp))
                await qmp.execute("cont")
        except QMPError:
            # QEMU ended before the guest reached every pause (its
            # workload failed): the caller sees that in the result
            pass
        return out
    return actions


def fault_add(dev_id, rules):
    """A step for at_pauses: add fault rules to drive dev_id."""
    async def step(qmp):
        return await qmp.execute("ncq-disk-fault-add",
                                 {"id": dev_id, "rules": rules})
    return step


def fault_clear(dev_id):
    """A step for at_pauses: remove every fault rule of drive dev_id."""
    async def step(qmp):
        return await qmp.execute("ncq-disk-fault-clear", {"id": dev_id})
    return step


def drive_map(output):
    """{serial: "/dev/sdX"} from the lines md_drives printed."""
    return dict(re.findall(r"^drive (\S+) (/dev/sd\w+)(?: ata\d+)?$",
                           output, re.M))


def port_map(output):
    """{serial: "ataN"} (libata's port) from the lines md_drives printed."""
    return dict(re.findall(r"^drive (\S+) /dev/sd\w+ (ata\d+)$", output,
                           re.M))


def step_status(output):
    """{step: status} from the "NAME status N" lines a workload printed
    (the last one of a name wins)."""
    return {k: int(v) for k, v in
            re.findall(r"^(\S+) status (\d+)$", output, re.M)}


def parse_mdstat(text):
    """/proc/mdstat as {array: {"state", "level", "members": {dev: {"slot":
    int, "flags": str}}, "blocks": int, "map": "UU_U", "progress": str or
    None}}; flags are md's letters: F faulty, S spare, W write-mostly,
    R replacement."""
    arrays, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(md\w+) : (\w+)(?: \((\S+)\))? (\S+) (.*)$", line)
        if m and m.group(1) != "unused":
            level = m.group(4) if m.group(2) == "active" else None
            cur = {"state": m.group(2), "level": level, "members": {},
                   "blocks": None, "map": None, "progress": None}
            arrays[m.group(1)] = cur
            for d in m.group(5).split():
                dm = re.match(r"^(\w+)\[(\d+)\]((?:\([A-Z]\))*)$", d)
                if dm:
                    cur["members"][dm.group(1)] = {
                        "slot": int(dm.group(2)),
                        "flags": dm.group(3).replace("(", "").replace(")",
                                                                      "")}
            continue
        if cur is None:
            continue
        if not line.strip():
            cur = None
            continue
        b = re.search(r"(\d+) blocks", line)
        if b and cur["blocks"] is None:
            cur["blocks"] = int(b.group(1))
        u = re.search(r"\[([U_]+)\]\s*$", line)
        if u:
            cur["map"] = u.group(1)
        p = re.search(r"(resync|recovery|reshape|check)\s*=\s*([\d.]+)%",
                      line)
        if p:
            cur["progress"] = f"{p.group(1)} {p.group(2)}%"
    return arrays


def parse_detail(text):
    """mdadm --detail as (fields, devices): fields {"Raid Level": "raid5",
    "State": "clean", ...}; devices a list of {"number", "raid_device",
    "state" (the words), "device"} rows of its table (raid_device None
    for a spare or a faulty member that left its slot)."""
    fields, devices, table = {}, [], False
    for line in text.splitlines():
        if re.match(r"^\s*Number\s+Major\s+Minor\s+RaidDevice", line):
            table = True
            continue
        if table:
            cols = line.split()
            if len(cols) >= 5 and cols[0].lstrip("-").isdigit():
                rd = None if cols[3] == "-" else int(cols[3])
                dev = cols[-1] if cols[-1].startswith("/dev/") else None
                words = cols[4:-1] if dev else cols[4:]
                devices.append({"number": int(cols[0]), "raid_device": rd,
                                "state": " ".join(words), "device": dev})
            continue
        m = re.match(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$", line)
        if m:
            fields[m.group(1)] = m.group(2)
    return fields, devices


def read_record(result, tag):
    """What md_record MD TAG saved: {"mdstat": parse_mdstat,
    "detail": (fields, devices), "sysfs": {name: value}, "members":
    {"dev-sdX": {"state": str, "errors": int, "slot": str}}, "text": the
    raw file}."""
    raw = result.files.get(f"md-{tag}.txt")
    if raw is None:
        raise KeyError(f"the workload recorded no md state '{tag}'")
    text = raw.decode(errors="replace")
    parts = dict(re.findall(r"^== (\w+)\n(.*?)(?=^== |\Z)", text,
                            re.M | re.S))
    sysfs, members = {}, {}
    for line in parts.get("sysfs", "").splitlines():
        m = re.match(r"^(dev-\w+) state=(\S*) errors=(\d+) slot=(\S+)$",
                     line)
        if m:
            members[m.group(1)] = {"state": m.group(2),
                                   "errors": int(m.group(3)),
                                   "slot": m.group(4)}
        elif " " in line:
            k, v = line.split(" ", 1)
            sysfs[k] = v
    return {"mdstat": parse_mdstat(parts.get("mdstat", "")),
            "detail": parse_detail(parts.get("detail", "")),
            "sysfs": sysfs, "members": members, "text": text}


def verified(output):
    """The counts of the "verify ok N" lines md_verify_files printed, and
    whether any verify failed."""
    oks = [int(n) for n in re.findall(r"^verify ok (\d+)$", output, re.M)]
    return oks, "verify FAILED" in output
