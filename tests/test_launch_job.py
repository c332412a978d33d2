"""The one job runner's joined mode: rank 0's exception becomes a finding,
another rank's propagates to the launcher, a return value comes back as is.
(Local mode runs real ranks in test_launch.py and the commands' tests.)"""

import pytest

from gpudoctor.hang.run_ranks import run_joined
from gpudoctor.launch.rank import RankContext


def _fails(ctx, config):
    raise RuntimeError(f"Connection reset by peer ({config['what']})")


def test_rank_zero_failure_is_a_finding_with_progress_and_fix():
    ctx = RankContext(0, 2, 0, 2, joined_by="torchrun")
    joined = run_joined(ctx, _fails, {"what": "x"}, command="allreduce", progress=lambda: " after 3 size(s)")
    assert joined.value is None and joined.raised == "RuntimeError"
    assert joined.failure.id == "joined-rank-failed"
    assert joined.failure.title.endswith("lost a peer (a rank crashed?) after 3 size(s)")
    assert joined.failure.fix.startswith("read the launcher's output for the first rank that failed") and "gpudoctor allreduce --nproc N" in joined.failure.fix


def test_other_ranks_raise_for_the_launcher_to_report():
    with pytest.raises(RuntimeError, match="reset by peer"):
        run_joined(RankContext(1, 2, 1, 2, joined_by="torchrun"), _fails, {"what": "x"}, command="allreduce")


def test_a_return_value_and_keyword_arguments_pass_through():
    ctx = RankContext(0, 1, 0, 1, joined_by="torchrun")
    joined = run_joined(ctx, lambda c, config, on_row=None: (c.rank, config, on_row), {"a": 1}, on_row="r", command="allreduce")
    assert joined.value == (0, {"a": 1}, "r") and joined.failure is None
