"""Family rules found from the fourth development sample (tests/fixtures/log_sample/dev4, issue 35 item 4).

Each rule covers one family of that sample's threads, whatever the variant of the message: bitsandbytes
failing to set up its CUDA library (and the path search that precedes it, which alone decides nothing),
MosaicML Streaming's named shared memory colliding between datasets, ranks or jobs, and a DALI pipeline
whose operator failed. Their examples are real lines from those threads; their counter-examples are the
nearest lines that mean something else (most of all the setup lines of a run that went on to train).
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

BNB_SETUP_FAILED = "bitsandbytes-cuda-setup-failed"
BNB_LIBRARY_LOADED = "bitsandbytes-cuda-library-loaded"  # story.RESOLVED_BY: it settles the path-search warning

PATTERNS = [
    pattern(
        BNB_SETUP_FAILED,
        "platform",
        CAUSE,
        E,
        "bitsandbytes could not set up its CUDA library",
        r"CUDA Setup failed despite GPU being available|CUDA SETUP: Setup Failed!|"
        r"CUDA SETUP: Something unexpected happened|CUDA SETUP: CUDA detection failed|"
        r"CUDA SETUP: Required library version not found: (?P<library>libbitsandbytes_\w+\.(?:so|dll))|"
        r"CUDA SETUP: Defaulting to libbitsandbytes_cpu|[Bb]itsandbytes was compiled without GPU support",
        ("CUDA Setup failed", "CUDA SETUP: ", "compiled without GPU support"),
        why="""bitsandbytes loads a native library built for one CUDA version (libbitsandbytes_cudaXYZ), chosen
        from the CUDA runtime it finds: torch's, or one on LD_LIBRARY_PATH / CUDA_HOME, or the version
        BNB_CUDA_VERSION names. Here no usable library was loaded: the package ships none for the CUDA version
        it detected (several CUDA toolkits installed and a newer one found first), it found no libcudart at all,
        the release predates this GPU or CUDA, or the install is a CPU-only build. Its 8-bit optimizers and
        quantized layers then fail (or run on the CPU library), and so does the job that uses them.""",
        fix="""read the CUDA SETUP lines above the error (the runtime found, the library wanted) and run
        `python -m bitsandbytes` with the job's Python; upgrade it (`pip install -U bitsandbytes`: recent releases
        ship libraries for each CUDA 11.x/12.x and for Windows); with several CUDA toolkits, point it at the one
        torch was built with: BNB_CUDA_VERSION=118 (torch.version.cuda without the dot) and that toolkit's lib64 on
        LD_LIBRARY_PATH; or build it from source for your CUDA""".replace("\n        ", " "),
        examples=[
            ("CUDA Setup failed despite GPU being available. Inspect the CUDA SETUP outputs above to fix your environment!", "bitsandbytes-foundation/bitsandbytes#1522"),
            ("> CUDA SETUP: Setup Failed!", "bitsandbytes-foundation/bitsandbytes#458 (0.39.0 failed where 0.38.1 worked)"),
            ("CUDA SETUP: Something unexpected happened. Please compile from source:", "bitsandbytes-foundation/bitsandbytes#1193"),
            ("CUDA SETUP: Required library version not found: libbitsandbytes_cuda122.so. Maybe you need to compile it from source?", "bitsandbytes-foundation/bitsandbytes#850 (CUDA 11.7, 11.8 and 12.2 installed)"),
            ("CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...", "bitsandbytes-foundation/bitsandbytes#850"),
            ("CUDA SETUP: CUDA detection failed! Possible reasons:", "bitsandbytes-foundation/bitsandbytes#850"),
        ],
        not_examples=[
            "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so",  # the setup going well
            "CUDA SETUP: Loading binary /usr/local/lib/python3.8/dist-packages/bitsandbytes/libbitsandbytes_cuda118.so...",
            "CUDA SETUP: Highest compute capability among GPUs detected: 7.5",
            "CUDA SETUP: Detected CUDA version 117",
        ],
    ),
    pattern(
        "bitsandbytes-libcudart-not-found",
        "platform",
        CAUSE,
        W,
        "bitsandbytes did not find libcudart on the paths it searched first (its setup may still succeed)",
        r"did not contain \[?'?libcudart\.so|CUDA_SETUP: WARNING! libcudart\.so not found in any environmental path",
        ("libcudart.so",),
        why="""Seen: bitsandbytes' CUDA setup looked for the CUDA runtime (libcudart) in the directories of
        LD_LIBRARY_PATH, the environment and CUDA_HOME and did not find it there; it goes on to search backup
        paths (/usr/local/cuda/lib64, torch's own). This warning alone does not decide whether the setup failed:
        the CUDA SETUP lines that follow do. 'CUDA runtime path found' and 'Loading binary ...
        libbitsandbytes_cudaXYZ' mean it recovered and this line is harmless; 'Setup Failed', 'Defaulting to
        libbitsandbytes_cpu' or 'CUDA Setup failed despite GPU being available' mean it did not.""",
        fix="""look at the CUDA SETUP lines after this one (or run `python -m bitsandbytes` with the job's Python): if
        they load a libbitsandbytes_cudaXYZ library, ignore this warning; if the setup failed, put the CUDA runtime
        torch uses on LD_LIBRARY_PATH (its lib64) or upgrade bitsandbytes""".replace("\n        ", " "),
        examples=[
            ("CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...", "bitsandbytes-foundation/bitsandbytes#1059"),
            ("/usr/local/lib/python3.10/dist-packages/bitsandbytes/cuda_setup/paths.py:105: UserWarning: /usr/lib64-nvidia did not contain libcudart.so as expected! Searching further paths...", "bitsandbytes-foundation/bitsandbytes#920 (Colab)"),
            ("/data/conda/envs/xx/lib/python3.11/site-packages/bitsandbytes/cuda_setup/main.py:167: UserWarning: /data/conda/envs/xx did not contain ['libcudart.so', 'libcudart.so.11.0', 'libcudart.so.12.0'] as expected! Searching further paths...", "bitsandbytes-foundation/bitsandbytes#966"),
        ],
        not_examples=[
            "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so",
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",  # a library's own link failure
        ],
        after=(BNB_SETUP_FAILED,),
    ),
    pattern(
        BNB_LIBRARY_LOADED,
        "platform",
        HARMLESS,
        I,
        "bitsandbytes loaded its CUDA library (its setup went through)",
        r"CUDA SETUP: Loading binary \S*libbitsandbytes_cuda\d+\w*\.(?:so|dll)",
        ("CUDA SETUP: Loading binary",),
        why="""Informational: bitsandbytes found a CUDA runtime and loaded the library built for it, so the warnings
        of its path search before this line (directories without libcudart, non-existent paths) were harmless.""",
        fix="nothing to do for bitsandbytes; if the job still fails, the cause is elsewhere in the log",
        examples=[
            ("CUDA SETUP: Loading binary /usr/local/lib/python3.8/dist-packages/bitsandbytes/libbitsandbytes_cuda118.so...", "bitsandbytes-foundation/bitsandbytes#169 (training then starts)"),
            ("CUDA SETUP: Loading binary C:\\Users\\GamingPC\\kohya_ss\\venv\\lib\\site-packages\\bitsandbytes\\libbitsandbytes_cuda116.dll...", "bitsandbytes-foundation/bitsandbytes#522"),
        ],
        not_examples=["CUDA SETUP: Loading binary /opt/conda/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so..."],  # the CPU fallback
    ),
    pattern(
        "streaming-shared-memory-collision",
        "dataloader",
        CAUSE,
        E,
        "MosaicML Streaming's shared memory collided with another dataset's, rank's or job's",
        r"Reused local directory: (?P<local>\[[^\]]*\])|File exists: '/(?P<shm>\d{6}_\w+)'",
        ("Reused local directory", "File exists: '/"),
        why="""StreamingDataset keeps each dataset's state (its local directory, epoch, barriers) in named shared
        memory (/dev/shm, names like 000000_locals), under a prefix all ranks of a job must agree on. The names
        collided: two datasets of one job use the same local directory (local=None gives each the same temporary
        directory), another job or test on the machine (or one that was killed) holds the same names, or the
        datasets were built before the rank processes existed (ddp_notebook, spawn, a multiprocessing pool), so
        processes that should share a prefix do not, or ones that should not, do.""",
        fix="""give every StreamingDataset its own local directory; call
        streaming.base.util.clean_stale_shared_memory() once at start (after init_process_group, before any dataset
        is built) to remove what a dead job left; build the datasets inside each rank, after the process group exists;
        one such job per machine, or distinct local directories per job""".replace("\n        ", " "),
        examples=[
            ("ValueError: Reused local directory: ['/tmp/31e2e930a4f34dcd7b91bdd397c87df4'] vs ['/tmp/31e2e930a4f34dcd7b91bdd397c87df4']. Provide a different one.", "mosaicml/streaming#740"),
            ("FileExistsError: [Errno 17] File exists: '/000002_locals'", "mosaicml/streaming#884 (datasets built concurrently)"),
            ("FileExistsError: [Errno 17] File exists: '/000000_epoch_shape'", "mosaicml/streaming#767 (Lightning ddp_notebook)"),
        ],
        not_examples=[
            "FileExistsError: [Errno 17] File exists: '/data/checkpoints/run1'",  # a directory, not Streaming's shared memory
            "Reusing dataset c4 (/root/.cache/huggingface/datasets/c4/en/3.0.1)",
        ],
        fields=groups,
    ),
    pattern(
        "dali-pipeline-operator-failed",
        "dataloader",
        CAUSE,
        E,
        "a DALI pipeline operator failed (the pipeline is no longer usable)",
        r"Critical error (?:in|when building) pipeline|Error when executing (?P<device>Mixed|GPU|CPU) operator (?P<operator>\w+)|"
        r"Assert on \"(?P<assertion>num_shards_ > shard_id_)\" failed",
        ("Critical error", "Error when executing", "num_shards_ > shard_id_"),
        why="""DALI runs its operators in its own threads and reports an operator's failure as a critical pipeline
        error: the text after it names the operator and its own error, and the pipeline object is not usable
        afterwards (every later batch fails). The usual ones: a reader's sharding arguments (num_shards must be the
        world size, shard_id this rank's index, below num_shards), a decoder that could not get device memory
        (nvJPEG ALLOCATOR_FAILURE: the GPU's memory is shared with the model, and more GPUs per process or bigger
        batches need more), and a file the reader cannot open or decode.""",
        fix="""read the operator and message after 'Critical error in pipeline:'; a sharding assert: num_shards=world size,
        shard_id=rank (or the local rank on one node); a decoder allocation failure: leave GPU memory for DALI (smaller
        batch, smaller device_memory_padding) or decode on the CPU (decoders.image(device='cpu')); then rebuild the
        pipeline""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Critical error in pipeline: [/opt/dali/dali/pipeline/operators/reader/loader/loader.h:57] Assert on \"num_shards_ > shard_id_\" failed: num_shards needs to be greater than shard_id", "NVIDIA/DALI#510"),
            ("Error when executing Mixed operator ImageDecoder encountered:", "NVIDIA/DALI#2866 (NVJPEG_STATUS_ALLOCATOR_FAILURE with more than one GPU)"),
            ("RuntimeError: Critical error in pipeline:", "NVIDIA/DALI#2866"),
        ],
        not_examples=[
            "Current pipeline object is no longer valid.",  # the consequence line: the cause is above it
            "[W pipeline.py:120] Critical path analysis: decoder 62% of the step",
        ],
        fields=groups,
    ),
]
