"""Rank programs for tests/controls/test_controls_findings_runs.py (imported in the
child ranks, which get this folder and tests/ on PYTHONPATH): stand-ins for
train-smoke's rank function that return the hand-built healthy reports of
tests/test_smoke_verify.py, or nothing, and a job that works for a set time."""

import time


def healthy_report(ctx, cfg):
    from test_smoke_verify import healthy, typed

    return typed(healthy(cfg.nproc))[ctx.rank]


def returns_nothing(ctx, cfg):
    """The rank ends well (exit code 0) without handing its report back."""
    return None


def joins_then_sleeps(ctx, config):
    """Join a gloo group, then work (sleep) `config['sleep']` s outside any collective."""
    dist = ctx.init_process_group("gloo", timeout_s=60)
    ctx.progress("train", 1)
    time.sleep(config["sleep"])
    dist.destroy_process_group()
