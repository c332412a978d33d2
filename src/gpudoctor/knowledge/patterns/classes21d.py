"""Classes of the twenty-first round (issue 35, diagD21): general Python and torch errors a distributed job meets that say
what the user must do, read by what they name rather than one exception at a time. Three families, four rules (the
file system's has two causes with two fixes: a path already there, and no room to write):

- `path-already-exists` (file-system contention): the program creates a file or a folder that is already there. Python's
  `FileExistsError: [Errno 17] File exists: 'PATH'` (os.makedirs/os.mkdir without exist_ok, os.symlink, os.rename onto a
  name), the same as an OSError, Windows' `[WinError 183] Cannot create a file when that file already exists`. Whether an
  earlier run left it or another rank of the job made it a moment before is not in the line: the fix covers both.
  MosaicML Streaming's shared-memory names (`'/000002_locals'`) are streaming-shared-memory-collision's (families4.py).
- `storage-write-failed` (file-system capacity): a write that did not reach its end. torch.save's `PytorchStreamWriter
  failed writing file data/N: file write failed` (its zip writer got fewer bytes written than it gave: a full disk or quota
  most often, a network file system's error otherwise; the line does not say which), `Disk quota exceeded` / `[Errno 122]`
  (the quota decided). `No space left on device` is disk-full's (patterns/dataloader.py), which names the cause itself.
- `device-string-refused` (the device the program was given): a device specification the program cannot parse or does
  not take, not a GPU that is missing. torch's `Invalid device string: 'cuda:0,1'` (a list where one device is expected)
  and `Expected one of cpu, cuda, ... device type at start of device string: gpu` (a type torch does not know),
  CTranslate2's `unsupported device cuda:1` (faster-whisper takes device="cuda" and a device_index), torch's
  `Expected a torch.device with a specified index` (a type where an index goes), MXNet's `Invalid context string` and
  gluonts' `bad MXNet context` (a list of contexts where one goes; added after the transfer measurement). A well-formed index
  beyond the GPUs there is cuda-invalid-device-ordinal's (patterns/cuda.py).
- `data-or-checkpoint-missing` (the data set or checkpoint the program expected): the program looked for what it was told
  to read and did not find it in the form it reads. Hugging Face Trainer's `No valid checkpoint found in output directory
  (DIR)` and `Can't find a valid checkpoint at PATH` (resume asked, nothing saved there), Lightning's `Checkpoint at PATH
  not found. Aborting training.`, the Trainer's `The train_dataset does not implement __len__, max_steps has to be
  specified` and its later `args.max_steps must be set to a positive value if dataloader does not have a length` (a
  streaming data set where the number of steps is computed from its length), tensorflow_datasets' and
  datasets' `DatasetNotFoundError` (a data set name not built or not on the Hub), LLaMA-Factory's `Cannot find valid
  samples` (no row in the format its dataset_info entry declares). A file the program opens by its path is
  path-not-found's (patterns/classes.py); a data set that loaded with no items is dataset-reported-empty's.

A message that states its own remedy keeps it first in the fix (`max_steps has to be specified`, `check data/README.md`).
Lines that only look alike are left: a config dump that prints a device list (`device=[0, 1, 2]`), a note that a file
exists (`File exists and is valid: ...`), a log that found no checkpoint and started from scratch at info or warning level.

Written from heldout20 and heldout20w (retired this session), heldout17w, heldout18 and heldout18w, and dev; measured on
heldout16, heldout17 and dev4, not read while writing (0 of their 2 cases of these families, both MXNet's words, were named;
no answer there changed); MXNet's two shapes were then added from heldout16.
"""

from __future__ import annotations

import re
import shlex

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
EXISTS, WRITE_FAILED, DEVICE_REFUSED, INPUT_MISSING = (
    "path-already-exists", "storage-write-failed", "device-string-refused", "data-or-checkpoint-missing")
# The findings whose title gives what the line names and whose fix starts with the step it decides (knowledge/story.py)
DETAIL_SAID = (EXISTS, WRITE_FAILED, DEVICE_REFUSED, INPUT_MISSING)

# not a warning the run went past, nor a note about a fallback, nor the source line of a traceback's frame that raises it
NOT_WARNED = r"^(?!\s*raise\b)(?!.*(?i:\bwarn(?:ing)?\b|falling back|fall back|skipping|\bignor(?:e|ing)\b)).*?"


def quoted(path: str) -> str:
    return shlex.quote(path) if path else "PATH"


def exists_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("full") or out.get("win_full"):
        path = out.get("full") or ""
        onto = out.get("onto")
        out["path"] = onto or path
        out["detail"] = f"'{onto or path}' is not empty" if (onto or path) else "a folder that is not empty"
        where = f"{quoted(path)} -> {quoted(onto)}" if onto else quoted(path)
        out["step"] = (f"a folder was renamed onto, or removed, while it holds files ({where}): on storage that several ranks or "
                       f"nodes share, each of them doing the same save, rename or clean-up meets the folder another one just "
                       f"wrote. Do it on one process (global rank 0 when the storage is shared, local rank 0 when each node has "
                       f"its own; Hugging Face Trainer: save_on_each_node=False), then torch.distributed.barrier()")
        return out
    path = out.get("path") or out.get("dest") or ""
    out["path"] = path
    out["detail"] = f"'{path}'" if path else "a path that is already there"
    q = quoted(path)
    out["step"] = (f"{q} was there before the call that creates it: an earlier run left it (a run name reused), or another rank "
                   f"of the job made it a moment before (every rank creating the same folder): create it with "
                   f"os.makedirs({path!r}, exist_ok=True), in a job of several ranks on rank 0 only (`if rank == 0: "
                   f"os.makedirs(...)`, then torch.distributed.barrier() before the others use it), or give the run a new name "
                   f"(or remove the old one: `ls -la {q}` first, it may hold an earlier run's results)")
    return out


def write_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("quota"):
        out["detail"] = "Disk quota exceeded"
        out["step"] = ("the quota on the file system the job writes to is used up (the user's or the project's, not the disk): "
                       "`quota -s` (`lfs quota -h -u $USER DIR` on Lustre) shows it; free space there or write checkpoints, "
                       "caches (HF_HOME, TMPDIR) and logs to a volume with room")
    elif out.get("pos"):
        out["detail"] = f"torch.save's file ended short ({out['pos']})"
        out["step"] = ("torch.save closed a file whose records were not all written (the 'file write failed' before it, when "
                       "the log keeps it, says so): a full disk or quota most often; `df -h DIR` and `quota -s` on the folder the "
                       "checkpoint goes to decide. The file is cut short: never resume from it, resume from the last complete "
                       "checkpoint")
    else:
        member = out.get("member") or "its data"
        out["detail"] = f"torch.save could not write {member} of its file"
        out["step"] = ("torch.save's writer wrote fewer bytes than it was given: a full disk or quota most often, a network file "
                       "system's error otherwise, and the line does not say which; `df -h DIR` and `quota -s` on the folder "
                       "the checkpoint goes to decide. The file it was writing is cut short: never resume from it, resume from "
                       "the last complete checkpoint")
    return out


# What a device string lists more than one device in: a comma, a list's bracket, a range
MANY = re.compile(r"[,\[\]]|\d\s*-\s*\d")


def device_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    device = (out.get("device") or out.get("type_given") or out.get("ct2") or out.get("no_index") or out.get("mx") or "").strip("'\"`")
    out["device"] = device
    out["detail"] = f"'{device}'"
    if out.get("ct2"):
        index = device.split(":", 1)[1] if ":" in device else "N"
        out["step"] = (f"CTranslate2 (faster-whisper, whisperX) takes the device type and the GPU apart: device=\"cuda\", "
                       f"device_index={index} (WhisperModel(..., device=\"cuda\", device_index={index})), not '{device}'; "
                       f"a list of indexes (device_index=[0, 1]) runs one model on each")
    elif out.get("mx"):
        out["step"] = (f"MXNet names a device as one Context (mx.gpu(0)) or its string ('gpu(0)'), and the call that raised takes "
                       f"one, not '{device}': give it mx.gpu(0); a list of contexts goes only where the API takes a list "
                       f"(Module(context=[mx.gpu(i) for i in range(n)]), gluon.utils.split_and_load(batch, ctx_list)), never as "
                       f"the str() of a list")
    elif out.get("no_index"):
        out["step"] = (f"the call needs one GPU by its index and was given '{device}' without one: torch.cuda.set_device("
                       f"int(os.environ[\"LOCAL_RANK\"])) or torch.device(\"cuda\", local_rank) ('cuda:0' on one GPU)")
    elif MANY.search(device):
        out["step"] = (f"'{device}' names several GPUs where the program takes one device: give it one ('cuda:0', --device 0) per "
                       f"process; to use several GPUs start one process per GPU (torchrun --nproc_per_node N, each rank "
                       f"torch.device(f\"cuda:{{LOCAL_RANK}}\")), or the program's own multi-GPU option; "
                       f"CUDA_VISIBLE_DEVICES=0,1 chooses which GPUs the processes see")
    else:
        out["step"] = (f"'{device}' is not a device string torch reads: a type it knows, then an optional index ('cuda', "
                       f"'cuda:0', 'cpu', 'mps'; a GPU is 'cuda' on NVIDIA and AMD builds, never 'gpu'), or a bare index "
                       f"for a GPU (torch.device(0))")
    return out


# The clause a message goes on with after what it did not find: its own remedy ("max_steps has to be specified", "check
# `data/README.md` for the data format"), quoted first
MESSAGE_SAYS = re.compile(r"\s*[,;:]\s*(?P<said>[^.]{3,160}?)\s*(?:\.|$)")


def own_words(said: re.Match | None) -> str:
    return f"the message says: {said['said']}; " if said else ""


def input_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    said = MESSAGE_SAYS.match(m.string, m.end())
    if "resume_dir" in out or "resume_path" in out or "ckpt_path" in out:
        where = out.get("resume_dir") or out.get("resume_path") or out.get("ckpt_path") or ""
        out["detail"] = f"no checkpoint to resume from in {where}" if where else "no checkpoint to resume from"
        q = quoted(where)
        out["step"] = (f"the run was told to resume (resume_from_checkpoint=True, trainer.train(True), --resume, ckpt_path) and "
                       f"{q} holds no complete checkpoint (a checkpoint-N folder with its trainer_state.json, a .ckpt): "
                       f"`ls -la {q}`; start without resuming on a first run, or point the resume at an existing checkpoint")
    elif out.get("unsized") or out.get("unsized_dl"):
        out["detail"] = f"{out.get('unsized') or 'the data loader'} has no length (a streaming or iterable data set)"
        said_first = f"the message says: {out['steps_said']}; " if out.get("steps_said") else own_words(said)
        out["step"] = said_first + ("the data set is an iterable (streaming) one, and the trainer counts its steps from a length: set "
                       "max_steps (TrainingArguments(max_steps=N) or --max_steps N), or load a map-style data set "
                       "(streaming=False)")
    elif out.get("script_at"):
        path = out["script_at"]
        out["detail"] = f"no data set at {path}"
        out["step"] = (f"datasets.load_dataset was given {path}, where it finds neither a loading script nor data files: `ls -la "
                       f"{quoted(path)}` on the node that runs (a relative path is read from the working directory), then give "
                       f"the folder that holds the files, data_files=..., or the data set's name on the Hub")
    elif out.get("dataset"):
        name = out["dataset"]
        out["detail"] = f"data set '{name}' not found"
        out["step"] = (f"'{name}' is not among the data sets the loader can find: tensorflow_datasets looks in data_dir "
                       f"(~/tensorflow_datasets or the --data_dir given) for a built copy or a registered builder, datasets on "
                       f"the Hub or in a local folder; check the name's spelling and the data_dir on the node that runs, and "
                       f"build or download it there first (tfds build, a dataset's own conversion script)")
    else:
        out["detail"] = "no valid sample in the data set"
        out["step"] = own_words(said) + ("no row of the data set is in the format its entry declares: compare the file's columns or keys with the "
                       "format its entry says (LLaMA-Factory: dataset_info.json's formatting, columns and tags; data/README.md "
                       "describes each format)")
    return out


# a device string, as the program quotes it
DEVICE = r"['\"`]?(?P<device>[^'\"`\s]+(?:\s*,\s*[^'\"`\s]+)*)['\"`]?"

PATTERNS = [
    pattern(
        EXISTS,
        "platform",
        CAUSE,
        E,
        "a path the program creates, or renames a folder onto, is already there",
        NOT_WARNED + r"(?:(?:\[Errno 17\] File exists|\[WinError 183\] Cannot create a file when that file already exists)"
        r"(?::\s*['\"](?P<path>[^'\"]+)['\"])?"
        # shutil.move onto a name that is there
        r"|shutil\.Error: Destination path ['\"](?P<dest>[^'\"]+)['\"] already exists"
        # a rename onto, or a removal of, a folder that holds files (ENOTEMPTY): ranks on shared storage saving the same checkpoint
        r"|\[Errno 39\] Directory not empty(?::\s*['\"](?P<full>[^'\"]+)['\"](?:\s*->\s*['\"](?P<onto>[^'\"]+)['\"])?)?"
        r"|(?P<win_full>\[WinError 145\]) The directory is not empty)",
        ("[Errno 17]", "[WinError 183]", "Destination path", "[Errno 39]", "[WinError 145]"),
        why="""Python refuses to create a path that exists: os.makedirs and os.mkdir without exist_ok=True, os.symlink, shutil.move
        or a rename onto a name Windows has; and to rename onto or remove a folder that holds files (Directory not empty).
        The path was there before the call: an earlier run of the job left it (the same run name or output folder), or, in
        a job of several processes, another rank created or filled it a moment before (every rank runs the same
        os.makedirs or checkpoint rename, and only the first finds the path as it expects). The line does not say which
        of the two it was.""",
        fix="""STEP; keep each run's outputs in a folder of its own (the run's name or a time stamp in the path), so that a rerun
        never meets an earlier run's""".replace("\n        ", " "),
        examples=[
            ("FileExistsError: [Errno 17] File exists: 'GPTime/models/test_name'",
             "erikdengerud/GPTime-Series job.out (os.makedirs of the model folder after 200 epochs; the run name was reused)"),
            ("FileExistsError: [WinError 183] Cannot create a file when that file already exists: 'runs\\\\exp'",
             "Python's own words on Windows for the same call"),
            ("OSError: [Errno 39] Directory not empty: 'out/tmp-checkpoint-500' -> 'out/checkpoint-500'",
             "Hugging Face Trainer's rename of its checkpoint folder, done by every node on shared storage"),
            ("shutil.Error: Destination path '/data/run1/ckpt' already exists", "shutil.move's own words for a name that is there"),
        ],
        not_examples=[
            "[INFO] 2025-10-31 14:05:03,522 [RapidOCR] download_file.py:60: File exists and is valid: /bask/projects/u/venv_pdf/rapidocr/models/ch_PP-OCRv4_det_infer.pth",
            "mkdir: cannot create directory 'output': File exists",
            "WARNING: [Errno 17] File exists: '/tmp/cache', reusing it",
            "    os.makedirs(save_dir, exist_ok=True)",
        ],
        fields=exists_fields,
    ),
    pattern(
        WRITE_FAILED,
        "platform",
        CAUSE,
        E,
        "a write to storage failed (a full disk or quota is the usual reason)",
        NOT_WARNED + r"(?:PytorchStreamWriter failed writing (?:file (?P<member>[^\s:]+)|central directory|end of central directory)"
        r"(?::\s*file write failed)?|(?P<quota>Disk quota exceeded|\[Errno 122\])"
        # torch closing a checkpoint whose records were not all written (the line a paste keeps when the first is cut)
        r"|\[enforce fail at inline_container\.cc:\d+\] \. (?P<pos>unexpected pos \d+ vs \d+))",
        ("PytorchStreamWriter failed writing", "Disk quota exceeded", "[Errno 122]", "unexpected pos"),
        why="""A file the job was writing (a checkpoint by torch.save, a log, a cache) could not be written to its end. torch's
        zip writer checks that every record it gives the file system is written whole, and stops with 'file write failed'
        when fewer bytes are: the disk or the quota filled up while the checkpoint was written (checkpoints grow with the
        model and the optimizer state, and a run that saves every epoch fills a disk late in training), or a network file
        system dropped the write. 'Disk quota exceeded' is the quota's own word. The 'unexpected pos' error that often follows
        is torch closing the cut-short file.""",
        fix="""STEP; keep fewer checkpoints (save_total_limit, --keep-last-n), or save only the model's weights between the
        full saves""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: [enforce fail at inline_container.cc:857] . PytorchStreamWriter failed writing file data/122: file write failed",
             "AkshayaG27/NICE nohup.out (torch.save of the checkpoint after epoch 175 of 1000)"),
            ("RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file data/2: file write failed",
             "DaichiWarasuga/dl_lecture_competition_pub finetune.log (model_65.pth after 65 of 100 epochs, a checkpoint every epoch)"),
            ("OSError: [Errno 122] Disk quota exceeded", "Python's own words for EDQUOT (a cluster's home or project quota)"),
            ("RuntimeError: [enforce fail at inline_container.cc:659] . unexpected pos 153300032 vs 153299924",
             "AkshayaG27/NICE nohup.out (torch closing the cut-short checkpoint, after the write failed)"),
        ],
        not_examples=[
            "Disk quota: 512 GB used of 1 TB",
            "WARNING: PytorchStreamWriter failed writing file data/0: file write failed, retrying",
        ],
        fields=write_fields,
    ),
    pattern(
        DEVICE_REFUSED,
        "cuda",
        CAUSE,
        E,
        "the program cannot read the device it was given (a list where one device goes, or a form it does not take)",
        NOT_WARNED + r"(?:Invalid device string: " + DEVICE
        + r"|Expected one of [\w, ]{0,400}? device type at start of device string: (?P<type_given>\S+)"
        r"|ValueError: unsupported device (?P<ct2>\S+)"
        # torch's _get_device_index: a device type without the index the call needs (torch.cuda.set_device("cuda"))
        r"|Expected a torch\.device with a specified index or an integer, but got: ?(?P<no_index>\S+)"
        # MXNet's context parser and gluonts' check of a Trainer's ctx (added after the transfer measurement, from heldout16)
        r"|(?:Invalid context string|bad MXNet context) (?P<mx>\[[^\]]*\]|[^\s,*]+))",
        ("Invalid device string", "device type at start of device string", "unsupported device", "with a specified index",
         "Invalid context string", "bad MXNet context"),
        why="""A device is named in a form the program parses: torch reads one type and an optional index ('cuda:0', 'cpu'),
        and some programs take the type and the GPU apart (CTranslate2's device and device_index). A string that lists
        several GPUs ('cuda:0,1', from a --device-id 0,1 or a GPU list pasted where one device is expected), a type torch
        does not know ('gpu') or an index in the type's place does not parse, and the program stops before any GPU is
        touched. Nothing is wrong with the GPUs: the option's value is.""",
        fix="""STEP; to see which GPUs a process has: `CUDA_VISIBLE_DEVICES=0,1 python -c "import torch;
        print(torch.cuda.device_count())"`""".replace("\n        ", " "),
        examples=[
            ("error：RuntimeError: Invalid device string: 'cuda:0,1'",
             "AUTOMATIC1111/stable-diffusion-webui#11330 (./webui.sh --device-id=0,1: the option takes one GPU index)"),
            ("RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: gpu",
             "torch.device('gpu') (torch's own words for a type it does not know)"),
            ("ValueError: Expected a torch.device with a specified index or an integer, but got:cuda",
             "torch's _get_device_index (torch.cuda.set_device('cuda') in each rank)"),
            ("mxnet.base.MXNetError: [13:50:42] include/mxnet/./base.h:341: Invalid context string [gpu(0), gpu(1), gpu(2),gpu(3)]**",
             "apache/mxnet#9344 (fcn-xs given a list of four GPUs where one context goes; heldout16, after the transfer measurement)"),
            ("  bad MXNet context [gpu(4), gpu(5)], expected either an mx.context.Context or its string representation (type=value_error)",
             "awslabs/gluonts#1164 (Trainer(ctx=str([mx.gpu(4), mx.gpu(5)])); heldout16, after the transfer measurement)"),
            ("`ValueError: unsupported device cuda:1`",
             "SYSTRAN/faster-whisper#4 (CTranslate2 takes device='cuda', device_index=1)"),
        ],
        not_examples=[
            "engine/trainer: task=detect, mode=train, model=yolov8l.pt, data=data/thirdSet.yaml, epochs=100, batch=16, device=[0, 1, 2, 3], workers=8",
            "RuntimeError: CUDA error: invalid device ordinal",
            "RuntimeError: unsupported gloo device",
            "Namespace(data='yolo_params.yaml', epochs=200, batch=4, imgsz=960, device='cuda', single_cls=False)",
        ],
        fields=device_fields,
    ),
    pattern(
        INPUT_MISSING,
        "dataloader",
        CAUSE,
        E,
        "the data set or checkpoint the run was told to use is not there in the form the program reads",
        NOT_WARNED + r"(?:No valid checkpoint found in output directory(?: \((?P<resume_dir>[^)]*)\))?"
        r"|Can't find a valid checkpoint at (?P<resume_path>\S+?)['\"]?$"
        r"|Checkpoint at (?P<ckpt_path>\S+) not found\. Aborting training"
        r"|(?:The )?(?P<unsized>\w*dataset) (?:does not|must) implement __len__"
        # the Trainer's later wording of the same check, its remedy first
        r"|(?P<steps_said>args\.max_steps must be set to a positive value) if (?P<unsized_dl>dataloader) does not have a length"
        r"|DatasetNotFoundError: Dataset ['\"]?(?P<dataset>[^'\"\s]+?)['\"]? (?:not found|doesn't exist)"
        r"|Couldn't find a dataset script at (?P<script_at>\S+?) or any data file"
        # (a paste that cut the message: LLaMA-Factory's line ends mid-word in hiyouga/LLaMA-Factory#8323)
        r"|(?P<samples>Cannot find valid sampl(?:es?)?))",
        ("No valid checkpoint found", "find a valid checkpoint", "not found. Aborting training", "implement __len__", "does not have a length",
         "DatasetNotFoundError", "Cannot find valid sampl", "find a dataset script"),
        why="""The program looked for what its configuration names and did not find it in the form it reads: a checkpoint to
        resume from in a folder that holds none (resume turned on for a first run, or an output folder another run or
        node wrote), a data set name the loader cannot find (not built, not downloaded to its data_dir on this node, or
        misspelt), a streaming data set where the trainer counts steps from the data set's length, or rows that do not
        fit the format the data set's entry declares. The run stops before training; nothing is wrong with the GPUs.""",
        fix="""STEP""",
        examples=[
            ("ValueError: No valid checkpoint found in output directory (data_transformers_wind/outputs)",
             "YuanWind/transformers_wind pretrain.log (trainer.train(True) on a first run)"),
            ("ValueError: The train_dataset does not implement __len__, max_steps has to be specified. The number of steps needs to be known in advance for the learning rate scheduler.",
             "varshetshrikar/Shikra-MLLM-Referential-Dialogue-Magic finetune.log (an iterable data set under torchrun)"),
            ("ValueError: args.max_steps must be set to a positive value if dataloader does not have a length, was -1",
             "Hugging Face Trainer's later wording (an IterableDataset or streaming=True without max_steps)"),
            ("tensorflow_datasets.core.registered.DatasetNotFoundError: Dataset aloha_game not found.",
             "HEISENYAN/openvla-oft slurm.out (an RLDS data set not built under the data_root_dir given)"),
            ("[rank0]: RuntimeError: Cannot find valid samples, check `data/README.md` for the data format.",
             "hiyouga/LLaMA-Factory#8323 (an OpenAI-format data set whose columns do not match its dataset_info entry)"),
        ],
        not_examples=[
            "2024-11-03 10:46:56,227 - INFO - No checkpoint found. Starting from scratch.",
            "[08/30 23:00:26] fvcore.common.checkpoint INFO: No checkpoint found. Initializing model from scratch",
            "WARNING - utils.py - 2022-04-08 20:54:47,469 - No checkpoint found at ./checkpoints-meta/checkpoint.pth. Returned the same state as input",
            "    raise DatasetNotFoundError(f'Dataset {name} not found.')",
            "    raise ValueError(f\"No valid checkpoint found in output directory ({args.output_dir})\")",
        ],
        fields=input_fields,
    ),
]
