"""The runtime hooks on real torch, in a fresh process of their own (they patch
torch process-wide): tests/scripts/hook_cases.py runs every case and prints
what it saw; each test here reads one case."""

import json
import os
import subprocess
import sys

import pytest

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "hook_cases.py")


@pytest.fixture(scope="module")
def cases():
    r = subprocess.run([sys.executable, CASES], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    found = json.loads(r.stdout.strip().splitlines()[-1])
    crashed = {name: v["crashed"] for name, v in found.items() if isinstance(v, dict) and "crashed" in v}
    assert not crashed, "\n".join(crashed.values())
    return found


def test_results_are_the_same_with_the_hooks(cases):
    c = cases["results_unchanged"]
    assert c["watched"] == c["plain"]


def test_traceback_is_the_one_python_prints_without_the_hooks(cases):
    c = cases["traceback_unchanged"]
    assert c["armed"], "the module-call wrapper was not in place: the case proves nothing"
    assert "gpudoctor" not in c["watched"]
    assert c["watched"] == c["plain"]


def test_module_call_window_closes_and_reopens(cases):
    c = cases["window"]
    assert c == {
        "armed_at_start": True,
        "closed": True,  # a long run pays nothing
        "rearmed_by_to": True,  # the model moved
        "closed_again": True,
        "untouched_by_epoch": True,  # iter(DataLoader): nothing per epoch
    }


def test_a_healthy_loop_runs_no_gpudoctor_code_per_step(cases):
    assert cases["nothing_per_step"] == {"gpudoctor_calls": [], "window_closed": True}


def test_windows_stop_opening_once_the_budget_is_spent(cases):
    assert cases["window_budget"] == {"spent": True, "closed_for_good": True}


def test_device_error_explained_from_its_traceback_alone(cases):
    assert cases["explained_after_the_window_closed"] == {
        "window_open": False,
        "module": "1",
        "module_tensors": {"weight": "meta", "bias": "meta"},
        "inputs": {"input": "cpu"},
        "source": "model(torch.randn(2, 4))",
    }


def test_window_closes_even_when_every_call_is_a_new_module(cases):
    assert cases["window_with_new_modules_at_every_call"] == {"closed": True}


def test_input_on_another_device_warns_before_anything_fails(cases):
    c = cases["input_on_other_device"]
    assert c["ids"] == ["module-input-device"]
    assert "`1` (Moves)" in c["titles"][0] and "cpu" in c["titles"][0] and "meta" in c["titles"][0]
    assert len(c["warnings"]) == 1 and "[module-input-device]" in c["warnings"][0]


def test_device_error_in_watch_block_gets_a_note(cases):
    c = cases["device_error_note"]
    assert c["ids"] == ["device-mismatch"]
    assert c["module"] == "1 (Linear)"
    assert len(c["notes"]) == 1 and "model[1].to_empty" in c["notes"][0]


def test_sampler_epoch_repeat_only_when_shuffling_without_set_epoch(cases):
    c = cases["sampler"]
    [(fid, source)] = c["without_set_epoch"]
    assert fid == "sampler-without-set-epoch" and "hook_cases.py:" in source  # the user's loop, not torch
    assert c["with_set_epoch"] == [] and c["no_shuffle"] == []


def test_a_new_sampler_with_a_recycled_id_starts_afresh(cases):
    c = cases["sampler_made_anew_every_epoch"]
    assert c["findings"] == []
    if not c["ids_reused"]:
        pytest.skip("no id() was recycled this time: nothing was proven")


def test_loader_start_up_is_timed_once_per_new_set_of_workers(cases):
    c = cases["loader_workers"]
    assert c["fresh"]["startups"] == 3  # three epochs, three sets of workers
    assert c["persistent"]["startups"] == 1  # started once, reused
    assert c["fresh"]["start_method"] == "fork"


def test_checkpoint_of_a_ddp_state_dict_is_seen_and_saving_still_works(cases):
    c = cases["checkpoint"]
    assert c["facts"] == [["state_dict", "obj['model']", "module.fc.weight", True]]
    assert c["saved_still_loads"] == ["fc.weight"]


def test_process_group_gives_the_rank_and_gloo_has_no_gpu_to_check(cases):
    assert cases["process_group"] == {"rank": 0, "world": 1, "nccl_facts": 0}


def test_spawned_children_get_the_bootstrap_only_under_gpudoctor_run(cases):
    assert cases["spawn_plumbing"] == {
        "untouched_by_watch": True,
        "bootstrap_in_command": True,
        "rank_target_pickles_by_name": True,
    }
