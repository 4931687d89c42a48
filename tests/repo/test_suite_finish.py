"""ncqsuite.finish(): the exit status every suite runner ends with (0 all
passed, 1 a test failed, 2 the run did not complete), one stderr line."""
import pytest

import ncqsuite


def status(capsys, *args, **kw):
    with pytest.raises(SystemExit) as e:
        ncqsuite.finish(*args, **kw)
    return e.value.code, capsys.readouterr().err


def test_passed_failed(capsys):
    assert status(capsys, "run-x", 0, 12, 0, "/o") == (0, "")
    assert status(capsys, "run-x", 0, 12, 3, "/o") == (1, "")


def test_timeout_wins_over_verdicts(capsys):
    code, err = status(capsys, "run-x", 137, 12, 0, "/o")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("run-x: error: the run hit --timeout")


def test_no_test_reported(capsys):
    code, err = status(capsys, "run-blktests", 0, 0, 0, "/o",
                       suite="blktests")
    assert code == 2
    assert err == ("run-blktests: error: blktests reported no test; its "
                   "output is in /o/output.txt\n")
