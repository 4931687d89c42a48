"""images/module-closure.py on a made-up lib/modules tree: the modules an
image needs for a name are its modules.dep closure and its soft
dependencies, an alias bringing every module it names, the crypto API's
"crypto-NAME" alias among them, transitively; a built-in or absent name
needs nothing, and a required one that is absent is a one-line error."""
import lzma
import subprocess
import sys

import pytest

from repopaths import ROOT

TOOL = ROOT / "images" / "module-closure.py"

DEP = """\
kernel/fs/f2fs/f2fs.ko.xz: kernel/lib/lz4/lz4_compress.ko.xz
kernel/lib/lz4/lz4_compress.ko.xz:
kernel/crypto/crc32_generic.ko.xz:
kernel/arch/x86/crypto/crc32-pclmul.ko.xz:
kernel/fs/btrfs/btrfs.ko.xz: kernel/lib/raid6/raid6_pq.ko.xz
kernel/lib/raid6/raid6_pq.ko.xz:
kernel/crypto/xxhash_generic.ko.xz:
kernel/crypto/crc32c_generic.ko.xz:
kernel/crypto/ecb.ko.xz:
kernel/fs/plain/plain.ko:
"""
SOFTDEP = """\
# Soft dependencies extracted from modules themselves.
softdep f2fs pre: crc32
softdep btrfs pre: xxhash64
softdep btrfs pre: crypto-crc32c
softdep xxhash_generic post: ecb
"""
ALIAS = """\
# Aliases extracted from modules themselves.
alias crypto-crc32 crc32_pclmul
alias crc32 crc32_pclmul
alias crypto-crc32 crc32_generic
alias crc32 crc32_generic
alias crypto-xxhash64 xxhash_generic
alias xxhash64 xxhash_generic
alias crypto-crc32c crc32c_generic
alias crypto-ecb ecb
alias pci:v00008086d*sv*sd*bc01sc06i01* ahci
"""
# lib/crc32 built in: a module "crc32" exists, but the crypto algorithm
# f2fs asks for is crypto-crc32's
BUILTIN = "kernel/lib/crc32.ko\nkernel/block/bfq.ko\n"


@pytest.fixture
def tree(tmp_path):
    d = tmp_path / "lib/modules/6.12.0-test"
    d.mkdir(parents=True)
    (d / "modules.dep").write_text(DEP)
    (d / "modules.softdep").write_text(SOFTDEP)
    (d / "modules.alias").write_text(ALIAS)
    (d / "modules.builtin").write_text(BUILTIN)
    for line in DEP.splitlines():
        f = d / line.split(":")[0]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"")
    return d


def closure(tree, *args):
    p = subprocess.run([sys.executable, str(TOOL), str(tree), *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.split(), p.stderr


def test_softdep_alias_brings_every_module_it_names(tree):
    rc, mods, err = closure(tree, "f2fs")
    assert rc == 0, err
    assert mods == ["kernel/arch/x86/crypto/crc32-pclmul.ko.xz",
                    "kernel/crypto/crc32_generic.ko.xz",
                    "kernel/fs/f2fs/f2fs.ko.xz",
                    "kernel/lib/lz4/lz4_compress.ko.xz"]
    assert "module f2fs: soft dependency crc32: crc32_generic, " \
        "crc32_pclmul" in err


def test_softdeps_are_followed_transitively(tree):
    rc, mods, err = closure(tree, "btrfs")
    assert rc == 0, err
    # btrfs -> raid6_pq (modules.dep), xxhash64 -> xxhash_generic, whose
    # own post: softdep brings ecb; crypto-crc32c -> crc32c_generic
    assert mods == ["kernel/crypto/crc32c_generic.ko.xz",
                    "kernel/crypto/ecb.ko.xz",
                    "kernel/crypto/xxhash_generic.ko.xz",
                    "kernel/fs/btrfs/btrfs.ko.xz",
                    "kernel/lib/raid6/raid6_pq.ko.xz"]


def test_without_modules_softdep_the_modinfo_is_read(tree):
    (tree / "modules.softdep").unlink()
    # the module file's .modinfo strings, compressed as Debian ships them
    (tree / "kernel/fs/f2fs/f2fs.ko.xz").write_bytes(lzma.compress(
        b"\x7fELF...\0license=GPL\0softdep=pre: crc32\0author=x\0"))
    rc, mods, err = closure(tree, "f2fs")
    assert rc == 0, err
    assert "kernel/crypto/crc32_generic.ko.xz" in mods
    # and with neither, f2fs comes alone with its modules.dep line
    (tree / "kernel/fs/f2fs/f2fs.ko.xz").write_bytes(lzma.compress(b"x"))
    rc, mods, _ = closure(tree, "f2fs")
    assert mods == ["kernel/fs/f2fs/f2fs.ko.xz",
                    "kernel/lib/lz4/lz4_compress.ko.xz"]


def test_builtin_absent_and_required(tree):
    rc, mods, err = closure(tree, "bfq", "nosuch", "plain")
    assert rc == 0 and mods == ["kernel/fs/plain/plain.ko"]
    assert "module bfq: built into the kernel" in err
    assert "note: module nosuch: not in this kernel, left out" in err
    rc, mods, err = closure(tree, "--required", "nosuch", "plain")
    assert rc == 2 and mods == []
    assert err.count("\n") == 1
    assert err.startswith("module-closure: --module nosuch: no such module "
                          "or alias in kernel 6.12.0-test")


def test_names_compare_as_the_kernel_does(tree):
    # '-' and '_' alike: crc32-pclmul by either spelling
    _, a, _ = closure(tree, "crc32_pclmul")
    _, b, _ = closure(tree, "crc32-pclmul")
    assert a == b == ["kernel/arch/x86/crypto/crc32-pclmul.ko.xz"]


def test_no_modules_dep_is_an_error(tmp_path):
    rc, _, err = closure(tmp_path)
    assert rc == 1 and "has no modules.dep (run depmod)" in err
