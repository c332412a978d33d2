"""Controls and siblings for what a log's ranks show when no line is an error (issue 35, heldout19's no-error-line
cases; knowledge/ranks_heard.py): one rank claimed by two processes, processes that each run alone while the launch
asked for several, ranks of the job that never print, and an nvidia-smi process list pasted without its header whose
processes hold contexts on GPUs not their own. The sample's cases are the logs as pasted; the other lines are real
ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case


def found(text: str) -> dict:
    """finding id -> the finding (the first of an id)."""
    out: dict = {}
    for f in api.diagnose(text).findings:
        out.setdefault(f.id, f)
    return out


def head(text: str):
    return api.diagnose(text).findings[0]


def members(ranks: list[int], world: int) -> str:
    # Lightning's start-up line, once per process (Lightning-AI/pytorch-lightning#4389)
    return "".join(f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/{world}\n" for r in ranks)


class TestRanksDuplicated:
    verdict = "ranks-duplicated"

    def test_sibling_two_nodes_took_the_same_ranks(self):
        # Lightning-AI/pytorch-lightning#4389: srun's one task per node, Lightning spawning the GPUs: ranks 0-3 of 8, twice
        f = head(case("dev", "lightning-4389-srun-duplicate-global-ranks"))
        assert f.id == "ranks-duplicated" and f.severity is Severity.ERROR
        assert "rank(s) 0-3 of world size 8 were taken twice" in f.title and "srun --ntasks-per-node" in f.fix

    def test_sibling_fewer_processes_than_the_job_warn(self):
        # NVIDIA-NeMo#5819: ranks 1-3 of 8 on both nodes; six lines of eight: the log does not show all processes
        f = head(case("dev", "nemo-5819-second-paste-not-slurm-managed-duplicate-ranks"))
        assert f.id == "ranks-duplicated" and f.severity is Severity.WARN and "a log pasted twice looks the same" in f.title

    def test_sibling_mpirun_processes_each_alone(self):
        # ml-explore/mlx#1196: mpirun -np 2, and both processes print "Distributed available: False"
        f = head(case("heldout19", "mlx-1196-conda-mpirun-two-ranks"))
        assert f.id == "ranks-duplicated" and f.severity is Severity.ERROR
        assert "2 processes each say they are not part of a distributed job" in f.title and "mpirun -np 2" in f.title

    def test_sibling_two_pids_each_rank_0_of_1_without_a_launch(self):
        # rwth-i6/returnn#1196: SGE's -pe mpi 2 started two processes, each "rank 0 / size 1": warn, no launch command shown
        f = head(case("heldout12", "returnn-1196-horovod-sge-two-rank0"))
        assert f.id == "ranks-duplicated" and f.severity is Severity.WARN and "2 processes (pids 12115, 12116)" in f.title

    def test_control_one_pid_printed_twice(self):
        line = "Horovod initialized. Hostname cluster-cn-286, pid 12116, rank 0 / size 1, local rank 0 / local size 1.\n"
        assert "ranks-duplicated" not in found(line + "epoch 1 step 1\n" + line)

    def test_control_every_rank_once(self):
        # Lightning-AI/pytorch-lightning#1345: a healthy 2 x 2 start-up, each rank once
        assert "ranks-duplicated" not in found(case("dev", "lightning-1345-initializing-ddp-members-list"))

    def test_control_a_log_holding_its_run_twice(self):
        # every rank of 4 heard twice: a restart appended, or a paste repeated, not ranks taken twice
        assert "ranks-duplicated" not in found(members([0, 1, 2, 3], 4) + "Epoch 0: 100%\n" + members([0, 1, 2, 3], 4))

    def test_control_a_cut_start_up_pasted_twice(self):
        # three of four ranks, the same paste given again in a later comment: one output said twice, not two processes per rank
        assert "ranks-duplicated" not in found(members([0, 1, 2], 4) + "\nthe same again:\n" + members([0, 1, 2], 4))

    def test_control_a_reply_quoting_the_start_up(self):
        # a reply quotes one line of the paste above it: the quote is no process of its own
        quoted = "".join(f"> {line}\n" for line in members([1], 4).splitlines())
        assert "ranks-duplicated" not in found(members([0, 1], 4) + "\nyou wrote:\n" + quoted)

    def test_control_one_process_runs_appended_without_a_launcher(self):
        # heldout17w: three single-GPU runs appended to one nohup.out, each "distributed training: False"; no launch asks for more
        assert "ranks-duplicated" not in found(case("heldout17w", "0eight0-Experimental_results-ner-train-nohup"))


class TestRanksNotAllHeard:
    verdict = "ranks-not-all-heard"

    def test_sibling_one_rank_started_by_hand(self):
        # hpcaitech/ColossalAI#158: `python train.py --world_size=2 --rank=0 ...` and the program prints set-up, then nothing
        f = head(case("heldout19", "colossalai-158-benchmark-two-gpu-worker"))
        assert f.id == "ranks-not-all-heard" and f.severity is Severity.WARN
        assert "starts rank 0 of world size 2 by hand" in f.title and "torchrun --nproc_per_node 2" in f.fix

    def test_sibling_merged_log_missing_ranks(self):
        # two ranks of four print their start-up, then nothing: the others run elsewhere or never joined
        f = head(members([0, 1], 4) + "----\ndistributed_backend=nccl\n")
        assert f.id == "ranks-not-all-heard" and "rank(s) 2-3 never do" in f.title

    def test_sibling_one_rank_alone_says_what_decides(self):
        # NVIDIA/NeMo#2370: a notebook cell with gpus=2 stops at rank 0's line; the second process was never started
        f = head(case("dev", "nemo-2370-jupyter-ddp-initializing-stuck"))
        assert f.id == "ranks-not-all-heard" and f.severity is Severity.WARN
        assert "only rank 0 of world size 2 prints its start-up here" in f.title and "it is rank 0's own log (the others' logs decide)" in f.title

    def test_control_one_ranks_own_log_that_trains(self):
        # a per-rank file names only its own rank, and its steps follow: nothing says the others are missing
        steps = "".join(f"Epoch 0:  {i}%|  | {i}/100 [00:0{i % 10}<00:10, loss={1 - i / 100:.2f}]\n" for i in range(10, 60, 5))
        assert "ranks-not-all-heard" not in found(members([2], 4) + steps)

    def test_control_a_rank_named_in_another_shape_printed(self):
        # takuseno/d3rlpy#363: "Start running on rank=1." names rank 1, whose DistributedWorkerInfo line the cut log lacks
        lines = "".join(f"Start running on rank={r}.\n" for r in (1, 2, 0))
        info = "".join(f"distributed=DistributedWorkerInfo(rank={r}, backend='nccl', world_size=3)\n" for r in (0, 2))
        assert "ranks-not-all-heard" not in found(lines + info)

    def test_sibling_only_the_unnamed_ranks_are_missing(self):
        # Lightning-AI/pytorch-lightning#4364: LOCAL_RANK lines of ranks whose GLOBAL_RANK line the cut log does not reach
        f = head("LOCAL_RANK: 3 - CUDA_VISIBLE_DEVICES: [0,1,2,3]\n" + members([0, 1], 4) + "----\ndistributed_backend=nccl\n")
        assert f.id == "ranks-not-all-heard" and "rank(s) 2 never do" in f.title

    def test_sibling_a_long_log_is_read_at_its_end(self):
        # past its first megabytes a long log is read for its ranks only at its end (knowledge/ranks_heard.py HEAD_BYTES,
        # TAIL_BYTES): a restart that stops in set-up after 10 MB of an earlier run is still told, at its own line numbers
        filler = "".join(f"[2024-11-23 10:02:11] INFO data: shard {i} indexed\n" for i in range(220_000))
        n = filler.count("\n")
        f = head(filler + members([0, 1], 4) + "----\ndistributed_backend=nccl\n")
        assert f.id == "ranks-not-all-heard" and f"no step follows line {n + 2}" in f.title and "rank(s) 2-3 never do" in f.title

    def test_control_every_rank_heard(self):
        assert "ranks-not-all-heard" not in found(case("dev", "lightning-1345-initializing-ddp-members-list"))

    def test_control_steps_after_the_start_up(self):
        # the ranks shown train on: a node's log of a two-node job, not ranks waiting
        steps = "".join(f"Epoch 0:  {i}%|  | {i}/100 [00:0{i % 10}<00:10, loss={1 - i / 100:.2f}]\n" for i in range(10, 60, 5))
        assert "ranks-not-all-heard" not in found(members([0, 1, 2, 3], 8) + steps)


class TestLaunchRunsNotebookKernel:
    verdict = "launch-runs-notebook-kernel"

    def test_sibling_ddp_command_built_in_a_notebook(self):
        # ultralytics/ultralytics#2927: YOLOv8 trained from a Jupyter cell on devices 0,1 prints its DDP command
        f = head(case("heldout19", "ultralytics-2927-cls-notebook-two-3090"))
        assert f.id == "launch-runs-notebook-kernel" and f.severity is Severity.ERROR and "torchrun --nproc_per_node" in f.fix

    def test_control_a_notebooks_traceback_through_the_kernel(self):
        # a notebook's traceback passes through the kernel's entry point: no launcher runs it
        text = ("Traceback (most recent call last):\n"
                '  File "/opt/conda/lib/python3.11/site-packages/ipykernel_launcher.py", line 17, in <module>\n'
                "    app.launch_new_instance()\n"
                "RuntimeError: Distributed package doesn't have NCCL built in\n")
        assert "launch-runs-notebook-kernel" not in found(text)

    def test_control_a_ddp_command_that_runs_a_script(self):
        # the same DDP command line with the script ultralytics writes for it
        text = ("DDP command: ['/opt/conda/bin/python', '-m', 'torch.distributed.run', '--nproc_per_node', '2', "
                "'--master_port', '37607', '/root/.config/Ultralytics/DDP/_temp_p1q2r3.py']\n")
        assert "launch-runs-notebook-kernel" not in found(text)


class TestGpuProcessOnEveryGpuHeadless:
    verdict = "gpu-process-on-every-gpu"

    def test_sibling_process_rows_pasted_without_their_header(self):
        # NVIDIA/DeepLearningExamples#776: the process list's rows only (the comment continued), eight pids on every GPU
        f = found(case("heldout19", "deeplearningexamples-776-resnet50-8gpu-smi"))["gpu-process-on-every-gpu"]
        assert f.severity is Severity.WARN and "every rank opened every GPU" in f.title

    def test_sibling_each_rank_also_on_gpu_0(self):
        rows = "".join(f"|    {g}   N/A  N/A     {pid}      C   /opt/conda/bin/python3           {mib}MiB |\n"
                       for g, pid, mib in [(0, 12439, 9347), (0, 12440, 305), (0, 12441, 305), (1, 12440, 9347), (2, 12441, 9347)])
        f = found("```\n" + rows + "```\n")["gpu-process-on-every-gpu"]
        assert "also hold a context on GPU 0" in f.title and f.fix.startswith("torch.cuda.set_device(local_rank)")

    def test_control_one_process_per_gpu_without_header(self):
        rows = "".join(f"|    {g}   N/A  N/A     {pid}      C   /opt/conda/bin/python3           9347MiB |\n"
                       for g, pid in [(0, 12439), (1, 12440), (2, 12441)])
        assert "gpu-process-on-every-gpu" not in found("```\n" + rows + "```\n")
