"""runtime/device_errors.py and runtime/device_map.py with real torch errors:
the meta device mixed with cpu raises the same class of error as cpu mixed
with cuda, so the explanation is tested on this GPU-less machine. No hooks are
installed here: explain() reads the frames a traceback keeps."""

import pytest
import torch
from torch import nn

from gpudoctor.hooks.device_errors import devices_named, explain, is_device_mismatch
from gpudoctor.hooks.device_map import device_map
from gpudoctor.core.frames import traceback_frames

# PyTorch's wordings of the fault, as CUDA, cuDNN, indexing and DataParallel print them.
CUDA_WORDINGS = [
    "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!",
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors "
    "on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
    "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or input "
    "should be a MKLDNN tensor and weight is a dense tensor",
    "indices should be either on cpu or on the same device as the indexed tensor (cpu)",
    "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; "
    "but device 0 does not equal 1 (while checking arguments for cudnn_convolution)",
    "module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu",
    "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_addmm",
]

NOT_DEVICE = [
    "mat1 and mat2 shapes cannot be multiplied (5x8 and 4x4)",
    "Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same",  # dtype, same device
    "expected scalar type Float but found Double",
]


@pytest.mark.parametrize("message", CUDA_WORDINGS)
def test_every_wording_of_the_fault_is_recognised(message):
    assert is_device_mismatch(RuntimeError(message))


@pytest.mark.parametrize("message", NOT_DEVICE)
def test_other_errors_are_not(message):
    assert not is_device_mismatch(RuntimeError(message))


def test_devices_named_in_messages():
    assert devices_named(CUDA_WORDINGS[0]) == ("cpu", "cuda:0")
    assert devices_named(CUDA_WORDINGS[2]) == ("cpu", "cuda")
    assert devices_named("Tensor on device meta is not on the expected device cpu!") == ("meta", "cpu")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.register_buffer("scale", torch.ones(8))

    def forward(self, x):
        return self.proj(x) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(3)])
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def failure(model, x):
    try:
        model(x)
    except RuntimeError as exc:
        return exc
    raise AssertionError("the model ran")


def test_real_meta_cpu_error_is_recognised_and_explained():
    with torch.device("meta"):
        model = Net()
    model.to_empty(device="cpu")
    model.layers[2].proj.to("meta")  # one submodule back on meta
    exc = failure(model, torch.randn(4, 8))
    assert is_device_mismatch(exc)
    fact = explain(exc, traceback_frames(exc.__traceback__), rank=None, root=None)
    assert fact.module == "layers.2.proj"
    assert fact.module_type == "Linear" and fact.root_type == "Net"
    assert fact.module_tensors == {"weight": "meta", "bias": "meta"}
    assert fact.inputs == {"input": "cpu"}
    assert fact.model_devices == {"cpu": 6, "meta": 2}  # parameters: 3 blocks and the head, 2 each
    assert fact.source.text == "return self.proj(x) * self.scale"
    assert fact.source.path.endswith("test_runtime_device_errors.py")
    assert fact.devices_in_message == ("meta", "cpu")


def test_a_buffer_left_behind_is_found_in_the_module_that_owns_it():
    model = Net()
    model.layers[1].scale = model.layers[1].scale.to("meta")
    exc = failure(model, torch.randn(4, 8))
    fact = explain(exc, traceback_frames(exc.__traceback__), rank=3, root=model)
    assert fact.module == "layers.1"
    assert fact.module_tensors == {"scale": "meta"}
    assert fact.rank == 3


def test_error_outside_a_module_names_the_tensors_of_the_line():
    a, b = torch.randn(3), torch.zeros(3, device="meta")
    try:
        a + b
    except RuntimeError as exc:
        fact = explain(exc, traceback_frames(exc.__traceback__), rank=None)
    assert fact.module is None
    assert fact.locals["a"] == "cpu" and fact.locals["b"] == "meta"


def test_device_map_shows_what_sits_apart():
    model = Net()
    assert not device_map(model).split
    model.layers[2].proj.to("meta")
    dm = device_map(model)
    assert dm.split and dm.main_device == "cpu"
    assert dm.outliers() == {"layers.2.proj.weight": "meta", "layers.2.proj.bias": "meta"}
    assert dm.modules()["layers.2.proj"] == "meta" and dm.modules()["layers.2"] == "cpu"
    text = str(dm)
    assert "layers.2.proj (weight, bias) on meta" in text
    assert "9 on cpu, 2 on meta" in text  # 8 parameters and 3 buffers, 2 of them moved
    assert dm.to_dict()["devices"] == {"cpu": 9, "meta": 2}


def test_device_map_wants_a_module():
    with pytest.raises(TypeError):
        device_map(torch.zeros(1))
