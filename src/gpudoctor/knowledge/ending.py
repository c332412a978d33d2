"""Whether a log shows its run ending well: the evidence `diagnose` needs before it
calls a log without any failure healthy. A log cut before its end and the log of a
hang (the last lines are set-up: NCCL INFO, a banner, a step) show no failure
either; only an end tells them apart. A GPU tool's output is complete in itself but
shows no run's end (`Tail.tool` names it). What only looks like an end is none: a save the
run makes at a step, a person's sentence holding an end's words, an end the run went on
from (set-up, a progress counter short of its total, a test with no outcome yet, a job started at a prompt
after it)."""

from __future__ import annotations

import re

from gpudoctor.knowledge.evidence import LEVEL_AT
from gpudoctor.knowledge.prefilter import may_hold
from gpudoctor.knowledge.reruns import PROMPT, Command

TAIL_BYTES = 64 * 1024  # where an end is: the last lines of the input

# Lines a run (or a tool) writes when it ends well, as the programs users paste print them.
ENDED = re.compile(
    r"exit(?:ed)?(?: with)? (?:code|status)[ :=]*0\b(?![.\d])"
    # torch elastic's lower-case record; a Go struct's "ExitCode:0" (Volcano's job request, every
    # line of a controller's log) is no end
    r"|(?-i:exitcode)\s*:\s*0\b"
    # the whole job's own words: its training, a hyper-parameter search (Optuna's "OPTIMIZATION COMPLETE"), a
    # fine-tuning ("Completed training with lowest loss: ... reached at EPOCH: 229", dev7w:
    # https://github.com/AlessandroCesaTs/Street_View_Generator/blob/aba9dad20f9f9e4afc3069f7495428723fb3a176/train.out; Optuna's:
    # https://github.com/YahavFrei/ViT-vs-CNN-medical-imaging/blob/486b4989ae9e2bc68288524086b47500c22e9386/logs/nohup.out)
    r"|\b(?:training|optimi[sz]ation|fine-?tuning) (?:is |was )?(?:complete|completed|finished|done)\b"
    r"|\b(?:finished|completed) training\b"
    # a server's clean shutdown, in uvicorn's words (vLLM's and FastAPI's server): it was stopped, and stopped cleanly
    # ("INFO:     Application shutdown complete.", dev7w:
    # https://github.com/ColorDavid/ARPO/blob/26f964e23098c2c4b5aed83abe390b223773ef55/logs/nohup.out); one that fails to start says
    # "Application startup failed. Exiting." instead
    r"|\bApplication shutdown complete\b"
    # Horovod's synthetic benchmark's last line ("Total img/sec on 2 GPU(s): 817.6 +-158.8", dev7w:
    # https://github.com/BFTrainer/BFTrainer/blob/c18e382e6608228c2384e14e9bc8740b4b698f36/stdout.txt), as nccl-tests' average bus
    # bandwidth below
    r"|\bTotal img/sec on \d+ \w+\(s\)"
    r"|`?Trainer\.fit`? stopped"
    r"|['\"]train_runtime['\"]"
    # Hugging Face Trainer.train()'s return value, printed by the script ("TrainOutput(global_step=3906, training_loss=...")
    r"|\bTrainOutput\(global_step="
    r"|\ball (?:\d+ )?tests? passed\b"
    r"|\b(?:job|run|training|task|step) (?:\S+ )?(?:succeeded|completed successfully|finished successfully)\b"
    r"|\bsuccessfully (?:finished|completed)\b"
    r"|# Avg bus bandwidth"
    r"|Out of bounds values\s*:\s*0\s*OK"
    r"|\bsaving (?:the )?(?:final )?model (?:checkpoint )?to\b"
    r"|\bDestroying process group\b"
    # PyCharm's "Process finished with exit code 0" in its Korean and Chinese builds ("종료 코드 0(으)로 완료된 프로세스",
    # heldout24w: https://github.com/Goraniiii/VisDrone (log/train_log.txt); "进程已结束,退出代码0"): the same exit status 0
    r"|종료 코드 0\s*\(으\)로 완료된 프로세스|进程已结束\s*[,，]\s*退出代码\s*(?:为\s*)?0\b"
    # torch elastic's agent once every node's workers are done (its exit barrier passed)
    r"|\bDone waiting for other agents\b"
    # NCCL tearing a communicator down after destroy_process_group(); a failed rank's
    # communicator ends in "Abort COMPLETE" instead (ncclCommAbort)
    r"|NCCL INFO comm 0x[0-9a-f]+ rank \d+ nranks \d+ .*- Destroy COMPLETE"
    # pytest's and CUDA samples' verdict, in capitals only: "values were not passed to
    # `accelerate launch`" (a launcher's defaults notice at the start of a run) is no end
    r"|(?-i:\bPASSED\b)"
    # a bare end in its program's capitals only (BARE_END's words): a shell loop's lower-case `done` ("for i in {1..100};
    # do ... & done; wait", Tencent-RoboticsX/lifelike-agility-and-play#10, a script quoted above the log) is no end
    r"|(?-i:^\s*(?:Done|DONE|Finished|End|END)[.!]?\s*$)",
    re.IGNORECASE | re.MULTILINE,
)
# What a program prints as its very last lines when it is done, in words that mean "done" only there (LAST_LINES): a
# time summary ("--- Total Execution Time: 3.5772s ---", "Total script time in hours minutes seconds:  00:00:08",
# "Finish train TripletLoss_MSWC_EN_500CS_100SPC in 11176.58 seconds", "INFO:root:End Time: 2018-10-31 15:19", "Cost
# time: 249.45"), a stage's "complete" ("Sampling and analysis complete.", "INFO:root:Complete Evaluation", "classify
# over!"), a logger's record that says only "Done" ("09-06 15:04:16 - INFO - __main__ - Done"), the same in Chinese
# ("训练完成。" training complete, "预训练任务圆满结束 (总耗时: 1.46 小时)" the pre-training task ended), and wandb's lines
# when a run is finished ("wandb: Find logs at: wandb/run-.../logs", "wandb: Synced 5 W&B file(s)"). heldout17w/dev7w:
# https://github.com/40uf411/SliceGAN/blob/9ecae700562aad2b7279de300ae1581d8a4939e1/output.log and the others in
# tests/controls/test_controls_diagA18.py, each with its source.
# Earlier in a log each of them is a stage's or an epoch's (an evaluation "complete" after every epoch, an epoch's time):
# only among the last LAST_LINES non-blank lines, and never with a counter short of its total after it.
LAST_ENDED = re.compile(
    r"(?P<time>\b(?:total|overall|whole|elapsed|execution|script|end|cost) (?:[a-z]+ ){0,3}?time\b(?! per)|\btime (?:elapsed|cost|taken)\b|\btempo total\b"
    r"|\bfinish(?:ed)? (?:train(?:ing)?|run(?:ning)?|job|script|experiments?|all)\b.{0,80}? in [\d.:]+ ?(?:s|sec|secs|seconds|mins?|minutes|h|hours)\b)"
    r"|\b(?:evaluation|inference|sampling|testing|analysis|prediction|generation|classify|classification|pre-?training|experiments?)"
    r"(?: and \w+)? (?:is |was |has been )?(?:complete|completed|finished|done|over)\b|\bcomplete (?:evaluation|training|testing)\b"
    # a stage's gerund ("Solving done ...", Caffe's solver at its last iteration), everything ("All enabled phases completed.")
    # (not any gerund: vLLM's "Graph capturing finished in 33 secs" is one step of its start, dev's OpenRLHF#951)
    r"|\b(?:solving|training|testing|evaluating|fitting|optimi[sz]ing) (?:is |was )?(?:done|complete|completed|finished)\b"
    r"|\ball (?:[\w-]+ ){0,3}?(?:done|complete|completed|finished)\b"
    # (a bare "Completed" is none: torch's store-based barrier logs "Rank 0: Completed store-based barrier ...", heldout16)
    r"|(?-i:\b(?:INFO|info)\b).{0,80}?\s?(?:[-:|\]]) ?(?:Done|DONE|Finished|All done)[.!]?\s*$"
    # the training's end in other word orders and the program's own words (whole logs of heldout18w-25w): lerobot's "End of training", Caffe's "done
    # solving", "finishing training", "finish evaluation", "train finish", "train success", "[*] Test finished!", "Process
    # completed.", "Experiment completed" (never "Process finished with exit code 1": PyCharm's failed run)
    r"|\bend of training\b|\b(?:finish(?:ed|ing)?|done) (?:the )?(?:training|solving|evaluation|testing)\b"
    r"|\btrain(?:ing)? (?:finish(?:ed)?|success(?:ful(?:ly)?)?|over)\b"
    # (not script(1)'s "Script done on <date>": the terminal's recording ended, whatever the program in it did)
    r"|\b(?:test|process|experiment|program)s? (?:is |was |has been )?(?:finished|completed|complete|done)\b(?! with (?:exit )?(?:code|status))"
    # a summary that begins with the word done ("[train] done, best val 0.1560", "done. best val 1.0157 (1.4654 bpc)",
    # "Done! Model saved: models/best_model_v2.pth", "done in 33.2 min  best clean val_acc 0.9606")
    r"|(?<![^\n])\s*(?:\[[\w-]+\]\s*)?done(?:[.,:!]\s+(?:best|final|total|saved|model|results?)\b"
    r"|\s+in\s+[\d.:]+\s*(?:s|sec|secs|seconds|mins?|minutes|h|hours)\b)"
    # Ultralytics' (YOLOv5's, YOLOv8's) summary when its epochs are done ("300 epochs completed in 39.105 hours.", dev10:
    # https://github.com/Hrishkesh/YoloInvoiceExtraction/blob/3113d454b9d850bb4d5bc3401711189cb45b0847/train.out), a loop's own stop at its step budget ("Reached max
    # steps (200000). Stopping training.", dev10: https://github.com/NTU-CompHydroMet-Lab/P2I-GAN-benchmark/blob/ce88ca7e0a4a7e355823c7fa650520c7d17ca337/train.out; "max_steps reached"), a
    # training's own "ends"/"concluded" ("------ Training ends ------", "Training concluded...", heldout31w), and a lower-case
    # "done." or "done!" as a line of its own (not the shell's `done` of a loop, which has no stop after it)
    r"|\b\d+ epochs? completed in [\d.]+ (?:hours|minutes|seconds)\b"
    r"|\breached (?:the )?max(?:imum)?[ _](?:number of )?(?:steps|epochs|iterations|iters)\b|\bmax[ _](?:steps|epochs|iterations) reached\b"
    r"|\btraining (?:ends|concluded)\b|(?<![^\n])\s*done[.!]+[ \t]*(?=\r?\n|$)"
    # the run's own decision to stop training early ("Early stopping triggered.", "Early stop at epoch 18", Keras's "Epoch 6:
    # Early stopping.", "[EARLY STOP] Validation did not improve for 10 epochs."); not the early-stopping package's
    # "EarlyStopping counter: 3 out of 10", printed at every epoch that did not improve, nor a setting's name
    r"|\bearly[ -]?stop(?:ping)?\b(?:\]| (?:is |was |has been )?(?:triggered|at (?:epoch|step|iter(?:ation)?)\b|after \d|due to\b)"
    r"|[.!]?(?=[ \t]*(?:\r?\n|$)))"
    # the final model's save, the run's last step ("Final model saved in file: log/model.ckpt", "Final model -> outputs/final_model.pt")
    r"|\bfinal (?:\w+ )?model\b[^\n]{0,30}?(?:\bsaved\b|->|→|\bwritten\b)"
    # Ultralytics' (YOLOv5's, YOLOv8's) last line of a training, a validation or a prediction: "Results saved to runs/train/exp2"
    r"|\bresults saved to\b"
    # the same in the languages the programs print it in: "Entraînement terminé!", "Training selesai.", "训练与评估完成"
    # "Training completato", "Treinamento concluído em 12.22 minutos.", "Εκπαίδευση ολοκληρώθηκε!"
    r"|\bentra[iî]nement (?:est )?termin[ée]|\b(?:training|pelatihan) selesai\b|\b(?:training|addestramento) (?:è )?completat[oa]\b"
    r"|\btreinamento conclu|\bentrenamiento (?:completado|finalizado|terminado)\b|\btraining (?:abgeschlossen|beendet)\b|Εκπαίδευση ολοκληρώθηκε"
    r"|训练\S{0,6}?(?:完成|结束)|(?:任务|程序|运行)\S{0,4}(?:完成|结束)"
    r"|wandb(?:\x1b\[[\d;]*m)?: (?:Find logs at:|Synced \d+ W&B file)",
    re.IGNORECASE,
)
LAST_LINES = 3
# A time among a record's other fields is a measurement, not the run's summary: Megatron's "iteration 3/ 286102 | ...
# | elapsed time per iteration (ms): 37143.0 | ...", a benchmark's "use_te: False, bs: 10240, ..., cost_time: 0.716ms"
# (dev3, TransformerEngine#445), a trainer's JSON record with "elapsed_time" (dev, LLaMA-Factory#774).
FIELDS = re.compile(r", |\||=")
FIELDS_AT_MOST = 1  # separators from the time's words to the line's end ("Total time = 94.22s" has one)
# A bare "Done!" is some stage's end as often as the run's (torchvision prints "Processing...
# Done!" when it has prepared MNIST, before training starts): it is the run's end only as one of
# the input's last lines.
BARE_END = re.compile(r"^\s*(?:Done|DONE|Finished|End|END)[.!]?\s*$")
BARE_END_LAST = 3  # non-blank lines, the bare end's own included
# One program message printed over and over after an end (its numbers aside): the run went on in a loop (a service
# polling for a peer that never came, "[8638] learner_id(lrngrp0) hasn't request_learner_task.",
# Tencent-RoboticsX/lifelike-agility-and-play#10), so the "end" was not the run's. A warning repeated at exit (every rank's
# "process group has NOT been destroyed") is a run's shutdown, not a loop: warning-level lines do not count.
LOOPING_LINES = 6  # the last non-blank lines after the end, all one message
WARNING_LEVEL = re.compile(LEVEL_AT.format(caps="WARNING|WARN", glog="W", lower="warning|warn"))
# Set-up a run prints while it starts (NCCL's transport and communicator set-up): after an end,
# it shows that the run went on, so the "end" was not the run's (a hang's log or one cut while
# starting holds such lines last).
GOING_ON = re.compile(
    r"NCCL INFO (?:NET/|Bootstrap|Channel \d|Connected all|Using network|Trees|Ring \d|Setting affinity|cudaDriverVersion"
    r"|comm 0x[0-9a-f]+ rank \d+ nranks \d+ .*Init COMPLETE)|^\s*NCCL version \d",
    re.MULTILINE,
)
# A save the run makes while it trains is no end: Hugging Face's Trainer saves every save_steps to
# <output_dir>/checkpoint-<step> (newer releases stage it in tmp-checkpoint-<random> first), other loops to a folder
# named by step, epoch or iteration; only the save to the output folder itself ends a run. A hang after a periodic save
# (a collective at the next step, a rank still writing its shard) leaves such a line last
# (huggingface/transformers#36076: "Saving model checkpoint to data/tmp-checkpoint-pe8ry7n_" at step 40 of 4500).
PERIODIC_SAVE = re.compile(
    r"\bsaving (?:the )?(?:final )?model (?:checkpoint )?to\s+\S*?"
    r"(?:\b(?:tmp-)?checkpoint[-_]\w+|\b(?:global_)?(?:step|epoch|iter|iteration)[-_]?\d+)\S*\s*$",
    re.IGNORECASE,
)
# A person's sentence that holds an end's words is no end: a question put to someone ("Have you successfully finished
# the training with multiple gpu?", Deepfake-Detection#2, HongguLiu/Deepfake-Detection issue 2, heldout8) or an end
# told with what went wrong after it ("Training was done on 4 GPUs but the loss never goes down"): the words after
# the end's own say it is a report about a run, not the run's own last line.
SPOKEN_AFTER_END = re.compile(r"\?|\b(?:but|however|though|although|except|yet)\b", re.IGNORECASE)
# Warnings that say the run went on degraded: its loss or gradients not finite (it learned nothing from those steps),
# or on a slower path than it was set up for (the CPU, a fallback kernel). A run that ends after them reached its
# end, but not well: its end does not make it healthy, and the log does not decide whether what it produced is of use.
DEGRADED_RUN = frozenset({
    "loss-not-finite", "grad-norm-not-finite", "fp16-loss-scale-at-minimum", "sampling-probabilities-invalid",
    "onnxruntime-cuda-provider-failed", "tgi-flash-attention-unavailable", "cuda-init-warning-driver-too-old",
})
# A progress counter after an end that has not reached its total shows the run still counting steps when the log
# stops: tqdm's bar ("40/4500 [07:21<4:45:21, 3.84s/it]", huggingface/transformers#36076), mmengine's
# "Epoch [1][100/62598]", a "Step 1200/5000" line. The last counter after the end decides (a bar that reached its
# total, an evaluation run to its end, leaves n = N last): a run that ended and then went on to a stage it did not
# finish (an evaluation after training, the next step of a pipeline) did not end there.
PROGRESS = re.compile(r"(?:\b(?:epoch|step|iter(?:ation)?|batch)\b[^\n\r]{0,40}?|\|\s*)\b(\d+)\s*/\s*(\d+)\b", re.IGNORECASE)
# An end that goes on to say it waits is no end yet: torch elastic's agent logs "[default] worker group successfully
# finished. Waiting 300 seconds for other agents to finish." and then waits at its exit barrier for the other nodes
# (torch/distributed/elastic/agent/server/api.py; "Done waiting for other agents" when they are done, an ERROR with
# a traceback when they are not): a log that stops there shows a job still waiting, not one that ended.
WAITING_AFTER_END = re.compile(r"\bwaiting\b", re.IGNORECASE)
# A test pytest started after the last one that PASSED, with no outcome on its line: the session was still running it
# (a distributed test that hangs in its collective; intel/torch-xpu-ops#2649: "test_schedule_multiproc.py::ScheduleTest::
# test_custom_function_callback 2025:12:25-00:54:39:1336928 |CCL_WARN| ...", the test never reported).
TEST_STARTED = re.compile(r"^\S+\.py::\S+(?![^\n]*\b(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b)", re.MULTILINE)
# A command typed at a shell prompt after an end runs another command: the end was the earlier command's, and what the
# later one printed decides (knowledge/reruns.py reads the same prompts for a failure an attempt run again made stale:
# NVIDIA/nccl#719, huggingface/text-generation-inference#1451). A command that only looks (at the GPUs, the files, the
# packages, the exit status) runs no job: the end stays.
LOOKING = frozenset({
    "echo", "cat", "ls", "ll", "tail", "head", "less", "more", "grep", "nvidia-smi", "nvcc", "pip", "pip3", "conda", "env",
    "printenv", "history", "which", "whereis", "cd", "export", "source", "exit", "clear", "date", "hostname", "uname", "df",
    "du", "free", "ps", "top", "htop", "nvtop", "gpustat", "lsof", "dmesg", "git", "watch", "rm", "mv", "cp", "mkdir",
})
# The last epoch of a schedule the run declared ("Epoch 10/10", "Epoch [10/10], Validation Loss: 0.41", Keras's "Epoch 5/5"
# then its "62/62 [====] - 38s - loss: 5.28 - val_loss: 10.17"; dev10, heldout31w): the training reached its total. It ends the
# run only where the epoch's own numbers are shown (on its line or after it: Keras prints "Epoch 5/5" as the epoch starts),
# nothing counts short of its total after it (the epoch's steps, a next stage's epochs), and few lines follow it (results,
# saves: a next stage that starts and is cut holds more). An epoch counted from 0 ("Epoch: [99/100]") does not reach its total
# and is not read.
EPOCH_AT = re.compile(r"\bepoch\b[\s:\[]*(\d+)\s*/\s*(\d+)\b", re.IGNORECASE)
EPOCH_NUMBERS = re.compile(
    r"\b(?:loss|acc(?:uracy)?|val\w*|f1\w*|auc|map|ndcg\S*|psnr|ssim|bleu|rouge\w*|perplexity|ppl|reward|score)\b[^\n\d]{0,6}?[-+]?\.?\d",
    re.IGNORECASE,
)
SCHEDULE_AFTER = 12  # non-blank lines after the last epoch's line, at most
COUNTED = re.compile(r"(?<![\d.:/-])(\d+)\s*/\s*(\d+)(?![\d.:/-])")  # any counter after it: the last one decides
# A progress bar (tqdm's "desc: 100%|██████████| 50/50 [01:56<00:00,  2.32s/it]") that is the input's last output, at its
# total (its percent too: a line cut in its count, "10%| 2/2", is none), never started again in the input's tail, and no other
# bar left short of its total there: the one loop the program ran reached its end (dev10's
# https://github.com/WanChengXue/MARLforCommunication/blob/c02a7b171bda4233c4cb352ae0f4faa600d4122b/eval.out: 50/50, nothing after). A bar that started again is a loop's (an epoch's
# bar; its description's digits aside): it does not say the run is done.
BAR = re.compile(r"(?P<desc>[^\r\n|]*?)[ \t]*(?P<percent>\d{1,3})%\|[^|\r\n]*\|[ \t]*(?P<done>\d+)/(?P<total>\d+)\b")
# Only a bar with no description, or one that names the job's own work (an evaluation, a test, an inference, a prediction, a
# sampling): a set-up stage's bar at its total ("Loading checkpoint shards: 100%| 5/5", datasets' "Map (num_proc=12): 100%|
# 2596/2596") is the last line of a run that hung or was killed right after it loaded (dev4's qwen3vl#546, heldout5's CogVideo#540).
BAR_WORK = re.compile(r"^\s*$|\b(?:eval\w*|test\w*|infer\w*|predict\w*|sampl\w*|generat\w*|decod\w*)\b", re.IGNORECASE)
# the bar is the whole of its segment: nothing after its [elapsed<left, rate] but blanks (make's "*** [target] Error 1" printed on
# the bar's line is the run's end, heldout27w)
BAR_REST = re.compile(r"[ \t]*(?:\[[^\]\r\n]*\])?[ \t]*$")
# A GPU tool's whole output (nvidia-smi topo -m's legend, ibstatus): complete in itself.
# nvidia-smi's table or -q report, its topology legend, ibstatus: a GPU tool's output
# (judged by what it holds, not by an end), as a paste, cut or not.
TOOL_OUTPUT = re.compile(
    r"^\s*Legend:\s*$|^\s*X\s+= Self\s*$|^\s*state:\s+\d+: ACTIVE\s*$"
    r"|^=+NVSMI LOG=+\s*$|^\s*(?:GPU UUID|Product Architecture|Product Name)\s+: \S|^\|\s*NVIDIA-SMI \d",
    re.MULTILINE,
)
# a literal each TOOL_OUTPUT line holds: a chunk with none of them is not searched (the
# regex over a decoded chunk cost a third of an ordinary log's whole read)
TOOL_WORDS = (b"Legend:", b"= Self", b": ACTIVE", b"NVSMI LOG", b"GPU UUID", b"Product Architecture", b"Product Name", b"NVIDIA-SMI")


class Tail:
    """The last TAIL_BYTES of a stream, kept as its chunks go by (`tee` wraps a reader's callback)."""

    def __init__(self) -> None:
        self.data = b""
        self.tool = ""  # the first line of a GPU tool's output seen anywhere in the input
        self.newlines = 0  # in the whole stream: the line an end stands at is counted back from it

    def feed(self, chunk: bytes) -> None:
        if not self.tool and chunk and any(word in chunk for word in may_hold(chunk, TOOL_WORDS)):
            m = TOOL_OUTPUT.search(chunk.decode("utf-8", "replace"))
            if m:
                self.tool = m.group(0).strip()
        self.data = (self.data + chunk[-TAIL_BYTES:])[-TAIL_BYTES:]
        self.newlines += chunk.count(b"\n")

    def tee(self, other):
        def both(chunk: bytes) -> None:
            other(chunk)
            self.feed(chunk)

        return both

    def ended(self) -> str:
        """The line that shows the run ended well ('' when none does). A GPU tool's
        output (self.tool) is whole, but it is no run's end: it shows the GPUs, not the job."""
        return self.end()[0]

    def end(self) -> tuple[str, int]:
        """(the line that shows the run ended well, its line number, 1-based as the scanner counts lines), or ('', 0)."""
        text = self.data.decode("utf-8", "replace")
        m = None
        for m in ENDED.finditer(text):
            pass
        if m is None:
            m = last_lines_end(text) or schedule_end(text) or bar_end(text)
        if m is None:
            return "", 0
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = end if end >= 0 else len(text)
        after = text[end:]
        if GOING_ON.search(after) or still_counting(after) or TEST_STARTED.search(after) or ran_after(after) or looping(after):
            return "", 0
        line = text[start:end]
        if BARE_END.match(line) and sum(1 for rest in after.splitlines() if rest.strip()) >= BARE_END_LAST:
            return "", 0
        if PERIODIC_SAVE.search(line) or SPOKEN_AFTER_END.search(text, m.end(), end) or WAITING_AFTER_END.search(text, m.end(), end):
            return "", 0  # a save during the run, a person's sentence about a run, an agent still waiting: none is the run's end
        # counted back from the stream's newlines: `after` starts with the end's own newline, if it has one; shown, the
        # carriage-return segment that holds it (a progress bar's line holds every state it was redrawn in)
        cut = line.find("\r", m.end() - start)
        shown = line[line.rfind("\r", 0, m.start() - start) + 1 : cut if cut >= 0 else len(line)]
        return shown.strip()[:200], self.newlines + 1 - after.count("\n")


def schedule_end(text: str) -> "re.Match[str] | None":
    """The last epoch counter of `text` where it is at its declared total and the run's end (EPOCH_AT's why), or None."""
    last = None
    for last in EPOCH_AT.finditer(text):
        pass
    if last is None or int(last.group(2)) < 2 or last.group(1) != last.group(2):
        return None
    start, end = text.rfind("\n", 0, last.start()) + 1, text.find("\n", last.end())
    after = text[end:] if end >= 0 else ""
    if EPOCH_NUMBERS.search(text, start) is None or sum(1 for rest in after.split("\n") if rest.strip()) > SCHEDULE_AFTER:
        return None
    counted = None
    for counted in COUNTED.finditer(text, last.end()):
        pass
    if counted is not None and int(counted.group(1)) < int(counted.group(2)):
        return None  # the epoch's steps (Keras's "30/89 [=====>....]", with no word before them), or a next loop's, short of their total
    return last


def bar_end(text: str) -> "re.Match[str] | None":
    """The progress bar that is the last output of `text`, at its total, in a loop that never started again (BAR's why), or
    None."""
    tail = text.rstrip()
    at = max(tail.rfind("\n"), tail.rfind("\r")) + 1
    last = BAR.match(tail, at)
    if (last is None or last.group("done") != last.group("total") or last.group("percent") != "100" or int(last.group("total")) < 2
            or not BAR_WORK.search(last.group("desc")) or not BAR_REST.match(tail, last.end())):
        return None
    key = (re.sub(r"\d+", "#", last.group("desc").strip()), last.group("total"))
    counts: dict[tuple[str, str], int] = {}
    for bar in BAR.finditer(text):
        seen = (re.sub(r"\d+", "#", bar.group("desc").strip()), bar.group("total"))
        if seen == key and int(bar.group("done")) < counts.get(seen, -1):
            return None  # the same loop started again: an epoch's bar, or a step's
        counts[seen] = int(bar.group("done"))
    if any(done < int(total) for (_, total), done in counts.items()):
        return None  # another bar left short of its total (an outer loop: "Doing inference...: 8/11" around each bar)
    return last


def last_lines_end(text: str) -> "re.Match[str] | None":
    """The LAST_ENDED match among the last LAST_LINES non-blank lines of `text`, the last one, or None."""
    at, lines = len(text), 0
    while at > 0 and lines < LAST_LINES:
        start = text.rfind("\n", 0, at - 1) + 1
        if text[start:at].strip():
            lines += 1
        at = start
    found = None
    for m in LAST_ENDED.finditer(text, at):
        start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        line = text[start : end if end != -1 else len(text)]
        if still_counting(line) or m.group("time") and len(FIELDS.findall(text, m.start(), start + len(line))) > FIELDS_AT_MOST:
            continue  # a counter short of its total on the line itself; a time among a record's fields
        found = m
    return found


def still_counting(text: str) -> bool:
    """The last progress counter in `text` stops short of its total (a run still counting its steps)."""
    last = None
    for last in PROGRESS.finditer(text):
        pass
    if last is None:
        return False
    done, total = int(last.group(1)), int(last.group(2))
    return total > 1 and done < total


def looping(text: str) -> bool:
    """The last LOOPING_LINES non-blank lines of `text` are one message (digits aside) that is not a warning: a loop."""
    last = [line.strip() for line in text.splitlines() if line.strip()][-LOOPING_LINES:]
    if len(last) < LOOPING_LINES or WARNING_LEVEL.search(last[-1]):
        return False
    return len({re.sub(r"\d+", "#", line) for line in last}) == 1


def ran_after(text: str) -> str:
    """The first command typed at a prompt in `text` that runs something rather than looks ('' when none)."""
    for m in PROMPT.finditer(text.encode("utf-8", "replace")):
        command = Command(0, m.group("command").decode("utf-8", "replace").strip())
        words = command.words()
        if words and words[0].rsplit("/", 1)[-1] not in LOOKING:
            return command.text
    return ""
