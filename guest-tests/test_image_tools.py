"""The guest runs a user's suite (issue 26, item 5): in one boot, the
image's shell is bash with /dev/fd, gzip and umount are the real ones (not
busybox's applets), fio has libaio and cmdprio_hint (and a stub of the
libraries of engines nobody here runs), Guest(smp=N) gives N
CPUs, a 4 MiB file reaches the guest intact through fw_cfg's DMA
interface, and Workload.timeout_s ends a workload that would not stop.

Boots (snapshot=False): a snapshot of a 2-CPU guest would serve this test
only.  docs/kernel-testing.md, "Your own suite", has the options."""
import hashlib
import random

import ncqguest

SMP = 2
BIG = random.Random(26).randbytes(4 << 20)

SCRIPT = r"""
echo "shell $BASH_VERSION"
echo "binsh $(readlink /bin/sh)"
echo "devfd $(readlink /dev/fd)"
cat <(echo "procsub works")
echo "gzip $(gzip --version | head -1)"
echo "umount $(umount --version)"
echo "bc $(echo '6 * 7' | bc)"
echo "gtime $(/usr/bin/time -f %C true 2>&1)"
echo "cpus $(nproc) $(grep -c ^processor /proc/cpuinfo)"
echo "big $(sha256sum /workload/big.bin | cut -d' ' -f1)"
grep -q 'fwcfg-read failed' $RESULTS/init.log && echo "fwcfg fallback"
fio --enghelp=libaio | grep -o '^ *cmdprio_hint' | sed 's/^ */fiohint /'
fio --parse-only --name=hint --ioengine=libaio --cmdprio_percentage=100 \
    --cmdprio_class=2 --cmdprio_hint=1 && echo "fio cmdprio_hint parsed"
echo "kernel $(uname -r)"
fio --name=hint --filename=/dev/sda --ioengine=libaio --direct=1 \
    --rw=randread --bs=4k --size=256k --cmdprio_percentage=100 \
    --cmdprio_class=2 --cmdprio_hint=1 --output-format=terse >/dev/null \
    && echo "fio cmdprio_hint ran"
echo "version $(fio --version)"
fio --name=stub --ioengine=rbd --pool=p --rbdname=i --clientname=c --size=4k 2>&1 \
    | grep -o 'librados.so.2 is a stub in this image' | sed 's/^/fiostub /'
echo "before the timeout $(cut -d" " -f1 /proc/uptime)"
sleep 3600
echo "after the timeout"
"""


def test_image_tools_smp_transfer_timeout(make_guest):
    guest = make_guest(smp=SMP, snapshot=False, timeout_s=300)
    r = guest.run(ncqguest.Workload(script=SCRIPT, timeout_s=20,
                                    files={"big.bin": BIG}))
    out = r.output
    print(out)
    lines = dict(x.split(" ", 1) for x in out.splitlines() if " " in x)
    assert lines.get("shell", "").startswith("5."), out
    assert lines.get("binsh") == "bash", out
    assert lines.get("devfd") == "/proc/self/fd", out
    assert "procsub works" in out
    assert lines.get("gzip", "").startswith("gzip 1."), out     # not BusyBox
    assert "util-linux" in lines.get("umount", ""), out
    assert lines.get("bc") == "42", out
    assert lines.get("gtime") == "true", out
    assert lines.get("cpus") == f"{SMP} {SMP}", out
    assert lines.get("big") == hashlib.sha256(BIG).hexdigest(), out
    assert "fwcfg fallback" not in out, r.files.get("init.log")
    assert "fiohint cmdprio_hint" in out, out
    assert "fio cmdprio_hint parsed" in out, out
    # Linux takes I/O priority hints from 6.5 on (6.1 refuses the value)
    kernel = tuple(int(x) for x in lines["kernel"].split(".")[:2])
    if kernel >= (6, 5):
        assert "fio cmdprio_hint ran" in out, out
    # the engines' libraries nobody here uses are stubs (FIO_STUBS in
    # images/build-image.sh): one of them stops fio with a line naming it
    assert lines.get("fiostub") == "librados.so.2 is a stub in this image", out
    major, minor = lines["version"].removeprefix("fio-").split(".")[:2]
    assert (int(major), int(minor)) >= (3, 36), out
    # the guest-side timeout: killed in the sleep, status 128 + SIGKILL
    assert "before the timeout" in out and "after the timeout" not in out
    assert r.status == 137, (r.status, out)
