"""cli/output.py Heartbeat: off a terminal, a long run says it is alive at a steady
interval (a CI log is never silent for minutes); a joined rank other than 0 does not."""

import time

from gpudoctor.cli.output import Heartbeat
from gpudoctor.launch.rundir import PROGRESS_EVERY_ENV


def test_a_plain_line_at_each_interval_with_what_it_is_at(monkeypatch, capfd):
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "0.1")
    monkeypatch.delenv("RANK", raising=False)
    with Heartbeat("allreduce") as beat:
        assert beat.active  # pytest's captured stderr is not a terminal
        beat.status = lambda: "3 of 8 sizes done"
        time.sleep(0.55)
    lines = [line for line in capfd.readouterr().err.splitlines() if line]
    assert len(lines) >= 3
    assert lines[-1].startswith("gpudoctor allreduce: still running, ") and lines[-1].endswith(" s (3 of 8 sizes done)")
    time.sleep(0.25)
    assert capfd.readouterr().err == ""  # stopped with the run


def test_joined_rank_other_than_0_stays_quiet(monkeypatch, capfd):
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "0.1")
    monkeypatch.setenv("RANK", "1")
    with Heartbeat("allreduce") as beat:
        time.sleep(0.35)
    assert not beat.active and capfd.readouterr().err == ""


def test_a_failing_status_still_gives_the_time(monkeypatch, capfd):
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "0.1")
    monkeypatch.delenv("RANK", raising=False)
    with Heartbeat("report") as beat:
        beat.status = lambda: [][0]
        time.sleep(0.3)
    err = capfd.readouterr().err
    assert "gpudoctor report: still running, " in err and "Traceback" not in err


def test_train_smoke_counts_steps_only_while_training():
    # one H200 (tests/fixtures/gpu_truth/h200/smoke.out) printed "rank 0 at finished 105" for a 100-step job:
    # the counter runs on past the last step through the stages after training
    from gpudoctor.cli.train_smoke import stage_words

    assert stage_words(0, "train", 40) == "rank 0 at train, step 40"
    assert stage_words(0, "finished", 105) == "rank 0 finished"
    assert stage_words(1, "gradient-check", 103) == "rank 1 at gradient-check"
