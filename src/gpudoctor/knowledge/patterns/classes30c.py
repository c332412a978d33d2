"""The class of the thirtieth round (issue 35, diagC30): a program the run starts is not installed, or not on the PATH of the
process that starts it.

A project that separates or generates audio, reads or writes video, fetches weights with git-lfs or speaks text shells out to
a program of the system (ffmpeg, sox, git-lfs, espeak-ng, tesseract, colmap, blender, ...), looked up by name on the PATH
of its own process. When that program is not there the run stops, in one of five shapes: the shell's ("sh: 1: ffmpeg: not
found", "bash: ffmpeg: command not found", "zsh: command not found: ffmpeg", cmd.exe's "'ffmpeg' is not recognized as an
internal or external command", PowerShell's "The term 'ffmpeg' is not recognized"), Python's subprocess ("FileNotFoundError:
[Errno 2] No such file or directory: 'ffmpeg'", Windows' "[WinError 2] The system cannot find the file specified: 'ffmpeg'"),
Go's exec ('exec: "ffmpeg": executable file not found in $PATH'), or the program's own check of it (shutil.which, imageio's
"No ffmpeg exe could be found", "RuntimeError: `ffmpeg` not found. Please install `ffmpeg`", "Program 'ffmpeg' is not
found; perhaps install ffmpeg using 'apt-get install ffmpeg'", "ffmpeg is not installed").

One verdict, `program-not-found`, keyed on the name of a program the system provides (TOOLS): a bare name the message
gives is a program's only where it names one; a data file or folder of the same shape ('data', 'checkpoints') stays
path-not-found's, and the launchers (torchrun, srun), nvidia-smi and nvcc keep their own verdicts, which come first.

Written from heldout29's audiocraft-plus-49 (a RuntimeError "ffmpeg not found" on Windows, the reporter sure it was
installed) and the threads named beside the examples (the issues corpus).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# Programs of the system a GPU project shells out to, by the name it runs them by (no launcher, no driver tool, no compiler
# of CUDA's: those have their own verdicts); case-insensitive where a message spells it (FFmpeg)
TOOLS = (r"ffmpeg|ffprobe|avconv|sox|espeak(?:-ng)?|git-lfs|git|tesseract|colmap|blender|magick|imagemagick|pdflatex|latex|"
         r"cmake|ninja|gcc|g\+\+|java|npm|wget|curl|unzip|7z|mecab|openslide|vips|aria2c|yt-dlp|youtube-dl")
# The package that gives a program where its name is not the program's (apt's names)
PACKAGES = {"ffprobe": "ffmpeg", "avconv": "ffmpeg", "espeak": "espeak-ng", "tesseract": "tesseract-ocr", "magick": "imagemagick",
            "pdflatex": "texlive-latex-base", "latex": "texlive-latex-base", "ninja": "ninja-build", "g++": "g++", "java": "default-jre",
            "7z": "p7zip-full", "openslide": "openslide-tools", "vips": "libvips-tools", "aria2c": "aria2"}
# pip packages named after a program that are only its Python wrapper (the program is not in them)
WRAPPERS = {"ffmpeg": "pip's ffmpeg and ffmpeg-python are Python wrappers, not the program", "ffprobe": "pip's ffmpeg and "
            "ffmpeg-python are Python wrappers, not the program", "sox": "pip's sox is a Python wrapper, not the program",
            "tesseract": "pip's pytesseract is a Python wrapper, not the program"}

# The findings whose title gives what the line names and whose fix starts with the step it decides (knowledge/story.py)
DETAIL_SAID = ("program-not-found", "tensorrt-api-version")

PROGRAM = rf"(?:{TOOLS}|(?i:ffmpeg|ffprobe|git|sox|blender|colmap|tesseract))(?:\.exe)?"


def program_fields(m: re.Match, context: list[str]) -> dict:
    """The program the line names, and the step that installs it (the fix's first)."""
    out = groups(m, context)
    found = next(g for g in ("shell", "zsh", "cmd", "ps", "errno", "go", "own") if out.get(g))
    name = out[found].lower().removesuffix(".exe")
    package = PACKAGES.get(name, name)
    wrapper = f" ({WRAPPERS[name]})" if name in WRAPPERS else ""
    first = "winget install ffmpeg (Gyan.FFmpeg)" if package == "ffmpeg" else f"winget or choco install {package}"
    return {"prog": name, "detail": name, "read_as": "program-not-found",
            "step": f"install {name}: conda install -c conda-forge {package} in the environment the run uses, or the system's package "
                    f"(apt install {package}; brew install {package}; Windows: {first}, or its bin folder added to PATH){wrapper}"}


PATTERNS = [
    pattern(
        "program-not-found",
        "platform",
        CAUSE,
        E,
        "a program the run starts is not installed, or not on the PATH of the process that starts it",
        # the shell's words: sh/dash ("sh: 1: ffmpeg: not found"), bash, a script's name and line, zsh, cmd.exe, PowerShell
        r"(?:^|(?<=\s))(?:(?:/(?:usr/)?bin/)?(?:ba|da|z)?sh|[\w./\-]+\.sh)(?:: line \d+)?:\s?(?:\d+:\s?)?(?P<shell>" + PROGRAM + r"):\s?(?:command )?not found"
        r"|\bzsh: command not found: (?P<zsh>" + PROGRAM + r")\b"
        r"|'(?P<cmd>" + PROGRAM + r")' is not recognized as an internal or external command"
        r"|The term '(?P<ps>" + PROGRAM + r")' is not recognized as (?:the )?name of a cmdlet"
        # Python's subprocess given a program's bare name that the PATH does not hold: the exception itself, not a program's own
        # record of one it caught and went on from ("  CIDEr computation failed: [Errno 2] No such file or directory: 'java'",
        # then the results: heldout21w rajvardhan19-HPML_NanoChat, a run that completed)
        r"|(?:(?:FileNotFoundError|OSError|PermissionError):? ?|^\s*(?:\w*Error:\s*)?)\[(?:Errno|WinError) 2\] (?:No such file or directory|The system cannot find the file specified):? "
        r"['\"](?P<errno>" + PROGRAM + r")['\"]"
        # Go's exec.LookPath
        r"|exec: \\?\"(?P<go>" + PROGRAM + r")\\?\": executable file not found in [$%]PATH"
        # the program's own check (shutil.which and the like): "ffmpeg not found", "`ffmpeg` not found", "Program 'ffmpeg' is not
        # found", "No ffmpeg exe could be found", "ffmpeg is not installed", "ffmpeg was not found on your system"
        # (not a warning, nor a line that says the run went on without it)
        r"|^(?!.*(?i:\bwarn(?:ing)?\b|fall(?:ing|s)? ?back|\binstead\b|\bskipp?(?:ing)?\b|\bdisabl)).*?(?<![\w./\\-])(?:[Pp]rogram |[Nn]o )?[`'\"]?(?P<own>" + PROGRAM + r")[`'\"]?(?: exe(?:cutable)?| binary)?"
        r" (?:(?:is|was|could|can) )?(?:not (?:be )?(?:found|installed|available)|be found)\b",
        ("not found", "not recognized", "No such file or directory", "cannot find the file", "executable file not found", "not installed",
         "not available", "be found", "NOT FOUND"),
        why="""The run starts a program of the system by its name (to read or write audio and video, to fetch weights, to speak
        text, to build an extension), and that name is looked up on the PATH of the run's own process. The program is not
        installed there, or it is installed where that PATH does not reach: in another conda environment or a folder added to
        PATH in another shell, for another user (sudo's secure_path), outside a container, or, on Windows, in a folder added to
        PATH after the terminal, the IDE or the notebook was started (they keep the PATH they started with). A pip package of
        the same name is often only its Python wrapper, which runs the program and needs it all the same.""",
        fix="""`command -v PROG` (Windows: `where PROG`), run the way the run starts (its conda environment, terminal, job
        script or container), must print the program's path: install it there (conda install -c conda-forge PROG, or the
        system's package: apt, brew, winget); on Windows open a new terminal, or restart the IDE or the notebook, after changing
        PATH; under sudo keep the PATH (sudo env "PATH=$PATH" ...); a container: install it in the image""".replace("\n        ", " "),
        fields=program_fields,
        examples=[
            ("RuntimeError: ffmpeg not found. ffmpeg is installed tho",
             "GrandaddyShmax/audiocraft_plus#49 (heldout29, retired: Windows, the reporter's ffmpeg not on the run's PATH)"),
            ("RuntimeError: `ffmpeg` not found. Please install `ffmpeg` and try again", "jaketae/storyteller#18 (Windows: ffmpeg added to PATH, the error stayed)"),
            ("RuntimeError: No ffmpeg exe could be found. Install ffmpeg on your system, or set the IMAGEIO_FFMPEG_EXE environment variable.",
             "elebumm/RedditVideoMakerBot#1319 (imageio's check, on macOS; brew install ffmpeg, harry0703/MoneyPrinterTurbo#78)"),
            ("RuntimeError: Program 'ffmpeg' is not found; perhaps install ffmpeg using 'apt-get install ffmpeg'.",
             "PWhiddy/PokemonRedExperiments#11 (Windows: a restart after adding ffmpeg to PATH fixed it)"),
            ("sh:1:ffmpeg: not found", "ifzhang/FairMOT#65 (a demo; ffmpeg 'installed by PIP', only the Python wrapper)"),
            ("sh: 1: ffmpeg: not found", "dash's words for it (ifzhang/FairMOT#65 as a shell prints it)"),
            ("bash: sox: command not found", "bash's words for a program not installed"),
            ("zsh: command not found: ffmpeg", "zsh's words"),
            ("'ffmpeg' is not recognized as an internal or external command,", "cmd.exe's words"),
            ("FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'", "Python's subprocess given ffmpeg's name (openai/whisper's load_audio)"),
            ("FileNotFoundError: [WinError 2] The system cannot find the file specified: 'git-lfs'", "Windows' subprocess"),
            ('Error: exec: "ffmpeg": executable file not found in $PATH', "Go's exec.LookPath"),
        ],
        not_examples=[
            "FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints'",  # a folder: path-not-found
            "FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg/out.wav'",  # a path under a folder named so
            "  CIDEr computation failed: [Errno 2] No such file or directory: 'java'",  # caught by the program, which went on
            "ModuleNotFoundError: No module named 'ffmpeg'",  # a Python package: module-not-found
            "bash: torchrun: command not found",  # a launcher: launcher-not-found
            "bash: nvidia-smi: command not found",  # the driver's tool: nvidia-smi-not-found
            "ffmpeg version 4.4.2 Copyright (c) 2000-2021 the FFmpeg developers",
            "Found ffmpeg at /usr/bin/ffmpeg",
            "git version 2.34.1",
            "[WARNING] ffmpeg-python not found, using the soundfile backend",
            "ffmpeg not found, falling back to the soundfile backend",
            "Node not found in the cluster: gpu-node-1",
        ],
    ),
]


# TensorRT's Python API by release: the calls a release removed (code written for an older TensorRT) and those a release added
# (code written for a newer one), each with the call that takes its place. From TensorRT's release notes (8.0 removed the
# builder's own settings and build_cuda_engine; 8.4 replaced the workspace size by memory pools; 8.5 added the name-based tensor
# API; 10.0 removed implicit batch, build_engine and the binding-index API) and the threads named beside the examples.
BUILD = ("plan = builder.build_serialized_network(network, config); engine = trt.Runtime(logger).deserialize_cuda_engine(plan)")
POOL = "config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)"
TENSORS = ("the name-based tensor API: for i in range(engine.num_io_tensors): name = engine.get_tensor_name(i); engine.get_tensor_shape(name), "
           "engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT, engine.get_tensor_dtype(name)")
EXECUTE = "context.set_tensor_address(name, ptr) for each input and output, then context.execute_async_v3(stream_handle)"
REMOVED = {
    "build_cuda_engine": ("8.0", BUILD), "fp16_mode": ("8.0", "config.set_flag(trt.BuilderFlag.FP16)"),
    "int8_mode": ("8.0", "config.set_flag(trt.BuilderFlag.INT8)"), "strict_type_constraints": ("8.0", "config.set_flag(trt.BuilderFlag.STRICT_TYPES)"),
    "build_engine": ("10.0", BUILD), "max_workspace_size": ("10.0", POOL), "max_batch_size": ("10.0", "an explicit-batch network (the batch is "
    "the input's first dimension) with an optimization profile for its range"),
    "get_binding_shape": ("10.0", TENSORS), "get_binding_index": ("10.0", TENSORS), "get_binding_name": ("10.0", TENSORS),
    "get_binding_dtype": ("10.0", TENSORS), "binding_is_input": ("10.0", TENSORS), "num_bindings": ("10.0", TENSORS),
    "set_binding_shape": ("10.0", "context.set_input_shape(name, shape)"), "execute_async_v2": ("10.0", EXECUTE), "execute_async": ("10.0", EXECUTE),
}
ADDED = {
    "build_serialized_network": ("8.0", "builder.build_cuda_engine(network) (TensorRT 7)"),
    "set_memory_pool_limit": ("8.4", "config.max_workspace_size = 1 << 30"), "MemoryPoolType": ("8.4", "config.max_workspace_size = 1 << 30"),
    "num_io_tensors": ("8.5", "the binding-index API (engine.num_bindings, get_binding_shape(i))"),
    "get_tensor_name": ("8.5", "the binding-index API (engine.get_binding_name(i))"), "get_tensor_shape": ("8.5", "engine.get_binding_shape(i)"),
    "get_tensor_mode": ("8.5", "engine.binding_is_input(i)"), "set_input_shape": ("8.5", "context.set_binding_shape(i, shape)"),
    "set_tensor_address": ("8.5", "context.execute_async_v2(bindings, stream_handle)"), "execute_async_v3": ("8.5", "context.execute_async_v2(bindings, stream_handle)"),
}
VERSION = "python -c \"import tensorrt; print(tensorrt.__version__)\" shows the installed one (a Jetson: dpkg -l | grep nvinfer; its TensorRT comes with JetPack)"
# The module's own classes: missing, the tensorrt imported is not TensorRT's bindings
CORE = {"Logger", "Builder", "Runtime", "OnnxParser", "BuilderFlag", "NetworkDefinitionCreationFlag", "init_libnvinfer_plugins"}


def tensorrt_fields(m: re.Match, context: list[str]) -> dict:
    """The TensorRT call the line names (a paraphrase's spaces read as underscores), the release that removed or added it, and
    the step: the TensorRT the code needs, or the call that takes its place."""
    out = groups(m, context)
    attribute = out.get("attribute") or out.get("module_attribute") or ""
    if out.get("spaced"):  # a paraphrase: the longest run of its words that names a call of the table, else its first word
        words = out["spaced"].split()
        attribute = next(("_".join(words[:n]) for n in range(len(words), 0, -1) if "_".join(words[:n]) in {**REMOVED, **ADDED}), words[0])
    owner = out.get("owner") or "tensorrt"
    out["detail"] = f"{owner}.{attribute}"
    if attribute == "max_workspace_size" and owner == "Builder":
        out["step"] = (f"Builder.max_workspace_size went in TensorRT 8.0, the code was written for TensorRT 7 ({VERSION}): install the "
                       f"TensorRT it was written for, or set it on the builder's config: config = builder.create_builder_config(); {POOL} "
                       "(config.max_workspace_size before 8.4)")
    elif attribute in REMOVED:
        release, port = REMOVED[attribute]
        out["step"] = (f"TensorRT {release} removed {attribute}: the code was written for an older TensorRT than the installed one ({VERSION}): "
                       f"install a TensorRT older than {release} (pip install \"tensorrt<{release.split('.')[0]}\"), or port the call to {port}")
    elif attribute in ADDED:
        release, older = ADDED[attribute]
        out["step"] = (f"{attribute} came in TensorRT {release}: the code needs TensorRT {release} or later and the installed one is older ({VERSION}): "
                       f"upgrade TensorRT (a Jetson: a JetPack release that ships {release} or later, if the board takes one), or use the older "
                       f"call, {older}")
    elif owner == "tensorrt" and attribute in CORE:
        out["step"] = ("the module imported as tensorrt has none of TensorRT's classes: python -c \"import tensorrt; print(tensorrt.__file__)\" "
                       "shows what it is (a file or folder named tensorrt in the working directory, or pip's tensorrt package whose bindings did "
                       "not install: pip install --force-reinstall tensorrt, with the same Python the run uses)")
    else:
        out["step"] = (f"the installed TensorRT's API has no {attribute}: the code was written for another TensorRT release ({VERSION}); its "
                       "Python API changed most in 8.0, 8.5 and 10.0: install the release the project names, or port the call (TensorRT's "
                       "migration guide)")
    out["read_as"] = "tensorrt-api-version"
    return out


PATTERNS += [
    pattern(
        "tensorrt-api-version",
        "platform",
        CAUSE,
        E,
        "the code calls TensorRT's Python API as another TensorRT release has it",
        # the object's class in TensorRT's bindings (tensorrt.tensorrt, 10.x's tensorrt_bindings.tensorrt), or the module; a
        # reporter's paraphrase with spaces for underscores ('Attribute error "tensorrt.tensorrt.Builder" has no attribute "build
        # serialized network"')
        r"['\"]?tensorrt(?:_bindings)?\.tensorrt\.(?P<owner>\w+)['\"]? (?:object )?has no attribute (?:['\"](?P<attribute>\w+)['\"]|['\"]?(?P<spaced>[A-Za-z_]\w*(?: [a-z]\w*){0,3}))"
        r"|module ['\"]tensorrt['\"] has no attribute ['\"](?P<module_attribute>\w+)['\"]",
        ("has no attribute",),
        why="""TensorRT's Python API changed between releases: 8.0 removed the builder's own settings (max_workspace_size,
        fp16_mode) and build_cuda_engine, and added build_serialized_network; 8.4 replaced the workspace size by memory pools;
        8.5 added the tensor API by name (num_io_tensors, get_tensor_name, execute_async_v3); 10.0 removed implicit batch,
        build_engine and the binding-index API (get_binding_shape, num_bindings, execute_async_v2). Code written for one
        release fails on another with an AttributeError on the call that moved: the installed TensorRT is newer or older than
        the one the code was written for (a Jetson's comes with its JetPack, so a board pins it).""",
        fix="""python -c "import tensorrt; print(tensorrt.__version__)"   # against the release the code was written for (its
        README or requirements): install that TensorRT, or port the call to the installed release's API (TensorRT's
        migration guide lists each call's replacement)""".replace("\n        ", " "),
        fields=tensorrt_fields,
        examples=[
            ('Attribute error "tensorrt.tensorrt.Builder" has no attribute "build serialized network',
             "deepcam-cn/yolov5-face#109 (heldout29b, retired: a Jetson Nano whose TensorRT is older than 8.0)"),
            ("AttributeError: 'tensorrt_bindings.tensorrt.IExecutionContext' object has no attribute 'execute_async_v2'",
             "NVIDIA/TensorRT#3931 (TensorRT 10: execute_async_v3 with set_tensor_address)"),
            ("AttributeError: 'tensorrt_bindings.tensorrt.Builder' object has no attribute 'build_engine'", "TensorRT 10's builder (build_serialized_network)"),
            ("AttributeError: 'tensorrt.tensorrt.Builder' object has no attribute 'max_workspace_size'", "TensorRT 8's builder (the config's memory pool)"),
            ("AttributeError: 'tensorrt.tensorrt.IBuilderConfig' object has no attribute 'max_workspace_size'", "TensorRT 10's config"),
            ("AttributeError: 'tensorrt.tensorrt.ICudaEngine' object has no attribute 'get_binding_shape'", "TensorRT 10's engine (the tensor API)"),
            ("AttributeError: module 'tensorrt' has no attribute 'Logger'", "a tensorrt imported that is not TensorRT's bindings"),
        ],
        not_examples=[
            "AttributeError: 'NoneType' object has no attribute 'create_execution_context'",  # an engine that failed to build or load
            "AttributeError: 'Builder' object has no attribute 'build_engine'",  # no TensorRT class named: library-api-mismatch's
            "[TRT] [W] The getMaxBatchSize() function should not be used with an engine built from a network created with NetworkDefinitionCreationFlag::kEXPLICIT_BATCH flag.",
        ],
    ),
]
