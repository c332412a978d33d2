"""Controls and siblings for the eighth round's classes of messages (src/gpudoctor/knowledge/patterns/classes8.py):
an exception that relays another process's or worker's error (named, not claimed: the real error is under it), a
program's own check that refused its set-up and says what to change (claimed, an error), and a value of another
type or dtype than an operation takes (claimed, an error: the message names what it refused and what it takes). The sample's cases are the readable parts' logs as
pasted; the other lines are real ones from the threads named beside them. Each log runs through the whole of
`diagnose`."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from gpudoctor.core.findings import Severity
from test_controls_classes6 import SITE, case, library_traceback, named_class
from test_controls_patterns import TB, head_id, ids


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


def relayed(line: str, original: str = "") -> str:
    """A traceback that ends in torch's re-raise of another thread's or process's error."""
    return (TB + "    out = model(x)\n" + f'  File "{SITE}/torch/_utils.py", line 395, in reraise\n'
            + "    raise self.exc_type(msg)\n" + line + "\n" + original)


class TestWorkerErrorRelayed:
    verdict = "worker-error-relayed"

    def test_control_a_traceback_header_alone_is_no_relay(self):
        # a traceback cut after its header says an exception was raised, not that a worker relayed it
        assert named_class("Traceback (most recent call last):\n") != "worker-error-relayed"

    def test_control_an_unknown_exception_caught_is_not_a_relay(self):
        assert named_class(library_traceback("torch/utils/data/dataloader.py", "RuntimeError: Caught an unknown exception!")) != "worker-error-relayed"

    def test_sibling_the_samples_dataparallel_replica_is_named_with_its_step(self):
        # ultralytics/yolov5#115: the replica's original traceback is cut from the paste
        f = finding(case("dev4", "yolov5-115-dataparallel-replica-1-test"), "unrecognised-failure")
        assert f is not None and f.evidence["class"] == "worker-error-relayed"
        assert "DataParallel's replica 1 (on GPU 1)" in f.fix and "CUDA_VISIBLE_DEVICES=0" in f.fix
        assert "num_workers=0" not in f.fix  # the step is the replica's, not every relay's

    def test_sibling_the_samples_dataloader_worker_is_named_with_num_workers(self):
        # huggingface/lerobot#2488: video decoding fails inside worker 0; its original traceback is cut before its message,
        # so the answer is that original, named through the relay (knowledge/relays.py), with the relay's step
        f = finding(case("heldout4", "lerobot-2488-dataloader-worker-decoding"), "unrecognised-failure")
        assert f is not None and "RuntimeError in DataLoader worker process 0 (its traceback is cut" in f.title
        assert "which line 2 relays" in f.fix and "num_workers=0" in f.fix

    def test_sibling_a_ray_actors_error_names_its_log(self):
        # OpenRLHF/OpenRLHF#829: the actor's RuntimeError, relayed to the driver
        f = finding(case("dev", "openrlhf-829-actor-fit-raytaskerror-cuda-launch"), "unrecognised-failure")
        assert f is not None and f.evidence["class"] == "worker-error-relayed"
        assert "ray logs worker --pid 128582" in f.fix

    def test_sibling_the_relayed_error_a_pattern_knows_leads(self):
        # the replica's own error is under the relay: its pattern is the cause, the relay only its carrier
        log = relayed("RuntimeError: Caught RuntimeError in replica 1 on device 1.",
                      "Original Traceback (most recent call last):\n"
                      f'  File "{SITE}/torch/nn/parallel/parallel_apply.py", line 61, in _worker\n'
                      "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n")
        assert head_id(log) == "ddp-device-mismatch"

    def test_sibling_mp_spawns_relay_is_the_launchers(self):
        assert "launcher-child-exit" in ids("-- Process 2 terminated with the following error:\n")


class TestSetupRefusedByProgram:
    verdict = "setup-refused-by-program"

    def test_control_an_internal_assert_asking_for_a_bug_report(self):
        # m-bain/whisperX#1198: "please report a bug" says where to tell, not what to change
        line = ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1015, '
                "please report a bug to PyTorch.\n")
        assert "setup-refused-by-program" not in ids(line)

    def test_control_a_deprecation_that_says_what_to_use_is_no_failure(self):
        line = ("FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.\n"
                "{'loss': 1.2, 'epoch': 0.5}\n{'train_runtime': 512.3, 'train_loss': 1.2, 'epoch': 1.0}\n")
        report = api.diagnose(line)
        assert "setup-refused-by-program" not in [f.id for f in report.findings] and exit_code(report) == 0

    def test_control_a_logged_fallback_that_says_what_to_install(self):
        assert "setup-refused-by-program" not in ids(
            "[WARNING] ValueError: 'wandb' not installed. Please install it with `pip install wandb` to log runs; logging to the console\n")

    def test_control_an_exception_a_fallback_warning_said_was_caught(self):
        log = ("[WARNING] Falling back to eager due to an exception:\n"
               "ValueError: fused kernel unavailable for this shape. Please set `use_fused=False` to silence this.\n"
               "{'loss': 1.2, 'epoch': 0.5}\n{'train_runtime': 512.3, 'train_loss': 1.2, 'epoch': 1.0}\n")
        report = api.diagnose(log)
        assert "setup-refused-by-program" not in [f.id for f in report.findings] and exit_code(report) == 0

    def test_control_the_raise_line_of_a_traceback_is_not_the_exception(self):
        assert "setup-refused-by-program" not in ids(TB + '    raise ValueError("Please set `MASTER_ADDR`")\n')

    def test_sibling_the_samples_single_process_trainer_with_two_gpus(self):
        # coqui-ai/TTS#2997: the trainer refuses two visible GPUs; its own words are the fix
        log = case("heldout6", "coquitts-2997-multiple-gpus-visible")
        assert head_id(log) == "setup-refused-by-program"
        f = finding(log, "setup-refused-by-program")
        assert f.severity is Severity.ERROR
        assert f.fix.startswith('do what the message says, then run the same command again: "Define the target GPU by `CUDA_VISIBLE_DEVICES`.')

    def test_sibling_the_samples_hydra_override_quotes_the_next_line(self):
        # facebookresearch/audiocraft#446: "To append to your config use +lr=0.01" is the line after the exception
        f = finding(case("heldout6", "audiocraft-446-dora-grid-override-lr"), "setup-refused-by-program")
        assert f is not None and '"To append to your config use +lr=0.01"' in f.fix and "+lr=VALUE" in f.fix

    def test_sibling_the_samples_mandatory_value_quoted_in_prose(self):
        # facebookresearch/audiocraft#477: the traceback is cut, the error is quoted above it
        f = finding(case("heldout6", "audiocraft-477-mbd-missing-channels"), "setup-refused-by-program")
        assert f is not None and "channels=VALUE" in f.fix

    def test_sibling_the_samples_placeholder_model_path(self):
        # salesforce/LAVIS#313: a local path that does not exist is read as a Hub repo id
        f = finding(case("heldout4", "lavis-313-instructblip-llm-path-placeholder"), "setup-refused-by-program")
        assert f is not None and "'./llm/vicuna-7b' is neither a folder on this machine nor a Hub repo id" in f.fix

    def test_sibling_a_state_dict_that_misses_keys_is_its_own_pattern(self):
        line = 'RuntimeError: Error(s) in loading state_dict for Model: Missing key(s) in state_dict: "fc.weight".\n'
        assert head_id(line) == "state-dict-mismatch"

    def test_sibling_a_setting_refused_in_a_combination_is_that_class(self):
        # meta-pytorch/torchtune#2415
        assert head_id("[rank1]: ValueError: ``minimize_all_reduces`` is not supported without FSDP\n") == "settings-combination-refused"


class TestValueTypeRefused:
    verdict = "value-type-refused"

    def test_control_a_choice_logged_as_not_valid_is_no_failure(self):
        assert "value-type-refused" not in ids("UserWarning: Input type (float) is not a valid choice; using float32\n")

    def test_control_a_logged_type_warning_is_no_failure(self):
        line = "[WARNING] TypeError: Expected `model` to be of type `ThunderModule`, but got Sequential; compiling it first\n"
        assert "value-type-refused" not in ids(line)

    def test_control_an_operand_type_error_is_not_this_class(self):
        log = library_traceback("transformers/trainer.py", "TypeError: unsupported operand type(s) for +: 'int' and 'str'")
        assert "value-type-refused" not in ids(log)

    def test_sibling_the_samples_half_input_into_a_float_model(self):
        # ultralytics/yolov5#475
        log = case("dev4", "yolov5-475-dp-half-float-input-type")
        assert head_id(log) == "value-type-refused"
        f = finding(log, "value-type-refused")
        assert "(torch.cuda.FloatTensor) instead of torch.cuda.HalfTensor" in f.fix and "torch.autocast" in f.fix

    def test_sibling_the_samples_graph_objects_in_torchs_collate(self):
        # pyg-team/pytorch_geometric#8475: PyG Data objects need PyG's DataLoader
        f = finding(case("heldout6", "pyg-8475-ddp-default-collate-data"), "value-type-refused")
        assert f is not None and f.severity is Severity.ERROR and "torch_geometric.loader.DataLoader" in f.fix
        assert "(tensors, numpy arrays, numbers, dicts or lists) instead of <class 'torch_geometric.data.data.Data'>" in f.fix

    def test_sibling_the_samples_executor_that_did_not_load(self):
        # Lightning-AI/lightning-thunder#2243: a broken nvFuser install left the executor None
        f = finding(case("heldout4", "thunder-2243-nvfuser-broken-executor-none"), "value-type-refused")
        assert f is not None and "did not load" in f.fix

    def test_sibling_the_users_own_call_names_its_line(self):
        text = TB + "    model = fsdp(model)\n[rank0]: TypeError: Expected `model` to be of type `thunder.core.module.ThunderModule`, but got Sequential\n"
        assert head_id(text) == "value-type-refused"
        assert "/home/u/train.py:88" in finding(text, "value-type-refused").fix

    def test_sibling_tensors_on_two_devices_have_their_own_pattern(self):
        line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!\n"
        assert head_id(line) == "ddp-device-mismatch"
