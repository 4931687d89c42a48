"""ncq-fit's fitting maths on synthetic samples from a known drive: the
known values come back, within what the method promises; missing data
gives the stated default and a "could not measure" line."""

import math
import statistics

import pytest
import synth

from ncqfit import (cache, fit, layout, policy, rotation, samples, seek,
                    writer, zones)


def test_rpm_recovered():
    rev, rpm, used, n = rotation.fit_revolution(synth.rev_records())
    assert abs(rpm - 7200) / 7200 < 0.0005
    assert used == n


def test_rpm_drops_missed_turns():
    recs = synth.rev_records(n=40)
    t = recs[0]["done_ns"]
    # a pause of two revolutions (a thermal recalibration, a missed turn)
    recs[0]["done_ns"] = t[:20] + [x + int(2 * synth.REV) for x in t[20:]]
    rev, rpm, used, n = rotation.fit_revolution(recs)
    assert abs(rpm - 7200) / 7200 < 0.0005
    assert used == n - 1


def test_zones_recovered_with_boundaries():
    truth = [(0, 80e6), (1_000_000, 70e6), (2_500_000, 55e6)]
    cap = 4_000_000
    pts = list(range(0, cap - 20000, 100_000))
    # a stream across the first boundary, as the probe's bisection reads
    recs = synth.zone_records(truth, pts, cap)
    recs += synth.zone_records([(0, 75e6)], [995_000], cap)
    zs = zones.fit_zones(recs, cap)
    assert len(zs) == 3
    for (first, end, rate), (tf, tr) in zip(zs, truth):
        assert abs(rate - tr) / tr < 0.001
        assert abs(first - tf) <= 100_000


@pytest.mark.parametrize("extra_ns", [0, 4_000_000])
def test_a_stream_across_a_boundary_is_split_there(extra_ns):
    truth = [(0, 80e6), (1_000_000, 70e6)]
    rec = synth.stream_record(truth, 980_001, boundary_extra_ns=extra_ns)
    pts = zones.point_rates([rec])
    assert len(pts) == 2, pts
    (a, ra, span), (b, rb, _) = pts
    assert a == 980_001 and a + span == b
    assert abs(b - 1_000_000) <= 2048          # within one read
    assert abs(ra / 80e6 - 1) < 0.002 and abs(rb / 70e6 - 1) < 0.002


def test_switch_noise_is_not_a_boundary():
    # every fourth read 5 % longer (a cylinder switch): one zone
    rec = synth.stream_record([(0, 80e6)], 500_000, switch_every=4,
                              switch_ns=650_000)
    assert len(zones.point_rates([rec])) == 1


def test_zones_narrower_than_the_point_spacing_are_kept():
    # a small disk: points 89,000 sectors apart, streams of 65,536, zones
    # of 150,000 (hp-c2247a's); each boundary inside one stream
    truth = [(0, 3.81e6), (665_000, 3.67e6), (894_000, 3.49e6),
             (1_050_000, 3.34e6), (1_207_000, 3.17e6), (1_351_000, 2.84e6)]
    cap = 1_648_000
    recs = [synth.stream_record(truth, lba) for lba in
            range(0, cap - 65_536, 89_000)]
    zs = zones.fit_zones(recs, cap)
    assert len(zs) == len(truth), [(f, round(r / 1e6, 3)) for f, _, r in zs]
    for (first, _, rate), (tf, tr) in zip(zs, truth):
        assert abs(rate - tr) / tr < 0.005
        # split streams give the boundary within a read; otherwise it is
        # midway across the gap between two streams (11,732 sectors
        # either way), or in a stream's first two reads, which are not
        # timed (4,096 more)
        assert abs(first - tf) <= 11_732 + 4_096, (first, tf)


@pytest.mark.parametrize("jitter_ms", [0.0, 0.3, 1.65])
def test_seek_threshold_midpoint(jitter_ms):
    """The midpoint of the made-it ramp (seek + mean jitter) within 3 %
    of a 1 ms effective seek, and the jitter within 25 %."""
    base = 300_000
    jit = jitter_ms * 1e6
    errs, widths = [], []
    for seed in range(30):
        recs = synth.seek_records(base, 0, 0, 0, seed=seed) + \
            synth.seek_records(base + 1e6 - jit / 2, jit, 0, 8000, seed=seed)
        sk = seek.fit_seek([r for r in recs if r["type"] == "seek"],
                           synth.REV,
                           [r for r in recs if r["type"] == "seek_bracket"])
        errs.append(sk["points"][0][2] / 1e6 - 1.0)
        widths.append(sk["jitter_ns"])
    assert abs(statistics.median(errs)) < 0.03, errs
    if jitter_ms:
        assert abs(statistics.median(widths) / jit - 1) < 0.25, widths


def test_policy_classes():
    def recs(depth, service_ms, reorder):
        out, t = [], 0
        for i in range(200):
            sub = t
            done = sub + int(service_ms * 1e6 * depth)
            if reorder and i % 3 == 0:
                done += int(service_ms * 1e6 * depth)
            out.append({"depth": depth, "submit_ns": sub, "done_ns": done})
            t += int(service_ms * 1e6)
        return out
    fcfs = policy.depth_stats(recs(1, 12, False) + recs(32, 12, False))
    assert policy.fit_policy(fcfs)[0] == "fcfs"
    sptf = policy.depth_stats(recs(1, 12, False) + recs(32, 8, True))
    assert policy.fit_policy(sptf)[0] == "sptf"


def _base_samples():
    recs = [{"type": "capacity", "sectors": 4_000_000}]
    recs += synth.rev_records()
    recs += synth.zone_records([(0, 80e6)], range(0, 3_900_000, 200_000),
                               4_000_000)
    return recs


def test_no_seek_data_gives_default_and_line(tmp_path):
    f = fit.fit(samples.Samples(_base_samples()), "synthetic")
    whats = [m[0] for m in f.missing]
    assert "seek curve" in whats
    text = writer.render(f)
    assert "a_ms = 0.8" in text and "default: no seek profile" in text
    # the file loads: the layout holds the capacity at the measured rate
    p = tmp_path / "m.ncqm"
    p.write_text(text)
    lay = layout.load(p)
    assert lay.zones[-1]["first_lba"] + lay.zones[-1]["cyls"] * \
        lay.zones[-1]["mapped"] >= 4_000_000
    assert abs(lay.rate_at(1000) / 80e6 - 1) < 0.01


def test_every_value_has_a_comment():
    f = fit.fit(samples.Samples(_base_samples()), "synthetic")
    for line in writer.render(f).splitlines():
        if "=" in line and not line.startswith(("#", "point")):
            assert "#" in line and line.split("#", 1)[1].strip(), line


def test_writer_refuses_a_key_it_has_no_place_for():
    """A value the fitter sets under a key writer.ORDER lacks is an error,
    not a line silently left out of the model file."""
    f = fit.fit(samples.Samples(_base_samples()), "synthetic")
    f.values[("cache", "no_such_key")] = (1, "test")
    with pytest.raises(ValueError, match=r"\[cache\] no_such_key"):
        writer.render(f)


def test_no_samples_refused():
    with pytest.raises(samples.SampleError):
        samples.Samples([{"type": "rev", "done_ns": [1, 2]}])
    with pytest.raises(ValueError, match="no revolution"):
        fit.fit(samples.Samples([{"type": "capacity", "sectors": 100}]))


def test_layout_rate_formula_matches_st3400620as_figure():
    """The streaming rate formula against the figure docs/model.md gives
    for st3400620as's outer zone (76.7 MB/s from LBA 0, test-overlap)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    lay = layout.load(root / "hw/ide/ncq-model/models/st3400620as.ncqm")
    assert math.isclose(lay.rate_at(0) / 1e6, 76.7, rel_tol=0.005)


def test_monotone_pools_noise_keeps_steps():
    # a flat profile with noise (st3400620as's head-switch region) is
    # pooled; a step down of many standard errors (a head switch at one
    # distance, none at the next: fujitsu-max3036rc) is kept
    flat = fit.monotone([1.70e6, 1.62e6, 1.75e6, 1.66e6], [5e4] * 4)
    assert all(b >= a for a, b in zip(flat, flat[1:]))
    steps = fit.monotone([0.50e6, 0.20e6, 0.50e6], [1e4] * 3)
    assert steps == [0.50e6, 0.20e6, 0.50e6]


REV = 60e9 / 7200


def _link_records(bus_bps, n=12, overhead_ns=300_000, miss_every=0):
    out = []
    for i in range(n):
        def hit(nbytes):
            return int(overhead_ns + nbytes / bus_bps * 1e9)
        large = [hit(65536), hit(65536)]
        if miss_every and i % miss_every == 0:
            large = [x + 4_000_000 + 500_000 * i for x in large]
        out.append({"type": "link", "lba": i * 1000, "small_bytes": 4096,
                    "large_bytes": 65536, "small_ns": [hit(4096)] * 2,
                    "large_ns": large})
    return out


@pytest.mark.parametrize("bus", [5.172e6, 9e6, 150e6])
def test_link_rate_from_hits_of_two_sizes(bus):
    rate, size, places = cache.fit_link(_link_records(bus), REV)
    assert abs(rate / bus - 1) < 0.001 and (size, places) == (65536, 12)


def test_link_refused_when_the_large_read_misses():
    # a segment smaller than 64 KiB: the large read waits for the media,
    # differently at every place
    assert cache.fit_link(_link_records(150e6, miss_every=1), REV) is None


def test_link_refused_when_the_small_read_misses():
    # a segment smaller than 64 KiB (dec-rz26's 28.5 KiB): the 64 KiB read
    # pushes the place's start out, and every 4 KiB read waits a turn
    recs = _link_records(6e6)
    for r in recs:
        r["small_ns"] = [7_300_000, 7_300_000]
    assert cache.fit_link(recs, 60e9 / 5360) is None
    # ... and the 16 KiB reads, which its segments hold, give the link
    for r in _link_records(6e6):
        r["large_bytes"] = 16384
        r["large_ns"] = [int(300_000 + 16384 / 6e6 * 1e9)] * 2
        recs.append(r)
    rate, size, _ = cache.fit_link(recs, 60e9 / 5360)
    assert abs(rate / 6e6 - 1) < 0.001 and size == 16384


def test_a_slow_link_is_written_and_a_fast_one_left_to_sata(tmp_path):
    for bus, written in ((5.172e6, True), (140e6, False)):
        f = fit.Fit("x")
        f.set("drive", "sata_gen", 1, "test")
        s = samples.Samples([{"type": "capacity", "sectors": 1000}] +
                            _link_records(bus))
        fit._link(f, s, REV)
        assert (("drive", "bus_mb_s") in f.values) == written
        if written:
            assert abs(f.get("drive", "bus_mb_s") - 5.172) < 0.01


@pytest.mark.parametrize("own_ms,bus", [(1.419, 11.86e6), (0.06, None)])
def test_hit_overhead_given_the_hosts_share(own_ms, bus):
    # a hit's response: the host's 85 us, the drive's overhead, 4 KiB over
    # the link (hp-c2490a's 12 MB/s bus; SATA 3 Gb/s when none was found)
    f = fit.Fit("synthetic")
    f.set("drive", "sata_gen", 2, "")
    if bus:
        f.data["link_bps"] = bus
    hit = 85_000 + own_ms * 1e6 + 4096 / (bus or 300e6) * 1e9
    fit._read_hit(f, hit, 85)
    assert f.get("overhead", "read_hit_ms") == pytest.approx(own_ms, abs=0.001)
    assert not f.missing
    # without the host's share the drive's cannot be told: the default,
    # named among what was not measured
    g = fit.Fit("synthetic")
    g.set("drive", "sata_gen", 2, "")
    fit._read_hit(g, hit, None)
    assert g.get("overhead", "read_hit_ms") == 0.1
    assert [m[0] for m in g.missing] == ["overhead.read_hit_ms"]
