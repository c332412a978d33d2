"""Controls and siblings for diagB22 (issue 35: never confidently wrong), two classes of wrong answers the judges found
on fresh data.

1. A line read out of its context: a traceback display shows the code of each frame (rich's box, `│ ❱ 126 │ ...`;
   IPython's `---> 12 ...`; better_exceptions' and loguru's marks of the values a line used, `│     └ 42`). Those rows
   are code and values, never what the program printed: `exc_map = {socket.timeout: ReadTimeout, OSError: ReadError}`
   in httpcore's source is no OSError (heldout21w row 77). The exception the box ends in is the failure.
2. A finding that asserts more than the line says: NCCL's "Connection closed by remote peer" while the ranks connect
   (its bootstrap, before the communicator exists) decides that another rank died only where the log shows one that did;
   otherwise a stray connection that hung up before NCCL's handshake (a port scan, a health check: NVIDIA/nccl#1612,
   fixed in NCCL 2.27.3) gives the same line, and the answer says what was seen and what decides it (heldout21 row 39).

`test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its
own. Lines are real ones from the development parts (their source beside them), cut short."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.commands.diagnose.analyse import header
from gpudoctor.core.findings import Severity


def errors(text: str) -> list:
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def cited(finding) -> str:
    return str(finding.evidence.get("log", "")) + str(finding.evidence.get("first_line", ""))


# heldout21w, https://github.com/MRBXCD/project_2026_1 (eval log): lighteval's dataset download timed out; rich's box shows
# httpcore's source, whose dict literal holds "OSError: ReadError}"
BOX_TOP = "╭─────────────────── Traceback (most recent call last) ───────────────────╮\n"
RICH_FRAMES = (
    "│ /venv/main/lib/python3.12/site-packages/httpcore/_backends/sync.py:126 in read                  │\n"
    "│                                                                                                 │\n"
    "│   123 │                                                                                         │\n"
    "│   124 │   def read(self, max_bytes: int, timeout: float | None = None) -> bytes:                │\n"
    "│   125 │   │   exc_map: ExceptionMapping = {socket.timeout: ReadTimeout, OSError: ReadError}     │\n"
    "│ ❱ 126 │   │   with map_exceptions(exc_map):                                                     │\n"
    "│   127 │   │   │   self._sock.settimeout(timeout)                                                │\n"
    "│                                                                                                 │\n"
    "│ /venv/main/lib/python3.12/site-packages/huggingface_hub/hf_file_system.py:653 in find           │\n"
    "│                                                                                                 │\n"
    "│    653 │   │   │   out = self._ls_tree(                                                         │\n"
    "│    656 │   │   except EntryNotFoundError:                                                       │\n"
)
BOX_BOTTOM = "╰─────────────────────────────────────────────────────────────────────────────────────────────────╯\n"
READ_TIMEOUT = "ReadTimeout: The read operation timed out\n"


class TestShownSourceIsCode:
    """Rows of a traceback's source display are code: the exception line after the display is the failure."""

    verdict = "shown-source-is-code"

    def test_control_a_source_row_naming_an_exception_is_not_one(self):
        found = errors(BOX_TOP + RICH_FRAMES + BOX_BOTTOM + READ_TIMEOUT)
        assert found and all("OSError" not in f.title and "EntryNotFound" not in f.title for f in found)
        assert all("ReadError}" not in cited(f) for f in found)
        assert "ReadTimeout" in found[0].title

    def test_control_a_box_cut_above_its_header_still_shows_code(self):
        # the paste starts inside the box: its numbered rows are code all the same
        found = errors(RICH_FRAMES + BOX_BOTTOM + READ_TIMEOUT)
        assert found and all("OSError" not in f.title for f in found)

    def test_control_ipython_arrow_row_is_code(self):
        # IPython's frame shows the line it ran; the exception line under the frames is the failure
        text = ("---------------------------------------------------------------------------\n"
                "ValueError                                Traceback (most recent call last)\n"
                "Cell In[3], line 4\n"
                "      2 x = load()\n"
                "      3 if x is None:\n"
                '----> 4     raise RuntimeError("CUDA error: out of memory")\n'
                "ValueError: could not convert string to float: 'abc'\n")
        found = errors(text)
        assert [f.id for f in found if f.id == "cuda-oom"] == []

    def test_control_loguru_value_marks_are_values(self):
        # heldout13 lyu-yx/ACUMEN#4: loguru marks the values of each frame's names; a value's repr is no message
        text = ('  File "/home/wsn/anaconda3/envs/wsn/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 130, in join\n'
                "    raise ProcessExitedException(\n"
                "          └ RuntimeError('CUDA error: out of memory')\n"
                "\n"
                "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL\n")
        assert "cuda-oom" not in [f.id for f in errors(text)]

    def test_sibling_the_exception_after_the_box_keeps_its_own_verdict(self):
        # the box ends in a known failure: that failure is named, from its own line
        oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
               "79.15 GiB of which 3.75 MiB is free.\n")
        found = errors(BOX_TOP + RICH_FRAMES + BOX_BOTTOM + oom)
        assert found and found[0].id == "cuda-oom"

    def test_sibling_a_box_cut_before_its_exception_keeps_the_running_code_as_the_hint(self):
        # dev5 huggingface/text-generation-inference#3005: the paste ends inside the box; the assert the innermost frame
        # ran is all the log shows of the failure, and it is read
        cut = ("text-generation-inference-1  | [rank1]: │ /usr/src/server/text_generation_server/utils/weights.py:275 in get_sharded   │\n"
               "text-generation-inference-1  | [rank1]: │   274 │   │   assert (                                                       │\n"
               "text-generation-inference-1  | [rank1]: │ ❱ 275 │   │   │   size % world_size == 0                                     │\n"
               'text-generation-inference-1  | [rank1]: │   276 │   │   ), f"The choosen size {size} is not compatible with sharding o │\n')
        assert [f.id for f in errors(cut)] == ["tensor-parallel-split-uneven"]

    def test_sibling_a_viewers_line_number_gutter_is_output(self):
        # a CI page's gutter ("12 │ ") before a line of output: the line is the program's, and is read
        found = errors("  12 │ torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
        assert [f.id for f in found] == ["cuda-oom"]


# heldout21, https://github.com/NVIDIA/nccl/issues/1612: a connection to the bootstrap socket closed before its magic
BOOTSTRAP_CLOSED = (
    "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>\n"
    "[0] NCCL INFO misc/socket.cc:80 -> 6\n"
    "[0] NCCL INFO misc/socket.cc:474 -> 6\n"
    "[0] NCCL INFO bootstrap.cc:701 -> 6\n"
    "[0] NCCL INFO init.cc:1402 -> 6\n"
    "[0] NCCL INFO group.cc:75 -> 6 [Async thread]\n"
)
# dev, https://github.com/huggingface/accelerate/issues/609: the IB transport's proxy thread, mid-run
PROXY_RESET = (
    "Genc-A100-VM:36759:36970 [0] include/socket.h:421 NCCL WARN Call to recv failed : Connection reset by peer\n"
    "Genc-A100-VM:36759:36970 [0] NCCL INFO transport/net_ib.cc:593 -> 2\n"
    "Genc-A100-VM:36759:36970 [0] NCCL INFO proxy.cc:198 -> 2 [Proxy Thread]\n"
)
# dev parts: torchrun's report of a rank the OOM killer ended
KILLED = ("E0823 12:22:36.795000 140348747958080 torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: -9) "
          "local_rank: 1 (pid: 273713) of binary: /home/u/anaconda3/envs/lf/bin/python\n")


class TestNcclPeerClosed:
    """A connection closed by the other end at NCCL's bootstrap: a peer's death only where the log shows it."""

    verdict = "nccl-peer-closed"

    def test_sibling_at_bootstrap_no_dead_peer_is_asserted(self):
        report = api.diagnose(BOOTSTRAP_CLOSED)
        found = [f for f in report.findings if f.id == "nccl-peer-closed"]
        assert found and found[0].severity is Severity.ERROR  # NCCL's set-up failed: the job stops
        f = found[0]
        assert f.evidence.get("stage") == "bootstrap"
        assert "crashed" not in f.why.split("Seen:")[-1].split(".")[0]
        assert "2.27.3" in f.fix and "other ranks" in f.fix
        assert "its cause is in another rank's output" not in (header(report) or "")

    def test_sibling_a_dead_peer_in_the_log_explains_it(self):
        found = api.diagnose(BOOTSTRAP_CLOSED + KILLED).findings
        closed = next(f for f in found if f.id == "nccl-peer-closed")
        assert "consequence_of" in closed.evidence and closed.severity is not Severity.ERROR

    def test_control_mid_run_loss_is_not_told_as_bootstrap(self):
        found = [f for f in api.diagnose(PROXY_RESET).findings if f.id == "nccl-peer-closed"]
        assert found and found[0].evidence.get("stage") is None and "2.27.3" not in found[0].title

    def test_control_a_healthy_bootstrap_gets_no_error(self):
        text = ("H20-GPU-05:1789224:1789224 [0] NCCL INFO Bootstrap : Using ibs1130f0:10.6.128.137<0>\n"
                "machine1:430863:430902 [2] NCCL INFO comm 0x7fe9cc000fa0 rank 2 nranks 8 cudaDev 2 busId 86000 - Init COMPLETE\n")
        assert errors(text) == []
