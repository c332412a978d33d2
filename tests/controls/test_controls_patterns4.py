"""Controls and siblings for the family rules found from the fourth development sample
(tests/fixtures/log_sample/dev4, src/gpudoctor/knowledge/patterns/families4.py), one class per
verdict id: the look-alike that must not get the verdict (the setup lines of a run that went on
to train, a file that exists on disk, DALI's own consequence line) and the nearest failure that
needs another verdict and gets its own. The lines are real ones from the sample's threads; each
runs through the whole of `diagnose`."""

from __future__ import annotations

from test_controls_patterns import TB, head_id, ids

# bitsandbytes-foundation/bitsandbytes#169: the path search warns, then the setup finds torch's runtime and training starts
SEARCH_WARNING = "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching /usr/local/cuda/lib64...\n"
SETUP_WENT_THROUGH = (
    "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\n"
    "CUDA SETUP: Highest compute capability among GPUs detected: 7.5\n"
    "CUDA SETUP: Detected CUDA version 118\n"
    "CUDA SETUP: Loading binary /usr/local/lib/python3.8/dist-packages/bitsandbytes/libbitsandbytes_cuda118.so...\n"
    "use 8-bit AdamW optimizer | {}\n"
)
# bitsandbytes-foundation/bitsandbytes#850: no library for the CUDA it found, the CPU fallback
SETUP_FELL_BACK = (
    "CUDA SETUP: CUDA runtime path found: /usr/local/cuda-12.2/lib64/libcudart.so\n"
    "CUDA SETUP: Detected CUDA version 122\n"
    "CUDA SETUP: Required library version not found: libbitsandbytes_cuda122.so. Maybe you need to compile it from source?\n"
    "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...\n"
)


class TestBitsandbytesCudaSetupFailed:
    def test_control_a_setup_that_loaded_its_cuda_library(self):
        assert "bitsandbytes-cuda-setup-failed" not in ids(SETUP_WENT_THROUGH)

    def test_control_the_path_search_alone_decides_nothing(self):
        assert "bitsandbytes-cuda-setup-failed" not in ids(SEARCH_WARNING)

    def test_sibling_a_cuda_library_the_dynamic_linker_cannot_find(self):
        log = TB + "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
        assert head_id(log) == "cuda-library-missing"

    def test_sibling_the_fallback_to_the_cpu_library(self):
        assert head_id(SETUP_FELL_BACK) == "bitsandbytes-cuda-setup-failed"

    def test_sibling_the_setup_error_as_raised(self):
        log = ("RuntimeError: \n        CUDA Setup failed despite GPU being available. Inspect the CUDA SETUP outputs above to fix your environment!\n"
               "        If you cannot find any issues and suspect a bug, please open an issue with detals about your environment:\n")
        assert head_id(log) == "bitsandbytes-cuda-setup-failed"


class TestBitsandbytesLibcudartNotFound:
    def test_control_the_search_that_found_the_runtime_after_all(self):
        found = ids(SEARCH_WARNING + SETUP_WENT_THROUGH)
        assert "bitsandbytes-libcudart-not-found" not in found
        assert "bitsandbytes-cuda-library-loaded" in found

    def test_control_a_library_link_failure_is_not_the_search(self):
        log = TB + "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
        assert "bitsandbytes-libcudart-not-found" not in ids(log)

    def test_sibling_the_search_then_the_setup_failed(self):
        log = SEARCH_WARNING + "CUDA SETUP: CUDA detection failed! Possible reasons:\n"
        assert head_id(log) == "bitsandbytes-cuda-setup-failed"

    def test_sibling_the_search_alone_is_a_warning_that_names_what_decides(self):
        log = ("/usr/local/lib/python3.10/dist-packages/bitsandbytes/cuda_setup/paths.py:105: UserWarning: /usr/lib64-nvidia did "
               "not contain libcudart.so as expected! Searching further paths...\n  warn(\n")
        assert "bitsandbytes-libcudart-not-found" in ids(log)
        assert head_id(log) == "-"  # no error: the lines after it decide


class TestBitsandbytesCudaLibraryLoaded:
    def test_control_the_cpu_library_is_not_a_cuda_setup(self):
        log = "CUDA SETUP: Loading binary /opt/conda/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so...\n"
        assert "bitsandbytes-cuda-library-loaded" not in ids(log)

    def test_sibling_the_fallback_is_the_setup_failure(self):
        assert "bitsandbytes-cuda-library-loaded" not in ids(SETUP_FELL_BACK)
        assert head_id(SETUP_FELL_BACK) == "bitsandbytes-cuda-setup-failed"

    def test_sibling_a_later_failure_is_not_hidden_by_the_loaded_library(self):
        log = SETUP_WENT_THROUGH + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 280.00 MiB\n"
        assert head_id(log) == "cuda-oom"


class TestStreamingSharedMemoryCollision:
    def test_control_an_existing_directory_on_disk(self):
        log = TB + "FileExistsError: [Errno 17] File exists: '/data/checkpoints/run1'\n"
        assert "streaming-shared-memory-collision" not in ids(log)

    def test_sibling_shared_memory_exhausted_by_dataloader_workers(self):
        log = ("RuntimeError: DataLoader worker (pid 3855) is killed by signal: Bus error. It is possible that dataloader's workers "
               "are out of shared memory. Please try to raise your shared memory limit.\n")
        assert head_id(log) == "dataloader-shm-bus-error"

    def test_sibling_the_reused_local_directory(self):
        log = (TB + "ValueError: Reused local directory: ['/tmp/31e2e930a4f34dcd7b91bdd397c87df4'] vs "
               "['/tmp/31e2e930a4f34dcd7b91bdd397c87df4']. Provide a different one.\n")
        assert head_id(log) == "streaming-shared-memory-collision"

    def test_sibling_the_shared_memory_name_taken(self):
        assert head_id("FileExistsError: [Errno 17] File exists: '/000000_epoch_shape'\n") == "streaming-shared-memory-collision"


class TestDaliPipelineOperatorFailed:
    def test_control_the_consequence_line_alone_is_not_the_operator(self):
        assert "dali-pipeline-operator-failed" not in ids("Current pipeline object is no longer valid.\n")

    def test_sibling_a_device_id_beyond_the_visible_gpus(self):
        log = TB + "RuntimeError: CUDA runtime API error cudaErrorInvalidDevice (101): invalid device ordinal\n"
        assert head_id(log) == "cuda-invalid-device-ordinal"

    def test_sibling_the_sharding_assert(self):
        log = ('RuntimeError: Critical error in pipeline: [/opt/dali/dali/pipeline/operators/reader/loader/loader.h:57] Assert on '
               '"num_shards_ > shard_id_" failed: num_shards needs to be greater than shard_id\n'
               "Current pipeline object is no longer valid.\n")
        assert head_id(log) == "dali-pipeline-operator-failed"


class TestHostOomKillerKernelReport:
    """The first line of the kernel's OOM report, as dmesg prints it (NVIDIA/DALI#585): a variant of host-oom-killer."""

    verdict = "host-oom-killer"

    def test_control_the_oom_killer_setting_is_no_event(self):
        assert "host-oom-killer" not in ids("vm.oom_kill_allocating_task = 0\nvm.overcommit_memory = 0\n")

    def test_sibling_the_gpus_own_oom(self):
        assert head_id("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 280.00 MiB\n") == "cuda-oom"

    def test_sibling_the_report_cut_after_its_first_lines(self):
        log = ("[2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, oom_score_adj=829\n"
               "[2612362.231483]  oom_kill_process+0x21c/0x430\n[2612362.231487]  mem_cgroup_out_of_memory+0x4b/0x80\n")
        assert head_id(log) == "host-oom-killer"
