"""Rules for classes of messages of the thirteenth round (issue 35, diagB13): the honest "unrecognised" and "inconclusive"
answers on the retired held-out part heldout12 whose log holds a line that decides the cause, in a class that recurs
across projects.

- a program of the container stack that the container runtime runs is not installed: the low-level runtime (runc, crun:
  "no runtime binary found from candidate list"), the NVIDIA runtime hook or the NVIDIA runtime itself ("executable file
  not found in $PATH", "stat ...: no such file or directory", "fork/exec ...: no such file or directory");
- a file torch.load or pickle refused at its first byte ("invalid load key, 'v'", torch 2.6's "Unsupported operand 118"): not
  the data that was saved but a git-lfs pointer ('v'), a web page ('<') or a cut download;
- a process that lost its X display, or never had one (Xlib's "XIO: fatal IO error ... on X server", Tk's "no display
  name and no $DISPLAY environment variable", GTK's "cannot open display"): a plot or window opened from a job on a node
  without a reachable display;
- a distributed sampler's own assert (Lightning's unrepeated sampler for predict/test/validate, torch <= 1.7's
  DistributedSampler): the dataset has fewer samples than there are ranks;
- DataParallel's warning that it gathered scalars into a vector, before a failure where that vector is used as a scalar
  (backward, or a size mismatch in the loss): the model returns its loss, one scalar per replica.

(Three classes of the round widen existing rules: DDP's unfinished-reduction message cut by the paste is read by
ddp-unused-parameters, the zip reader's "invalid header or archive is corrupted" by checkpoint-corrupt, and a program's check
that names the package to install ("Please install av to use video compression") by setup-refused-by-program.)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, groups, pattern

E, W = Severity.ERROR, Severity.WARN

# What each missing program of the container stack is, and what installs it.
CONTAINER_STEPS = (
    (re.compile(r"nvidia-container-runtime-hook|nvidia-container-toolkit"),
     "the NVIDIA runtime hook (nvidia-container-runtime-hook) is missing: install the NVIDIA Container Toolkit package that provides it, "
     "the same release as nvidia-container-runtime (sudo apt-get install --reinstall nvidia-container-toolkit, or yum/dnf); a package "
     "release that left it out: upgrade to the fixed packages"),
    (re.compile(r"nvidia-container-runtime"),
     "the NVIDIA runtime (nvidia-container-runtime) the daemon is configured with is missing: install the NVIDIA Container Toolkit, then "
     "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker (or remove the runtime from /etc/docker/daemon.json)"),
    (re.compile(r"runc|crun|candidate list"),
     "the low-level runtime (runc or crun) is missing: install it with the docker engine's packages (containerd.io / runc); under WSL, "
     "use Docker Desktop's WSL integration rather than a docker installed inside the distro"),
)


def container_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    missing = next((v for k, v in out.items() if k.startswith("binary") and v), "") or out.get("candidates", "")
    out = {"missing": missing.strip() or "a runtime binary"}
    out["step"] = next((step for rx, step in CONTAINER_STEPS if rx.search(missing)), CONTAINER_STEPS[-1][1])
    return out


# What the first byte of a file pickle refused says it is (the weights-only unpickler names it by its code: 118 'v', 60 '<').
LOAD_KEY_STEPS = {
    "v": "the file starts with 'v': it is a git-lfs pointer (\"version https://git-lfs.github.com/spec/v1\", a few hundred bytes) left where "
         "the weights should be: git lfs install && git lfs pull in the clone (or download the file itself; a repository over its LFS "
         "quota serves only pointers)",
    "<": "the file starts with '<': it is a web page (HTML) saved in place of the file: the download link answered with a page (a "
         "quota, sign-in or confirmation page, a 404): download the file itself again (the site's direct link, gdown for Google Drive)",
}


def load_key_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    key = out.get("key") or {"118": "v", "60": "<"}.get(out.get("operand", ""), "")
    out["key"] = key
    out["step"] = LOAD_KEY_STEPS.get(key) or (
        f"the file starts with '{key}', a byte no pickle starts with: it was cut or corrupted in transfer, or is another format than the "
        "loader reads: download or save it again and compare its size (or checksum) with the source's")
    return out


PATTERNS_EARLY = [
    pattern(
        "load-file-not-saved-data",
        "platform",
        CAUSE,
        E,
        "the file torch.load (or pickle) read is not the data that was saved: a git-lfs pointer, a web page, or a cut or corrupt download",
        # pickle's refusal of the file's first byte; torch >= 2.6's weights-only unpickler says it by the byte's code
        r"UnpicklingError: invalid load key, '(?P<key>\\x[0-9a-fA-F]{2}|[^']{1,2})'|WeightsUnpickler error: Unsupported operand (?P<operand>118|60)\b",
        ("invalid load key", "Unsupported operand"),
        why="""A checkpoint, a dataset or a model read with torch.load or pickle starts with the bytes pickle wrote; this file
        starts with another. Its first byte says what it is: 'v' is a git-lfs pointer file ("version https://git-lfs..."),
        which a clone made without git-lfs installed (or of a repository over its LFS bandwidth quota) leaves in place of
        the weights; '<' is a web page, which a download link answered with instead of the file (a quota, sign-in or
        confirmation page, a 404); any other byte a file cut or corrupted in transfer, or one in another format. The code
        and the environment are fine: the file is not the one that was saved.""",
        fix="""STEP; check with: head -c 200 FILE; ls -l FILE   # a pointer or a page is a few hundred bytes of text""".replace("\n        ", " "),
        examples=[
            ("_pickle.UnpicklingError: invalid load key, 'v'.",
             "hhj1897/face_parsing#3 (the maintainer: download the weights with git-lfs, git lfs pull); Rose-STL-Lab/LIMO#3; svip-lab/PPGNet#2"),
            ("UnpicklingError: invalid load key, '<'.", "nengo/nengo#1692 (a Google Drive download that did not complete); chsasank/ATIS.keras#4"),
            ("_pickle.UnpicklingError: invalid load key, '\\x0a'.", "Puzer/stylegan-encoder#29 (a copied file); bagrii/address_extraction#1 (re-downloading fixed it)"),
            ("Please file an issue with the following so that we can make `weights_only=True` compatible with your use case: WeightsUnpickler error: Unsupported operand 118",
             "pytorch/pytorch#150998 (torch 2.6; the maintainer: the file is corrupted); OpenBMB/MiniCPM#185"),
        ],
        not_examples=[
            # torch 2.6's weights-only load refusing a class a healthy file holds: another answer (weights_only=False for a trusted file)
            "_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` will likely succeed. WeightsUnpickler error: Unsupported class numpy.core.multiarray._reconstruct",
            "RuntimeError: Invalid magic number; corrupt file?",
        ],
        fields=load_key_fields,
    ),
    pattern(
        "container-runtime-binary-missing",
        "platform",
        CAUSE,
        E,
        "the container runtime cannot start a program of the container stack: that program (runc, the NVIDIA runtime or its runtime hook) is not installed",
        # nvidia-container-runtime's own lookup of the runc it wraps; the daemon or containerd exec'ing a runtime or a hook
        r"no runtime binary found from candidate list: \[(?P<candidates>[^\]]*)\]"
        r"|exec: \\?\"(?P<binary>nvidia-container-runtime(?:-hook)?|runc|crun)\\?\": executable file not found in \$PATH"
        r"|stat (?P<binary2>\S*nvidia-container-runtime-hook): no such file or directory"
        r"|fork/exec (?P<binary3>\S*(?:nvidia-container-runtime|/runc|/crun))\s*: no such file or directory",
        ("no runtime binary found", "executable file not found", "runtime-hook: no such file", "fork/exec "),
        why="""Starting a container is a chain of programs: the docker daemon (or containerd, CRI-O) runs a low-level OCI runtime
        (runc or crun); for GPUs, the NVIDIA runtime (nvidia-container-runtime) runs in its place, adds the NVIDIA hook
        (nvidia-container-runtime-hook, from the NVIDIA Container Toolkit) to the container's spec and then runs runc itself.
        Each looks the next one up by name or path, and here one was not there: runc/crun not installed (a docker that came
        with a WSL distro or a snap without them), a hook or runtime package removed, not installed, or left out of a package
        release, or a path in /etc/docker/daemon.json to a program that is not at it. No container starts with that runtime,
        whatever the GPU and its driver.""",
        fix="""STEP; then docker run --rm --gpus all ubuntu nvidia-smi   # (which runc nvidia-container-runtime nvidia-container-runtime-hook; docker info | grep -i runtime) shows what is there""".replace("\n        ", " "),
        examples=[
            ("ERRO[0000] failed to create NVIDIA Container Runtime: error constructing low-level runtime: error locating runtime: no runtime binary found from candidate list: [docker-runc runc crun]",
             "domesticatedviking/TextyMcSpeechy#47 (WSL: the distro's docker had no runc; Docker Desktop's WSL integration fixed it)"),
            ("docker: Error response from daemon: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v1.linux/moby/af42/log.json: no such file or directory): nvidia-container-runtime did not terminate sucessfully: 2019/07/23 17:28:30 ERROR: nvidia-container-runtime: inject NVIDIA hook: stat /usr/bin/nvidia-container-runtime-hook: no such file or directory",
             "NVIDIA/nvidia-container-runtime#68 (the 3.0.0 packages without the hook; fixed packages released the next day); NVIDIA/nvidia-docker#1017"),
            ('docker: Error response from daemon: OCI runtime create failed: exec: "nvidia-container-runtime-hook": executable file not found in $PATH: unknown.',
             "NVIDIA/nvidia-docker#958"),
            ('failed to create shim task: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v2.task/moby/8887/log.json: no such file or directory): exec: "nvidia-container-runtime": executable file not found in $PATH: unknown',
             "NVlabs/BundleSDF#95; NVIDIA/nvidia-docker#1190 (the daemon configured with the nvidia runtime, the runtime not installed)"),
            ("docker: Error response from daemon: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/docker/containerd/daemon/io.containerd.runtime.v1.linux/moby/189c/log.json: no such file or directory): fork/exec /usr/local/bin/crun : no such file or directory: : unknown.",
             "containers/crun#455 (daemon.json's runtime path with a trailing space)"),
        ],
        not_examples=[
            # the container started, but without the NVIDIA hook: the image has no nvidia-smi of its own (another verdict)
            'docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused "exec: \\"nvidia-smi\\": executable file not found in $PATH": unknown.',
            "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory",  # the driver's libraries
            "FileNotFoundError: [Errno 2] No such file or directory: '/data/train.json'",
        ],
        fields=container_fields,
    ),
    pattern(
        "display-unavailable",
        "platform",
        CAUSE,
        E,
        "the program lost its X11 display, or has none: a window or an interactive plot was opened where no display is reachable",
        # Xlib's default I/O error handler prints this and exits the process; Tk and GTK refuse to start without a display
        r"(?:XIO:\s+f|Gdk-Message: .*: F)atal IO error \d+ \([^)]*\) on X server \"?(?P<display>[^\"\s]*?)\.?(?:\"|\s|$)"
        r"|TclError: (?:no display name and no \$DISPLAY environment variable|couldn't connect to display \"?(?P<display2>[^\"\s]*))"
        r"|Gtk-WARNING \*\*:(?: [\d:.]+:)? cannot open display:? ?(?P<display3>\S*)|Can't initialize GTK backend in function 'cvInitSystem'",
        ("fatal IO error", "Fatal IO error", "no display name and no $DISPLAY", "couldn't connect to display", "cannot open display", "Can't initialize GTK backend"),
        why="""A plot shown in a window (matplotlib's interactive backend, plt.show(), cv2.imshow, a visualiser, TensorBoard's or
        a GUI toolkit's window) talks to an X server: the one DISPLAY names. Over SSH with X11 forwarding (ssh -X, DISPLAY
        localhost:10.0 and up) that display lives only as long as the SSH session and its forwarding; a job left running
        after the session closed, or under a scheduler or on a node with no display at all, has none. Xlib then ends the
        process ("XIO: fatal IO error ... on X server"), and Tk or GTK refuse to start; in a distributed job that rank's
        exit makes the launcher stop the others. Training itself needs no display.""",
        fix="""plot to files, not windows: export MPLBACKEND=Agg (or matplotlib.use("Agg") before pyplot is imported), save figures with
        plt.savefig instead of plt.show(), and turn off the project's visualisation/"show" option for training; start long jobs
        without X11 forwarding (unset DISPLAY; tmux, nohup or the scheduler rather than an ssh -X session)""".replace("\n        ", " "),
        examples=[
            ('XIO:  fatal IO error 0 (Success) on X server "localhost:12.0"',
             "PANPEIWEN/Infrared-Small-Target-Detection-Segmentation-Framework#2 (rank 0 of a torch.distributed.launch job; the launcher then stops rank 1); peterhpark/neuroclear#1"),
            ('XIO:  fatal IO error 25 (Inappropriate ioctl for device) on X server "localhost:10.0"',
             "mikemikezhu/FedILC#1 (matplotlib over SSH); jantic/DeOldify#323"),
            ("Gdk-Message: 18:13:36.341: ESO Linux Addon Manager: Fatal IO error 11 (Resource temporarily unavailable) on X server :0.",
             "Akselmo/ESOLinuxAddonManager#4 (GTK 3's handler: the same exit)"),
            ("_tkinter.TclError: no display name and no $DISPLAY environment variable",
             "laddng/LiPlate#1 (plt.figure with matplotlib's Tk backend); yinghualuowu/Python_VLPR#1 (on a server)"),
            ('_tkinter.TclError: couldn\'t connect to display ":0.0"', "scrtlabs/catalyst#39 (DISPLAY set to a display that is not there)"),
            ("(image:1): Gtk-WARNING **: cannot open display: ", "AIZOOTech/FaceMaskDetection#90 (cv2.imshow on a remote server without a desktop)"),
            ("(Capture Window:6947): Gtk-WARNING **: 12:46:58.287: cannot open display:", "hybridgroup/gocv#430 (a headless CentOS box)"),
            ("cv2.error: OpenCV(4.6.0) /io/opencv/modules/highgui/src/window_gtk.cpp:635: error: (-2:Unspecified error) Can't initialize GTK backend in function 'cvInitSystem'",
             "opencv/opencv#18461 (headless, or under cron/a service: remove imshow)"),
        ],
        not_examples=[
            "Fontconfig warning: ignoring UTF-8: not a valid region tag",
            "QStandardPaths: XDG_RUNTIME_DIR not set, defaulting to '/tmp/runtime-root'",
            "ValueError: fatal IO error in the user's own reader: file truncated",  # not Xlib's report
            # an OpenCV built without a GUI (opencv-python-headless): no display would help (another verdict)
            "cv2.error: OpenCV(4.5.1) ../modules/highgui/src/window_gtk.cpp:641: error: (-2:Unspecified error) GTK backend is not available in function 'cvInitSystem'",
        ],
        fields=lambda m, context: {"display": next((v for v in m.groups()[:3] if v), "") or "none"},
    ),
]


# The files and functions of the samplers whose own assert fails when a dataset has fewer samples than ranks: Lightning's
# unrepeated sampler (predict/test/validate on several devices), torch <= 1.7's DistributedSampler padding in __iter__
SAMPLER_ASSERTS = (
    (re.compile(r"(?:pytorch_lightning|lightning[/\\]pytorch)[/\\]overrides[/\\]distributed\.py$"), "__init__"),
    (re.compile(r"torch[/\\]utils[/\\]data[/\\]distributed\.py$"), "__iter__"),
)


def sampler_fewer_samples(sign, exception: str = "", message: str = "") -> dict:
    """The evidence of a distributed sampler's own assert (an AssertionError, or a traceback cut after its frame, raised in one
    of SAMPLER_ASSERTS), {} for any other exception or frame."""
    if sign is None or sign.kind != "exception":
        return {}
    last = sign.raised_in()
    if last is None or not (sign.cut or sign.what.rsplit(".", 1)[-1] == "AssertionError"):
        return {}
    path = last.path.replace("\\", "/")
    if not any(rx.search(path) and last.func == func for rx, func in SAMPLER_ASSERTS):
        return {}
    lightning = "lightning" in path
    return {
        "raised_in": f"{last.path}:{last.line} in {last.func}",
        "sampler": "Lightning's distributed sampler for predict/test/validate" if lightning else "torch's DistributedSampler",
    }


def by_frame(sign, exception: str = "", message: str = "") -> Optional[tuple[str, dict]]:
    """The class an unrecognised exception's traceback decides (knowledge/story.py): the finding id and its evidence."""
    said = sampler_fewer_samples(sign, exception, message)
    return ("sampler-fewer-samples-than-ranks", said) if said else None


PATTERNS_BY_FRAME = [
    pattern(
        "sampler-fewer-samples-than-ranks",
        "dataloader",
        CAUSE,
        E,
        "a distributed sampler's own check failed: the dataset has fewer samples than there are ranks (devices) to split it across",
        # the assert has no message: the traceback's innermost frame, the sampler's own code, decides it (knowledge/story.py)
        r"^AssertionError$",
        ("AssertionError",),
        why="""A distributed sampler gives each rank its share of the dataset. Lightning's sampler for predict, test and
        validate (UnrepeatedDistributedSampler, used when the Trainer runs on several devices) gives rank r the samples r,
        r+N, r+2N...; a rank whose share is empty (fewer samples than devices: a prediction on one series, a tiny test set)
        fails its `assert self.num_samples >= 1`. torch's DistributedSampler up to 1.7 pads the dataset to a multiple of the
        ranks by repeating it once, and asserts the padding sufficed: a dataset less than half as long as the number of
        ranks fails `assert len(indices) == self.total_size`. The training on those devices can be fine; the dataset is too
        small to split.""",
        fix="""run this step on one device (Lightning: a Trainer with devices=1 for predict/test, e.g. trainer=pl.Trainer(accelerator="gpu",
        devices=1) passed to the predict call), or give it at least as many samples as ranks; torch's sampler: a newer torch
        (1.8+ pads any size) or fewer ranks""".replace("\n        ", " "),
        examples=[
            ("AssertionError", "unit8co/darts#1945 (TFT predict with devices='auto'; devices=[0] works); unit8co/darts#1966 (predict after training with devices=-1)"),
            ("AssertionError", "pytorch/pytorch#45324, pytorch/pytorch#49172 (DistributedSampler with len(dataset) * 2 < number of ranks, torch 1.7)"),
        ],
        # the same bare AssertionError raised anywhere else (the program's own assert) is not this class: the frame decides
        not_examples=["AssertionError: can only join a child process", "AssertionError: Torch not compiled with CUDA enabled"],
        refines="unrecognised-failure",
    ),
    pattern(
        "dataparallel-scalar-loss-gathered",
        "ddp",
        CAUSE,
        E,
        "DataParallel gathered its replicas' scalar outputs (the loss) into a vector, one value per GPU, and the code used that vector as a scalar",
        # decided by DataParallel's warning before the failure (knowledge/story.py), never by the failure's line alone
        r"grad can be implicitly created only for (?:real )?scalar outputs",
        ("grad can be implicitly created only",),
        why="""A model that computes its loss inside forward() returns one scalar per replica under nn.DataParallel; DataParallel
        joins them along dimension 0, and since a scalar has no dimension it warns ("Was asked to gather along dimension 0,
        but all input tensors were scalars; will instead unsqueeze and return a vector") and returns a vector with one value
        per GPU. Code written for one GPU then uses that vector as the scalar it was: loss.backward() refuses a non-scalar
        ("grad can be implicitly created only for scalar outputs"), and a scalar such as a learned temperature multiplied into
        a tensor no longer broadcasts ("The size of tensor a (<GPUs>) must match ..."). The same code on one GPU runs.""",
        fix="""reduce what DataParallel returns before using it as a scalar: loss = loss.mean() (and .mean() or [0] on any other scalar forward()
        returns, such as a logit scale) before loss.backward(); or train with DistributedDataParallel (torchrun, one process per GPU),
        which gathers nothing, or on one GPU""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: grad can be implicitly created only for scalar outputs",
             "Turoad/lanedet#78 (--gpus 0 1: the traceback reaches _make_grads after the gather warning; one GPU trains); swarnaHub/ExplagraphGen#3"),
        ],
        not_examples=["UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector."],
        refines="python-exception",
    ),
]

PATTERNS = [
    pattern(
        "dataparallel-gathered-scalars",
        "ddp",
        HARMLESS,
        W,
        "DataParallel joined scalar outputs of its replicas into a vector (one value per GPU): fine where the code reduces it, a failure where it expects a scalar",
        r"Was asked to gather along dimension 0, but all input tensors were scalars",
        ("Was asked to gather along dimension 0",),
        why="""forward() under nn.DataParallel returned scalars (usually the loss, computed inside the model), one per replica;
        DataParallel returns them as a vector with one value per GPU. Code that reduces it (the transformers Trainer calls
        loss.mean(), many training loops do) runs on as it would on one GPU; code that uses the vector as a scalar fails at
        that use: backward() or a size mismatch (dataparallel-scalar-loss-gathered).""",
        fix="""nothing, if the code reduces what the model returns; else loss = loss.mean() before loss.backward() (and on any other scalar
        forward() returns)""".replace("\n        ", " "),
        examples=[
            ("/opt/conda/lib/python3.8/site-packages/torch/nn/parallel/_functions.py:65: UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector.",
             "jnhwkim/CLIP-ViL#2 (training goes on to iteration 1000 after it)"),
            ("python3.8/site-packages/torch/nn/parallel/_functions.py:68: UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector.",
             "swarnaHub/ExplagraphGen#3 (the user traced their failure to it)"),
        ],
        not_examples=["  warnings.warn('Was asked to gather along dimension 0, but all '"],  # the warning's source line: counted once
    ),
]

# Evidence that a failure after DataParallel's warning is the gathered vector's use: the exception, or where it was raised.
VECTOR_USED = re.compile(r"grad can be implicitly created only for (?:real )?scalar outputs|The size of tensor a \(\d+\) must match the size of tensor b \(\d+\)")
AUTOGRAD_BACKWARD = re.compile(r"torch[/\\]autograd[/\\]__init__\.py$")


def scalar_loss_gathered(sign, exception: str = "", message: str = "") -> dict:
    """The evidence that a failure is a gathered vector used as a scalar: backward's refusal of a non-scalar, a size mismatch,
    or a traceback cut inside autograd's backward (where that refusal is raised); {} for anything else."""
    said = VECTOR_USED.search(message or (sign.message if sign is not None else ""))
    if said:
        return {"message": said.group(0)}
    if sign is None or sign.kind != "exception" or not sign.cut:
        return {}
    last = sign.raised_in()
    if last is not None and AUTOGRAD_BACKWARD.search(last.path) and last.func in ("backward", "_make_grads"):
        return {"message": "the traceback is cut inside autograd's backward", "raised_in": f"{last.path}:{last.line} in {last.func}"}
    return {}
