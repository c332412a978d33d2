"""Controls and siblings for the tenth round's "never confidently wrong" fixes on the older development parts
(dev, dev3..dev6, heldout4..heldout6; /work/brief10/diagB10.md). Each log runs through the whole of `diagnose`;
the sample's cases are the logs as pasted, the other lines real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_patterns import head_id

# NVIDIA/nccl#719 (dev): a typo'd launch fails, the corrected command runs next (its output is the paste's rest)
PROMPT = "(test) root@8pxb:~/stress_test/code# "
TYPO = "NCCL_DEBUG=INFO python -m torch.distribute.launch --nnodes 2 --nproc_per_node=2 --node_rank=0 train.py --max_epochs=1 --fp16"
FIXED = TYPO.replace("torch.distribute.launch", "torch.distributed.launch")
NO_MODULE = ("/root/anaconda3/envs/test/bin/python: Error while finding module specification for 'torch.distribute.launch' "
             "(ModuleNotFoundError: No module named 'torch.distribute')")
DEPRECATED = ("/root/anaconda3/envs/test/lib/python3.8/site-packages/torch/distributed/launch.py:178: FutureWarning: The module "
              "torch.distributed.launch is deprecated")
# a failure of the rerun: a real NCCL line (ultralytics/ultralytics#7038, dev3)
NO_SOCKET = "SGES-DT279:1234:1234 [0] bootstrap.cc:48 NCCL WARN Bootstrap : no socket interface found"


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


class TestLogInconclusive:
    """A failure in the output of a command the paste shows run again afterwards is an earlier attempt's."""

    verdict = "log-inconclusive"

    def test_sibling_a_corrected_command_run_again_makes_the_first_failure_stale(self):
        report = api.diagnose(case("dev", "nccl-719-three-ib-nics-typo-then-launch"))
        head = report.findings[0]
        assert head.id == "log-inconclusive" and "earlier attempt" in head.title and exit_code(report) == 1
        stale = finding(case("dev", "nccl-719-three-ib-nics-typo-then-launch"), "module-not-found")
        assert stale is not None and stale.severity is Severity.INFO and stale.evidence["earlier_attempt"]["run_again_at"] == 5
        assert report.data["root_cause"] is None

    def test_sibling_the_same_command_after_an_export_is_a_rerun(self):
        # huggingface/text-generation-inference#1451 (dev5): refused `--disable-custom-kernels True`, export, the same command again
        report = api.diagnose(case("dev5", "tgi-1451-disable-custom-kernels-invalid-value"))
        assert report.findings[0].id == "log-inconclusive" and "run again at line 11" in report.findings[0].title
        assert not any(f.severity is Severity.ERROR for f in report.findings)

    def test_sibling_a_rerun_that_fails_is_told_by_its_own_failure(self):
        log = f"{PROMPT}{TYPO}\n{NO_MODULE}\n{PROMPT}{FIXED}\n{DEPRECATED}\n{NO_SOCKET}\n"
        assert head_id(log) == "nccl-socket-ifname"
        stale = finding(log, "module-not-found")
        assert stale is not None and stale.severity is Severity.INFO

    def test_control_a_command_that_looks_into_the_failure_is_no_rerun(self):
        # nvidia-smi, pip list after a failure: the user looking into it, not an attempt
        log = f"{PROMPT}{TYPO}\n{NO_MODULE}\n{PROMPT}nvidia-smi -L\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5d8d9c1e)\n{PROMPT}pip list | grep torch\ntorch 1.12.0\n"
        assert head_id(log) == "module-not-found"

    def test_control_a_rerun_that_fails_the_same_way_keeps_the_failure(self):
        log = f"{PROMPT}{TYPO}\n{NO_MODULE}\n{PROMPT}{TYPO}\n{NO_MODULE}\n"
        report = api.diagnose(log)
        assert head_id(log) == "module-not-found" and exit_code(report) == 1

    def test_control_installing_another_package_after_a_failed_build_is_no_rerun(self):
        # state-spaces/mamba#223 (heldout5): the build fails; `pip install ninja` is a step towards a rerun, not one
        build = ("Collecting mamba-ssm\n  Preparing metadata (setup.py) ... error\n  error: subprocess-exited-with-error\n  \n"
                 "  × python setup.py egg_info did not run successfully.\n  │ exit code: 1\n")
        log = f"$ pip install mamba-ssm\n{build}$ pip install ninja\nSuccessfully installed ninja-1.11.1.1\n"
        assert head_id(log) == "extension-build-failed"
        assert head_id(log.replace("$ pip install ninja", "$ pip install mamba-ssm --no-build-isolation")) == "-"

    def test_sibling_a_powershell_prompt_run_again_is_a_rerun(self):
        # a Windows paste (open-mmlab/mmpretrain#1942's prompt, heldout5): `(env) PS C:\dir> cmd`, the same command twice
        prompt = "(openmmlab) PS D:\\mmpretrain\\train_flowers_demo> "
        log = f"{prompt}{TYPO}\n{NO_MODULE}\n{prompt}{FIXED}\n{DEPRECATED}\n"
        assert api.diagnose(log).findings[0].id == "log-inconclusive" and head_id(log) == "-"

    def test_control_a_windows_warning_path_is_no_prompt(self):
        # AUTOMATIC1111 venvs print `C:\...\x.py:35: FutureWarning`: a path, then `:` past the drive, never a prompt
        warn = "C:\\new\\venv\\lib\\site-packages\\diffusers\\utils\\deprecation_utils.py:35: FutureWarning: It is deprecated to pass a pretrained model"
        log = f"{PROMPT}{TYPO}\n{NO_MODULE}\n{warn}\n{warn}\n"
        assert head_id(log) == "module-not-found"

    def test_control_the_same_launch_on_the_other_node_is_no_rerun(self):
        # karpathy/nanoGPT#55 (heldout4) pastes both nodes' torchrun commands: --node_rank 0 and 1 are the job's two nodes
        node0 = "$ torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --master_addr=123.456.123.456 --master_port=1234 train.py"
        log = f"{node0}\n{NO_SOCKET}\n{node0.replace('node_rank=0', 'node_rank=1')}\nstep 10 loss 1.23\n"
        assert head_id(log) == "nccl-socket-ifname"

    def test_control_the_same_command_on_another_host_is_no_rerun(self):
        # user@host prompts of two machines: the command typed on the second node is its own launch
        log = f"root@node1:~/code# {FIXED}\n{NO_SOCKET}\nroot@node2:~/code# {FIXED}\n{DEPRECATED}\n"
        assert head_id(log) == "nccl-socket-ifname"
        assert head_id(log.replace("root@node2", "root@node1")) == "-"  # the same host: the rerun

    def test_control_a_shell_comment_or_heading_is_no_prompt(self):
        # `# ` starts a comment or a Markdown heading as often as root's bare prompt: never read as a command
        log = f"# python -m torch.distribute.launch train.py\n{NO_MODULE}\n# python -m torch.distributed.launch train.py\n{DEPRECATED}\n"
        assert head_id(log) == "module-not-found"


# OpenPCDet/OpenPCDet#1151 (heldout8): the user's checkout run from tools/, its frames relative, its package's own datasets/ folder
PCDET = "../pcdet/datasets/augmentor/database_sampler.py"
EASYDICT = "AttributeError: 'EasyDict' object has no attribute 'BACKUP_DB_INFO'"


def raised_in(path: str, line: str = EASYDICT) -> str:
    return ('Traceback (most recent call last):\n  File "train.py", line 111, in main\n    train_set, train_loader, train_sampler = build_dataloader(\n'
            f'  File "{path}", line 35, in __init__\n    for db_info_path in sampler_cfg.BACKUP_DB_INFO:\n{line}\n')


class TestLibraryApiMismatch:
    """A known library's name that projects also give a folder of their own is that library's only in its checkout's layout."""

    verdict = "library-api-mismatch"

    def test_control_a_projects_own_datasets_folder_is_not_hugging_faces(self):
        report = api.diagnose(case("heldout8", "openpcdet-1151-easydict-backup-db-info"))
        head = next(f for f in report.findings if f.severity is Severity.ERROR)
        # (diagA10's config-key-missing names the missing key; before it, the generic python-exception)
        assert head.id in ("config-key-missing", "python-exception") and "datasets" not in head.fix.replace(PCDET, "")

    def test_control_a_datasets_subfolder_in_an_absolute_path_is_the_users(self):
        # (the EasyDict line is diagA10's config-key-missing; what matters here: not the library's)
        assert head_id(raised_in("/home/u/detection/myproj/datasets/coco/loader.py")) in ("config-key-missing", "python-exception")

    def test_sibling_installed_datasets_is_the_library(self):
        log = raised_in("/opt/conda/lib/python3.10/site-packages/datasets/arrow_dataset.py", "AttributeError: 'Dataset' object has no attribute 'to_tf_dataset'")
        assert head_id(log) == "library-api-mismatch"

    def test_sibling_an_editable_checkout_of_datasets_is_the_library(self):
        log = raised_in("/home/u/datasets/src/datasets/arrow_dataset.py", "AttributeError: 'Dataset' object has no attribute 'to_tf_dataset'")
        assert head_id(log) == "library-api-mismatch"

    def test_sibling_a_checkout_two_folders_deep_is_still_the_library(self):
        # megatron/core/x.py in a checkout not named after the project (the rule FOLDER_NAMES narrows)
        log = raised_in("/workspace/code/megatron/core/transformer/attention.py", "AttributeError: 'TransformerConfig' object has no attribute 'rotary_base'")
        assert head_id(log) == "library-api-mismatch"


# ultralytics/yolov5#9145: a checkpoint loaded through torch.hub; the raising frame is the repository torch.hub fetched
HUB_TRACEBACK = (
    'Traceback (most recent call last):\n'
    '  File "C:\\Users\\xjera/.cache\\torch\\hub\\ultralytics_yolov5_master\\models\\common.py", line 331, in __init__\n'
    '    model = attempt_load(weights if isinstance(weights, list) else w, device=device, inplace=True, fuse=fuse)\n'
    '  File "C:\\Users\\xjera/.cache\\torch\\hub\\ultralytics_yolov5_master\\models\\experimental.py", line 80, in attempt_load\n'
    "    ckpt = (ckpt.get('ema') or ckpt['model']).to(device).float()  # FP32 model\n"
    "AttributeError: 'Tensor' object has no attribute 'get'\n"
)


class TestLibraryApiMismatchTorchHub:
    """A repository torch.hub fetched is that repository's code, not torch's, wherever torch's cache lies."""

    verdict = "library-api-mismatch"

    def test_control_a_torch_hub_repository_is_not_blamed_on_torch(self):
        f = finding(HUB_TRACEBACK, "library-api-mismatch")
        assert f is not None and "pip install -U torch" not in f.fix and "pip show torch" not in f.fix

    def test_sibling_torchs_own_frame_still_names_torch(self):
        log = HUB_TRACEBACK.replace("C:\\Users\\xjera/.cache\\torch\\hub\\ultralytics_yolov5_master\\models\\experimental.py",
                                    "C:\\Users\\xjera\\anaconda3\\Lib\\site-packages\\torch\\nn\\modules\\module.py")
        f = finding(log, "library-api-mismatch")
        assert f is not None and "pip show torch" in f.fix


class TestUnrecognisedFailure:
    """pip's Windows launcher of a console script (Scripts\\NAME.exe\\__main__.py) is that package's frame, never the user's."""

    verdict = "unrecognised-failure"

    def test_control_the_launchers_frame_is_not_your_code(self):
        # bmaltais/kohya_ss#1710 (dev6): a traceback cut in accelerate's launcher; the only frame outside site-packages is
        # Scripts\accelerate.exe\__main__.py, accelerate's console script
        report = api.diagnose(case("dev6", "kohya-1710-windows-3221225477-access-violation"))
        head = next(f for f in report.findings if f.severity is Severity.ERROR)
        assert head.id == "unrecognised-failure" and "your_frame" not in head.evidence
        assert "frame" not in (report.data["root_cause"] or {})

    def test_sibling_a_script_of_the_users_own_is_still_theirs(self):
        # the same traceback with the user's own script as its outer frame: that frame is theirs
        log = case("dev6", "kohya-1710-windows-3221225477-access-violation").replace(
            "C:\\Users\\eee\\kohya\\kohya_ss\\venv\\Scripts\\accelerate.exe\\__main__.py", "C:\\Users\\eee\\kohya\\kohya_ss\\launch_train.py")
        head = next(f for f in api.diagnose(log).findings if f.severity is Severity.ERROR)
        assert head.evidence.get("your_frame", "").startswith("C:\\Users\\eee\\kohya\\kohya_ss\\launch_train.py")

    def test_control_an_environments_console_script_is_not_your_code(self):
        # huggingface/text-generation-inference#1644 (dev5): the traceback starts in /opt/conda/bin/text-generation-server,
        # the console script pip wrote, and is cut in the server's own frames: no frame of the user's is shown
        report = api.diagnose(case("dev5", "tgi-1644-command-r-4-shard-traceback-cut"))
        head = next(f for f in report.findings if f.severity is Severity.ERROR)
        assert "your_frame" not in head.evidence and "your code" not in head.fix

    def test_sibling_a_script_without_extension_in_your_own_bin_is_yours(self):
        # ~/bin is a person's own folder, not an environment's: a script there is the user's
        log = case("dev5", "tgi-1644-command-r-4-shard-traceback-cut").replace("/opt/conda/bin/text-generation-server", "/home/u/bin/serve")
        head = next(f for f in api.diagnose(log).findings if f.severity is Severity.ERROR)
        assert head.evidence.get("your_frame", "").startswith("/home/u/bin/serve")

    def test_control_visual_studios_python_is_pythons_library(self):
        # lucidrains/stylegan2-pytorch#164 (heldout8): Visual Studio's Python37_64\lib\runpy.py is Python's own library
        report = api.diagnose(case("heldout8", "stylegan2-pytorch-164-windows-multi-gpus-traceback"))
        assert not any("Python37_64" in str(f.evidence.get("your_frame", "")) for f in report.findings)

    def test_sibling_a_users_folder_called_like_python_is_theirs(self):
        from gpudoctor.knowledge.libraries import package_of

        assert package_of("C:\\Users\\me\\python_projects\\lib\\train.py") is None


# pytorch/pytorch#23761: the DataLoader iterator's destructor raised at exit, and Python printed it under
# "Exception ignored in" (it went on: the exit status is the program's)
IGNORED = (
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x000001F99F5CB9D8>\n"
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\Divyansh J\\Anaconda3\\envs\\pytorch\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 883, in __del__\n'
    "    self._shutdown_workers()\n"
    '  File "C:\\Users\\Divyansh J\\Anaconda3\\envs\\pytorch\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 860, in _shutdown_workers\n'
    "    if self.workers_status[worker_id]:\n"
    "IndexError: list index out of range\n"
)
ENDED = "{'train_runtime': 512.3, 'train_samples_per_second': 10.2, 'train_loss': 1.2, 'epoch': 3.0}\n"


class TestExceptionIgnoredAtExit:
    """A traceback Python printed under "Exception ignored in" is no failure, whatever its exception."""

    def test_control_a_finished_run_with_an_ignored_exception_is_healthy(self):
        report = api.diagnose(ENDED + IGNORED)
        assert exit_code(report) == 0 and "exception-ignored-at-exit" in [f.id for f in report.findings]

    def test_sibling_a_failure_after_it_is_the_failure(self):
        log = IGNORED + 'Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\n    main()\nValueError: labels out of range\n'
        assert head_id(log) == "python-exception"

    def test_sibling_a_failure_before_it_stays_the_cause(self):
        log = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\n    main()\nValueError: labels out of range\n' + IGNORED
        assert head_id(log) == "python-exception"


# wandb/wandb#4537: Lightning's progress bar goes on between W&B's logged server errors
WANDB_RUN = (
    "Epoch 0:   1%|▋         | 44/4943 [00:11<21:31,  3.79it/s, loss=7.11, v_num=z34s]\n"
    "wandb: ERROR Error while calling W&B API: internal database error (<Response [500]>)\n"
    "Epoch 0:   1%|▉         | 60/4943 [00:14<20:16,  4.01it/s, loss=6.37, v_num=z34s]\n"
    "wandb: Network error (ReadTimeout), entering retry loop.\n"
    "Epoch 0:   2%|█▎        | 83/4943 [00:19<18:58,  4.27it/s, loss=6.26, v_num=z34s]\n"
)


class TestWandbApiErrorRetried:
    def test_control_a_run_that_goes_on_under_them_is_not_failed_by_them(self):
        report = api.diagnose(WANDB_RUN + ENDED)
        assert exit_code(report) == 0 and "wandb-api-error-retried" in [f.id for f in report.findings]

    def test_sibling_wandb_init_giving_up_is_a_failure(self):
        # wandb/wandb#10497: wandb.init raised; the traceback is the run's failure, whatever W&B logged before it
        log = WANDB_RUN + (
            'Traceback (most recent call last):\n  File "/home/u/train.py", line 138, in __init__\n    self.logger = wandb.init(\n'
            '  File "/opt/conda/lib/python3.12/site-packages/wandb/sdk/wandb_init.py", line 1573, in init\n    wandb._sentry.reraise(e)\n'
            "wandb.errors.errors.CommError: Error uploading run: returned error 404\n")
        assert exit_code(api.diagnose(log)) == 1 and head_id(log) != "-"

    def test_sibling_a_missing_api_key_is_not_this(self):
        assert "wandb-api-error-retried" not in [f.id for f in api.diagnose(
            "wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n").findings]


class TestStoreConnectRetrying:
    """One address refusing the store client is a retry; the client giving up is the failure."""

    def test_control_retries_then_training_is_no_failure(self):
        # ofsoundof/GRL-Image-Restoration#27's retry line, then the run trains: the master's store came up
        log = ("trainer/0 [1]:[W socket.cpp:558] [c10d] The client socket has failed to connect to [::ffff:0.0.0.5]:40323 "
               "(errno: 110 - Connection timed out).\n" + WANDB_RUN.split("wandb")[0] + ENDED)
        report = api.diagnose(log)
        assert exit_code(report) == 0 and "store-connect-timeout" not in [f.id for f in report.findings]

    def test_sibling_the_client_giving_up_is_the_failure(self):
        # hpcaitech/Open-Sora#667: three retries, then "failed to connect to any network address of"
        log = ("[W socket.cpp:697] [c10d] The client socket has failed to connect to 0.104.99.143:47389 (errno: 110 - Connection timed out).\n" * 3
               + "[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of (6841231, 47389).\n")
        assert head_id(log) == "store-connect-timeout"

    def test_sibling_a_retry_then_another_failure_is_told_by_that_failure(self):
        log = ("[W socket.cpp:558] [c10d] The client socket has failed to connect to [node1]:29500 (errno: 111 - Connection refused).\n"
               + NO_SOCKET + "\n")
        assert head_id(log) == "nccl-socket-ifname"
