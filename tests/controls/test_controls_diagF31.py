"""Controls and siblings for the program's own answer that it sees no GPU (issue 35, the gpu-not-visible family, diagF31):
`program-found-no-gpu` widened from torch's one-line answer to the same answer in every probe's words (an environment
report's, TensorFlow's, JAX's), to a REPL's or a script's call whose answer is the line after it, and to the answers that
name their cause (a torch built without CUDA). The lines are real ones from the public threads named beside them; the
controls are the nearest healthy answers (a GPU listed, True, a count above 0, another question answered False, the code
that asks with no answer printed)."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_diagC20 import found

VERDICT = "program-found-no-gpu"
# a short run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"


def verdict(text: str):
    return found(text).get(VERDICT)


class TestOneLineAnswers:
    def test_sibling_every_probes_words(self):
        lines = (
            "Warning: torch.cuda.is_available() returned False.\n",  # oobabooga/textgen#791
            "Is CUDA available: No\n",  # collect_env of torch 1.6 (pytorch/pytorch#46868)
            "Is CUDA available: False\n",  # collect_env since torch 1.7
            "PyTorch detects CUDA available:  False\n",  # a cluster's check script (mila-iqia/mila-docs#213)
            "Num GPUs Available:  0\n",  # TensorFlow's guide's print (frankkramer-lab/MIScnn#32)
            "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]\n",  # tensorflow/tensorflow#85006
            ">>> tf.config.list_physical_devices('GPU') -> []\n",
            "[CpuDevice(id=0)]\n",  # JAX's jax.devices() with the CPU alone
        )
        for line in lines:
            f = verdict(line)
            assert f is not None and f.severity is Severity.WARN, line

    def test_sibling_a_cpu_build_names_its_install(self):
        # collect_env of a CPU wheel (oobabooga/textgen#791's "PyTorch version: 2.0.0+cpu"; pytorch/pytorch#49325)
        env = ("Collecting environment information...\nPyTorch version: 2.0.0+cpu\nIs debug build: False\n"
               "CUDA used to build PyTorch: None\nROCM used to build PyTorch: N/A\n\nIs CUDA available: False\n")
        f = verdict(env)
        assert f is not None and f.fix.startswith("this torch is built without CUDA")
        assert "--index-url https://download.pytorch.org/whl/cu" in f.fix
        assert verdict("PyTorch built with CUDA:         False\n").fix.startswith("this torch is built without CUDA")  # mila-docs#213

    def test_sibling_tensorflow_and_jax_get_their_own_step(self):
        assert verdict("Num GPUs Available:  0\n").fix.startswith("TensorFlow sees no GPU: on native Windows, TensorFlow 2.11")
        assert verdict(">>> jax.devices()\n[CpuDevice(id=0)]\n").fix.startswith("JAX lists the CPU alone")

    def test_control_a_gpu_there(self):
        lines = (
            "Is CUDA available: True\n", "Is CUDA available: Yes\n", "Num GPUs Available:  1\n",
            "[CudaDevice(id=0), CudaDevice(id=1)]\n", "CUDA used to build PyTorch: 12.1\n", "PyTorch version: 2.3.1+cu121\n",
            # a list of every device that goes on to the GPU after the CPU (tensorflow/tensorflow#60172's answer)
            "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'),\n PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]\n",
        )
        for line in lines:
            assert verdict(line + TRAINED) is None, line

    def test_control_another_question_answered_false(self):
        for line in ("torch.backends.mps.is_available(): False\n", "torch.cuda.is_bf16_supported(): False\n",
                     "Is debug build: False\n", "Is XNNPACK available: True\n"):
            assert verdict(line + TRAINED) is None, line

    def test_control_the_code_that_asks(self):
        for line in ("print(\"Num GPUs Available: \", len(tf.config.list_physical_devices('GPU')))\n",
                     "if torch.version.cuda is None:\n", "# torch.cuda.is_available()=False\n"):
            assert verdict(line) is None, line


class TestAnswerOnTheNextLine:
    def test_sibling_repl_and_script_answers(self):
        texts = (
            ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n",  # pytorch/pytorch#46868
            "import torch\nprint(torch.cuda.is_available())\n\nFalse\n",  # a script's print, a blank line between
            ">>> torch.cuda.device_count()\n0\n",
            "print(torch.cuda.device_count())\n0\n",
            "In [2]: tf.config.list_physical_devices('GPU')\nOut[2]: []\n",
        )
        for text in texts:
            f = verdict(text)
            assert f is not None and f.severity is Severity.WARN, text

    def test_control_the_answer_says_a_gpu(self):
        for text in (">>> torch.cuda.is_available()\nTrue\n", "print(torch.cuda.device_count())\n2\n",
                     ">>> tf.config.list_physical_devices('GPU')\n[PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]\n"):
            assert verdict(text + TRAINED) is None, text

    def test_control_a_script_that_prints_nothing_after_the_call(self):
        # the code of a script pasted, its next line more code: no answer printed, nothing read
        script = "import torch\nprint(torch.cuda.is_available())\nmodel = Net().cuda()\n"
        assert verdict(script) is None
        assert all(f.severity is not Severity.ERROR for f in api.diagnose(script).findings)

    def test_sibling_a_one_line_command(self):
        # the check the fixes of this class give, run and answered (the shape of pytorch/pytorch#51858's "print(...) return false")
        for text in ('$ python -c "import torch; print(torch.cuda.is_available())"\nFalse\n',
                     "python3 -c 'import tensorflow as tf; print(tf.config.list_physical_devices(\"GPU\"))'\n[]\n"):
            assert verdict(text) is not None, text

    def test_control_a_one_line_command_that_sees_the_gpu_or_fails(self):
        assert verdict('$ python -c "import torch; print(torch.cuda.is_available())"\nTrue\n' + TRAINED) is None
        assert verdict('python -c "import torch; print(torch.cuda.is_available())"\nTraceback (most recent call last):\n') is None


class TestTheSettingDecidesWhere:
    def test_sibling_a_container_gets_the_containers_fix(self):
        text = "$ docker run -it tensorflow/tensorflow:latest python\n>>> import tensorflow as tf\n>>> tf.config.list_physical_devices('GPU')\n[]\n"
        f = verdict(text)
        assert f is not None and f.fix.startswith("inside a container the GPU is the container runtime's to hand over")
        assert "TensorFlow sees no GPU" in f.fix  # the probe's own step follows the setting's

    def test_sibling_a_cpu_build_decides_in_any_setting(self):
        f = verdict("$ docker run -it myimage python check.py\nCUDA used to build PyTorch: None\nIs CUDA available: False\n")
        assert f is not None and f.fix.startswith("this torch is built without CUDA")
        assert "docker exec CONTAINER nvidia-smi -L" in f.fix

    def test_control_no_setting_keeps_the_checks(self):
        f = verdict("Is CUDA available: False\n")
        assert f is not None and f.fix.startswith("in the job's own environment (the container, the task, the notebook): nvidia-smi")


class TestDevicesOneALine:
    LOOP = ">>> devices = tf.config.experimental.list_physical_devices()\n>>> for device in devices:\n...     print(device)\n...\n"

    def test_sibling_the_cpu_alone(self):
        # microsoft/tensorflow-directml-plugin#320 (heldout30b): the DirectML plugin's device not listed
        f = verdict(self.LOOP + "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')\n```\nRunning the keras mnist demo\n")
        assert f is not None and f.severity is Severity.WARN and "DirectML's DML" in f.fix

    def test_control_a_device_after_the_cpu(self):
        for device in ("GPU", "DML"):
            text = (self.LOOP + "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')\n"
                    f"PhysicalDevice(name='/physical_device:{device}:0', device_type='{device}')\n")
            assert verdict(text + TRAINED) is None, device
