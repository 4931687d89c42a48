"""--baseline: no change, a moved metric named with its change, a changed
tunable compared with what stood in its place, and baselines from another
QEMU build or image refused."""
import pytest

from compare import baseline
from compare_helpers import base_metrics, cell, results


def two(metrics2=None, sched2="mq-deadline"):
    return [cell(0, (0, 0, 0, 0)),
            cell(1, (0, 1, 0, 0), sched2, metrics2)]


def test_identical_runs_say_no_change():
    base = results(two())
    changes, notes = baseline.compare(base, results(two()), 0.05)
    assert changes == {} and notes == []
    lines = baseline.summary(changes, notes, 2, 0.05, "b.json")
    assert lines == ["no change: 2 cells within 5 % of baseline b.json"]


def test_a_move_over_the_threshold_names_cell_and_metric():
    m = base_metrics()
    m["lat_ms"]["p99"] = 33.0          # +10 %
    m["iops"] = 104.0                  # +4 %: under 5 %
    changes, _ = baseline.compare(results(two()), results(two(m)), 0.05)
    cid = "6.1 | mq-deadline | model=x | w"
    assert list(changes) == [cid]
    assert changes[cid] == ["lat_ms.p99 30 -> 33 (+10.0 %)"]
    lines = baseline.summary(changes, [], 2, 0.05, "b.json")
    assert lines[0].startswith("changed: 1 of 2 cells moved more than 5 %")
    assert cid in lines[1] and "+10.0 %" in lines[1]
    # a wider threshold lets it pass
    assert baseline.compare(results(two()), results(two(m)), 0.2)[0] == {}


def test_changed_tunable_is_matched_by_its_place_in_the_matrix():
    m = base_metrics()
    m["timeouts"] = 3                  # from 0: any change counts
    new = results(two(m, "mq-deadline:fifo_batch=1"))
    changes, notes = baseline.compare(results(two()), new, 0.05)
    cid = "6.1 | mq-deadline:fifo_batch=1 | model=x | w"
    assert changes[cid][0] == "in place of 6.1 | mq-deadline | model=x | w"
    assert "timeouts 0 -> 3 (+inf %)" in changes[cid]
    assert notes == []


def test_a_cell_that_fails_now_is_a_change():
    new = results([cell(0, (0, 0, 0, 0)),
                   cell(1, (0, 1, 0, 0), "mq-deadline", status="failed")])
    changes, _ = baseline.compare(results(two()), new, 0.05)
    assert "status ok -> failed" in changes[
        "6.1 | mq-deadline | model=x | w"][0]


def test_new_cells_are_noted_not_failed():
    new = results(two() + [cell(2, (0, 2, 0, 0), "bfq")])
    changes, notes = baseline.compare(results(two()), new, 0.05)
    assert changes == {}
    assert notes == ["6.1 | bfq | model=x | w: not in the baseline"]


def test_other_qemu_build_is_not_comparable():
    with pytest.raises(baseline.NotComparable) as e:
        baseline.check_comparable(results(two(), qemu="q1"),
                                  results(two(), qemu="q2"), "b.json")
    assert "another QEMU build" in str(e.value)
    assert "\n" not in str(e.value)


def test_other_image_is_not_comparable():
    new = results([cell(0, (0, 0, 0, 0), image="img2")])
    with pytest.raises(baseline.NotComparable, match="another guest image"):
        baseline.check_comparable(results(two()), new, "b.json")
    baseline.check_comparable(results(two()), results(two()), "b.json")


@pytest.mark.parametrize("old,new,thr,want", [
    (100, 105, 0.05, False), (100, 105.1, 0.05, True),
    (100, 94, 0.05, True), (0, 0, 0.05, False), (0, 1, 0.05, True),
    (2.0, 2.0, 0.0, False)])
def test_moved(old, new, thr, want):
    assert baseline.moved(old, new, thr)[0] is want
