"""What a training run's own progress lines show when it fails without an exception.

A run whose loss turned NaN or Inf goes on printing steps (nothing raises), so no traceback or exit marks the
failure: the step lines themselves do. Its examples are real progress lines of the common trainers (nanoGPT's
"iter N: loss nan", the Hugging Face Trainer's dict, a progress bar's postfix); its counter-examples are the
nearest lines that mean something else (a finite loss, an option or counter named after NaN, the fp16 loss
scaler skipping a step, which is how mixed precision handles an overflow).
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern

E = Severity.ERROR

LOSS_NOT_FINITE = "loss-not-finite"

PATTERNS = [
    pattern(
        LOSS_NOT_FINITE,
        "cuda",
        CAUSE,
        E,
        "the training loss turned NaN / Inf: the run goes on but no longer learns",
        # "loss nan", "loss: nan", "'loss': nan", "loss=inf", "train_loss = -nan", "loss tensor(nan": the value
        # right after the word loss (not loss_scale, not a counter named nan_*)
        r"\b(?P<metric>(?:train|training|val|valid|eval|test|total)?[_ ]?loss)\b['\"]?\s*(?:[:=]\s*|\s)(?:tensor\()?(?P<value>[-+]?(?i:nan|inf)(?:inity)?)\b(?![_.]\w)",
        ("loss nan", "loss: nan", "loss=nan", "loss = nan", "loss': nan", 'loss": nan', "loss inf", "loss: inf", "loss=inf",
         "loss = inf", "loss': inf", "loss: -nan", "loss tensor(nan", "Loss: nan", "Loss nan", "Loss: inf"),
        why="""A step's loss is NaN or Inf, and once the weights hold NaN every later step gives NaN: the run goes on
        printing steps but no longer learns. Usually the forward pass overflowed (float16's range ends at 65504:
        float16 on a GPU without bfloat16, such as a V100 or a T4, or without a gradient scaler), the learning rate is
        too high for the model (a divergence, often right after warm-up or a resume), a batch holds bad values
        (nan or inf in the inputs or labels, log(0), a division by zero), or the gradients exploded without clipping.""",
        fix="""find the first step whose loss is nan and what changed there; train in bfloat16 (dtype=bfloat16 / --bf16) or
        float32 instead of float16, or keep float16 with torch.amp.GradScaler; lower the learning rate or lengthen the
        warm-up; clip gradients (torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)); check the batch
        (torch.isfinite(x).all()); torch.autograd.set_detect_anomaly(True) names the op that first returned nan; resume
        from the last checkpoint before it""".replace("\n        ", " "),
        examples=[
            ("2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%", "karpathy/nanoGPT#215 (float16 on a V100)"),
            ("{'loss': nan, 'learning_rate': 1.9e-05, 'epoch': 0.12}", "Hugging Face Trainer's log line (huggingface/transformers#14189)"),
            ("Epoch 3:  41%|████      | 410/1000 [02:11<03:09,  3.11it/s, loss=nan, v_num=0]", "Lightning's progress bar"),
            ("step 1200 | train_loss = inf | lr 3.0e-04", "a custom trainer's step line"),
        ],
        not_examples=[
            "2023-03-22 09:30:39 iter 2920: loss 3.9883, time 1099.34ms, mfu 15.34%",
            "skip_nan_loss=True, loss: 2.31",
            "loss: nan_count=0 inf_count=0",
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
            "loss_scale: inf",
        ],
    ),
]
