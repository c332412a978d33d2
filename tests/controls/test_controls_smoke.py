"""Controls and siblings for train-smoke's verifications (commands/train_smoke/verify.py),
issue 34's method: the healthy run that looks most like the failure must not get the
verdict (test_control_*); the nearest run that needs another verdict gets its own
(test_sibling_*). The ranks' reports are the hand-built healthy ones of
tests/test_smoke_verify.py (what DistributedSampler, the loss and the checkpoint of
a good 2-rank run give), each changed in one field: pure functions, no rank runs."""

from __future__ import annotations

from gpudoctor.commands.train_smoke.config import LEARNING_FACTOR, OUTPUT_TOLERANCE
from gpudoctor.commands.train_smoke.verify import (
    verify_checkpoint,
    verify_gradient_averaging,
    verify_learning,
    verify_sharding,
    verify_synchronisation,
)
from gpudoctor.core.findings import Severity
from test_smoke_verify import PARAMS, healthy, typed


def ids(verification) -> list[str]:
    return [f.id for f in verification.findings]


class TestSamplerShardsWrong:
    def test_control_the_samplers_own_padding_repeats_a_few_indices(self):
        # 4001 samples over 2 ranks: DistributedSampler repeats 1 index to even the shards
        v = verify_sharding(typed(healthy(2, n=4001)))
        assert v.passed and ids(v) == ["smoke-sharding"] and "+1 repeated" in v.detail

    def test_sibling_two_ranks_reading_the_same_shard(self):
        results = healthy()
        results[1]["sharding"]["epoch0"] = list(results[0]["sharding"]["epoch0"])
        v = verify_sharding(typed(results))
        assert not v.passed and ids(v) == ["sampler-shards-wrong"] and v.findings[0].evidence["shared_count"] == 2048

    def test_sibling_one_index_more_repeated_than_the_padding_explains(self):
        results = healthy(2, n=4001)
        order = results[1]["sharding"]["epoch0"]
        order[-2] = order[0]  # (order[-1] is the padding) a second repeat: one sample is now missing
        v = verify_sharding(typed(results))
        assert ids(v) == ["sampler-shards-wrong"] and v.findings[0].evidence["missing_count"] == 1


class TestSamplerOrderFixed:
    def test_control_without_set_epoch_the_order_repeats_and_is_only_said(self):
        # the unset orders always repeat (unset0 == unset1): the lesson, not a verdict
        v = verify_sharding(typed(healthy()))
        assert v.passed and v.findings[0].evidence["order_repeats_without_set_epoch"] is True

    def test_control_one_sample_per_rank_cannot_reorder(self):
        results = healthy(2, n=2)
        for r in results:
            r["sharding"]["epoch1"] = list(r["sharding"]["epoch0"])
        assert verify_sharding(typed(results)).passed

    def test_sibling_set_epoch_had_no_effect(self):
        results = healthy()
        results[1]["sharding"]["epoch1"] = list(results[1]["sharding"]["epoch0"])
        v = verify_sharding(typed(results))
        assert ids(v) == ["sampler-order-fixed"] and v.findings[0].evidence["ranks"] == [1]


class TestLossNotFalling:
    def test_control_exactly_the_required_factor_passes(self):
        results = healthy()
        for r in results:
            r["learning"].update(initial_loss=1.5, final_loss=1.5 / LEARNING_FACTOR)
        v = verify_learning(typed(results))
        assert v.passed and ids(v) == ["smoke-learning"]

    def test_control_a_last_step_loss_above_the_first_is_not_judged(self):
        # one noisy batch: the verdict reads the evaluation loss, not the step losses
        results = healthy()
        results[0]["learning"].update(first_step_loss=0.5, last_step_loss=2.0)
        assert verify_learning(typed(results)).passed

    def test_sibling_just_short_of_the_factor(self):
        results = healthy()
        results[1]["learning"].update(initial_loss=1.5, final_loss=1.5 / (LEARNING_FACTOR * 0.9))
        [f] = verify_learning(typed(results)).findings
        assert f.id == "loss-not-falling" and f.evidence["rank"] == 1 and f.severity is Severity.ERROR

    def test_sibling_a_loss_that_became_nan(self):
        results = healthy()
        results[0]["learning"].update(final_loss=float("nan"))
        [f] = verify_learning(typed(results)).findings
        assert f.id == "loss-not-falling" and "became nan" in f.title


class TestRanksDiverged:
    def test_control_one_rank_has_nothing_to_diverge_from(self):
        v = verify_synchronisation(typed(healthy(1)))
        assert v.passed and ids(v) == ["smoke-sync"]

    def test_control_three_ranks_holding_the_same_digests(self):
        assert verify_synchronisation(typed(healthy(3, n=4000))).passed

    def test_sibling_one_rank_parts_at_a_sync_point(self):
        results = healthy(3, n=4000)
        sync = results[2]["sync"]
        sync["checkpoints"] = [[s, d if s < 150 else d + "x"] for s, d in sync["checkpoints"]]
        [f] = verify_synchronisation(typed(results)).findings
        assert f.id == "ranks-diverged" and f.evidence["diverged_ranks"] == [2] and f.evidence["first_diverged_step"] == 150

    def test_sibling_a_wrong_average_is_its_own_verdict_not_a_divergence(self):
        # every rank applies the same wrong average: they agree with each other
        results = healthy()
        results[0]["gradient"].update(relative_error=0.5)
        assert verify_synchronisation(typed(results)).passed
        assert ids(verify_gradient_averaging(typed(results))) == ["gradient-average-wrong"]


class TestGradientAverageWrong:
    def test_control_a_float_difference_within_the_tolerance(self):
        results = healthy()
        results[0]["gradient"].update(relative_error=0.99e-4)
        v = verify_gradient_averaging(typed(results))
        assert v.passed and ids(v) == ["smoke-gradient-averaging"]

    def test_sibling_summed_not_averaged(self):
        # the gradient of 2 ranks summed: twice the reference, relative error 1.0
        results = healthy()
        results[0]["gradient"].update(relative_error=1.0, worst_param="2.weight")
        [f] = verify_gradient_averaging(typed(results)).findings
        assert f.id == "gradient-average-wrong" and f.evidence["worst_parameter"] == "2.weight"


class TestCheckpointWrittenByMany:
    def test_control_rank_0_writes_once_the_others_load_it(self):
        v = verify_checkpoint(typed(healthy(3, n=4000)))
        assert v.passed and ids(v) == ["smoke-checkpoint"]

    def test_sibling_rank_2_also_wrote_the_file(self):
        results = healthy(3, n=4000)
        results[2]["checkpoint"]["wrote"] = ["/tmp/x/train-smoke.pt"]
        [f] = verify_checkpoint(typed(results)).findings
        assert f.id == "checkpoint-written-by-many" and "rank 2 also wrote" in f.title


class TestCheckpointModulePrefix:
    def test_control_module_inside_a_key_is_not_the_wrapper_prefix(self):
        results = healthy()
        results[0]["checkpoint"]["keys"] = ["encoder.module.weight", *PARAMS]
        assert verify_checkpoint(typed(results)).passed

    def test_sibling_keys_saved_through_the_ddp_wrapper(self):
        results = healthy()
        results[0]["checkpoint"]["keys"] = [f"module.{p}" for p in PARAMS]
        [f] = verify_checkpoint(typed(results)).findings
        assert f.id == "checkpoint-module-prefix" and f.evidence["prefixed_keys"][0] == "module.0.weight"


class TestCheckpointReloadMismatch:
    def test_control_a_reload_within_the_output_tolerance(self):
        results = healthy()
        results[0]["checkpoint"]["output_max_diff"] = OUTPUT_TOLERANCE / 2
        assert verify_checkpoint(typed(results)).passed

    def test_sibling_reloaded_outputs_past_the_tolerance(self):
        results = healthy()
        results[0]["checkpoint"]["output_max_diff"] = OUTPUT_TOLERANCE * 10
        [f] = verify_checkpoint(typed(results)).findings
        assert f.id == "checkpoint-reload-mismatch" and f.evidence["tolerance"] == OUTPUT_TOLERANCE

    def test_sibling_a_state_dict_that_does_not_load(self):
        results = healthy()
        results[0]["checkpoint"].update(output_max_diff=None, load_error="Missing key(s) in state_dict")
        [f] = verify_checkpoint(typed(results)).findings
        assert f.id == "checkpoint-reload-mismatch" and "Missing key" in str(f.evidence["load_error"])


# The passing verdicts: the nearest broken run must not get them.


class TestSmokeSharding:
    def test_control_a_rank_one_sample_short_does_not_pass(self):
        results = healthy()
        results[1]["sharding"]["epoch0"] = results[1]["sharding"]["epoch0"][:-1]
        assert "smoke-sharding" not in ids(verify_sharding(typed(results)))

    def test_sibling_healthy_shards_pass(self):
        assert ids(verify_sharding(typed(healthy()))) == ["smoke-sharding"]


class TestSmokeLearning:
    def test_control_a_loss_that_fell_only_9x_does_not_pass(self):
        results = healthy()
        results[0]["learning"].update(initial_loss=1.8, final_loss=0.2)
        assert "smoke-learning" not in ids(verify_learning(typed(results)))

    def test_sibling_a_100x_fall_passes(self):
        results = healthy()
        for r in results:
            r["learning"].update(initial_loss=2.0, final_loss=0.02)
        assert ids(verify_learning(typed(results))) == ["smoke-learning"]


class TestSmokeSync:
    def test_control_equal_digests_but_a_parameter_spread_does_not_pass(self):
        results = healthy()
        for r in results:
            r["sync"]["spread"] = {p: (1e-7 if p == "2.bias" else 0.0) for p in PARAMS}
        assert "smoke-sync" not in ids(verify_synchronisation(typed(results)))

    def test_sibling_no_spread_passes(self):
        assert ids(verify_synchronisation(typed(healthy()))) == ["smoke-sync"]


class TestSmokeGradientAveraging:
    def test_control_just_past_the_tolerance_does_not_pass(self):
        results = healthy()
        results[0]["gradient"].update(relative_error=1.01e-4)
        assert "smoke-gradient-averaging" not in ids(verify_gradient_averaging(typed(results)))

    def test_sibling_no_gradient_check_is_not_run_not_passed(self):
        results = healthy()
        results[0]["gradient"] = None
        v = verify_gradient_averaging(typed(results))
        assert v.passed is None and v.findings == ()


class TestSmokeCheckpoint:
    def test_control_a_file_overwritten_after_rank_0_wrote_it_does_not_pass(self):
        results = healthy()
        results[0]["checkpoint"]["sha256_at_end"] = "bb"
        assert ids(verify_checkpoint(typed(results))) == ["checkpoint-written-by-many"]

    def test_sibling_the_healthy_checkpoint_passes(self):
        assert ids(verify_checkpoint(typed(healthy()))) == ["smoke-checkpoint"]
