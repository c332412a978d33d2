"""diagnose: a target (file, stdin, folder) -> a Report, cause first."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from typing import TYPE_CHECKING, BinaryIO, Optional

from gpudoctor.commands.diagnose import folder as run_folder
from gpudoctor.commands.diagnose.inputs import InputError, NotReadable, Target, decompressed, open_log
from gpudoctor.commands.diagnose.reader import BinaryInput, Normalised, scan
from gpudoctor.knowledge.plain_pickle import RefusedPickle
from gpudoctor.core.user_file import FileRefused
from gpudoctor.core.findings import SNAPSHOT_FAULTS, SNAPSHOT_SETTINGS, Finding, Report, Severity
from gpudoctor.knowledge.build_cut import build_cut
from gpudoctor.knowledge.ending import DEGRADED_RUN, Tail
from gpudoctor.knowledge.launcher_only import NCCL_STEP, LauncherSeen, launcher_step
from gpudoctor.knowledge.patterns.classes22d import PLATFORM_NOTE, no_nccl_here
from gpudoctor.knowledge.progress import WENT_ON_SHOWN, Progress
from gpudoctor.knowledge.ranks_heard import RanksHeard
from gpudoctor.knowledge.forked import ForkSeen
from gpudoctor.knowledge.gpus_unused import GpusUnused
from gpudoctor.knowledge.no_work import NoWork
from gpudoctor.knowledge.nccl_loopback import NcclLoopback
from gpudoctor.knowledge.reruns import RESTART_HOW, Openings, Prompts, RunStarts
from gpudoctor.knowledge.said_fixed import SaidFixed
from gpudoctor.knowledge.said_hang import SaidHang
from gpudoctor.knowledge.said_oom import SaidOom
from gpudoctor.knowledge.setting import VM, WSL, SettingSeen
from gpudoctor.knowledge.remedy import remedy_step
from gpudoctor.knowledge.reported import REPORTED_PLACE, Reported
from gpudoctor.knowledge.run_numbers import Zero, progress_seen, zero_throughout
from gpudoctor.knowledge.signs import HANDLED
from gpudoctor.knowledge.story import SAID_WORDS, Diagnosis
from gpudoctor.knowledge.title_said import title_label_words, title_reports_failure
from gpudoctor.knowledge.paste_parts import WORKED_HOW, Said, Worked, failure_said
from gpudoctor.knowledge.mentions import KEPT as MENTIONS_KEPT
from gpudoctor.knowledge.mentions import PROBE_WENT_ON, ends_in_failure, lead_first, went_past_probes
from gpudoctor.launch.rundir import OUTCOME_FILE
from gpudoctor.commands.diagnose.nvidia_smi import NvidiaSmiReader
from gpudoctor.catalog.findings.gpu_health import GPU_JOB_IDLE, GPU_NOT_USED
from gpudoctor.catalog.findings.diagnose import (
    FILES_NOT_READ,
    LOG_INCONCLUSIVE,
    LOG_NO_FAILURE,
    LOG_SAID_HANG,
    LOG_SAID_OOM,
    LOSS_DIVERGING,
    PICKLE_REFUSED,
    RANK_EXCEPTION,
    STUCK_AT_ZERO,
    UNRECOGNISED_FAILURE,
)

if TYPE_CHECKING:
    from gpudoctor.hang.folder import FolderVerdict

# A GPU tool's reading that the reporter's words decide (their warnings): the GPU idle with no job on it, or holding the
# job's memory while the reporter says its utilisation stays at 0 (checks/gpu_activity.py)
AGREED = (GPU_NOT_USED.id, GPU_JOB_IDLE.id)

# The went-on answer's fix where what the job went on past has its own (knowledge/progress.py WENT_ON_SHOWN's kinds)
WENT_ON_FIX = {"set-up": "went-on-set-up", "tool-step": "went-on-tool", "plug-in": "went-on-plug-in"}


def diagnose(target: Target, stream: Optional[BinaryIO] = None) -> Report:
    """`stream`: the log, already open, for a target that is not a path (standard
    input by default; the Python API's text)."""
    d = Diagnosis()
    smi = NvidiaSmiReader()  # pasted nvidia-smi output: GPU health, judged as `check` judges NVML's
    data: dict = {"input": target.path, "kind": target.kind}
    extra: list[Finding] = []  # folder mode: what the dumps and error files say
    last: list[Finding] = []  # what was not read
    if target.kind == "folder":
        try:
            verdict = run_folder.gpudoctor_verdict(target.path)
        except ValueError as exc:  # outcome.json there but not readable (launch/supervisor.OutcomeUnreadable)
            verdict, data["outcome_not_read"] = None, str(exc)
        if verdict is not None:  # a folder gpudoctor's own ranks left: the verdict it gave then
            return outcome_report(target.path, verdict, data)
        extra, data = diagnose_folder(target.path, d, data)
        last = [f for f in extra if f.id == "files-not-read"]
        extra = [f for f in extra if f.id != "files-not-read"]
    else:
        damage, d, smi = read_log(target, d, stream, smi)
        data["sources"] = [target.path]
        if damage:
            data["not_read"] = [{"path": target.path, "why": damage}]
            last = [files_not_read([(target.path, damage)], 0)]
    traced = next((f for f in extra if f.area == "collectives"), None)
    # (a GPU tool's reading of ranks stuck decides only beside the reporter's words that the run hangs, or a second reading)
    hang_said = d.said_hang is not None and d.said_hang.said is not None
    # (an idle GPU's reading decides that the job is not on it beside the reporter's words that it does not use the GPU)
    unused_said = d.gpus_unused.said_line() if d.gpus_unused is not None else ""
    # (a GPU nvidia-smi cannot reach inside WSL or a VM is Windows' or the hypervisor's to pass in: knowledge/setting.py)
    guest = d.setting.first((WSL, VM))
    read = smi.findings(hang_said, unused_said, (guest.setting, f"{guest.setting}: line {guest.line}: {guest.text}") if guest is not None else ("", ""))
    agreed = [f for f in read if f.id in AGREED and f.severity is Severity.WARN]  # the reading and the reporter's words agree
    findings = extra + (explained_by_trace(d.findings(), traced) if traced else d.findings()) + [f for f in read if f not in agreed]
    findings += ranks_shown(d, findings)
    for shown in agreed + settings_shown(d, findings + agreed) + numbers_shown(d):  # (a warning after the failures and warnings the log names, before the notices)
        findings.insert(verdict_place(findings) if shown.severity is Severity.WARN else len(findings), shown)
    answer: Optional[Finding] = None
    data["root_cause"] = first_failure(d, traced, data.pop("error_file_root_cause", None))
    data["lines"] = d.lines
    if d.unwrapped_at:
        data["unwrapped_at"] = d.unwrapped_at  # a hard-wrapped paste: its lines were joined back (line numbers count joined lines)
    if not any(f.severity is Severity.ERROR for f in findings):
        answer = no_failure(d, smi, target.kind == "folder")
        hang = said_hang(d, answer) if target.kind != "folder" else None
        if hang is not None:  # the reporter's words decide what the log alone does not: the run hangs, where its log stops
            findings.insert(verdict_place(findings), hang)  # (after a warning that may be why: a GPU tool's reading of it)
            answer = None
        elif (oom := said_oom(d, answer, None) if target.kind != "folder" else None) is not None:
            findings.insert(verdict_place(findings), oom)  # the reporter's words name the failure the log does not show
            answer = None
    elif target.kind != "folder" and (oom := said_oom(d, None, findings[0])) is not None:
        findings.insert(0, oom)  # the reporter's words name what the log's cut traceback does not say
    if answer is not None:
        # warnings alone (a barrier's guessed GPU, a deprecated launcher) are no failure, but no
        # end either: a log cut before its error holds them too, so it still does not decide;
        # a snapshot whose readings show a fault has its answer in them (exit 1 all the same)
        read_a_fault = any(f.id in SNAPSHOT_FAULTS and f.severity is Severity.WARN for f in findings)
        if answer.id == LOG_INCONCLUSIVE.id and not read_a_fault or not any(f.severity is Severity.WARN for f in findings):
            findings.insert(verdict_place(findings), answer)
    if d.title_said is not None and findings:  # (knowledge/title_said.py: the title's label, beside the answer)
        head = findings[0]
        quoted = f"line {d.title_said[0]}: {d.title_said[1].lstrip('# ')[:200]} (the reporter's words: no line of this log shows it)"
        # what would decide it: the run's own line, in the whole log; then the finding the title's word stands for
        label = title_label_words(d.title_said[1])
        decides = (f"the run's own line: grep -n -i '{label}' on the whole log; if it shows it, the failure is "
                   f"{d.title_said[2]} (docs/findings/{d.title_said[2]}.md), and gpudoctor diagnose on that log names it with its fix")
        findings[0] = dataclasses.replace(head, evidence={**head.evidence, "the title says": quoted, "what decides it": decides})
    findings += last
    return Report("diagnose", tuple(findings), data)


def ranks_shown(d: Diagnosis, findings: list[Finding]) -> list[Finding]:
    """What the log's ranks show (knowledge/ranks_heard.py), placed after the failures the log names: ranks that never
    print are only said where the log shows no failure and no end."""
    if d.ranks_heard is None:
        return []
    decided = bool(d.ended) or any(f.severity is Severity.ERROR for f in findings)
    return d.ranks_heard.findings(decided, d.progress.after if d.progress is not None else None)


def settings_shown(d: Diagnosis, findings: list[Finding]) -> list[Finding]:
    """What the log's start-up lines show of the job's setting where no line names it a failure: GPUs found and left
    unused, or a thread's title that says so beside a log that decides nothing (knowledge/gpus_unused.py); NCCL's sockets
    on the loopback in a job across machines (knowledge/nccl_loopback.py)."""
    decided = bool(d.ended) or any(f.severity is Severity.ERROR or f.id in AGREED and f.severity is Severity.WARN for f in findings)
    out = d.gpus_unused.findings(bool(d.ended), decided) if d.gpus_unused is not None else []
    return out + (d.nccl_loopback.findings() if d.nccl_loopback is not None else [])


def numbers_shown(d: Diagnosis) -> list[Finding]:
    """What the run's progress lines show in their numbers where no line names it: a loss that grows by orders of
    magnitude (knowledge/progress.py `Progress.diverging`); info where the log shows the run ended."""
    if d.progress is None:
        return []
    out = [f for f in (stuck_at_zero(d, z) for z in zero_throughout(d.progress)) if f is not None]
    grew = d.progress.diverging()
    if grew is None:
        return out
    key, (at, low, first), (line, high, last) = grew
    return out + [LOSS_DIVERGING(severity=Severity.INFO if d.ended else Severity.WARN,
                                 evidence={"loss": key, "from": f"line {at}: {first}", "to": f"line {line}: {last}"},
                                 key=key, low=f"{low:.3g}", high=f"{high:.3g}", factor=f"{high / low:.2g}")]


def stuck_at_zero(d: Diagnosis, zero: Zero) -> Optional[Finding]:
    """`stuck-at-zero`: a quantity the run logs as exactly 0 throughout (knowledge/run_numbers.py); None for a loss that a
    pattern already reads as not finite (Trainer's 0.0, loss-not-finite)."""
    if zero.case == "loss" and any(f.id == "loss-not-finite" for f in d.findings()):
        return None
    evidence: dict = {"value": zero.key, "lines": zero.count, "first": f"line {zero.first[0]}: {zero.first[1]}",
                      "last": f"line {zero.last[0]}: {zero.last[1]}"}
    if zero.beside:
        evidence["beside"] = ", ".join(zero.beside)
    # (an accuracy of 0 is also what a regression's accuracy metric always logs: a note, never the answer's head)
    return STUCK_AT_ZERO(case=zero.case, evidence=evidence, value=zero.key, count=zero.count, first=zero.first[0], last=zero.last[0],
                         severity=Severity.INFO if zero.case == "accuracy" else None)


def verdict_place(findings: list[Finding]) -> int:
    """Where the answer for a log with no error goes: before the first notice (a harmless line, an
    info reading) or a GPU setting a snapshot shows (SNAPSHOT_SETTINGS), so that the answer leads and
    torchrun's OMP_NUM_THREADS notice, or MIG being on, never reads as the headline of a cut log or a
    healthy job's table; after the warnings, which may be what the run suffered."""
    for i, f in enumerate(findings):
        if f.severity.rank < Severity.WARN.rank or f.evidence.get("role") == "harmless" or f.id in SNAPSHOT_SETTINGS:
            return i
    return len(findings)


def no_failure(d: Diagnosis, smi: NvidiaSmiReader, folder: bool) -> Finding:
    """No failure in the input: healthy only when it also shows the run ending well;
    otherwise it does not decide, and says what would. A GPU tool's output with no
    fault in it does not decide either: it shows the GPUs, not the job."""
    ended = d.ended
    stale = [f for f in d.findings() if "earlier_attempt" in f.evidence]
    if stale and not folder:
        # every failure shown was an earlier attempt's: what the command run again printed decides, and it shows none
        # (nor is it healthy: the paste may end before the rerun's own failure or end)
        attempt = stale[0].evidence["earlier_attempt"]
        return LOG_INCONCLUSIVE(case="rerun", evidence={"lines": d.lines, "earlier attempt": f"line {stale[0].evidence.get('first_line')}: {stale[0].title}",
                                                        "run again": f"line {attempt['run_again_at']}: {attempt['again']}"},
                                lines=d.lines, first=stale[0].evidence.get("first_line"), again=attempt["run_again_at"],
                                # (line 0: the paste starts in the run's output, and shows only the script its traceback names)
                                ran=f"the command at line {attempt['line']}" if attempt["line"] else f"{attempt['command']}, where it was raised,")
    restarted = [f for f in d.findings() if "earlier_run" in f.evidence]
    if restarted and not folder:
        # every failure shown is an earlier run's: the program started again after it (a log several runs were appended
        # to), and the later run shows none; it ended, or another of its lines decides (a warning): never healthy (exit 0)
        # beside a failure the same file holds, and not that failure's error either
        again = restarted[0].evidence["earlier_run"]
        shown = {"ended": f"line {d.ended_line}: {ended}"} if ended else {}
        return LOG_INCONCLUSIVE(case="restarted", evidence={"lines": d.lines, "earlier run": f"line {restarted[0].evidence.get('first_line')}: {restarted[0].title}",
                                                            "started again": (f"line {again['started_again_at']}: {again['opening']}" if again["opening"] in RESTART_HOW
                                                                              else f"line {again['started_again_at']}, a line an earlier run opened with: {again['opening']}"), **shown},
                                lines=d.lines, first=restarted[0].evidence.get("first_line"), again=again["started_again_at"],
                                end=f"it ends (line {d.ended_line})" if ended else "it shows no end",
                                how=RESTART_HOW.get(again["opening"], "its opening lines stand again"))
    went = [f for f in d.findings() if "went_on" in f.evidence]
    if went and not folder:
        # every failure shown is one the job went on past (a library's fallback, progress after the last failure): not
        # the run's end, and not healthy either (exit 0) beside a failure the log holds
        on = went[-1].evidence["went_on"]
        shown = {"ended": f"line {d.ended_line}: {ended}"} if ended else {}
        how = WENT_ON_SHOWN[on["how"]]
        return LOG_INCONCLUSIVE(case="went-on", fix_case=WENT_ON_FIX.get(on["how"]), evidence={"lines": d.lines, "failure": f"line {went[-1].evidence.get('first_line')}: {went[-1].title}",
                                                          "went on": f"line {on['at']}: {on['line']}", **shown},
                                lines=d.lines, first=went[-1].evidence.get("first_line"), how=how, at=on["at"],
                                end=f"it ends (line {d.ended_line})" if ended else "it shows no end")
    compared = [f for f in d.findings() if "other_setup" in f.evidence]
    if compared and not folder:
        # every failure shown stands before a sentence that says the output after it is a working setup's: that run shows
        # none, but it is not the failing setup's either, and it may be cut: the log does not decide
        said = compared[0].evidence["other_setup"]
        return LOG_INCONCLUSIVE(case="compared", evidence={"lines": d.lines, "other setup's failure": f"line {compared[0].evidence.get('first_line')}: {compared[0].title}",
                                                           "working run": f"line {said['line']}: {said['said']}"},
                                lines=d.lines, first=compared[0].evidence.get("first_line"), said=said["line"])
    contradicted = [f for f in d.findings() if "not_shown" in f.evidence]
    if contradicted and not folder:
        # every failure stands only on the reporter's words, and the output beside them shows a run that worked: neither
        # that error, nor healthy (knowledge/paste_parts.py)
        on = contradicted[0].evidence["not_shown"]
        return not_shown(d, Said(on["place"], on["line"], on["said"]), Worked(on["how"], 0, on["output"]), f"line {on['line']}: {contradicted[0].id}")
    fixed = [f for f in d.findings() if "said_fixed" in f.evidence]
    if fixed and not folder:
        # every failure shown is one the reporter's next words say is gone since or did not stop the job: what is left
        # shows no failure gpudoctor reads, and may be cut: the log does not decide
        said = fixed[0].evidence["said_fixed"]
        later = [f"line {n}: {text}" for n, text in lead_first([m for m in (*d.error_lines, *d.mention_lines) if m[0] > said["line"]])[:MENTIONS_KEPT]]
        evidence: dict[str, object] = {"lines": d.lines, "earlier error": f"line {fixed[0].evidence.get('first_line')}: {fixed[0].title}",
                                       "said fixed": f"line {said['line']}: {said['said']}"}
        if later:
            evidence["lines that speak of an error"] = later
        return LOG_INCONCLUSIVE(case="fixed", evidence=evidence,
                                lines=d.lines, first=fixed[0].evidence.get("first_line"), said=said["line"],
                                said_what="it is gone since, and goes on with another problem" if said["says"] == "gone" else SAID_WORDS[said["says"]])
    degraded = [f for f in d.findings() if f.id in DEGRADED_RUN and f.severity is Severity.WARN]
    if ended and degraded and not folder:
        # it reached its end, but its own lines say it went on degraded (a loss not finite, the CPU for the GPU): no
        # healthy verdict (exit 0) for it; the warning leads, the end is shown
        warned = degraded[0]
        return LOG_INCONCLUSIVE(case="degraded", evidence={"lines": d.lines, "ended": ended, "degraded": f"line {warned.evidence.get('first_line')}: {warned.id}"},
                                lines=d.lines, warning=warned.id, first=warned.evidence.get("first_line"))
    if d.signs.went_on and not folder:
        # an exception the program caught and went on from, or logged (knowledge/signs.py handled_after): no error of the
        # run's by itself, and no healthy run either (exit 0) beside it; the exception leads
        at, text, cls = d.signs.went_on[0]
        shown = {"ended": ended} if ended else {}
        return LOG_INCONCLUSIVE(case="handled", evidence={"lines": d.lines, "exception": f"line {at}: {text}", **shown},
                                lines=d.lines, exception=cls, first=at)
    idle = d.no_work.last if d.no_work is not None else None
    if idle is not None and not folder and (d.progress is None or d.progress.after(idle[0]) is None) and (ended or not d.error_lines):
        # the run's own line that it did no work (knowledge/no_work.py), and no progress after it: an end after it is no
        # evidence that it worked, and a log that stops there had nothing to work through
        shown = {"ended": f"line {d.ended_line}: {ended}"} if ended else {}
        return LOG_INCONCLUSIVE(case="no-work", evidence={"lines": d.lines, "no work": f"line {idle[0]}: {idle[1]}", **shown},
                                lines=d.lines, first=idle[0], shown=idle[1][:120],
                                after=f"the run ends after it (line {d.ended_line})" if ended else "nothing after it shows any")
    handled = {sign.line for sign in d.signs.signs if sign.claimed == HANDLED}  # an exception a fallback warning said was caught
    spoken = lead_first([seen for seen in (*d.error_lines, *d.mention_lines) if seen[0] not in handled and ends_in_failure(seen[1])])
    if ended and spoken and not folder:
        # an end beside lines that end on a failure word no rule reads (a step's status): the end may be one part's (torch elastic's
        # agent says its worker group SUCCEEDED while the script it ran reports a step [Failure], NVlabs/imaginaire#131): never
        # healthy (exit 0) beside them
        said = [f"line {n}: {text}" for n, text in spoken[:MENTIONS_KEPT]]
        return LOG_INCONCLUSIVE(case="ended-but", evidence={"lines": d.lines, "ended": ended, "lines that speak of an error": said},
                                lines=d.lines, count=len(spoken), first=min(n for n, _ in spoken))
    words = reported_failure(d) if ended and not folder else None
    completed = d.paste.completed((d.ended_line, ended))
    if words is not None and completed is not None:
        # the reporter's words report a failure, and the output's run completed: not shown, and not healthy either
        return not_shown(d, words, completed)
    if folder or ended:
        shown = {"ended": ended} if ended else {}
        return LOG_NO_FAILURE(case="log", evidence={"lines": d.lines, **shown}, lines=d.lines)
    quoting = {r.line for r in d.reported_unread}
    said = [f"line {r.line}, {REPORTED_PLACE[r.place]}: {r.text[:200]}" for r in d.reported_unread]
    if said and not [n for n, _ in d.error_lines if n not in quoting]:
        # the thread's own words quote the program's message, and no rule reads it: named as reported, what decides it said
        # (lines the log itself wrote at error level lead it: the log's own lines are the run's)
        first = d.reported_unread[0]
        spoken = lead_first([m for m in (*d.error_lines, *d.mention_lines) if m[0] not in quoting])[:MENTIONS_KEPT]
        others = {"lines that speak of an error": [f"line {n}: {text}" for n, text in spoken]} if spoken else {}
        return LOG_INCONCLUSIVE(case="reported", evidence={"lines": d.lines, "reported": said, **others}, lines=d.lines,
                                first=first.line, place=REPORTED_PLACE[first.place].split(" that ")[0], quoted=first.text[:120],
                                grep=shlex.quote(first.text[:60]))
    if d.build_cut is not None and not d.error_lines and not d.tool:
        # the input ends in a package build's (or pip install's) own progress lines, with no error: a build pasted cut before
        # its error line, which alone decides its cause (knowledge/build_cut.py); never a guessed cause
        cut = d.build_cut
        return LOG_INCONCLUSIVE(case="build-cut", fix_case=f"build-cut-{cut.what}", evidence={"lines": d.lines, "last build line": f"line {cut.line}: {cut.text}"},
                                lines=d.lines, first=cut.line, what=BUILD_CUT_WHAT[cut.what],
                                noun="a build" if cut.what == "build" else "an install")
    if d.tool or smi.snapshot(d.lines):
        shown = {"tool": d.tool} if d.tool else {}
        return LOG_INCONCLUSIVE(case="snapshot", evidence={"lines": d.lines, **shown}, lines=d.lines)
    # the launcher the log shows: how it shows each rank's own first error, which a cut log lacks
    under = f"; the log shows {d.launcher}: where the ranks' own output is not all here, {launcher_step(d.launcher)}" if d.launcher else ""
    if d.launcher and not d.nccl_info:
        under += NCCL_STEP
    under = platform_step(d) + under  # (first: the platform decides more than where the ranks' output went)
    shown = {"launcher": d.launcher} if d.launcher else {}
    advice = remedy_step(d.advised[2], d.advised[1]) if d.advised is not None else ""  # a line's own remedy leads (knowledge/remedy.py)
    if d.advised is not None:
        shown["advice"] = f"line {d.advised[0]}: {d.advised[1]}"
    if d.error_lines:
        reported = {"reported": said} if said else {}
        said = [f"line {n}: {text}" for n, text in d.error_lines]
        return LOG_INCONCLUSIVE(case="errors", evidence={"lines": d.lines, "error lines": said, **shown, **reported}, lines=d.lines,
                                count=d.error_count, first=d.error_lines[0][0], under_launcher=under, advice=advice)
    if d.mention_lines:
        leads = lead_first(d.mention_lines)[:MENTIONS_KEPT]
        said = [f"line {n}: {text}" for n, text in leads]
        return LOG_INCONCLUSIVE(case="mentions", evidence={"lines": d.lines, "lines that speak of an error": said, **shown},
                                lines=d.lines, count=d.mention_count, first=leads[0][0], under_launcher=under, advice=advice)
    return LOG_INCONCLUSIVE(case="log", evidence={"lines": d.lines, **shown, **progress_shown(d)}, lines=d.lines, under_launcher=under, advice=advice)


# What an undecided answer's evidence says of the run's own progress lines (knowledge/run_numbers.py `progress_seen`)
PROGRESS_KEYS = ("progress", "loss", "throughput", "would decide")
WOULD_DECIDE = ("whether the run failed: its end (the last lines, the exit status); whether its numbers are what they should "
                "be (a loss, an accuracy, a speed the thread expects): the same numbers from a reference run of the same "
                "configuration at the same step, or an evaluation of its checkpoint against a known-good one")


def progress_shown(d: Diagnosis) -> dict:
    """The run's progress as its own lines show it (lines that log a loss): how many and the last of them, the loss first
    -> last, the speed the last one prints, and what would decide a question about its numbers; {} where it prints none."""
    seen = progress_seen(d.progress)
    if seen is None:
        return {}
    out = {"progress": f"{seen.count} progress lines that log a loss, the last at line {seen.last[0]}: {seen.last[1]}"}
    if seen.loss:
        out["loss"] = seen.loss
    if seen.throughput:
        out["throughput"] = seen.throughput
    out["would decide"] = WOULD_DECIDE
    return out


# what the input's last lines show, by BuildCut.what
BUILD_CUT_WHAT = {"build": "a package build's own progress (files copied into build/, compile commands)",
                  "install": "pip's progress (packages collected, downloaded, built)"}


def reported_failure(d: Diagnosis) -> Optional[Said]:
    """The reporter's words that report a failure (knowledge/paste_parts.py `failure_said`), or None."""
    hang = d.said_hang.said if d.said_hang is not None else None
    title_fails = d.paste.title is not None and title_reports_failure(d.paste.title[1])
    reports = [(r.line, r.place, r.text) for r in d.reported_at.values()]
    return failure_said(d.paste, title_fails, hang, reports)


def not_shown(d: Diagnosis, said: Said, worked: Worked, finding: str = "") -> Finding:
    """log-inconclusive case `not-shown`: the reporter's words report a failure that the output does not show, beside
    output that shows a run that worked; what would show it (the failing run's own output; for a hang, the kernel's log)."""
    shown = {"finding": finding} if finding else {}
    return LOG_INCONCLUSIVE(case="not-shown", fix_case="not-shown-hang" if said.hang else None,
                            evidence={"lines": d.lines, "reported": said.show(), "output": worked.show(), **shown},
                            place=said.show().split(": ", 1)[0], output=worked.show()[:160], how=WORKED_HOW[worked.how])


def platform_step(d: Diagnosis) -> str:
    """What an undecided log's fix adds where torch elastic's note shows the job was launched on Windows or macOS
    (knowledge/patterns/classes22d.py); '' without the note."""
    note = next((f for f in d.findings() if f.id == PLATFORM_NOTE), None)
    return no_nccl_here(note.evidence.get("first_line")) if note is not None else ""


# The undecided answers a reporter's sentence that the run hangs decides: a log with no failure and no end (its lines
# set-up or steps, error-level lines or words no rule reads, a GPU tool's table of the hung job), or one whose every error
# the reporter said is gone before going on with the problem left (the hang is that problem when the sentence comes after).
HANG_DECIDES = ("log", "errors", "mentions", "snapshot", "fixed")


def said_hang(d: Diagnosis, answer: Finding) -> Optional[Finding]:
    """`log-said-hang`: the reporter says the run hangs (knowledge/said_hang.py) beside a log the answer leaves undecided,
    at the stage where the log stops (hang/stage.py); None otherwise."""
    from gpudoctor.hang.stage import stage

    said = d.said_hang.said if d.said_hang is not None else None
    if said is None or answer.id != LOG_INCONCLUSIVE.id or undecided_case(answer) not in HANG_DECIDES:
        return None
    fixed = [f.evidence["said_fixed"]["line"] for f in d.findings() if "said_fixed" in f.evidence]
    if fixed and said[0] <= max(fixed):
        return None  # the hang is said before the error's fix: the problem left is another
    # (a GPU tool's table beside the sentence shows the GPUs, not where the job's own log stopped)
    hang = d.said_hang
    server = hang.server if hang is not None else None
    stopped = stage([] if d.tool or hang is None else hang.shown(), said, server is not None)
    evidence: dict[str, object] = {"said": f"line {said[0]}: {said[1]}", "stage": stopped.stage}
    last = stopped.line
    if last is not None and stopped.whose == "log":
        evidence["last line"] = f"line {last[0]}: {last[1][:300]}"
    detail = stopped.detail
    key = {"training": "step", "rendezvous-partial": "joined", "rendezvous-all": "joined", "extension-build": "extensions root"}.get(stopped.stage)
    key = key or ("set-up at" if stopped.stage.endswith(("setup-at", "setup-said")) else "cut" if stopped.stage.endswith("cut") else "")
    if detail and key:
        evidence[key] = detail
    if server is not None:
        evidence["server"] = f"line {server[0]}: {server[1]}"
    return LOG_SAID_HANG(case=stopped.stage, evidence=evidence, said=said[0], last=last[0] if last else 0,
                         joined=detail, step=detail, at=detail, cut=detail,
                         shown="the log's" if stopped.whose == "log" else "the reporter's words,")


# The evidence kinds of an unrecognised failure that show only where it happened, not what it was: a traceback cut before
# its exception line, its frames alone, a native stack or a C++ backtrace cut before its message
CUT_KINDS = ("tbheader", "richcut", "frames", "cppframes", "nativeframes")


def said_oom(d: Diagnosis, answer: Optional[Finding], head: Optional[Finding]) -> Optional[Finding]:
    """`log-said-oom`: the reporter says the run ran out of GPU memory (knowledge/said_oom.py) beside a log the answer
    leaves undecided (`answer`), or whose failure is an unrecognised traceback cut before its message (`head`); None
    otherwise."""
    said = d.said_oom.said if d.said_oom is not None else None
    if said is None:
        return None
    evidence: dict[str, object] = {"said": f"line {said[0]}: {said[1]}"}
    if answer is not None and answer.id == LOG_INCONCLUSIVE.id and undecided_case(answer) in HANG_DECIDES:
        return LOG_SAID_OOM(case="undecided", evidence=evidence, said=said[0])
    cut = head is not None and head.id == UNRECOGNISED_FAILURE.id and (
        head.evidence.get("kind") in CUT_KINDS or "cut" in str(head.evidence.get("what", "")))
    if head is None or not cut:
        return None
    at = head.evidence.get("first_line", "")
    return LOG_SAID_OOM(case="cut", evidence={**evidence, "traceback": f"line {at}"}, said=said[0], at=at)


def undecided_case(answer: Finding) -> str:
    """The case of a `log-inconclusive` answer of `no_failure`, told by its evidence's keys (each case has its own)."""
    keys = set(answer.evidence)
    if "said fixed" in keys:
        return "fixed"
    if "error lines" in keys:
        return "errors"
    if "tool" in keys or answer.title.startswith("no GPU fault"):
        return "snapshot"
    if "lines that speak of an error" in keys and "ended" not in keys:
        return "mentions"
    return "log" if keys <= {"lines", "launcher", *PROGRESS_KEYS} and answer.title.startswith("no failure in these") else "other"


READ_ERRORS = (OSError, EOFError, ValueError)


def outcome_report(path: str, verdict: FolderVerdict, data: dict) -> Report:
    """The report on a run folder with outcome.json: the live report's findings about
    how the job ended, its root cause and its ranks, as `--json` gave them then."""
    result, job = verdict.result, verdict.job
    findings = list(verdict.findings)
    data.update(
        outcome=OUTCOME_FILE,
        sources=[os.path.relpath(o.stderr_path, path) for o in result.ranks],
        root_cause=job.root_cause,
        ranks=[dataclasses.asdict(r) for r in job.ranks],  # the same records as the live --json (hang/verdict.RankRecord)
    )
    if not any(f.severity in (Severity.ERROR, Severity.WARN) for f in findings):
        findings.append(LOG_NO_FAILURE(case="outcome", ranks=len(result.ranks)))
    if verdict.not_read:
        data["not_read"] = [{"path": rel, "why": reason} for rel, reason in verdict.not_read]
        findings.append(files_not_read(list(verdict.not_read), 0))
    return Report("diagnose", tuple(findings), data)


def read_log(
    target: Target, d: Diagnosis, stream: Optional[BinaryIO] = None, smi: Optional[NvidiaSmiReader] = None
) -> tuple[str, Diagnosis, NvidiaSmiReader]:
    """A file or standard input, streamed through the diagnosis. An empty one is an
    InputError: 'no known failure in 0 lines' would read as healthy. Returns '' or,
    for a compressed log damaged part way, 'read only in part (why)'; and the diagnosis
    (and nvidia-smi reader) of the reading that explains the log (`second_reading`)."""
    smi = smi or NvidiaSmiReader()  # and the nvidia-smi reader sees every line too
    tail = Tail()  # and the end of the input is kept: does the log show its run ending?
    launchers = LauncherSeen()  # and the launcher it shows: how to see a failing rank's own error under it

    smi_reader = smi

    def reader_feed(chunk: bytes) -> None:
        smi_reader.feed(chunk)
        launchers.feed(chunk)

    prompts = Prompts()  # and the commands typed at a shell prompt: a failure of an attempt run again is stale
    openings = Openings()  # and the input's opening lines standing again: a failure before a run started anew is an earlier run's
    run_starts = RunStarts()  # and where a run starts again as its own lines show: a process failing at its start, a scheduler's next job
    progress = Progress()  # and the run's progress: a failure the job went on past is not the run's end
    said_fixed = SaidFixed()  # and a person's sentences that say an error before them is fixed since or did not stop the job
    ranks = RanksHeard()  # and the ranks the log says the job has: taken twice, each alone, never heard
    said_hang = SaidHang()  # and the reporter's sentence that the run hangs, with the log's lines around it
    said_oom = SaidOom()  # and the reporter's words that the run ran out of GPU memory
    gpus_unused = GpusUnused()  # and a framework's start-up line that GPUs are there and unused, and what the job asked for
    loopback = NcclLoopback()  # and NCCL's sockets on the loopback, and the machines the log shows
    reported = Reported()  # and the errors the thread's title and its people's sentences quote
    setting = SettingSeen()  # and the settings it shows: WSL, a cluster, a pod, Ray, an inference engine, another program's kernel
    forks = ForkSeen()  # and a process that forks: CUDA's initialization error is a forked child's only beside it
    no_work = NoWork()  # and the run's own line that it did no work: an end after it is no evidence that it worked
    feed = no_work.tee(forks.tee(said_oom.tee(setting.tee(reported.tee(loopback.tee(gpus_unused.tee(said_hang.tee(ranks.tee(progress.tee(said_fixed.tee(openings.tee(run_starts.tee(prompts.tee(tail.tee(reader_feed)))))))))))))))
    damage = ""
    what = {"stdin": "standard input", "text": "the text"}.get(target.kind, target.path)
    try:
        if target.kind == "stdin" and stream is None:
            unpacked = decompressed(sys.stdin.buffer)  # `zcat`-free: diagnose - < rank0.log.gz
            source = Normalised(unpacked, feed)
            lines = scan(source, d, "")
            damage = damaged(unpacked)
        elif target.kind != "file":
            source = Normalised(stream or sys.stdin.buffer, feed)
            lines = scan(source, d, "")
        else:
            with open_log(target.path) as f:
                source = Normalised(f, feed)
                lines = scan(source, d, "")
                damage = damaged(f)
    except BinaryInput:
        raise InputError(f"{'standard input is binary' if target.kind == 'stdin' else what + ' is a binary file'}, not a text log") from None
    except NotReadable as exc:
        raise InputError(f"{what}: {exc}") from None
    except FileRefused as exc:
        raise InputError(str(exc)) from None
    except READ_ERRORS as exc:
        raise InputError(f"cannot read {what}: {reading_error(exc)}") from None
    if lines == 0:
        raise InputError(f"{what} is {'a damaged archive' if damage else 'empty'}: there is no log to diagnose" + (f" ({damage})" if damage else ""))
    first = d
    d, smi = second_reading(source, d, smi)
    ranks.end()
    d.ranks_heard = ranks
    gpus_unused.end()
    d.gpus_unused = gpus_unused
    loopback.end()
    d.nccl_loopback = loopback
    setting.end()
    d.setting = setting.setting()
    forks.end()
    d.forks = forks
    no_work.end()
    d.no_work = no_work
    d.retell()
    (d.ended, d.ended_line), d.tool, d.launcher, d.nccl_info = tail.end(), tail.tool, launchers.launcher(), launchers.nccl_info
    d.build_cut = build_cut(tail.data, tail.newlines)
    if d is first:  # (a second reading numbers its joined lines otherwise)
        prompts.end()
        d.prompts = prompts
        openings.end()
        d.openings = openings
        run_starts.end()
        d.run_starts = run_starts
        d.retell()  # (told once already, to decide on a second reading: the story of earlier runs needs these readers)
        progress.end()
        d.progress = progress
        # a start-up probe's answer (git's "not a git repository") that the run went on past is no line that speaks of an error
        d.mention_lines, d.mention_count = went_past_probes(d.mention_lines, d.mention_count, lambda line: (
            progress.moved_after(line) is not None or d.ended_line > line or d.lines - line >= PROBE_WENT_ON))
        said_fixed.end()
        d.said_fixed = said_fixed
        said_hang.end()
        d.said_hang = said_hang
        said_oom.end()
        d.said_oom = said_oom
        reported.end()
        # the paste's parts, and what in its output shows a run that worked (knowledge/paste_parts.py)
        d.paste = reported.parts()
        if d.ended and d.ended_line in d.paste.words:
            # an end in the reporter's words (a thread's title "Training Complete, No PTH File or Training Log Visible", a
            # sentence) is what they say of the run, not the run's own line: only the output's end makes a run healthy
            # (RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2237, cocktailpeanut/fluxgym#247: set-up lines only)
            d.ended, d.ended_line = "", 0
        d.worked = d.paste.worked((d.ended_line, d.ended), smi.p2p_worked(), gpus_unused.answer)
        # (the log's own failure leads: the reporter's words are read as lines only where the log shows none)
        d.feed_reported(reported.reports, read=not any(f.severity is Severity.ERROR for f in d.findings()))
    return (f"read only in part ({damage})" if damage else ""), d, smi


def second_reading(source: Normalised, d: Diagnosis, smi: NvidiaSmiReader) -> tuple[Diagnosis, NvidiaSmiReader]:
    """A short paste whose long lines look cut at a window's width is read again with them joined,
    when the paste as it is names no known failure: the joined reading is taken when it names one
    on a line the joining made whole (two real lines put together make no known failure)."""
    if recognised(d) or (joined := source.second_reading()) is None:
        return d, smi
    import io

    d2, smi2 = Diagnosis(), NvidiaSmiReader()
    scan(Normalised(io.BytesIO(joined), smi2.feed), d2, "")
    if not recognised(d2):
        return d, smi
    if not made_by_joining(d2, joined, source.whole or b""):
        return d, smi
    d2.unwrapped_at = source.short_width
    return d2, smi2


def made_by_joining(d: Diagnosis, joined: bytes, paste: bytes) -> bool:
    """An error of `d` is on a line of the joined reading longer than any line of the paste."""
    from gpudoctor.commands.diagnose.paste import text_lines

    lines = text_lines(joined)
    longest = max(map(len, text_lines(paste)), default=0)
    for f in d.findings():
        n = f.evidence.get("first_line")
        if f.severity is Severity.ERROR and isinstance(n, int) and 0 < n <= len(lines) and len(lines[n - 1]) > longest:
            return True
    return False


def recognised(d: Diagnosis) -> bool:
    """The diagnosis names a known failure (not only an unrecognised one)."""
    return any(f.severity is Severity.ERROR and f.id != "unrecognised-failure" for f in d.findings())


def damaged(stream: object) -> str:
    """Why a decompressed log ended early (inputs.Salvaged), or ''."""
    error = getattr(stream, "error", None)
    return str(error) if error is not None else ""

def reading_error(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or f"{type(exc).__name__}: {str(exc)[:200]}"


def first_failure(d: Diagnosis, traced: Optional[Finding], from_files: Optional[dict]) -> Optional[dict]:
    """The first failing rank and node: from the log's story, unless the Flight
    Recorder dumps explain a log with no cause; the earliest error file names the rank."""
    root = d.root_cause()
    if traced is not None and (root is None or not d.has_cause()):
        root = {"id": traced.id, "reported_by": "Flight Recorder dumps"}
        held = str(traced.evidence.get("root cause", ""))
        if held.startswith("rank "):
            root["rank"] = int(held.split()[1])
    if from_files:
        # torchrun's error files date each rank's failure: the earliest names the rank
        root = {**(root or {}), **{k: v for k, v in from_files.items() if v is not None}}
    return root


def diagnose_folder(path: str, d: Diagnosis, data: dict) -> tuple[list[Finding], dict]:
    walked = run_folder.walk(path)
    if not walked.files and not walked.not_read:  # "healthy, 0 lines" would hide a wrong path
        raise InputError(f"{path}: no files in this folder (hidden ones are skipped); give a log file or a job's run folder")
    logs, errors = [], []
    not_read = list(walked.not_read)  # (relative path, why)
    refused: list[tuple[str, str]] = []  # pickles that name something to import: never loaded
    traces: dict[int, list] = {}
    for file in walked.files:
        rel = os.path.relpath(file, path)
        try:
            err = run_folder.read_error_file(file)
            if err is not None:
                errors.append(err)
                continue
            binary = run_folder.looks_binary(file)
            if binary or file.endswith(".json"):
                records = run_folder.read_trace(file)
                if records is not None:
                    traces[records[0].rank if records else len(traces)] = records
                    continue
        except RefusedPickle as exc:
            refused.append((rel, str(exc)))
            continue
        except run_folder.Malformed as exc:
            not_read.append((rel, str(exc)))
            continue
        except (OSError, ValueError) as exc:
            not_read.append((rel, f"cannot be read ({reading_error(exc)})"))
            continue
        logs.append(file)
    read_logs, empty = [], []
    for file in logs:
        rel = os.path.relpath(file, path)
        d.default_rank = run_folder.rank_of(file)
        try:
            with open_log(file) as f:
                lines = scan(f, d, rel)
                damage = damaged(f)
                if damage:
                    not_read.append((rel, f"read only in part ({damage})" if lines else f"a damaged archive ({damage})"))
                    if not lines:
                        continue
                elif lines == 0:
                    empty.append(rel)  # torchrun's stdout.log of a rank that printed nothing
                    continue
        except BinaryInput:
            not_read.append((rel, "binary, not a text log" + (" (a pickle)" if run_folder.starts_with(file, b"\x80") else "")))
            continue
        except NotReadable as exc:
            not_read.append((rel, str(exc)))
            continue
        except (FileRefused, *READ_ERRORS) as exc:
            not_read.append((rel, f"cannot be read ({reading_error(exc)})"))
            continue
        read_logs.append(file)
    logs = read_logs
    if walked.past_limit:
        more = f"{walked.past_limit:,}+" if walked.past_limit >= run_folder.MAX_COUNTED else f"{walked.past_limit:,}"
        not_read.append((f"{more} more file(s)", f"past the {run_folder.MAX_FILES:,}-file limit"))
    if not logs and not errors and not traces and not refused:
        raise InputError(f"{path}: nothing in this folder could be read ({unread_counts(not_read + [(e, 'empty') for e in empty])})")
    if empty:
        data["empty"] = empty
    extra: list[Finding] = []
    first = run_folder.first_failure(errors)
    for err in sorted(errors, key=lambda e: (e is not first, e.timestamp or 0)):
        d.default_rank = err.rank
        before = (d.hits, d.signs.count)
        d.feed([err.message, *err.callstack.splitlines()], os.path.relpath(err.path, path))
        if (d.hits, d.signs.count) == before:  # neither a pattern nor the failure detector read it: the rank's own words
            extra.append(rank_exception(err, path, err is first))
    d.default_rank = None
    if traces:
        extra = trace_findings(traces, d, errors) + extra
        data["flight_recorder_ranks"] = sorted(traces)
    data["sources"] = [os.path.relpath(f, path) for f in logs]
    data["error_files"] = [
        {"path": os.path.relpath(e.path, path), "rank": e.rank, "timestamp": e.timestamp, "message": e.message[:300]} for e in errors
    ]
    said = data.pop("outcome_not_read", "")  # gpudoctor's own outcome.json, there but unreadable: read as logs, and said
    if said:  # once, in the reader's words (the walk lists a link or a FIFO, the logs a binary file)
        not_read = [(OUTCOME_FILE, said.removeprefix(f"{OUTCOME_FILE}: "))] + [item for item in not_read if item[0] != OUTCOME_FILE]
    if not_read:
        data["not_read"] = [{"path": rel, "why": reason} for rel, reason in not_read]
        extra.append(files_not_read(not_read, walked.hidden))
    if refused:
        extra = [pickle_refused(rel, reason) for rel, reason in refused] + extra
    if first is not None:
        data["error_file_root_cause"] = {
            "rank": first.rank,
            "error_file": os.path.relpath(first.path, path),
            "timestamp": first.timestamp,
            "message": first.message[:300],
            "reported_by": "earliest torchrun error file",
        }
    return extra, data


def trace_findings(traces: dict[int, list], d: Diagnosis, errors: list) -> list[Finding]:
    """Flight Recorder dumps, one per rank, lined up by collective number (the
    hang doctor's analysis): a mismatch, a missing call, uneven work, a stall."""
    from gpudoctor.knowledge.collectives import RankState, analyze

    failed = {e.rank for e in errors if e.rank is not None} | d.ranks_with_cause()
    ranks = [RankState(r, tuple(recs), ended="failed" if r in failed else "") for r, recs in sorted(traces.items())]
    waited = d.timeout_seconds()
    found = analyze(ranks, stalled_s=waited if waited is not None else 0.0)
    if waited is None:  # the dumps do not say how long the job waited
        found = [dataclasses.replace(f, evidence={k: v for k, v in f.evidence.items() if k != "no progress for"}) for f in found]
    return found


def explained_by_trace(findings: list[Finding], traced: Finding) -> list[Finding]:
    """Consequences whose cause the log did not show are explained by what the traces show."""
    out = []
    for f in findings:
        if f.evidence.get("role") == "consequence" and "consequence_of" not in f.evidence:
            title = f.title.split(" (its cause is not in this log:", 1)[0]
            ev = {**f.evidence, "consequence_of": traced.id}
            f = dataclasses.replace(f, title=f"{title} (a consequence of {traced.id})", evidence=ev,
                                    severity=Severity.WARN if f.severity is Severity.ERROR else f.severity)
        out.append(f)
    return out


def rank_exception(err: run_folder.ErrorFile, base: str, first: bool) -> Finding:
    """An error file whose exception no pattern knows: still the rank's own failure."""
    who = f"rank {err.rank}" if err.rank is not None else "a rank"
    tail = [line for line in err.callstack.strip().splitlines() if line.strip()][-8:]
    return RANK_EXCEPTION(
        case="first" if first else "later",
        who=who,
        exception=err.message.split(":", 1)[0] or "an exception",
        path=os.path.relpath(err.path, base),
        evidence={
            "role": "cause" if first else "consequence",
            "rank": err.rank,
            "error_file": os.path.relpath(err.path, base),
            "message": err.message[:500],
            "traceback": "\n".join(tail),
        },
    )


def header(report: Report) -> Optional[str]:
    """One line naming the first failure, for the rich and Markdown views."""
    root = report.data.get("root_cause")
    if not root:
        return None
    who = []
    if root.get("rank") is not None:
        who.append(f"rank {root['rank']}")
    elif root.get("local_rank") is not None:
        who.append(f"local rank {root['local_rank']}")
    if root.get("node"):
        who.append(f"on {root['node']}")
    what = root.get("id") or root.get("description") or root.get("message", "")
    # what failed (the exception or signal), in which of the user's frames, and when, when the log says
    detail = ", ".join(x for x in (root.get("what"), f"at {root['frame']}" if root.get("frame") else "", root.get("time")) if x)
    if detail and what:
        what = f"{what}: {detail}"
    where = f"{root['source']}:{root['line']}" if root.get("source") and root.get("line") else (f"line {root['line']}" if root.get("line") else root.get("error_file") or root.get("where") or "")
    # a consequence that names no failing rank (no Root Cause block, no dump signal) is only
    # where the trouble first showed: the rank that printed it is a victim, not the culprit
    victim = root.get("role") == "consequence" and not root.get("reported_by") and root.get("timeout_ms") is None and not root.get("stage")
    lead = "first sign of the failure (its cause is in another rank's output): " if victim else "first failure: "
    if root.get("stage") == "bootstrap":  # lost while the ranks connect, no rank seen ending (knowledge/story.py BOOTSTRAP_LOSS_WHY)
        lead = "first sign of the failure (no rank is seen ending: the log does not decide its cause): "
    if victim and root.get("lead"):  # a line before it speaks of an error: never deny it
        lead = f"first sign of the failure (read {root['lead']} first: it speaks of an error before it): "
    return lead + " ".join(who + ([f"— {what}"] if what and who else [what] if what else [])) + (f" ({where})" if where else "")


def unread_counts(not_read: list[tuple[str, str]]) -> str:
    """'2 empty, 1 binary, not a text log': how many files for each reason."""
    counts: dict[str, int] = {}
    for _, said in not_read:
        reason = said.split(" (")[0].split(":")[0]
        counts[reason] = counts.get(reason, 0) + 1
    return ", ".join(f"{n} {reason}" for reason, n in counts.items())


SHOWN_UNREAD = 20


def files_not_read(not_read: list[tuple[str, str]], hidden: int) -> Finding:
    """What of the folder was left unread and why: said, so that 'no known failure' is
    never taken for the whole folder when part of it was not read."""
    evidence: dict = {rel: reason for rel, reason in not_read[:SHOWN_UNREAD]}
    if len(not_read) > SHOWN_UNREAD:
        evidence["and"] = f"{len(not_read) - SHOWN_UNREAD} more (the JSON output's data.not_read lists them all)"
    if hidden:
        evidence["hidden entries skipped"] = hidden
    return FILES_NOT_READ(evidence=evidence, count=len(not_read), reasons=unread_counts(not_read))


def pickle_refused(rel: str, reason: str) -> Finding:
    """A file named like a Flight Recorder dump that is a pickle naming something to import:
    loading it would run code. It is never loaded."""
    return PICKLE_REFUSED(
        evidence={"file": rel, "refused because": reason},
        file=rel,
        names=reason.removeprefix("it names ").split(",")[0],
        path=shlex.quote(rel),
    )
