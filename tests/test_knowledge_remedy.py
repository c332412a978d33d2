"""What an error message already says to do (issue 35 item 3)."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.remedy import advice, remedy_in

SAYS = {
    # pytorch's out-of-memory message
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management":
        "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.": "consider passing CUDA_LAUNCH_BLOCKING=1",
    "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.": "Please switch dtype to float16",
    "ImportError: Please install flash_attn with pip install flash-attn --no-build-isolation":
        "Please install flash_attn with pip install flash-attn --no-build-isolation",
    "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1": "run with NCCL_DEBUG=INFO for details",
    "export NCCL_P2P_DISABLE=1": "export NCCL_P2P_DISABLE=1",
    # skypilot-org/skypilot#5031: the command that shows the job's record
    "Job 1 is already in terminal state FAILED_CONTROLLER. For more details, run: sky jobs logs --controller 1":
        "run: sky jobs logs --controller 1",
    "For more information, see https://github.com/pytorch/pytorch/issues/1234 for details.": "see https://github.com/pytorch/pytorch/issues/1234 for details",
    "The easiest method is to set these DeepSpeed config values to 'auto'.": "The easiest method is to set these DeepSpeed config values to 'auto'",
    "You can set the environment variable TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.":
        "You can set the environment variable TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value",
    # hydra's instantiate error (diagC30): the step after a comma, a variable set by its name and value
    "hydra.errors.InstantiationException: Error locating target 'src.data.custom_datamodule.T3ALDataModule', set env var "
    "HYDRA_FULL_ERROR=1 to see chained exception.": "set env var HYDRA_FULL_ERROR=1 to see chained exception",
}

SAYS_NOTHING = [
    "ValueError: failed to set up the device",  # "set" mid-sentence is no advice
    "RuntimeError: could not set tensor4d descriptor, set up failed",  # after a comma, but no variable set by its value
    "ValueError: Cannot set a DataFrame with multiple columns, set MODE to one column",  # (a name without its value)
    "RuntimeError: cannot use this",
    "See above for the error.",  # names nothing to do
    "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
    "Please note that this is a warning",
    # unslothai/unsloth#724: a clause about a beta version, not a step to take
    "We do have a separate beta version, which you can contact us about! Thank you for your understanding",
    # skypilot-org/skypilot#3706: a step of the shell command the error quotes
    "sky.exceptions.CommandError: Command docker exec sky_container /bin/bash -c 'bash --login -c -i '\"'\"'source ~/.bashrc; export OMP_NUM_THREADS=1 PYTHONWARNINGS=ignore && (sudo apt-get update",
]


@pytest.mark.parametrize("text", sorted(SAYS))
def test_the_advice_is_quoted_to_its_sentence_end(text):
    assert advice(text) == SAYS[text]


@pytest.mark.parametrize("text", SAYS_NOTHING)
def test_no_advice_is_made_up(text):
    assert advice(text) == ""


def test_advice_over_two_lines_is_read_on_and_keeps_its_first_line():
    lines = [
        (7, "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. You can enable"),
        (8, "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to DDP."),
    ]
    found = remedy_in(lines)
    assert found is not None and found.line == 7
    assert "find_unused_parameters=True" in found.text


def test_a_plea_for_patience_is_no_remedy():
    # unslothai/unsloth#724: "... so we have to prioritize. Please understand!"
    assert advice("RuntimeError: Unsloth currently does not work on multi GPU setups. Please understand!") == ""
