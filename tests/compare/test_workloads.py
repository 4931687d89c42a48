"""The workload library: every workload resolves, says what metric
matters, honours the duration, and bad names are one line."""
import pytest

import workloads

LIB = workloads.library()


def test_library_has_the_issues_six_workloads():
    assert set(LIB) == {"random-readers", "far-reader", "rt-reader",
                        "seq-readers", "fsync-writer", "writeback-burst",
                        "zoned-writers"}


@pytest.mark.parametrize("name", sorted(LIB))
def test_workload_is_documented_and_timed(name):
    mod = LIB[name]
    assert "Metric that matters" in mod.__doc__
    assert mod.METRIC
    assert "duration" in mod.PARAMS
    spec = workloads.resolve(name, duration=3)
    assert spec.params["duration"] == 3
    assert "runtime=3s" in spec.fio
    assert "write_lat_log=/results/lat-" in spec.fio
    assert spec.fio.startswith(workloads.GLOBAL)
    longer = workloads.resolve(name, duration=30)
    assert longer.sha256() != spec.sha256()


def test_parameters_override_the_defaults_and_the_duration():
    s = workloads.resolve("random-readers:depth=4,duration=2", duration=9)
    assert s.params == {"depth": 4, "readers": 1, "duration": 2}
    assert "iodepth=4" in s.fio


@pytest.mark.parametrize("text,words", [
    ("random-reader", "unknown workload 'random-reader'"),
    ("random-readers:deep=2", "has no parameter 'deep'"),
    ("random-readers:depth", "is not key=value"),
    ("nothere.fio", "does not exist"),
])
def test_bad_workload_is_one_line(text, words):
    with pytest.raises(workloads.WorkloadError) as e:
        workloads.resolve(text)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_fio_and_script_files(tmp_path):
    (tmp_path / "j.fio").write_text("[x]\nrw=read\n")
    (tmp_path / "s.sh").write_text("dd if=/dev/sda of=/dev/null count=1\n")
    f = workloads.resolve("j.fio", base=tmp_path)
    s = workloads.resolve("s.sh", base=tmp_path)
    assert (f.kind, f.fio) == ("fio", "[x]\nrw=read\n")
    assert s.kind == "script" and s.script.startswith("dd")
