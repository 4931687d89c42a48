"""A module that `images/build-image.sh --module` adds loads and works as
the kernel loads it: with its soft dependencies and the crypto modules it
asks for by name (images/module-closure.py; docs/guest-image.md).

f2fs is the case: it declares `softdep: pre: crc32` and asks the crypto
API for "crc32" when it mounts; an image closed over modules.dep alone
formatted f2fs and then failed the mount ("F2FS-fs (sda): Cannot load
crc32 driver").  One guest on an image with `--module f2fs --package
f2fs-tools` and two drives: the host-managed wd-hc620 cut to 64 zones
(2 conventional ones, which hold f2fs's metadata; f2fs writes its data
at the sequential zones' write pointers: `mkfs.f2fs -m`) and a
conventional st3400620as.  On each, f2fs is made, mounted, written,
remounted and its file read back.
"""
import re
import subprocess
from pathlib import Path

import pytest

import ncqguest
from ncqguest import Workload
from test_zoned_fs import CAPACITY, SWR0, small_model

ROOT = ncqguest.ROOT

SCRIPT = r"""
echo "kernel=$(uname -r)"
for d in /sys/block/sd*; do
    echo "drive $(basename $d) zoned=$(cat $d/queue/zoned)"
done
fs() {   # fs NAME DEV MKFS-OPTIONS: make, mount, write, remount, read f2fs
    mkdir -p /mnt/$1
    mkfs.f2fs -f $3 /dev/$2 > /tmp/mkfs-$1.txt 2>&1
    echo "$1 mkfs=$?"
    grep -iE "zoned|host-managed|zone" /tmp/mkfs-$1.txt | head -5
    mount -t f2fs /dev/$2 /mnt/$1
    echo "$1 mount=$?"
    dd if=/dev/urandom of=/mnt/$1/f bs=1M count=32 2>&1 | grep -v records
    sync
    sum=$(md5sum < /mnt/$1/f | cut -d' ' -f1)
    umount /mnt/$1
    mount -t f2fs /dev/$2 /mnt/$1
    echo "$1 remount=$?"
    echo "$1 same=$([ "$(md5sum < /mnt/$1/f | cut -d' ' -f1)" = "$sum" ] && echo yes || echo no)"
    echo "$1 size=$(stat -c %s /mnt/$1/f)"
    umount /mnt/$1
}
hm=; cv=
for d in /sys/block/sd*; do
    case $(cat $d/queue/zoned) in
        host-managed) hm=$(basename $d) ;;
        none) cv=$(basename $d) ;;
    esac
done
fs zoned "$hm" -m
echo "swr_written=$(blkzone report -o SWR0 -c 62 /dev/$hm | grep -vc 'wptr 0x000000 ')"
fs conventional "$cv" ""
echo "crc32_modules=$(lsmod | awk '$1 ~ /^crc32(_generic|_pclmul)$/ {print $1}' | sort | tr '\n' ',')"
""".replace("SWR0", str(SWR0))


def _kernel_612():
    m = re.match(r"(\d+)\.(\d+)",
                 ncqguest.image_manifest().get("kernel_release", ""))
    return bool(m) and (int(m[1]), int(m[2])) >= (6, 12)


@pytest.fixture(scope="module")
def f2fs_image(guest_image):
    """The running image's Debian release with --module f2fs and
    f2fs-tools (built once, then cached by its inputs' digest)."""
    release = ncqguest.image_manifest().get("debian_release")
    if not release:
        pytest.skip("the image is a user's kernel (NCQ_IMAGE_DIR): no "
                    "Debian release to add f2fs-tools from")
    p = subprocess.run([str(ROOT / "images/build-image.sh"), "--debian",
                        release, "--module", "f2fs", "--package",
                        "f2fs-tools"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip().splitlines()[-1], p.stderr


@pytest.fixture(scope="module")
def run(f2fs_image, qemu_build, tmp_path_factory):
    image, log = f2fs_image
    work = tmp_path_factory.mktemp("f2fs")
    model = small_model(work / "wd-hc620-z64.ncqm")
    extra = ncqguest.multi_drive_args(work / "extra",
                                      ["ncq-disk,model=st3400620as"],
                                      disk_size="2G")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NCQ_IMAGE_DIR", image)
        guest = ncqguest.Guest(work, device=f"ncq-disk,model-file={model}",
                               disk_size=str(CAPACITY * 512),
                               extra_args=extra, snapshot=False,
                               memory="1G", timeout_s=900)
        res = guest.run(Workload(script=SCRIPT, timeout_s=600))
    print(res.output)
    print("\n".join(line for line in res.dmesg.splitlines()
                    if re.search(r"F2FS|crc32|I/O error|ata\d", line)))
    assert res.status == 0, f"workload failed:\n{res.output}"
    res.build_log = log
    return res


def _values(output, prefix):
    return dict(re.findall(rf"^{prefix} (\w+)=(\S+)$", output, re.M))


pytestmark = pytest.mark.skipif(
    not _kernel_612(), reason="checked once, on the 6.12 image "
    "(scripts/test.sh's second kernel): an image build and a boot kept out "
    "of the 6.1 step")


def test_image_brings_f2fs_soft_dependency(f2fs_image):
    image, log = f2fs_image
    mods = [line for line in
            (Path(image) / "manifest.txt").read_text().splitlines()
            if line.startswith("module ")]
    assert "module kernel/fs/f2fs/f2fs.ko" in mods, mods
    assert "module kernel/crypto/crc32_generic.ko" in mods, mods


@pytest.mark.parametrize("drive", ["zoned", "conventional"])
def test_f2fs_mounts_writes_and_reads_back(run, drive):
    v = _values(run.output, drive)
    assert v.get("mkfs") == "0", run.output
    assert v.get("mount") == "0", run.output + run.dmesg[-3000:]
    assert v.get("remount") == "0" and v.get("same") == "yes", run.output
    assert int(v["size"]) == 32 << 20
    assert "Cannot load crc32 driver" not in run.dmesg


def test_f2fs_on_the_host_managed_drive_writes_sequential_zones(run):
    assert re.search(r"^drive sd\w zoned=host-managed$", run.output, re.M)
    assert re.search(r"^drive sd\w zoned=none$", run.output, re.M)
    # its data went to sequential zones, at their write pointers
    assert int(re.search(r"swr_written=(\d+)", run.output)[1]) > 0
    # the crypto API's crc32 came from a module the image has
    mods = re.search(r"crc32_modules=(\S*)", run.output)[1]
    assert "crc32_generic" in mods or "crc32_pclmul" in mods, run.output
