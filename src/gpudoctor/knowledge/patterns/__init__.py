"""The registry of failure patterns, in precedence order (the first pattern that
matches a line claims it, so specific patterns come before generic ones)."""

from gpudoctor.knowledge.pattern import Pattern
from gpudoctor.knowledge.patterns import builds, capability, classes, classes7, classes8, classes9, classes10a, classes10b, classes10c, classes10d, classes11a, classes11b, classes12a, classes12b, classes13a, classes13b, classes14b, classes15b, classes16b, classes17b, cluster, cuda, dataloader, ddp, families4, families5, families6, families7, frameworks, gloo, kernel8, launcher, launchers, nccl, network, platform, python, ray, timeouts

from gpudoctor.knowledge.patterns import classes19a, classes20a, classes31a, classes20b, classes21d, classes22c, classes22d, classes23b, classes23c, classes24a, classes27b, classes28b, classes30c, classes31b, classes31c, classes33i, tensorrt

ALL: tuple[Pattern, ...] = (
    *timeouts.PATTERNS[-1:],  # the harmless IPv6 line looks like a store connect failure: it goes first
    # specific answers that generic patterns below would otherwise claim less precisely
    *capability.PATTERNS,
    *classes10b.PATTERNS,  # lines a run logs at error level and goes on from (a metrics logger's retried server errors)
    *frameworks.PATTERNS,
    *families4.PATTERNS,  # families of the fourth development sample (bitsandbytes, Streaming, DALI)
    *families5.PATTERNS,  # families of the fifth development sample (inference-server shards, SIGILL, tensor-parallel splits, ...)
    *families6.PATTERNS,  # families of the sixth development sample (a compiled extension built for another torch)
    *families7.PATTERNS,  # families of the retired held-out heldout5 (a compiled module not built, kernels for another GPU, a non-finite grad norm)
    *classes10c.PATTERNS,  # the tenth round's launcher-only and GPU-tool lines (a Windows crash status before the launcher's summary of it)
    *network.PATTERNS,
    *builds.PATTERNS,  # thirty-third round (diagJ33): the line that decides why a build or an install failed, before the build's wrappers
    *launchers.PATTERNS,
    *ray.PATTERNS,
    *nccl.PATTERNS,
    *timeouts.PATTERNS[:-1],
    *classes11a.PATTERNS_FIRST,  # eleventh round (diagA11): torch's warning at CUDA init (driver too old) before cuda's error forms
    *cuda.PATTERNS,
    *kernel8.PATTERNS,  # CUDA kernel faults no cuda pattern names (a misaligned address, an illegal instruction, a capture error)
    *classes10a.PATTERNS_EARLY,  # tenth round: NCCL's /sys topology, cuBLAS execution and launch-shape failures, a GPU monitor, Paddle's launcher
    *classes10d.PATTERNS_EARLY,  # tenth round (diagD10): the caching allocator's NVML assert is an out-of-memory report
    *classes11b.PATTERNS_EARLY,  # eleventh round (diagB11): a kernel stopped for time, a GPU architecture check, cuBLAS/cuSOLVER refusals, Slurm's MUNGE
    *classes12a.PATTERNS_EARLY,  # twelfth round (diagA12): torch 1.6's all_gather shape check (apex SyncBatchNorm), before a launcher's line quoting it
    *classes12b.PATTERNS_EARLY,  # twelfth round (diagB12): NVRTC not knowing this GPU's architecture
    *classes13b.PATTERNS_EARLY,  # thirteenth round (diagB13): a program of the container stack not installed, a lost X display
    *classes14b.PATTERNS_EARLY,  # fourteenth round (diagB14): Slurm could not start the step on a node; a rendezvous scheme this torch lacks
    *classes15b.PATTERNS_EARLY,  # fifteenth round (diagB15): mpirun could not start the program on a node
    *classes17b.PATTERNS_EARLY,  # seventeenth round (diagB17): CUDA's own error message in any program's words, by CUDA's table
    *classes19a.PATTERNS_EARLY,  # nineteenth round (diagA19): CUDA's and HIP's error by its code or enum name, by one table of codes
    *ddp.PATTERNS,
    *dataloader.PATTERNS,
    *gloo.PATTERNS,
    *platform.PATTERNS,
    *tensorrt.PATTERNS,  # seventeenth round (diagA17): a TensorRT tool's own FAILED status
    *cluster.PATTERNS,
    *classes24a.PATTERNS,  # twenty-fourth round (diagA24): the GPU a container runtime, its toolkit, CDI or the cluster's GPU plug-in did not hand over
    *classes28b.PATTERNS,  # twenty-eighth round (diagB28): a program's backends the CPU's alone, the Vulkan loader with no driver
    *launcher.PATTERNS,
    *classes23b.PATTERNS,  # twenty-third round (diagB23): a program's own words that it received a stop signal (after torchrun's own)
    *classes8.PATTERNS_RELAYED,  # a relay names no line itself: first among the classes, so a relayed KeyError is the relay's
    *classes10a.PATTERNS,  # a config container's missing key before library-api-mismatch; unpicklable objects, bad fds at spawn
    *classes10d.PATTERNS,  # host memory, recursion, package metadata, storage I/O, numerical checks, MPI init, k8s volumes, torch.compile, DeepSpeed comm
    *classes11a.PATTERNS,  # eleventh round (diagA11): an abstract class instantiated, a tcp:// or file:// rendezvous given no rank
    *classes12a.PATTERNS,  # twelfth round (diagA12): forward() without its inputs, an empty TF input queue or Caffe list, TFF's dataset reduce
    *classes12b.PATTERNS,  # twelfth round (diagB12): a 0-dim tensor indexed by code older than the installed torch
    *classes13b.PATTERNS,  # thirteenth round (diagB13): DataParallel's warning that it gathered scalars (a failure's lead, not one)
    *classes14b.PATTERNS,  # fourteenth round (diagB14): a custom autograd Function's backward that does not fit its inputs
    *classes15b.PATTERNS,  # fifteenth round (diagB15): a draw from an empty population, inference tensors, a TF op no device takes
    *classes19a.PATTERNS,  # nineteenth round (diagA19): a program that found no device it can use and stopped (before a probe's notice)
    *classes17b.PATTERNS,  # seventeenth round (diagB17): a program's probe that found no GPU (after the messages that quote it)
    *classes31b.PATTERNS,  # thirty-first round (diagB31): a program's GPU backend with no driver, platform or device (after a program's own "no device" error)
    *classes16b.PATTERNS,  # sixteenth round (diagB16): gloo refusing NCCL's arguments or its device, a container's GPU option, Python 2 code, a registry lookup
    *classes20a.PATTERNS,  # twentieth round (diagA20): a parallel layout the program's own check refused (before the classes of messages)
    *classes21d.PATTERNS,  # twenty-first round (diagD21): a path already there, a write cut short, a device string, a data set or checkpoint not found
    *classes22c.PATTERNS,  # twenty-second round (diagC22): a variable read before it was set, a training service's job summary, MATLAB's error report
    *classes22d.PATTERNS,  # twenty-second round (diagD22): a program that runs on one GPU given several; a Windows launcher .exe that could not start Python
    *classes23c.PATTERNS,  # twenty-third round (diagC23): out of memory in the words of TensorFlow, JAX, PaddlePaddle
    *classes31a.PATTERNS_EARLY,  # thirty-first round (diagA31): a GPU's memory refused, a build without this GPU's architecture, in any program's words (after the frameworks' own)
    *classes27b.PATTERNS,  # twenty-seventh round (diagB27): a Windows code page that cannot write the program's text
    *classes30c.PATTERNS,  # thirtieth round (diagC30): a program of the system the run starts not installed (before path-not-found)
    *classes31c.PATTERNS,  # thirty-first round (diagC31): a compiled package's own words that it was built for another torch
    *classes33i.PATTERNS,  # thirty-third round (diagI33): OpenCV's own checks, a batch script's environment set-up, an estimator not fitted
    *classes.PATTERNS,  # classes of messages: after every specific pattern of the same message
    *classes20b.PATTERNS,  # twentieth round (diagB20): Python's own type errors (after none-value-used, before feature-not-supported's words)
    *classes7.PATTERNS,  # classes of messages of the seventh round: after the first round's classes
    *classes13a.PATTERNS,  # thirteenth round (diagA13): a call refused for its arguments (named, never claimed)
    *classes8.PATTERNS,  # a program's own refusal that states its remedy: after every class that names its message
    *classes8.PATTERNS_TYPES,
    *classes20b.PATTERNS_TOLD,  # twentieth round (diagB20): decided by the traceback's innermost frame (knowledge/story.py), never by a line
    *classes9.PATTERNS_BY_FRAME,  # decided by the traceback's innermost frame (knowledge/story.py), never by a line
    *classes11a.PATTERNS_BY_FRAME,  # the same: a spawned child's EOFError in spawn's own _main
    *classes12a.PATTERNS_BY_FRAME,  # the same: zip() refusing a replica's non-tensor output in DataParallel's own gather_map
    *classes13b.PATTERNS_BY_FRAME,  # the same: a distributed sampler's own assert; a gathered scalar loss used (after DataParallel's warning)
    *classes23c.PATTERNS_BY_FRAME,  # the same: a library's own check refusing what its caller gave it
    *python.PATTERNS,  # last: only what no other pattern claims
)

BY_ID: dict[str, Pattern] = {p.id: p for p in ALL}
