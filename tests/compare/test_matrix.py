"""The matrix file: keys checked (one line naming file and key), axes
expanded in a fixed order, shards that cover the matrix exactly once."""
import json

import pytest

from compare import matrix

GOOD = """name = "t"
kernels = ["6.1", "6.12"]
schedulers = ["none", "bfq:slice_idle=0,low_latency=0"]
devices = ["ncq-disk,model=st3400620as,queue-depth=32",
           {device = "ncq-disk,model=st3400620as,policy=fcfs", label = "fcfs"}]
workloads = ["random-readers:depth=1", "far-reader"]
duration = 2
[guest]
queue_depth = 16
"""


def write(tmp_path, text, name="m.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_cells_cover_the_product_in_order(tmp_path):
    m = matrix.load(write(tmp_path, GOOD))
    cells = m.cells()
    assert len(cells) == 2 * 2 * 2 * 2
    assert [c.index for c in cells] == list(range(16))
    assert cells[0].coord == (0, 0, 0, 0) and cells[-1].coord == (1, 1, 1, 1)
    assert cells[1].workload == "far-reader"
    assert cells[2].device_label == "fcfs"
    assert cells[0].device_label == "model=st3400620as,queue-depth=32"
    assert m.schedulers[1].tunables == (("slice_idle", "0"),
                                        ("low_latency", "0"))
    assert m.guest == {"queue_depth": "16"}
    assert len({c.id for c in cells}) == 16
    assert len({c.slug for c in cells}) == 16


def test_json_matrix_is_the_same_matrix(tmp_path):
    import tomllib
    d = tomllib.loads(GOOD)
    mj = matrix.load(write(tmp_path, json.dumps(d), "m.json"))
    mt = matrix.load(write(tmp_path, GOOD))
    assert mj.sha256() == mt.sha256()
    assert [c.id for c in mj.cells()] == [c.id for c in mt.cells()]


def test_sha_follows_the_content(tmp_path):
    a = matrix.load(write(tmp_path, GOOD)).sha256()
    b = matrix.load(write(tmp_path, GOOD.replace("slice_idle=0",
                                                 "slice_idle=1"))).sha256()
    assert a != b


@pytest.mark.parametrize("text,words", [
    ("colour = 1\n" + GOOD, ["unknown key 'colour'"]),
    (GOOD.replace("[guest]\n", "[guest]\nqueue_deph = 1\n"),
     ["unknown key 'guest.queue_deph'"]),
    (GOOD.replace('kernels = ["6.1", "6.12"]\n', ""),
     ["key 'kernels' is missing"]),
    (GOOD.replace('"none"', '"none:slice_idle"'), ["not key=value"]),
    (GOOD.replace("queue-depth=32", "trace=/tmp/x"), ["sets trace="]),
    (GOOD.replace("duration = 2", 'duration = "2"'), ["wrong type"]),
    ("kernels = [", ["not valid TOML"]),
])
def test_bad_matrix_is_one_line_naming_file_and_key(tmp_path, text, words):
    p = write(tmp_path, text)
    with pytest.raises(matrix.MatrixError) as e:
        matrix.load(p)
    msg = str(e.value)
    assert "\n" not in msg and str(p) in msg
    for w in words:
        assert w in msg


def test_missing_file(tmp_path):
    with pytest.raises(matrix.MatrixError, match="does not exist"):
        matrix.load(tmp_path / "nope.toml")


def test_shards_cover_every_cell_once(tmp_path):
    cells = matrix.load(write(tmp_path, GOOD)).cells()
    for n in (1, 2, 3, 5, 16, 20):
        got = [c.index for i in range(1, n + 1)
               for c in matrix.shard(cells, i, n)]
        assert sorted(got) == list(range(16)), n
    # deterministic: the same slice every time
    assert matrix.shard(cells, 2, 3) == matrix.shard(cells, 2, 3)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "", "1/0"])
def test_bad_shard(text):
    with pytest.raises(matrix.MatrixError, match="i/n"):
        matrix.parse_shard(text)


def test_good_shard():
    assert matrix.parse_shard("2/4") == (2, 4)
