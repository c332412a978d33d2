"""Hostile input to what gpudoctor reads (issue 24): builds each input in a temporary
folder, runs the real CLI (or the Python API) on it, and prints the matrix: per category,
how many inputs were tried and how many were answered cleanly.

"Clean" means, for every input: no traceback, an exit code that says what happened (never
0, "healthy", for an input that could not be read), nothing a file names run (a marker
file stays absent), no raw control character on stdout or stderr, and in Markdown no HTML
outside a code span. With --rss it also measures the peak RSS of `gpudoctor diagnose` on a
500 MB single-line log (tqdm bars ended by \\r) and on a 2 GB ordinary log (built with
diagnose_throughput.py's builder), in /tmp, deleted afterwards.

    python benchmarks/hostile_inputs.py [--rss] [-v] [--src DIR]

--src runs another checkout's gpudoctor (its src/ folder) on the same inputs: the matrix
before a change, for comparison.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
LOGS = ROOT / "tests" / "fixtures" / "logs"
FR = ROOT / "tests" / "fixtures" / "flight_recorder"
OOM = (LOGS / "cuda_fork.log").read_bytes()

RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ESCAPES = {
    "osc52-clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "osc0-title": "\x1b]0;pwned\x07",
    "osc8-hidden-link": "\x1b]8;;http://evil\x1b\\click here\x1b]8;;\x1b\\",
    "csi-clear-screen": "\x1b[2J\x1b[H",
    "c1-csi": "\x9b31mred",
    "bidi-override": "\u202eevil\u202c",
    "backspace-and-cr": "safe\b\b\b\bEVIL\rOK",
    "markdown-breakout": "`x` <img src=x onerror=alert(1)> [a](http://e) ```",
}


class Marker:
    """Unpickling this runs `touch <path>`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


@dataclass
class Case:
    category: str
    name: str
    args: list[str]
    stdin: bytes | None = None
    expect_codes: tuple[int, ...] = (0, 1, 2)
    must_say: str = ""  # text that must be in stdout+stderr
    not_healthy: bool = False
    markdown: bool = False
    env: dict | None = None
    check: Callable[[], str] | None = None  # '' when what the input left behind is right, else what is wrong
    answer_s: float | None = None  # a tighter bound on the answer than ANSWER_S
    listen: bool = False  # hold a silent listening socket on env's MASTER_PORT while it runs


def cases(tmp: Path, marker: Path) -> list[Case]:
    out: list[Case] = []

    def folder(name: str) -> Path:
        p = tmp / name
        p.mkdir(parents=True)
        (p / "rank0.log").write_text("step 1 loss 0.5\n")
        return p

    # 1. code execution from a folder
    evil_names = ["nccl_trace_rank_0", "fr_trace_rank_1", "0.pkl", "optimizer_step_1000", "dump_3.pickle"]
    for proto in (0, 2, 4, 5):
        for name in evil_names[:2] if proto != 2 else evil_names:
            d = folder(f"evil-p{proto}-{name}")
            (d / name).write_bytes(pickle.dumps({"entries": [Marker(str(marker))]}, protocol=proto))
            if proto == 0:  # text (torch never writes it): read as a log's lines, nothing run
                out.append(Case("code execution from a folder", f"{name} protocol 0 (text)", ["diagnose", "--json", str(d)]))
                continue
            out.append(Case("code execution from a folder", f"{name} protocol {proto}", ["diagnose", "--json", str(d)], expect_codes=(1,), must_say="pickle-refused", not_healthy=True))
    d = folder("evil-eval")
    (d / "trace_0").write_bytes(b"\x80\x02c__builtin__\neval\nq\x00X\x1b\x00\x00\x00__import__('os').system('x')q\x01\x85q\x02Rq\x03.")
    out.append(Case("code execution from a folder", "builtins.eval", ["diagnose", "--json", str(d)], expect_codes=(1,), must_say="pickle-refused", not_healthy=True))
    d = folder("evil-inst")
    (d / "trace_0").write_bytes(b"\x80\x02(cos\nsystem\nX\x04\x00\x00\x00trueo.")
    out.append(Case("code execution from a folder", "OBJ os.system", ["diagnose", "--json", str(d)], expect_codes=(1,), must_say="pickle-refused", not_healthy=True))
    d = folder("real-fr")
    for p in (FR / "kind").iterdir():
        shutil.copy(p, d / p.name)
    out.append(Case("code execution from a folder", "real torch 2.13 dump still read", ["diagnose", "--json", str(d)], expect_codes=(1,), must_say="collective-mismatch"))

    # 2. the terminal and Markdown
    for name, seq in ESCAPES.items():
        log = tmp / f"esc-{name}.log"
        log.write_text("step 1\nRuntimeError: CUDA error: out of memory " + seq + "\n")
        out.append(Case("terminal escapes", f"log line {name}", ["diagnose", str(log)], expect_codes=(1,)))
        out.append(Case("terminal escapes", f"log line {name} --markdown", ["diagnose", "--markdown", str(log)], expect_codes=(1,), markdown=True))
        d = tmp / f"esc-err-{name}" / "attempt_0" / "1"
        d.mkdir(parents=True)
        (d / "error.json").write_text(json.dumps({"message": {"message": "ValueError: " + seq, "extraInfo": {"py_callstack": "Traceback\n  " + seq, "timestamp": "1"}}}))
        out.append(Case("terminal escapes", f"error.json {name}", ["diagnose", str(d.parent.parent)], expect_codes=(1,)))
    d = folder("esc-names")
    for i, seq in enumerate(ESCAPES.values()):
        (d / f"core{i}{seq.replace('/', '')}.bin").write_bytes(bytes(range(256)) * 4)
    out.append(Case("terminal escapes", "file names in a folder", ["diagnose", str(d)], must_say="not read"))
    out.append(Case("terminal escapes", "missing file name", ["diagnose", str(tmp / "gone\x1b]0;x\x07.log")], expect_codes=(2,)))
    lint_dir = tmp / "lint-names"
    lint_dir.mkdir()
    for i, seq in enumerate(list(ESCAPES.values())[:4]):
        (lint_dir / f"t{i}{seq.replace('/', '')}.py").write_text("import torch.distributed as dist\ndef f(rank, t):\n    if rank == 0:\n        dist.all_reduce(t)\n")
    for fmt in ("text", "github"):
        out.append(Case("terminal escapes", f"lint --format {fmt} crafted names", ["lint", "--format", fmt, str(lint_dir)], expect_codes=(1,)))

    # 3. bounded reading and no false "healthy"
    (tmp / "empty.log").write_bytes(b"")
    out.append(Case("bounded reading, no false healthy", "empty file", ["diagnose", str(tmp / "empty.log")], expect_codes=(2,), must_say="empty"))
    out.append(Case("bounded reading, no false healthy", "empty stdin", ["diagnose", "-"], stdin=b"", expect_codes=(2,), must_say="empty"))
    (tmp / "bom.log").write_bytes(b"\xef\xbb\xbf")
    out.append(Case("bounded reading, no false healthy", "BOM only", ["diagnose", str(tmp / "bom.log")], expect_codes=(2,), must_say="empty"))
    d = tmp / "only-empty"
    d.mkdir()
    (d / "rank0.log").write_bytes(b"")
    out.append(Case("bounded reading, no false healthy", "folder of empty files", ["diagnose", str(d)], expect_codes=(2,), must_say="nothing in this folder"))
    for kind, pack in (("gz", gzip.compress), ("bz2", bz2.compress), ("xz", lzma.compress)):
        (tmp / f"rank0.log.{kind}").write_bytes(pack(OOM))
        out.append(Case("bounded reading, no false healthy", f".{kind} log", ["diagnose", str(tmp / f"rank0.log.{kind}")], expect_codes=(1,), must_say="cuda-fork"))
        d = tmp / f"folder-{kind}"
        d.mkdir()
        (d / f"rank0.log.{kind}").write_bytes(pack(OOM))
        out.append(Case("bounded reading, no false healthy", f".{kind} in a folder", ["diagnose", str(d)], expect_codes=(1,), must_say="cuda-fork"))
    d = folder("zstd")
    (d / "rank1.log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 64)
    out.append(Case("bounded reading, no false healthy", ".zst in a folder", ["diagnose", str(d)], must_say="not read"))
    d = folder("cut-gz")
    (d / "rank1.log.gz").write_bytes(gzip.compress(b"step 1 loss 0.5\n" * 100_000)[:-40])
    out.append(Case("bounded reading, no false healthy", "truncated .gz", ["diagnose", str(d)], must_say="read only in part"))
    d = folder("many")
    for i in range(2100):
        (d / f"x{i:05d}.log").write_text("ok\n")
    out.append(Case("bounded reading, no false healthy", "2,100 files", ["diagnose", str(d)], must_say="2,000-file limit"))
    deep = folder("deep")
    p = deep
    for level in range(8):
        p = p / f"l{level}"
    p.mkdir(parents=True)
    (p / "rank1.log").write_text("RuntimeError: CUDA error: out of memory\n")
    out.append(Case("bounded reading, no false healthy", "8 levels deep", ["diagnose", str(deep)], must_say="deeper than 6 levels"))
    links = tmp / "links"
    links.mkdir()
    (tmp / "real.log").write_bytes(OOM)
    os.symlink(tmp / "real.log", links / "rank0.log")
    out.append(Case("bounded reading, no false healthy", "folder of only links", ["diagnose", str(links)], expect_codes=(1,), must_say="cuda-fork"))
    loop = folder("loop")
    os.symlink(loop, loop / "again")
    os.symlink(loop / "nowhere", loop / "broken.log")
    out.append(Case("bounded reading, no false healthy", "link loop and broken link", ["diagnose", str(loop)], must_say="broken symbolic link"))
    line = tmp / "one-line.log"
    with open(line, "wb") as f:
        bar = b"\r 42%|####      | 420/1000 [00:10<00:14, 41.9it/s]" * 20000
        for _ in range(24 << 20 // len(bar) + 1):
            f.write(bar)
        f.write(b"\nRuntimeError: CUDA error: out of memory\n")
    out.append(Case("bounded reading, no false healthy", "24 MB single line then an error", ["diagnose", str(line)], expect_codes=(1,), must_say="out of memory"))

    # 4. hostile structure
    nest = "[" * 100_000 + "]" * 100_000
    structure = {
        "error.json nested 100,000 deep": ("attempt_0/0/error.json", '{"message": {"message": "x", "extraInfo": ' + nest + "}}"),
        "error.json timestamp ²": ("attempt_0/0/error.json", json.dumps({"message": {"message": "ValueError: x", "extraInfo": {"timestamp": "²"}}})),
        "error.json timestamp 4,300 digits": ("attempt_0/0/error.json", json.dumps({"message": {"message": "ValueError: x", "extraInfo": {"timestamp": "1" * 4300}}})),
        "error.json message a list": ("attempt_0/0/error.json", json.dumps({"message": {"message": [1, 2], "extraInfo": {}}})),
        "rank folder named ²": ("attempt_0/²/error.json", json.dumps({"message": {"message": "ValueError: x", "extraInfo": {"timestamp": "1"}}})),
        "rank folder of 200 digits": (f"attempt_0/{'7' * 200}/error.json", json.dumps({"message": {"message": "ValueError: x", "extraInfo": {"timestamp": "1"}}})),
        "FR json entries [1,2,3]": ("fr_trace_0.json", json.dumps({"entries": [1, 2, 3]})),
        "FR json entries a string": ("fr_trace_0.json", json.dumps({"entries": "x"})),
        "FR json nested 100,000 deep": ("fr_trace_0.json", '{"entries": ' + nest + "}"),
        "FR json seq of 4,400 digits": ("fr_trace_0.json", '{"entries": [{"collective_seq_id": "' + "9" * 4400 + '"}]}'),
        "FR json seq ²": ("fr_trace_0.json", json.dumps({"entries": [{"collective_seq_id": "²", "profiling_name": "gloo:all_reduce"}]})),
        "FR json frames of ints": ("fr_trace_0.json", json.dumps({"entries": [{"collective_seq_id": 1, "frames": [1, 2]}]})),
        "FR json pg_status a list": ("fr_trace_0.json", json.dumps({"entries": [], "pg_status": [1]})),
        "FR rank number of 30 digits": ("fr_trace_" + "9" * 30, pickle.dumps({"entries": []})),
    }
    for name, (rel, content) in structure.items():
        d = folder("struct-" + re.sub(r"\W+", "-", name))
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(content if isinstance(content, bytes) else content.encode())
        out.append(Case("hostile structure", name, ["diagnose", str(d)]))
    d = folder("pickle-huge-int")
    (d / "fr_0").write_bytes(pickle.dumps({"entries": [{"collective_seq_id": 10**5000}]}))
    out.append(Case("hostile structure", "FR pickle int of 5,000 digits", ["diagnose", str(d)], must_say="not read"))
    d = folder("pickle-cycle")
    cyc: list = []
    cyc.append(cyc)
    (d / "fr_0").write_bytes(pickle.dumps({"entries": [{"frames": cyc}]}))
    out.append(Case("hostile structure", "FR pickle with a cycle", ["diagnose", str(d)]))
    d = folder("pickle-amplified")
    big = [[1] * 1000] * 1000
    (d / "fr_0").write_bytes(pickle.dumps({"entries": [{"collective_seq_id": 1, "input_sizes": big}] * 2000}))
    out.append(Case("hostile structure", "FR pickle 2e9 values by sharing", ["diagnose", str(d)], must_say="not read"))
    facts = tmp / "facts-deep.json"
    facts.write_text(nest)
    out.append(Case("hostile structure", "check --facts nested 100,000 deep", ["check", "--facts", str(facts)], expect_codes=(2,)))
    return out + issue39_cases(tmp)


STEPS_SCRIPT = """import torch
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    opt.step()
"""
RUN_FOLDER_FILES = ("rank0.stacks.txt", "rank0.collectives.json", "rank0.current", "rank0.progress", "rank1.fatal.txt", "outcome.json")


def run_folder(where: Path, states: tuple[str, str] = ("stopped", "raised")) -> Path:
    """A run folder as gpudoctor's supervisor leaves it: rank 1 raised, rank 0 stopped."""
    from gpudoctor.launch.contract import RankError
    from gpudoctor.launch.supervisor import LaunchResult, RankOutcome, write_outcome

    where.mkdir(parents=True)
    err = RankError("ValueError", "bad batch", "Traceback ...")
    ranks = (
        RankOutcome(0, states[0], -15 if states[0] == "stopped" else 1, None, "joined", 3, None, ("waiting",), "", None, None),
        RankOutcome(1, states[1], -15 if states[1] == "stopped" else 1, None, "joined", 2, err, ("ValueError: bad batch",), "", None, 1.5),
    )  # fmt: skip
    write_outcome(LaunchResult(ranks, False, False, 4.2, str(where), 30.0, {}, 0, "", False, 0.0, 0.0))
    (where / "rank1.stderr").write_text("Traceback (most recent call last):\nValueError: bad batch\n")
    return where


def still_char_device(path: Path) -> Callable[[], str]:
    import stat

    return lambda: "" if stat.S_ISCHR(os.lstat(path).st_mode) else "the device node was replaced by a file"


def issue39_cases(tmp: Path) -> list[Case]:
    """Issue 39: the run folder's files, the outputs a user names, the environment."""
    out: list[Case] = []
    nest = "[" * 100_000 + "]" * 100_000
    for name in RUN_FOLDER_FILES:
        for kind in ("link to /dev/zero", "FIFO", "300 MB file", "JSON 100,000 deep"):
            d = run_folder(tmp / "rf" / f"{name}-{kind.split()[0]}")
            target = d / name
            target.unlink(missing_ok=True)
            if kind.startswith("link"):
                target.symlink_to("/dev/zero")
            elif kind == "FIFO":
                os.mkfifo(target)
            elif kind.startswith("300"):
                with open(target, "wb") as fh:
                    fh.truncate(300 << 20)  # sparse
            else:
                target.write_text(nest)
            out.append(Case("run folder files (issue 39)", f"{name}: {kind}", ["diagnose", "--json", str(d)], expect_codes=(1,), answer_s=30))
    d = run_folder(tmp / "rf" / "all-stopped", ("stopped", "stopped"))
    out.append(Case("run folder files (issue 39)", "outcome.json: every rank 'stopped', rank 1 raised", ["diagnose", "--json", str(d)], expect_codes=(1,)))
    hi = tmp / "hi.py"
    hi.write_text("print('hi')\n")
    steps = tmp / "steps.py"  # a script with steps: `run --trace` has a trace to write
    steps.write_text(STEPS_SCRIPT)
    outs = tmp / "outputs"
    outs.mkdir()
    (outs / "dangling").symlink_to(outs / "nowhere" / "x")
    flags = {
        "run --json": lambda p: ["run", "--json", p, str(hi)],
        "run --trace": lambda p: ["run", "--trace", p, str(steps)],
        "report -o": lambda p: ["report", "-o", p, "--skip", "allreduce,train-smoke"],
        "train-smoke --save": lambda p: ["train-smoke", "--save", p],
    }
    for flag, args in flags.items():
        where = outs / "dir" / flag.replace(" ", "")
        (where / "train-smoke.pt").mkdir(parents=True)  # --save DIR writes DIR/train-smoke.pt: a directory there
        out.append(Case("outputs a user names (issue 39)", f"{flag} a directory", args(str(where) if "save" in flag else str(where.parent)), expect_codes=(2,)))
        out.append(Case("outputs a user names (issue 39)", f"{flag} a dangling link", args(str(outs / "dangling")), expect_codes=(2,)))
        if os.geteuid() == 0:
            dev = outs / f"dev-{flag.replace(' ', '')}"
            os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # a character device: /dev/null's numbers
            codes = (2,) if "save" in flag else (0, 1)
            out.append(Case("outputs a user names (issue 39)", f"{flag} a character device", args(str(dev)), expect_codes=codes, check=still_char_device(dev)))
    if os.geteuid() == 0:
        full = outs / "full"
        os.mknod(full, 0o666 | 0o020000, os.makedev(1, 7))  # /dev/full's numbers
        case = Case("outputs a user names (issue 39)", "run --trace to a full device", flags["run --trace"](str(full)), expect_codes=(1,), must_say="no space left")
        out.append(case)
    sleepy = tmp / "sleepy.py"
    sleepy.write_text("import time\ntime.sleep(1.5)\nprint('done')\n")
    env_cases = [
        ("GPUDOCTOR_RUN_TIMEOUT=0.5 in a plain run", ["run", str(sleepy)], {"GPUDOCTOR_RUN_TIMEOUT": "0.5"}, (0,)),
        ("GPUDOCTOR_RUN_JSON in a plain run", ["run", str(sleepy)], {"GPUDOCTOR_RUN_JSON": str(tmp / "stray.json")}, (0,)),
        ("GPUDOCTOR_FAULT=1:wrong fakes no verdict", ["allreduce", "--sizes", "4K", "--iters", "2", "--warmup", "1"], {"GPUDOCTOR_FAULT": "1:wrong"}, (0,)),
    ]
    for name, args, env, codes in env_cases:
        out.append(Case("environment (issue 39)", name, args, env=env, expect_codes=codes,
                        check=lambda: "" if not (tmp / "stray.json").exists() else "wrote the stray JSON"))  # fmt: skip
    many = tmp / "many.py"
    many.write_text("x = 1\n" * 800_000)
    out.append(Case("bounds (issue 39)", "lint: 800,000 one-line statements", ["lint", str(many)], expect_codes=(1,), answer_s=20))
    # one physical line that holds many messages: a tqdm bar rewritten by bare \r with an
    # error among its updates, and records a paste glued together (each message was read
    # again with its whole line: quadratic, minutes for 30-90 KB)
    bar = "".join(f"\r 40%|####      | {i}/9000 [00:{i % 60:02d}<01:30, 6.6it/s, loss=0.{i % 97:02d}]" for i in range(18000))
    (tmp / "cr-bar.log").write_text("start\n" + bar + "\rRuntimeError: CUDA error: out of memory\n")
    out.append(Case("bounds (issue 39)", "one line of 18,000 tqdm updates, then the error", ["diagnose", str(tmp / "cr-bar.log")],
                    expect_codes=(1,), must_say="cuda-oom", answer_s=30))  # fmt: skip
    glued = "".join(f"[rank{i % 4}]: epoch 1 step {i} loss 0.{i % 97:02d} Error count 0 " for i in range(20000))
    (tmp / "glued.log").write_text("start\n" + glued + "\n")
    out.append(Case("bounds (issue 39)", "20,000 records glued on one line", ["diagnose", str(tmp / "glued.log")], expect_codes=(1,), answer_s=30))
    port = 29000 + os.getpid() % 1000
    joined = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    out.append(Case("bounds (issue 39)", "joined rank, a silent listener on MASTER_PORT, --timeout 5", ["allreduce", "--timeout", "5"],
                    env=joined, expect_codes=(1,), must_say="something else answers", answer_s=45, listen=True))  # fmt: skip
    return out


def api_cases() -> list[tuple[str, Callable[[], object], type]]:
    import gpudoctor

    return [
        ("diagnose(123)", lambda: gpudoctor.diagnose(123), TypeError),  # type: ignore[arg-type]
        # NUL bytes alone are read past (a log emptied under its writer starts with zeros): an ELF's bytes are binary
        ('diagnose(an ELF header)', lambda: gpudoctor.diagnose("\x7fELF\x02\x01\x01\x00\x00\x03\x00\x3e\x00\x01\x00"), ValueError),
        ('diagnose(path="a\\x00")', lambda: gpudoctor.diagnose(path="a\x00"), ValueError),
        ('diagnose("")', lambda: gpudoctor.diagnose(""), ValueError),
        ("train_smoke(nproc=True)", lambda: gpudoctor.train_smoke(nproc=True), TypeError),
        ("train_smoke(nproc=0)", lambda: gpudoctor.train_smoke(nproc=0), ValueError),
        ("allreduce(backend=1)", lambda: gpudoctor.allreduce(backend=1), TypeError),  # type: ignore[arg-type]
        ("allreduce(iters=2.5)", lambda: gpudoctor.allreduce(iters=2.5), TypeError),  # type: ignore[arg-type]
        ("lint(123)", lambda: gpudoctor.lint(123), TypeError),  # type: ignore[arg-type]
        ('lint(select="nope")', lambda: gpudoctor.lint(str(ROOT / "examples"), select="nope"), ValueError),
        ("check(facts=1)", lambda: gpudoctor.check(facts=1), TypeError),  # type: ignore[arg-type]
    ]


def judge(case: Case, proc: subprocess.CompletedProcess, marker: Path) -> str:
    """'' when the answer is clean, else what is wrong."""
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    if marker.exists():
        return "code ran"
    if "Traceback (most recent call last)" in err:
        return "traceback"
    if proc.returncode not in case.expect_codes:
        return f"exit {proc.returncode}, expected {case.expect_codes}"
    if RAW_CONTROL.search(out) or RAW_CONTROL.search(err):
        return "raw control character printed"
    if case.not_healthy and ("healthy" in out and "problems found" not in out):
        return "said healthy"
    if case.must_say and case.must_say not in out + err:
        return f"did not say {case.must_say!r}"
    if case.markdown:
        for line in out.splitlines():
            if re.search(r"<(img|script|a )", line) and "`" not in line:
                return "raw HTML in Markdown"
    return ""


SRC = ROOT / "src"
ANSWER_S = 60  # an input not answered in this long counts as not clean (a reader that never ends)
MEMORY_LIMIT = 4 << 30  # each run's address space: a reader that follows /dev/zero stops here, not at the machine's end


def memory_limit() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def clean_env() -> dict[str, str]:
    drop = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("GPUDOCTOR_")}


def silent_listener(port: int):
    """A port clash: something that accepts connections and never answers."""
    import socket

    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    return s


def matrix(verbose: bool, only: str = "") -> int:
    tmp = Path(tempfile.mkdtemp(prefix="gpudoctor-hostile-"))
    marker = tmp / "CODE-RAN"
    rows: dict[str, list[int]] = {}
    failures = []
    try:
        for case in cases(tmp, marker):
            if only and only not in case.category:
                continue
            limit = case.answer_s or ANSWER_S
            listener = silent_listener(int(case.env["MASTER_PORT"])) if case.listen and case.env else None
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "gpudoctor", *case.args], input=case.stdin, capture_output=True, timeout=limit,
                    env={**clean_env(), "PYTHONPATH": str(SRC), "COLUMNS": "200", **(case.env or {})}, preexec_fn=memory_limit,
                )  # fmt: skip
                wrong = judge(case, proc, marker) or (case.check() if case.check else "")
                code = proc.returncode
            except subprocess.TimeoutExpired:
                wrong, code = f"no answer in {limit:g} s", None
            finally:
                if listener is not None:
                    listener.close()
            marker.unlink(missing_ok=True)  # counted once: the next input starts clean
            row = rows.setdefault(case.category, [0, 0])
            row[0] += 1
            row[1] += not wrong
            if wrong:
                failures.append(f"{case.category}: {case.name}: {wrong}")
            if verbose:
                print(f"  {'ok ' if not wrong else 'BAD'} {case.category}: {case.name} (exit {code}) {wrong}")
        for name, call, error in api_cases() if not only else ():
            row = rows.setdefault("Python API arguments", [0, 0])
            row[0] += 1
            try:
                call()
                wrong = "no error"
            except error as exc:
                wrong = "" if "\n" not in str(exc) else "message of several lines"
            except Exception as exc:  # noqa: BLE001
                wrong = f"{type(exc).__name__}: {exc}"
            row[1] += not wrong
            if wrong:
                failures.append(f"Python API arguments: {name}: {wrong}")
            if verbose:
                print(f"  {'ok ' if not wrong else 'BAD'} API: {name} {wrong}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not rows:
        print(f"no category's name holds {only!r}")
        return 2
    width = max(len(c) for c in rows)
    print(f"{'category':<{width}}  tried  clean")
    for category, (tried, clean) in rows.items():
        print(f"{category:<{width}}  {tried:>5}  {clean:>5}")
    total = [sum(r[0] for r in rows.values()), sum(r[1] for r in rows.values())]
    print(f"{'all':<{width}}  {total[0]:>5}  {total[1]:>5}")
    for f in failures:
        print("NOT CLEAN:", f)
    return 0 if not failures else 1


def peak_rss(args: list[str]) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of one `gpudoctor` run, measured in a fresh
    child that reports its own children's peak (getrusage)."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, time.perf_counter() - t, r.returncode)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "gpudoctor", *args], capture_output=True, text=True, env=env, timeout=3600)
    mb, secs, rc = out.stdout.split()
    return float(mb), float(secs), int(rc)


def rss() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from diagnose_throughput import build

    tmp = Path(tempfile.mkdtemp(prefix="gpudoctor-rss-", dir="/tmp"))
    try:
        line = tmp / "one-line-500mb.log"
        bar = b"\r 42%|####      | 420/1000 [00:10<00:14, 41.9it/s, loss=0.123]" * 100_000
        with open(line, "wb") as f:
            written = 0
            while written < 500 << 20:
                f.write(bar)
                written += len(bar)
            f.write(b"\nRuntimeError: CUDA error: out of memory\n")
        mb, secs, rc = peak_rss(["diagnose", "--json", str(line)])
        print(f"500 MB single line ({line.stat().st_size / 1e6:.0f} MB): peak RSS {mb:.0f} MB, {secs:.1f} s, exit {rc}")
        line.unlink()
        big = tmp / "ordinary-2gb.log"
        build(big, 2048 << 20)
        mb, secs, rc = peak_rss(["diagnose", "--json", str(big)])
        print(f"2 GB ordinary log ({big.stat().st_size / 1e6:.0f} MB): peak RSS {mb:.0f} MB, {secs:.1f} s, exit {rc}")
        mb, secs, rc = peak_rss(["diagnose", "--json", str(LOGS / "cuda_fork.log")])
        print(f"baseline, a 4-line log: peak RSS {mb:.0f} MB, {secs:.1f} s, exit {rc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rss", action="store_true", help="also measure peak RSS on a 500 MB line and a 2 GB log (needs ~2.6 GB in /tmp)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per input")
    ap.add_argument("--src", type=Path, help="another checkout's src/ to run instead of this one's")
    ap.add_argument("--only", default="", help="only the categories whose name holds this text (e.g. 'issue 39')")
    args = ap.parse_args()
    if args.src is not None:
        global SRC
        SRC = args.src.resolve()
        sys.path.insert(0, str(SRC))
    t = time.perf_counter()
    code = matrix(args.verbose, args.only)
    print(f"({time.perf_counter() - t:.0f} s)")
    if args.rss:
        rss()
    sys.exit(code)


if __name__ == "__main__":
    main()
