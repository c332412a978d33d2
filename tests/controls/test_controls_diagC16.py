"""Controls and siblings for diagC16 (issue 35, the retired heldout16's called-failed answer, as a class): a paste that
compares two setups — a sentence says the output after it is a working setup's, and the failure it shows stands before
that sentence (the thread's title quoting the failing machine's error) — is not that working run's failure, and does not
decide (knowledge/reruns.py WORKING, log-inconclusive case `compared`). `test_control_*` is the input that must not get
the verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones (facebookresearch/phosa#29:
https://github.com/facebookresearch/phosa/issues/29)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import head, healthy

from gpudoctor import api

TITLE = ('# File "pose_optimization.py", line 287, in find_optimal_pose vertices=torch.matmul(vertices.unsqueeze(0), rotations_init), '
         "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasS\n")
RUN = ("$ python demo.py --filename input/bat_sidehold.jpg --class_name bat\n"
       "2021-03-30 15:34:30,186 INFO     Calling with args: Namespace(class_name='bat', filename='input/bat_sidehold.jpg', mesh_index=0, output_dir='output')\n"
       "2021-03-30 15:34:34,578 INFO     Loading checkpoint from detectron2://PointRend/InstanceSegmentation/pointrend_rcnn_R_50_FPN_3x_coco/164955410/model_final_3c3198.pkl\n"
       "2021-03-30 15:34:34,775 INFO     Reading a file from 'Detectron2 Model Zoo'\n")


def verdict(text: str):
    [found] = [f for f in api.diagnose(text).findings if f.id in ("log-inconclusive", "log-no-failure")]
    return found


@pytest.mark.parametrize("said", [
    "In ubuntu 20.04 (working phosa) I see:",  # phosa#29
    "When I run the same exact command in Ubuntu 20.04, it produces the correct results. Here's how the output looks like:",  # phosa#29
    "Here is the output from the working machine:",
])
def test_control_a_failure_before_a_working_runs_output_is_not_that_runs(said):
    text = f"{TITLE}\n{said}\n{RUN}"
    assert head(text) is None and not healthy(text)
    found = verdict(text)
    assert found.id == "log-inconclusive" and found.evidence["working run"].endswith(said)
    assert found.evidence["other setup's failure"].startswith("line 1: ")


@pytest.mark.parametrize("said", [
    "It was working before I updated the driver. Here is what I see now:",  # the failing setup once worked: its failure stays
    "It used to produce the correct results, now:",
    "On Ubuntu 18.04 (working phosa) is fine, but on 20.04:",  # the failure stands after the sentence: the failing setup's output
])
def test_sibling_a_failure_the_sentence_does_not_set_apart_stays_the_failure(said):
    after = "(working" in said
    text = f"{said}\n{TITLE}\n{RUN}" if after else f"{TITLE}\n{said}\n{RUN}"
    found = head(text)
    assert found is not None and found.id == "cublas-execution-failed"


def test_sibling_a_failure_after_the_working_runs_sentence_is_the_failure():
    """The sentence sets apart only what stands before it: the run after it failing is its own failure."""
    text = f"{TITLE}\nIn ubuntu 20.04 (working phosa) I see:\n{RUN}RuntimeError: CUDA error: an illegal memory access was encountered\n"
    found = head(text)
    assert found is not None and found.id != "cublas-execution-failed"



def test_sibling_a_working_sentence_past_the_searched_lines_sets_nothing_apart():
    """Only the input's first 2,000 lines are searched for such a sentence (a thread's paste is short, a job's log
    holds none, and searching megabytes cost a third of diagnose's speed): past them the failure stays the job's."""
    # (lines that say nothing of a run's progress: steps counting on after the failure would say the job went on past
    # it, knowledge/progress.py, which is not what this test is about)
    filler = "".join(f"loading shard {chr(97 + i % 26)} of the mesh index\n" for i in range(2100))
    text = f"{TITLE}\n{filler}In ubuntu 20.04 (working phosa) I see:\n{RUN}"
    found = head(text)
    assert found is not None and found.id == "cublas-execution-failed"

# svishwa/crowdcount-cascaded-mtl#4 (https://github.com/svishwa/crowdcount-cascaded-mtl/issues/4): src/crowd_count.py,
# imported as src.crowd_count, imports its sibling network.py by a bare name (fixed there by `from src import network`)
def bare_import(caller: str, inner: str, code: str) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "test.py", line 4, in <module>\n    {caller}\n'
            f'  File "{inner}", line 5, in <module>\n    {code}\n'
            "ModuleNotFoundError: No module named 'network'\n")


def test_sibling_a_bare_import_inside_the_projects_package_names_the_relative_import():
    found = head(bare_import("from src.crowd_count import CrowdCounter", "ROOT/crowdcount-cascaded-mtl/src/crowd_count.py", "import network"))
    assert found is not None and found.id == "module-not-found" and found.evidence["bare_import"] == "src.network"
    assert found.fix.startswith("ROOT/crowdcount-cascaded-mtl/src/crowd_count.py is imported as part of the package src")
    assert "`from src import network`" in found.fix and "install the package into that environment" in found.fix


@pytest.mark.parametrize("caller, inner, code", [
    ("from crowd_count import CrowdCounter", "ROOT/crowdcount-cascaded-mtl/crowd_count.py", "import network"),  # a top-level module: no package
    ("from src.crowd_count import CrowdCounter", "ROOT/crowdcount-cascaded-mtl/src/crowd_count.py", "from . import network"),  # relative already
    ("from src.crowd_count import CrowdCounter", "/usr/lib/python3/dist-packages/src/crowd_count.py", "import network"),  # a library's file
])
def test_control_an_import_error_without_a_bare_sibling_import_keeps_the_install_fix(caller, inner, code):
    found = head(bare_import(caller, inner, code))
    assert found is not None and found.id == "module-not-found" and "bare_import" not in found.evidence
    assert found.fix.startswith("see which Python the job runs")


def test_sibling_a_ray_actor_that_died_names_the_gpu_it_was_not_given():
    """real-stanford/flingbot#2: the actor died at its first CUDA call, created with num_gpus Ray counts as 0."""
    found = head("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n")
    assert found is not None and found.id == "ray-worker-died" and "num_gpus=1" in found.fix and "dmesg" in found.fix
