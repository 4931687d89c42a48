#!/usr/bin/python3
"""Write the uncompressed kernel (an ELF) that a bzImage carries, when it
can boot through PVH, so that QEMU loads it as it is (-kernel vmlinux)
and the guest skips the decompressor: under TCG, Debian's xz-compressed
kernel spends about half of a boot's wall clock decompressing itself.

    images/extract-vmlinux.py BZIMAGE OUT

Exit status: 0, OUT written (an ELF with a PVH entry note); 3, the
kernel cannot boot that way (no PVH entry note: a kernel built without
CONFIG_PVH), OUT not written, a line saying so; 1, an error (one line).

The compressed payload is found from the boot protocol's setup header
(payload_offset and payload_length, protocol 2.08 and later: Linux's
Documentation/arch/x86/boot.rst), its format from its magic bytes.
gzip, xz, lzma and bzip2 decompress with Python's standard library,
zstd and lz4 with Debian's zstd and lz4 programs.
"""

import bz2
import lzma
import os
import struct
import subprocess
import sys
import zlib

# ELF note (name "Xen", type XEN_ELFNOTE_PHYS32_ENTRY = 18): the 32-bit
# entry point of PVH boot, present when the kernel has CONFIG_PVH
PVH_NOTE_TYPE = 18


class Refused(Exception):
    """The kernel cannot boot through PVH (exit status 3)."""


def payload(image):
    """The compressed kernel inside a bzImage."""
    if len(image) < 0x250 or image[0x202:0x206] != b"HdrS":
        raise ValueError("not a bzImage (no 'HdrS' setup header)")
    version = struct.unpack_from("<H", image, 0x206)[0]
    if version < 0x208:
        raise ValueError(f"boot protocol {version >> 8}.{version & 0xff} "
                         "has no payload fields (2.08 or later needed)")
    setup_sects = image[0x1f1] or 4
    offset, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + offset
    return image[start:start + length]


def _run(cmd, data):
    try:
        p = subprocess.run(cmd, input=data, capture_output=True, check=True)
    except FileNotFoundError:
        raise ValueError(f"'{cmd[0]}' not found: install Debian's "
                         f"{cmd[0]} package")
    except subprocess.CalledProcessError as e:
        raise ValueError(f"{cmd[0]} failed: "
                         f"{e.stderr.decode(errors='replace').strip()}")
    return p.stdout


def decompress(data):
    """The payload decompressed, by its magic bytes.  The kernel's build
    appends the uncompressed size (4 bytes) to the compressed stream:
    the decoders that stop at the stream's end ignore it, the zstd and
    lz4 programs are given the stream without it."""
    if data[:2] == b"\x1f\x8b":
        return zlib.decompressobj(wbits=31).decompress(data)
    if data[:6] == b"\xfd7zXZ\x00":
        # the kernel's xz stream may carry trailing padding
        return lzma.LZMADecompressor(lzma.FORMAT_XZ).decompress(data)
    if data[:3] == b"\x5d\x00\x00":
        return lzma.LZMADecompressor(lzma.FORMAT_ALONE).decompress(data)
    if data[:3] == b"BZh":
        return bz2.BZ2Decompressor().decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return _run(["zstd", "-dcq"], data[:-4])
    if data[:4] == b"\x02\x21\x4c\x18":
        return _run(["lz4", "-dcq"], data[:-4])
    raise ValueError(f"unknown kernel compression (magic {data[:6].hex()})")


def has_pvh_note(elf):
    """Whether a 64-bit little-endian ELF has the PVH entry note."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("the payload is not a 64-bit little-endian ELF")
    phoff = struct.unpack_from("<Q", elf, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        ptype, _, off, _, _, filesz = struct.unpack_from(
            "<IIQQQQ", elf, phoff + i * phentsize)
        if ptype != 4:                  # PT_NOTE
            continue
        pos, end = off, off + filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == PVH_NOTE_TYPE:
                return True
            pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def extract(bzimage, out):
    with open(bzimage, "rb") as f:
        elf = decompress(payload(f.read()))
    if not has_pvh_note(elf):
        raise Refused("no PVH entry note (the kernel was built without "
                      "CONFIG_PVH): it boots from the bzImage")
    tmp = f"{out}.tmp"
    with open(tmp, "wb") as f:
        f.write(elf)
    os.replace(tmp, out)


def main(argv):
    if len(argv) != 3:
        print("usage: extract-vmlinux.py BZIMAGE OUT", file=sys.stderr)
        return 1
    try:
        extract(argv[1], argv[2])
    except Refused as e:
        print(f"extract-vmlinux: {argv[1]}: {e}", file=sys.stderr)
        return 3
    except (OSError, ValueError, EOFError, lzma.LZMAError, zlib.error) as e:
        print(f"extract-vmlinux: {argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
