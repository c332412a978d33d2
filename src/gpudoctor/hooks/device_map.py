"""Where every parameter and buffer of a model lives, and which ones sit apart
from the rest: a model split across devices by accident shows at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DeviceMap:
    model: str  # the model's class name
    tensors: dict[str, str]  # "encoder.proj.weight" -> "meta": parameters, then buffers

    @property
    def devices(self) -> dict[str, int]:
        """device -> how many parameters and buffers live there."""
        counts: dict[str, int] = {}
        for dev in self.tensors.values():
            counts[dev] = counts.get(dev, 0) + 1
        return counts

    @property
    def split(self) -> bool:
        return len(self.devices) > 1

    @property
    def main_device(self) -> str | None:
        """Where most tensors are (ties: the first seen); None for a model without any."""
        counts = self.devices
        return max(counts, key=lambda d: counts[d]) if counts else None

    def modules(self) -> dict[str, str]:
        """Module -> its device, or "a, b" when its own tensors are split; "" is the root."""
        by_module: dict[str, list[str]] = {}
        for name, dev in self.tensors.items():
            module = name.rpartition(".")[0]
            devs = by_module.setdefault(module, [])
            if dev not in devs:
                devs.append(dev)
        return {m: ", ".join(d) for m, d in by_module.items()}

    def outliers(self) -> dict[str, str]:
        """The tensors not on the main device."""
        main = self.main_device
        return {n: d for n, d in self.tensors.items() if d != main}

    def __str__(self) -> str:
        if not self.tensors:
            return f"{self.model}: no parameters or buffers"
        counts = ", ".join(f"{n} on {d}" for d, n in self.devices.items())
        lines = [f"{self.model}: {len(self.tensors)} parameters/buffers — {counts}"]
        if self.split:
            apart: dict[tuple[str, str], list[str]] = {}
            for name, dev in self.outliers().items():
                module, _, leaf = name.rpartition(".")
                apart.setdefault((module, dev), []).append(leaf)
            lines.append(f"  not on {self.main_device}:")
            for (module, dev), leaves in apart.items():
                lines.append(f"    {module or '<root>'} ({', '.join(leaves)}) on {dev}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "devices": self.devices, "tensors": dict(self.tensors)}


def device_map(model: Any) -> DeviceMap:
    """Where every parameter and buffer of `model` (an nn.Module) lives."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"device_map() takes an nn.Module, not {type(model).__name__}")
    tensors = {name: str(p.device) for name, p in model.named_parameters(remove_duplicate=False)}
    tensors.update({name: str(b.device) for name, b in model.named_buffers(remove_duplicate=False)})
    return DeviceMap(type(model).__name__, tensors)
