"""Rules for classes of messages of the twelfth round (issue 35, diagA12): the partly and honest answers on the retired
held-out part heldout11 (its entries 1..57), sorted by the class of their failing message.

- torch 1.6's NCCL process group refusing an all_gather whose output tensors are not of the input's shape ("All tensor
  operands to scatter/gather must have the same size"): what apex's SyncBatchNorm does on torch 1.6;
- DataParallel gathering (or scattering) a value that is not a tensor: a Python number among a replica's outputs makes
  its gather zip a number ("zip argument #1 must support iteration" raised in scatter_gather.py; decided by the traceback's
  frame, knowledge/story.py, never by the line, which any zip() of a non-iterable prints);
- a module's forward() called without inputs it requires: under DataParallel, a GPU whose share of the batch is empty
  (a batch smaller than the number of GPUs, keyword arguments given) gets none;
- a loss given predictions for N examples and targets for M ("Expected input batch_size (N) to match target batch_size (M)"):
  the model's output is not one row per target (a reshape, a config for another layout, a batch split over GPUs);
- TensorFlow's input queue closed with nothing in it (OutOfRangeError ... current size 0): the input pipeline read no
  example (no file found, an empty list file);
- Caffe's data layer reading a list of 0 images or videos (Caffe then crashes in the layer's set-up);
- TensorFlow Federated's refusal of a dataset reduce in a multi-GPU simulation: the message names its remedy.

Their examples are real lines from the sampled threads (thread in the source); their counter-examples the nearest
lines that mean something else.
"""

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# DataParallel's own scatter and gather (torch/nn/parallel/scatter_gather.py): gather_map joins the replicas' outputs, scatter_map
# splits the inputs; both recurse into lists, tuples and dicts with zip() and stop at tensors
SCATTER_GATHER = re.compile(r"nn[/\\]parallel[/\\]scatter_gather\.py$")
# zip() refusing a value that is not iterable: Python up to 3.9 says "zip argument #1 must support iteration", 3.10 on
# "'int' object is not iterable"
NOT_ITERABLE = re.compile(r"zip argument #\d+ must support iteration|'\w+' object is not iterable")


def parallel_non_tensor(sign, exception: str = "", message: str = "") -> dict:
    """The evidence of DataParallel joining or splitting a value that is not a tensor: a TypeError of zip() raised in
    scatter_gather.py's own gather_map or scatter_map, {} for any other exception or frame."""
    if sign is None or sign.kind != "exception" or sign.cut:
        return {}
    last = sign.raised_in()
    if last is None or sign.what.rsplit(".", 1)[-1] != "TypeError" or not SCATTER_GATHER.search(last.path):
        return {}
    if last.func not in ("gather_map", "scatter_map") or not NOT_ITERABLE.match(sign.message):
        return {}
    step = "gather" if last.func == "gather_map" else "scatter"
    return {"exception": sign.what, "message": sign.message[:200], "raised_in": f"{last.path}:{last.line} in {last.func}", "step": step}


def forward_missing_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    names = re.sub(r"['\"]", "", out.get("args", "")).strip().rstrip(".")
    out["args"] = names
    return out


PATTERNS_EARLY = [
    pattern(
        "all-gather-shapes-refused",
        "ddp",
        CAUSE,
        E,
        "an all_gather (or reduce_scatter) was refused: its output tensors are not of the input's shape; torch 1.6's NCCL check, which apex's SyncBatchNorm fails",
        # c10d's ProcessGroupNCCL flatten_for_scatter_gather compared sizes() up to torch 1.6 and numel() after
        # (pytorch/pytorch#40573, "to workaround apex sbn bug"); its later wording says "same number of elements"
        r"All tensor operands to scatter/gather must have the same size",
        ("tensor operands to scatter/gather",),
        why="""torch.distributed.all_gather(outputs, tensor) with the NCCL backend copies every rank's tensor into one flat buffer
        and checks that each output tensor matches the input. Up to torch 1.6 that check compared shapes, so output tensors of
        another shape with the same number of elements were refused. apex's SyncBatchNorm (apex.parallel.SyncBatchNorm,
        convert_syncbn_model) gathers its statistics exactly that way: with torch 1.6 it fails on every multi-GPU run, while
        one GPU (nothing gathered), torch 1.5 or older with an older apex, and torch 1.7 or newer (which compares only element
        counts) run. Without apex in the traceback, the program's own all_gather or reduce_scatter was given output tensors of
        another shape than its input.""",
        fix="""use torch's own SyncBatchNorm instead of apex's (model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model), with
        DistributedDataParallel), or change the torch version: the torch and apex pair the project's install guide names
        (pip show torch apex), or torch 1.7 or newer; for the program's own all_gather: allocate the outputs with the input's shape
        ([torch.empty_like(tensor) for _ in range(world_size)])""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: All tensor operands to scatter/gather must have the same size",
             "rwightman/efficientdet-pytorch#69 (torch 1.6 with apex SyncBatchNorm: 'No such issues with PyTorch 1.4 or 1.5.x')"),
            ('it seames that there are two key problems: "RuntimeError: All tensor operands to scatter/gather must have the same size" and "subprocess.CalledProcessError: Command \'[\'python\', \'-u\', \'./tools/train.py\', \'--local_rank=1\']\' returned non-zero exit status 1.',
             "tianweiy/CenterPoint#57 (torch 1.6 with apex; the maintainer runs torch 1.1)"),
            ("RuntimeError: All tensor operands to scatter/gather must have the same size", "hszhao/semseg#58 (the pytorch 1.6.0 docker image)"),
        ],
        not_examples=[
            "RuntimeError: Gather got an input of invalid size: got [16, 24, 9490], but expected [16, 16, 9490]",  # DataParallel's gather
            "RuntimeError: Expected tensor [32, 1], src [128, 5] and index [32, 1] to have the same size apart from dimension 1",  # torch.gather
        ],
        fields=groups,
    ),
]


PATTERNS = [
    pattern(
        "forward-missing-inputs",
        "ddp",
        CAUSE,
        E,
        "a module's forward() was called without inputs it requires: under DataParallel, a GPU whose share of the batch is empty (a batch smaller than the number of GPUs) gets none",
        r"forward\(\) missing (?P<count>\d+) required positional arguments?:? ?(?P<args>(?:'\w+'(?:,? (?:and )?)?)*)",
        ("required positional argument",),
        why="""nn.DataParallel splits each batch along dim 0 into one share per GPU and calls a replica of the module on each;
        keyword arguments are copied to every GPU. When the batch has fewer examples than there are GPUs (a batch size of 1
        on 2 GPUs, the last, smaller batch of an epoch, a batch size not divisible by the GPU count), the last GPUs get no
        share: their replica is called with the keyword arguments only, and forward() misses the positional inputs. It
        fails only with several GPUs, and often only at an epoch's last batch or in evaluation. On one GPU, the call itself
        passes fewer inputs than forward() takes (the code written for another version of the module or of the library
        that calls it).""",
        fix="""with several GPUs: make the batch size at least, and a multiple of, the number of GPUs, and pass drop_last=True to
        the DataLoader (CUDA_VISIBLE_DEVICES=0 to confirm: on one GPU it runs), or pass the inputs positionally so no replica
        gets keyword arguments alone, or train with DistributedDataParallel (torchrun); on one GPU: compare the call with
        forward()'s signature (the inputs the message names)""".replace("\n        ", " "),
        examples=[
            ("The error is : TypeError: forward() missing 2 required positional arguments: 'image1' and 'image2'",
             "princeton-vl/RAFT#139 (a commenter: the batch size not divisible by the GPUs)"),
            ("TypeError: forward() missing 1 required positional argument: 'x'", "Nanne/pytorch-NetVlad#13 (8 GPUs, --batchSize=1 fails, 2 or 8 work)"),
            ('if the batchsize is set to 1, "TypeError: forward() missing 2 required positional arguments: \'x_left\' and \'x_right\'".',
             "SYSU-SAIL/PAM#3 (two GPUs; the maintainer: use one GPU for a batch size of 1)"),
            ("run_classifier.py:TypeError: forward() missing 1 required positional argument: 'input_ids'",
             "huggingface/transformers#632 ('batch_size is less than the number of GPU ... model on extra gpu just get an empty input')"),
        ],
        not_examples=[
            "TypeError: forward() got an unexpected keyword argument 'labels'",
            "TypeError: __init__() missing 1 required positional argument: 'config'",
        ],
        fields=forward_missing_fields,  # the inputs missed, as evidence
    ),
    pattern(
        "loss-input-target-batch-mismatch",
        "numerics",
        CAUSE,
        E,
        "the loss got predictions for one number of examples and targets for another: the model's output is not one row per target",
        # torch's nll_loss / cross_entropy check (torch/nn/functional.py); the words as people retell them too ("expected batch size 34
        # target batch size 75")
        r"[Ee]xpected (?:input )?batch[_ ]size \(?(?P<input>\d+)\)?,? (?:to match )?target batch[_ ]size \(?(?P<target>\d+)\)?",
        ("atch_size (", "atch size"),
        why="""cross_entropy and nll_loss take predictions of shape [N, classes] (or [N, classes, ...]) and N targets. Here the
        predictions' first dimension is another number than the targets'. A ratio between them points at a reshape: a
        view(-1, X) whose X is not the class count folds the other dimensions into the batch (the input a multiple of the
        target), or a sequence model's [batch, length, classes] flattened against targets of another length; a model built
        for another dataset's layout (a class count or a number of inputs per example in the config) does the same. Under
        nn.DataParallel each GPU's replica sees only its share of the batch, so a model that reshapes with the batch size of
        the config (an episode or group size) rather than the tensor's own gives rows that do not match the targets, with
        several GPUs only.""",
        fix="""print the predictions' and the targets' shapes just before the loss; reshape with the tensor's own sizes (x.view(x.size(0),
        -1), logits.view(-1, num_classes) with targets.view(-1)) and set the config's class count or layout to the data's;
        with several GPUs (DataParallel): make the batch (and any episode or group size the model reshapes with) a multiple
        of the number of GPUs, or confirm on one GPU (CUDA_VISIBLE_DEVICES=0)""".replace("\n        ", " "),
        examples=[
            ("ValueError: Expected input batch_size (1216) to match target batch_size (1280)",
             "gauthierdmn/question_generation#4 (pred.view(-1, pred.size(2)) against question.view(-1) of another length)"),
            ("ValueError: Expected input batch_size (128) to match target batch_size (64)", "qijiezhao/pseudo-3d-pytorch#28 (a view(-1, ...) that folds the frames into the batch)"),
            ('I tried to train with multi GPU but I got error "expected batch size 34 target batch size 75" when I used 2 GPU?',
             "WenbinLee/DN4#15 (the episode size must be a multiple of the GPUs)"),
            ("ValueError: Expected input batch_size (1324) to match target batch_size (0).", "Google-Health/medgemma#12 (multi-GPU; one GPU ran)"),
        ],
        not_examples=[
            "ValueError: Target size (torch.Size([1, 1, 512, 512])) must be the same as input size (torch.Size([4, 1, 512, 512]))",
            "batch size 32, target batch size 64 (gradient accumulation 2)",
        ],
        fields=groups,
    ),
    pattern(
        "tf-input-queue-empty",
        "dataloader",
        CAUSE,
        E,
        "TensorFlow's input queue was closed with nothing in it: the input pipeline read no example, an empty dataset (no input file found, an empty file list, or every record failed)",
        # only the raised error (an OutOfRangeError that stopped the program) with an empty queue: the op kernel's W line
        # "Out of range: ... current size 0" is also printed at the normal end of an input limited by num_epochs
        r"OutOfRangeError(?: \(see above for traceback\))?: (?P<queue>\w*Queue) '(?P<name>[^']*)' is closed and has insufficient elements \(requested (?P<requested>\d+), current size 0\)",
        ("is closed and has insufficient elements",),
        why="""TF1's queue-based input (tf.train.shuffle_batch, batch, string_input_producer) fills a queue from reader threads and
        the training step dequeues a batch from it. The queue is closed when its readers have nothing more to give; closed
        with 0 elements at the first step means nothing was ever read: the file pattern or list file (train.txt, a
        filenames file) matched or named no file, the paths in it are relative to another folder, or every record failed to
        decode (its reader thread's error, printed earlier, says why). At the end of a run limited by num_epochs the same
        error is the loop's end-of-data signal, which a training loop catches (coord.should_stop); uncaught after many steps,
        it is that end.""",
        fix="""check the input the pipeline reads: the list or pattern the program is given (--data_dir, train.txt) exists and names
        files that exist, with paths the program resolves from where it runs (ls the first few; wc -l the list); generate
        the list the project's README describes before training; an error of a reader thread earlier in the log names the
        file it failed on""".replace("\n        ", " "),
        examples=[
            ("tensorflow.python.framework.errors_impl.OutOfRangeError: RandomShuffleQueue '_2_data_loading/batching/shuffle_batch/random_shuffle_queue' is closed and has insufficient elements (requested 1, current size 0)",
             "ferdyandannes/Struct2depth-Training#1 (the thread: generating train.txt)"),
            ("OutOfRangeError (see above for traceback): RandomShuffleQueue '_2_shuffle_batch/random_shuffle_queue' is closed and has insufficient elements (requested 1, current size 0)",
             "4Catalyzer/cyclegan#4 (training quits at its start)"),
        ],
        not_examples=[
            # the op kernel's warning at the normal end of an input limited by num_epochs
            "W tensorflow/core/framework/op_kernel.cc:993] Out of range: FIFOQueue '_1_batch/fifo_queue' is closed and has insufficient elements (requested 32, current size 0)",
            "OutOfRangeError: FIFOQueue '_1_batch/fifo_queue' is closed and has insufficient elements (requested 32, current size 7)",
        ],
        fields=groups,
    ),
    pattern(
        "caffe-data-list-empty",
        "dataloader",
        CAUSE,
        E,
        "Caffe's data layer read a list of 0 images (or videos): the list file it was given names nothing it could read, so the net has no data (Caffe then crashes in the layer's set-up)",
        # glog's INFO line of image_data_layer.cpp, video_data_layer.cpp (temporal-segment-networks), convert_imageset.cpp, as the
        # reader leaves it (glog's prefix, "I1208 17:04:47.734378 19977 video_data_layer.cpp:50] ", is taken off): the whole line
        r"^A total of 0 (?P<what>images|videos)\.?$",
        ("A total of 0",),
        why="""An ImageData or VideoData layer (and convert_imageset) reads its `source` file, one "path label" line per example, and
        logs how many it read. 0 means the file is missing, empty, or in another format than the layer reads (a path without
        its label, a file written on Windows), and older Caffe layers do not stop there: they index the empty list and
        crash with a segmentation fault in DataLayerSetUp, the crash the log then shows. The crash is this empty list's
        consequence, not a fault of Caffe's build.""",
        fix="""check the layer's source file (image_data_param / video_data_param source in the prototxt, or the list given to
        convert_imageset): it exists at that path from where caffe runs, is not empty, and each line is "path label"
        (space-separated, paths relative to root_folder); regenerate it with the project's list-building script""".replace("\n        ", " "),
        examples=[
            ("I1208 17:04:47.734378 19977 video_data_layer.cpp:50] A total of 0 videos.",
             "yjxiong/temporal-segment-networks#166 (the maintainer: 'check you video list file'; SIGSEGV in VideoDataLayer after it)"),
            ("I0928 18:48:31.454818 16635 image_data_layer.cpp:45] A total of 0 images.", "BVLC/caffe#1174 (Segmentation fault after it)"),
            ("I1008 09:45:36.601533  4007 image_data_layer.cpp:51] A total of 0 images.",
             "VisionLearningGroup/Ask_Attend_and_Answer#7 (SIGSEGV in ImageDataLayer<>::DataLayerSetUp)"),
            ("I0830 11:16:13.190182 16727 convert_imageset.cpp:89] A total of 0 images.", "BVLC/caffe#1476"),
        ],
        not_examples=[
            "I0518 22:09:32.294107 2695928 convert_imageset.cpp:89] A total of 17493 images.",
            "I1208 17:04:47.734378 19977 video_data_layer.cpp:50] A total of 10 videos.",
        ],
        fields=groups,
    ),
    pattern(
        "tff-dataset-reduce-multi-gpu",
        "platform",
        CAUSE,
        E,
        "TensorFlow Federated refused a dataset reduce in a multi-GPU simulation: a federated computation still iterates its client data with dataset.reduce",
        r"Detected dataset reduce op in multi-GPU TFF simulation",
        ("dataset reduce op in multi-GPU",),
        why="""In a simulation over several GPUs TFF places each client's work on a GPU and cannot run a tf.data reduce there, so it
        stops at the first computation that still iterates a dataset with reduce. The tff.learning builders iterate client
        data with reduce unless told otherwise, each on its own: the training process built with
        use_experimental_simulation_loop=True can still be followed by an evaluation computation
        (tff.learning.build_federated_evaluation) built without it. The message names the remedy.""",
        fix="""as the message says: pass use_experimental_simulation_loop=True to every tff.learning builder that runs on client data
        (the training process and build_federated_evaluation alike), and iterate your own datasets with `for ... in
        iter(dataset)`; if every builder has it, the code that runs is not the code edited (an older copy on the path)""".replace("\n        ", " "),
        examples=[
            ("ValueError: Detected dataset reduce op in multi-GPU TFF simulation: `use_experimental_simulation_loop=True` for `tff.learning`; or use `for ... in iter(dataset)` for your own dataset iteration.Reduce op will be functional after b/159180073.",
             "google-research/federated#32 (the remaining reduce was build_federated_evaluation's)"),
            ("ValueError: Detected dataset reduce op in multi-GPU TFF simulation: `use_experimental_simulation_loop=True` for `tff.learning`; or use `for ... in iter(dataset)` for your own dataset iteration.Reduce op will be functional after b/159180073.",
             "google-parfait/tensorflow-federated#1358 (a stale copy of the code was running)"),
        ],
        not_examples=[
            "Detected 2 GPUs for the TFF simulation: /device:GPU:0, /device:GPU:1",
        ],
        fields=groups,
    ),
]


PATTERNS_BY_FRAME = [
    pattern(
        "dataparallel-non-tensor-output",
        "ddp",
        CAUSE,
        E,
        "DataParallel could not join its replicas' outputs (or split its inputs): one of them is a Python number or another value that is not a tensor",
        # the exception's line (python-exception claims it); the traceback's innermost frame, scatter_gather.py's own gather_map or
        # scatter_map, decides it (knowledge/story.py): any zip() of a non-iterable prints the same line
        NOT_ITERABLE.pattern,
        ("must support iteration", "object is not iterable"),
        why="""nn.DataParallel joins what its replicas return by walking it: tensors are concatenated across GPUs, lists, tuples and
        dicts are walked into with zip(), one element per replica. A value that is neither (an int, a float or a bool the
        forward returns beside its tensors, such as an index, a count or a flag) cannot be walked into, and zip() refuses it;
        the inputs are split the same way. With one GPU nothing is joined, so the same code runs.""",
        fix="""make forward() return only tensors (and lists, tuples or dicts of tensors) under DataParallel: turn a number into a
        tensor (torch.tensor(x, device=out.device)) or compute it outside the wrapped module; or train with
        DistributedDataParallel (torchrun, one process per GPU), which joins no outputs""".replace("\n        ", " "),
        examples=[
            ("TypeError: zip argument #1 must support iteration", "odegeasslbc/FastGAN-pytorch#8 (the discriminator returns an int part index beside its tensors)"),
            ("TypeError: zip argument #1 must support iteration", "xingyizhou/CenterNet#403 (gather_map in the project's DataParallel)"),
            ("TypeError: zip argument #1 must support iteration", "pytorch/pytorch#94699 (a model under the Trainer's DataParallel)"),
        ],
        # the same line raised elsewhere (the program's own zip of a non-iterable) is not this class: the frame decides
        not_examples=["TypeError: zip() takes no keyword arguments", "TypeError: 'int' object is not subscriptable"],
        refines="python-exception",
    ),
]


def by_frame(sign, exception: str = "", message: str = "") -> Optional[tuple[str, dict]]:
    """The class an unrecognised exception's traceback decides (knowledge/story.py): the finding id and its evidence."""
    said = parallel_non_tensor(sign, exception, message)
    return ("dataparallel-non-tensor-output", said) if said else None
