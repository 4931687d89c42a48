"""Kernel entries: names, image directories, and a build that fails
giving one line (the cells of that kernel fail with it)."""
import pytest

from compare import kernels


def test_known_names_and_directories(tmp_path):
    assert kernels.known("6.1") and kernels.known("6.12")
    assert kernels.known(str(tmp_path))
    assert not kernels.known("5.4")


def test_directory_without_an_image_is_refused(tmp_path):
    with pytest.raises(kernels.KernelError, match="no vmlinuz"):
        kernels.resolve(str(tmp_path))


def test_image_directory_and_its_identity(tmp_path):
    (tmp_path / "vmlinuz").write_bytes(b"k")
    (tmp_path / "initrd.img").write_bytes(b"i")
    assert kernels.resolve(str(tmp_path)) == tmp_path.resolve()
    ident = kernels.identity(tmp_path)
    assert len(ident["inputs_hash"]) == 16
    (tmp_path / "manifest.txt").write_text(
        "# x\ninputs_hash abc\nkernel debian-package linux-image-x 1\n")
    ident = kernels.identity(tmp_path)
    assert ident["inputs_hash"] == "abc"
    assert ident["kernel"] == "debian-package linux-image-x 1"


def test_a_failing_build_is_one_line(monkeypatch):
    monkeypatch.setitem(kernels.NAMED, "broken", ["--no-such-option"])
    with pytest.raises(kernels.KernelError) as e:
        kernels.resolve("broken")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("images/build-image.sh --no-such-option: ")
    assert "--no-such-option" in msg.split(": ", 1)[1]
