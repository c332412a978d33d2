"""knowledge/reruns.py: the commands typed at a prompt, read block by block as the reader feeds them."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.reruns import Command, Prompts

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
