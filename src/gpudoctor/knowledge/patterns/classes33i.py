"""Classes of the thirty-third round (issue 35 items 3 and 4, diagI33): failed logs of the retired parts where the log holds
the failure and the answer was not right, sorted by the class of their message.

- OpenCV's own error (`cv2.error: OpenCV(4.x) file.cpp:N: error: (-215:Assertion failed) ... in function 'f'`): the
  library's check refused what the call gave it, and the words after its code say what. Its most frequent form,
  `!_src.empty()` / `!ssize.empty()` / `size.width>0 && size.height>0`, is an image that is empty: `cv2.imread` returns
  None for a path it cannot read (no exception), a capture's `read()` returns no frame at the end of a video or from a
  camera that did not open. An error: the line ends the program's traceback (a warning that quotes it is not claimed).
- A batch script's environment set-up that failed: conda's `activate` in a shell conda never initialised
  (`CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'`, newer conda's `CondaError:
  Run 'conda init' before 'conda activate'`), a module system's unknown module (Lmod's `The following module(s) are
  unknown: "python"`, Environment Modules' `Unable to locate a modulefile for 'cuda/11.8'`): the job then runs in whatever
  Python and libraries the node has. An error told after any other cause the log shows (story.py's order): a job that
  then failed of something else failed of that; where the job's own progress follows and nothing fails, it went on
  (story.py `went_on`).
- h5py's KeyError that the HDF5 file has no object of that name ("Unable to open object (object 'density' doesn't exist)",
  h5py 3's "Unable to synchronously open object"): the file the code opened was written without it (another preparation
  step or version, a file of another data set, a key spelt otherwise). An error: the line decides what the file lacks.
- bitsandbytes' own CUDA check that ran out of memory ("Error out of memory at line 380 in file .../csrc/pythonInterface.c"):
  in pythonInterface.c it is the unified (managed) memory its paged optimizers allocate (cudaMallocManaged), which WSL2
  and a host short of RAM refuse; in its kernels' files (ops.cu) the GPU's memory. No traceback follows it: the process
  exits, so the line is the failure (dev9 InternLM/xtuner#319: QLoRA under WSL, read as "no line shows it").
- a request to the program's own local server answered "502 Bad Gateway": a server does not say that of itself, a proxy
  does, and the environment's http_proxy (set to download models) takes the program's requests to 127.0.0.1 too (sglang's
  warm-up: "AssertionError: res=<Response [502]>, res.text=''", then it stops its server: heldout32b sgl-project/sglang#2468,
  sgl-project/sglang#7341 names the proxy).
- scikit-learn's attribute learned by fit (a name ending in one underscore: `coef_`, `estimators_`, `vocabulary_`) read
  on an estimator that has none: not fitted on this path, or unpickled from another scikit-learn release; and
  scikit-learn's own NotFittedError. A class the unrecognised answer names (its frame and traceback decide the rest).

Written from heldout32e's 0d3ng/object-detection-vino (the cv2.error line read as a traceback cut before its end),
nmank/ModuleRefinement and yuanhaol123/WEHA_EPR (conda's and Lmod's set-up errors in slurm.err), heldout20w's
jshe2304/smilesVAE (conda's, then the time limit), heldout32e's DanielBerns/weather_forecast (estimators_ before fit) and
dev10's rcvlab/AIIMLab crowd counting (a ground-truth .h5 without its 'density' dataset);
the other real lines are from the threads named beside them (the issues corpus).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern

E, W = Severity.ERROR, Severity.WARN

OPENCV_EMPTY = "opencv-image-empty"
OPENCV_CHECK = "opencv-check-failed"
JOB_ENVIRONMENT = "job-environment-not-set-up"
NOT_FITTED = "estimator-not-fitted"
HDF5_OBJECT = "hdf5-object-missing"
BNB_OOM = "bitsandbytes-out-of-memory"
LOCAL_PROXY = "local-request-proxied"

# Causes the line decides that are told after any other cause the log shows (story.py's order): the environment the batch
# script did not set up explains the job's failure only where nothing else does (an import it could not make: module-not-found
# is then its consequence)
TOLD_AFTER_OTHER_CAUSES = (JOB_ENVIRONMENT,)

# a line a program logged as a warning, or a step it says it skips: it went on
NOT_A_WARNING = r"^(?!.*(?i:\bwarn(?:ing)?\b|\bskip(?:ping|ped)?\b))"
# OpenCV's error line: "OpenCV(4.5.1) /path/file.cpp:4051: error: (-215:Assertion failed) COND in function 'f'" (3.x: "error:
# (-215) COND in function f")
OPENCV_ERROR = r"OpenCV(?:\([\w.\-]+\))?\s+\S+:\d+: error: \((?P<code>-?\d+)(?::(?P<reason>[^)]*))?\)\s*(?P<said>.*?)(?:\s+in function '?(?P<function>[\w:~<>]+)'?)?\s*$"
# the conditions OpenCV asserts on an image it was given: not empty, or a size above zero
EMPTY_CONDITION = re.compile(r"^!\s*_?\w+\.empty\(\)|^size\.width\s*>\s*0\s*&&\s*size\.height\s*>\s*0|^!\s*_?\w+\.empty\(\)\s*&&")
# a DNN module's words: the backend or the target a network was set to run on
DNN_WORDS = re.compile(r"(?i)\b(?:Inference Engine|backend|target|VPU|MYRIAD|precision|DNN_|CUDA backend|OpenVINO)\b")
DNN_STEP = ("the DNN backend or target the network was set to (net.setPreferableBackend / net.setPreferableTarget) does not run this "
            "model as it is: its words name what it refused (a precision, a layer, a backend): give that device a model made for it "
            "(an FP16 model for a Myriad/VPU target: convert it with --data_type FP16), or set a target that runs it "
            "(cv2.dnn.DNN_TARGET_CPU)")


# a window function (imshow, waitKey) of a build without a GUI: opencv-python-headless, or a wheel another package pulled in
GUI_WORDS = re.compile(r"(?i)The function is not implemented\. Rebuild the library with (?:Windows, )?GTK|Cocoa support")
GUI_STEP = ("this OpenCV has no GUI backend (opencv-python-headless, or an opencv wheel another package installed over it): for "
            "windows (imshow, waitKey) pip uninstall -y opencv-python-headless opencv-python and pip install opencv-python (one "
            "OpenCV package only: pip list | grep -i opencv), or write frames to files instead of showing them")


def opencv_fields(m: re.Match, context: list[str]) -> dict:
    """OpenCV's code, reason, words and function; a DNN backend's or target's refusal, and a window function of a build
    without a GUI, have their own steps."""
    out = groups(m, context)
    if GUI_WORDS.search(out.get("said", "")):
        out.update(read_as=OPENCV_CHECK, step=GUI_STEP)
    elif DNN_WORDS.search(out.get("said", "")):
        out.update(read_as=OPENCV_CHECK, step=DNN_STEP)
    return out


def opencv_empty_fields(m: re.Match, context: list[str]) -> dict | None:
    """The image-empty reading: only where OpenCV's condition is one on an empty image (else opencv-check-failed's)."""
    out = groups(m, context)
    return out if EMPTY_CONDITION.match(out.get("said", "")) else None


# Lmod names the module on the same line or the next ("unknown:" then '"python"'): the context line gives it
MODULE_NAMED = re.compile(r'^\s*"(?P<module>[^"]+)"')
CONDA_STEP = ("initialise conda in the batch script before it activates the environment: eval \"$(conda shell.bash hook)\" (or source "
              "<conda's folder>/etc/profile.d/conda.sh) on the line before conda activate ENV, or call the environment's Python by its "
              "path (<env>/bin/python train.py); a batch shell reads no ~/.bashrc, where conda init wrote its set-up")
MODULE_STEP = ("ask the module system for the name this cluster gives it: module spider {module} (module avail lists them), and load "
               "that name and version in the batch script (module load NAME/VERSION); a stale cache: module --ignore_cache load "
               "\"{module}\"")


def environment_fields(m: re.Match, context: list[str]) -> dict:
    """What failed to set up (conda's activate, a module), and the step for it."""
    out = groups(m, context)
    if out.get("lmod") and not out.get("module") and context:
        named = MODULE_NAMED.match(context[0])
        if named:
            out["module"] = named["module"]
    if out.get("conda"):
        out.update(read_as=JOB_ENVIRONMENT, step=CONDA_STEP, what="conda activate")
    else:
        module = out.get("module") or out.get("modulefile") or "NAME"
        out.update(read_as=JOB_ENVIRONMENT, step=MODULE_STEP.format(module=module), what=f"module {module}")
    return out


def fitted_fields(m: re.Match, context: list[str]) -> dict:
    """Whose attribute, and which (scikit-learn's NotFittedError names the estimator only)."""
    out = groups(m, context)
    out.setdefault("owner", out.get("estimator", "the estimator"))
    out.setdefault("attribute", "its fitted attributes")
    return out


PATTERNS = [
    pattern(
        OPENCV_EMPTY,
        "dataloader",
        CAUSE,
        E,
        "OpenCV was given an empty image: the image was not read (cv2.imread returns None for a path it cannot read) or a capture returned no frame",
        NOT_A_WARNING + r".*?" + OPENCV_ERROR,
        (".empty()", "size.width>0", "size.width > 0"),
        why="""OpenCV checks the image it is given before it works on it, and the condition that failed is that the image is not
        empty (or that its size is above zero). OpenCV's readers do not raise when they cannot read: cv2.imread returns None
        for a path that does not exist from the folder the process runs in, a file that is not an image (or is cut), or a
        path with characters its reader cannot open on Windows; a VideoCapture's read() returns (False, None) at the end of a
        video, for a file it cannot decode, or from a camera index that did not open. The function the message names
        (cvtColor, resize, imshow, imwrite) is only where the empty image arrived.""",
        fix="""check the image where it is read: img = cv2.imread(path); assert img is not None, path (print the path and
        os.path.exists(path) from the process's working directory; an absolute path, or a file of a format OpenCV reads); for
        a video or a camera: ok, frame = cap.read(), and stop or skip when ok is False (cap.isOpened() after opening it:
        another camera index, or the file's path)""".replace("\n        ", " "),
        examples=[
            ("cv2.error: OpenCV(3.4.4) C:\\projects\\opencv-python\\opencv\\modules\\imgproc\\src\\color.cpp:181: error: (-215:Assertion failed) "
             "!_src.empty() in function 'cv::cvtColor'", "hoanglehaithanh/Traffic-Sign-Detection#6 (an image not loaded)"),
            ("cv2.error: OpenCV(4.1.0) /io/opencv/modules/imgproc/src/color.cpp:182: error: (-215:Assertion failed) !_src.empty() in "
             "function 'cvtColor'", "yiranran/Audio-driven-TalkingFace-HeadPose#36 (frames extracted to another folder)"),
            ("cv2.error: OpenCV(4.5.1) /tmp/pip-req-build-jr1ur_cf/opencv/modules/imgproc/src/resize.cpp:4051: error: (-215:Assertion failed) "
             "!ssize.empty() in function 'resize'", "a resize given the None a capture returned at a video's end"),
            ("cv2.error: OpenCV(4.2.0) /io/opencv/modules/highgui/src/window.cpp:376: error: (-215:Assertion failed) size.width>0 && "
             "size.height>0 in function 'imshow'", "an image shown before it was read"),
        ],
        not_examples=[
            "WARNING: skipping frame 12: OpenCV(4.5.1) resize.cpp:4051: error: (-215:Assertion failed) !ssize.empty() in function 'resize'",
            # another check of OpenCV's: opencv-check-failed
            "cv2.error: OpenCV(4.1.0-openvino) /home/jenkins/workspace/OpenCV/OpenVINO/build/opencv/modules/dnn/src/op_inf_engine.cpp:747: "
            "error: (-215:Assertion failed) Failed to initialize Inference Engine backend: [VPU] Unsupported network precision : FP32 in function 'initPlugin'",
        ],
        fields=opencv_empty_fields,
    ),
    pattern(
        OPENCV_CHECK,
        "platform",
        CAUSE,
        E,
        "OpenCV's own check refused what the call gave it (its error code and words say what)",
        NOT_A_WARNING + NOT_HEADING + r"(?:cv2\.error: |error: )?" + OPENCV_ERROR,
        ("OpenCV(", "OpenCV "),
        why="""OpenCV raises cv2.error from its C++ code when a check of its own fails: "(-215:Assertion failed) CONDITION" gives the
        condition that did not hold (a type, a size, a number of channels, an image that must not be empty), other codes give
        the reason in words (-2 Unspecified error: a backend or a build without that part; -5 Bad argument; -209 sizes that do
        not match). The traceback's last frame is your call into cv2; what OpenCV refused is one of the arguments it got
        there, or the backend, the target or the model it was set up with.""",
        fix="""read the words after OpenCV's error code against the call at the traceback's last frame: give that argument what the
        condition asks (print its shape and dtype just before the call: a grayscale image where 3 channels are needed, float64
        where uint8 or float32 is, a size of 0); a DNN backend's or target's refusal: a model made for that device, or
        another target; a GUI or codec part missing from the build: a build of OpenCV with it (opencv-python, not the
        -headless one, for windows)""".replace("\n        ", " "),
        examples=[
            ("cv2.error: OpenCV(4.1.0-openvino) /home/jenkins/workspace/OpenCV/OpenVINO/build/opencv/modules/dnn/src/op_inf_engine.cpp:747: "
             "error: (-215:Assertion failed) Failed to initialize Inference Engine backend: [VPU] Unsupported network precision : FP32 in function 'initPlugin'",
             "heldout32e 0d3ng/object-detection-vino error.log (a Myriad VPU given an FP32 model)"),
            ("cv2.error: OpenCV(4.5.2) /tmp/pip-req-build-1syr35c1/opencv/modules/imgproc/src/color.simd_helpers.hpp:92: error: (-2:Unspecified "
             "error) in function 'cv::impl::{anonymous}::CvtHelper<VScn, VDcn, VDepth, sizePolicy>::CvtHelper(cv::InputArray, "
             "cv::OutputArray, int) [with VScn = cv::impl::{anonymous}::Set<3, 4>; VDcn = cv::impl::{anonymous}::Set<1>; VDepth = "
             "cv::impl::{anonymous}::Set<0, 2, 5>; cv::impl::{anonymous}::SizePolicy sizePolicy = cv::impl::<unnamed>::NONE; "
             "cv::InputArray = const cv::_InputArray&; cv::OutputArray = const cv::_OutputArray&]'",
             "a cvtColor given an image of the wrong number of channels"),
        ],
        not_examples=[
            "[ WARN:0] global /tmp/pip-req-build/opencv/modules/videoio/src/cap_gstreamer.cpp (935) open OpenCV | GStreamer warning: Cannot query video position",
            "OpenCV(4.5.1) resize.cpp:4051: error: (-215:Assertion failed) !ssize.empty() in function 'resize' -- skipping this frame",
        ],
        fields=opencv_fields,
    ),
    pattern(
        JOB_ENVIRONMENT,
        "launcher",
        CAUSE,
        E,
        "the batch script's environment set-up failed (conda's activate, a module load): the job runs without the environment it names",
        NOT_HEADING + r"(?:(?P<conda>CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'"
        r"|CondaError: Run 'conda init' before 'conda activate')"
        r"|(?P<lmod>Lmod has detected the following error:\s+(?:The following module\(s\) are unknown|These module\(s\) or extension\(s\) "
        r"exist but cannot be loaded as requested):\s*(?:\"(?P<module>[^\"]+)\")?)"
        r"|(?:ERROR|ModuleCmd_Load\.c\(\d+\):ERROR:\d+): Unable to locate a modulefile for '(?P<modulefile>[^']+)')",
        ("properly configured to use 'conda activate'", "before 'conda activate'", "Lmod has detected the following error", "Unable to locate a modulefile"),
        why="""A batch job starts a new, non-interactive shell: it reads no ~/.bashrc, so the lines conda init wrote there do not
        run, and `conda activate` refuses (source activate, the older form, or conda's shell hook work); a module system
        (Lmod, Environment Modules) knows modules by the names this cluster gives them, and an unknown name or version loads
        nothing. The job's next commands then run in whatever Python, CUDA and libraries the node has: an import that
        fails next, another Python's packages, or no GPU library at all follow from it.""",
        fix="""fix the set-up line of the batch script and check it before the job's command: which python (and python -c "import
        torch") right after it prints the environment's; for conda: eval "$(conda shell.bash hook)" then conda activate ENV;
        for a module: module spider NAME, then module load with the name and version it lists""".replace("\n        ", " "),
        examples=[
            ("CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.",
             "conda/conda#8536 (a Slurm job's shell; heldout32e nmank/ModuleRefinement slurm.err)"),
            ("CondaError: Run 'conda init' before 'conda activate'", "jolespin/veba#195 (an sbatch --wrap job)"),
            ('Lmod has detected the following error: The following module(s) are unknown: "libfabric/1.20.1"', "NOAA-EMC/rrfs-workflow#962"),
            ("Lmod has detected the following error:  The following module(s) are unknown: \"python/3.7.0\"", "llnl/hiop#524 (a machine's module names changed)"),
            ("Lmod has detected the following error: The following module(s) are unknown:", "heldout32e nmank/ModuleRefinement (the name on the next line)"),
        ],
        not_examples=[
            "# CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.",  # a thread's title
            "conda activate myenv",
            "Lmod is automatically replacing \"intel/2025.2\" with \"intel-classic/2023.2.0\".",
        ],
        context_after=1,
        fields=environment_fields,
    ),
    pattern(
        HDF5_OBJECT,
        "dataloader",
        CAUSE,
        E,
        "an HDF5 file the code opened has no dataset or group of the name it asked for",
        r"KeyError: [\"']?Unable to (?:synchronously )?open object \((?:[Oo]bject '(?P<object>[^']+)' doesn't exist|Component not found)\)",
        ("open object (",),
        why="""h5py raises KeyError when the file has no object (a dataset or a group) at the name the code reads (f['density'],
        f[f'{beam}/shot_number']): the file was written by another preparation step, another version of it or for another data
        set (ground truth made without that field, features saved under other names), the code opened another file than the
        one meant (a path or a list file naming the wrong one), or the name is spelt otherwise in the file. A Keras .h5 of
        weights names its layers: one saved from another model has other names.""",
        fix="""list what the file holds: h5ls -r FILE (or python -c "import h5py; h5py.File('FILE', 'r').visit(print)"), and compare it
        with the name the code reads at the traceback's last frame of your code; regenerate the file with the project's
        preparation script (the one that writes that name), or point the code at the prepared file (its path, its list of files);
        a Keras weights file of another model: load it into the model that saved it, or by name (load_weights(path,
        by_name=True))""".replace("\n        ", " "),
        examples=[
            ("KeyError: \"Unable to open object (object 'density' doesn't exist)\"", "dev10 rcvlab/AIIMLab train.out (ground truth without its density maps)"),
            ("KeyError: \"Unable to open object (object 'data' doesn't exist)\"", "laughtervv/SGPN#33 (a list file naming the .h5 files without their extension)"),
            ("KeyError: \"Unable to synchronously open object (object 'shot_number' doesn't exist)\"", "maawoo/gedixr#3 (h5py 3's words)"),
            ("KeyError: 'Unable to open object (Component not found)'", "h5py/h5py#909 (h5py 2's words)"),
        ],
        not_examples=[
            "KeyError: 'density'",  # a dict's key: another class
            "[WARNING] Unable to open object (object 'density' doesn't exist), computing it",
        ],
        fields=groups,
    ),
    pattern(
        BNB_OOM,
        "cuda",
        CAUSE,
        E,
        "bitsandbytes ran out of memory in its own CUDA call (its paged optimizer's unified memory, or the GPU's)",
        r"^Error out of memory at line (?P<at>\d+) in file (?P<file>\S*(?:bitsandbytes|csrc)\S*?(?P<source>pythonInterface\.c(?:pp)?|[\w.]+\.cu))$",
        ("Error out of memory at line",),
        why="""bitsandbytes checks each CUDA call of its own and prints "Error <CUDA's message> at line N in file F" before the process
        exits (no Python traceback follows). In pythonInterface.c the call is its unified-memory allocation (cudaMallocManaged),
        which the paged optimizers (paged_adamw_32bit, paged_adamw_8bit, PagedAdamW) use to page their states between the GPU
        and host RAM: WSL2 gives CUDA's unified memory far less room than a Linux host (and no oversubscription), and a host
        short of RAM or swap refuses it too. In its kernels' files (ops.cu, kernels.cu) it is the GPU's own memory, as torch's
        CUDA out of memory.""",
        fix="""in pythonInterface.c: use an optimizer that is not paged (optim="adamw_torch" or "adamw_bnb_8bit" instead of paged_adamw_*,
        or the config's optimizer type without Paged), or give the host more memory (under WSL2: memory= and swap= in
        %UserProfile%\\.wslconfig, then wsl --shutdown); in a kernel's file: lower the batch size or the sequence length, as for
        a CUDA out of memory (nvidia-smi: other processes on the GPU)""".replace("\n        ", " "),
        examples=[
            ("Error out of memory at line 380 in file /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/pythonInterface.c",
             "InternLM/xtuner#319 (dev9: QLoRA under WSL2; the same code runs on a Linux host)"),
            ("Error out of memory at line 351 in file /home/developer/bitsandbytes/csrc/pythonInterface.c",
             "bitsandbytes-foundation/bitsandbytes#464 (managed pointers under unified memory)"),
            ("Error out of memory at line 88 in file D:\\a\\bitsandbytes-windows-webui\\bitsandbytes-windows-webui\\csrc\\ops.cu",
             "jllllll/bitsandbytes-windows-webui#14 (a kernel's allocation: the GPU's memory)"),
        ],
        not_examples=[
            "# wsl ubuntu 22.04：xtuner train : Error out of memory at line 380 in file /mmfs1/bitsandbytes/csrc/pythonInterface.c",  # a title
            "Error invalid device function at line 508 in file /home/s/bitsandbytes-main/csrc/ops.cu",  # CUDA's table: no kernel image
        ],
        fields=groups,
    ),
    pattern(
        LOCAL_PROXY,
        "launcher",
        CAUSE,
        E,
        "a request to the program's own local server was answered 502 Bad Gateway: an HTTP proxy in the environment took it",
        r"AssertionError: res=<Response \[502\]>"
        r"|502 (?:Server Error: )?Bad Gateway for url: https?://(?P<host>localhost|127\.0\.0\.1|0\.0\.0\.0)[:/]",
        ("<Response [502]>", "Bad Gateway for url"),
        why="""502 Bad Gateway is a proxy's answer: it could not reach the server it was asked for. A program that starts an HTTP server
        and then calls it (sglang's warm-up request, a client of a local vLLM or TGI server) sends that call through the proxy its
        environment names (http_proxy, https_proxy, all_proxy: often set to download models), and the proxy cannot reach the
        machine's own 127.0.0.1. sglang then stops its server ("Killed"). The server itself may be healthy.""",
        fix="""export no_proxy=localhost,127.0.0.1,0.0.0.0 NO_PROXY=localhost,127.0.0.1,0.0.0.0 in the environment the server starts in (or
        unset http_proxy https_proxy all_proxy for it once the model is downloaded), then start it again""".replace("\n        ", " "),
        examples=[
            ("AssertionError: res=<Response [502]>, res.text=''", "sgl-project/sglang#2468 (heldout32b), #16855; sgl-project/sglang#7341 (the proxy that causes it)"),
            ("requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: http://127.0.0.1:8000/v1/completions",
             "a client of a local server behind the environment's proxy"),
        ],
        not_examples=[
            "AssertionError: res=<Response [503]>, res.text=''",  # the server's own answer: not ready
            "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://huggingface.co/api/models/x",  # a remote host's gateway
        ],
        fields=groups,
    ),
    pattern(
        NOT_FITTED,
        "platform",
        CAUSE,
        W,
        "an estimator's attribute that fit() sets was read before fit (scikit-learn's fitted attributes end in one underscore)",
        r"(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*(?:AttributeError: '(?P<owner>[A-Z]\w*)' object has no attribute '(?P<attribute>[a-z]\w*[a-z0-9]_)'"
        r"|NotFittedError: This (?P<estimator>\w+) instance is not fitted yet)",
        ("object has no attribute '", "instance is not fitted yet"),
        why="""scikit-learn (and the libraries that follow its convention) set the attributes an estimator learns when fit() runs, and
        name them with one trailing underscore (coef_, classes_, estimators_, vocabulary_, best_estimator_): before fit they do
        not exist. The object was built and then used without fit on this code path (a fit skipped by a condition, fit called
        on a copy or on another object than the one read, an attribute read in a custom fit before the inner estimator's own
        fit), or it was loaded with pickle or joblib from a file written by another scikit-learn release, whose fitted
        attributes have other names.""",
        fix="""call OWNER.fit(X, y) before reading ATTRIBUTE (estimators_ of a MultiOutputRegressor or a Voting/Bagging ensemble exists only
        after its own fit: fit the wrapper, then read it); sklearn.utils.validation.check_is_fitted(OWNER) says where it is not;
        an estimator loaded from a file: the scikit-learn version that saved it (pip install "scikit-learn==VERSION") or fit it
        again""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'Lasso' object has no attribute 'coef_'", "scikit-learn/scikit-learn#20224 (read after the constructor)"),
            ("AttributeError: 'MultiOutputRegressor' object has no attribute 'estimators_'. Did you mean: 'estimator'?",
             "heldout32e DanielBerns/weather_forecast (a custom fit reading estimators_ before the wrapper's fit)"),
        ],
        not_examples=[
            "AttributeError: 'Fabric' object has no attribute 'init_module'",  # a method of another release: attribute-missing
            "AttributeError: 'NoneType' object has no attribute 'coef_'",
            "AttributeError: 'Trainer' object has no attribute '__len__'",
        ],
        fields=fitted_fields,
        refines="library-api-mismatch",  # a class the unrecognised answer names; a library's frame raising it decides as that class does
    ),
]
