"""The rank side of the hang doctor (runtime/collective_trace.py) in a real gloo
process: what it publishes while collectives keep coming, and once they stop."""

import json
import os
import socket
import subprocess
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(TESTS, "scripts", "trace", "publish_window.py")


def _port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def test_a_moving_rank_publishes_its_newest_records_and_a_quiet_one_all_of_them(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("GPUDOCTOR_RUN", None)
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path), _port()], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    moving, quiet, window = out["moving"], out["quiet"], out["window"]
    # DDP's construction makes a few collectives, then one bucket all-reduce per backward.
    assert len(quiet) > window + 10
    assert len(moving) == window
    assert [tuple(x) for x in moving] == [tuple(x) for x in quiet[-window:]]  # the newest, oldest first
    lines = {name: i for i, text in enumerate(open(SCRIPT), 1) for name in ("FORWARD", "BACKWARD") if f"# {name} LINE" in text}
    at = {name: [kind for _, kind, _, where in quiet if where.endswith(f"publish_window.py:{line}")] for name, line in lines.items()}
    assert at["BACKWARD"] == ["all_reduce"] * 30, quiet  # each step's bucket all-reduce, at the user's backward line
    assert set(at["FORWARD"]) <= {"broadcast"}  # what DDP's forward makes, if anything, at the forward line
    # Each backward's all-reduce has returned by the next forward: none is left "started"
    # but the last, which gloo marks completed a moment later.
    assert all(state == "completed" for _, _, state, _ in quiet[:-1])


def test_a_call_site_s_line_is_right_each_time_it_is_asked_from_the_cache():
    from gpudoctor.hang.tracer import line_of

    def lines():
        seen = []
        for _ in range(3):
            seen.append(line_of(sys._getframe()))  # FIRST
            seen.append(line_of(sys._getframe()))  # SECOND
        return seen

    here = open(__file__).read().splitlines()
    first = next(i for i, text in enumerate(here, 1) if text.endswith("# FIRST"))
    assert lines() == [first, first + 1] * 3


def test_without_the_flight_recorder_the_hooks_notes_are_the_trace_and_every_returned_call_is_completed(tmp_path):
    script = os.path.join(TESTS, "scripts", "trace", "hooks_only.py")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("GPUDOCTOR_RUN", None)
    r = subprocess.run([sys.executable, script, str(tmp_path), _port()], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["flight_recorder"] is False
    lines = {name: i for i, text in enumerate(open(script), 1) for name in ("ALL_REDUCE", "BROADCAST") if f"# {name} LINE" in text}
    expected = [(seq, "all_reduce", "completed", f"hooks_only.py:{lines['ALL_REDUCE']}", [[3]]) for seq in range(1, 6)]
    expected.append((6, "broadcast", "completed", f"hooks_only.py:{lines['BROADCAST']}", [[2, 2]]))
    got = [(seq, kind, state, os.path.basename(where), shapes) for seq, kind, state, where, shapes in out["records"]]
    assert got == expected
    seq, kind, state, where = out["current"]  # the last call, read back from the memory-mapped file
    assert (seq, kind, state, os.path.basename(where)) == (6, "broadcast", "completed", f"hooks_only.py:{lines['BROADCAST']}")


def test_the_hot_path_encodes_a_call_byte_for_byte_as_the_codec_does():
    from gpudoctor.knowledge.collectives import STARTED, CollectiveRecord
    from gpudoctor.launch.rundir import CurrentEncoder, encode_current

    encoder = CurrentEncoder()
    sites = [
        dict(kind="all_reduce", input_shapes=((4, 8),), input_dtypes=("float32",), where="train.py:17", function="step"),
        dict(kind="barrier", where="", function=""),
        dict(kind="all_gather", input_shapes=((2,), (3,)), input_dtypes=("int64", "bfloat16"), where='odd "dir"/ü.py:3', function="f"),
        # a site whose text holds the stand-ins themselves: encoded in full, call after call
        dict(kind="broadcast", where="7390113370419377/8162331250917111931.py:1", function="g"),
    ]
    for seq in (1, 2, 10, 12345678901):
        for site in sites:
            for rank, pg in ((0, "0"), (3, "7")):
                record = CollectiveRecord(rank=rank, pg=pg, seq=seq, state=STARTED, time_ns=1_795_000_000_000_000_000 + seq, **site)
                assert encoder.encode(record) == encode_current(record)
    assert encoder.templates[next(k for k in encoder.templates if k[-2].startswith("7390"))] is None


def test_group_calls_object_collectives_and_async_works_are_recorded_as_the_user_made_them(tmp_path):
    script = os.path.join(TESTS, "scripts", "trace", "groups_and_objects.py")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("GPUDOCTOR_RUN", None)
    r = subprocess.run([sys.executable, script, str(tmp_path), _port()], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    lines = {name: i for i, text in enumerate(open(script), 1) for name in ("NEW_GROUP", "OBJECT", "ASYNC") if f"# {name} LINE" in text}
    at = {}
    for seq, kind, state, where in out["records"]:
        at.setdefault(int(where.rsplit(":", 1)[1]), []).append((kind, state))
    assert at[lines["NEW_GROUP"]] == [("new_group", "completed")]
    assert {k for k, _ in at[lines["OBJECT"]]} == {"all_gather_object"}  # its own all_gathers, under its name
    assert at[lines["ASYNC"]] == [("all_reduce", "completed")]
    assert out["pending"] == ["all_reduce"] and out["left"] == 0  # under way until its wait() returned


# What torch re-raises in a rank when a DataLoader worker raised (torch 2.13, the
# worker's frames and error as torch formats them; the dataset's path is the user's).
WORKER_ERROR = """Caught KeyError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 374, in _worker_loop
    data = fetcher.fetch(index)  # type: ignore[possibly-undefined]
           ^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in <listcomp>
    data = [self.dataset[idx] for idx in possibly_batched_index]
            ~~~~~~~~~~~~^^^^^
  File "/home/u/train.py", line 22, in __getitem__
    return torch.tensor([float(self.index[key])])
KeyError: 6
"""


def test_a_dataloader_worker_s_exception_is_placed_at_the_worker_s_own_frame():
    from gpudoctor.hang.tracer import worker_origin

    assert worker_origin(WORKER_ERROR) == ("/home/u/train.py:22", "KeyError", "6")
    assert worker_origin("KeyError: 6") is None
