"""Rules for classes of messages found where the error line is in the log but no pattern named it
(issue 35 items 3 and 4, the seventh round): the development parts' failed logs answered only
"unrecognised" or "an exception", sorted by the class of their failing message.

- an object or a module without the attribute the code uses, raised outside any library's frame (the
  line does not decide between a version, a build, a shadowing file and a typo: named, not claimed);
- two tensors whose shapes do not fit an operation (the data, a checkpoint or a parallel wrapper changed
  a size; the line gives the sizes, not which: named, not claimed);
- a program saying in its own error that what it was asked to do is not supported or not implemented
  (the line decides it: claimed, an error).

Their examples are real lines from the sampled threads; their counter-examples the nearest lines that mean
something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.evidence import ERROR_LEVEL
from gpudoctor.knowledge.pattern import CAUSE, pattern
from gpudoctor.knowledge.operand_types import OPERAND_SHAPES

E = Severity.ERROR
W = Severity.WARN
# the start of a Python exception's text: the class, after a prefix or a quote, with or without its module
EXCEPTION_START = r"(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*"



def attribute_names(m, _context: list[str]) -> dict:
    """What the fix names: whose attribute (an object's type, a class or a module), the attribute, and for
    a module the module and the package it belongs to (torch.distributed: torch)."""
    module = m.group("module") or ""
    return {
        "owner": m.group("owner") or m.group("cls") or module,
        "attribute": m.group("attribute") or m.group("class_attribute") or m.group("module_attribute"),
        "module": module,
        "package": module.split(".", 1)[0],
    }


PATTERNS = [
    pattern(
        "attribute-missing",
        "platform",
        CAUSE,
        W,
        "the code uses an attribute that an object or a module does not have: another version of its package, a build without it, or a file shadowing it",
        EXCEPTION_START + r"AttributeError: (?:[\"'](?!NoneType[\"'])(?P<owner>[\w.]+)[\"'] (?:object )?has no attribute '(?P<attribute>\w+)'"
        r"|module '(?P<module>[\w.]+)' has no attribute '(?P<module_attribute>\w+)'|type object '(?P<cls>[\w.]+)' has no attribute '(?P<class_attribute>\w+)')",
        ("has no attribute",),
        why="""Code asked an object or a module for a name it does not have, and no library frame raised it: the call is in
        your script or in a project's code (a cloned repository, a notebook) that uses an installed package. When the object
        or the module belongs to an installed package, that package's version is not the one the code was written for:
        a method added in a later release (the installed one is older than the code's requirements) or removed or renamed
        in the installed one. A module without a name it should have is often not the package at all: a file or a folder
        of the same name in the working directory (wandb.py, a folder named like the package) is imported instead, or the
        install is broken or half removed; or the package was built without that part: a torch without NCCL (CPU, Windows
        and macOS builds) has no ProcessGroupNCCL, a torch without distributed support none of torch.distributed's
        functions, and an extension module that did not load leaves its names missing. A model wrapped in DataParallel or
        DistributedDataParallel shows only the wrapper's attributes: its own methods are on `.module`. An object of a plain
        type (a dict, a list, argparse's Namespace) means the code got another kind of value than it reads, or a setting it
        never defined: often a bug of the package whose code makes the call, fixed in a later release. When the object is
        your own class, it is a name never set (in __init__) or misspelt. What decides it: whose the object or module is,
        whose code makes the call, and the installed versions against the ones the code requires.""",
        fix="""find the package OWNER comes from and compare its installed version with the one the calling code requires
        (`pip show PACKAGE`, the project's requirements file): install that version (`pip install "PACKAGE==VERSION"`, or `pip install -U PACKAGE` for an attribute
        added later); for a module, see what is imported: `python -c "import MODULE; print(MODULE.__file__)"`: a path in your
        working folder shadows the package (rename that file or folder), an empty or broken install needs `pip install
        --force-reinstall PACKAGE`; a torch without NCCL has no ProcessGroupNCCL: use the gloo backend there or guard the
        call on dist.is_nccl_available(); a wrapped model: model.module.ATTRIBUTE; your own class: set ATTRIBUTE before it is
        used; a package's code reading it from a plain value: upgrade that package (`pip install -U PACKAGE`) and search its
        issues for the message""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'Fabric' object has no attribute 'init_module'", "Lightning-AI/lit-llama#302 (the installed lightning predates Fabric.init_module)"),
            ("AttributeError: 'Trainer' object has no attribute 'hf_deepspeed_config_orig'", "lm-sys/FastChat#1458 (a transformers older than FastChat's code)"),
            ("AttributeError: module 'torch.distributed' has no attribute 'ProcessGroupNCCL'", "Lightning-AI/lightning-thunder#512 (a torch without NCCL in the CPU tests)"),
            ("AttributeError: module 'wandb' has no attribute 'init'", "karpathy/nanoGPT#545 (a broken or shadowed wandb import)"),
        ],
        fields=attribute_names,
        refines="library-api-mismatch",  # raised in a library's frame it is that class; elsewhere the unrecognised answer names this one
        not_examples=[
            "AttributeError: 'NoneType' object has no attribute 'get'",  # a value that is None: none-value-used
            "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'",  # the DDP wrapper: its own pattern
            "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",  # a torch without CUDA: its own pattern
            "[WARNING] AttributeError: 'Accelerator' object has no attribute 'fp8_recipe', using the defaults",
        ],
    ),
    pattern(
        "tensor-shape-mismatch",
        "platform",
        CAUSE,
        W,
        "two tensors' shapes do not fit the operation (the data, a checkpoint or a parallel wrapper changed a size)",
        EXCEPTION_START + r"(?:RuntimeError|ValueError|IndexError): (?P<message>"
        r"The size of tensor a \((?P<a>\d+)\) must match the size(?: of tensor b \((?P<b>\d+)\))?(?: at non-singleton dimension (?P<dim>\d+))?"
        r"|Sizes of tensors must match except in dimension \d+.*"
        r"|mat1 and mat2 shapes cannot be multiplied \((?P<m1>\d+x\d+) and (?P<m2>\d+x\d+)\)"
        r"|(?:stack|cat) expects (?:a non-empty TensorList|each tensor to be equal size.*)"
        r"|Expected input batch_size \((?P<input_batch>\d+)\) to match target batch_size \((?P<target_batch>\d+)\).*"
        r"|Given groups=\d+, weight of size .* expected input.*"
        # a matrix product given a vector, an indexed assignment whose sizes differ (diagC22: one class, its other words)
        r"|mat[12] must be a matrix, got \d+-D tensor|self must be a matrix"
        r"|shape mismatch: value tensor of shape \[[\d, ]*\] cannot be broadcast to indexing result of shape \[[\d, ]*\])",
        ("must match the size", "Sizes of tensors must match", "shapes cannot be multiplied", "expects a non-empty TensorList",
         "expects each tensor to be equal size", "to match target batch_size", "expected input", "must be a matrix",
         "cannot be broadcast to indexing result"),
        why="""An operation got tensors whose sizes do not fit together (an element-wise op or a loss, a concatenation, a matrix
        product, a convolution). The code is often right for the shapes it was written for, and something changed a size
        on the way: variable-length inputs not padded to one length (sequences, images, the last smaller batch); a parallel
        wrapper that splits the batch (DataParallel scatters inputs over the GPUs and gathers the outputs along dimension 0,
        so a loss or a metric computed inside the replicas, or a tensor the wrapper does not split, keeps another size); a
        size 0 in a DeepSpeed ZeRO stage 3 run, where parameters are partitioned across ranks and a parameter read outside
        the engine's forward (or a model method that reads the weights directly) is an empty placeholder; pipeline
        stages fed micro-batches of different sequence lengths; a checkpoint or a config of another model size
        (hidden size, number of classes, vocabulary); generate() with num_beams > 1, which repeats the inputs per beam
        while a tensor passed beside them keeps the batch size; or an empty list of tensors (nothing collected for the
        step). The line gives the sizes, not which of these made them.""",
        fix="""read the two sizes in the message against your batch size, sequence length and the model's config to see which
        one changed; pad every input to one length (a collator with padding, drop_last=True for the last batch); with
        DataParallel compute the loss on the gathered outputs, or use DistributedDataParallel (one process per GPU); under
        ZeRO-3 read parameters inside deepspeed.zero.GatheredParameters (or run the step through the engine); give pipeline
        stages one fixed sequence length; load a checkpoint with the config it was trained with; expand tensors passed to
        generate() per beam; check that the list is not empty before torch.stack""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: The size of tensor a (8) must match the size of tensor b (1024) at non-singleton dimension 1", "mlfoundations/open_clip#45 (DataParallel's gathered outputs)"),
            ("RuntimeError: The size of tensor a (0) must match the size", "deepspeedai/DeepSpeed#4437 (a partitioned ZeRO-3 parameter in backward)"),
            (
                "`RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 25 but got size 5 for tensor number 1 in the list.`",
                "salesforce/LAVIS#235 (generate with beams on a finetuned BLIP-2)",
            ),
            ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x2048 and 512x10)", "a head built for another feature size"),
            ("[rank3]: RuntimeError: mat2 must be a matrix, got 1-D tensor", "Edmund-a7/longlive_modify train_output.log (every rank, at one matmul)"),
            ("RuntimeError: shape mismatch: value tensor of shape [28] cannot be broadcast to indexing result of shape [0]",
             "DeepGraphLearning/torchdrug#12 (GCPN generation: an index that selected no rows)"),
        ],
        refines="python-exception",  # the unrecognised answer names it: the sizes, not what changed them
        not_examples=[
            "RuntimeError: shape '[8, 512]' is invalid for input of size 65536",
            "size mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from checkpoint",  # a checkpoint's own story
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!",
        ],
    ),
    pattern(
        "feature-not-supported",
        "platform",
        CAUSE,
        E,
        "the program says what it was asked to do is not supported or not implemented (for this model, type, policy or setup)",
        # (not Python's own type errors, whose words "not supported" and "does not support" refuse a value's type: operand-type-mismatch)
        r"^(?!.*(?i:\bwarn(?:ing)?\b|\bfalling back\b))(?!.*(?:" + OPERAND_SHAPES + r")).*?(?:"
        + EXCEPTION_START
        + r"(?P<exception>NotImplementedError|ValueError|RuntimeError|TypeError|KeyError|Exception): (?P<message>.*?\b(?:"
        r"(?:is|are) (?:currently |yet |still )?not (?:yet )?(?:supported|implemented)|(?:currently |yet )?not (?:yet )?(?:supported|implemented)"
        r"|(?:currently )?(?:does|do|did) not (?:yet )?(?:support|work (?:on|with))|doesn't (?:support|work (?:on|with)))\b.*)"
        # a bare NotImplementedError: a method its class leaves unimplemented (not the `raise` line of a traceback's source)
        r"|^(?:E\s+)?(?:[A-Za-z_]\w*\.)*(?P<bare>NotImplementedError):?\s*$"
        # a program's error-level report of a call that raised
        # (at any logger's error level: "ERROR ...", c10's "[E file.cpp:N]", a JSON record's "level": "error")
        r"|(?:\bERROR\b|" + ERROR_LEVEL.pattern + r").*?(?:Error in \w+|Exception calling application|Error \w+ing \w+): (?P<logged>.*?\bnot (?:yet )?(?:supported|implemented)\b.*))",
        ("NotImplementedError", "not supported", "not implemented", "not yet supported", "not yet implemented", "does not support", "do not support",
         "does not work on", "does not work with", "doesn't support", "doesn't work"),
        why="""The program itself refused: the path it was asked to take (a model or a policy type, a data type, a platform or a
        parallel setup, a method of a class) has no implementation in the installed version. A NotImplementedError with no
        message is a method that a base class leaves to its subclasses: the class in use (often a model's own code, loaded
        as remote code from the Hub) does not implement what the library calls on it. Nothing is broken in the machine:
        the combination asked for is outside what this version of the code supports, and the message usually names it and
        lists what is supported.""",
        fix="""choose what the message accepts (the supported types or policies it lists; one GPU where it supports no more:
        CUDA_VISIBLE_DEVICES=0), or a version of the package that supports it (its changelog or issues: search the message); a
        bare NotImplementedError: the traceback's last frames name the method and the class that lacks it: use a model or a
        class that implements it, or a version of the model's code (remote code) that does""".replace("\n        ", " "),
        examples=[
            ("ERROR 2025-08-21 19:35:25 y_server.py:245 Error in StreamActions: Currently not implemented for PI0", "huggingface/lerobot#1772 (async inference of pi0)"),
            (
                "ERROR 2025-10-29 05:30:24 /_server.py:636 Exception calling application: Policy type groot not supported. Supported policies: ['act', 'smolvla', 'diffusion', 'tdmpc', 'vqbet', 'pi0', 'pi05']",
                "huggingface/lerobot#2338",
            ),
            ("E           TypeError: tree_flatten of type <class 'torch.SymInt'> is not supported.", "Lightning-AI/lightning-thunder#2085 (a ThunderFX and PyTorch mismatch)"),
            ("NotImplementedError", "yangjianxin1/Firefly#59 (Baichuan-13B's remote code has no get_input_embeddings)"),
        ],
        not_examples=[
            "UserWarning: fused=True is not supported with foreach=True; falling back to the for-loop implementation",
            "Sliding Window Attention is enabled but not implemented for `sdpa`; unexpected results may be encountered.",
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            "[rank0]: ValueError: ``minimize_all_reduces`` is not supported without FSDP",  # a setting in a combination: settings-combination-refused
            "    raise NotImplementedError",  # the raise statement in a traceback's source line
        ],
    ),
    pattern(
        "library-lookup-failed",
        "platform",
        CAUSE,
        W,
        "a library's own lookup failed: an index or a key it expected is not in what it was given (an input it does not handle, or its bug)",
        EXCEPTION_START + r"(?P<exception>IndexError|KeyError): (?P<message>.+)",
        ("IndexError: ", "KeyError: "),
        why="""A library indexed a list, an array or a mapping that it built from what it was given (the model, its outputs,
        the data, the configuration) and the entry it expected is not there; its own frame raised it, not your code. Usually
        the input is one that this code path does not handle: a model architecture that it knows only some of (an inference
        engine or a fused path written for a few model types), a model whose outputs hold no key it reads (no 'loss' when the
        model is not made for that trainer or no labels were passed), a dataset, a shard list or a batch smaller than the
        ranks and workers it is split over (one split is empty), a configuration entry of another version; or it is a bug of
        that library, fixed in a later release. The key or the index in the message, the library's frame and your call into
        it say which.""",
        fix="""read the key or the index the message names against what your code passes at its last frame in the traceback: a model
        type or an option the library does not list as supported: use one it supports or turn the option off; a missing output
        key ('loss'): pass what produces it (labels) or use a model made for that trainer; an index past the end of a split:
        fewer data-loader workers or ranks, or more samples per dataset; otherwise upgrade the library whose frame raised it
        (`pip install -U PACKAGE`) and search its issues for the message""".replace("\n        ", " "),
        examples=[
            ("KeyError: 'loss'", "huggingface/transformers#12908 (Transformer-XL's outputs have no loss for the Trainer)"),
            ("IndexError: index 2 is out of bounds for axis 0 with size 2", "NVIDIA/Megatron-Energon#145 (a small dataset split over more workers than it has shards)"),
            ("IndexError: list index out of range", "deepspeedai/DeepSpeedExamples#456 (the hybrid engine has no containers for this model)"),
            ("IndexError: pop from an empty deque", "huggingface/trl#1543 (ZeRO-3's parameter coordinator after its hooks were removed)"),
        ],
        refines="python-exception",  # named only when a library's frame raised it (knowledge/unrecognised.py): in your code it is yours
        not_examples=["KeyError: 'MASTER_ADDR'", "[WARNING] KeyError: 'eval_loss' not in the metrics, skipping early stopping"],
    ),
]
