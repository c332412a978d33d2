"""Controls and siblings for diagA9 (issue 35, no wrong answers): the shapes of the wrong answers on heldout7 and
heldout6, fixed by class. A failure line that is there is shown, never denied: the lines that speak of an error are
picked by what decides (an exception's line over prose, the latest over the first), a launcher's consequence names
the lines before it instead of saying the log holds none, a cut traceback gives way to the error line above it, a C
program's own "CUDA Error: ..." line is no launcher's summary, and a scheduler's error it went on from is no failure.
`test_control_*` is the harmless or unchanged input that looks the same, `test_sibling_*` the one that gets the new
answer. Lines are real ones (threads named beside them)."""

from __future__ import annotations

from test_controls_detect8 import ENDED, LINK, ROOT_CAUSE, head

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.knowledge.mentions import lead_first, speaks_of_error


def undecided(text: str):
    [found] = [f for f in api.diagnose(text).findings if f.id == "log-inconclusive"]
    return found


def led_by(log: str, verdict: str):
    """The finding diagnose leads with, which must be `verdict`."""
    found = head(log)
    assert found is not None and found.id == verdict, found
    return found


def listed(found) -> list[str]:
    return list(found.evidence.get("lines that speak of an error", []))


class TestLogInconclusive:
    """Which lines that speak of an error are shown when more are there than the three shown (artidoro/qlora#96: the
    ValueError the user hit last, inside a sentence, was left out for an earlier sentence), and which words speak of one."""

    verdict = "log-inconclusive"

    def test_control_few_lines_are_all_shown_whatever_their_order(self):
        log = ("Hi, I have the same problem: there is an error saying that tensors are on different devices.\n"
               "Error using gpuArray/subsref: Index exceeds the number of array elements.\n")
        found = undecided(log)
        assert sorted(listed(found)) == sorted([
            "line 1: Hi, I have the same problem: there is an error saying that tensors are on different devices.",
            "line 2: Error using gpuArray/subsref: Index exceeds the number of array elements."])

    def test_sibling_the_exception_named_in_the_last_sentence_is_shown_first(self):
        sentences = "".join(f"Hi, in run {n} there is an error saying that it expected all tensors on one device.\n" for n in range(5))
        log = sentences + ("I changed per_device_train_batch_size and now it shows a dimension mismatch. "
                           "`ValueError: Expected sequence of length 663 at dim 1(got 895)`\n")  # artidoro/qlora#96
        found = undecided(log)
        assert listed(found)[0].startswith("line 6: I changed per_device_train_batch_size")
        assert "(first: line 6)" in found.title and "6 line(s)" in found.title

    def test_sibling_a_tools_not_found_line_speaks_of_an_error(self):
        # NVIDIA/data-science-stack#90's diagnostics, its Docker line (its nvidia-smi line is read by a rule of its own since
        # the tenth round: nvidia-smi-not-found, tests/controls/test_controls_diagC10.py)
        log = ("###NV### Wed Feb 10 12:32:15 UTC 2021 #### Docker:\n"
               "docker not found, Docker not installed correctly.\n")
        assert listed(undecided(log)) == ["line 2: docker not found, Docker not installed correctly."]

    def test_control_info_lines_comments_and_errors_gone_on_from_are_no_lead(self):
        log = ("mlperf1:131398:131398 [0] NCCL INFO NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory\n"
               "# if the checkpoint is not found, the script starts from scratch\n"
               "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead\n")  # NVIDIA/deepops#1179
        found = undecided(log)
        assert "lines that speak of an error" not in found.evidence and report_exit(api.diagnose(log)) == 1

    def test_sibling_a_markdown_heading_before_a_programs_line_is_no_comment(self):
        assert speaks_of_error("## python: can't open file '../exc/train_mpi.py': [Errno 2] No such file or directory")
        assert not speaks_of_error("# python: if the file is not found, we fall back to the default")

    def test_sibling_a_line_that_says_what_failed_leads_one_that_says_only_that_it_ended(self):
        ranked = lead_first([(4, "python: can't open file 'train.py': [Errno 2] No such file or directory"),
                             (7, "a non-zero exit code.. Per user-direction, the job has been aborted.")])
        assert ranked[0][0] == 4


class TestMpiRankFailed:
    """mpirun's report with the rank's own error above it in words no rule reads (uoguelph-mlrg/Theano-MPI#5): the
    consequence names those lines; it never says the log holds none of the rank's output."""

    verdict = "mpi-rank-failed"
    REPORT = ("Primary job  terminated normally, but 1 process returned\n"
              "a non-zero exit code.. Per user-direction, the job has been aborted.\n"
              "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
              "the job to be terminated. The first process to do so was:\n")

    def test_control_the_report_alone_says_its_cause_is_in_the_ranks_output(self):
        found = led_by(self.REPORT, self.verdict)
        assert "its cause is not in this log" in found.title and "lines that speak of an error" not in found.evidence

    def test_sibling_the_line_before_it_is_shown_not_denied(self):
        # a line no rule reads (heldout5's mmcv#2869 printed it before its failure)
        log = "training\nfatal: not a git repository (or any parent up to mount point /)\n" + self.REPORT
        found = led_by(log, self.verdict)
        assert "not in this log" not in found.title
        assert listed(found)[0].startswith("line 2: fatal: not a git repository") and found.fix.startswith("read line 2 first")
        assert api.diagnose(log).data["root_cause"]["lead"] == "line 2"

    def test_sibling_the_script_it_could_not_run_is_the_cause(self):
        # uoguelph-mlrg/Theano-MPI#5 (heldout7): the interpreter's own words for a script not there (path-not-found, diagB19)
        log = "training\n## python: can't open file '../exc/train_mpi.py': [Errno 2] No such file or directory\n" + self.REPORT
        found = api.diagnose(log).findings
        assert found[0].id == "path-not-found" and found[1].id == self.verdict and found[1].evidence["consequence_of"] == "path-not-found"


class TestTorchrunRootCause:
    """torchrun's summary lines ("<script> FAILED", "Failures:") are its own report: never the lead before it."""

    verdict = "torchrun-root-cause"
    SUMMARY = ROOT_CAUSE.format(code="1", traceback=LINK)  # FlagOpen/FlagEmbedding#1438

    def test_control_the_summarys_own_lines_are_no_lead(self):
        assert "lines that speak of an error" not in led_by(self.SUMMARY, self.verdict).evidence

    def test_control_a_persons_sentence_or_torchruns_own_frames_are_no_lead(self):
        log = ("When I train model using multi-gpu, the error occurred.\n"  # yangyangyang127/CMID#11
               "Traceback (most recent call last):\n"
               '  File "/x/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 348, in wrapper\n'
               "    return f(*args, **kwargs)\n"
               '  File "/x/site-packages/torch/distributed/launcher/api.py", line 247, in launch_agent\n'
               "    failures=result.failures,\n"
               "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n") + self.SUMMARY  # Tai-Wang/Depth-from-Motion#13
        for found in api.diagnose(log).findings:
            assert "lines that speak of an error" not in found.evidence, found

    def test_sibling_a_ranks_line_above_the_summary_is_the_lead(self):
        found = led_by("Loading data from /data/train\nTraining failed: the dataset folder /data/train is empty\n" + self.SUMMARY, self.verdict)
        assert listed(found) == ["line 2: Training failed: the dataset folder /data/train is empty"]
        assert "none of that rank's own output" not in found.why


class TestUnrecognisedFailure:
    """The line that says what failed heads the answer: a CUDA error's line above frames whose exception line the paste
    cut (Comfy-Org/ComfyUI#4578); a scheduler's error it says it went on from is no failure, its real errors are."""

    verdict = "unrecognised-failure"
    FRAMES = ('File "/stable-diffusion/execution.py", line 317, in execute output_data = get_output_data(obj, input_data_all)\n'
              'File "/stable-diffusion/execution.py", line 169, in _map_node_over_list process_inputs(input_dict, i)\n')

    def test_control_cut_frames_alone_are_still_a_failure(self):
        found = head(self.FRAMES)
        assert found is not None and found.id == "unrecognised-failure" and found.evidence["kind"] == "exception"

    def test_sibling_the_cuda_error_line_above_the_cut_frames_heads_it(self):
        log = ("Error occurred when executing CLIPTextEncode:\n"
               "CUDA error: operation not supported CUDA kernel errors might be asynchronously reported at some other API call\n"
               + self.FRAMES)
        found = head(log)
        # read by CUDA's table since diagB17 (knowledge/patterns/classes17b.py): named, no longer the unrecognised "cuda" line
        assert found is not None and found.evidence["first_line"] == 2 and found.id == "cuda-runtime-error"

    def test_control_slurmstepd_going_on_elsewhere_is_no_failure(self):
        log = "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead\n" + ENDED
        assert report_exit(api.diagnose(log)) == 0

    def test_sibling_slurmstepd_that_could_not_start_the_step_is_a_failure(self):
        # a failure, and now a named one: slurm-step-start-failed (knowledge/patterns/classes14b.py) says what to do
        found = head("slurmstepd: error: execve(): train.sh: Permission denied\n")
        assert found is not None and found.id == "slurm-step-start-failed" and "chmod +x" in found.fix

    def test_sibling_a_programs_own_error_line_is_not_read_as_a_launchers_summary(self):
        found = head("Error: Unable to connect to the host engine\n")  # dcgmi without nv-hostengine
        assert found is not None and found.evidence["kind"] == "clierror"
        assert "rank's own output is not here" not in found.fix and "the words after 'Error:'" in found.fix

    def test_control_an_exit_status_alone_sends_to_the_ranks_output(self):
        found = head("loading the model\ntrain.sh: exit code 1\n")
        assert found is not None and "rank's own output is not here" in found.fix and "lines that speak of an error" not in found.evidence

    def test_sibling_an_exit_status_after_the_programs_own_failure_line_shows_it(self):
        found = head("loading the model\nTraining failed: the dataset folder is empty\ntrain.sh: exit code 1\n")
        assert found is not None and listed(found) == ["line 2: Training failed: the dataset folder is empty"]
        assert found.fix.startswith("read line 2 first") and "output is not here" not in found.fix

    def test_control_a_launchers_failed_to_run_is_still_its_summary(self):
        found = head("Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --rdzv_endpoint=127.0.0.1:29500\n")  # hpcaitech/ColossalAI#2441
        assert found is not None and found.evidence["kind"] == "clierror" and "rank's own output is not here" in found.fix


class TestCudaOom:
    """A C program's own wording of CUDA's out of memory (AlexeyAB/darknet#5301: "CUDA Error: out of memory")."""

    verdict = "cuda-oom"

    def test_control_a_setting_that_names_out_of_memory_is_no_failure(self):
        log = "Setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation\n" + ENDED
        assert report_exit(api.diagnose(log)) == 0

    def test_sibling_darknets_capitalised_line_is_the_gpu_out_of_memory(self):
        log = ("**darknet.exe built on 4/21/2020, error occurred 3 times. (2GPU)**\n"
               "> CUDA Error: out of memory: Invalid argument\n"
               ">  CUDA Error: out of memory\n")
        led_by(log, self.verdict)


class TestNcclWatchdogTimeout:
    """The timeout the watchdog's line shows: one set far too short is the cause itself (instructlab/training#520,
    Timeout(ms)=1); one of the job's first collectives timing out points at the link as much as at a peer
    (alibaba/Pai-Megatron-Patch#508, SeqNum=4)."""

    verdict = "nccl-watchdog-timeout"
    LINE = ("[rank3]:[E ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)={ms}) ran for {ran} milliseconds before timing out.\n")

    def test_control_a_default_timeout_late_in_the_run_keeps_the_peer_reading(self):
        found = led_by(self.LINE.format(seq=1580, ms=600000, ran=600060), self.verdict)
        assert "timeout_ms" not in found.evidence and "early_collective" not in found.evidence
        assert "its cause is not in this log" in found.title

    def test_sibling_a_one_ms_timeout_is_the_cause(self):
        found = head(self.LINE.format(seq=1, ms=1, ran=90))
        assert found is not None and found.evidence["timeout_ms"] == 1
        assert "only 1 ms" in found.title and "not in this log" not in found.title
        assert found.fix.startswith("set a realistic timeout")
        assert api.diagnose(self.LINE.format(seq=1, ms=1, ran=90)).data["root_cause"]["timeout_ms"] == 1

    def test_sibling_one_of_the_first_collectives_points_at_the_link(self):
        found = head(self.LINE.format(seq=4, ms=600000, ran=600012))
        assert found is not None and found.evidence["early_collective"] == 4
        assert "NCCL_DEBUG_SUBSYS=INIT,NET" in found.fix and "SeqNum 4" in found.why
