"""The guest kernel the image carries (images/build-image.sh: Debian 12's
6.1 by default, Debian 13's 6.12 with --debian trixie, or a bzImage of
one's own): it is the one that boots, it loads the modules the harness
needs, it drives ncq-disk with NCQ (and NCQ priority when the kernel has
it), and each of the four block-layer schedulers can be selected and
carries I/O to the drive.  Run on whichever image NCQ_IMAGE_DIR names.

One boot serves every test here.  Its script selects each scheduler in
turn and runs a short 4 KiB random-read fio job, iodepth 32, in a region
of the disk of its own, so the device trace tells the schedulers apart.
"""

import re

import pytest

import ncqguest
from ncqguest import Workload, fio_json, read_trace

DEV = "/sys/block/sda/device"
QUEUE = "/sys/block/sda/queue"
# The schedulers every image must offer (scenario 5 compares them).
SCHEDULERS = ("none", "mq-deadline", "bfq", "kyber")
MiB = 1 << 20
REGION_SIZE = 64 * MiB
IOS = 96
# The modules the harness loads or needs (images/init, ncqguest.py), each
# with a path that exists only once it works, whether module or built in.
MODULES = {
    "ahci": "/sys/bus/pci/drivers/ahci",
    "sd_mod": "/sys/bus/scsi/drivers/sd",
    "bfq": None,                # its scheduler is listed (test below)
    "kyber-iosched": None,
    "ext4": None,               # /proc/filesystems (test below)
    "qemu_fw_cfg": "/sys/firmware/qemu_fw_cfg/rev",
}
# Where the kernel's libata shows the attribute: the function that reads
# it.  Linux 5.15 added ncq_prio_supported (commit "scsi: ata: libata:
# Introduce ncq_prio_supported sysfs attribute", August 2021).
PRIO_SYMBOL = "ata_ncq_prio_supported_show"
PRIO_SINCE = (5, 15)


def region(i):
    """(offset, size) of scheduler i's reads: 256 MiB apart, from 256 MiB."""
    return ((i + 1) * 256 * MiB, REGION_SIZE)


def fio_job(i):
    off, size = region(i)
    return ncqguest.FIO_GLOBAL + f"""[randread]
rw=randread
offset={off}
size={size}
number_ios={IOS}
"""


def script():
    lines = ["set -e",
             'echo "uname $(uname -r)"',
             "modprobe_status=0",
             f"modprobe -a {' '.join(MODULES)} || modprobe_status=$?",
             'echo "modprobe_status $modprobe_status"']
    for name, path in MODULES.items():
        if path:
            lines.append(f'[ -e {path} ] && echo "works {name}" || true')
    lines += ['grep -qw ext4 /proc/filesystems && echo "works ext4" || true',
              f'echo "schedulers $(cat {QUEUE}/scheduler)"',
              f'echo "queue_depth $(cat {DEV}/queue_depth)"',
              f'[ -e {DEV}/ncq_prio_supported ] && '
              f'echo "prio_supported $(cat {DEV}/ncq_prio_supported)" || true',
              f'grep -qw {PRIO_SYMBOL} /proc/kallsyms && '
              f'echo "prio_symbol yes" || true']
    for i, s in enumerate(SCHEDULERS):
        lines += [f"echo {s} > {QUEUE}/scheduler",
                  f'echo "selected {s} $(cat {QUEUE}/scheduler)"',
                  f"fio --output-format=json --output=$RESULTS/{s}.json "
                  f"{s}.fio"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def boot(tmp_path_factory, qemu_build, guest_image):
    work = tmp_path_factory.mktemp("kernels")
    trace = work / "device.trace"
    guest = ncqguest.Guest(work / "guest",
                           device=f"ncq-disk,model=st3400620as,trace={trace}",
                           disk_size="2G", timeout_s=400)
    res = guest.run(Workload(
        script=script(),
        files={f"{s}.fio": fio_job(i) for i, s in enumerate(SCHEDULERS)}))
    assert res.status == 0, f"workload failed:\n{res.output}\n{guest.tail()}"
    return res, read_trace(trace)[1], guest_image


def values(res, key):
    """The values of the script's 'key value' output lines, in order."""
    return [line.split(None, 1)[1] for line in res.output.splitlines()
            if line.startswith(key + " ")]


def manifest_release(image):
    release = ncqguest.image_manifest(image).get("kernel_release")
    assert release, f"{image}/manifest.txt has no kernel_release line"
    return release.split()[0]


def version_tuple(release):
    m = re.match(r"(\d+)\.(\d+)", release)
    assert m, f"uname -r {release!r} does not start with a version"
    return int(m.group(1)), int(m.group(2))


def test_the_image_kernel_is_the_one_that_boots(boot):
    res, _, image = boot
    want = manifest_release(image)
    if want == "none":
        pytest.skip("the image's bzImage has no readable release string")
    assert values(res, "uname") == [want]


def test_the_modules_the_harness_needs_load(boot):
    res, _, _ = boot
    assert values(res, "modprobe_status") == ["0"], res.output
    works = set(values(res, "works"))
    for name in ("ahci", "sd_mod", "qemu_fw_cfg", "ext4"):
        assert name in works, f"{name} did not load:\n{res.output}"


def test_ncq_is_on(boot):
    """libata turns NCQ on at the drive's depth: queue_depth 31 (older
    kernels keep one tag back) or 32, and the commands queue in the drive
    (the trace's queue_len counts the ones already there)."""
    res, records, _ = boot
    assert "NCQ (depth 32)" in res.dmesg, res.dmesg
    assert values(res, "queue_depth")[0] in ("31", "32")
    off, size = region(SCHEDULERS.index("none"))
    deep = max(r["queue_len"] for r in records
               if off <= r["lba"] * 512 < off + size)
    print(f"\n{values(res, 'uname')[0]}: queue_depth "
          f"{values(res, 'queue_depth')[0]}, max queue_len {deep} with none")
    assert deep >= 16


def test_ncq_priority_is_supported_when_the_kernel_has_it(boot):
    res, _, _ = boot
    release = values(res, "uname")[0]
    has_it = values(res, "prio_symbol") == ["yes"] \
        or version_tuple(release) >= PRIO_SINCE
    if not has_it:
        pytest.skip(f"{release} has no ncq_prio_supported attribute")
    assert values(res, "prio_supported") == ["1"], res.output
    assert "Features: NCQ-prio" in res.dmesg


def test_every_scheduler_is_offered_and_carries_io(boot):
    res, records, _ = boot
    offered = values(res, "schedulers")[0].replace("[", "").replace("]", "")
    missing = [s for s in SCHEDULERS if s not in offered.split()]
    assert not missing, f"kernel {values(res, 'uname')[0]} lacks {missing}"
    selected = dict(v.split(None, 1) for v in values(res, "selected"))
    report = []
    for i, s in enumerate(SCHEDULERS):
        assert f"[{s}]" in selected[s].split(), selected[s]
        read = fio_json(res, f"{s}.json")["jobs"][0]["read"]
        assert read["total_ios"] == IOS
        off, size = region(i)
        sectors = sum(r["sectors"] for r in records
                      if r["op"] == "R" and off <= r["lba"] * 512 < off + size)
        assert sectors == IOS * 8, f"{s}: {sectors} sectors traced"
        report.append(f"{s} {read['iops']:.0f}")
    print("\nIOPS (4 KiB random reads, iodepth 32): " + ", ".join(report))
