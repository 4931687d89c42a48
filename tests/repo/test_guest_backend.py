"""ncqguest.Guest(backend="null"): the drive's data go to QEMU's null-co
(what run-cdl-tools.sh uses by default, so that a write group over a 16 TB
stroke fills no host disk): the command line, no image made, no snapshot
(savevm needs an image)."""
import pytest

import ncqguest


@pytest.fixture
def built(monkeypatch, tmp_path):
    # the command line only: no QEMU or image is run or built
    monkeypatch.setenv("NCQ_QEMU_BUILD", str(tmp_path / "build"))
    monkeypatch.setenv("NCQ_IMAGE_DIR", str(tmp_path / "image"))
    return tmp_path


def drive_arg(cmd):
    return cmd[cmd.index("-drive") + 1]


def test_null_backend_command(built):
    g = ncqguest.Guest(built / "g", device="ncq-disk,model=seagate-exos-x18",
                       disk_size="18000207937536", backend="null",
                       snapshot=True)
    assert not g.snapshot
    g._make_disk()
    assert not (built / "g" / "disk.qcow2").exists()
    arg = drive_arg(g.command(built / "w"))
    assert "driver=null-co" in arg and "size=18000207937536" in arg
    assert "read-zeroes=on" in arg and "file=" not in arg


def test_default_backend_is_the_image(built):
    g = ncqguest.Guest(built / "g", snapshot=False)
    arg = drive_arg(g.command(built / "w"))
    assert arg.endswith("format=qcow2") and "null-co" not in arg


def test_bad_backend_refused(built):
    with pytest.raises(ValueError, match="qcow2 or null"):
        ncqguest.Guest(built / "g", backend="raw")
    with pytest.raises(ValueError, match="no disk file"):
        ncqguest.Guest(built / "g", backend="null", disk=built / "x.qcow2")
