"""Controls and siblings for relayed errors read through their relay (issue 35 item 4, knowledge/relays.py): a wrapper
that re-raises or reports another process's error (a DataLoader worker, a DataParallel replica, a Ray task, mp.spawn's
process, a test's child, a process pool's worker, a helper that makes the child's traceback its message). The original
printed whole is read as any traceback: a pattern that knows it heads the answer. The original cut before its
exception line is the answer, named through its relay, with where to read it whole. The sample's cases are the
readable parts' logs as pasted; the other lines are real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.knowledge.relays import relay_in
from test_controls_classes6 import SITE, case
from test_controls_patterns import head_id


def head(text: str):
    return api.diagnose(text).findings[0]


class TestUnrecognisedFailure:
    verdict = "unrecognised-failure"

    def test_control_a_replicas_known_original_heads(self):
        # Megvii-BaseDetection/YOLOX#286: the replica's original is whole, a device mismatch
        assert head_id(case("heldout6", "yolox-286-dataparallel-device-mismatch")) == "ddp-device-mismatch"

    def test_control_a_dataloader_workers_known_original_heads(self):
        # pyg-team/pytorch_geometric#5340: the worker's original is CUDA initialised before the fork
        assert head_id(case("heldout6", "pyg-5340-neighborloader-worker-cuda-init")) == "cuda-fork-reinit"

    def test_control_a_spawned_process_known_original_heads(self):
        log = (f'Traceback (most recent call last):\n  File "main.py", line 80, in <module>\n'
               "    mp.spawn(train, args=(world_size,), nprocs=world_size, join=True)\n"
               f'  File "{SITE}/torch/multiprocessing/spawn.py", line 158, in join\n'
               "    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n"
               "torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
               "-- Process 1 terminated with the following error:\nTraceback (most recent call last):\n"
               f'  File "{SITE}/torch/multiprocessing/spawn.py", line 69, in _wrap\n    fn(i, *args)\n'
               f'  File "{SITE}/torch/cuda/__init__.py", line 350, in set_device\n    torch._C._cuda_setDevice(device)\n'
               "RuntimeError: CUDA error: invalid device ordinal\n")
        assert head_id(log) == "cuda-invalid-device-ordinal"

    def test_control_a_loggers_error_level_before_a_header_is_no_relay(self):
        # octimot/StoryToolkitAI#23: "ERROR: Traceback (most recent call last):" is a logger's level, not an exception's class
        assert relay_in("ERROR: Traceback (most recent call last):", 1) is None
        assert relay_in("Traceback (most recent call last):", 1) is None

    def test_sibling_a_replicas_cut_original_is_named_not_original(self):
        # AlvinYH/Faster-VoxelPose#24: "Original Traceback" named no class "Original"; the relay names RuntimeError and replica 1
        f = head(case("heldout9", "faster-voxelpose-24-replica-1-runtimeerror"))
        assert f.id == "unrecognised-failure" and "RuntimeError in DataParallel's replica 1 (GPU 1) (its traceback is cut" in f.title
        assert "Original (" not in f.title and "CUDA_VISIBLE_DEVICES=0" in f.fix

    def test_sibling_a_relay_whose_original_is_absent_says_so(self):
        # ultralytics/yolov5#115: the paste ends at the replica's relay ("Original Traceback (mos"): no original to read
        f = head(case("dev4", "yolov5-115-dataparallel-replica-1-test"))
        assert "RuntimeError in DataParallel's replica 1 (GPU 1) (relayed; the original's traceback is not in this log)" in f.title
        assert "paste the lines that follow line 19" in f.fix and "called from your code" not in f.fix

    def test_sibling_a_relays_line_alone_says_the_original_is_missing(self):
        # jia-zhuang/pytorch-multi-gpu-training#8: only the relay's line was pasted
        f = head(case("heldout7", "pytorch-multi-gpu-training-8-caught-in-replica-0"))
        assert f.id == "unrecognised-failure" and "is not in this log: paste the lines that follow the relay's line" in f.fix
        assert "torchrun --tee" not in f.fix  # one process's DataParallel replica: no rank's output to keep

    def test_sibling_a_titles_relay_is_read_through_its_body(self):
        # NielsRogge/Transformers-Tutorials#125: the title quotes the relay; the body prints it with the original, cut
        f = head(case("heldout14", "transformers-tutorials-125-layoutlmv2-replica-1"))
        assert "RuntimeError in DataParallel's replica 1 (GPU 1) (its traceback is cut" in f.title

    def test_sibling_a_ray_tasks_cut_original_names_its_log(self):
        # ray-project/ray#32990: two relays; the inner one's task and pid say where its whole traceback is
        f = head(case("dev", "ray-32990-getstarted-gpu-raytaskerror"))
        assert "RuntimeError in the Ray task or actor RayTrainWorker._RayTrainWorker__execute (pid 2475)" in f.title
        assert "ray logs worker --pid 2475" in f.fix

    def test_sibling_a_childs_traceback_as_the_message_names_its_class(self):
        # cw1204772/AIC2018_iamai#1: an old DataLoader's "IndexError: Traceback (most recent call last):", its child's cut
        f = head(case("heldout16", "aic2018-iamai-1-veri-reid-dataloader-indexerror"))
        assert "IndexError in a worker or child process (its traceback is cut" in f.title and "which line 21 relays" in f.fix

    def test_sibling_a_pools_cut_original_names_the_pool(self):
        # ivadomed/seg-sc-ms-lesion-multicontrast#27 (nnU-Net): multiprocessing.pool.RemoteTraceback, the worker's traceback cut
        f = head(case("heldout10", "seg-sc-ms-lesion-27-nnunet-training"))
        assert "an exception in a process pool's worker (its traceback is cut" in f.title and "triple quotes" in f.fix

    def test_sibling_a_spawned_process_cut_original_names_the_process(self):
        # LeeDoYup/FixMatch-pytorch#2: mp.spawn's process 0, its traceback cut
        f = head(case("heldout7", "fixmatch-2-mp-spawn-ddp-init-nccl"))
        assert "an exception in the process mp.spawn started as number 0" in f.title and "fn(0, *args)" in f.fix


class TestRayWorkerDied:
    verdict = "ray-worker-died"

    def test_control_an_actor_whose_constructor_raised_is_its_error(self):
        # an ActorDiedError "because of an error raised in its creation task" relays the constructor's error (OpenRLHF/OpenRLHF#679's
        # actor line); the original under it, a model folder without config.json (a real transformers message), is the failure
        log = ("ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__() "
               "(pid=427151, ip=10.181.130.26, actor_id=739ab55c49a4e484b354eb9d02000000)\n"
               '  File "/cpfs01/shared/public/binchen/Developer/OpenRLHF/openrlhf/trainer/ray/vllm_engine.py", line 54, in __init__\n'
               "    self.llm = vllm.LLM(*args, **kwargs)\n"
               f'  File "{SITE}/transformers/configuration_utils.py", line 722, in _get_config_dict\n'
               "    raise EnvironmentError(\n"
               "OSError: /models/llama does not appear to have a file named config.json. Checkout "
               "'https://huggingface.co//models/llama/None' for available files.\n")
        assert head_id(log) == "setup-refused-by-program"

    def test_sibling_an_actor_whose_constructor_raised_cut_names_the_actor(self):
        # OpenRLHF/OpenRLHF#679: the constructor's traceback is cut: the answer is that error, named through the relay
        f = head(case("dev", "openrlhf-679-llmrayactor-creation-task-died"))
        assert f.id == "unrecognised-failure" and "the Ray task or actor LLMRayActor.__init__ (pid 427151)" in f.title
        assert "ray logs worker --pid 427151" in f.fix
