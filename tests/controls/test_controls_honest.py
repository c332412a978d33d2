"""Controls and siblings of the verdicts of issue 34's items 1, 2, 4, 9 and 10
(branch honest): each verdict is tried against the healthy input that looks most
like its failure (control: no verdict) and the nearest input that needs another
verdict (sibling). Real ranks on 127.0.0.1 (gloo), real sockets, real files."""

import os

import pytest

from gpudoctor.launch.supervisor import launch_function
from gpudoctor.launch.threads import BY_GPUDOCTOR, BY_USER, OMP_ENV
from orphans import TAG_ENV, new_tag

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
RANK_PATH = os.pathsep.join(p for p in (HERE, TESTS, os.environ.get("PYTHONPATH")) if p)
pytestmark = pytest.mark.slow


def _env(**extra):
    return {"PYTHONPATH": RANK_PATH, TAG_ENV: new_tag(), **extra}


class TestRankThreads:
    """Item 1: ranks start with OMP_NUM_THREADS=1 unless the user chose a value (as torchrun)."""

    def test_control_default_is_one_thread_per_rank(self, monkeypatch):
        monkeypatch.delenv(OMP_ENV, raising=False)
        result = launch_function("launch_targets:sleep_then_exit", {"sleep": 0}, 2, timeout=120, env=_env())
        assert result.ok
        assert result.threads() == {"omp_num_threads": "1", "set_by": BY_GPUDOCTOR, "per_rank": [1, 1]}

    def test_sibling_users_value_is_kept_and_said(self, monkeypatch):
        monkeypatch.setenv(OMP_ENV, "2")
        result = launch_function("launch_targets:sleep_then_exit", {"sleep": 0}, 2, timeout=120, env=_env())
        assert result.ok
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        want = min(2, cores)  # torch takes no more threads than there are cores
        assert result.threads() == {"omp_num_threads": "2", "set_by": BY_USER, "per_rank": [want, want]}

    def test_sibling_one_rank_is_left_alone(self, monkeypatch):
        from gpudoctor.launch.threads import set_rank_threads, threads_line

        env: dict[str, str] = {}
        assert set_rank_threads(env, 1) == ("", "") and OMP_ENV not in env  # torchrun leaves one process alone
        assert "left unset" in threads_line({"omp_num_threads": None, "set_by": None, "per_rank": [2]})


def _ids(run) -> list[str]:
    return [f.id for f in run.findings]


class TestTimeoutStillProgressing:
    """Item 2: the --timeout watchdog firing on ranks still completing collectives is
    "ran out of time, still progressing", never a hang; a real hang stays a hang."""

    def test_control_moving_job_is_out_of_time_not_hung(self):
        from gpudoctor.hang.run_ranks import run_local

        run = run_local("honest_targets:keeps_reducing", {}, 2, timeout=3, env=_env())
        assert run.result.timed_out and run.result.still_progressing, run.result
        assert _ids(run) == ["timeout-still-progressing"], [(f.id, f.title) for f in run.findings]
        f = run.findings[0]
        assert f.severity.value == "warn" and "ran out of time after" in f.title and "--timeout" in f.fix
        assert run.cause is None  # no rank is to blame
        assert not any("transport" in (x.why or "") for x in run.findings)

    def test_sibling_rank0_alone_in_barrier_is_still_hung(self):
        from gpudoctor.hang.run_ranks import run_local

        run = run_local("honest_targets:barrier_on_rank0", {}, 2, timeout=6, env=_env())
        assert run.result.timed_out and not run.result.still_progressing, run.result
        assert "timeout-still-progressing" not in _ids(run)
        assert "rank-hung" in _ids(run) and run.cause is not None and run.cause.rank == 1, [(f.id, f.title) for f in run.findings]


def _steps(late_at: dict[int, int], steps: int = 40, pause_us: int = 1_500_000, every_step_us: int = 0):
    """Two ranks' step records (knowledge/stragglers.py): rank 0 takes `pause_us` more at
    the steps in `late_at` (an evaluation between its phases) and `every_step_us` more at
    every step; rank 1 waits for it inside the step's collective."""
    from gpudoctor.knowledge.stragglers import RankSteps

    recs: dict[int, list] = {0: [], 1: []}
    for i in range(steps):
        extra = (pause_us if i in late_at else 0) + every_step_us
        for rank in recs:
            own = extra if rank == 0 else 0
            wait = 1_000 + (extra - own) + 200 * ((i + rank) % 3)
            phases = [2_000, 15_000, 3_000, 500, 500 + own, wait]
            recs[rank].append((i, 0, sum(phases), *phases))
    return [RankSteps(r, "a", steps, "optimizer", tuple(v)) for r, v in recs.items()]


class TestRankStraggler:
    """Item 4 (issue item 4): a speed-up is bounded by the measured time; one pause is not a straggler."""

    def test_control_one_evaluation_pause_is_not_a_straggler(self):
        from gpudoctor.knowledge.stragglers import analyze_steps

        findings = analyze_steps(_steps({20})).findings
        assert [f.id for f in findings] == ["rank-pause"], [(f.id, f.title) for f in findings]
        assert findings[0].severity.value == "info" and "1500 ms once" in findings[0].title
        assert "faster" not in findings[0].title

    def test_sibling_slow_at_every_step_is_a_straggler_with_a_bounded_speedup(self):
        from gpudoctor.knowledge.stragglers import analyze_steps

        [f] = analyze_steps(_steps(set(), every_step_us=20_000)).findings
        assert f.id == "rank-straggler" and f.evidence["rank"] == 0
        share = f.evidence["others' waiting share of the measured time"]
        assert 0.3 < share < 0.6  # 20 ms of a ~42 ms step
        assert abs(f.evidence["speedup if it kept up"] - 1 / (1 - share)) < 0.02 and f.evidence["speedup if it kept up"] < 2.5

    def test_sibling_a_pause_every_tenth_step_is_a_straggler_within_its_share(self):
        from gpudoctor.knowledge.stragglers import analyze_steps

        [f] = analyze_steps(_steps({5, 15, 25, 35})).findings
        assert f.id == "rank-straggler"
        share = f.evidence["others' waiting share of the measured time"]
        assert f.evidence["speedup if it kept up"] <= 1 / (1 - share) + 0.02


JOB = """import os, datetime, torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
{how}
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
dist.all_reduce(torch.ones(2))
dist.destroy_process_group()
"""


def _run_job(tmp_path, how: str = "", options=("--hang-timeout", "5"), nproc: str = "2"):
    """`gpudoctor run --nproc N OPTIONS` on a 4-line job; (exit code, --json report, stderr)."""
    import json
    import subprocess
    import sys

    script = tmp_path / "job.py"
    script.write_text(JOB.format(how=how))
    out = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", nproc, *options, "--json", str(out), str(script)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=dict(os.environ, **_env()))
    return r.returncode, json.loads(out.read_text()), r.stderr


class TestRendezvousPortHeld:
    """Item 9: a MASTER_PORT held by a silent process is named with its holder, not a
    stuck transport; the same script keeping the launcher's port runs."""

    @pytest.fixture()
    def silent(self):
        import socket

        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen(16)  # accepts into the backlog, never answers
        yield holder.getsockname()[1]
        holder.close()

    def test_control_setdefault_keeps_the_launchers_port(self, tmp_path, silent):
        rc, report, err = _run_job(tmp_path, f'os.environ.setdefault("MASTER_PORT", "{silent}")')
        assert rc == 0 and report["findings"] == [], err[-2000:]

    def test_sibling_port_held_by_a_silent_process_is_named(self, tmp_path, silent):
        rc, report, err = _run_job(tmp_path, f'os.environ["MASTER_PORT"] = "{silent}"')
        ids = [f["id"] for f in report["findings"]]
        assert rc != 0 and ids == ["rendezvous-port-held"], (ids, err[-2000:])
        f = report["findings"][0]
        assert f"port {silent}" in f["title"] and f"pid {os.getpid()}" in f["title"]
        assert "transport" not in f["why"] and "NCCL_P2P_DISABLE" not in f["fix"]
        assert report["root_cause"]["rank"] is None  # no rank is to blame


def _rec(rank, seq, kind="all_reduce", where="/w/train.py:17", state="completed", pg="0", shape=(4,)):
    from gpudoctor.knowledge.collectives import CollectiveRecord

    return CollectiveRecord(rank, pg, seq, kind, ((*shape,),), ("float32",), state=state, where=where)


AR, BC, BAR = ("all_reduce", "/w/train.py:17"), ("broadcast", "/w/train.py:19"), ("barrier", "/w/train.py:21")


def _ranks(*sequences):
    """One RankState per sequence of (kind, where); the last call of each is under way."""
    from gpudoctor.knowledge.collectives import RankState

    out = []
    for rank, calls in enumerate(sequences):
        recs = [
            _rec(rank, i + 1, k, w, "started" if i == len(calls) - 1 else "completed") for i, (k, w) in enumerate(calls)
        ]
        out.append(RankState(rank, tuple(recs)))
    return out


class TestCollectiveMismatch:
    """Item 10: a kind mismatch says how the sequences parted: order vs a call made on one rank only."""

    def test_control_same_calls_same_order_is_no_mismatch(self):
        from gpudoctor.knowledge.collectives import find_mismatch

        assert find_mismatch(_ranks([AR, BC, AR, BC], [AR, BC, AR, BC])) is None

    def test_sibling_same_calls_another_order_says_order(self):
        from gpudoctor.knowledge.collectives import find_mismatch

        f = find_mismatch(_ranks([AR, BC, AR], [AR, BC, BC]))
        assert f is not None and f.evidence["diverged by"] == "order", f
        assert "same calls, another order" in f.title and "same order" in f.fix

    def test_sibling_a_call_on_one_rank_only_says_skip(self):
        from gpudoctor.knowledge.collectives import find_mismatch

        f = find_mismatch(_ranks([AR, AR, BAR], [AR, AR, AR]))
        assert f is not None and f.evidence["diverged by"] == "skip", f
        assert "rank 0's barrier at /w/train.py:21 is a call rank 1 never made" in f.title
        assert "on every rank or on none" in f.fix


class TestCollectiveStall:
    """Item 10: "the transport is stuck" only when every rank waits in one call with one
    fingerprint; other groups, other numbers and a busy rank each get their own words."""

    def _stall(self, ranks):
        from gpudoctor.knowledge.collectives import find_stall

        f = find_stall(ranks, 12.0, "--hang-timeout")
        assert f is not None
        return f

    def test_control_same_call_same_fingerprint_is_the_transport(self):
        f = self._stall(_ranks([AR, AR], [AR, AR]))
        assert "transport" in f.why and "every rank waits in collective #2" in f.title

    def test_sibling_other_process_groups_say_so(self):
        from gpudoctor.knowledge.collectives import RankState

        a = RankState(0, (_rec(0, 1), _rec(0, 2, state="started", pg="1")))
        b = RankState(1, (_rec(1, 1), _rec(1, 2, state="started")))
        f = self._stall([a, b])
        assert "different process groups" in f.title and "transport" not in f.why
        assert f.evidence["differs in"] == "process group"

    def test_sibling_other_collective_numbers_say_a_call_more(self):
        f = self._stall(_ranks([AR, AR, AR], [AR, AR]))
        assert "different collectives" in f.title and "made a call more, or skipped one" in f.title
        assert "transport" not in f.why

    def test_sibling_a_busy_rank_is_named_with_the_timeout_that_fired(self):
        from gpudoctor.knowledge.collectives import RankState, StackFrame

        stack = (StackFrame("/w/train.py", 30, "<module>"), StackFrame("/w/train.py", 8, "save", "time.sleep(60)"))
        ranks = [RankState(0, (_rec(0, 1), _rec(0, 2, state="started"))), RankState(1, (_rec(1, 1),), stack=stack)]
        f = self._stall(ranks)
        assert f.title.startswith("rank 1 holds the others up") and "/w/train.py:8 in save" in f.title
        assert "no collective progress for 12 s when --hang-timeout stopped the job" in f.title and "transport" not in f.why


class TestRankStillStarting:
    """Edge cases (issue 34): one rank and a 1 s --timeout each get a true sentence."""

    def test_sibling_one_rank_with_a_1s_wall_clock_timeout(self, tmp_path):
        rc, report, err = _run_job(tmp_path, options=("--timeout", "1"), nproc="1")
        assert rc == 124, err[-2000:]
        [f] = report["findings"]
        # Most often still importing torch after 1 s; on an idle machine it may be further on.
        assert "1 s" in f["title"], f
        if f["id"] == "rank-still-starting":
            # `run --timeout` forgives no start-up: the sentence must not claim it does.
            assert "wall-clock" in f["why"] and "5 minutes" not in f["why"]

    def test_control_one_moving_rank_runs_out_of_time(self):
        from gpudoctor.hang.run_ranks import run_local

        run = run_local("honest_targets:keeps_reducing", {}, 1, timeout=2, env=_env())
        assert [f.id for f in run.findings] == ["timeout-still-progressing"], [(f.id, f.title) for f in run.findings]

