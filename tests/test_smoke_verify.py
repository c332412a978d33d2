"""The train-smoke verifications as pure functions: healthy results built by hand
pass; each kind of breakage fails the verification meant for it, and only it,
with the evidence that names the rank, the parameter, the step."""

import copy
import random

import pytest

from gpudoctor.core.findings import Severity
from gpudoctor.core.codec import from_plain
from gpudoctor.commands.train_smoke.config import LEARNING_FACTOR, SmokeConfig
from gpudoctor.commands.train_smoke.result import RankReport
from gpudoctor.commands.train_smoke.verify import (
    NAMES,
    not_run,
    throughput,
    verify_all,
    verify_checkpoint,
    verify_gradient_averaging,
    verify_learning,
    verify_sharding,
    verify_synchronisation,
    verify_workers,
)

PARAMS = ("0.weight", "0.bias", "2.weight", "2.bias")


def shard(n, world, rank, seed):
    """What DistributedSampler does: one permutation per seed, padded, strided."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    total = -(-n // world) * world
    order += order[: total - n]
    return order[rank:total:world]


def healthy(world=2, n=4096, steps=200):
    results = []
    for rank in range(world):
        results.append(
            {
                "rank": rank,
                "world_size": world,
                "device": "cpu",
                "backend": "gloo",
                "amp": False,
                "fault": None,
                "threads": 1,
                "sharding": {
                    "dataset_size": n,
                    "total_size": -(-n // world) * world,
                    "epoch0": shard(n, world, rank, 0),
                    "epoch1": shard(n, world, rank, 1),
                    "unset0": shard(n, world, rank, 0),
                    "unset1": shard(n, world, rank, 0),
                },
                "learning": {"initial_loss": 1.5, "final_loss": 0.003, "first_step_loss": 1.4, "last_step_loss": 0.004, "epochs": 7},
                "sync": {
                    "checkpoints": [[s, f"d{s}"] for s in (50, 100, 150, 200)],
                    "params": {p: f"h-{p}" for p in PARAMS},
                    "spread": {p: 0.0 for p in PARAMS},
                },
                "checkpoint": {
                    "path": "/tmp/x/train-smoke.pt",
                    "wrote": ["/tmp/x/train-smoke.pt"] if rank == 0 else [],
                    **(
                        {"sha256": "aa", "sha256_at_end": "aa", "keys": list(PARAMS), "output_max_diff": 0.0}
                        if rank == 0
                        else {}
                    ),
                },
                "gradient": (
                    {
                        "ranks": world,
                        "batch_per_rank": 64,
                        "reference_batch": 64 * world,
                        "max_abs_diff": 1e-9,
                        "max_update": 4e-4,
                        "relative_error": 2.5e-6,
                        "worst_param": "0.weight",
                        "per_param": {p: 1e-9 for p in PARAMS},
                        "tolerance": 1e-4,
                    }
                    if rank == 0
                    else None
                ),
                "workers": None,
                "throughput": {"steps": steps, "batch_size": 64, "seconds": 0.5 + rank / 10, "steps_per_s": steps / (0.5 + rank / 10), "samples": steps * 64, "samples_per_s": steps * 64 / (0.5 + rank / 10)},
            }
        )
    return results


def typed(results):
    """The hand-built results (plain data, easy to break in a test) as the ranks' RankReports."""
    return [from_plain(RankReport, r) for r in results]


def states(results):
    return {v.name: v.passed for v in verify_all(typed(results), SmokeConfig())}


def only_failure(results):
    failed = [name for name, passed in states(results).items() if passed is False]
    assert len(failed) == 1, failed
    return failed[0]


def error(verification):
    errors = [f for f in verification.findings if f.severity is Severity.ERROR]
    assert errors, verification
    return errors[0]


@pytest.mark.parametrize("world", [1, 2, 3])
def test_healthy_results_pass_every_verification(world):
    verifications = verify_all(typed(healthy(world, n=4096 if world != 3 else 4000)), SmokeConfig())
    assert [v.name for v in verifications] == [*NAMES, "throughput"]
    assert all(v.passed for v in verifications), [(v.name, v.detail) for v in verifications if not v.passed]
    assert all(f.severity is Severity.OK for v in verifications for f in v.findings)


def test_sharding_detail_states_the_padding_and_the_set_epoch_lesson():
    v = verify_sharding(typed(healthy(3, n=4000)))
    assert v.passed
    assert "+2 repeated" in v.detail  # 4000 samples over 3 ranks: DistributedSampler pads 2
    assert "without set_epoch epoch 1 repeats epoch 0's order" in v.detail


def test_overlapping_shards_fail_sharding_only():
    results = healthy()
    results[1]["sharding"]["epoch0"] = list(results[0]["sharding"]["epoch0"])  # num_replicas/rank not passed
    assert only_failure(results) == "sharding"
    f = error(verify_sharding(typed(results)))
    assert f.id == "sampler-shards-wrong"
    assert f.evidence["shared_count"] == 2048 and f.evidence["missing_count"] == 2048


def test_unequal_shards_fail_sharding():
    results = healthy()
    results[1]["sharding"]["epoch0"] = results[1]["sharding"]["epoch0"][:-1] + []
    f = error(verify_sharding(typed(results)))
    assert f.id == "sampler-shards-wrong" and f.evidence["samples_per_rank"] == [2048, 2047]


def test_set_epoch_without_effect_fails_sharding():
    results = healthy()
    for r in results:
        r["sharding"]["epoch1"] = list(r["sharding"]["epoch0"])
    f = error(verify_sharding(typed(results)))
    assert f.id == "sampler-order-fixed" and f.evidence["ranks"] == [0, 1]


def test_loss_that_does_not_fall_enough_fails_learning_only():
    results = healthy()
    results[1]["learning"].update(initial_loss=1.5, final_loss=1.5 / (LEARNING_FACTOR / 2))
    assert only_failure(results) == "learning"
    f = error(verify_learning(typed(results)))
    assert f.id == "loss-not-falling" and f.evidence["rank"] == 1
    assert "fell only 5×" in f.title


def test_rising_loss_is_called_rising():
    results = healthy()
    results[0]["learning"].update(initial_loss=1.5, final_loss=30.0)
    assert "rose 20×" in error(verify_learning(typed(results))).title


def test_loss_that_blows_up_fails_learning():
    results = healthy()
    results[1]["learning"].update(initial_loss=1.5, final_loss=float("nan"))
    f = error(verify_learning(typed(results)))
    assert f.id == "loss-not-falling" and f.evidence["rank"] == 1 and "became nan" in f.title


def test_diverged_rank_is_named_with_step_parameter_and_difference():
    results = healthy(3)
    r2 = results[2]["sync"]
    r2["checkpoints"] = [[s, d if s < 100 else d + "x"] for s, d in r2["checkpoints"]]
    r2["params"]["0.bias"] = "other"
    r2["params"]["2.weight"] = "other"
    for r in results:
        r["sync"]["spread"] = {"0.weight": 0.0, "0.bias": 0.25, "2.weight": 0.5, "2.bias": 0.0}
    assert only_failure(results) == "synchronisation"
    f = error(verify_synchronisation(typed(results)))
    assert f.id == "ranks-diverged"
    ev = f.evidence
    assert ev["diverged_ranks"] == [2] and ev["rank"] == 2
    assert ev["first_diverged_step"] == 100
    assert ev["first_parameter"] == "0.bias" and ev["max_abs_difference"] == 0.25
    assert ev["max_abs_difference_any_parameter"] == 0.5
    assert "rank 2 holds different parameters" in f.title


def test_with_two_ranks_the_odd_one_is_judged_against_rank_0():
    results = healthy(2)
    results[1]["sync"]["params"]["2.bias"] = "other"
    results[1]["sync"]["spread"] = results[0]["sync"]["spread"] = {p: 1e-3 for p in PARAMS}
    ev = error(verify_synchronisation(typed(results))).evidence
    assert ev["diverged_ranks"] == [1] and ev["first_parameter"] == "2.bias"
    assert ev["first_diverged_step"] is None  # the sync points agreed; the final digests did not


def test_wrong_average_fails_gradient_averaging_only():
    results = healthy()
    results[0]["gradient"].update(relative_error=0.43, max_abs_diff=4e-4, worst_param="2.weight")
    results[1]["fault"] = "badgrad"
    assert only_failure(results) == "gradient-averaging"
    f = error(verify_gradient_averaging(typed(results)))
    assert f.id == "gradient-average-wrong"
    assert f.evidence["worst_parameter"] == "2.weight" and f.evidence["relative_error"] == 0.43
    assert f.evidence["injected"] == "GPUDOCTOR_FAULT=1:badgrad"


def test_other_rank_writing_fails_checkpoint_only():
    results = healthy()
    results[1]["checkpoint"]["wrote"] = ["/tmp/x/train-smoke.pt"]
    results[0]["checkpoint"].update(sha256_at_end="bb", keys_at_end=[f"module.{p}" for p in PARAMS])
    assert only_failure(results) == "checkpoint"
    f = error(verify_checkpoint(typed(results)))
    assert f.id == "checkpoint-written-by-many"
    assert f.evidence["files_written_per_rank"] == {0: 1, 1: 1}
    assert f.evidence["module_prefixed_at_end"] == 4
    assert "rank 1 also wrote" in f.title


def test_rank0_writing_twice_fails_checkpoint():
    results = healthy()
    results[0]["checkpoint"]["wrote"] *= 2
    assert error(verify_checkpoint(typed(results))).id == "checkpoint-written-by-many"


def test_module_prefix_and_reload_failure_are_named():
    results = healthy()
    results[0]["checkpoint"].update(keys=[f"module.{p}" for p in PARAMS], output_max_diff=None, load_error="Missing key(s) in state_dict")
    ids = [f.id for f in verify_checkpoint(typed(results)).findings]
    assert ids == ["checkpoint-module-prefix", "checkpoint-reload-mismatch"]


def test_reloaded_outputs_that_differ_fail_checkpoint():
    results = healthy()
    results[0]["checkpoint"]["output_max_diff"] = 0.5
    f = error(verify_checkpoint(typed(results)))
    assert f.id == "checkpoint-reload-mismatch" and "0.5" in f.title


def test_workers_are_reported_only_when_measured():
    results = healthy()
    assert verify_workers(typed(results)) is None
    for r in results:
        r["workers"] = {
            "num_workers": 2,
            "start_method": "spawn",
            "epochs": 2,
            "off": {"startup_s": [1.5, 1.3], "epoch_s": [1.6, 1.4]},
            "on": {"startup_s": [1.4, 0.002], "epoch_s": [1.5, 0.1]},
        }
    v = verify_workers(typed(results))
    assert v.passed and v.findings[0].id == "dataloader-worker-startup"
    assert v.findings[0].evidence["startup_s_persistent_off"] == 1.4
    assert v.findings[0].evidence["startup_s_persistent_on_later"] == 0.002
    assert "persistent_workers=True" in v.findings[0].fix
    assert "dataloader-workers" in [x.name for x in verify_all(typed(results), SmokeConfig(num_workers=2))]


def test_throughput_total_goes_at_the_slowest_rank():
    tp = throughput(typed(healthy(2, steps=200)))
    total = tp["total"]
    assert total["seconds"] == 0.6
    assert total["steps_per_s"] == pytest.approx(200 / 0.6)
    assert total["samples_per_s"] == pytest.approx(2 * 200 * 64 / 0.6)
    assert [r["rank"] for r in tp["per_rank"]] == [0, 1]


def test_results_in_any_order_are_judged_by_rank():
    results = healthy(2)
    assert all(v.passed for v in verify_all(list(reversed(typed(copy.deepcopy(results)))), SmokeConfig()))


def test_not_run_lists_every_verification_as_unjudged():
    assert [(v.name, v.passed) for v in not_run("rank 1 hung")] == [(n, None) for n in NAMES]
