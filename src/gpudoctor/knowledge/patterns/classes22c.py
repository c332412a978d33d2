"""Classes of the twenty-second round (issue 35, diagC22): messages whose error line the log holds and whose cause the
answer did not name, read by what their words decide rather than one exception at a time. Three families:

- `variable-unassigned` (the path the code took): Python read a function's local variable before any statement of that
  path gave it a value: `UnboundLocalError: local variable 'X' referenced before assignment` (Python up to 3.10), `cannot
  access local variable 'X' where it is not associated with a value` (3.11 on), and the same for a closure's variable
  (`free variable 'X' referenced before assignment in enclosing scope`, `cannot access free variable 'X' ...`). Every
  assignment of X in that function sits under a condition, a loop or a try this run skipped; the frame that raised (the
  traceback's last) says which function, and whose code it is. A name no code defines is NameError's, not this.
- `managed-job-failed` (a training service's summary of a job whose script failed): Amazon SageMaker's `AlgorithmError:
  ExecuteUserScriptError: Command "..."` and the SDK's `UnexpectedStatusException: Error for Training job NAME: Failed.
  Reason: AlgorithmError: ...`, Vertex AI's `The replica workerpool0-0 exited with a non-zero status of N`. The service
  ran the user's command in its container and reports only that it exited with an error: the script's own error is in
  the job's log on the service (CloudWatch, Cloud Logging), or below the summary where the SDK copies its last lines. It
  is the consequence of that error: when the log holds the script's error, that error leads (after="*").
- `matlab-error` (another runtime's own report): MATLAB's `Error using FUNCTION (line N)` with its message on the next
  lines, its `Error in ...` call lines and `Caused by:` the error underneath (a parallel pool's worker's own), and its
  words for a toolbox it lacks (`gpuDeviceCount requires Parallel Computing Toolbox.`). The message decides the step: a
  worker that died or raised (parfor, spmd), a pool that did not start, MEX files compiled without GPU support, a toolbox.

A third class widens a pattern of an earlier round: native-check-failed (patterns/classes11b.py) reads a CHECK whose
condition holds a call or parentheses (`Check failed: kv_.emplace(k, v).second`, `(lhs.ctx()) == (rhs.ctx())`).

Lines that only look alike are left: a linter's note that a variable may be used before assignment, a warning that skips
an item after the same message, the source line of a frame that raises it; a SageMaker job's status lines
(`Completed - Training job completed`), its INFO lines; MATLAB's warnings and their `> In ...` stack, R's `Error in f(x) :`.

Written from every development part but heldout21 and heldout18, which were measured after (the transfer check).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
UNASSIGNED, MANAGED_JOB, MATLAB = "variable-unassigned", "managed-job-failed", "matlab-error"
# The findings whose title gives what the line names and whose fix starts with the step it decides (knowledge/story.py)
DETAIL_SAID = (UNASSIGNED, MANAGED_JOB, MATLAB)

# not a warning the run went past, a linter's report, nor the source line of a traceback's frame that raises it
NOT_WARNED = r"^(?!\s*raise\b)(?!.*(?i:\bwarn(?:ing)?\b|skipping|\bignor(?:e|ing)\b))"


def unassigned_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    name = out.get("name") or out.get("name311") or "X"
    out["name"] = name
    out["detail"] = f"'{name}'"
    out["step"] = (f"every assignment of {name} in the function that raised (WHERE) sits under a condition, a loop or a try that "
                   f"this run skipped: `grep -n \"\\b{name}\\b\" WHERE_FILE` shows them. An if/elif without an else "
                   f"whose test this run did not meet (a setting, a flag, a device count: a value set only when CUDA sees a GPU), a "
                   f"for loop over an empty sequence (no parameters on this rank, no batches, no GPUs listed), or a try whose "
                   f"assignment raised first: that test is the cause; give {name} a value before the branch ({name} = None, or its "
                   f"default) or make the test true. In a job of several ranks, an assignment only under a rank test (`if rank == "
                   f"0:`) leaves every other rank without it: `gpudoctor lint WHERE_FILE` finds that shape (undefined-name)")
    return out


def managed_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    code = out.get("code") or next((c.group(1) for text in context if (c := EXIT_CODE.search(text))), "")
    if code:
        out["exitcode"] = code
    job = out.get("job") or ""
    if out.get("replica"):
        out["detail"] = f"Vertex AI replica {out['replica']} exited with status {code}" if code else f"Vertex AI replica {out['replica']} failed"
        out["step"] = ("Vertex AI ran the script in its container and says only that it exited with an error: the script's own "
                       "error is in the job's log: `gcloud ai custom-jobs stream-logs JOB_ID --region REGION` (or Cloud Logging, "
                       "resource.labels.job_id=JOB_ID), then gpudoctor diagnose on that log")
        return out
    what = f"SageMaker training job {job}" if job else "the SageMaker training job"
    out["detail"] = f"{what} failed" + (f" (exit code {code})" if code else "")
    name = job or "JOB"
    out["step"] = (f"SageMaker ran the script in its container and reports only that the command exited with an error: the "
                   f"script's own error is in the job's CloudWatch log: `aws logs tail /aws/sagemaker/TrainingJobs "
                   f"--log-stream-name-prefix {name} --since 1d` (each instance, algo-1, algo-2, ..., has its stream), and "
                   f"`aws sagemaker describe-training-job --training-job-name {name} --query FailureReason` holds its last lines; "
                   f"run gpudoctor diagnose on that log")
    if code in ("137", "-9"):
        out["step"] += "; exit code 137 is a SIGKILL: the instance's memory ran out (a larger instance type, or a smaller batch)"
    elif code in ("134", "-6"):
        out["step"] += "; exit code 134 is a SIGABRT: a native library aborted, and its message is the last lines before it in that log"
    return out


# MATLAB's report: "Error using FUNC (line N)" (or "Error using MEXFUNC") then its message; "Error in FUNC (line N)" the calls
# that led there; "Caused by:" the error underneath (a worker's, a pool's start)
MATLAB_HEAD = re.compile(r"^[\s>]*Error using (?P<func>\S+)(?: \(line \d+\))?\s*$")
POOL_DIED = re.compile(r"All workers aborted during execution of the parfor loop|pool that SPMD was using has been shut down|"
                       r"lost connection to (?:worker|lab)|Error detected on worker \d+")


def matlab_message(lines: list[str]) -> str:
    """The first line of a message (the lines after an "Error using" line), its quoting "> " taken off."""
    said = [t.strip().lstrip(">").strip() for t in lines]
    return next((t for t in said if t), "")


def matlab_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("toolbox"):
        message = m.group(0).strip().lstrip(">").strip()
    else:
        below = [t for t in context]
        cut = next((i for i, t in enumerate(below) if not t.strip().lstrip(">").strip() or MATLAB_HEAD.match(t)), len(below))
        message = " ".join(t.strip().lstrip(">").strip() for t in below[:min(cut, 3)])
    caused = next((i for i, t in enumerate(context) if t.strip().lstrip(">").strip() == "Caused by:"), None)
    if caused is not None:
        inner = next((i for i in range(caused + 1, len(context)) if MATLAB_HEAD.match(context[i])), None)
        if inner is not None and matlab_message(context[inner + 1: inner + 2]):
            out["caused_by"] = matlab_message(context[inner + 1: inner + 2])
    func = out.get("func") or out.get("toolbox_func") or ""
    out["message"] = message
    out["detail"] = (f"{func}: " if func else "") + (message[:160] or "its message is not in this log")
    if out.get("caused_by"):
        out["detail"] += f" (caused by: {out['caused_by'][:120]})"
    said = f"{message} {out.get('caused_by', '')}"
    if out.get("toolbox"):
        step = (f"{func or 'the function'} is part of {out['toolbox']}, which this MATLAB does not have (or has no license for): "
                f"`ver` lists the toolboxes installed; add it (Add-Ons, or the installer), or run without the option that asks "
                f"for it (the GPU or parallel option)")
    elif "GPU support not compiled" in said:
        step = ("MatConvNet's MEX files were compiled without GPU support (or the input is not a gpuArray of numbers): compile "
                "them with it, vl_compilenn('enableGpu', true, 'cudaRoot', '/usr/local/cuda'), or run on the CPU (opts.gpus = [])")
    elif "Failed to start" in said and "pool" in said:
        step = ("the parallel pool did not start: the message names the cluster profile to validate (Cluster Profile Manager, "
                "Validate), and the error under 'Caused by:' says why; parpool('local', 1) tries a pool of one worker")
    elif POOL_DIED.search(said) and not out.get("caused_by"):
        step = ("a worker of the parallel pool died or raised (each worker is a process of its own, with its own GPU context): "
                "run the loop once without the pool (for instead of parfor, or parpool(1)) to see the worker's own error, or "
                "read the pool job's log; a worker killed for memory: fewer workers (no more than gpuDeviceCount for a GPU "
                "job) or less data per iteration")
    else:
        step = ("MATLAB stopped on the error its message names" + (" (the one under 'Caused by:' is underneath: a worker's own)"
                if out.get("caused_by") else "") + "; the 'Error in' lines below it are the calls that led there, innermost "
                "first: run `dbstop if error` and the script again to stop at that line with its variables")
    out["step"] = step
    return out


EXIT_CODE = re.compile(r"^\s*(?:ExitCode|exit code:?)\s+(-?\d+)\b", re.IGNORECASE)

PATTERNS = [
    pattern(
        UNASSIGNED,
        "platform",
        CAUSE,
        E,
        "a variable was read before the code gave it a value: the path this run took skips its assignment",
        NOT_WARNED + r".*?(?:(?P<exception>UnboundLocalError|NameError): )?(?:(?:local|free) variable '(?P<name>\w+)' referenced before assignment"
        r"|cannot access (?:local|free) variable '(?P<name311>\w+)' where it is not associated with a value)",
        ("referenced before assignment", "where it is not associated with a value"),
        why="""Python makes a name local to a function when any statement of the function assigns it, and raises
        UnboundLocalError when the code reads it on a path where none of those statements ran. The function is not missing
        the variable: the run took a branch its author did not plan for. The assignment sits under an if whose test this
        run did not meet (a setting, a device count, a flag: a value set only when CUDA sees a GPU leaves it unset on a
        machine where it sees none), inside a loop that ran zero times (an empty list of parameters, batches, files or
        GPUs), or in a try whose statement raised first. In a job of several processes, a value assigned only on rank 0
        (`if rank == 0:`) is unset on the others. The traceback's last frame names the function; whose code it is says
        whether your configuration reached a case the library does not handle (its version may fix it) or your code's.""",
        fix="""STEP; if that frame is a library's (site-packages), this setting or input is a case the installed version does not
        handle: upgrade it (pip install -U PACKAGE) and search its issues for the message""".replace("\n        ", " "),
        examples=[
            ("UnboundLocalError: local variable 'n_gpus' referenced before assignment",
             "artidoro/qlora#231 (n_gpus set only when CUDA sees a GPU; the fix gives it a default of 0)"),
            ("[rank0]: UnboundLocalError: local variable 'p' referenced before assignment",
             "Lightning-AI/lightning-thunder#448 (fsdp_transform_module's loop over a module's parameters ran zero times)"),
            ("UnboundLocalError: cannot access local variable 'fps' where it is not associated with a value",
             "AronnePiperno/fewshot-lightning-hydra train.log (Python 3.11's words)"),
            ("NameError: free variable 'model' referenced before assignment in enclosing scope",
             "Python's own words for a closure's variable"),
        ],
        not_examples=[
            "train.py:297:42: E0606: Possibly using variable 'n_gpus' before assignment (possibly-used-before-assignment)",
            "WARNING: skipping sample 12: local variable 'box' referenced before assignment",
            "    raise UnboundLocalError(f\"local variable '{name}' referenced before assignment\")",
            "NameError: name 'n_gpus' is not defined",
        ],
        fields=unassigned_fields,
    ),
    pattern(
        MANAGED_JOB,
        "launcher",
        CAUSE,
        E,
        "the training service reports that the job's script failed (its own error is in the job's log on the service)",
        r"(?:AlgorithmError: (?:ExecuteUserScriptError|\w*Error)\b"
        r"|Error for Training job (?P<job>[\w-]+): Failed\. Reason: AlgorithmError"
        r"|The replica (?P<replica>workerpool\d+-\d+) exited with a non-zero status of (?P<code>-?\d+))",
        ("AlgorithmError: ", "Error for Training job", "exited with a non-zero status of"),
        why="""A managed training service (Amazon SageMaker, Google Vertex AI) ran the job's command in its container and the
        command exited with an error; the service's summary, which the SDK raises in the notebook or the script that started
        the job, says only that. The script's own error (its traceback, an out-of-memory kill, a missing package) is in the
        job's log on the service: CloudWatch's /aws/sagemaker/TrainingJobs group (one stream per instance) for SageMaker,
        Cloud Logging for Vertex AI; newer SageMaker SDKs copy its last lines under the summary (ExitCode, ErrorMessage).
        When this log holds that error, it is the cause and is listed first.""",
        fix="""STEP""",
        examples=[
            ('AlgorithmError: ExecuteUserScriptError: Command "mpirun --host algo-1:8,algo-2:8 -np 16 --allow-run-as-root --tag-output"',
             "heiko-hotz/text-summarisation-project#2 (a smdistributed dataparallel job on two ml.p3.16xlarge)"),
            ("UnexpectedStatusException: Error for Training job vit-fsdp-2023-06-14-22-27-25-988: Failed. Reason: AlgorithmError: SMDDPError:",
             "aws/sagemaker-training-toolkit#185 (an FSDP job with the smddp backend, ExitCode 134)"),
            ("google.api_core.exceptions.FailedPrecondition: Job failed: The replica workerpool0-0 exited with a non-zero status of 1.",
             "Vertex AI's words for a custom job whose first worker pool's script failed"),
        ],
        not_examples=[
            "2020-04-25 11:40:12 Completed - Training job completed",
            "INFO:sagemaker:Creating training-job with name: vit-fsdp-2023-06-14-22-27-25-988",
        ],
        context_after=3,
        fields=managed_fields,
        after=("*",),
    ),
    pattern(
        MATLAB,
        "platform",
        CAUSE,
        E,
        "MATLAB stopped the script on an error (its 'Error using' report: the function, then the message)",
        NOT_WARNED + r"[\s>]*(?:Error using (?P<func>\S+)(?: \(line \d+\))?\s*$"
        # MATLAB's words for a function of a toolbox it does not have
        r"|(?P<toolbox_func>\w+) requires (?P<toolbox>[A-Z][\w ]+ Toolbox)\.\s*$)",
        ("Error using ", " Toolbox."),
        why="""MATLAB reports an error it stops on in its own shape: `Error using FUNCTION (line N)` (the function that raised;
        a MEX file's without a line), the message on the next lines, then `Error in ...` lines, the calls that led there
        (innermost first), and, when the error wraps another, `Caused by:` and the error underneath (a parallel pool's
        worker's own error, the reason a pool did not start). In a job that uses GPUs or a parallel pool the usual messages
        are a worker that died or raised (parfor, spmd: each worker is a process with its own GPU context), a pool that did
        not start, a toolbox this MATLAB does not have (gpuDeviceCount and gpuArray are the Parallel Computing Toolbox's),
        or MEX files built without GPU support.""",
        fix="""STEP""",
        examples=[
            ("Error using parallel_function (line 604)", "rbgirshick/voc-dpm#18 (next line: All workers aborted during execution of the parfor loop.)"),
            ("Error using cnn_train_dag>(spmd) (line 492)",
             "bertinetto/siamese-fc#62 (next line: The parallel pool that SPMD was using has been shut down.)"),
            ("Error using vl_nnconv", "ignaciorlando/red-lesion-detection#3 (next line: An input is not a numeric array (or GPU support not compiled).)"),
            ("gpuDeviceCount requires Parallel Computing Toolbox.", "ucsb-goard-lab/EstrousNet#7 (the README now lists the toolbox)"),
        ],
        not_examples=[
            "Error using the GPU: falling back to the CPU",
            "Warning: gpuDeviceCount requires Parallel Computing Toolbox.",
            "Error in pascal (line 49)",
        ],
        context_after=14,
        fields=matlab_fields,
    ),
]
