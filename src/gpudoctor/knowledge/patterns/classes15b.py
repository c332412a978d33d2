"""Rules for classes of messages of the fifteenth round (issue 35, diagB15): the honest "unrecognised" and "inconclusive"
answers on the retired held-out part heldout14 whose log holds a line that decides the cause, in a class that recurs
across projects.

- code drew random samples from a population that is empty, or smaller than the draw (numpy's choice: "a must be greater
  than 0 unless no samples are taken", "'a' cannot be empty unless no samples are taken"; Python's random.choice: "Cannot
  choose from an empty sequence"; random.sample and choice without replacement asked for more than there is): a data path
  that found no files, a filter that kept nothing, a count computed as 0;
- torch's inference tensors used outside inference mode ("Inplace update to inference tensor outside InferenceMode is not
  allowed", "Inference tensors cannot be saved for backward"): a tensor (a model's output, a buffer, a cache) made under
  torch.inference_mode() (Lightning's evaluation loops, a decorated generate) reached training code or an in-place update;
- TensorFlow could place an operation on no device it was pinned to though the GPU is there ("Cannot assign a device for
  operation X: Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices
  is available", "... because the node was colocated with a group of nodes that required incompatible device"): the op
  has no GPU kernel or must share a CPU op's device, and soft placement is off;
- TensorFlow could not load its CUDA libraries ("Cannot dlopen some GPU libraries"): it registered no GPU and runs on the CPU
  (a warning: a multi-GPU job then crawls or hangs; the libraries are named on the "Could not load dynamic library" lines
  before it);
- an array or a tensor indexed with more axes than it has (numpy's "too many indices for array: array is 1-dimensional, but 2
  were indexed", torch's "too many indices for tensor of dimension 1"): data of another shape than the code was written for
  (mono audio, a grayscale image, a squeezed list of boxes) or a reading library's version that returns another shape;
- the synchronized BatchNorm of PyTorch-Encoding or sync_batchnorm run without the DataParallel that connects its replicas
  ("'NoneType' object has no attribute 'run_slave'"): one GPU, or torch's plain DataParallel;
- the program's own count of its data is 0 ("Found tracks in dataset: 0", "Number of clips in the dataset:0", Keras's "Found
  0 images belonging to N classes."): a warning that leads an unexplained failure after it (a traceback cut in the first
  epoch's loop);
- mpirun could not start the program it was given on a node ("mpirun was unable to launch the specified application as
  it could not access or execute an executable", "... was unable to find the specified executable file", MPICH's "execvp
  error on file"): a script started without its interpreter or without its executable bit, a program not on that node's
  PATH, or a misspelt option mpirun took for the program.

(What the unrecognised answer says of a traceback cut before its exception line (knowledge/unrecognised.py): its last
frame's line in the log, the code it was running and whose code it is, and which lines of the full output to paste.)

(Classes of the round that widen existing rules: detectron2's "Predicted boxes or scores contain Inf/NaN. Training has
diverged." is training-stopped-nonfinite, whose fix now names a configuration written for more GPUs run on fewer; torch
0.4's THCudaCheck "error=30 : unknown error" at CUDA's initialisation is cuda-init-unknown-error; docker's "could not select
device driver" says that a run meant for the CPU passes no --gpus.)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge import gpu_library
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E, W = Severity.ERROR, Severity.WARN


def empty_draw_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("count"):
        step = ("np.random.choice was given a count of 0 (or less) to draw from: the number the code computed before the call (the "
                "size of a point cloud, of a mask's selection, len() of a list, an integer division such as N//10 of a small N) came "
                "out 0: print it there and what it is computed from; the data it counts is not what the code was written for: empty "
                "(a file that loaded no points, a filter that kept none), smaller than the division assumes, or of a size the code "
                "does not handle (a much larger input whose count a limit or a setting turns to 0)")
    elif out.get("larger"):
        step = ("the draw asks for more items than there are (random.sample(k) or choice(replace=False) with k above len()): a "
                "class, an identity or a split with fewer items than the sampler's k (its instances per class, the batch), or a "
                "smaller dataset than the configuration assumes: print len() of what it draws from; lower k, or draw with "
                "replacement where a group is small")
    else:
        step = ("the list or array it draws from is empty: most often a data folder or a glob that found no files (a wrong root "
                "or split name in the configuration, another file extension, a drive the container or the job does not see), or a "
                "filter that kept nothing (a class with no samples, a split with none): print(len(...)) of it before the draw and "
                "ls the path the configuration names")
    out["step"] = step
    return out


EXECUTABLE = re.compile(r"^\s*(?:>\s*)?Executable:\s*(?P<program>\S+)")
NODE = re.compile(r"^\s*(?:>\s*)?Node:\s*(?P<node>\S+)")
SCRIPT = re.compile(r"\.(?:py|sh|pl|rb|lua)$")


def mpi_exec_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    for text in context[:10]:
        ex, node = EXECUTABLE.match(text), NODE.match(text)
        if ex and "program" not in out:
            out["program"] = ex.group("program")
        if node and "node" not in out:
            out["node"] = node.group("node")
    program = out.get("program", "") or out.get("prun", "")
    where = f" on {out['node']}" if out.get("node") else ""
    if out.get("prun") and not SCRIPT.search(program):
        step = (f"OpenHPC's prun found no {program} on the PATH of the batch job: load the module or activate the environment that "
                f"has it in the batch script before prun (module load NAME, or conda activate ENV after conda's shell hook; which "
                f"{program} then prints its path), or give prun the full path to it")
    elif SCRIPT.search(program):
        interpreter = "bash" if program.endswith(".sh") else "python"
        step = (f"{program} is a script: give mpirun its interpreter (mpirun -np N {interpreter} {program} ...), or make it "
                f"executable (chmod +x {program}, with a #!/usr/bin/env {interpreter} first line); the path must exist{where} "
                "(mpirun starts it in the same folder on every node)")
    elif out.get("find") or out.get("execvp"):
        step = (f"the program{' ' + program if program else ''} is not on the PATH mpirun's processes get{where}: give its full path "
                "(mpirun ... $(which python) train.py), pass the environment (-x PATH -x LD_LIBRARY_PATH, or --prefix), or activate "
                "the environment on every node; mpirun takes the first word it does not know for the program: a misspelt option "
                "(-np2, --hostfile without its value) is read as one")
    else:
        step = (f"the program{' ' + program if program else ''} is there but cannot be run{where}: a file without its executable bit "
                "(chmod +x, or start it through its interpreter: mpirun -np N python train.py), a path not on that node, or a "
                "file system mounted noexec")
    out["step"] = step
    return out


SOFT_PLACEMENT = ("allow soft placement, so that TensorFlow puts such operations on the CPU: TensorFlow 1 "
                  "tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) (an Estimator: tf.estimator.RunConfig(session_config=...)); "
                  "TensorFlow 2 tf.config.set_soft_device_placement(True); or pin only the operations that have GPU kernels (summaries and "
                  "integer ops under tf.device('/cpu:0'))")


def tf_placement_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("colocated") is not None:
        out["step"] = ("the operation must share a device with operations that can only run on the CPU (a TensorArray's or a "
                       "variable's colocation group, ops created under tf.device('/cpu:0')) while it is pinned elsewhere: " + SOFT_PLACEMENT)
    else:
        out["step"] = ("the operation has no GPU kernel for its data type (int32 and string ops, summaries, some gradients) and "
                       "is pinned to the GPU: " + SOFT_PLACEMENT)
    return out


# TensorFlow's loader, one line per CUDA library it could not open ("Could not load dynamic library 'libcudnn.so.8'; dlerror: ...")
NOT_LOADED = re.compile(r"Could not load dynamic library '(?P<library>[^']+)'")


def libraries_not_loaded(line: int, before: list[str]) -> dict:
    """The CUDA libraries TensorFlow names as not loaded in the lines before its summary (`before`: nearest last)."""
    names = list(dict.fromkeys(m.group("library") for text in before if (m := NOT_LOADED.search(text))))
    if not names:
        return {"step": "the 'Could not load dynamic library' lines before it (not in this log) name the missing libraries"}
    # each with the part of the stack its name says it is, and at which version (knowledge/gpu_library.py)
    told = [found.detail() if (found := gpu_library.library(name)) is not None else name for name in names]
    return {"libraries": ", ".join(names), "step": f"the libraries it could not load: {', '.join(told)}"}


PATTERNS = [
    pattern(
        "tensorflow-gpu-libraries-not-loaded",
        "platform",
        CAUSE,
        W,
        "TensorFlow could not load its CUDA libraries and registered no GPU: it runs on the CPU only",
        r"Cannot dlopen some GPU libraries\.",
        ("Cannot dlopen some GPU libraries",),
        why="""TensorFlow found the GPU but could not open the CUDA libraries it was built against (libcudart, libcublas,
        libcudnn, ...: the 'Could not load dynamic library' lines before this one name them): it skips registering GPU devices
        and runs every operation on the CPU. The run then goes on far slower (which looks like a hang in a multi-GPU job),
        or fails where the code asks for a GPU. Each TensorFlow release is built for one CUDA and one cuDNN version; other
        versions on the machine, or libraries off LD_LIBRARY_PATH, are not found.""",
        fix="""STEP; install the CUDA and cuDNN versions this TensorFlow release was built for (TensorFlow's tested build
        configurations; from 2.14 pip install tensorflow[and-cuda] brings them), or put their folder on LD_LIBRARY_PATH; check
        with python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"""".replace("\n        ", " "),
        examples=[
            ("[1,0]<stderr>:2020-05-19 23:00:45.870726: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1598] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required libraries for your platform.",
             "google/automl#427 (horovodrun -np 2: both processes then hung)"),
            ("2022-07-10 15:08:09.276917: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required libraries for your platform.",
             "JdeRobot/BehaviorMetrics#385 (libcusolver.so.11 and libcudnn.so.8 not found); tensorflow/tensorflow#60646 (TF 2.12: an empty GPU list)"),
        ],
        not_examples=[
            "2020-05-19 23:00:45.870715: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened dynamic library libcudnn.so.7",
            "2019-12-01 20:12:55.601941: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.",
        ],
        context_before=40,
        fields_before=libraries_not_loaded,
    ),
    pattern(
        "dataset-reported-empty",
        "dataloader",
        CAUSE,
        W,
        "the program reports that its data holds no items (0 images, tracks, clips or samples found): what it trains on is empty",
        # a count the program prints as it loads its data; not a count of items it skipped or of a regularisation set (kohya's
        # "num reg images: 0" is a healthy run's)
        r"\b(?:found|loaded|number of|num)\b(?![^:=\n]*\b(?:reg|regularization|corrupt\w*|invalid|skipped|missing|duplicates?|bad)\b)"
        r"[^:=\n]{0,40}?\b(?P<what>images?|samples?|files?|tracks?|clips?|videos?|examples?|items?|sequences?|scenes?|utterances?)\b"
        r"[^:=\n0-9]{0,20}[:=]\s*0\b(?![.\d])"
        r"|\b(?:found|loaded) 0 (?P<what2>images|samples|files|tracks|clips|videos|examples|items|sequences|scenes|utterances)\b"
        # (diagB16) the program's own check of its inputs, that kept none: "ERROR: No image valid", "no image is valid"
        r"|\bno (?P<what3>images?|samples?|files?|clips?|videos?) (?:is |are )?valid\b",
        ("ound", "oaded", "umber of", "num", "valid"),
        why="""The program counted the items of its data as it loaded them and found none. Whatever fails after this line
        (a sampler with nothing to draw, a loader that yields no batch, a division by the dataset's size, a traceback in
        the first epoch's loop) follows from it: the data path, its layout or a cache of it does not give the program what
        it looks for. A cached index of the data (a metadata or .pkl file written on an earlier run) keeps an empty count
        after the data changed.""",
        fix="""ls the folder the configuration names and compare it with the layout the program expects (the file extensions and
        sub-folders it globs for, a split or class name); delete a cached index of the data (the metadata/.pkl file it says it
        loaded) so that it is built again; print(len(dataset)) before training starts""".replace("\n        ", " "),
        examples=[
            ("Found tracks in dataset: 0", "ZFTurbo/Music-Source-Separation-Training#16 (metadata loaded from a cache; the traceback follows in the first epoch)"),
            ("Number of clips in the dataset:0", "IkeaASM/IKEA_ASM_Dataset#12 (pose-only data: the sampler then got num_samples=0)"),
            ("Found 0 images belonging to 24 classes.", "keras-team/keras#15575 (flow_from_directory: class folders found, no image read)"),
            ("Found 0 images belonging to 106 classes.", "IBM/image-classification-using-cnn-and-keras#16 (the classes list not matching the folders)"),
            ("[02-18 19:56:13] ERROR: No image valid", "yucornetto/MGMatting#39 (the images a second path names not found; DDP training went on)"),
            ("[2018/12/13 09:22:03.125] WARNING (15628) datasets.common       : no image is valid",
             "dong-x16/PortraitNet#14 (the dataset not prepared: the answer: prepare every dataset first)"),
        ],
        not_examples=[
            "  num reg images / 正則化画像の数: 0",  # kohya: no regularisation images, a healthy run
            "Found 0 corrupted images, skipping none",
            "Found 12000 images belonging to 10 classes.",
            "INFO Starting from step 0 (total_tokens=0, total_samples=0)",
        ],
        fields=groups,
        flags=re.IGNORECASE,
    ),
    pattern(
        "array-indexed-past-its-dimensions",
        "dataloader",
        CAUSE,
        E,
        "code indexed an array or a tensor with more dimensions than it has (x[:, 0] on a 1-D array): the data has another "
        "shape than the code was written for",
        # numpy's IndexError (its words before and after numpy 1.19), torch's
        r"IndexError: too many indices for array(?:: array is (?P<have>\d+)-dimensional, but (?P<indexed>\d+) were indexed)?"
        r"|IndexError: too many indices for tensor of dimension (?P<have2>\d+)",
        ("too many indices for",),
        why="""The line of the traceback's last frame indexes more axes than the array has. The code was written for data of
        another shape: stereo audio as (samples, 2) where the file or the reader gives mono (1-D), an RGB image (H, W, 3)
        where it is grayscale (H, W), a list of boxes (N, 4) where a filter left one box or none and the result was
        squeezed to 1-D. Either the input is not what the project expects, or the library that produced the array (an audio
        or image reader, a detection post-process) returns another shape in the installed version than in the one the code
        was written against.""",
        fix="""print(x.shape) of the array the failing line indexes, and compare it with what the line expects; then fix what made it:
        convert the input to the layout the project expects (an image to RGB, audio to the channel count it reads), keep a
        dimension a filter or squeeze() drops (np.atleast_2d, reshape(-1, 4)), or install the version of the reading library the
        project names (its README or requirements: a reader that changed the shape it returns)""".replace("\n        ", " "),
        examples=[
            ("IndexError: too many indices for array", "andabi/music-source-separation#1 (wav[:, 0] on what the installed librosa returned; the author used librosa 0.5.1)"),
            ("IndexError: too many indices for array: array is 1-dimensional, but 2 were indexed",
             "uzh-rpg/rpg_public_dronet#48 (match_idx[:, 0]); hpc203/nanodet-plus-opencv#2 (indices[:, 0] of OpenCV's NMSBoxes, 1-D in newer "
             "OpenCV); AabyssZG/Raster-Terminator#1 ('array is 2-dimensional, but 3 were indexed': a grayscale image where RGB was expected)"),
        ],
        not_examples=[
            "IndexError: index 5 is out of bounds for axis 0 with size 5",  # a position past the end, not an axis too many
            "IndexError: list index out of range",
        ],
        fields=groups,
    ),
    pattern(
        "syncbn-replicas-not-connected",
        "ddp",
        CAUSE,
        E,
        "a synchronized BatchNorm of the PyTorch-Encoding / sync_batchnorm kind ran without the DataParallel that connects its "
        "replicas (one GPU, or torch's plain nn.DataParallel)",
        # the slave pipe of encoding's (and vacancy's Synchronized-BatchNorm-PyTorch's) SyncBN, set only by their own replication callback
        r"'NoneType' object has no attribute 'run_slave'",
        ("run_slave",),
        why="""Before torch 1.1 had nn.SyncBatchNorm, projects synchronized BatchNorm across DataParallel's replicas with
        PyTorch-Encoding's encoding.nn (Sync)BatchNorm2d or the sync_batchnorm package: each replica sends its statistics to
        the first through a pipe that the library's own DataParallel (encoding.parallel.DataParallelModel,
        sync_batchnorm's DataParallelWithCallback or patch_replication_callback) connects as it copies the model. Run any
        other way (on one GPU, where DataParallel makes no replicas, or under torch's plain nn.DataParallel or
        DistributedDataParallel) the pipe was never connected and is None.""",
        fix="""on one GPU: use torch.nn.BatchNorm2d in place of the synchronized one (the project's norm-layer option, or swap the
        class); on several: wrap the model in the library's own DataParallel (encoding.parallel.DataParallelModel;
        sync_batchnorm.DataParallelWithCallback, or patch_replication_callback(model) after nn.DataParallel), or move to
        torch.nn.SyncBatchNorm with DistributedDataParallel (torch.nn.SyncBatchNorm.convert_sync_batchnorm(model), one process
        per GPU under torchrun)""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'NoneType' object has no attribute 'run_slave'",
             "zhanghang1989/PyTorch-Encoding#148 (one GPU: the maintainer's answer is torch.nn's BatchNorm); wuhuikai/FastFCN#10 "
             "(CUDA_VISIBLE_DEVICES=0); wuhuikai/FastFCN#56 (the latest branch moved to torch's SyncBatchNorm)"),
        ],
        not_examples=[
            "AttributeError: 'NoneType' object has no attribute 'dtype'",  # torch's SyncBatchNorm with track_running_stats=False (pytorch/pytorch#49730)
            "    mean, inv_std = self._slave_pipe.run_slave(_ChildMessage(xsum, xsqsum, N))",  # the frame's source line
        ],
    ),
    pattern(
        "draw-from-empty-population",
        "dataloader",
        CAUSE,
        E,
        "code drew random samples from a population that is empty, or smaller than the draw (a data path that found nothing, a "
        "filter that kept nothing, a count that came out 0)",
        # numpy's Generator/RandomState.choice (its integer and array forms, and numpy before 1.17's words); Python's random module
        r"(?P<count>\ba must be greater than 0 unless no samples are taken|(?:ValueError: |^)a must be greater than 0\s*$)"
        r"|(?P<empty>'a' cannot be empty unless no samples are taken|\ba must be non-empty\b|Cannot choose from an empty sequence)"
        r"|(?P<larger>(?:ValueError: |^)Sample larger than population\b|Cannot take a larger sample than population when 'replace=False')",
        ("a must be greater than 0", "cannot be empty unless", "a must be non-empty", "Cannot choose from an empty sequence",
         "Sample larger than population", "Cannot take a larger sample"),
        why="""A random draw (np.random.choice, random.choice, random.sample) was made from nothing, or asked for more items
        than there are. Training code draws from what its data gave: files a glob found, points a cloud holds, indices a mask
        selects, the images of one class. The draw is where an empty input shows first; the cause is before it: a path that
        points nowhere (a wrong root, split or extension; a mount the job does not see), a filter that kept nothing, or a size
        computed from a smaller input than the code was written for. Nothing about GPUs or distribution is involved (though a
        split of the data across ranks can leave one rank's share empty).""",
        fix="STEP",
        examples=[
            ("ValueError: a must be greater than 0 unless no samples are taken",
             "mabaorui/OnSurfacePrior#2 (np.random.choice(SP_NUM//10, ...) with SP_NUM 0 for a 2.5M-point cloud); YudongGuo/AD-NeRF#24 (coords_norect.shape[0] = 0)"),
            ("ValueError: 'a' cannot be empty unless no samples are taken", "zhykoties/TimeSeries#8 (the array drawn from was empty for that split)"),
            ("ValueError: Sample larger than population or is negative",
             "zhangzjn/FReeNet#11 (random.sample in a Dataset's __getitem__); yxuansu/PlanGen#7 (random.sample of a batch from the training "
             "indices); cbfinn/maml#63 (omniglot: a class with fewer images than the draw)"),
            ("ValueError: Sample larger than population", "chiphuyen/stanford-tensorflow-tutorials#84 (Python 3.5's wording)"),
            ("IndexError: Cannot choose from an empty sequence",
             "ZYK100/MMN#2 (random.choice of a gallery file list that found no files); andabi/deep-voice-conversion#77 (wav_files empty: the data "
             "path not set); CompVis/adaptive-style-transfer#27 (a content folder the docker container could not read)"),
        ],
        not_examples=[
            "ValueError: num_samples should be a positive integer value, but got num_samples=0",  # a sampler over an empty dataset: sampler-zero-samples
            "ValueError: probabilities do not sum to 1",  # choice's p, another verdict
            "IndexError: list index out of range",
            "        # a must be greater than 0 when replace=False",
        ],
        fields=empty_draw_fields,
    ),
    pattern(
        "inference-tensor-outside-inference-mode",
        "numerics",
        CAUSE,
        E,
        "a tensor made under torch.inference_mode() was updated in place or used for autograd outside it",
        # c10's checks of an inference tensor (TensorImpl, VariableTypeManual, SavedVariable), in torch >= 1.9
        r"Inplace update to inference tensor outside InferenceMode is not allowed"
        r"|Inference tensors (?:cannot|can't|can not) be saved for backward"
        r"|Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"
        r"|Inference tensors do not track version counter"
        r"|Cannot set version_counter for inference tensor",
        ("nference tensor",),
        why="""torch.inference_mode() (torch >= 1.9) marks every tensor made inside it as an inference tensor: no version
        counter, no autograd. Outside inference mode such a tensor can be read, but not changed in place nor saved for a
        backward pass. Code that made something under inference mode and used it later for training hits this: Lightning's
        validation, test and predict loops run under inference_mode by default (Trainer(inference_mode=True)), so do functions
        decorated @torch.inference_mode() (a generate, a pipeline, a hub model's forward); what leaks is a model's output, a
        buffer created or updated there (BatchNorm's running stats, a rotary embedding's cos/sin cache, a KV cache) or a
        tensor cached by a library between generation and training (RLHF trainers that generate then train).""",
        fix="""clone the tensor where it leaves inference mode (x = x.clone(); a module's buffers: reload or rebuild the module outside
        inference mode), or compute it under torch.no_grad() instead of torch.inference_mode() (Lightning: Trainer(inference_mode=False);
        a function decorated @torch.inference_mode(): @torch.no_grad()); a library's cache made while generating and reused in
        training (TRL/unsloth GRPO, PPO trainers): update the library, these are known and fixed there""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update",
             "lucidrains/gigagan-pytorch#36 (accelerate multi-GPU training: the generator's output updated in place)"),
            ("RuntimeError: Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.",
             "unslothai/unsloth#2434 (GRPO on Qwen3: fixed in the library); ai4co/rl4co#272 (Lightning's training step); facebookresearch/dinov2#472 (a decorated forward)"),
            ("RuntimeError:Inference tensors can't be saved for backward.To work around you can make a clone to get a normal tensor and use it in autograd",
             "hiyouga/LlamaFactory#184 (PPO on Baichuan-13B: fixed by updating the code)"),
        ],
        not_examples=[
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",  # no_grad: another verdict
            "  inference_mode: true",  # a configuration dump
            "UserWarning: torch.inference_mode is enabled; gradients will not be computed",
        ],
    ),
    pattern(
        "tf-op-no-gpu-placement",
        "platform",
        CAUSE,
        E,
        "TensorFlow cannot put an operation on the device it was pinned to (no GPU kernel for it, or its colocation group "
        "needs the CPU) and soft placement is off",
        # TensorFlow 1's and 2's placer, when the GPU is registered (not classes14b's "no devices matching that specification")
        r"Cannot assign a device (?:for operation|to node) '?(?P<op>[^':\s]+)'?: Could not satisfy explicit device specification "
        r"'(?P<spec>[^']*)' because (?:no supported kernel for GPU devices is available"
        r"|the node (?:\{\{colocation_node [^}]*\}\} )?was (?P<colocated>colocated) with a group of nodes that required incompatible device)",
        ("Could not satisfy explicit device specification",),
        why="""TensorFlow places each operation on a device; code that pins operations (tf.device('/gpu:0'), a tower per GPU,
        slim's and Estimator's multi-GPU replicas) makes that placement a requirement. Here the GPU is registered and
        works, but this operation cannot run there: it has no GPU kernel for its data type (int32 and string operations,
        summaries, some gradients), or it must share a device with operations that only have CPU kernels (a TensorArray's
        gradient, a variable placed on the CPU). With soft placement off, TensorFlow stops instead of putting it on the CPU.""",
        fix="STEP",
        examples=[
            ("InvalidArgumentError (see above for traceback): Cannot assign a device for operation 'InceptionV4/Logits/Predictions': Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.",
             "tensorflow/models#4548 (slim's train_image_classifier)"),
            ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for operation 'InceptionV4/AuxLogits/Aux_logits/weights/Adam_1': Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.",
             "tensorflow/models#5522"),
            ("InvalidArgumentError: Cannot assign a device for operation 'gradients/map/while/map/while/TensorArrayWrite/TensorArrayWriteV3_grad/TensorArrayGrad/TensorArrayGradV3/f_acc': Could not satisfy explicit device specification '' because the node was colocated with a group of nodes that required incompatible device '/job:l",
             "Breta01/handwriting-ocr#56 (the CTC word classifier's TensorArray gradient)"),
        ],
        not_examples=[
            # the GPU is not registered at all (classes14b's tensorflow-gpu-not-visible)
            "tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device to node 'gradients/ff_1/add_grad/BroadcastGradientArgs': Could not satisfy explicit device specification '/device:GPU:0' because no devices matching that specification are registered in this process; available devices: /job:localhost/replica:0/task:0/cpu:0",
            "2018-04-25 13:29:00.631243: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Found device 0 with properties:",
        ],
        fields=tf_placement_fields,
    ),
]

PATTERNS_EARLY = [
    pattern(
        "mpirun-program-not-started",
        "launcher",
        CAUSE,
        E,
        "mpirun could not start the program it was given on a node: not found there, or not executable",
        # Open MPI's (and its prterun's) help texts; MPICH/Intel MPI's Hydra proxy
        r"(?:mpirun|mpiexec|orterun|prterun) was unable to launch the specified application as it could not access"
        r"|(?:mpirun|mpiexec|orterun|prterun) was unable to (?P<find>find) the specified executable file"
        r"|HYDU_create_process \([^)]*\): (?P<execvp>execvp) error on file (?P<program>\S+) \((?P<reason>[^)]+)\)"
        # (diagI33) OpenHPC's prun, the wrapper that starts the program through the cluster's MPI launcher (dev10 bi-altgg slurm.out)
        r"|\[prun\] Error: Unable to access executable -> (?P<prun>\S+)",
        ("was unable to launch the specified application", "was unable to find the specified executable", "execvp error on file",
         "Unable to access executable"),
        why="""mpirun starts one copy of the program it was given per rank, on every host of the job, before any of the
        program's own code runs. Here it could not: the program is not at that path or on the PATH the remote processes get
        (an environment activated only in the launching shell, a path that exists only on the launching node), or it is
        there but cannot be executed (a Python or shell script without its executable bit or its #! line: mpirun runs the
        file itself unless it is given the interpreter). Open MPI also takes the first word of the command line it does not
        know for the program, so a misspelt option reads as a program not found. The training code and the GPUs are not
        involved.""",
        fix="STEP",
        examples=[
            ("mpirun was unable to launch the specified application as it could not access", "TRI-ML/dd3d#6 (Executable: ./script/train.py); fastpm/fastpm#101"),
            ("mpirun was unable to find the specified executable file, and therefore", "QEF/q-e#32 (pw.x not on the PATH); JuliaParallel/MPI.jl#237 (julia not on the PATH)"),
            ("mpiexec was unable to find the specified executable file, and therefore", "ComputationalRadiationPhysics/picongpu#1984 (Executable: LD_LIBRARY_PATH: a variable taken for the program)"),
            ("[proxy:0:2@gpu-2-4.local] HYDU_create_process (./utils/launch/launch.c:69): execvp error on file 0 (No such file or directory)", "cBio/cbio-cluster#274"),
            ("[prun] Error: Unable to access executable -> python3", "dev10 bi-altgg slurm.out (OpenHPC's prun; no Python module loaded in the batch script)"),
        ],
        not_examples=[
            # the program ran and a rank failed: its own output says why (a launcher-only line)
            "mpirun noticed that process rank 0 with PID 0 on node gpu01 exited on signal 9 (Killed).",
            "Primary job  terminated normally, but 1 process returned",
            "There are not enough slots available in the system to satisfy the 4",
        ],
        context_after=10,
        fields=mpi_exec_fields,
    ),
]
