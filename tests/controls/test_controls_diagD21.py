"""Controls and siblings for diagD21 (issue 35: classes of general Python and torch errors that say what the user must do,
knowledge/patterns/classes21d.py): a path the program creates that is already there (`path-already-exists`), a write
to storage that did not reach its end (`storage-write-failed`), a device string the program cannot read
(`device-string-refused`), and a data set or checkpoint not there in the form the program reads
(`data-or-checkpoint-missing`). `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*`
the nearest one that gets its own. Lines are real ones (their logs named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head

from gpudoctor import api
from gpudoctor.core.findings import Severity


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def no_error(text: str) -> bool:
    return not any(f.severity is Severity.ERROR for f in api.diagnose(text).findings)


MAKEDIRS = ('  File "/cluster/home/u/GPTime/model/train.py", line 362, in train\n'
            "    os.makedirs(os.path.join(train_cfg.model_save_path, train_cfg.name))\n"
            '  File "/usr/lib/python3.8/os.py", line 223, in makedirs\n    mkdir(name, mode)\n')


class TestPathAlreadyExists:
    def test_sibling_makedirs_of_a_run_folder_left_by_an_earlier_run(self):
        # erikdengerud/GPTime-Series job.out (heldout20w): the model folder of a reused run name
        found = head(TB + MAKEDIRS + "FileExistsError: [Errno 17] File exists: 'GPTime/models/test_name'\n")
        assert found is not None and found.id == "path-already-exists" and "'GPTime/models/test_name'" in found.title
        assert "exist_ok=True" in found.fix and "barrier()" in found.fix

    def test_sibling_ranks_renaming_onto_the_same_checkpoint_folder(self):
        found = head(TB + "OSError: [Errno 39] Directory not empty: 'out/tmp-checkpoint-500' -> 'out/checkpoint-500'\n")
        assert found is not None and found.id == "path-already-exists" and "save_on_each_node=False" in found.fix

    def test_sibling_streaming_shared_memory_keeps_its_own(self):
        # mosaicml/streaming#884 (dev4): Streaming's shared-memory name, not a folder
        assert "path-already-exists" not in ids(TB + "FileExistsError: [Errno 17] File exists: '/000002_locals'\n")

    def test_sibling_a_path_that_is_not_there_is_path_not_found(self):
        found = head(TB + "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/models/checkpoint_13.pt'\n")
        assert found is not None and found.id == "path-not-found"

    @pytest.mark.parametrize("line", [
        # docling#2552 (heldout14): RapidOCR's note that a model it downloads is already there
        "[INFO] 2025-10-31 14:05:03,522 [RapidOCR] download_file.py:60: File exists and is valid: /bask/projects/u/venv_pdf/ch_PP-OCRv4_det_infer.pth",
        "mkdir: cannot create directory 'output': File exists",
        "    os.makedirs(save_dir, exist_ok=True)",
    ])
    def test_control_a_note_that_a_path_exists(self, line):
        assert "path-already-exists" not in ids(line + "\n") and no_error(line + "\n")


class TestStorageWriteFailed:
    WRITE = ('  File "/home/u/venv/lib/python3.12/site-packages/torch/serialization.py", line 1266, in _save\n'
             "    zip_file.write_record(name, storage, num_bytes)\n"
             "RuntimeError: [enforce fail at inline_container.cc:857] . PytorchStreamWriter failed writing file data/122: file write failed\n")

    def test_sibling_torch_save_cut_short(self):
        # AkshayaG27/NICE nohup.out (heldout17w): torch.save of a checkpoint after 175 epochs
        found = head(TB + self.WRITE)
        assert found is not None and found.id == "storage-write-failed" and "data/122" in found.title
        assert "df -h" in found.fix and "last complete checkpoint" in found.fix

    def test_sibling_the_close_of_a_cut_short_file_alone(self):
        # the second error of AkshayaG27/NICE's save, the one a paste keeps when the first is cut
        found = head(TB + "RuntimeError: [enforce fail at inline_container.cc:659] . unexpected pos 153300032 vs 153299924\n")
        assert found is not None and found.id == "storage-write-failed" and "ended short" in found.title

    def test_sibling_a_quota_is_named(self):
        found = head(TB + "OSError: [Errno 122] Disk quota exceeded\n")
        assert found is not None and found.id == "storage-write-failed" and "quota -s" in found.fix

    def test_sibling_no_space_left_stays_disk_full(self):
        # the message names the cause itself (dev: ray-9752, dev7w: Fsoft-AIC/RoPADet)
        found = head(TB + "OSError: [Errno 28] No space left on device\n")
        assert found is not None and found.id == "disk-full"

    @pytest.mark.parametrize("line", [
        "Disk quota: 512 GB used of 1 TB",
        "WARNING: PytorchStreamWriter failed writing file data/0: file write failed, retrying",
    ])
    def test_control_a_quota_report_or_a_retried_write(self, line):
        assert "storage-write-failed" not in ids(line + "\n")


class TestDeviceStringRefused:
    def test_sibling_a_list_of_gpus_where_one_goes(self):
        # AUTOMATIC1111/stable-diffusion-webui#11330 (heldout20): --device-id=0,1
        found = head("error：RuntimeError: Invalid device string: 'cuda:0,1'\n")
        assert found is not None and found.id == "device-string-refused" and "'cuda:0,1'" in found.title
        assert "one process per GPU" in found.fix

    def test_sibling_ctranslate2_takes_the_index_apart(self):
        # SYSTRAN/faster-whisper#4 (heldout18)
        found = head("`ValueError: unsupported device cuda:1`\n")
        assert found is not None and found.id == "device-string-refused" and "device_index=1" in found.fix

    def test_sibling_a_type_torch_does_not_know(self):
        line = ("RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, xla, lazy, "
                "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: gpu\n")
        found = head(TB + line)
        assert found is not None and found.id == "device-string-refused" and "never 'gpu'" in found.fix

    def test_sibling_a_type_without_the_index_the_call_needs(self):
        found = head(TB + "ValueError: Expected a torch.device with a specified index or an integer, but got:cuda\n")
        assert found is not None and found.id == "device-string-refused" and "LOCAL_RANK" in found.fix

    def test_sibling_mxnet_given_a_list_of_contexts(self):
        # apache/mxnet#9344 (heldout16, added after the transfer measurement)
        line = "mxnet.base.MXNetError: [13:50:42] include/mxnet/./base.h:341: Invalid context string [gpu(0), gpu(1), gpu(2),gpu(3)]**\n"
        found = head(TB + line)
        assert found is not None and found.id == "device-string-refused" and "mx.gpu(0)" in found.fix

    def test_sibling_an_index_past_the_gpus_is_the_ordinal(self):
        found = head(TB + "RuntimeError: CUDA error: invalid device ordinal\n")
        assert found is not None and found.id == "cuda-invalid-device-ordinal"

    @pytest.mark.parametrize("line", [
        # ultralytics#3838 (dev3): a config dump that prints a list of GPUs
        "engine\\trainer: task=detect, mode=train, model=yolov8l.pt, data=data/thirdSet.yaml, epochs=100, batch=16, device=[0, 1, 2, 3], workers=8",
        # ChinmayBansal010/Falcon-Yolo train.log (heldout18w)
        "2025-08-02 12:16:33,409 - INFO - Hyperparameters: Namespace(data='yolo_params.yaml', epochs=200, batch=4, imgsz=960, device='cuda', single_cls=False)",
    ])
    def test_control_a_config_dump_that_prints_devices(self, line):
        assert "device-string-refused" not in ids(line + "\n") and no_error(line + "\n")


class TestDataOrCheckpointMissing:
    def test_sibling_resume_with_no_checkpoint(self):
        # YuanWind/transformers_wind pretrain.log (heldout20w): trainer.train(True) on a first run
        text = (TB + '    raise ValueError(f"No valid checkpoint found in output directory ({args.output_dir})")\n'
                "ValueError: No valid checkpoint found in output directory (data_transformers_wind/outputs)\n")
        found = head(text)
        assert found is not None and found.id == "data-or-checkpoint-missing" and "data_transformers_wind/outputs" in found.title
        assert "start without resuming" in found.fix

    def test_sibling_a_streaming_dataset_quotes_the_messages_remedy(self):
        # varshetshrikar/Shikra-MLLM-Referential-Dialogue-Magic finetune.log (heldout20w)
        line = ("ValueError: The train_dataset does not implement __len__, max_steps has to be specified. The number of steps needs "
                "to be known in advance for the learning rate scheduler.\n")
        found = head(TB + line)
        assert found is not None and found.id == "data-or-checkpoint-missing"
        assert found.fix.startswith("the message says: max_steps has to be specified")

    def test_sibling_the_trainers_later_wording_keeps_its_remedy_first(self):
        found = head(TB + "ValueError: args.max_steps must be set to a positive value if dataloader does not have a length, was -1\n")
        assert found is not None and found.id == "data-or-checkpoint-missing"
        assert found.fix.startswith("the message says: args.max_steps must be set to a positive value")

    def test_sibling_a_dataset_name_not_found(self):
        # HEISENYAN/openvla-oft slurm.out (heldout18w)
        found = head(TB + "tensorflow_datasets.core.registered.DatasetNotFoundError: Dataset aloha_game not found.\n")
        assert found is not None and found.id == "data-or-checkpoint-missing" and "aloha_game" in found.title

    def test_sibling_a_message_a_paste_cut_mid_word(self):
        # hiyouga/LLaMA-Factory#8323 (dev): the exception's line ends mid-word
        found = head(TB + "[rank0]: RuntimeError: Cannot find valid sampl\n")
        assert found is not None and found.id == "data-or-checkpoint-missing" and "dataset_info.json" in found.fix

    def test_sibling_a_dataset_that_loaded_empty_is_its_own(self):
        # IkeaASM/IKEA_ASM_Dataset#12: the program's own count of 0 items
        assert "dataset-reported-empty" in ids("Number of clips in the dataset:0\n")

    @pytest.mark.parametrize("line", [
        # adityaashvin/scalingdown training.log (heldout18w), a run that did not fail
        "2024-11-03 10:46:56,227 - INFO - No checkpoint found. Starting from scratch.",
        # fvcore in buaazhanghaonan/mgm_mask2former (dev8w), a run that did not fail
        "[08/30 23:00:26] fvcore.common.checkpoint INFO: No checkpoint found. Initializing model from scratch",
        # Alooi/FSSBGM stdout (dev7w), a run that did not fail
        "WARNING - utils.py - 2022-04-08 20:54:47,469 - No checkpoint found at ./checkpoints-meta/checkpoint.pth. Returned the same state as input",
    ])
    def test_control_a_run_that_found_no_checkpoint_and_started_fresh(self, line):
        assert "data-or-checkpoint-missing" not in ids(line + "\n") and no_error(line + "\n")


class TestPathNotFound:
    def test_sibling_a_programs_own_status_names_the_file(self):
        # Gerardiebla/xtts-finetuner finetune.log (heldout20w): step 3 needs what an earlier step writes
        line = ("[FAIL] Metadata file not found: C:\\Users\\gack8\\TTS cloning\\training_data\\processed_audio\\"
                "nicholas_only_metadata.json\n")
        found = head(line)
        assert found is not None and found.id == "path-not-found"
        assert found.evidence["path"].endswith("nicholas_only_metadata.json")

    @pytest.mark.parametrize("line", [
        # buaazhanghaonan/mgm_mask2former (dev8w), a run that did not fail
        "[08/30 23:00:26] mask2former.data.dataset_mappers.coco_instance_rgbd_dataset_mapper INFO: [Mapper] Noise-mask dir not "
        "found, will skip masks: /home/fuyx/zhn/mask2former/depth_noise_mask",
        "ERROR: Config file not found: configs/a.yaml, using the defaults",
    ])
    def test_control_a_program_that_goes_on_without_it(self, line):
        assert "path-not-found" not in ids(line + "\n") and no_error(line + "\n")


class TestGpusFewerThanAsked:
    def test_sibling_vllms_driver_on_a_ray_node_without_a_gpu(self):
        # vllm-project/vllm#2406 (heldout20): the ValueError quoted alone in the thread
        line = ("`Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or running the "
                "driver on a GPU node.`\n")
        found = head(line)
        assert found is not None and found.id == "gpus-fewer-than-asked" and "driver runs on a Ray node given no GPU" in found.title
        assert "ray status" in found.fix

    def test_control_ray_waiting_for_its_placement_group(self):
        # a development log's vLLM line while Ray places the bundles (a wait, not a refusal)
        line = ("INFO 03-18 11:21:42 ray_utils.py:214] Waiting for creating a placement group of specs for 10 seconds. "
                "specs=[{'node:192.168.1.216': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` to see if you have enough resources,\n")
        assert "gpus-fewer-than-asked" not in ids(line)


class TestSettingsCombinationRefused:
    def test_sibling_a_setting_said_to_need_another(self):
        # deepspeedai/DeepSpeed#4526 (heldout20): trainer.predict with a ZeRO stage 2 config
        line = 'ValueError: "ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config".\n'
        found = head(TB + line)
        assert found is not None and found.id == "settings-combination-refused"
        assert found.fix.startswith("the message says: ZeRO inference only makes sense with ZeRO Stage 3")

    def test_control_a_warning_that_goes_on_without_it(self):
        line = "UserWarning: torch.compile only works with PyTorch 2.0 or later; running eagerly\n"
        assert "settings-combination-refused" not in ids(line) and no_error(line)
