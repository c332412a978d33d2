"""Family rules found from the fifth development sample (tests/fixtures/log_sample/dev5, issue 35 item 4).

Each rule covers one family of that sample's threads, whatever the variant of the message: a
text-generation-inference model shard that died (the launcher's words for it, the router's, the signal)
or raised (in set-up, warm-up or a request), a launcher's clap parser refusing an argument, a process killed by SIGILL (a binary using CPU instructions the host lacks), a model that cannot be split
evenly over its tensor-parallel shards, an inference server whose token budget does not fit the GPU memory
left at warm-up, docker without the NVIDIA container runtime, a script that requires --local_rank when the
launcher no longer passes it, a transformers release that does not know the model's type, an FSDP auto-wrap class
the model does not have, a cuDNN failure, the server's
Flash Attention models that could not be imported, and a Slurm client that cannot reach its controller.
Their examples are real lines from those threads; their counter-examples are the nearest lines that mean
something else.
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, NOT_HEADING, groups, pattern

E, W = Severity.ERROR, Severity.WARN

ILLEGAL_INSTRUCTION = "process-illegal-instruction"

MODEL_TYPE_KEY = re.compile(r"^\s*KeyError: '([\w\-]+)'")
CLAP_HINT = re.compile(r"^\s*(?:\[possible values: (?P<possible>[^\]]+)\]|tip: (?P<tip>.+))$")


def clap_fields(m: re.Match, context: list[str]) -> dict:
    """The parser's own remedy, printed under its error line: the values it takes and its tip."""
    out = groups(m, context)
    for line in context:
        hint = CLAP_HINT.match(line)
        if hint:
            out.update({k: v.strip() for k, v in hint.groupdict().items() if v and k not in out})
    return out

# cuDNN that could not create its handle, in the words of the framework that asked: what that framework's own step is
CUDNN_HANDLE_STEP = ("cuDNN could not create its handle (TensorFlow's words): TensorFlow maps nearly all of the GPU's memory before cuDNN "
                     "asks for its own, so tf.config.experimental.set_memory_growth(gpu, True) for each GPU (TF 1.x: "
                     "config.gpu_options.allow_growth = True; or TF_FORCE_GPU_ALLOW_GROWTH=true), and another process on the GPU "
                     "(nvidia-smi) stopped; then a cuDNN of the version this TensorFlow build names")
THEANO_HANDLE_STEP = ("Theano's gpuarray could not create cuDNN's handle, and says it can be a sign of a too old driver: a driver as new as "
                      "the CUDA that Theano and cuDNN were built for (nvidia-smi's Driver Version against CUDA's table), and that cuDNN's build")


def cudnn_fields(m: re.Match, context: list[str]) -> dict:
    """The message's status; a handle not created carries its framework's own step (the fix's first)."""
    out = groups(m, context)
    if m.group("handle_status"):
        out.update(read_as="cudnn-error", step=CUDNN_HANDLE_STEP)
    elif m.group("theano"):
        out.update(read_as="cudnn-error", step=THEANO_HANDLE_STEP)
    return out


PATTERNS = [
    pattern(
        ILLEGAL_INSTRUCTION,
        "launcher",
        CAUSE,
        E,
        "a process was killed by SIGILL (illegal instruction): a binary uses CPU instructions this host lacks",
        r"^Illegal instruction(?: \(core dumped\))?$|: line \d+: +\d+ Illegal instruction\s|Signal 4 \(SIGILL\) received by PID|"
        r"exitcode\s*:\s*-4\b|failed \(exitcode: -4\)|exits with return code = -4\b|terminated with signal SIGILL|"
        r"[Ss]hard process was signaled to shutdown with signal 4\b",
        ("Illegal instruction", "SIGILL", ": -4", "= -4", "signal 4"),
        why="""SIGILL is sent when the CPU meets an instruction it does not implement. The process (here without a
        traceback: the kernel stops it at that instruction) ran machine code built for a newer CPU than this one: a
        wheel or server binary compiled with AVX2/AVX-512 (inference servers, quantization and attention kernels,
        torch builds) on an older CPU, or on a virtual machine or emulator that hides the host's CPU flags (a VM
        without host CPU passthrough, an x86 image emulated on ARM). It is not a GPU error: a GPU kernel's illegal
        instruction is reported as a CUDA error, not as this signal.""",
        fix="""compare the CPU flags with what the binary needs: `grep -o -w 'avx[^ ]*' /proc/cpuinfo | sort -u` (no avx2 or
        avx512 there is the usual answer); run on a host with that instruction set, give the VM the host CPU model
        (libvirt cpu mode host-passthrough, or the cloud instance type), or use a build made for this CPU""".replace("\n        ", " "),
        examples=[
            ("2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0", "huggingface/text-generation-inference#1627"),
            ("Illegal instruction (core dumped)", "the shell's report of a process killed by SIGILL"),
            ("  traceback : Signal 4 (SIGILL) received by PID 5121", "torchrun root-cause block (signal name format)"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: an illegal instruction was encountered",  # a GPU kernel's fault, reported by CUDA
            "  exitcode  : -41 (pid: 4412)",
            "2024-10-01T07:43:22.342900Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 6 rank=0",
        ],
        fields=groups,
    ),
    pattern(
        "tgi-shard-died",
        "launcher",
        CONSEQUENCE,
        E,
        "a text-generation-inference model shard died (the server cannot serve without it)",
        r"[Ss]hard process was signaled to shutdown with signal (?P<signal>\d+)|Shard (?P<shard>\d+) (?P<how>failed to start|crashed)|"
        r"Error: (?P<error>ShardCannotStart|ShardFailed|WebserverFailed)\b|Webserver Crashed|"
        r"Request failed during generation: Server error: (?P<router>error trying to connect|transport error)|"
        r"(?:er)?ror trying to connect: No such file or directory \(os error 2\)",  # the router's half of a line a terminal cut
        ("signaled to shutdown", "failed to start", "crashed", "Crashed", "ShardCannotStart", "ShardFailed", "WebserverFailed", "Server error: ",
         "trying to connect: No such file"),
        why="""text-generation-inference runs one model process (a shard) per GPU under its launcher, and the router
        talks to them over a unix socket. A shard ended: before it was ready (failed to start, ShardCannotStart) or
        while serving (crashed; the router then cannot reach its socket: 'error trying to connect', 'transport
        error'), and the launcher stops the server. The reason is the shard's own error, printed after 'Shard complete
        standard error output:' (a traceback: out of memory at warm-up, a model or quantization it cannot load, a
        model that cannot be split over the shards) or, when that output is empty, the signal that ended it: 4
        SIGILL (CPU instructions the host lacks), 6 SIGABRT (an abort after a CUDA or NCCL error), 7 SIGBUS (shared
        memory: docker --shm-size), 9 SIGKILL (host or container memory limit), 11 SIGSEGV.""",
        fix="""read the lines after 'Shard complete standard error output' (the shard's traceback) or the signal number; start the
        server with one shard (--num-shard 1) and the same model to see a shard's error alone; for signal 7 give the container
        --shm-size 1g or more, for 9 more host memory, for 6 the CUDA/NCCL error above it""".replace("\n        ", " "),
        examples=[
            ("Error: ShardCannotStart", "huggingface/text-generation-inference#1627"),
            ("2024-03-06T17:53:31.149443Z ERROR text_generation_launcher: Shard 0 failed to start", "huggingface/text-generation-inference#1627"),
            ("2024-10-01T07:43:22.342900Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 6 rank=0", "huggingface/text-generation-inference#2593"),
            ("2024-10-01T07:43:22.392453Z ERROR text_generation_launcher: Shard 0 crashed", "huggingface/text-generation-inference#2593"),
            ("2023-07-07T17:55:43.805488Z ERROR text_generation_launcher: Webserver Crashed", "huggingface/text-generation-inference#563"),
            ('{"timestamp":"2025-08-29T14:40:17.288163Z","level":"ERROR","message":"Request failed during generation: Server error: error trying to connect: No such file or directory (os error 2)","target":"text_generation_router_v3::backend"}', "huggingface/text-generation-inference#3317"),
        ],
        not_examples=[
            "2024-05-01T01:17:02.618817Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1",
            "2024-11-20T14:49:09.978651Z  INFO shard-manager: text_generation_launcher: Shard ready in 528.928728549s rank=0",
            "2024-03-06T17:53:31.149481Z  INFO text_generation_launcher: Shutting down shards",
            "2023-07-07T17:55:44.134207Z  INFO text_generation_launcher: Shard 0 terminated",  # the launcher stopping it, after the failure
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "tgi-shard-raised",
        "launcher",
        CONSEQUENCE,
        E,
        "a text-generation-inference shard raised an exception (in model set-up, warm-up or a request)",
        r"Method (?P<method>Warmup|Prefill|Decode|FilterBatch|ClearCache|Info|Health) encoun(?:tered an error)?|Error when initializing model",
        ("Method Warmup", "Method Prefill", "Method Decode", "Method FilterBatch", "Method ClearCache", "Method Info", "Method Health",
         "Error when initializing model"),
        why="""The shard (the model process on one GPU) caught an exception and logged it before its traceback: 'Error when
        initializing model' while it loaded the weights (a model, quantization or shard count it cannot load), 'Method
        Warmup encountered an error' while it tried the token budget it was given (most often out of memory: the
        prefill-token and total-token limits do not fit in the GPU memory the weights left), 'Method Prefill/Decode' while
        it served a request (a long request that does not fit, a kernel error). The traceback after this line names the
        error; a line it is cut before leaves only the phase.""",
        fix="""read the traceback after this line (its last line is the error); at warm-up, lower --max-batch-prefill-tokens and
        --max-total-tokens or add shards; at initialisation, check the model's architecture and --quantize against what this
        version supports""".replace("\n        ", " "),
        examples=[
            ("2023-09-26T21:48:00.969072Z ERROR text_generation_launcher: Method Warmup encountered an error.", "huggingface/text-generation-inference#1067"),
            ("2024-06-17T14:22:46.490042Z ERROR text_generation_launcher: Method Prefill encountered an error.", "huggingface/text-generation-inference#2083 (Mixtral-8x22B, a long request)"),
            ("2024-04-19T11:06:25.868590Z ERROR text_generation_launcher: Method Warmup encoun", "huggingface/text-generation-inference#1769, as a terminal 80 columns wide cuts it"),
            ('{"timestamp":"2023-04-19T17:08:51.913366Z","level":"ERROR","fields":{"message":"Error when initializing model\\nTraceback (most recent call last):\\n  File \\"/opt/conda/bin/text-generation-server\\", line 8, in <module>', "huggingface/text-generation-inference#206 (JSON log output)"),
        ],
        not_examples=[
            "2024-04-19T11:06:25.868590Z  INFO text_generation_launcher: Warming up model",
            "ERROR: Exception in ASGI application",
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "cli-arguments-refused",
        "launcher",
        CAUSE,
        E,
        "a launcher's command-line parser (clap) refused an argument before anything ran",
        r"^error: (?:invalid value '(?P<value>[^']*)' for '(?P<flag>[^']+)'|unexpected argument '(?P<unexpected>[^']+)' found"
        r"|the following required arguments were not provided|a value is required for '(?P<needs_value>[^']+)' but none was supplied)",
        ("error: invalid value", "error: unexpected argument", "error: the following required arguments", "error: a value is required"),
        why="""Servers and launchers written in Rust (text-generation-launcher, text-embeddings-router and others) parse their
        command line with clap, which stops at the first bad argument and says which one and why; the lines under it give
        the values it takes ('[possible values: ...]') and a 'tip:'. These launchers also read each option from an
        environment variable of the same name in capitals (--disable-custom-kernels from DISABLE_CUSTOM_KERNELS), so the
        bad value may come from the environment (docker -e, a Kubernetes manifest) rather than the command line: a boolean
        must be true or false in lower case.""",
        fix="""use a value from the '[possible values: ...]' line (or the tip's); check the environment variables named like the
        option (env | grep -i NAME) as well as the command line; PROG --help lists the options of this version""".replace("\n        ", " "),
        examples=[
            ("error: invalid value 'True' for '--disable-custom-kernels'", "huggingface/text-generation-inference#1451 (DISABLE_CUSTOM_KERNELS=True)"),
            ("error: unexpected argument '--max-input-tokens' found", "clap's message for an option an older launcher does not have"),
        ],
        not_examples=[
            "train.py: error: unrecognized arguments: --local-rank=0",  # argparse: the script's own parser
            "error: invalid value for the option",
        ],
        context_after=3,
        fields=clap_fields,
    ),
    pattern(
        "tensor-parallel-split-uneven",
        "ddp",
        CAUSE,
        E,
        "the model cannot be split evenly over this many tensor-parallel shards",
        r"(?:The choosen size (?P<size>\S+) )?is not compatible with sharding(?: on (?P<shards>\d+) shards)?|"
        r"`?num_heads`? must be divisible by `?num_shards`?(?: \(got `num_heads`: (?P<heads>\d+) and `num_shards`: (?P<num_shards>\d+))?|"
        r"Total number of attention heads \((?P<attention_heads>\d+)\) must be divisible by tensor parallel size \((?P<tp>\d+)\)",
        ("not compatible with sharding", "must be divisible by"),
        why="""Tensor parallelism (a sharded inference server, vLLM's tensor_parallel_size, Megatron's TP) cuts each
        weight matrix and the attention heads into equal parts, one per GPU. A dimension that the number of shards
        does not divide cannot be cut: the attention heads (falcon-7b has 71, so no even split at all), the
        key/value heads, or a quantized tensor's groups (an AWQ or bitsandbytes 4-bit checkpoint's packed
        dimension). The count of GPUs, not the memory, is what is wrong.""",
        fix="""use a shard count that divides the model's dimensions (config.json: num_attention_heads, num_key_value_heads; e.g.
        1, 2, 4 or 8 for 32 heads): --num-shard / tensor_parallel_size N, or fewer visible GPUs (CUDA_VISIBLE_DEVICES); a model
        with a prime head count runs on one shard (or with pipeline parallelism); for a quantized checkpoint, one quantized
        with a group size the shard count divides""".replace("\n        ", " "),
        examples=[
            ("AssertionError: The choosen size 150 is not compatible with sharding on 4 shards", "huggingface/text-generation-inference#1441 (an AWQ checkpoint on 4 shards)"),
            ("ValueError: `num_heads` must be divisible by `num_shards` (got `num_heads`: 71 and `num_shards`: 2", "huggingface/text-generation-inference#1354 (falcon-7b on 2 GPUs)"),
            ('text-generation-inference-1  | [rank1]: │   276 │   │   ), f"The choosen size {size} is not compatible with sharding o │', "huggingface/text-generation-inference#3005 (a bnb-4bit checkpoint on 2 GPUs, rich traceback)"),
            ("ize} is not compatible with sharding o │", "huggingface/text-generation-inference#3005, the rich box's line as a terminal 80 columns wide cuts it"),
            ("ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3).", "vLLM's config check (Qwen3-8B on 3 GPUs)"),
        ],
        not_examples=[
            "AssertionError: train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 1028 != 128 * 1 * 8",
            "ValueError: GPU count must be divisible by tensor parallel size.",  # a launcher's own option check: no model dimension
            "2023-08-24T03:32:01.146724Z  INFO text_generation_launcher: Sharding model on 4 processes",
        ],
        fields=groups,
    ),
    pattern(
        "inference-warmup-out-of-memory",
        "cuda",
        CAUSE,
        E,
        "the inference server's token budget does not fit in the GPU memory left after loading the model (out of memory at warm-up)",
        r"Not enough memory to handle (?P<tokens>\d+) prefill tokens|Unable to warmup model: .*(?:out of memory|would exceed allowed memory)|"
        r"max seq len \((?P<max_len>\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((?P<kv_tokens>\d+)\)|"
        r"No available memory for the cache blocks",
        ("Not enough memory to handle", "Unable to warmup model", "stored in KV cache", "No available memory for the cache blocks"),
        why="""An inference server loads the weights, then sizes its batches and KV cache from the GPU memory that is left:
        text-generation-inference runs a warm-up prefill of --max-batch-prefill-tokens tokens, vLLM reserves
        gpu_memory_utilization of the GPU for the cache of max_model_len tokens. The weights left too little for the
        budget asked for: the model is too big for these GPUs at this precision, the token limits (prefill tokens,
        total tokens, context length) are too high, another process holds part of the GPU, or the memory fraction the
        server may use is capped below what the model needs.""",
        fix="""lower the budget (--max-batch-prefill-tokens, --max-input-tokens / --max-total-tokens; vLLM: max_model_len) or give it more
        memory: more shards (--num-shard / tensor_parallel_size), a quantized checkpoint, a higher --cuda-memory-fraction /
        gpu_memory_utilization, and no other process on the GPU (nvidia-smi)""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`", "huggingface/text-generation-inference#1067 (an AWQ model)"),
            ("RuntimeError: Not enough memory to handle 1024 prefill tokens. You need to decrease `--max-batch-prefill-tokens`", "huggingface/text-generation-inference#755 (Llama-2-70B GPTQ)"),
            ("thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 would exceed allowed memory. (out of memory)\\nCurrently allocated     : 16.08 GiB\\nRequested               : 4.83 GiB", "huggingface/text-generation-inference#563"),
            ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (21360). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.", "vLLM's engine check"),
        ],
        not_examples=[
            "2024-11-13T08:00:00Z  INFO text_generation_router: router/src/main.rs:354: Setting max batch total tokens to 30816",  # a warm-up that fitted
            "INFO 07-14 08:10:40 gpu_executor.py:83] # GPU blocks: 7553, # CPU blocks: 2048",
            "Default `max_batch_prefill_tokens` to 10049",
        ],
        fields=groups,
    ),
    pattern(
        "docker-gpu-runtime-missing",
        "platform",
        CAUSE,
        E,
        "docker cannot give the container GPUs: the NVIDIA container runtime is not set up",
        r"could not select device driver \"(?P<driver>[^\"]*)\"|"
        r"unknown or invalid runtime name: nvidia|Unknown runtime specified nvidia",
        ("could not select device driver", "invalid runtime name: nvidia", "Unknown runtime specified nvidia"),
        why="""`docker run --gpus ...` (or a compose file's GPU reservation, or --runtime=nvidia) asks the docker daemon for a
        device driver that can hand GPUs to the container; the daemon has none registered. The NVIDIA Container Toolkit
        (nvidia-container-toolkit, formerly nvidia-docker2) is not installed, or it is installed but docker was not
        configured to use it or not restarted since, or this docker is another daemon (rootless docker, Docker Desktop's
        VM, snap's docker) than the one configured. The host's driver (nvidia-smi) can be fine: this is docker's side.""",
        fix="""install the NVIDIA Container Toolkit, then `sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker`;
        check with `docker info | grep -i nvidia` and `docker run --rm --gpus all ubuntu nvidia-smi`; a run meant for the CPU (a host
        without a GPU, a script's GPU option set to -1 or none) must not ask for GPUs: drop --gpus (and a compose file's GPU
        reservation) for it (knaw-huc/loghi#18: a training script that passed --gpus all whatever its GPU option said)""".replace("\n        ", " "),
        examples=[
            ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].', "huggingface/text-generation-inference#1312"),
            ('**docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].', "huggingface/text-generation-inference#904 (nvidia-ctk 1.13.5 installed, docker not configured)"),
            ('Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]', "a compose file's GPU reservation on a daemon without the runtime"),
            ("docker: Error response from daemon: unknown or invalid runtime name: nvidia.", "docker run --runtime=nvidia without the runtime"),
        ],
        not_examples=[
            "docker: Error response from daemon: pull access denied for textgen, repository does not exist or may require 'docker login'",
            "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory",  # the runtime is there, the driver is not
        ],
        fields=groups,
    ),
    pattern(
        "script-requires-local-rank-argument",
        "launcher",
        CAUSE,
        E,
        "the script requires a --local_rank argument that this launcher does not pass",
        r"error: the following arguments are required: (?P<required>(?:\S+, )*--local[_-]rank\b.*)",
        ("arguments are required",),
        why="""The script declares --local_rank as a required argument, written for the old torch.distributed.launch, which
        passed --local_rank=N to every process. torchrun, torch.distributed.launch with --use_env, and the launch of torch 2.0
        and later do not (torchrun sets LOCAL_RANK in the environment; the newer launch passes --local-rank with a dash), so
        argparse stops every process before anything runs.""",
        fix="""make the argument optional and read the launcher's environment: parser.add_argument("--local_rank", "--local-rank",
        type=int, default=int(os.environ.get("LOCAL_RANK", 0))), then start it with torchrun""".replace("\n        ", " "),
        examples=[
            ('but got "Swin Transformer training and evaluation script: error: the following arguments are required: --local_rank"', "microsoft/Swin-Transformer#342"),
            ("> SimMIM pre-training script: error: the following arguments are required: --local_rank", "mmendiet/GFM#4"),
        ],
        not_examples=[
            "train.py: error: unrecognized arguments: --local-rank=0",  # the opposite: the launcher passes it, the script refuses it
            "train.py: error: the following arguments are required: --output_dir/--output-dir",
        ],
        fields=groups,
    ),
    pattern(
        "transformers-model-type-unknown",
        "platform",
        CAUSE,
        E,
        "the installed transformers does not know this model's type (too old for the model)",
        r"has model type `(?P<model_type>[\w\-]+)` but Transformers does not recognize this architecture|"
        r"models/auto/configuration_auto\.py(?:\"|\]\([^)]*\))?,? (?:line \d+, )?in __getitem__",
        ("does not recognize this architecture", "configuration_auto.py"),
        why="""transformers maps a checkpoint's config.json model_type (llama, mistral, qwen2, gemma3, ...) to the classes that
        build it; a model_type it has no entry for stops from_pretrained / AutoConfig before any weight is read: newer
        releases say so ('does not recognize this architecture'), older ones raise a bare KeyError with the type's name from
        configuration_auto's mapping (this frame, the KeyError under it). The installed transformers predates the model
        (the model came out after this release, or was then only in transformers' main branch), or the job runs another
        Python environment than the one that was upgraded.""",
        fix="""upgrade transformers in the environment the job runs (pip install -U transformers; a model newer than the latest
        release: pip install git+https://github.com/huggingface/transformers), check with python -c "import transformers;
        print(transformers.__version__)" from that environment; a model that ships its own code needs trust_remote_code=True""".replace("\n        ", " "),
        examples=[
            ('  File "/data/qbao775/miniconda3/envs/explanation/lib/python3.10/site-packages/t                                                                             ransformers/models/auto/configuration_auto.py", line 623, in __getitem__', "tatsu-lab/stanford_alpaca#159 (KeyError: 'llama' before LLaMA was released in transformers)"),
            ("[/usr/local/lib/python3.9/dist-packages/transformers/models/auto/configuration_auto.py](https://localhost:8080/#) in __getitem__(self, key)", "tatsu-lab/stanford_alpaca#23 (a notebook's traceback)"),
            ("ValueError: The checkpoint you are trying to load has model type `qwen2` but Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.", "transformers' message for an unknown model_type"),
        ],
        not_examples=[
            '  File "/usr/lib/python3.10/site-packages/transformers/models/auto/configuration_auto.py", line 1021, in from_pretrained',
            "KeyError: 'input_ids'",
        ],
        context_after=4,
        fields=lambda m, ctx: {**groups(m, ctx), **next(({"model_type": k.group(1)} for k in map(MODEL_TYPE_KEY.search, ctx) if k), {})},
    ),
    pattern(
        "fsdp-wrap-class-not-found",
        "ddp",
        CAUSE,
        E,
        "the FSDP auto-wrap policy names a layer class the model does not have",
        r"Could not find the transformer layer class (?:(?P<layer_class>\w+) )?(?:to wrap )?in the model",
        ("Could not find the transformer layer class",),
        why="""FSDP's transformer auto-wrap policy wraps every module of the class named in fsdp_transformer_layer_cls_to_wrap
        (Trainer) or transformer_layer_cls_to_wrap (accelerate's fsdp_config). No module of the model has that class: the
        name is another architecture's (LlamaDecoderLayer for a Mistral, Qwen or GPT model), an older spelling from the
        transformers version a recipe was written for (LLaMADecoderLayer), or a typo.""",
        fix="""name the model's own decoder-layer class: print(sorted({type(m).__name__ for m in model.modules()})) and set
        --fsdp_transformer_layer_cls_to_wrap (or fsdp_config's transformer_layer_cls_to_wrap) to it, e.g. MistralDecoderLayer""".replace("\n        ", " "),
        examples=[
            ("Exception: Could not find the transformer layer class to wrap in the model.", "tatsu-lab/stanford_alpaca#151"),
            ("Exception: Could not find the transformer layer class LlamaDecoderLayer in the model.", "accelerate's FSDP plugin message"),
        ],
        not_examples=[
            "FutureWarning: using `--fsdp_transformer_layer_cls_to_wrap` is deprecated. Use fsdp_config instead",
            "ValueError: Could not find the transformer layer: the checkpoint has no weight for model.layers.0",
        ],
        fields=groups,
    ),
    pattern(
        "cudnn-error",
        "cuda",
        CAUSE,
        E,
        "cuDNN failed to run a convolution or normalisation",
        # torch 1.13+ (cuDNN v8 API) says it finds no engine; torch 1.8-1.12 said it found no valid algorithm
        r"(?P<op>GET|FIND) was unable to find an engine to execute this computation|Unable to find a valid cuDNN algorithm to run convolution"
        r"|cuDNN error: (?P<status>CUDNN_STATUS_\w+)"
        # the same status where cuDNN could not even create its handle: TensorFlow's stream executor (an E line, then its
        # "Failed to get convolution algorithm" or a Check failure), Theano's gpuarray (its own hint: a too old driver)
        r"|" + NOT_HEADING + r"[Cc]ould not create cudnn handle: (?P<handle_status>CUDNN_STATUS_\w+)"
        r"|" + NOT_HEADING + r"(?P<theano>Error creating cudnn handle\. This can be a sign of a too old driver)",
        ("unable to find an engine", "valid cuDNN algorithm", "cuDNN error: CUDNN_STATUS_", "ould not create cudnn handle: CUDNN_STATUS_",
         "Error creating cudnn handle"),
        why="""cuDNN (the library torch uses for convolutions, RNNs and some normalisations) refused the call. 'Unable to find an
        engine' (torch 1.8-1.12: 'no valid cuDNN algorithm') and CUDNN_STATUS_NOT_SUPPORTED: the cuDNN in this environment has no kernel for this layer's shape, dtype
        and GPU (a cuDNN build that does not match the torch/CUDA build, or one older than the GPU), or the workspace it
        needs does not fit in the GPU memory left. CUDNN_STATUS_NOT_INITIALIZED and CUDNN_STATUS_INTERNAL_ERROR:
        usually cuDNN could not allocate GPU memory for its handle (the GPU was already full) or the driver and cuDNN do
        not match. CUDNN_STATUS_EXECUTION_FAILED: a kernel failed, often after an earlier CUDA error.""",
        fix="""check the GPU's free memory when it fails (nvidia-smi; a smaller batch) and that cuDNN comes from the torch build
        (python -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())" and no other
        libcudnn on LD_LIBRARY_PATH); torch.backends.cudnn.enabled = False for one run tells a cuDNN problem from the model's""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: GET was unable to find an engine to execute this computation", "hpcaitech/Open-Sora#254 (single-GPU training, backward pass)"),
            ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "torch's cuDNN error text"),
            ("2020-05-07 10:12:01.123456: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
             "tensorflow/tensorflow#39264; tensorflow/tensorflow#24496; nickliqian/cnn_captcha#107 (allow_growth fixed it)"),
            ("2017-10-30 17:55:23.525428: E tensorflow/stream_executor/cuda/cuda_dnn.cc:371] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
             "tensorflow/tensorflow#14111 (TF 1.x's lower-case words, then a Check failure in conv_ops.cc)"),
            ("RuntimeError: ('Error creating cudnn handle. This can be a sign of a too old driver.', 4)", "Theano/Theano#6556 (Theano 1.0.1, CUDA 9.0, cuDNN 7.0.3)"),
        ],
        not_examples=[
            "2017-10-30 17:55:23.525452: E tensorflow/stream_executor/cuda/cuda_dnn.cc:338] could not destroy cudnn handle: CUDNN_STATUS_BAD_PARAM",
            "UserWarning: Applied workaround for CuDNN issue, install nvrtc.so",
            "cudnn version: 8902",
        ],
        fields=cudnn_fields,
    ),
    pattern(
        "tgi-flash-attention-unavailable",
        "platform",
        CAUSE,
        W,
        "text-generation-inference could not import its Flash Attention models (a slower fallback, or none, for this model)",
        r"Could not import Flash Attention enabled(?: models: (?P<reason>.+))?",
        ("Could not import Flash Attention enabled",),
        why="""Seen: the server could not import the model implementations that use Flash Attention (and with them its
        sharding and paged attention for most LLMs). The reason after the colon decides what it means: 'Flash Attention
        is not installed' on a local install means the server's own flash-attention build is missing (pip's flash-attn
        package is not what it imports); 'cannot import name ...' means the server package and its layers come from
        different versions (an image or install mixed with another); a GPU older than Ampere cannot run it at all. Whether
        the run then failed is decided by the lines after it: the model may still load without Flash Attention (slower,
        one shard), or the shard stops because the model needs it.""",
        fix="""use the official docker image, or build the server's kernels on a local install (cd server && make install
        install-flash-attention); reinstall the server package if a name cannot be imported; on a pre-Ampere GPU set
        USE_FLASH_ATTENTION=False""".replace("\n        ", " "),
        examples=[
            ("2024-04-20T07:20:49.339061Z  WARN text_generation_launcher: Could not import Flash Attention enabled models: Flash Attention is not installed.", "huggingface/text-generation-inference#1778 (a local install)"),
            ("inference-chat_1  | 2024-06-13T12:25:55.978980Z  WARN text_generation_launcher: Could not import Flash Attention enabled models: cannot import name 'FastLayerNorm' from 'text_generation_server.layers.layernorm' (/opt/conda/lib/python3.10/site-packages/text_generation_server/layers/layernorm.py)", "huggingface/text-generation-inference#2064"),
        ],
        not_examples=[
            "2024-04-20T07:20:49.339802Z  WARN text_generation_launcher: Could not import Mamba: No module named 'mamba_ssm'",
            "2023-08-24T03:32:06.695108Z  WARN text_generation_launcher: We're not using custom kernels.",
        ],
        fields=groups,
    ),
    pattern(
        "slurm-controller-unreachable",
        "launcher",
        CAUSE,
        E,
        "the Slurm command cannot find or reach its controller (no Slurm configuration on this machine)",
        r"(?:srun|sbatch|salloc): fatal: Could not establish a configuration source|"
        r"(?:srun|sbatch|salloc|squeue|sinfo|scontrol|slurm_load_\w+)(?:: error)?: .*Unable to contact slurm controller",
        ("Could not establish a configuration source", "Unable to contact slurm controller"),
        why="""A Slurm client (srun, sbatch, salloc) first loads the cluster's configuration: slurm.conf on this machine,
        or the controller's address from a DNS SRV record (configless Slurm). Neither was found, or the controller it
        names does not answer: the job script runs on a machine that is not a node of a Slurm cluster (a container or
        a workstation where a script written for a cluster was started), the node's Slurm configuration is missing, or
        slurmctld is down or unreachable from here.""",
        fix="""run it on the cluster's login node (scontrol ping there shows the controller); off a cluster, start the job
        without srun: torchrun --nproc-per-node=N train.py (MASTER_ADDR/MASTER_PORT for several nodes)""".replace("\n        ", " "),
        examples=[
            ("srun: fatal: Could not establish a configuration source", "OpenGVLab/InternVideo#196 (an evaluation script off a Slurm cluster)"),
            ("srun: error: Unable to allocate resources: Unable to contact slurm controller (connect failure)", "the Slurm client's message when slurmctld does not answer"),
        ],
        not_examples=[
            "srun: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host",  # the search before the verdict: the fatal line decides
            "srun: error: gpu-node-03: task 5: Exited with exit code 1",
        ],
    ),
    pattern(
        "slurm-request-refused",
        "launcher",
        CAUSE,
        E,
        "Slurm refused the job's resource request before anything ran",
        # Slurm's own reasons (slurm_errno.c) for a request the controller will not take, after the client's words for the
        # step that asked: sbatch's submission, srun's and salloc's allocation. A request the GPU plug-in cannot read (an
        # invalid GRES) and MUNGE's authentication error are the container/cluster classes' (patterns/classes24a.py,
        # patterns/classes11b.py), and a controller that does not answer is slurm-controller-unreachable's.
        NOT_HEADING + r"(?P<client>sbatch|srun|salloc): error: (?:Batch job submission failed|Unable to allocate resources|Job submit/allocate failed): "
        r"(?P<reason>Requested node configuration is not available|Node count specification invalid|More processors requested than permitted"
        r"|Invalid partition name specified|Invalid account or account/partition combination specified|Invalid qos specification"
        r"|Job violates accounting/QOS policy|Memory required by task is not available|Requested time limit is invalid"
        r"|Requested partition configuration not available now|Invalid feature specification|Memory specification can not be satisfied)",
        ("Batch job submission failed: ", "Unable to allocate resources: ", "Job submit/allocate failed: "),
        why="""Slurm's controller checks a job's request when it is submitted (sbatch) or when srun or salloc asks for an
        allocation, and refused this one: nothing of the job ran, so the program, torch and the GPUs are not at fault. The
        reason after the colon says which part: 'Requested node configuration is not available': no node of the partition has
        what one node was asked for (more CPUs, memory or GPUs per node than any node has, cores the cluster keeps for the
        system, a constraint no node has, or an autoscaled cluster's nodes not defined yet); 'Node count specification invalid'
        and 'More processors requested than permitted': more nodes or CPUs than the partition allows; 'Invalid partition name',
        'Invalid account or account/partition combination' and 'Invalid qos specification': a name the cluster does not know
        or does not let this user use; 'Job violates accounting/QOS policy': over a limit of the user's QOS (jobs at once,
        CPUs, GPUs, time); 'Requested time limit is invalid': over the partition's time limit; the memory reasons: more
        memory per node or per CPU than the nodes have.""",
        fix="""sinfo -p PARTITION -N -o '%N %c %m %G %f %l'   # each node's CPUs, memory, GPUs (GRES), features and time limit;
        scontrol show partition PARTITION; sacctmgr show assoc user=$USER format=account,partition,qos   # what you may use;
        then ask for no more per node than a node has (--nodes, --ntasks-per-node, --cpus-per-task, --mem, --gres=gpu:N,
        --time), or name the partition, account and QOS that have it""".replace("\n        ", " "),
        examples=[
            ("sbatch: error: Batch job submission failed: Requested node configuration is not available",
             "ArjunaCluster/ArjunaUsers#112 (-n 56 on nodes whose 2 cores are kept for the system); aws/aws-parallelcluster#282"),
            ("srun: error: Unable to allocate resources: Requested node configuration is not available", "AaltoSciComp/scicomp-docs#445"),
            ("sbatch: error: Batch job submission failed: Node count specification invalid", "firemodels/fds#8639 (more nodes than the partition allows)"),
            ("salloc: error: Job submit/allocate failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
             "szcf-weiya/techNotes#7; mila-iqia/milatools#113 (QOSMinCpuNotSatisfied)"),
        ],
        not_examples=[
            "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification",  # the GPU plug-in's (classes24a)
            "sbatch: error: Batch job submission failed: Protocol authentication error",  # MUNGE's (classes11b)
            "srun: error: Unable to allocate resources: Unable to contact slurm controller (connect failure)",  # slurm-controller-unreachable
            "srun: job 123456 queued and waiting for resources",
            "salloc: Pending job allocation 4242",
        ],
        fields=groups,
    ),
]
