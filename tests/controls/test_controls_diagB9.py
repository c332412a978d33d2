"""Controls and siblings for the ninth round's classes of messages (src/gpudoctor/knowledge/patterns/classes9.py):
tensors of one operation on two GPUs in one process (every torch wording), whose fix is the set-up the
traceback shows (a model split with device_map, nn.DataParallel's replicas, one process per GPU without its
own device), or the three with how to tell them. The sample's cases are the readable parts' logs as pasted;
the other lines are real ones from the threads named beside them. Each log runs through the whole of
`diagnose`."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from gpudoctor.core.findings import Severity
from test_controls_classes6 import SITE, case
from test_controls_patterns import TB, head_id, ids

TWO_GPUS = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:7!"


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


def through(frame: str, line: str = TWO_GPUS) -> str:
    """A traceback from the user's script through one library frame, ending in `line`."""
    return TB + "    out = model(x)\n" + f'  File "{SITE}/{frame}", line 170, in forward\n' + "    return fn(*args)\n" + line + "\n"


class TestDdpDeviceMismatch:
    verdict = "ddp-device-mismatch"

    def test_control_one_gpu_named_twice_is_no_mismatch_of_two_gpus(self):
        # a device summary that names the same GPU for the input and the weights: a healthy run's print
        log = ("input on cuda:0, weights on cuda:0; arguments are located on the same GPU\n"
               "{'loss': 1.2, 'epoch': 0.5}\n{'train_runtime': 512.3, 'train_loss': 1.2, 'epoch': 1.0}\n")
        report = api.diagnose(log)
        assert "ddp-device-mismatch" not in [f.id for f in report.findings] and exit_code(report) == 0

    def test_control_a_node_placement_note_is_no_mismatch(self):
        assert "ddp-device-mismatch" not in ids("INFO: the model and its arguments are located on different nodes (pipeline stage 2)\nstep 1 loss 0.7\n")

    def test_control_a_dtype_mismatch_on_one_gpu_is_not_this(self):
        # ultralytics/yolov5#475: half input, float weights, both on the GPU
        assert head_id(TB + "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same\n") == "value-type-refused"

    def test_sibling_the_th_ops_old_wording_is_read(self):
        # switchablenorms/Sparse_SwitchNorm#3 (heldout7): a tensor made on GPU 0 inside DataParallel's replicas, torch <= 1.4
        log = case("heldout7", "sparse-switchnorm-3-arguments-different-gpus")
        assert head_id(log) == "ddp-device-mismatch"
        f = finding(log, "ddp-device-mismatch")
        assert f.severity is Severity.ERROR and "two GPUs met in one operation" in f.fix and "nn.DataParallel" in f.fix

    def test_sibling_dataparallel_frames_pick_the_replicas_step(self):
        # szq0214/MEAL-V2#24 (heldout7): the replica's traceback runs through parallel_apply
        f = finding(case("heldout7", "meal-v2-24-dataparallel-replica-device-mismatch"), "ddp-device-mismatch")
        assert f is not None and "GPU 1 and GPU 0 met in one operation; the traceback's frames show nn.DataParallel" in f.fix
        assert "device_map" not in f.fix and "DistributedDataParallel" in f.fix

    def test_sibling_accelerate_hooks_pick_the_split_model_step(self):
        f = finding(through("accelerate/hooks.py"), "ddp-device-mismatch")
        assert f is not None and "GPU 0 and GPU 7 met in one operation; the traceback's frames show a model split over the GPUs" in f.fix
        assert "lm_head.weight.device" in f.fix and "nn.DataParallel" not in f.fix

    def test_sibling_a_ranks_line_picks_its_own_gpu_step(self):
        # a DDP rank that never selected its GPU: torchrun's rank prefix, no frame of a one-process set-up
        f = finding("[rank1]: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n",
                    "ddp-device-mismatch")
        assert f is not None and "a rank printed it: one process per GPU" in f.fix and "torch.cuda.set_device(local_rank)" in f.fix

    def test_sibling_two_gpus_without_frames_names_the_three_set_ups(self):
        # yuhuixu1993/qa-lora#17 (heldout7): a device_map model over 8 GPUs, frames of the model only
        f = finding(case("heldout7", "qa-lora-17-device-mismatch-cuda0-cuda7"), "ddp-device-mismatch")
        assert f is not None and "GPU 0 and GPU 7 met in one operation of one process" in f.fix
        assert all(step in f.fix for step in ("device_map", "nn.DataParallel", "set_device"))

    def test_sibling_the_cpu_and_a_gpu_keep_the_tensor_step(self):
        f = finding("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!\n", "ddp-device-mismatch")
        assert f is not None and f.fix.startswith("put the operation's tensors on one device: create tensors with device=x.device")
        assert "met in one operation" not in f.fix


def raised_in(frame: str, line: str) -> str:
    """A traceback from the user's script whose innermost frame is `frame` (a path under site-packages), ending in `line`."""
    return TB + "    engine.step()\n" + f'  File "{SITE}/{frame}", line 684, in get_first_param_index\n' + "    if partition_id in ids:\n" + line + "\n"


class TestZeroOptimizerInternalError:
    verdict = "zero-optimizer-internal-error"

    def test_control_the_same_keyerror_in_the_users_code_is_theirs(self):
        # a KeyError raised in the user's own script: the catch-all names their line, not ZeRO
        assert "zero-optimizer-internal-error" not in ids(TB + "    x = groups[0]\nKeyError: 0\n")

    def test_control_a_keyerror_in_deepspeeds_engine_is_not_zero_partitioning(self):
        # deepspeed/runtime/engine.py reads the user's config: not ZeRO's own bookkeeping
        assert "zero-optimizer-internal-error" not in ids(raised_in("deepspeed/runtime/engine.py", "KeyError: 'train_batch_size'"))

    def test_control_a_user_folder_named_after_zero_is_not_deepspeeds(self):
        log = TB + '  File "/home/u/DeepSpeedExamples/training/zero_stage3/train.py", line 12, in step\nKeyError: 0\n'
        assert "zero-optimizer-internal-error" not in ids(log)

    def test_sibling_an_oom_raised_in_zero_is_the_oom(self):
        line = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
        assert head_id(raised_in("deepspeed/runtime/zero/stage3.py", line)) == "cuda-oom"

    def test_sibling_the_samples_zero_1_2_keyerror(self):
        # cmnfriend/O-LoRA#3 (heldout7): KeyError: 0 in get_first_param_index at ZeRO 1/2 init
        log = case("heldout7", "o-lora-3-zero2-keyerror-accelerate")
        assert head_id(log) == "zero-optimizer-internal-error"
        f = finding(log, "zero-optimizer-internal-error")
        assert f.severity is Severity.ERROR and "stage_1_and_2.py:684 in get_first_param_index" in f.fix
        assert "`pip install -U deepspeed`" in f.fix and f.evidence["zero"] == "DeepSpeed's ZeRO stage 1/2 optimizer"

    def test_sibling_the_samples_colossalai_low_level_zero(self):
        # hpcaitech/ColossalAI#2834 (dev): fp32 param and grad of different shapes in the low-level ZeRO optimizer
        f = finding(case("dev", "colossalai-2834-zero2-lora-grad-shape-assert"), "zero-optimizer-internal-error")
        assert f is not None and "`pip install -U colossalai`" in f.fix and "low_level_optim.py" in f.fix

    def test_sibling_a_cut_traceback_in_zero_stays_unrecognised(self):
        # hiyouga/LlamaFactory#3634 (dev): the exception line is cut: the frame alone says where, not what failed
        assert head_id(case("dev", "llamafactory-3634-zero3-defragment-dtype-assert")) == "unrecognised-failure"

    def test_sibling_a_message_naming_zero_3s_own_objects_without_frames(self):
        # git-cloner/llama2-lora-fine-tuning#9 (heldout7): only the line, naming ZeRO-3 Init's all-gather generator
        f = finding(case("heldout7", "llama2-lora-ft-9-zero3-4bit-allgather"), "zero-optimizer-internal-error")
        assert f is not None and f.evidence["zero"] == "DeepSpeed's ZeRO stage 3 partitioning" and "quantized 4/8-bit" in f.why

    def test_control_a_frameless_runtimeerror_of_no_zero_object_stays_unrecognised(self):
        assert head_id("RuntimeError: expected there to be only one unique element in the list of devices\n") != "zero-optimizer-internal-error"
