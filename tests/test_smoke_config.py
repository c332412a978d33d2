"""The reference job's limits: the fewest steps the learning verification can
judge, and the learning rate, as functions of the global batch."""

from gpudoctor.commands.train_smoke.config import MIN_STEPS, REFERENCE_BATCH, SmokeConfig


def test_default_batch_needs_the_measured_minimum_and_keeps_its_learning_rate():
    cfg = SmokeConfig()  # 2 ranks x 64
    assert cfg.global_batch == 128 and cfg.min_steps == MIN_STEPS == 40
    assert cfg.step_lr == cfg.lr == 0.05
    assert SmokeConfig(nproc=1, batch_size=REFERENCE_BATCH).min_steps == MIN_STEPS


def test_small_global_batches_learn_slower_and_need_more_steps_in_proportion():
    assert SmokeConfig(nproc=2, batch_size=4).step_lr == 0.05 * 8 / 64
    assert SmokeConfig(nproc=2, batch_size=4).min_steps == 320
    assert SmokeConfig(nproc=1, batch_size=1).min_steps == 40 * 64
    assert SmokeConfig(nproc=3, batch_size=7).min_steps == 122  # rounded up, never down
