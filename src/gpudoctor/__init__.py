"""gpudoctor: a doctor for PyTorch multi-GPU and distributed training."""

__version__ = "0.1.0"


def __getattr__(name):
    # The runtime API imports torch; keep `import gpudoctor` (and so `--help`) light.
    if name in ("watch", "device_map"):
        from gpudoctor.runtime import api

        return getattr(api, name)
    raise AttributeError(name)
