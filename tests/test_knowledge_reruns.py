"""knowledge/reruns.py: the commands typed at a prompt, read block by block as the reader feeds them."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.reruns import Command, HeadLines, Prompts, RunStarts

# NVIDIA/nccl#719 and huggingface/text-generation-inference#1451 (dev, dev5), as pasted
PASTE = (
    b"# source: https://github.com/huggingface/text-generation-inference/issues/1451\n"
    b"```\n"
    b"(text-generation-inference) tammosta@SEA-1801247735:~/text-generation-inference$ text-generation-launcher --env\n"
    b"error: invalid value 'True' for '--disable-custom-kernels'\n"
    b"  [possible values: true, false]\n"
    b"(text-generation-inference) tammosta@SEA-1801247735:~/text-generation-inference$ export DISABLE_CUSTOM_KERNELS=true\n"
    b"(text-generation-inference) tammosta@SEA-1801247735:~/text-generation-inference$ text-generation-launcher --env\n"
    b"2024-01-18T19:33:41.061433Z  INFO text_generation_launcher: Runtime environment:\n"
    b"(test) root@8pxb:~/stress_test/code# NCCL_DEBUG=INFO python -m torch.distributed.launch --nproc_per_node=2 train.py"
)


def commands(blocks: list[bytes]) -> list[tuple[int, str, str]]:
    p = Prompts()
    for block in blocks:
        p.feed(block)
    p.end()
    return [(c.line, c.text, c.host) for c in p.commands]


@pytest.mark.parametrize("size", [1, 7, 64, len(PASTE)])
def test_the_same_commands_and_lines_whatever_the_blocks(size):
    blocks = [PASTE[i : i + size] for i in range(0, len(PASTE), size)]
    assert commands(blocks) == [
        (3, "text-generation-launcher --env", "SEA-1801247735"),
        (6, "export DISABLE_CUSTOM_KERNELS=true", "SEA-1801247735"),
        (7, "text-generation-launcher --env", "SEA-1801247735"),
        (9, "NCCL_DEBUG=INFO python -m torch.distributed.launch --nproc_per_node=2 train.py", "8pxb"),
    ]


@pytest.mark.parametrize(
    "earlier, later, again",
    [
        ("python -m torch.distribute.launch --nproc_per_node=2 train.py --fp16", "python -m torch.distributed.launch --nproc_per_node=2 train.py --fp16", True),
        ("pip install flash-attn", "pip install flash-attn --no-build-isolation", True),
        ("pip install flash-attn", "pip install ninja", False),
        ("torchrun --nnodes=2 --node_rank=0 train.py", "torchrun --nnodes=2 --node_rank=1 train.py", False),
        ("python train.py", "nvidia-smi", False),
        ("python train.py", "export NCCL_P2P_DISABLE=1", False),
    ],
)
def test_runs_again(earlier, later, again):
    assert Command(9, later).runs_again(Command(1, earlier)) is again


@pytest.mark.parametrize(
    "line, command, host",
    [
        ("➜  skypilot git:(master) ✗ sky launch 1.yaml", "sky launch 1.yaml", ""),  # skypilot-org/skypilot#6177 (dev3), oh-my-zsh
        ("(base) me@MacBook-Pro llama % torchrun --nproc_per_node 1 example.py", "torchrun --nproc_per_node 1 example.py", "MacBook-Pro"),
        ("(openmmlab) PS D:\\mmpretrain\\train_flowers_demo> python -m torch.distributed.launch train.py", "python -m torch.distributed.launch train.py", ""),
        ("[user@gpu01 ~]$ sbatch run.sh", "sbatch run.sh", "gpu01"),
        # not prompts: a progress bar, a percentage, a comment, a warning's Windows path
        (" 40%|████      | 4/10 [00:01<00:02]", None, None),
        ("# python train.py", None, None),
        ("C:\\venv\\lib\\site-packages\\x.py:35: FutureWarning: deprecated", None, None),
    ],
)
def test_prompt_forms(line, command, host):
    found = commands([line.encode() + b"\n"])
    assert found == ([] if command is None else [(1, command, host)])


# dev7w's vinaikchhetri/WAFFLE-WM logs/nohup.out, shortened: a run ended by Ctrl-C, a run's rounds, two starts that fail at
# their imports; then heldout20w's Viola868/deepseek_training train.err, a SyntaxError two processes print at once
STARTS = (
    b'Traceback (most recent call last):\n  File "/home/exouser/src/main.py", line 136, in <module>\n    fed_avg(args)\n'
    b'  File "/home/exouser/src/fedavg.py", line 125, in client_update\n    optimizer.zero_grad()\nKeyboardInterrupt\n'
    b"Round 0\nserver stats: [loss: 1.925\n"
    + b'Traceback (most recent call last):\n  File "/home/exouser/src/main.py", line 96, in <module>\n'
    b'    from models import MP\n  File "/home/exouser/src/models.py", line 1, in <module>\n'
    b"    import torch\nModuleNotFoundError: No module named 'torch'\n" * 2
    + b'  File "training_swanlab.py", line 232\n  File "training_swanlab.py", line 232\n        optim="adamw_bnb_8bit"\n'
    b'optim="adamw_bnb_8bit"\n        ^\n^\nSyntaxErrorSyntaxError: : invalid syntaxinvalid syntax\n'
)
# heldout20w's GraphFramEx/graphframex job.out (LSF's reports) and heldout18w's heisenyan/openvla-oft slurm.out (Slurm's cancel)
JOBS = (
    b"Sender: LSF System <lsfadmin@eu-g2-18>\nExited with exit code 1.\nThe output (if any) follows:\n"
    b"Sender: LSF System <lsfadmin@eu-g2-16>\nExited with exit code 1.\n"
    b"slurmstepd: error: *** JOB 267035 ON dgx-06 CANCELLED AT 2025-08-21T02:35:44 ***\n"
    b"srun: error: dgx-06: task 0: Terminated\n\nThu Aug 21 02:36:47 2025\n"
    # dev7w's FalsoMoralista/FGDCC logs/nohup.out: a step cancelled, and the next start's traceback right after srun's line
    b"slurmstepd: error: *** STEP 2556.0 ON hgx CANCELLED AT 2024-07-07T23:27:27 ***\n"
    b"srun: error: hgx: task 0: Terminated\nTraceback (most recent call last):\n"
)


def fed(reader, data: bytes, size: int):
    """`reader` fed `data` in blocks of `size` bytes, then ended."""
    for i in range(0, len(data), size):
        reader.feed(data[i : i + size])
    reader.end()
    return reader


@pytest.mark.parametrize("size", [1, 7, 64, len(STARTS)])
def test_process_starts_whatever_the_blocks(size):
    p = fed(RunStarts(), STARTS, size)
    # (line, whether the process that ended before it had just started too): the first start follows a run that got going
    assert p.starts == [(9, False), (15, True), (21, True)]
    assert p.start_after(8, many=True) == (9, p.start_after(8, many=False)[1]) and p.start_after(9, many=True) is None


@pytest.mark.parametrize("size", [1, 7, 64, len(JOBS)])
def test_job_starts_whatever_the_blocks(size):
    assert fed(RunStarts(), JOBS, size).jobs == [1, 4, 9, 12]  # LSF's headers, and the first line after the cancel that is not the scheduler's own


class _FirstWord(HeadLines):
    """A head reader that keeps the line of each 'banner' its head holds."""

    HEAD = 64
    NEEDLES = (b"banner",)

    def __init__(self) -> None:
        super().__init__()
        self.seen_at: list[tuple[int, str]] = []

    def read_head(self, block: bytes, begin: int, end: int, words: set[bytes]) -> None:
        at = block.find(b"banner", begin, end)
        while at != -1:
            self.seen_at.append(self.line_at(block, begin, end, at))
            at = block.find(b"banner", at + 1, end)


@pytest.mark.parametrize("size", [5, 16, 1000])
def test_a_head_reader_reads_whole_lines_of_the_first_bytes_only(size):
    # lines 2 and 4 end within the first 64 bytes; line 6 starts past them; line numbers as the scanner counts them
    text = b"first line here\nbanner one\nxxxxxxxxxxxxxxx\nbanner two x\nyyyyyyyyyyyyyy\nbanner three\n"
    r = _FirstWord()
    for i in range(0, len(text), size):
        r.feed(text[i : i + size])
    r.end()
    assert r.seen_at == [(2, "banner one"), (4, "banner two x")] and r.lines == 6
