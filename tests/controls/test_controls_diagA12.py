"""diagA12 (issue 35; the retired heldout11's first half): each class test pairs a rule of knowledge/patterns/classes12a.py,
or a class widened in a shared module, with its control (the look-alike that must not get the verdict) and its sibling
(the nearest input that gets its own). Real lines, threads beside them."""

from __future__ import annotations

import pytest
from test_controls_detect8 import ENDED, TB, head, head_id, healthy

# odegeasslbc/FastGAN-pytorch#8: the discriminator returns an int beside its tensors; DataParallel's gather zips it
GATHER = (
    '  File "/usr/local/lib/python3.7/dist-packages/torch/nn/parallel/data_parallel.py", line 174, in gather\n'
    "    return gather(outputs, output_device, dim=self.dim)\n"
    '  File "/usr/local/lib/python3.7/dist-packages/torch/nn/parallel/scatter_gather.py", line 68, in gather\n'
    "    res = gather_map(outputs)\n"
    '  File "/usr/local/lib/python3.7/dist-packages/torch/nn/parallel/scatter_gather.py", line 63, in gather_map\n'
    "    return type(out)(map(gather_map, zip(*outputs)))\n"
)


class TestAllGatherShapesRefused:
    verdict = "all-gather-shapes-refused"

    def test_sibling_apex_syncbn_on_torch_16(self):
        # rwightman/efficientdet-pytorch#69: apex's SyncBatchNorm all_gathers into tensors of another shape
        log = ('  File "envs/pytorch-16/lib/python3.8/site-packages/apex/parallel/optimized_sync_batchnorm_kernel.py", line 36, in forward\n'
               "    torch.distributed.all_gather(mean_l, mean, process_group)\n"
               "RuntimeError: All tensor operands to scatter/gather must have the same size\n")
        found = head(TB + log)
        assert found is not None and found.id == self.verdict and "convert_sync_batchnorm" in found.fix

    def test_sibling_quoted_beside_the_launchers_line_is_told_not_the_launcher(self):
        # tianweiy/CenterPoint#57: both errors quoted in one sentence; the launcher's is what the other caused
        line = ('it seames that there are two key problems: "RuntimeError: All tensor operands to scatter/gather must have the same size" '
                "and \"subprocess.CalledProcessError: Command '['python', '-u', './tools/train.py', '--local_rank=1']' returned non-zero "
                'exit status 1.\n')
        assert head_id(line) == self.verdict

    def test_control_dataparallels_gather_of_other_sizes(self):
        line = "RuntimeError: Gather got an input of invalid size: got [16, 24, 9490], but expected [16, 16, 9490]\n"
        assert head_id(TB + line) == "dataparallel-gather-size-mismatch"


class TestDataParallelNonTensorOutput:
    verdict = "dataparallel-non-tensor-output"

    @pytest.mark.parametrize("message", ["zip argument #1 must support iteration", "'int' object is not iterable"])  # Python 3.7; 3.10 on
    def test_sibling_a_number_among_the_replicas_outputs(self, message):
        found = head(TB + GATHER + f"TypeError: {message}\n")
        assert found is not None and found.id == self.verdict and "torch.tensor(x" in found.fix

    def test_control_the_programs_own_zip(self):
        # wizdom13/RND-Pytorch#5: the same words from the program's own zip(): not DataParallel
        log = TB + '  File "train.py", line 226, in main\n    for parent_conn, action in zip(parent_conns, actions):\nTypeError: zip argument #2 must support iteration\n'
        assert head_id(log) not in (self.verdict, "-")
        assert "DataParallel" not in head(log).title


class TestForwardMissingInputs:
    verdict = "forward-missing-inputs"

    def test_sibling_a_replica_given_no_share_of_the_batch(self):
        line = "The error is : TypeError: forward() missing 2 required positional arguments: 'image1' and 'image2'\n"  # princeton-vl/RAFT#139
        found = head(line)
        assert found is not None and found.id == self.verdict and "drop_last=True" in found.fix
        assert found.evidence["args"] == "image1 and image2"

    def test_control_an_unexpected_keyword_is_another_mistake(self):
        assert head_id(TB + "TypeError: forward() got an unexpected keyword argument 'labels'\n") != self.verdict

    def test_control_a_constructor_missing_an_argument(self):
        assert head_id(TB + "TypeError: __init__() missing 1 required positional argument: 'config'\n") != self.verdict


class TestTfInputQueueEmpty:
    verdict = "tf-input-queue-empty"

    def test_sibling_the_pipeline_read_nothing(self):
        line = ("tensorflow.python.framework.errors_impl.OutOfRangeError: RandomShuffleQueue '_2_data_loading/batching/shuffle_batch/"
                "random_shuffle_queue' is closed and has insufficient elements (requested 1, current size 0)\n")  # Struct2depth-Training#1
        found = head(line)
        assert found is not None and found.id == self.verdict and "train.txt" in found.fix

    def test_control_the_kernels_warning_at_the_end_of_the_epochs_is_healthy(self):
        # a TF1 run limited by num_epochs: the queue's end is the loop's end-of-data signal, caught
        line = ("W tensorflow/core/framework/op_kernel.cc:993] Out of range: FIFOQueue '_1_batch/fifo_queue' is closed and has "
                "insufficient elements (requested 32, current size 0)\n")
        assert head_id(line + "Done training for 10 epochs, 5000 steps.\n" + ENDED) != self.verdict


class TestCaffeDataListEmpty:
    verdict = "caffe-data-list-empty"
    CRASH = ("*** Aborted at 1512723887 (unix time) try \"date -d @1512723887\" if you are using GNU date ***\n"
             "PC: @     0x7f6ea84dfaad caffe::VideoDataLayer<>::DataLayerSetUp()\n"
             "*** SIGSEGV (@0x0) received by PID 19977 (TID 0x7f6ea8b86a80) from PID 0; stack trace: ***\n"
             "    @     0x7f6ea84dfaad caffe::VideoDataLayer<>::DataLayerSetUp()\n")

    def test_sibling_the_empty_list_is_told_before_the_crash_it_causes(self):
        # yjxiong/temporal-segment-networks#166
        found = head("I1208 17:04:47.734378 19977 video_data_layer.cpp:50] A total of 0 videos.\n" + self.CRASH)
        assert found is not None and found.id == self.verdict and "source file" in found.fix

    def test_sibling_a_crash_after_a_list_that_held_images_stays_a_crash(self):
        assert head_id("I1208 17:04:47.734378 19977 image_data_layer.cpp:45] A total of 17493 images.\n" + self.CRASH) == "launcher-sigsegv"

    def test_control_a_list_that_held_images(self):
        assert healthy("I0518 22:09:32.294107 2695928 convert_imageset.cpp:89] A total of 17493 images.\n" + ENDED)


class TestTffDatasetReduce:
    verdict = "tff-dataset-reduce-multi-gpu"

    def test_sibling_the_message_names_its_remedy(self):
        line = ("ValueError: Detected dataset reduce op in multi-GPU TFF simulation: `use_experimental_simulation_loop=True` for "
                "`tff.learning`; or use `for ... in iter(dataset)` for your own dataset iteration.Reduce op will be functional after "
                "b/159180073.\n")  # google-research/federated#32
        found = head(TB + line)
        assert found is not None and found.id == self.verdict and "build_federated_evaluation" in found.fix

    def test_control_a_simulation_listing_its_gpus(self):
        assert healthy("Detected 2 GPUs for the TFF simulation: /device:GPU:0, /device:GPU:1\n" + ENDED)


class TestWidenedDeviceClasses:
    def test_sibling_dataparallel_of_a_model_on_the_cpu_in_old_torch(self):
        # junyanz/pytorch-CycleGAN-and-pix2pix#252: the broadcast that copies the model to the GPUs refuses CPU tensors
        log = ('  File "/usr/local/lib/python2.7/dist-packages/torch/nn/parallel/_functions.py", line 11, in forward\n'
               "    raise TypeError('Broadcast function not implemented for CPU tensors')\n"
               "TypeError: Broadcast function not implemented for CPU tensors\n")
        found = head(TB + log)
        assert found is not None and found.id == "dataparallel-module-not-on-first-device" and "before nn.DataParallel" in found.fix

    def test_control_a_program_that_refuses_a_feature_stays_that(self):
        assert head_id(TB + "NotImplementedError: Sparse tensors are not implemented for this backend\n") != "dataparallel-module-not-on-first-device"

    def test_sibling_tensors_on_the_cpu_where_an_op_expected_them_on_the_gpu(self):
        # adapter-hub/adapters#100: torch 1.x's wording for several tensors
        line = ("RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU "
                "(while checking arguments for addmm)\n")
        assert head_id(TB + line) == "ddp-device-mismatch"


class TestShellReportOfABusError:
    """bash's report of a script's child killed by a signal pads the signal's name: the SIGBUS form read like the SIGSEGV one."""

    def test_sibling_a_bus_error_in_the_job_report(self):
        # salu133445/musegan#79: MuseGAN keeps its training data in shared memory (SharedArray), on Colab
        line = ('**./scripts/run_train.sh: line 19:   879 Bus error               (core dumped) python3 "$DIR/../src/train.py" '
                '--exp_dir "$1" --gpu "$gpu"**\n')
        found = head("musegan.train        INFO     Running evaluation\n" + line)
        assert found is not None and found.id == "launcher-sigbus" and "--shm-size" in found.fix

    def test_sibling_a_segmentation_fault_in_the_same_report(self):
        line = "./scripts/run_train.sh: line 19:   879 Segmentation fault      (core dumped) python3 train.py --gpu 0\n"
        assert head_id(line) == "launcher-sigsegv"

    def test_control_prose_that_names_a_bus_error_survived(self):
        assert healthy("with --shm-size=16g the Bus error from last week is gone: line 19 of run_train.sh now passes\n" + ENDED)


class TestLossInputTargetBatchMismatch:
    verdict = "loss-input-target-batch-mismatch"

    SIBLINGS = ["ValueError: Expected input batch_size (1216) to match target batch_size (1280)",  # gauthierdmn/question_generation#4
                'I tried to train with multi GPU but I got error "expected batch size 34 target batch size 75" when I used 2 GPU?']  # WenbinLee/DN4#15

    @pytest.mark.parametrize("line", SIBLINGS)
    def test_sibling_predictions_and_targets_of_different_counts(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "multiple of the number of GPUs" in found.fix

    # BCE's own shape check names sizes, not counts; a config echo names batch sizes and fails nothing
    @pytest.mark.parametrize("log", [TB + "ValueError: Target size (torch.Size([1, 1, 512, 512])) must be the same as input size (torch.Size([4, 1, 512, 512]))\n",
                                     "batch size 32, target batch size 64 (gradient accumulation 2)\n" + ENDED])
    def test_control_other_messages_about_sizes(self, log):
        assert head_id(log) != self.verdict
