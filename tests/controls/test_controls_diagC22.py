"""Controls and siblings for diagC22 (issue 35: classes of messages whose error line is in the log but whose cause the
answer did not name, knowledge/patterns/classes22c.py): a local variable read before any assignment of it
(`variable-unassigned`), a managed training service's summary of a failed job (`managed-job-failed`), and the C++ CHECKs
whose condition holds a call (`native-check-failed`, knowledge/patterns/classes11b.py). `test_control_*` is the look-alike
input that must not get the verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones (their logs
named beside them)."""

from __future__ import annotations

import pytest

from gpudoctor import api
from test_controls_detect8 import TB, head
from test_controls_diagD21 import ids, no_error


# artidoro/qlora#231 (heldout7): n_gpus is set only when CUDA sees a GPU
QLORA = ('Traceback (most recent call last):\n  File "qlora.py", line 841, in <module>\n    train()\n'
         '  File "qlora.py", line 297, in get_accelerate_model\n    max_memory = {i: max_memory for i in range(n_gpus)}\n'
         "UnboundLocalError: local variable 'n_gpus' referenced before assignment\n")


class TestVariableUnassigned:
    verdict = "variable-unassigned"

    def test_sibling_a_variable_set_only_on_one_branch(self):
        found = head(QLORA)
        assert found is not None and found.id == self.verdict and "'n_gpus'" in found.title
        assert "qlora.py:297" in found.fix and "n_gpus" in found.fix and "gpudoctor lint" in found.fix

    @pytest.mark.parametrize("line", [
        # Lightning-AI/lightning-thunder#448 (heldout4): a loop over a rank's parameters that ran zero times
        "[rank0]: UnboundLocalError: local variable 'p' referenced before assignment",
        # Python 3.11's words (AronnePiperno/fewshot-lightning-hydra, heldout17w)
        "UnboundLocalError: cannot access local variable 'fps' where it is not associated with a value",
    ])
    def test_sibling_the_message_in_either_python_wording(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict

    def test_sibling_a_name_never_defined_is_not_it(self):
        found = head(TB + "NameError: name 'n_gpus' is not defined\n")
        assert found is not None and found.id != self.verdict

    @pytest.mark.parametrize("line", [
        # pylint's report on a file: a linter's finding, not a run that failed
        "train.py:297:42: E0606: Possibly using variable 'n_gpus' before assignment (possibly-used-before-assignment)",
        "WARNING: skipping sample 12: local variable 'box' referenced before assignment",
        "    raise UnboundLocalError(f\"local variable '{name}' referenced before assignment\")",
    ])
    def test_control_a_linter_note_or_a_skipped_sample(self, line):
        assert self.verdict not in ids(line + "\n") and no_error(line + "\n")


# heiko-hotz/text-summarisation-project#2 (heldout14): SageMaker's summary of a failed smddp job (its command cut here)
SAGEMAKER = ('AlgorithmError: ExecuteUserScriptError: Command "mpirun --host algo-1:8,algo-2:8 -np 16 --allow-run-as-root '
             '--tag-output smddprun /opt/conda/bin/python3.6 -m mpi4py run_summarization.py --do_train True"\n')


class TestManagedJobFailed:
    verdict = "managed-job-failed"

    @pytest.mark.parametrize("line", [
        SAGEMAKER,
        # aws/sagemaker-training-toolkit#185 (heldout16): the SDK's exception for the same summary
        "UnexpectedStatusException: Error for Training job vit-fsdp-2023-06-14-22-27-25-988: Failed. Reason: AlgorithmError: SMDDPError:\nExitCode 134\n",
    ])
    def test_sibling_the_services_summary_alone(self, line):
        found = head(line)
        assert found is not None and found.id == self.verdict
        assert "aws logs tail /aws/sagemaker/TrainingJobs" in found.fix

    def test_sibling_the_containers_own_error_leads(self):
        # the error the script raised in the container, when the log holds it, is the cause; the summary is its consequence
        found = head(SAGEMAKER + TB + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
        assert found is not None and found.id == "cuda-oom"

    @pytest.mark.parametrize("log", [
        "2020-04-25 11:33:56 Starting - Starting the training job...\n2020-04-25 11:40:12 Completed - Training job completed\n"
        "Training seconds: 376\nBillable seconds: 376\n",
        "INFO:sagemaker:Creating training-job with name: vit-fsdp-2023-06-14-22-27-25-988\n",
    ])
    def test_control_a_job_that_completed(self, log):
        assert self.verdict not in ids(log) and no_error(log)


class TestNativeCheckFailedCalls:
    verdict = "native-check-failed"

    @pytest.mark.parametrize("line", [
        # Oneflow-Inc/oneflow#6953 (heldout17): a condition that is a call
        "F1207 10:43:16.922251 3493939 rpc_server.cpp:134] Check failed: kv_.emplace(k, v).second",
        # apache/mxnet#1935 (heldout16): a condition with parentheses, its values after it
        "src/operator/operator_util.cc:648: Check failed: (lhs.ctx()) == (rhs.ctx()) operands context mismatch 3 1 vs. 3 0",
        # dmlc/xgboost in federated-xgboost#14 (heldout11): a call's result compared, in a Python exception
        "federatedxgboost.core.XGBoostError: [16:58:36] federated-xgboost/include/xgboost/tree_model.h:295: Check failed: "
        "fi->Read(&param, sizeof(TreeParam)) == sizeof(TreeParam) (0 vs. 148) :",
    ])
    def test_sibling_a_condition_that_holds_a_call(self, line):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict

    def test_sibling_a_device_mismatch_in_a_check_keeps_its_own(self):
        # Oneflow-Inc/oneflow#8668 (heldout17): the check's words are a device mismatch's, with parentheses in its prose
        line = ("RuntimeError: Check failed: *default_device == *input_device Expected all tensors to be on the same device, "
                "but found at least two devices, cpu:0 (positional 0) and cpu:1 (positional 1)!")
        found = head(TB + line + "\n")
        assert found is not None and found.id == "ddp-device-mismatch"

    @pytest.mark.parametrize("line", [
        # a CUDA call's status is the CUDA error's; NCCL's group call is NCCL's (Oneflow-Inc/OneFlow-Benchmark#152)
        "F1116 15:55:02.388101 30214 cudnn_conv_layer.cu:137] Check failed: error == cudaSuccess (77 vs. 0)  an illegal memory access was encountered",
        "F1028 20:39:07.626992 206314 collective_boxing_executor.cpp:452] Check failed: ncclGroupEnd() : unhandled system error",
        # TensorFlow's abort after "could not create cudnn handle" (CRLab/pc_scene_completion_ws#1, heldout18: added after
        # the transfer measurement)
        "2017-12-15 08:45:52.848698: F tensorflow/core/kernels/conv_ops_3d.cc:395] Check failed: stream->parent()->"
        "GetConvolveAlgorithms( conv_parameters.ShouldIncludeWinogradNonfusedAlgo<T>(), &algorithms)",
    ])
    def test_control_a_cuda_or_nccl_call_is_not_it(self, line):
        assert self.verdict not in ids(line + "\n")


# rbgirshick/voc-dpm#18 (heldout17): a parfor loop whose workers died
PARFOR = ("Error using parallel_function (line 604)\nAll workers aborted during execution of the parfor loop.\n\n"
          "Error in train>poslatent (line 503)\n  parfor k = 1:thisbatchsize\n\nError in pascal (line 49)\nmodel = pascal_train(cls, n, note);\n")


class TestMatlabError:
    verdict = "matlab-error"

    def test_sibling_a_parfor_whose_workers_died(self):
        found = head(PARFOR)
        assert found is not None and found.id == self.verdict and "All workers aborted" in found.title
        assert "parpool(1)" in found.fix

    def test_sibling_the_error_caused_by_a_workers_own(self):
        # vlfeat/matconvnet#1093 (heldout7): the worker's error is under "Caused by:"
        log = ("Error using cnn_train (line 157)\nError detected on worker 2.\n\nError in confidenceNetinit (line 61)\n"
               "net = cnn_train(net, imdb, @getBatch, trainOpts) ;\n\nCaused by:\n    Error using cnn_train>accumulateGradients (line 469)\n"
               "    Index exceeds matrix dimensions.\n")
        found = head(log)
        assert found is not None and found.id == self.verdict and "Index exceeds matrix dimensions" in found.title

    def test_sibling_mex_files_without_gpu_support(self):
        # ignaciorlando/red-lesion-detection#3 (heldout17)
        found = head("Error using vl_nnconv\nAn input is not a numeric array (or GPU support not compiled).\n\n"
                     "Error in vl_simplenn (line 306)\n")
        assert found is not None and found.id == self.verdict and "vl_compilenn('enableGpu', true" in found.fix

    def test_sibling_a_toolbox_this_matlab_lacks(self):
        # ucsb-goard-lab/EstrousNet#7 (heldout17)
        found = head("gpuDeviceCount requires Parallel Computing Toolbox.\n\nError in EstrousNetTrainer/checkGPU (line 180)\n"
                     "            isgpu = gpuDeviceCount(); % see if device has a gpu\n")
        assert found is not None and found.id == self.verdict and "Parallel Computing Toolbox" in found.title

    @pytest.mark.parametrize("log", [
        # MATLAB's warning with a stack (bertinetto/siamese-fc#62's first lines), and R's error (another shape, another verdict)
        "Warning: Function labindex has the same name as a MATLAB builtin. We suggest you rename the function to avoid a potential name\n"
        "> In path at 109\n  In addpath at 86\n",
        "Starting parallel pool (parpool) using the 'local' profile ... connected to 4 workers.\n",
    ])
    def test_control_a_warning_or_a_pool_that_started(self, log):
        assert self.verdict not in ids(log) and no_error(log)

    def test_control_r_error_is_not_matlabs(self):
        assert self.verdict not in ids("Error in library(foo) : there is no package called 'foo'\n")


class TestVariableUnassignedWhoseFrame:
    """The fix says the branch the raising frame decides: the user's file (fix it there) or a library's (upgrade it)."""

    LINE = "UnboundLocalError: local variable 'p' referenced before assignment\n"

    def test_control_the_users_own_file_is_not_told_to_upgrade(self):
        found = api.diagnose("Traceback (most recent call last):\n  File \"/home/u/proj/train.py\", line 12, in main\n" + self.LINE).findings[0]
        assert found.id == "variable-unassigned" and "pip install -U" not in found.fix and "/home/u/proj/train.py" in found.fix

    def test_sibling_a_library_frame_names_its_package(self):
        # Lightning-AI/lightning-thunder#448: raised in thunder's fsdp_transform_module
        found = api.diagnose("Traceback (most recent call last):\n  File \"/usr/lib/python3.10/site-packages/thunder/distributed/__init__.py\", "
                             "line 434, in fsdp_transform_module\n" + self.LINE).findings[0]
        assert found.id == "variable-unassigned" and "that frame is thunder's code" in found.fix and "pip install -U PACKAGE" in found.fix
