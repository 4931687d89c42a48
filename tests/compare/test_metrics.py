"""A cell's metrics from a device trace and fio's output."""
import math

import pytest

from compare import metrics
from compare_helpers import MARKER, fio, trace


def test_trace_metrics_count_only_what_follows_the_marker():
    m = metrics.cell_metrics(trace(), None, {}, MARKER)
    assert m["commands"] == 10                       # boot and marker out
    assert m["drive_ms"]["p50"] == pytest.approx(5.5)
    assert m["drive_ms"]["max"] == pytest.approx(10.0)
    assert m["delay_max"] == 7
    assert m["delay_hist"] == {"0": 5, "1": 4, "7": 1}
    assert m["timeouts"] == 1
    assert m["lat_source"] == "trace"
    # no fio: throughput from the trace, 10 commands in 19 ms
    assert m["iops"] == pytest.approx(10 / 0.019, rel=1e-3)
    assert len(m["lat_cdf_ms"]) == metrics.CDF_POINTS


def test_fio_jobs_sum_and_fairness():
    logs = metrics.lat_logs({
        "lat-far_clat.1.log": b"10, 2000000000, 0, 4096, 0\n"
                              b"20, 2500000000, 0, 4096, 0\n",
        "lat-far_lat.1.log": b"10, 1, 0, 4096, 0\n",     # not a clat log
        "output.txt": b"x"})
    assert logs == {"far.1": [2000.0, 2500.0]}
    m = metrics.cell_metrics(trace(), fio(), logs, MARKER)
    assert set(m["jobs"]) == {"near.1", "near.2", "far"}
    assert m["iops"] == pytest.approx(70.0)
    assert m["mbs"] == pytest.approx(280 * 1024 / 1e6, abs=1e-3)
    assert m["worst_ms"] == pytest.approx(2500.0)
    assert m["lat_ms"]["max"] == pytest.approx(2500.0)
    assert m["lat_ms"]["p50"] == pytest.approx(2250.0)
    # Jain over 30, 30, 10: 70^2 / (3 * 1900)
    assert m["fairness"] == pytest.approx(4900 / 5700, abs=1e-4)
    assert m["jobs"]["far"]["p99_ms"] == pytest.approx(2000.0)


def test_percentiles_and_cdf():
    b = metrics.pct_block(list(range(1, 101)))
    assert b["p50"] == pytest.approx(50.5) and b["max"] == 100
    assert b["p99.9"] == pytest.approx(99.901)
    assert metrics.pct_block([]) == {}
    q = metrics.cdf_points([5.0] * 3 + [7.0])
    assert q[0] == 5.0 and q[-1] == 7.0 and q == sorted(q)


def test_flat_names_the_compared_metrics():
    m = metrics.cell_metrics(trace(), fio(), {}, MARKER)
    f = metrics.flat(m)
    assert "lat_ms.p99" not in f                     # no logs: no host tail
    assert f["drive_ms.max"] == pytest.approx(10.0)
    assert set(f) <= set(metrics.COMPARED)
    assert not any(isinstance(v, float) and math.isnan(v)
                   for v in f.values())


def test_missing_marker_is_an_error():
    with pytest.raises(ValueError, match="markers"):
        metrics.cell_metrics(trace()[2:], None, {}, MARKER)


def test_libata_health_counts_failed_commands_and_ncq_off():
    dmesg = ("ata1.00: failed command: READ FPDMA QUEUED\n"
             "ata1.00: NCQ disabled due to excessive errors\n"
             "ata1.00: failed command: READ FPDMA QUEUED\n")
    assert metrics.libata_health(dmesg) == {"libata_errors": 2,
                                            "ncq_disabled": True}
    assert metrics.libata_health("ata1.00: NCQ (depth 32)\n") == {
        "libata_errors": 0, "ncq_disabled": False}
