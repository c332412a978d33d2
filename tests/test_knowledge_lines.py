"""Lines as users paste them: prefixes peeled, origin kept."""

import pytest

from gpudoctor.knowledge.lines import MAX_LINE, segments, strip

MSG = "RuntimeError: CUDA error: invalid device ordinal"


@pytest.mark.parametrize(
    "raw,rank,local_rank,node",
    [
        (f"[rank3]: {MSG}", 3, None, None),
        (f"[default1]:{MSG}", None, 1, None),
        (f"2: {MSG}", 2, None, None),  # srun --label
        (f" 12: {MSG}", 12, None, None),
        (f"[1,5]<stderr>:{MSG}", 5, None, None),  # mpirun --tag-output
        (f"(RayTrainWorker pid=3738, ip=172.17.130.64) {MSG}", None, None, "172.17.130.64"),
        (f"W1123 10:02:11.512000 48213 torch/distributed/run.py:12] {MSG}", None, None, None),
        (f"[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] {MSG}", 0, None, None),
        (f"[2026-04-22 21:34:20] node7:202016:202235 [3] {MSG}", None, 3, "node7"),
        (f"\x1b[31m[rank2]: {MSG}\x1b[0m", 2, None, None),
        (f"[0m [rank2]: {MSG}", 2, None, None),  # the ESC byte lost in a copy-paste
        (f"4: [rank4]: {MSG}\r\n", 4, None, None),
        (f"[80746] [rank6]:{MSG}", 6, None, None),
        # vLLM's logger inside a Ray-style worker prefix (vllm-project/vllm#10626, eugr/spark-vllm-docker#335)
        (f"(VllmWorkerProcess pid=675597) ERROR 09-25 06:40:46 multiproc_worker_utils.py:226] {MSG}", None, None, None),
        (f"(Worker pid=213) ERROR 08-03 13:35:33 [multiproc_executor.py:912] {MSG}", None, None, None),
        (f"trainer/0 [1]:{MSG}", None, 1, None),  # TorchX (ofsoundof/GRL-Image-Restoration#27)
        (f"[2025-01-30 18:11:27 TP3] {MSG}", None, 3, None),  # sglang (sgl-project/sglang#3226)
        (f"Jul 13 21:22:34 {MSG}", None, None, None),  # syslog (pytorch/pytorch#61670)
        (f"[2024-02-27T21:35:32.106313Z] fa88a9df || {MSG}", None, None, None),  # Determined (determined-ai/determined#8915)
        (f"[2024-02-27T21:35:32.106313Z] fa88a9df [rank=1] || {MSG}", 1, None, None),
        (f"[pod/trainer-worker-1/pytorch] {MSG}", None, None, "trainer-worker-1"),  # kubectl logs --prefix
        (f"trainer-pod-0  | {MSG}", None, None, "trainer-pod-0"),  # docker compose
        (f"  | 2024-12-04T05:26:27.056Z | {MSG}", None, None, None),  # CloudWatch table (aws/aws-ofi-nccl#715)
    ],
)
def test_prefixes_are_peeled_and_origin_kept(raw, rank, local_rank, node):
    line = strip(raw)
    assert line.text == MSG
    assert (line.rank, line.local_rank, line.node) == (rank, local_rank, node)


def test_rank_named_in_the_message():
    assert strip("[PG 0 Rank 5] Watchdog caught collective operation timeout").rank == 5
    assert strip("  rank      : 3 (local_rank: 3)").rank == 3
    # --local-rank=0 is an argument, not the line's rank
    assert strip("train.py: error: unrecognized arguments: --local-rank=0").rank is None


def test_carriage_returns_split_one_line_into_messages():
    raw = " 10%|#  | 1/10 [00:01<00:09]\r 20%|## | 2/10\rRuntimeError: CUDA error: out of memory\n"
    assert [s.text for s in segments(raw)][-1] == "RuntimeError: CUDA error: out of memory"


def test_an_endless_line_is_cut():
    assert len(strip("x" * (MAX_LINE * 3)).text) <= MAX_LINE + 3


def test_an_endless_line_keeps_its_tail_where_the_error_is():
    line = strip("[rank3]: " + "#" * (MAX_LINE * 10) + " RuntimeError: CUDA error: out of memory")
    assert line.rank == 3 and line.text.endswith("RuntimeError: CUDA error: out of memory")


def test_traceback_source_lines_are_code_not_messages():
    assert strip('    raise RuntimeError(f"NCCL error: {error_str}")').is_source()
    assert not strip("RuntimeError: NCCL error: unhandled system error").is_source()
