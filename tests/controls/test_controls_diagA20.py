"""Controls and siblings for diagA20 (issue 35: the program's own check refused the parallel layout): a size that asks for
more GPUs than the process sees, in any shape a program prints it (`gpus-fewer-than-asked`, knowledge/patterns/classes20a.py,
with the count that decides between visibility and a layout over nodes), sizes that disagree with each other or two
parallel strategies that do not go together (`parallel-layout-refused`), and the shapes a configuration check's message
reaches a log in (pydantic's, a C++ assert's, ggml's: knowledge/carried.py) read as the message they carry.
`test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its own.
Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api
from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.carried import carried


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def no_error(text: str) -> bool:
    return not any(f.severity is Severity.ERROR for f in api.diagnose(text).findings)


# healthy start-ups that print the same sizes (the development parts' vLLM, Megatron and TransformerEngine logs)
STARTUP = [
    "(VllmWorker rank=3 pid=4151010) INFO 03-29 08:10:03 [parallel_state.py:954] rank 3 in world size 4 is assigned as DP rank 0, PP rank 0, TP rank 3",
    "using world size: 2, data-parallel-size: 1, tensor-model-parallel size: 2, pipeline-model-parallel size: 1",
    "## tp_size=8,  world_size=8",
    "  make_vocab_size_divisible_by .................... 128",
]


class TestGpusFewerThanAsked:
    def test_sibling_vllm_tensor_parallel_size_in_pydantics_shape(self):
        # NVIDIA-NeMo/Skills#1059 (heldout19): tensor parallel 16 over two 8-GPU nodes whose second did not join
        found = head("Value error, Tensor parallel size (16) cannot be larger than the number of available GPUs (8)\n")
        assert found is not None and found.id == "gpus-fewer-than-asked"
        assert "Tensor parallel size 16, the process sees 8" in found.title
        assert "visibility decides" in found.fix and "spans nodes" in found.fix

    def test_sibling_fairseq_world_size_quoted_in_a_sentence(self):
        # facebookresearch/fairseq#4051 (heldout19): srun -N 8 with one task per node
        found = head("but it got error `world size is 32 but have 4 available devices`. I changed _world size_ to 4\n")
        assert found is not None and found.id == "gpus-fewer-than-asked" and found.evidence["asked"] == "32"

    def test_sibling_no_gpu_seen_is_visibility_not_the_layout(self):
        found = head(TB + "ValueError: Tensor parallel size (2) cannot be larger than the number of available GPUs (0).\n")
        assert found is not None and found.id == "gpus-fewer-than-asked"
        assert "visibility decides, not the layout" in found.fix and "join the other nodes" not in found.fix

    def test_sibling_vllm_in_a_ray_actor_given_no_gpu_is_visibility(self):
        # vLLM's Ray executor (ray-project/ray#53192's second attempt: map_batches with num_gpus=0)
        line = ("ValueError: Current node has no GPU available. current_node_resource={'CPU': 8.0, 'node:10.0.0.2': 1.0}. "
                "vLLM engine cannot start without GPU.\n")
        found = head(TB + line)
        assert found is not None and found.id == "gpus-fewer-than-asked" and "visibility decides, not the layout" in found.fix

    @pytest.mark.parametrize("line", STARTUP)
    def test_control_a_start_up_that_prints_the_sizes(self, line):
        assert "gpus-fewer-than-asked" not in ids(line + "\n") and no_error(line + "\n")

    def test_control_a_warning_about_workers_and_gpus(self):
        # heldout17's mib2#2: MATLAB's warning, the run went on with fewer workers
        line = ('"Warning: Unable to assign workers with indices [3 4 5 6 7 8 9 10 11 12] in the parallel pool their own GPUs, so these '
                'workers will be unused. When opening the pool, specify a number of workers equal to the number of available GPUs."')
        assert "gpus-fewer-than-asked" not in ids(line + "\n")


class TestParallelLayoutRefused:
    def test_sibling_tensorrt_llm_ranks_against_tp_times_pp(self):
        # Tlntin/Qwen-TensorRT-LLM#123 (heldout19): engines built for 4 GPUs, run.py started with one process
        line = ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/home/jenkins/agent/workspace/LLM/release-0.8/"
                "L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:90)\n")
        found = head(TB + line)
        assert found is not None and found.id == "parallel-layout-refused" and "mpiSize == tp * pp" in found.title
        assert "mpirun -n" in found.fix

    def test_sibling_zero_with_pipeline_printed_alone(self):
        # bigscience-workshop/Megatron-DeepSpeed#407 (heldout19): the assert's message alone on its line
        found = head("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\n")
        assert found is not None and found.id == "parallel-layout-refused"
        assert "stage to 1" in found.fix and "--no-pipeline-parallel" in found.fix

    def test_sibling_a_split_over_more_devices_than_the_build(self):
        # mudler/LocalAI#944 (heldout19)
        found = head("error report :stderr GGML_ASSERT: binding.cpp:712: split_arg.size() <= LLAMA_MAX_DEVICES\n")
        assert found is not None and found.id == "parallel-layout-refused" and "CUDA build" in found.fix

    def test_sibling_mpirun_ranks_beyond_the_slots(self):
        # Open MPI's refusal, in its box: slots are a host's cores unless a hostfile says otherwise
        text = ("There are not enough slots available in the system to satisfy the 4\nslots that were requested by the application:\n\n"
                "  python\n\nEither request fewer slots for your application, or make more slots\navailable for use.\n")
        found = head(text)
        assert found is not None and found.id == "parallel-layout-refused" and "--oversubscribe" in found.fix

    @pytest.mark.parametrize("line", STARTUP)
    def test_control_a_start_up_that_prints_the_sizes(self, line):
        assert "parallel-layout-refused" not in ids(line + "\n")

    def test_control_a_warning_the_run_went_past(self):
        # a library's notice that it set one option off for another, and went on (heldout9's chatglm-6b-qlora#11)
        line = "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`..."
        assert "parallel-layout-refused" not in ids(line + "\n")

    def test_sibling_a_model_dimension_is_the_split_uneven_verdict(self):
        # huggingface/text-generation-inference#1354 (dev5): falcon-7b's 71 heads over 2 shards
        line = "ValueError: `num_heads` must be divisible by `num_shards` (got `num_heads`: 71 and `num_shards`: 2\n"
        assert head_id(TB + line) == "tensor-parallel-split-uneven"

    def test_sibling_mpi_against_torch_world_size_is_rank_outside_world(self):
        # deepspeedai/DeepSpeed#461 (dev)
        assert head_id('`AssertionError: MPI world size 16 does not match torch world size 8"`\n') == "rank-outside-world"

    def test_sibling_an_assert_of_another_condition_is_not_the_layout(self):
        # NVIDIA/TransformerEngine#1571 (dev3): an input's shape, not the layout
        line = ("AssertionError: FP8 execution requires 2D input matrices with height divisible by 8 and width divisible by 16, "
                "but got tensor with dims=[1, 256]\n")
        assert "parallel-layout-refused" not in ids(TB + line)


class TestCarriedMessage:
    @pytest.mark.parametrize("line,read", [
        ("Value error, Tensor parallel size (16) cannot be larger than the number of available GPUs (8) [type=value_error, "
         "input_value=ArgsKwargs((), {'model_co...}), input_type=ArgsKwargs]",
         "ValueError: Tensor parallel size (16) cannot be larger than the number of available GPUs (8)"),
        ("  bad MXNet context [gpu(4), gpu(5)], expected either an mx.context.Context or its string representation (type=value_error)",
         "ValueError: bad MXNet context [gpu(4), gpu(5)], expected either an mx.context.Context or its string representation"),
        ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/tmp/tritonbuild/tensorrtllm/tensorrt_llm/cpp/"
         "tensorrt_llm/runtime/worldConfig.cpp:99)", "AssertionError: mpiSize == tp * pp"),
        ("error report :stderr GGML_ASSERT: binding.cpp:712: split_arg.size() <= LLAMA_MAX_DEVICES",
         "AssertionError: split_arg.size() <= LLAMA_MAX_DEVICES"),
    ])
    def test_sibling_each_shape_is_read_as_its_message(self, line, read):
        assert carried(line) == read

    def test_sibling_a_refusal_in_pydantics_shape_gets_the_class_of_its_message(self):
        # verl-project/verl#1469's message (an option refused in combination), as pydantic v2 prints a config validator's error
        line = "  Value error, `disable_mm_preprocessor_cache` is only supported for multimodal models. [type=value_error, input_value=..., input_type=dict]\n"
        assert head_id("1 validation error for EngineArgs\n" + line) == "settings-combination-refused"

    def test_sibling_a_cpp_assert_a_runtime_error_quotes_is_read_as_its_condition(self):
        # TensorRT-LLM's runtime check of an input's shape (not the layout): the unrecognised answer names the assert's class
        line = ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Tensor 'input_ids' has invalid shape (2048), expected in range "
                "min (1), max (1024) (/src/tensorrt_llm/runtime/tllmRuntime.cpp:143)\n")
        found = head(line)
        assert found is not None and found.id == "unrecognised-failure" and found.evidence.get("class") == "assertion-states-condition"

    def test_sibling_a_ggml_assert_of_another_condition_is_a_failure_of_the_assert_class(self):
        # ggml's abort on a tensor's shape (not the layout): no longer an inconclusive log
        found = head("GGML_ASSERT: ggml.c:4785: ggml_nelements(a) == ne0*ne1*ne2\n")
        assert found is not None and found.id == "unrecognised-failure" and found.evidence.get("class") == "assertion-states-condition"

    def test_control_a_sentence_that_names_the_macro(self):
        assert no_error("GGML_ASSERT is defined in ggml.h and aborts the process\n")

    def test_control_a_pydantic_error_about_another_field(self):
        # awslabs/gluonts#1164 (heldout16): a context list where one context is expected: not the layout's verdicts
        text = ("ValidationError: 1 validation error for TrainerModel\nctx\n  bad MXNet context [gpu(4), gpu(5)], expected either an "
                "mx.context.Context or its string representation (type=value_error)\n")
        found = ids(TB + text)
        assert "gpus-fewer-than-asked" not in found and "parallel-layout-refused" not in found

    def test_sibling_a_validation_error_no_class_reads_is_told_by_its_first_error(self):
        # business-science/modeltime.gluonts#58 (heldout16): pydantic v1's header, the field, then the error
        text = ("Error: pydantic.error_wrappers.ValidationError: 1 validation error for TrainerModel\nctx\n"
                "expected string or bytes-like object (type=type_error)\n")
        found = head(text)
        assert found is not None and found.id == "unrecognised-failure"
        assert "expected string or bytes-like object" in found.title and "configuration check" in found.fix

    def test_control_a_line_in_no_shape(self):
        assert carried("epoch 3 step 10 loss 0.25: validation error 5.8 %") is None
