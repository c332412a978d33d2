"""A job's own start-up lines that say GPUs are there and it does not use them, and whether the job meant to.

A framework prints at start-up what devices it found and which it uses: Lightning's `GPU available: True (cuda), used:
False`, Unsloth's banner `Num GPUs = 2.` and then `Num GPUs used = 1`. A run that leaves its GPUs unused fails in no
line: it trains on the CPU (slowly, or until host memory runs out), or a DDP strategy set up for GPUs wraps a CPU
model; the banner is the answer the thread gives (rinongal/textual_inversion#44: "GPU available: True, used: False",
`--gpus 0` read as zero GPUs; ShannonAI/mrc-for-flat-nested-ner#128: the same with `--gpus="0"`; unslothai/unsloth#2425:
two A10s, `Num GPUs used = 1`).

Keyed on the banner and on what the log says the job meant (issue 35, heldout21's no-error-line case 47):
- the banner says GPUs are available and it uses none (`used: False`), or fewer than it found (case `fewer`);
- the log shows the job meant to use them: a GPU option (`--gpus`, `gpus=`, `--devices`, `devices=`,
  `accelerator="gpu"`, `--num_gpus`, `--gpu_ids`), a DDP strategy (`strategy="ddp"`, `distributed_backend=ddp`,
  Lightning's ddp backend in a frame), a launch per GPU (`--nproc_per_node`), or the reporter's sentence that the GPU is
  not used ("GPU usage is 0", "not running on my GPU", "only uses a single GPU"): warn, what the job asked for and what
  it used differ;
- nothing shows what the job meant: info (a run meant for the CPU on a machine with GPUs prints the same banner), and
  the finding says what decides it; info too where the log shows the run ended well (the unused GPUs did not stop it);
- the log shows the CPU chosen (`accelerator="cpu"`, `--accelerator cpu`, `--cpu`, `--device cpu`, `--no_cuda`):
  nothing, the CPU was meant.
It is never an error: the banner shows where the job runs, not that it failed, and it never outranks a failure the log
names (commands/diagnose/analyse.py places it after them).

The same decision for the run's other state lines (issue 35, the no-error-line rows of heldout19-23): what the run says
of its device or its process count, compared with what the log shows of the GPUs and of the launch.
- The device: the run's own line that names the device it uses, as the whole line (after a log prefix): SB3's `Using cpu
  device` (DLR-RM/stable-baselines3#972), `Using device: cpu`, accelerate's `Device: cpu`, `Running on CPU`; the latest one
  decides (a log with a CPU run and a GPU run appended after it ends on the GPU). A torch version that is a CPU build
  (`1.13.1+cpu`, ultralytics/ultralytics#227), torch's answer `CUDA available: False`, and the reporter's sentence that
  the job still uses the CPU ("it still tells me it is using cpu device", AI4Finance-Foundation/FinRL#926) say the same,
  and so does a framework's line that it fell back to the CPU (JAX's `No GPU/TPU found, falling back to CPU`, and the same
  line in any program's words, issue 35's heldout26 Applio-249: "GPU not detected, reverting to CPU (not recommended)",
  "CUDA not available. Training will be extremely slow on CPU."; a program's own line says it wanted the GPU, so it is a
  warning beside a GPU the log shows, its fix the check that decides why; JAX's says it on any machine and keeps the rule).
  Beside a GPU the log shows (nvidia-smi's header, `CUDA Version: 11.6`, a GPU's name, "8 GPUs", torch's `CUDA
  available: True`) or a GPU the job asked for (`device="cuda:0"`, `device=0`, `--device 0`, `.cuda()`,
  `CUDA_VISIBLE_DEVICES=0`), the job ran on the CPU with GPUs there: case `cpu-build` where the torch shown is a CPU build
  (the fix is the pip command of a CUDA wheel), `cpu-device` where torch says it sees the GPU (the device never reached
  the model: the fix is the library's device option), `cpu-fallback` where the framework says it fell back (the fix is
  its CUDA build), `cpu-layers` where llama.cpp says it put none of the model's layers on the GPU (`offloaded 0/33 layers
  to GPU`; the fix is -ngl with a build that has the GPU backend), `cpu` where the log does not tell which (the fix is
  the one line that tells). Where the CPU is only the reporter's sentence, the finding says what would decide it.
- The process count: the run's line that says it runs as one process (`world_size: 1`, BasicSR's `World size (gpu
  number): 1`, accelerate's `Num processes: 1`, `Not using distributed mode`) beside a launch that asked for more
  (`--nproc_per_node 4`, `--num_processes 2`, `-np 2`, `CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py`), or beside the
  reporter's sentence that the job uses one GPU only (huggingface/accelerate#197): case `one-process`, the fix the
  launcher with one process per GPU; where a launcher did start several and the run still says one, case
  `one-process-launched` (each process trains alone), the fix the script's own switch to read the launcher's world size. A world size of 1 with nothing that asked for more is a single-GPU run, not
  a finding; nor is a machine's GPU count alone (an nvidia-smi table of eight GPUs beside a job meant for one).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Optional

from gpudoctor.catalog.findings.diagnose import GPUS_LEFT_UNUSED, LOG_SAID_GPU_UNUSED
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.reruns import HeadLines
from gpudoctor.knowledge.title_said import TITLE, TITLE_LINES

# Lightning's device line (pytorch_lightning and lightning, all versions: "GPU available: True, used: False",
# "GPU available: True (cuda), used: False")
LIGHTNING = re.compile(rb"GPU available: True(?: \(\w+\))?, used: False")
# Unsloth's banner: "NVIDIA A10. Num GPUs = 2. Max memory: 22.184 GB." at load, "Num GPUs used = 1" as training starts
FOUND = re.compile(rb"\bNum GPUs = (\d+)\.")
USED = re.compile(rb"\bNum GPUs used = (\d+)")
# The job meant to use GPUs: a GPU option or a DDP strategy given, a launch of one process per GPU
ASKED = re.compile(
    rb"--gpus?[= ]+(?!flag\b)['\"\[]?[\w-]|\bgpus\s*=\s*['\"\[]?\w|--devices[= ]+['\"\[]?\w|\bdevices\s*=\s*['\"\[]?\w"
    rb"|\baccelerator\s*[=:]\s*['\"]?(?:gpu|cuda|auto)\b|--accelerator[= ]+(?:gpu|cuda)\b|--num[_-]gpus[= ]+\d|--gpu[_-]ids?[= ]+\d"
    rb"|--nproc[_-]per[_-]node[= ]+\d|\bstrategy\s*[=:]\s*['\"]?ddp|\bdistributed_backend\s*[=:]\s*['\"]?ddp|\bddp_backend\b|\bspawn_ddp_children\b"
)
# The reporter's sentence that the job does not use the GPU (a thread's title or a post); not "works on CPU but not on GPU"
# (explosion/spaCy#3112's title: the GPU run fails, issue 35, diagB30)
SAID = re.compile(
    rb"(?:\bnot|n't|\bnever)\s+(?:be\s+|being\s+|been\s+|even\s+|actually\s+|really\s+)?(?:use|uses|using|used|utili[sz]\w*|run(?:s|ning)?\s+on|(?<!cpu but not )(?<!cpu, but not )on)\s+"
    rb"(?:the\s+|my\s+|any\s+|a\s+)?(?:[\w-]+\s+)?GPUs?\b"
    rb"|\bGPUs?\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:not|never)\s+(?:being\s+)?(?:used|utili[sz]ed)\b"
    rb"|\bGPU[- ](?:usage|util\w*)(?:\s*:\s*|\s+(?:is\s+|was\s+|stays\s+|at\s+)?(?:always\s+|still\s+)?)0\b"  # "the Volatile GPU-Util is always 0"
    rb"|\b0\s?%\s+GPU[- ]?(?:usage|util\w*)\b"  # "# 0% GPU utilization"
    rb"|\bonly\s+(?:uses?|using|used|utili[sz]\w*)\s+(?:a\s+|one\s+|1\s+|the\s+first\s+)?(?:single\s+)?GPU\b"
    rb"|\b(?:unable to|can ?not|can't|cannot) use (?:the |my )?GPU"
    rb"|\bCPU\b[^.\n]{0,20}?\binstead of\s+(?:the\s+|my\s+|a\s+)?GPUs?\b",  # "# Training uses CPU instead of GPU"
    re.IGNORECASE,
)
# Of those sentences, the ones that say the job cannot reach the GPU, not that it leaves it idle: "Alphafold3 docker
# container can't use GPU A100" (google-deepmind/alphafold3#82: the container saw no GPU), "unable to use the GPU",
# "cannot access the GPU". Memory a pasted table shows held on a GPU is then not shown to be the job's (issue 35, diagB30).
CANNOT_REACH = re.compile(
    r"\b(?:unable to|can ?not|can't|cannot|couldn't|could not|fails? to|failed to)\s+(?:use|access|see|find|detect|reach)\s+"
    r"(?:the\s+|my\s+|any\s+|a\s+)?(?:[\w-]+\s+)?GPUs?\b",
    re.IGNORECASE,
)


def cannot_reach(said: str) -> bool:
    """The reporter's sentence says the job cannot reach the GPU (CANNOT_REACH), rather than that it leaves it idle."""
    return CANNOT_REACH.search(said) is not None


# The job chose the CPU
CPU = re.compile(
    rb"\baccelerator\s*[=:]\s*['\"]?cpu\b|--accelerator[= ]+['\"]?cpu\b|--cpu(?![\w-])|--device[= ]+['\"]?cpu\b|--no[_-]cuda\b",
    re.IGNORECASE,
)
# The run's own line that names the device it uses, as the whole line after a log prefix (a time, a level, a logger's name):
# SB3's "Using cpu device" / "Using cuda device", "2026-02-14 09:55:19,852 - INFO - Using device: cpu", accelerate's state
# "Device: cuda", "Running on CPU", the HF examples' "Process rank: 0, device: cuda:0, n_gpu: 1". Never a quoted key ('"device": "cpu"' of an offload section) nor a sentence around it.
STATE = re.compile(
    rb"^(?:[^\n\"'=]{0,80}?(?: - |\] |: | \| ))?(?:Using (?P<a>cpu|cuda|gpu|mps)(?::\d+)? device|(?:Using |Selected )?device(?: used)?\s*[:=]\s*(?P<b>cpu|cuda|gpu|mps)(?::\d+)?"
    rb"|(?:Running|Training|Train|Run) on (?:the )?(?P<c>cpu|gpu|cuda)(?: only)?)\W{0,3}$"
    # the HF examples' line, mid-line: "Process rank: -1, device: cpu, n_gpu: 0, distributed training: False"
    rb"|\bProcess rank: -?\d+, device: (?P<d>cpu|cuda|mps)\b",
    re.IGNORECASE | re.MULTILINE,
)
# A framework's own line that it looked for the GPU and fell back to the CPU, as a log line (after a log prefix, or the whole
# line): JAX's "WARNING:absl:No GPU/TPU found, falling back to CPU.", ColabFold's "WARNING: no GPU detected, will be using
# CPU" (TensorFlow's "Skipping registering GPU devices..." is its own pattern, tensorflow-gpu-libraries-not-loaded)
FALLBACK = re.compile(
    rb"^(?:[^\n\"'=]{0,100}?(?: - |\] |: |:| \| ))?\W{0,3}(?:No GPU/TPU found, falling back to CPU"
    # the class of the same line in every program's words (issue 35, heldout26's no-error-line rows): the GPU, or CUDA, not
    # found, then the CPU it goes on on, in the same line: Applio's "GPU not detected, reverting to CPU (not recommended)",
    # "CUDA not available. Training will be extremely slow on CPU.", "CUDA is not available, using CPU", "No CUDA GPUs are
    # available - falling back to CPU"; never a fallback that does not say the GPU is missing (akash-338's "Falling back to
    # CPU mode." after its own PyTorch check, a line of its own) nor a person's sentence (it starts the line, after a log prefix)
    rb"|(?:no (?:NVIDIA |CUDA |usable |compatible |supported )?(?:GPUs?|CUDA)(?:/TPU)?(?: GPUs?| devices?)? (?:(?:is|are|was|were) )?(?:detected|found|available|usable)"
    rb"|(?:the |an? )?(?:NVIDIA |CUDA )?(?:GPUs?|CUDA)(?: GPUs?| devices?)? (?:(?:is|are|was|were) )?(?:not (?:detected|found|available|usable|supported)|unavailable))"
    # (where: "on this machine"; never what for: "CUDA not available for the face parser, using CPU" is one part's fallback)
    rb"(?: (?:on|in) (?:this|the|your) (?:machine|system|host|computer|device|environment))?(?:[.,;:!]+|\s+-+)?\s*(?:\([^)\n]{0,40}\)\s*)?"
    rb"(?:(?:reverting|falling back|fall back|switching|defaulting|reverted|fell back|switched|defaulted) to|(?:will be |will |we will )?(?:using|use|run(?:ning)?(?: on)?)"
    rb"|[^\n.;]{0,40}?\bwill\b[^\n.;]{0,30}?\bon)\s+(?:the\s+)?CPU)\b",
    re.IGNORECASE | re.MULTILINE,
)
# llama.cpp's count of the model's layers it put on the GPU (llama.cpp, and Ollama, LM Studio, koboldcpp on it):
# "llm_load_tensors: offloaded 0/33 layers to GPU", Ollama's server log "layers.offload=0"; none is a model on the CPU
LAYERS = re.compile(rb"\boffloaded (\d+)/\d+ layers to GPU\b|\blayers\.offload=(\d+)\b")
# A torch (torchvision, torchaudio) version that is a CPU-only build: "pytorch 1.13.1+cpu", "(you have 2.0.1+cpu)"
CPU_BUILD = re.compile(rb"\b\d+\.\d+(?:\.\d+)?\+cpu\b")
# The framework's answer whether it sees a GPU, on its line or the next (a REPL's output, a notebook's Out[n]): torch's
# "CUDA available: True", "torch.cuda.is_available(): False", ">>> torch.cuda.is_available()" then "False"; Lightning's
# "GPU available: False"; TensorFlow's "tf.test.is_gpu_available()" and its guide's "Num GPUs Available:  0"
CUDA_ANSWER = re.compile(
    rb"\b(?:cuda(?:\.is_available\(\)|\s+(?:is\s+)?available)|is_gpu_available\(\)|GPU available)\s*[:=?]?\s*(?:->\s*)?(?:(?:returns?|returned|returning|gives|gave|is|prints?|shows?)\s+)?(?:Out\[\d+\]:\s*)?(True|False)\b"
    rb"|\bNum GPUs Available:?\s*(\d+)\b"
    # TensorFlow's tf.config.list_physical_devices('GPU') printed: a GPU it lists (microsoft/WSL#9272)
    rb"|\bPhysicalDevice\(name='/physical_device:(GPU):\d+'",
    re.IGNORECASE,
)
# The log shows a GPU: nvidia-smi's header, a CUDA version, a GPU's name, a count of GPUs (not "Found 0 GPUs"), a GPU machine
SHOWN = re.compile(
    rb"\bNVIDIA-SMI \d|\bCUDA [Vv]ersion:? \d|\b(?:Tesla|GeForce|Quadro|TITAN|Titan|RTX|GTX)\b|\b(?:[AHVP]100|H200|A[1-6]000|A10G?|A40|L40S?|L4|T4|K80)\b"
    rb"|\b[1-9]\d*\s*(?:x\s*)?(?:GPUs|gpus)\b|\b(?:GPU|gpu) (?:server|machine|node|box|cards?)\b|\bFound device \d+ with properties"
    rb"|\b(?:Radeon|gfx\d{3,4}|Instinct MI\d+)\b|\bfound [1-9]\d* (?:CUDA|ROCm) devices\b"
)
# The job asked for a CUDA device: device="cuda:0", "device": 'cuda', device=0, --device 0, .cuda(), CUDA_VISIBLE_DEVICES=0
CUDA_ASKED = re.compile(
    rb"(?<![\w-])device['\"]?\s*[=:]\s*['\"]?(?:cuda|\d)|--device[= ]+['\"]?(?:cuda|\d)|\.cuda\(\)|\.to\(['\"]cuda|(?<!\w)CUDA_VISIBLE_DEVICES=['\"]?\d"
    rb"|(?:\s-ngl|--n-gpu-layers|--gpu-layers|\bn_gpu_layers\s*=)\s*[1-9]"  # llama.cpp's layers on the GPU
)
# The reporter's sentence that the job still runs on the CPU: "it still tells me it is using cpu device", "it looks like
# it's still running on the CPU", "it only uses the CPU" (not "configured to only use the CPU": a setup that chose it)
SAID_CPU = re.compile(
    rb"\b(?:still|always|keeps?)\b[^.\n]{0,30}?\b(?:using|uses|use|running on|runs on|run on|training on|trains on|trained on)\s+(?:the\s+)?cpu\b"
    rb"|(?<!\bto )\bonly\s+(?:uses?|using|runs? on|running on)\s+(?:the\s+)?cpu\b",
    re.IGNORECASE,
)
# The run's line that says how many processes it is: "world_size: 1", BasicSR's "World size (gpu number): 1", accelerate's
# "Num processes: 1", Lightning's "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/1", Horovod's hvd.size() ("'hvd.size()'
# shows only one", horovod/horovod#1378); "Not using distributed mode" (the DeiT/MAE family's init_distributed_mode, not
# launched) is one
WORLD = re.compile(
    rb"\bworld[ _]size\b(?: \(gpu number\))?['\"]?\s*(?:is\s+)?[:=]?\s*(\d+)\b(?![.\d])|^\s*Num processes: (\d+)\s*$|\bMEMBER: \d+/(\d+)\b"
    rb"|\bhvd\.size\(\)['\"]?\s*(?:shows|returns|returned|gives|gave|is|==|=|:)?\s*(?:only\s+)?(1|one)\b|\b(Not using distributed mode)\b",
    re.IGNORECASE | re.MULTILINE,
)
# A launch that asked for N processes: torchrun's, accelerate's, horovodrun's or mpirun's count, deepspeed's --num_gpus, or
# the GPUs a plain launch made visible (CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py: on the command line, not an
# environment's dump; not a server's launch, whose tensor parallelism is its own processes)
LAUNCHED = re.compile(
    rb"--nproc[_-]per[_-]node[= ]+(\d+)|--num[_-]processes[= ]+(\d+)|\b(?:horovodrun|mpirun|mpiexec)\b[^\n]*?\s-np?\s+(\d+)"
    rb"|\bdeepspeed\b[^\n]*?--num[_-]gpus[= ]+(\d+)"
    rb"|\bCUDA_VISIBLE_DEVICES=['\"]?(\d+(?:,\d+)+)['\"]?\s+(?:\w+=\S*\s+)*python3?\s+(?!-m\s+(?:vllm|sglang|lmdeploy))"
)
AROUND = 60  # characters of a long line kept on each side of what was found in it
# what decides it when the log shows the run ended well, whatever the GPUs were left doing
ENDED_WELL = "the run ended well: the unused GPUs made it slower, not fail"
# The reporter's sentence (SAID) says one GPU: "only uses a single GPU", "only use one GPU"
ONE = re.compile(r"\b(?:only|single|one|1)\b", re.IGNORECASE)
BANNER_WORDS = (b"used: False", b"Num GPUs")
# The words a block holds where each shape may be in it: a shape is searched only in a block that holds one of its own, as
# the head of a GPU job's log says "GPU" and "cuda" on nearly every line
GATES: tuple[tuple[re.Pattern[bytes], tuple[bytes, ...]], ...] = (
    (STATE, (b"evice", b"on CPU", b"on cpu", b"on the CPU", b"on GPU", b"on gpu", b"on the GPU", b"on CUDA", b"on cuda")),
    (FALLBACK, tuple(w + cpu for w in (b"to ", b"to the ", b"se ", b"sing ", b"on ", b"on the ", b"un ") for cpu in (b"CPU", b"cpu"))),
    (LAYERS, (b"layers to GPU", b"layers.offload")),
    (CPU_BUILD, (b"+cpu",)),
    (CUDA_ANSWER, (b"vailable", b"VAILABLE", b"physical_device:GPU")),
    (SHOWN, (b"NVIDIA-SMI", b"ersion", b"Tesla", b"GeForce", b"Quadro", b"TITAN", b"Titan", b"RTX", b"GTX", b"A100", b"H100", b"V100", b"P100", b"H200",
             b"A2000", b"A4000", b"A5000", b"A6000", b"A10", b"A40", b"L40", b"L4", b"T4", b"K80", b"GPUs", b"gpus", b"GPU ", b"gpu ",
             b"Found device", b"Radeon", b"gfx", b"Instinct", b"devices")),
    (CUDA_ASKED, (b"device", b".cuda()", b".to(", b"CUDA_VISIBLE_DEVICES", b"ngl", b"gpu-layers", b"gpu_layers")),
    (SAID_CPU, (b"still", b"always", b"keep", b"only")),
    (WORLD, (b"orld", b"ORLD", b"Num processes", b"MEMBER", b"hvd.size", b"distributed mode")),
    (LAUNCHED, (b"nproc", b"num_processes", b"num-processes", b"horovodrun", b"mpirun", b"mpiexec", b"num_gpus", b"num-gpus", b"CUDA_VISIBLE_DEVICES=")),
)
STATE_HEAD = 1 << 18  # the bytes of the input its state lines are read in
ASKED_WORDS = (b"gpu", b"devices", b"accelerator", b"nproc", b"ddp")
SAID_WORDS = (b"GPU", b"gpu", b"Gpu")
CPU_WORDS = (b"cpu", b"cuda")


class GpusUnused(HeadLines):
    """What the input's start-up lines say of the GPUs found and used, fed block by block (`feed`, `tee`): a framework
    says what it uses as it starts (HeadLines.HEAD, the first MiB; a thread's paste is shorter)."""

    NEEDLES = BANNER_WORDS + ASKED_WORDS + SAID_WORDS + CPU_WORDS

    def __init__(self) -> None:
        super().__init__()
        self.banner: Optional[tuple[int, str]] = None  # (line, text): the line that says a GPU is available and not used
        self.found: Optional[tuple[int, str, int]] = None  # (line, text, GPUs found): Unsloth's count at load
        self.used: Optional[tuple[int, str, int]] = None  # (line, text, GPUs used)
        self.asked: Optional[tuple[int, str]] = None  # the first line that shows the job meant GPUs
        self.said: Optional[tuple[int, str]] = None  # the reporter's sentence that the GPU is not used
        self.cpu: Optional[tuple[int, str]] = None  # a line that chooses the CPU
        self.title: Optional[tuple[int, str]] = None  # a thread's title that says the GPU is not used (not a question)
        self.device: Optional[tuple[int, str, str]] = None  # (line, text, cpu|gpu): the run's latest line naming its device
        self.build: Optional[tuple[int, str, str]] = None  # (line, text, version): a torch version that is a CPU build
        self.answer: Optional[tuple[int, str, bool]] = None  # (line, text, True|False): torch's latest answer whether it sees a GPU
        self.shown: Optional[tuple[int, str]] = None  # the first line that shows a GPU
        self.cuda_asked: Optional[tuple[int, str]] = None  # the first line that asks for a CUDA device
        self.said_cpu: Optional[tuple[int, str]] = None  # the reporter's sentence that the job still runs on the CPU
        self.world: Optional[tuple[int, str, int]] = None  # (line, text, processes): the run's latest line of its process count
        self.launched: Optional[tuple[int, str, int]] = None  # (line, text, processes): the latest launch that asked for several

    def read(self, block: bytes, begin: int, end: int) -> None:
        if self.lines < TITLE_LINES:
            self.read_title(block, begin, end)
        super().read(block, begin, end)

    def read_title(self, block: bytes, begin: int, end: int) -> None:
        """The input's first lines: a thread's title that says the job does not use the GPU, and asks nothing."""
        at = begin
        for number in range(self.lines + 1, TITLE_LINES + 1):
            nl = block.find(b"\n", at, end)
            text = block[at:end if nl == -1 else nl].decode("utf-8", "replace").strip()
            if self.title is None and TITLE.match(text) and not text.endswith("?") and SAID.search(text.encode("utf-8")):
                self.title = (number, " ".join(text.split())[:200])
            if nl == -1:
                return
            at = nl + 1

    def read_head(self, block: bytes, begin: int, end: int, words: set[bytes]) -> None:
        def first(shape: re.Pattern[bytes]) -> Optional[re.Match[bytes]]:
            return shape.search(block, begin, end)

        def where(m: re.Match[bytes]) -> tuple[int, str]:
            return self.line_at(block, begin, end, m.start())

        if not words.isdisjoint(BANNER_WORDS):
            if self.banner is None and (m := first(LIGHTNING)) is not None:
                self.banner = where(m)
            if self.found is None and (m := first(FOUND)) is not None:
                self.found = (*where(m), int(m.group(1)))
            if self.used is None and (m := first(USED)) is not None:
                self.used = (where(m)[0], m.group(0).decode("ascii"), int(m.group(1)))
        if self.asked is None and not words.isdisjoint(ASKED_WORDS) and (m := first(ASKED)) is not None:
            self.asked = where(m)
        if self.said is None and not words.isdisjoint(SAID_WORDS) and (m := first(SAID)) is not None:
            self.said = where(m)
        if self.cpu is None and not words.isdisjoint(CPU_WORDS) and (m := first(CPU)) is not None:
            self.cpu = where(m)
        # (the state lines are the run's start-up: only its first STATE_HEAD bytes, as a paste of a thread is shorter and a
        # log of one long line, a progress bar redrawn with carriage returns, costs every shape the whole of HEAD)
        before = self.seen - (end - begin)  # the bytes of the head read before this block
        stop = end if before + end - begin <= STATE_HEAD else block.rfind(b"\n", begin, begin + max(STATE_HEAD - before, 0)) + 1 or begin
        if stop > begin:  # (its words looked for in those bytes alone: a needle of HEAD's costs its search of the whole head)
            shapes = {shape for shape, gate in GATES if any(block.find(word, begin, stop) != -1 for word in gate)}
            if shapes:
                self.read_state(block, begin, stop, shapes)

    def read_state(self, block: bytes, begin: int, end: int, shapes: set[re.Pattern[bytes]]) -> None:
        """The run's state lines of the block (its device, its process count, torch's build and answer) and what the log
        shows of the GPUs and the launch: the latest state line of each counts, the first line that shows or asks.
        `shapes`: those the block may hold (GATES)."""
        def where(m: re.Match[bytes]) -> tuple[int, str]:
            return self.line_at(block, begin, end, m.start())

        def each(shape: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
            return shape.finditer(block, begin, end) if shape in shapes else iter(())

        def first(shape: re.Pattern[bytes]) -> Optional[tuple[int, str]]:
            hit = shape.search(block, begin, end) if shape in shapes else None
            return self.around(block, begin, end, hit) if hit is not None else None

        states = [(m.start(), "gpu" if (said := (m.group("a") or m.group("b") or m.group("c") or m.group("d")).lower()) in (b"cuda", b"gpu") else said.decode("ascii"))
                  for m in each(STATE)]
        states += [(m.start(), "fallback") for m in each(FALLBACK)]
        states += [(m.start(), "layers" if int(m.group(1) or m.group(2)) == 0 else "gpu") for m in each(LAYERS)]
        if states:
            at, state = max(states)
            self.device = (*self.line_at(block, begin, end, at), state)
        for m in each(CPU_BUILD):
            if self.build is None:
                self.build = (*where(m), m.group(0).decode("ascii"))
        for m in each(CUDA_ANSWER):
            self.answer = (*where(m), m.group(1).lower() == b"true" if m.group(1) else m.group(3) is not None or m.group(2) != b"0")
        self.shown = self.shown or first(SHOWN)
        self.cuda_asked = self.cuda_asked or first(CUDA_ASKED)
        self.said_cpu = self.said_cpu or first(SAID_CPU)
        for m in each(WORLD):
            count = m.group(1) or m.group(2) or m.group(3)
            self.world = (*self.around(block, begin, end, m), int(count) if count else 1)
        for m in each(LAUNCHED):
            count = next(g for g in m.groups() if g is not None)
            n = count.count(b",") + 1 if b"," in count else int(count)
            self.launched = (*where(m), n)

    def around(self, block: bytes, begin: int, end: int, m: re.Match[bytes]) -> tuple[int, str]:
        """The line number of a match and its words with up to AROUND characters of the line on each side (a sentence of a
        long paragraph, not the paragraph)."""
        number, _ = self.line_at(block, begin, end, m.start())
        line_start = block.rfind(b"\n", begin, m.start()) + 1 or begin
        line_end = block.find(b"\n", m.end(), end)
        line_end = end if line_end == -1 else line_end
        start, stop = max(line_start, m.start() - AROUND), min(line_end, m.end() + AROUND)
        if start > line_start:  # (whole words: from the first space after the cut, to the last before it)
            start = block.find(b" ", start, m.start()) + 1 or start
        if stop < line_end and (cut := block.rfind(b" ", m.end(), stop)) != -1:
            stop = cut
        text = " ".join(block[start:stop].decode("utf-8", "replace").split())
        return number, text

    def said_line(self) -> str:
        """The reporter's sentence that the job does not use the GPU, with its line ('' when none)."""
        return f"line {self.said[0]}: {self.said[1]}" if self.said is not None else ""

    def findings(self, ended: bool, decided: bool) -> list[Finding]:
        """`ended`: the log shows the run ended well (then the unused GPUs did not stop it: info); `decided`: the log shows
        that, or a failure, or another finding already says the GPU is idle (then a title's words alone add nothing)."""
        if self.cpu is not None:
            return []  # the CPU was chosen
        if self.banner is None and not self.fewer():
            state = self.on_cpu(ended) or self.one_process(ended)
            if state:
                return state
            return self.title_said() if not decided else []
        meant = self.asked or self.said
        evidence: dict[str, Any] = {}
        counts: dict[str, Any] = {}  # the title's numbers (case "fewer")
        if self.banner is not None:
            line, banner = self.banner
            case = "none"
            evidence["banner"] = f"line {line}: {banner}"
        elif self.fewer() and self.found is not None and self.used is not None:
            line, banner = self.used[:2]
            case, counts = "fewer", {"available": self.found[2], "used": self.used[2]}
            evidence["banner"] = [f"line {self.found[0]}: {self.found[1]}", f"line {line}: {banner}"]
        else:
            return []
        if self.asked is not None:
            evidence["the job asked for GPUs"] = f"line {self.asked[0]}: {self.asked[1]}"
        if self.said is not None:
            evidence["the reporter says"] = self.said_line()
        if meant is None:
            evidence["what decides it"] = "whether the job was meant to run on the GPUs: its GPU option (gpus, devices, accelerator) or its launch command"
        elif ended:
            evidence["what decides it"] = ENDED_WELL
        return [GPUS_LEFT_UNUSED(
            case=case, severity=Severity.WARN if meant is not None and not ended else Severity.INFO, evidence=evidence,
            line=line, banner=banner, **counts,
            meant=(f", while line {meant[0]} shows it meant to use them" if meant is not None
                   else "; the log does not show whether the job was meant to use them"),
        )]

    def on_cpu(self, ended: bool) -> list[Finding]:
        """The run is on the CPU (its latest device line, a CPU build of torch, torch's answer False, or the reporter's
        sentence) while the log shows a GPU or a job that asked for one; [] otherwise."""
        if self.device is not None and self.device[2] not in ("cpu", "fallback", "layers"):
            return []  # the run's latest device line names a GPU (or Apple's): it is not on the CPU
        cpu = (self.device[:2] if self.device is not None else self.build[:2] if self.build is not None
               else self.answer[:2] if self.answer is not None and not self.answer[2] else self.said_cpu)
        sees = self.answer is not None and self.answer[2]
        gpu = (self.answer[:2] if sees and self.answer is not None else None) or self.shown or self.cuda_asked or self.said
        if cpu is None or gpu is None:
            return []
        state = self.device[2] if self.device is not None else ""
        # a program's own line that it looked for the GPU and went on on the CPU says the GPU was meant (JAX's says it of any
        # machine, and keeps to the rest: a GPU the log shows, or asks for)
        own = cpu if state == "fallback" and b"TPU" not in cpu[1].encode("utf-8") else None
        meant = self.cuda_asked or self.asked or self.said or self.said_cpu or own
        case = ("cpu-layers" if state == "layers" else "cpu-build" if self.build is not None else "cpu-fallback" if state == "fallback"
                else "cpu-device" if sees else "cpu")
        evidence: dict[str, Any] = {"on the CPU": f"line {cpu[0]}: {cpu[1]}", "GPU": f"line {gpu[0]}: {gpu[1]}"}
        if self.build is not None and self.build[:2] != cpu:
            evidence["torch"] = f"line {self.build[0]}: {self.build[1]}"
        if meant is not None and meant != cpu:
            evidence["the job asked for GPUs"] = f"line {meant[0]}: {meant[1]}"
        if cpu is self.said_cpu:
            evidence["what decides it"] = ("the job's own line that names its device (SB3's 'Using cuda device', accelerate's 'Device: cuda'), "
                                           "or nvidia-smi while it runs: no process of the job on the GPU = it runs on the CPU")
        elif meant is None:
            evidence["what decides it"] = "whether the job was meant to run on the GPU: its device option or its launch command"
        elif ended:
            evidence["what decides it"] = ENDED_WELL
        return [GPUS_LEFT_UNUSED(
            # (JAX's own fix is its CUDA build; another program's, what decides it; a CPU build shown decides it already)
            case=case, fix_case="cpu-fallback-program" if own is not None and case == "cpu-fallback" else None,
            severity=Severity.WARN if meant is not None and not ended else Severity.INFO, evidence=evidence,
            line=cpu[0], banner=f"the reporter's words: {cpu[1]}" if cpu is self.said_cpu else cpu[1], gpu_line=gpu[0], gpu=gpu[1][:120],
            build=self.build[2] if self.build is not None else "",
            meant=(f", and line {meant[0]} shows it meant to use one" if meant is not None and meant != cpu
                   else "" if meant is not None else "; the log does not show whether the job was meant to use it"),
        )]

    def one_process(self, ended: bool) -> list[Finding]:
        """The run says it is one process while its launch asked for several, or the reporter says it uses one GPU only;
        [] otherwise (one process and nothing that asked for more is a single-GPU run)."""
        if self.world is None or self.world[2] != 1:
            return []
        launched = self.launched if self.launched is not None and self.launched[2] > 1 else None
        said = self.said if self.said is not None and ONE.search(self.said[1]) else None  # "only uses a single GPU"
        if launched is None and said is None:
            return []
        line, text = self.world[:2]
        n = launched[2] if launched is not None else 0
        evidence: dict[str, Any] = {"one process": f"line {line}: {text}"}
        if launched is not None:
            evidence["the launch asked for"] = f"line {launched[0]}: {launched[1]}"
        if said is not None:
            evidence["the reporter says"] = self.said_line()
        if ended:
            evidence["what decides it"] = ENDED_WELL
        launcher = launched is not None and re.search(r"--nproc|--num[_-]processes|horovodrun|mpirun|mpiexec|deepspeed", launched[1]) is not None
        runner = "accelerate" if "Num processes" in text else "horovod" if "hvd." in text else ""
        return [GPUS_LEFT_UNUSED(
            case="one-process-launched" if launcher else "one-process",
            fix_case=None if launcher else f"one-process-{runner}" if runner else None,
            severity=Severity.INFO if ended else Severity.WARN, evidence=evidence, line=line, banner=text,
            asked=(f"line {launched[0]} asked for {n}" if launched is not None else f"the reporter says the job uses one GPU only (line {said[0]})" if said is not None else ""),
            n=n or "<GPUs>",
        )]

    def fewer(self) -> bool:
        """The banner says the job uses fewer GPUs than it found."""
        return self.found is not None and self.used is not None and self.used[2] < self.found[2]

    def title_said(self) -> list[Finding]:
        """The thread's title says the job does not use the GPU, and no line of the log says where it runs."""
        if self.title is None:
            return []
        line, said = self.title
        return [LOG_SAID_GPU_UNUSED(evidence={"said": f"line {line}: {said}"}, line=line, said=said.lstrip("# "))]
