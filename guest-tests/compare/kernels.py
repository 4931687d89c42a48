"""Kernels of a matrix: a Debian release's kernel by name, built (or found
in the cache) by images/build-image.sh, or an image directory."""

import hashlib
import subprocess
from pathlib import Path

import ncqguest

# name -> build-image.sh options
NAMED = {"6.1": [], "6.12": ["--debian", "trixie"]}


class KernelError(Exception):
    """The kernel's image could not be had; the message is one line."""


def _script_line(args):
    script = ncqguest.ROOT / "images" / "build-image.sh"
    p = subprocess.run([str(script), *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        # its own error line ("build-image: ..."), not the usage text that
        # may follow it
        lines = [x.strip() for x in p.stderr.splitlines() if x.strip()]
        own = [x for x in lines if x.startswith("build-image:")]
        err = own or lines or [f"exited with {p.returncode}"]
        raise KernelError(f"images/build-image.sh {' '.join(args)}: "
                          f"{err[-1]}")
    out = [x for x in p.stdout.splitlines() if x.strip()]
    if not out:
        raise KernelError(f"images/build-image.sh {' '.join(args)} printed "
                          "no directory")
    return Path(out[-1].strip())


def known(name):
    """Whether a matrix may name this kernel (a name or a directory)."""
    return name in NAMED or Path(name).is_dir()


def resolve(name):
    """The image directory of a kernel entry; KernelError if none."""
    if name in NAMED:
        path = _script_line(NAMED[name])
    else:
        path = Path(name)
    if not ((path / "vmlinuz").is_file() and (path / "initrd.img").is_file()):
        raise KernelError(f"kernel {name}: {path} has no vmlinuz and "
                          "initrd.img (an images/build-image.sh directory)")
    return path.resolve()


def shown(path):
    """A directory (a guest image, the QEMU build) as results.json names it:
    under the cache as
    $NCQ_CACHE/..., so that a committed report names no directory of the
    machine that made it (the inputs hash identifies the image)."""
    try:
        return "$NCQ_CACHE/" + str(Path(path).resolve().relative_to(
            Path(ncqguest.CACHE).resolve()))
    except ValueError:
        return str(path)


def identity(path):
    """What identifies an image: its inputs hash and kernel line from
    manifest.txt (images/build-image.sh), else digests of its files."""
    path = Path(path)
    out = {"dir": shown(path)}
    man = ncqguest.image_manifest(path)
    out.update({k: man[k] for k in ("inputs_hash", "kernel") if k in man})
    if "inputs_hash" not in out:
        h = hashlib.sha256()
        for f in ("vmlinuz", "initrd.img"):
            h.update((path / f).read_bytes())
        out["inputs_hash"] = h.hexdigest()[:16]
    return out
