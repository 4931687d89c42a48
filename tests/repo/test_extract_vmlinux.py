"""images/extract-vmlinux.py on bzImages made here: the payload found by
the setup header, each compression the standard library reads, the PVH
entry note required, and one-line refusals."""

import bz2
import gzip
import lzma
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "images/extract-vmlinux.py"


def elf_with_notes(notes):
    """A 64-bit little-endian ELF with one PT_NOTE segment holding notes
    [(name, type, desc)], the rest zero padding."""
    body = b""
    for name, ntype, desc in notes:
        n = name + b"\0"
        body += struct.pack("<III", len(n), len(desc), ntype)
        body += n + b"\0" * (-len(n) % 4) + desc + b"\0" * (-len(desc) % 4)
    phoff, notes_off = 64, 64 + 56
    hdr = bytearray(64)
    hdr[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", hdr, 0x20, phoff)
    struct.pack_into("<HH", hdr, 0x36, 56, 1)
    ph = struct.pack("<IIQQQQQQ", 4, 0, notes_off, 0, 0, len(body),
                     len(body), 4)
    return bytes(hdr) + ph + body + b"\0" * 256


def bzimage(payload, setup_sects=4, version=0x20f):
    """A bzImage whose setup header points at payload, which ends, as
    the kernel's build makes it, with the uncompressed size (4 bytes)."""
    payload += b"\x78\x56\x34\x12"
    setup = bytearray((setup_sects + 1) * 512)
    setup[0x1f1] = setup_sects
    setup[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", setup, 0x206, version)
    # payload_offset counts from the protected-mode code's start; a
    # decompressor stub of 100 bytes sits before it
    struct.pack_into("<II", setup, 0x248, 100, len(payload))
    return bytes(setup) + b"\x90" * 100 + payload + b"\0" * 64


PVH = [(b"Xen", 18, b"\0\0\0\x01"), (b"Linux", 6, b"x")]


def run(tmp_path, image):
    src, out = tmp_path / "bzImage", tmp_path / "vmlinux"
    src.write_bytes(image)
    p = subprocess.run(["/usr/bin/python3", str(TOOL), str(src), str(out)],
                       capture_output=True, text=True)
    return p, out


def zstd(data):
    return subprocess.run(["zstd", "-19", "-c"], input=data,
                          capture_output=True, check=True).stdout


@pytest.mark.parametrize("pack", [gzip.compress, bz2.compress, zstd,
                                  lambda d: lzma.compress(
                                      d, lzma.FORMAT_XZ,
                                      check=lzma.CHECK_CRC32),
                                  lambda d: lzma.compress(
                                      d, lzma.FORMAT_ALONE)],
                         ids=["gzip", "bzip2", "zstd", "xz", "lzma"])
def test_pvh_kernel_comes_out_whole(tmp_path, pack):
    elf = elf_with_notes(PVH)
    p, out = run(tmp_path, bzimage(pack(elf)))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == elf


def test_kernel_without_pvh_is_refused(tmp_path):
    elf = elf_with_notes([(b"Xen", 5, b"xen-3.0\0"), (b"Linux", 18, b"x")])
    p, out = run(tmp_path, bzimage(gzip.compress(elf)))
    assert p.returncode == 3
    assert "CONFIG_PVH" in p.stderr and len(p.stderr.splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("image, words", [
    (b"not a kernel" * 100, "not a bzImage"),
    (bzimage(gzip.compress(b"x"), version=0x207), "2.08 or later"),
    (bzimage(b"\x11\x22\x33\x44\x55\x66" * 10), "unknown kernel compression"),
    (bzimage(gzip.compress(b"plain text, no ELF" * 10)), "not a 64-bit"),
])
def test_bad_input_is_one_line(tmp_path, image, words):
    p, out = run(tmp_path, image)
    assert p.returncode == 1
    assert words in p.stderr and len(p.stderr.splitlines()) == 1
    assert not out.exists()
