"""Controls and siblings for the verdicts of issue 34, items 3, 5, 6 and 7 (branch
verdicts): for each verdict id, the healthy input that looks most like the failure
(test_control_*) must not get it, and the nearest input that needs another verdict
(test_sibling_*) gets its own."""

from __future__ import annotations

from gpudoctor import api

# The table nvidia-smi prints, two GPUs; {row1} is GPU 1's readings line.
SMI_TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  On   | 00000000:3B:00.0 Off |                  N/A |
| 30%   41C    P8    21W / 250W |      5MiB / 11019MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA GeForce ...  On   | 00000000:5E:00.0 Off |                  N/A |
{row1}
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""
ONE_ERR = "| 30%   45C    P2   ERR! / 250W |   9871MiB / 11019MiB |     97%      Default |"
FAN_ERR = "| ERR!  45C    P2   180W / 250W |   9871MiB / 11019MiB |     97%      Default |"
ALL_ERR = "|ERR!   ERR! ERR!    ERR! / ERR! |   9871MiB / 11019MiB |     97%      Default |"
LOST_LINE = "Unable to determine the device handle for GPU 0000:5E:00.0: GPU is lost.  Reboot the system to recover this GPU"


def _smi(text: str) -> dict[str, str]:
    """diagnose of a paste: finding id -> severity."""
    return {f.id: f.severity.value for f in api.diagnose(text).findings}


class TestGpuLost:
    def test_control_one_err_in_a_power_field_is_not_a_lost_gpu(self):
        got = _smi(SMI_TABLE.format(row1=ONE_ERR))
        assert "gpu-lost" not in got and got["gpu-reading-failed"] == "info"

    def test_control_a_fan_that_reads_err_is_not_a_lost_gpu(self):
        assert "gpu-lost" not in _smi(SMI_TABLE.format(row1=FAN_ERR))

    def test_sibling_unable_to_determine_the_device_handle_is_lost(self):
        got = _smi(SMI_TABLE.format(row1=ONE_ERR).replace("+---", LOST_LINE + "\n+---", 1))
        assert got["gpu-lost"] == "error"

    def test_sibling_no_devices_were_found_is_lost(self):
        assert _smi("$ nvidia-smi\nNo devices were found\n")["gpu-lost"] == "error"


class TestGpuReadingFailed:
    def test_control_a_healthy_table_has_no_failed_reading(self):
        assert "gpu-reading-failed" not in _smi(SMI_TABLE.format(row1=ONE_ERR.replace("ERR!", "180W")))

    def test_sibling_every_reading_failed_is_a_warning_that_says_what_decides(self):
        [f] = [f for f in api.diagnose(SMI_TABLE.format(row1=ALL_ERR)).findings if f.id == "gpu-reading-failed"]
        assert f.severity.value == "warn" and "nvidia-smi -q -i 1" in f.fix
        assert "gpu-lost" not in _smi(SMI_TABLE.format(row1=ALL_ERR))
