"""Whose code a frame is, however the library was installed (issue 35 item 3)."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.libraries import package_of, project_of

LIBRARY_FRAMES = {
    # pip into a venv / conda env (Linux, Windows), Debian's dist-packages, a user install
    "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py": ("torch", "pytorch/pytorch"),
    "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/engine.py": ("deepspeed", "deepspeedai/DeepSpeed"),
    "/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py": ("numpy", "numpy/numpy"),
    "C:\\Users\\me\\anaconda3\\Lib\\site-packages\\torch\\nn\\modules\\module.py": ("torch", "pytorch/pytorch"),
    "/home/u/.local/lib/python3.9/site-packages/transformers/trainer.py": ("transformers", "huggingface/transformers"),
    # an egg (setup.py install), a conda package cache
    "/home/u/.local/lib/python3.9/site-packages/deepspeed-0.9.0-py3.9.egg/deepspeed/launcher/runner.py": ("deepspeed", "deepspeedai/DeepSpeed"),
    "/opt/conda/pkgs/pytorch-2.1.0-py3.10_cuda12.1_0/lib/python3.10/torch/cuda/__init__.py": ("torch", "pytorch/pytorch"),
    # editable installs: source checkouts of known libraries
    "/home/u/DeepSpeed/deepspeed/runtime/engine.py": ("deepspeed", "deepspeedai/DeepSpeed"),
    "/home/u/transformers/src/transformers/trainer.py": ("transformers", "huggingface/transformers"),
    "/workspace/Megatron-LM/megatron/core/parallel_state.py": ("megatron", "NVIDIA/Megatron-LM"),
    "/root/LLaMA-Factory/src/llamafactory/train/tuner.py": ("llamafactory", "hiyouga/LLaMA-Factory"),
    "/home/u/pytorch/torch/distributed/run.py": ("torch", "pytorch/pytorch"),
    # Cython compiled into a package: its source path is relative and short
    "python/ray/_raylet.pyx": ("ray", "ray-project/ray"),
    # Python's own library: a library frame, but no project to search
    "/usr/lib/python3.10/subprocess.py": ("python", None),
    "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/process.py": ("python", None),
    "<frozen importlib._bootstrap>": ("python", None),
    "C:\\Python310\\Lib\\subprocess.py": ("python", None),
    # a package's console script: the launcher's own entry point, not the user's code
    "/usr/local/google/home/kiuk/.pyenv/versions/venv311/bin/torchrun": ("torch", "pytorch/pytorch"),
    "C:\\Users\\me\\anaconda3\\Scripts\\accelerate.exe": ("accelerate", "huggingface/accelerate"),
    # Windows' standard library in lower case, under the Python install or a conda base
    "C:\\Users\\Wix\\AppData\\Local\\Programs\\Python\\Python310\\lib\\runpy.py": ("python", None),
    "C:\\Users\\me\\anaconda3\\lib\\multiprocessing\\spawn.py": ("python", None),
    # a package pip is building from source (Dao-AILab/flash-attention#1593)
    "D:\\temp\\pip-install-9l0jfy0s\\flash-attn_efe67f713cf64f329687681b653f0629\\setup.py": ("flash_attn", "Dao-AILab/flash-attention"),
    # a model's own code from the Hub (trust_remote_code): no GitHub tracker
    "/home/user/.cache/huggingface/modules/transformers_modules/chatglm-6b/modeling_chatglm.py": ("chatglm-6b (the model's code from the Hub)", None),
    # Ray's copy of the job's working directory: the job's layout after it (here verl's checkout)
    "/tmp/ray/session_2026-06-16_03-36-07_007828_538/runtime_resources/working_dir_files/_ray_pkg_2e91fb31ce61be30/verl/trainer/ppo/ray_trainer.py": ("verl", "volcengine/verl"),
    # projects whose tracker is not known, laid out as packages: a GitHub archive, the src/ layout
    "D:\\gc\\ultralytics-main\\ultralytics\\nn\\tasks.py": ("ultralytics", None),
    "/root/nanotron/src/nanotron/config/config.py": ("nanotron", None),
    # code a library generates and runs (unslothai/unsloth#4360, torch inductor's kernels)
    "c:\\Users\\User\\Desktop\\Training\\unsloth_compiled_cache\\UnslothSFTTrainer.py": ("unsloth", None),
    "/tmp/torchinductor_root/ab/cabc123.py": ("torch", "pytorch/pytorch"),
}

USER_FRAMES = [
    "train.py",
    "/home/me/project/train.py",
    "/workspace/Megatron-LM/pretrain_gpt.py",  # the entry script in a checkout is what the user runs
    "/root/LLaMA-Factory/src/train.py",
    "/home/u/work/deepspeed/train.py",  # a folder of the user's only named like a library
    "<ipython-input-3-4f2b1c>",  # a notebook cell
    "/home/me/bin/train.py",  # a script of the user's in a bin/ folder
    "/tmp/ipykernel_12/3456.py",
    "/tmp/ray/session_x/runtime_resources/working_dir_files/_ray_pkg_2e91fb31ce61be30/train.py",  # the job's own script, shipped by Ray
    "/home/me/yolo-main/train.py",  # the entry script of an unpacked archive is what the user runs
    "/home/me/myproj/src/utils.py",  # a src/ folder that holds no package of the project's name
    "D:\\myproj\\lib\\utils.py",  # a lib folder of the user's, not Python's
]


@pytest.mark.parametrize("path", sorted(LIBRARY_FRAMES))
def test_library_frames_name_their_package_and_project(path):
    package, project = LIBRARY_FRAMES[path]
    assert package_of(path) == package
    assert project_of(path) == project


@pytest.mark.parametrize("path", USER_FRAMES)
def test_user_frames_are_the_users(path):
    assert package_of(path) is None
    assert project_of(path) is None
