"""The prefilter's digest of a block (issue 35's speed): a cheap superset of the words a block holds, which every
reader of the block asks before it searches the block; the launcher regexes read only the lines that hold their words."""

from __future__ import annotations

import re

import pytest

from gpudoctor.knowledge.evidence import ERROR_LEVEL, LEVEL_AT, RULES, error_level
from gpudoctor.knowledge.launcher_only import BLIND, LAUNCHERS, LauncherSeen
from gpudoctor.knowledge import prefilter
from gpudoctor.knowledge.prefilter import DIGEST_MIN, MANY, Digest, candidate_starts, digest, digit_blind, lines_holding, lines_with

LINES = (
    b"[rank3]: epoch 3 step 120/500 | loss 0.4321 | lr 3.0e-04\n",
    b"INFO 2024-11-23 10:02:11,512 checkpoint.py:88 wrote shard 7 sha256=3fa2b9c0d1e2f3a4 in 0.53 s\n",
    b"node1:48213:48213 [1] NCCL INFO Connected all rings\n",
    b"  8%|##        | 4012/50000 [01:12<13:48,  5.55it/s, loss=0.412]\n",
    b"\xc3\xa9t\xc3\xa9 caf\xc3\xa9 DEAD beef 42\n",
)
BLOCK = b"".join(LINES)


def test_every_word_in_the_block_passes_its_digest():
    d = Digest(BLOCK)
    words = {line[i : i + n] for line in LINES for n in (1, 3, 6, 11) for i in range(len(line) - n) if b"\n" not in line[i : i + n]}
    assert set(d.may_hold(words)) == words
    lower = {w.lower() for w in words}
    assert set(d.may_hold(lower, lower=True)) == lower


@pytest.mark.parametrize("word", [b"NCCL WARN", b"Traceback", b"step 120/501x", b"sha256=3fa2b9c0d1e2f3a5x", b"loss 0.4321 |x"])
def test_a_word_not_in_the_block_is_left_out(word):
    assert Digest(BLOCK).may_hold([word]) == []


def test_a_big_block_is_digested_once_for_all_its_readers():
    big = BLOCK * (DIGEST_MIN // len(BLOCK) + 1)
    assert digest(big) is digest(big) and len(digest(big).text) <= len(BLOCK) + 1  # (and an empty line)
    endless = b"x" * DIGEST_MIN + b"abc"  # one line as big as the block: no second copy of it without hex letters
    assert digest(endless).bare() == b"" and digest(endless).may_hold([b"abc", b"abd"]) == [b"abc"]


def test_a_trigger_on_most_lines_is_found_on_each_of_them():
    lines = [b"[w] userwarning: step %d\n" % i if i % 3 else b"loss %d ok\n" % i for i in range(3 * MANY)]
    low = b"".join(lines)
    offsets, at = [], 0
    for line in lines:
        if b"warn" in line or b"ok" not in line:
            offsets.append(at)
        at += len(line)
    assert candidate_starts(low, len(low)) == offsets


@pytest.mark.parametrize(
    ("pattern", "blind"),
    [(r"\[\d+,\d+\]<std", True), (r"[0-9A-Fa-f]{4}:", True), (r"[\w.-]+: (?=\d)", True),
     (r"sha256", False), (r"exit code [1-9]", False), (r"(\d+)=\1", False), (r"[^5]x", False)],
)
def test_a_regex_that_names_a_digit_is_not_digit_blind(pattern, blind):
    assert digit_blind(re.compile(pattern)) is blind


# One line for each alternative of each launcher's regex: it holds one of the launcher's words (the regex reads
# only the lines that do), and every launcher's regex tells no digit from another (it reads the digest's lines).
EXAMPLES = {
    "paddle.distributed.launch": ["python -m paddle.distributed.launch --gpus 0,1 train.py", "LAUNCH INFO 2022-10-25 15:17:31,067 Run Pod",
                                  "I1025 15:17:31.067 [launch_utils.py:371] terminate process", "see log/workerlog.3"],
    "deepspeed": ["-m deepspeed.launcher.launch --world_info=eyJ", "[2025-06-26 16:48:28,490] [ERROR] [launch.py:325:sigkill_handler] ...",
                  "[2024-01-02 10:00:00,000] [INFO] [runner.py:555:main] cmd = ..."],
    "accelerate launch": ["accelerate/commands/launch.py", "accelerate launch train.py", "accelerate_cli.py", "    simple_launcher(args)",
                          "    multi_gpu_launcher(args)", "    deepspeed_launcher(args)"],
    "mpirun": ["mpirun -np 8 python train.py", "horovodrun -np 4", "prterun -n 2", "orterun -n 2", "Open MPI detected", "[1,3]<stderr>: x"],
    "srun": ["srun: error: node3: task 5: Exited with exit code 1", "slurmstepd: error: *** STEP 12.0 ON node3", "slurmstepd-node3: error", "sbatch job.sh"],
    "torch.multiprocessing.spawn": ["torch.multiprocessing.spawn.ProcessRaisedException:", "torch/multiprocessing/spawn.py", "mp.spawn(main, nprocs=8)",
                                    "ProcessExitedException: process 1 terminated"],
    "torchrun": ["torchrun --nproc_per_node 8 train.py", "python -m torch.distributed.run", "torch/distributed/run.py", "torch\\distributed\\launch.py",
                 "torch/distributed\\launch.py", "torch\\distributed/run.py", "torch/distributed/elastic/agent", "ChildFailedError:",
                 "Root Cause (first observed failure):"],
}


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=lambda launcher: launcher.name)
def test_each_line_a_launcher_regex_reads_holds_one_of_its_words(launcher):
    assert BLIND[launcher.name]
    for line in EXAMPLES[launcher.name]:
        assert launcher.regex.search(line) and any(w in line.encode() for w in launcher.words), line


@pytest.mark.parametrize(("line", "seen"), [(b"[1,3]<stderr>: RuntimeError: boom\n", True), (b"[1,x]<stderr>: another tool's tag\n", False)])
def test_a_launcher_is_seen_in_a_big_block_of_repeated_lines(line, seen):
    filler = b"epoch 1 step 9 loss 0.5\nepoch 1 step 10 loss 0.25\n"
    chunk = filler * (DIGEST_MIN // len(filler)) + line + filler
    launchers = LauncherSeen()
    launchers.feed(chunk)
    assert (launchers.launcher() == "mpirun") is seen
    assert lines_holding(chunk, [b"<std"]) == line.rstrip(b"\n")


def top_level_alternatives(pattern: str) -> list[str]:
    out, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    return out + [pattern[start:]]


def test_each_error_level_alternative_holds_what_the_cheap_test_looks_for():
    gates = ("{caps}", "level=", "(?:level|severity|lvl)", "[{glog}]\\d{{4}} ", "\\[[{glog}] ")
    alternatives = top_level_alternatives(LEVEL_AT)
    assert len(alternatives) > 5
    for alternative in alternatives:
        assert any(g in alternative for g in gates), alternative


def test_error_level_agrees_with_the_regex():
    lines = [x for rule in RULES for x in (*rule.examples, *rule.not_examples)] + [
        "E0228 04:58:23.710914 3021 ResourceManager.cpp:95] Cannot load from file", "[E 2024-05-01 10:00:00 trainer.py:12] boom",
        'time="2024-01-02T10:00:00Z" level=error msg="x"', '{"msg": "x", "level": "error"}', "2023-05-30T10:39:23.156417Z ERROR HTTP",
        "[rank0]:[W1123 10:02:00.000000 48213 torch/nn/modules/module.py:1501] UserWarning: parameter is deprecated"]
    for line in lines:
        m, n = error_level(line), ERROR_LEVEL.search(line)
        assert (m and m.span()) == (n and n.span()), line


def test_lines_with_a_trigger_are_the_digests_lines_in_any_case():
    block = b"INFO Process rank: 3, step 12\nINFO Process rank: 5, step 13\nworker PROCESS 7 ready\nepoch 1 loss 0.5\n"
    found = lines_with([Digest(block)], [b"process ", b"loss", b"warn"], 8)
    assert found == {b"process ": {b"INFO Process rank: 0, step 00", b"worker PROCESS 0 ready"}, b"loss": {b"epoch 0 loss 0.0"}, b"warn": set()}


def test_lines_with_leaves_out_a_trigger_on_too_many_kinds_of_line(monkeypatch):
    block = b"".join(b"process %s\n" % word for word in (b"alpha", b"beta", b"gamma"))
    assert lines_with([Digest(block)], [b"process "], 2) == {}
    monkeypatch.setattr(prefilter, "LINES_WITH_TEXT", 10)
    assert lines_with([Digest(block)], [b"process "], 8) == {}
