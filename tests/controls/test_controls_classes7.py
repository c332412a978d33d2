"""Controls and siblings for issue 35's numerics rules (src/gpudoctor/knowledge/patterns/families6.py) and for the
classes whose line does not decide the cause when the user's own code raised them (knowledge/story.py names them
through knowledge/unrecognised.message_class, the one place that decides a class).

Numerics: a run stopped on a non-finite loss (an error: the run ended there), a logged loss that is nan, inf or
Trainer's 0.0 while the run goes on (a warning), fp16's loss scale down at 1 (a warning) and the scaler's normal
search for its range at the start (harmless). Each log runs through the whole of `diagnose`; the lines are real
ones from the threads named beside them.

The seventh round's classes of messages (src/gpudoctor/knowledge/patterns/classes7.py) have their controls and siblings
at the end of this file."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case, library_traceback, named_class
from test_controls_patterns import TB, head_id, ids

ENDED = "{'train_runtime': 512.3, 'train_samples_per_second': 3.1, 'train_loss': 1.2231, 'epoch': 1.0}\n"
HF_STEPS = (
    "{'loss': 2.1345, 'grad_norm': 3.52, 'learning_rate': 1.9e-05, 'epoch': 0.01}\n"
    "{'loss': 1.8761, 'grad_norm': 2.11, 'learning_rate': 1.8e-05, 'epoch': 0.02}\n"
)


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


def users_traceback(code: str, line: str) -> str:
    """A traceback that ends in the user's own script (its last frame is theirs)."""
    return TB + f"    {code}\n{line}\n"


class TestAssertionStatesConditionUsersCode:
    verdict = "assertion-states-condition"

    def test_control_a_bare_assert_in_the_users_code_keeps_the_generic_answer(self):
        f = finding(users_traceback("assert len(batch) > 0", "AssertionError"), "python-exception")
        assert f is not None and "class" not in f.evidence
        assert "a message of the class" not in f.fix

    def test_control_another_exception_of_the_users_keeps_the_generic_answer(self):
        f = finding(users_traceback("x = batch['input_ids']", "KeyError: 'input_ids'"), "python-exception")
        assert f is not None and "class" not in f.evidence

    def test_sibling_the_users_own_assert_is_named_with_its_class(self):
        # huggingface/trl#825's message, asserted by the user's script instead of DeepSpeed's engine
        text = users_traceback("assert cfg.optimizer, 'zero stage 2 requires an optimizer'", "AssertionError: zero stage 2 requires an optimizer")
        f = finding(text, "python-exception")
        assert head_id(text) == "python-exception"  # still their code: the catch-all points at their line
        assert f.evidence["class"] == "assertion-states-condition"
        assert f.fix.startswith("a message of the class assertion-states-condition")
        assert "/home/u/train.py:88" in f.fix  # the line that raised is still named
        assert "It is of a known class, assertion-states-condition" in f.why


class TestNoneValueUsedUsersCode:
    verdict = "none-value-used"

    def test_control_an_int_not_subscriptable_in_the_users_code(self):
        f = finding(users_traceback("x = step[0]", "TypeError: 'int' object is not subscriptable"), "python-exception")
        # not a None: Python's type error of another value, its own class (operand-type-mismatch, diagB20)
        assert f is not None and f.evidence.get("class") == "operand-type-mismatch"

    def test_sibling_a_none_in_the_users_code_is_named(self):
        # zai-org/ChatGLM-6B#137's line, raised in the user's own module
        f = finding(users_traceback("cos = self.cos_cached[:seq_len]", "TypeError: 'NoneType' object is not subscriptable"), "python-exception")
        assert f.evidence["class"] == "none-value-used"
        assert "a message of the class none-value-used" in f.fix


class TestSamplingProbabilitiesInvalidUsersCode:
    verdict = "sampling-probabilities-invalid"

    def test_control_another_runtime_error_in_the_users_code(self):
        f = finding(users_traceback("out = torch.cat(parts)", "RuntimeError: torch.cat(): expected a non-empty list of Tensors"), "python-exception")
        assert f is not None and "class" not in f.evidence

    def test_sibling_sampling_in_the_users_code_is_named(self):
        # qwopqwop200/GPTQ-for-LLaMa#36's line, from torch.multinomial called in the user's own sampling loop
        line = "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"
        f = finding(users_traceback("next_token = torch.multinomial(probs, num_samples=1)", line), "python-exception")
        assert f.evidence["class"] == "sampling-probabilities-invalid"


class TestTrainingStoppedNonfinite:
    def test_control_an_args_dump_names_the_nan_filter(self):
        # hiyouga/LlamaFactory#1898: TrainingArguments printed at the start
        assert "training-stopped-nonfinite" not in ids(case("dev", "llamafactory-1898-bf16-loss-zero-args-dump"))

    def test_control_a_nan_check_that_only_prints(self):
        # StarsfieldAI/R1-V#69: the check's print; the run goes on
        assert "training-stopped-nonfinite" not in ids("NaN or Inf found in input tensor.\n")

    def test_sibling_detectron2_stops_on_a_nan_loss(self):
        # gist-ailab/uoais#16
        log = ("[11/15 02:06:37 adet.trainer]: Starting training from iteration 0\n"
               "FloatingPointError: Loss became infinite or NaN at iteration=0!\n"
               "loss_dict = {'loss_cls': 157.09, 'loss_box_reg': nan}\n")
        assert head_id(log) == "training-stopped-nonfinite"
        assert exit_code(api.diagnose(log)) == 1

    def test_sibling_deepspeeds_loss_scale_at_its_minimum(self):
        # yangjianxin1/Firefly#68: fp16 full fine-tune; bf16 fixed it
        log = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1\n"
               "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n")
        assert head_id(log) == "training-stopped-nonfinite"
        assert "bf16" in finding(log, "training-stopped-nonfinite").fix

    def test_sibling_anomaly_detection_in_the_users_backward(self):
        # huggingface/trl#2564's message, raised under the user's own loss.backward()
        log = users_traceback("loss.backward()", "RuntimeError: Function 'Log1PBackward0' returned nan values in its 0th output.")
        assert head_id(log) == "training-stopped-nonfinite"


class TestLossNotFinite:
    def test_control_a_finite_loss_with_a_skipped_steps_nan_grad_norm(self):
        # JiaquanYe/TableMASTER-mmocr#32: under fp16 a skipped step's grad_norm is nan while the loss is finite: normal
        log = ("2021-11-22 01:30:54,321 - mmocr - INFO - Epoch [1][100/62598]\tlr: 1.000e-03, eta: 6 days, 15:22:46, time: 0.539, "
               "data_time: 0.051, memory: 7239, loss_ce: 1.2757, loss: 1.9091, grad_norm: nan\n")
        assert "loss-not-finite" not in ids(log)

    def test_control_megatrons_count_of_nan_iterations(self):
        log = (" iteration      100/   10000 | lm loss: 2.315604E+00 | loss scale: 65536.0 | grad norm: 1.234 | "
               "number of skipped iterations:   0 | number of nan iterations:   0 |\n")
        assert "loss-not-finite" not in ids(log)

    def test_control_a_healthy_run_that_ended_stays_healthy(self):
        report = api.diagnose(HF_STEPS + ENDED)
        assert "loss-not-finite" not in [f.id for f in report.findings]
        assert exit_code(report) == 0

    def test_sibling_nan_steps_in_trainers_log(self):
        log = HF_STEPS + "{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.7e-05, 'epoch': 0.03}\n"
        f = finding(log, "loss-not-finite")
        assert f is not None and f.severity is Severity.WARN  # the run went on: the numbers say it diverges
        assert exit_code(api.diagnose(log)) == 1  # no end shown: not healthy

    def test_sibling_trainers_zero_loss_from_the_first_step(self):
        # huggingface/accelerate#1763: FSDP, a loss of 0.0 from the first step
        assert "loss-not-finite" in ids(case("dev", "accelerate-1763-fsdp-zero-loss-step0"))

    def test_sibling_a_run_that_stopped_on_it_is_the_error(self):
        log = HF_STEPS + "{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.7e-05, 'epoch': 0.03}\nLoss is nan, stopping training\n"
        assert head_id(log) == "training-stopped-nonfinite"


class TestFp16OverflowStepSkipped:
    def test_control_a_handful_at_the_start_is_no_failure(self):
        log = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n"
               "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 32768, reducing to 16384\n" + HF_STEPS + ENDED)
        report = api.diagnose(log)
        f = next(f for f in report.findings if f.id == "fp16-overflow-step-skipped")
        assert f.evidence["role"] == "harmless" and exit_code(report) == 0

    def test_sibling_the_scale_at_one_is_no_longer_the_search(self):
        log = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.0\n"
        assert "fp16-overflow-step-skipped" not in ids(log)
        assert "fp16-loss-scale-at-minimum" in ids(log)


class TestFp16LossScaleAtMinimum:
    def test_control_the_scaler_searching_its_range(self):
        assert "fp16-loss-scale-at-minimum" not in ids("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2048, reducing to 1024\n")

    def test_sibling_deepspeed_stopping_at_the_minimum_is_the_error(self):
        log = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1\n"
               "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n")
        found = ids(log)
        assert found[0] == "training-stopped-nonfinite"
        f = finding(log, "fp16-loss-scale-at-minimum")
        assert f.evidence.get("consequence_of") == "training-stopped-nonfinite"


class TestLossNotFiniteStartValues:
    """A best-so-far loss a run starts from (`best_loss = float("inf")`) or a settings dump is
    printed before any step: no logged loss, so no divergence."""

    verdict = "loss-not-finite"

    def test_control_the_best_loss_a_run_starts_from(self):
        for line in ("best_loss: inf\n", "Best val loss: inf, patience: 10\n", "  min_val_loss = inf\n",
                     "{'best_loss': inf, 'lr': 0.1}\n", "Namespace(batch_size=32, epochs=100, lr=0.001, stop_loss=inf, seed=42)\n"):
            assert "loss-not-finite" not in [f.id for f in api.diagnose(line).findings], line

    def test_sibling_a_logged_validation_loss_of_inf(self):
        assert [f.id for f in api.diagnose("epoch 3 | val_loss: inf | lr 3.0e-04\n").findings][0] == "loss-not-finite"

    def test_sibling_nanogpts_step_line(self):
        line = "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%\n"
        assert [f.id for f in api.diagnose(line).findings][0] == "loss-not-finite"


# --- the seventh round's classes of messages (src/gpudoctor/knowledge/patterns/classes7.py): an object or a module
# without the attribute the code uses (named, not claimed), two tensors' shapes that do not fit (named, not claimed)
# and a program refusing what it does not support or implement (claimed, an error). The sample's cases are the
# development parts' logs as pasted; the other lines are real ones from the threads named beside them.


class TestAttributeMissing:
    verdict = "attribute-missing"

    def test_control_a_none_value_is_its_own_class(self):
        # axolotl-ai-cloud/axolotl#871: the object is None, not an API without the name
        assert named_class("AttributeError: 'NoneType' object has no attribute 'get'\n") == "none-value-used"

    def test_control_a_logged_missing_attribute_is_no_failure(self):
        log = "[WARNING] model has no attribute 'generation_config', using the defaults\n"
        assert "attribute-missing" not in ids(log)
        assert named_class(log) == ""

    def test_control_raised_in_a_librarys_frame_is_the_library_class(self):
        # hiyouga/LlamaFactory#5647: transformers' Trainer calls an optimizer method the installed accelerate lacks
        log = library_traceback("transformers/trainer.py", "AttributeError: 'AdamW' object has no attribute 'train'")
        assert head_id(log) == "library-api-mismatch"
        assert named_class(log) == ""

    def test_sibling_the_samples_fabric_without_init_module_is_the_library_class(self):
        # Lightning-AI/lit-llama#302: the installed lightning predates Fabric.init_module; the log holds no frame of it, and the
        # message alone decides its class (diagB19: library-api-mismatch, whose frame not shown)
        f = finding(case("dev4", "litllama-302-fabric-no-init-module-rich-traceback"), "library-api-mismatch")
        assert f is not None and f.evidence["raised_by"].startswith("not shown") and "find the package that defines Fabric" in f.fix

    def test_sibling_a_module_without_a_name_names_its_package(self):
        # Lightning-AI/lightning-thunder#512: a torch without NCCL has no ProcessGroupNCCL
        f = finding("AttributeError: module 'torch.distributed' has no attribute 'ProcessGroupNCCL'\n", "library-api-mismatch")
        assert f is not None and f.evidence["raised_by"].startswith("not shown")
        assert "`pip show torch`" in f.fix and 'python -c "import torch.distributed; print(torch.distributed.__file__)"' in f.fix

    def test_sibling_the_users_own_code_keeps_its_line_and_gets_the_class(self):
        text = users_traceback("fabric.init_module()", "AttributeError: 'Fabric' object has no attribute 'init_module'")
        f = finding(text, "python-exception")
        assert head_id(text) == "python-exception" and f.evidence["class"] == "attribute-missing"
        assert "/home/u/train.py:88" in f.fix

    def test_sibling_the_ddp_wrapper_has_its_own_pattern(self):
        text = users_traceback("model.generate(x)", "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'")
        assert head_id(text) == "ddp-wrapper-attribute"


class TestTensorShapeMismatch:
    verdict = "tensor-shape-mismatch"

    def test_control_a_broadcasting_warning_is_no_failure(self):
        # torch's own warning for an MSE loss over [8] and [8, 1]: the run goes on
        log = ("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/loss.py:536: UserWarning: Using a target size (torch.Size([8])) "
               "that is different to the input size (torch.Size([8, 1])). This will likely lead to incorrect results due to broadcasting.\n")
        assert "tensor-shape-mismatch" not in ids(log) and named_class(log) == ""

    def test_control_a_view_of_the_wrong_size_is_not_this_class(self):
        log = library_traceback("transformers/models/llama/modeling_llama.py", "RuntimeError: shape '[8, 512]' is invalid for input of size 65536")
        assert named_class(log) != "tensor-shape-mismatch"

    def test_sibling_the_samples_zero3_partitioned_parameter_is_named(self):
        # deepspeedai/DeepSpeed#4437: size 0, a ZeRO-3 parameter used outside its gather
        f = finding(case("dev", "deepspeed-4437-stage3-backward-size-mismatch"), "unrecognised-failure")
        assert f is not None and f.evidence["class"] == "tensor-shape-mismatch"
        assert "GatheredParameters" in f.fix

    def test_sibling_the_samples_dataparallel_gather_in_the_users_loss(self):
        # mlfoundations/open_clip#45: the loss in the user's code gets DataParallel's gathered outputs; with DataParallel's
        # warning before it, the warning decides the class (knowledge/patterns/classes13b.py), without it the message's class
        text = case("dev", "openclip-45-dataparallel-size-mismatch")
        assert head_id(text) == "dataparallel-scalar-loss-gathered"
        f = finding("\n".join(line for line in text.splitlines() if "gather along" not in line), "python-exception")
        assert f is not None and f.evidence["class"] == "tensor-shape-mismatch" and "DataParallel" in f.why

    def test_sibling_tensors_on_two_devices_have_their_own_pattern(self):
        assert head_id("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!\n") == "ddp-device-mismatch"


class TestFeatureNotSupported:
    def test_control_a_fallback_warning_is_no_failure(self):
        log = "UserWarning: fused=True is not supported with foreach=True; falling back to the for-loop implementation\n"
        assert "feature-not-supported" not in ids(log)

    def test_control_a_notice_of_an_unimplemented_option_is_no_failure(self):
        # Lightning-AI/lightning-thunder#2085: transformers' notice, printed while the run goes on
        log = "Sliding Window Attention is enabled but not implemented for `sdpa`; unexpected results may be encountered.\n"
        assert "feature-not-supported" not in ids(log)

    def test_control_the_raise_statement_of_a_traceback_is_not_the_exception(self):
        assert "feature-not-supported" not in ids("  File \"/x/site-packages/peft/utils/other.py\", line 90, in f\n    raise NotImplementedError\n")

    def test_sibling_the_samples_policy_type_not_supported(self):
        # huggingface/lerobot#2338: the policy server's supported list has no groot
        assert head_id(case("heldout4", "lerobot-2338-async-groot-not-supported")) == "feature-not-supported"

    def test_sibling_the_samples_single_gpu_library(self):
        # unslothai/unsloth#724: the free version refuses to run when it sees more than one GPU (its own class now:
        # patterns/classes22d.py)
        f = finding(case("dev3", "unsloth-724-does-not-work-multi-gpu"), "single-gpu-program")
        assert f is not None and f.severity is Severity.ERROR and "CUDA_VISIBLE_DEVICES=0" in f.fix

    def test_sibling_the_samples_bare_not_implemented_in_remote_code(self):
        # yangjianxin1/Firefly#59: Baichuan-13B's remote code has no get_input_embeddings
        assert head_id(case("dev6", "firefly-59-baichuan13b-get-input-embeddings")) == "feature-not-supported"

    def test_sibling_a_setting_in_a_combination_is_the_settings_class(self):
        # meta-pytorch/torchtune#2415
        assert head_id("[rank1]: ValueError: ``minimize_all_reduces`` is not supported without FSDP\n") == "settings-combination-refused"

    def test_sibling_an_operator_not_built_for_cuda_has_its_own_pattern(self):
        line = "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend\n"
        assert head_id(line) == "torchvision-cuda-mismatch"


class TestLibraryLookupFailed:
    verdict = "library-lookup-failed"

    def test_control_the_users_own_lookup_keeps_its_line(self):
        text = users_traceback("x = batch['input_ids']", "KeyError: 'input_ids'")
        f = finding(text, "python-exception")
        assert f is not None and "class" not in f.evidence and "/home/u/train.py:88" in f.fix

    def test_control_pythons_own_mapping_is_the_callers_lookup(self):
        # os.environ raises in Python's own library: the missing name is the caller's, not a package's bug
        text = TB + '    p = os.environ["MY_DATA"]\n  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n    raise KeyError(key) from None\nKeyError: \'MY_DATA\'\n'
        assert named_class(text) == ""

    def test_control_no_traceback_does_not_say_whose_lookup_it_was(self):
        assert named_class("IndexError: list index out of range\n") == ""

    def test_sibling_the_samples_trainer_reading_loss_is_named(self):
        # huggingface/transformers#12908: Transformer-XL's outputs hold no 'loss' for the Trainer
        f = finding(case("dev", "transformers-12908-transfo-xl-keyerror-loss"), "unrecognised-failure")
        assert f is not None and f.evidence["class"] == "library-lookup-failed" and "labels" in f.fix

    def test_sibling_the_samples_small_dataset_split_is_named(self):
        # NVIDIA/Megatron-Energon#145: the sharder indexes past its shard list
        assert named_class(case("dev5", "energon-pr145-sharder-indexerror-few-samples")) == "library-lookup-failed"

    def test_sibling_a_library_frame_with_another_class_gets_that_class(self):
        log = library_traceback("transformers/trainer.py", "AttributeError: 'AdamW' object has no attribute 'train'")
        assert head_id(log) == "library-api-mismatch"
