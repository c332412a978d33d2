"""Controls and siblings for diagB16 (issue 35: the retired heldout15's lines that decide a cause, and pastes as people paste
them): Markdown emphasis, list bullets, table pipes, a viewer's line numbers, HTML tags and <br> breaks peeled from a pasted
line (knowledge/lines.py) with the lines whose stars and underscores are their own left as they are; the classes in
knowledge/patterns/classes16b.py (gloo refusing NCCL's argument or its device, a container tool's GPU option not taken,
Python 2 code under Python 3, a component no registry has) and the rules they widen (torch's lower-case "invalid device id",
a program's "No image valid"). `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the
nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api
from gpudoctor.commands.diagnose.reader import has_gutter
from gpudoctor.knowledge.lines import segments, strip


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


HEALTHY = "epoch 1 step 100 loss 0.532\nepoch 1 step 200 loss 0.511\nTraining finished.\n"
MSG = "RuntimeError: CUDA error: invalid device ordinal"


class TestPastedMarkup:
    @pytest.mark.parametrize("raw", [
        f"_{MSG}_", f"*{MSG}*", f"**{MSG}**", f"__{MSG}__", f"***{MSG}***", f"_{MSG}._",  # emphasis, closed after the full stop
        f"> _{MSG}_", f"> > *{MSG}*", f"[rank0]: _{MSG}_",  # quoted (nested), behind a launcher's prefix
        f"- {MSG}", f"* {MSG}", f"1. {MSG}", f"- *{MSG}*",  # a list's bullet
        f"| {MSG} |", f"  12 | {MSG}", f"12\t{MSG}",  # a one-cell table row, a viewer's line-number gutter
        f"<em>{MSG}</em>", f"<li><code>{MSG}</code></li>", f"<tt>{MSG}</tt><br>", f"&gt; _{MSG}_",  # HTML
        f"- `{MSG}`", f"> - **{MSG}**", f"<blockquote>{MSG}</blockquote>",
        f"{MSG}\r\n", f" 10%|#  | 1/10 [00:01<00:09]\r{MSG}\r",  # CRLF, a progress bar's carriage returns
    ])
    def test_sibling_the_message_under_the_markup_is_read(self, raw):
        assert [s.text for s in segments(raw)][-1].rstrip(".") == MSG

    @pytest.mark.parametrize("raw", [
        "**kwargs", "def forward(self, *args, **kwargs):", "__init__", "x = a * b", "ls data/*.jpg",
        "AttributeError: 'Foo' object has no attribute __len__", "_C._cuda_init()", "__main__.py: error: unrecognized arguments",
        "- torch 2.0.1", "9 0x000000000011f133 clone()  ???:0", "TypeError: forward() got an unexpected keyword argument 'x_'",
        "ValueError: Unexpected key(s) in state_dict: model.*", "FileNotFoundError: no files match data/*",
    ])
    def test_control_stars_and_underscores_of_the_text_itself_are_kept(self, raw):
        assert strip(raw).text == raw

    def test_control_a_srun_label_is_a_rank_not_a_line_number(self):
        line = strip(f"3: {MSG}")
        assert line.text == MSG and line.rank == 3

    def test_sibling_an_italic_error_in_an_issue_is_the_failure(self):
        # meituan/YOLOv6#361: the paste wrote its error in italics; before, no failure line was read
        log = ("I had problems when training on multiple GPU.\n"
               "_RuntimeError: Function argument device_ids not supported for the selected backend gloo_\n"
               "Can anyone give me advice on how to solve this problem?\n")
        assert head_id(log) == "gloo-backend-refused"

    def test_sibling_an_italic_message_that_states_its_remedy_is_quoted_as_the_fix(self):
        # open-mmlab/mmtracking#138: the paste's italics and its run of spaces; the remedy quoted, one space
        log = ("it gives me:\n_NotImplementedError: Please train `detector` and `reid` models first and"
               "                 inference with Tracktor._\n")
        found = head(log)
        assert found is not None and "Please train `detector` and `reid` models first and inference with Tracktor" in found.fix

    def test_sibling_a_log_joined_by_br_tags_is_read_line_by_line(self):
        log = "<br>".join([TB.rstrip("\n").split("\n")[0], TB.rstrip("\n").split("\n")[1], "    lr = cfg['learning_rate']",
                           "KeyError: 'learning_rate'"])
        found = head(log + "\n")  # the traceback read whole: its frame names where it was raised, on the 4th line
        assert found is not None and "train.py:88" in found.title and found.evidence.get("first_line") == 4


class TestViewerGutter:
    LOG = ["Traceback (most recent call last):", '  File "/home/u/train.py", line 88, in <module>', "    lr = cfg['learning_rate']",
           "KeyError: 'learning_rate'"]

    def test_sibling_a_whole_paste_numbered_by_a_viewer_is_read_without_its_numbers(self):
        numbered = "\n".join(f"{i + 1:>3} | {line}" for i, line in enumerate(self.LOG)) + "\n"
        assert has_gutter(numbered.encode()) and head_id(numbered) == head_id("\n".join(self.LOG) + "\n") != "-"

    def test_control_numbered_rows_among_a_logs_lines_are_no_gutter(self):
        # a Lightning model summary's rows (dice-group/dice-embeddings#120) and srun's labels, in a log of other lines
        log = ("  | Name     | Type    | Params\n0 | input_dp | Dropout | 0\n1 | loss     | BCELoss | 0\n"
               "0: epoch 1 step 100 loss 0.532\n0: epoch 1 step 200 loss 0.511\nTraining finished.\n")
        assert not has_gutter(log.encode())


class TestGlooBackendRefused:
    verdict = "gloo-backend-refused"

    @pytest.mark.parametrize("line,step", [
        # huawei-noah/Efficient-Computing#90, meituan/YOLOv6#361: dist.barrier(device_ids=...) on Windows' gloo
        ("RuntimeError: Function argument device_ids not supported for the selected backend gloo", "init_process_group('nccl')"),
        # IAHispano/Applio#1019 (Windows, torch 2.8); IAHispano/Applio#79
        ("RuntimeError: makeDeviceForHostname(): unsupported gloo device", "GLOO_SOCKET_IFNAME"),
        ("RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty", "WSL2"),
    ])
    def test_sibling_each_wording_and_its_remedy(self, line, step):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_sibling_the_users_words_for_it_before_a_cut_traceback(self):
        # Nerogar/OneTrainer#1122: the traceback is cut inside init_process_group; the report names the error
        log = ("Since recent updates, activating multi GPU on Windows generates an error (unsupported gloo device) and training is stopped.\n"
               + TB + "    torch.distributed.init_process_group(rank=rank, world_size=world_size, device_id=device, timeout=timeout,\n")
        found = head(log)
        assert found is not None and found.id == self.verdict and "device_id" in found.fix

    def test_sibling_gloo_without_the_interface_keeps_its_own(self):
        # Megvii-BaseDetection/YOLOX#139
        line = "RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: ib0"
        assert head_id(TB + line + "\n") == "gloo-no-address"

    def test_control_a_healthy_gloo_run_that_calls_barrier(self):
        log = "    dist.barrier(device_ids=[local_rank])  # device_ids not supported for the selected backend gloo\n" + HEALTHY
        assert self.verdict not in ids(log)


class TestContainerGpuOptionUnknown:
    verdict = "container-gpu-option-unknown"

    @pytest.mark.parametrize("line,step", [
        ("unknown flag: --gpus", "19.03"),  # sarnikowski/bert_in_a_flask#5
        ("/.singularity.d/actions/exec: 9: exec: --nv: not found", "before the image"),  # jade-hpc-gpu/jade-hpc-gpu.github.io#82
    ])
    def test_sibling_each_tool(self, line, step):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix

    def test_sibling_a_daemon_without_the_runtime_keeps_its_own(self):
        line = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'
        assert head_id(line + "\n") == "docker-gpu-runtime-missing"

    @pytest.mark.parametrize("log", [
        "singularity exec --nv image.sif python train.py\n" + HEALTHY,
        "error: unknown flag: --gpu-memory-utilization\n",  # a program's own option, not docker's
    ])
    def test_control_the_options_used_or_another_programs_flag(self, log):
        assert self.verdict not in ids(log)


class TestPython2CodeUnderPython3:
    verdict = "python2-code-under-python3"

    @pytest.mark.parametrize("line,named", [
        # google-research/google-research#61: TensorFlow's Coordinator reports it
        ("INFO:tensorflow:Error reported to Coordinator: <class 'AttributeError'>, 'dict' object has no attribute 'iteritems'", "d.items()"),
        ("AttributeError: 'dict' object has no attribute 'has_key'", "key in d"),
        ("NameError: name 'xrange' is not defined", "range()"),
        ("ModuleNotFoundError: No module named 'cPickle'", "import pickle"),
        ("SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?", "print(...) as a function"),
        ("TypeError: 'dict_keys' object is not subscriptable", "list(d.keys())"),
    ])
    def test_sibling_each_python2_name_and_its_python3_one(self, line, named):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and named in found.fix and "2to3" in found.fix

    def test_sibling_a_configurations_missing_key_keeps_its_own(self):
        assert head_id(TB + "AttributeError: 'EasyDict' object has no attribute 'lr'\n") == "config-key-missing"

    @pytest.mark.parametrize("line", ["TypeError: 'NoneType' object is not subscriptable", "NameError: name 'torch' is not defined"])
    def test_sibling_python3_failures_alike_are_not_this(self, line):
        assert head_id(TB + line + "\n") != self.verdict

    def test_control_a_healthy_log_that_quotes_python2_code(self):
        assert self.verdict not in ids("    for k, v in d.iteritems():  # has no attribute 'iteritems' under python 3\n" + HEALTHY)


class TestComponentNotInRegistry:
    verdict = "component-not-in-registry"

    @pytest.mark.parametrize("line,step", [
        ("KeyError: 'None is not in the detector registry'", "prints None whatever"),  # microsoft/RepPoints#40
        ("KeyError: 'RepPointsDetector is not in the models registry'", "'RepPointsDetector' is not registered"),
        ("KeyError: \"No object named 'build_resnet_fpn_backbone_custom' found in 'BACKBONE' registry!\"", "BACKBONE registry"),
    ])
    def test_sibling_the_type_and_the_registry_are_named(self, line, step):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix

    def test_sibling_a_plain_missing_key_is_not_this(self):
        assert head_id(TB + "KeyError: 'lr'\n") != self.verdict

    def test_control_a_registry_that_was_imported(self):
        line = "01/15 18:29:50 - OpenCompass - DEBUG - Modules of opencompass's partitioner registry have been automatically imported"
        assert self.verdict not in ids(line + "\n" + HEALTHY)


class TestWidened:
    def test_sibling_torchs_lower_case_invalid_device_id_names_gpu_ids(self):
        # ligoudaner377/font_translator_gan#5: default gpu_ids 0,1 on a one-GPU machine
        found = head(TB + "AssertionError: invalid device id\n")
        assert found is not None and found.id == "cuda-invalid-device-ordinal" and "--gpu_ids 0" in found.fix

    def test_control_a_web_apis_device_id(self):
        assert "cuda-invalid-device-ordinal" not in ids("HTTPException: 400 Invalid device ID\n" + HEALTHY)

    @pytest.mark.parametrize("line", [
        "[02-18 19:56:13] ERROR: No image valid",  # yucornetto/MGMatting#39
        "[2018/12/13 09:22:03.125] WARNING (15628) datasets.common       : no image is valid",  # dong-x16/PortraitNet#14
    ])
    def test_sibling_a_programs_check_that_kept_no_image(self, line):
        assert "dataset-reported-empty" in ids(line + "\n")

    def test_control_a_count_of_valid_images(self):
        assert "dataset-reported-empty" not in ids("[02-18 19:56:12] INFO: 358 foreground images are valid\n" + HEALTHY)
