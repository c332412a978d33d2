"""A log line as users paste it -> the message, and the rank/node it came from.

Launchers and loggers wrap every line: `[rank3]:`, `[default0]:` (torchrun --tee),
`0: ` (srun --label), `[1,3]<stdout>:` (mpirun), `(RayTrainWorker pid=12, ip=10.0.0.5)`,
glog's `W1123 10:02:11.512000 48213 run.py:757] `, timestamps, NCCL's
`host:pid:tid [dev] `, ANSI colours, CRLF, and tqdm's carriage returns. They are
peeled off repeatedly (they nest) and what they say about the line's origin is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

MAX_LINE = 4000  # longer lines are cut (a progress bar without newlines, a dumped tensor)

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]")
BARE_ANSI = re.compile(r"^(?:\[\d{1,3}(?:;\d{1,3})*m)+\s?")  # ESC lost in a copy-paste: "[0m node1:..."

# A log pasted into Markdown or HTML: quoted ("> "), in bold ("**RuntimeError: ...**"), in a
# <pre>/<code> block or a code fence, with HTML entities. Peeled before the launcher prefixes.
# (diagB16) also the inline and block tags a page or a chat writes a message in (<em>, <i>, <tt>, <kbd>, <samp>, a list's
# <li>, a table's <td>, <blockquote>, a heading); not `<s>`, a tokenizer's start token in a language model's log.
HTML_TAGS = r"pre|code|details|summary|p|b|strong|span|div|em|i|u|tt|kbd|samp|li|ul|ol|td|th|tr|blockquote|h[1-6]"
# (A Python argument unpacked, **kwargs, is the line's own: no bold opens there.)
WRAP_HEAD = re.compile(r"^(?:\s*(?:>+ ?(?!>)|\"?\*\*(?![a-z_]\w*(?:\s*[,)\]}:=]|$))|```(?:[A-Za-z]+$)?|<(?:" + HTML_TAGS + r")\b[^>]*>))+")
WRAP_TAIL = re.compile(r"(?:\*\*\"?|```|</(?:" + HTML_TAGS + r")>|<br\s*/?>)+\s*$")
# A line break a page wrote as <br> inside one physical line: each piece is a line of its own.
HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)

# What starts a record worth unwrapping from a list's bullet or a viewer's line-number gutter: a traceback's
# head or frame, or an exception's or a warning's name (the text behind emphasis or inline code allowed).
RECORD_HEAD = r"[*_`]{0,3}(?:Traceback \(most recent call last\)|File \"|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit|Failure)\b)"
# A Markdown list's bullet before such a record ("- RuntimeError: ...", "* Traceback ...", "1. KeyError: ...").
# Only before a record: a list of prose or a YAML list keeps its dashes.
BULLET = re.compile(r"^\s*(?:[-*+\u2022\u2023\u25e6]|\d{1,3}[.)])\s+(?=" + RECORD_HEAD + ")")
# A gutter of line numbers a viewer (a CI page, an editor) copied with the text: "12 | ", "12\t", "12 \u2502 " (a
# table's first column, "0 | model | ResNet", loses only its number). A number and spaces alone is no gutter one line
# can tell (a gdb frame "9 0x00.. clone()", srun's "0: " label): those are left.
GUTTER = re.compile(r"^ {0,8}\d{1,6}(?: ?[|\u2502] |\t)")
# Markdown emphasis around a whole message: *...*, _..._, **...**, __...__, ***...*** (CommonMark: the opener is
# followed and the closer preceded by a non-space). The text's own stars and underscores are left: a name
# (__init__, **kwargs: no space inside), a product (a * b), a glob (*.py), glog's and glibc's "*** ... ***".
STARRED = r"(?P<s>\*{1,3})(?=[^\s*])(?P<inner_s>(?=[^\n]*\s)[^\n]*?[^\s*\\])(?P=s)"  # the inner text holds a space
UNDERSCORED = r"(?P<u>_{1,3})(?=[^\s_])(?P<inner_u>(?=[^\n]*\s)[^\n]*?[^\s_\\])(?P=u)"
EMPHASIS = re.compile(f"^(?:{STARRED}|{UNDERSCORED})" + r"(?P<end>[.,:;!?]?)$")
# Emphasis opened on this line and closed on a later one (an italic traceback): the opener before a record's head
EMPHASIS_OPEN = re.compile(r"^(?:\*{1,3}|_{1,3})(?=(?:Traceback \(most recent call last\)|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Interrupt)\b))")
# ... and closed on this one, opened on an earlier one: an exception's line ending in the closer ("...: x_", "...: x*")
EXCEPTION_HEAD = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Interrupt)\b:")
EMPHASIS_CLOSE = re.compile(r"(?<=[^\s*_\\./])(?:\*{1,3}|_{1,3})$")  # not a glob's "model.*", "dir/*"
DUNDER_END = re.compile(r"\b__\w+__$")  # a name's own underscores: "... attribute __len__"
ENTITIES = {"&gt;": ">", "&lt;": "<", "&quot;": '"', "&#39;": "'", "&#x27;": "'", "&amp;": "&", "&nbsp;": " "}
# named ones above, and numeric ones as HTML pages write any character (&#34; &#x2F;)
ENTITY = re.compile("|".join(ENTITIES) + r"|&#(?:\d{2,5}|x[0-9a-fA-F]{2,4});")


URL_ESCAPE = re.compile(r"%([2-7][0-9A-Fa-f])")  # printable ASCII only
# (diagI33) an apostrophe a paste escaped inside a word, as a repr or a JSON string writes it ("doesn\'t": heldout32
# huggingface/accelerate#141's "Distributed package doesn\'t have NCCL built in"); a path's backslash before a quote stays
ESCAPED_APOSTROPHE = re.compile(r"(?<=[A-Za-z])\\'(?=[A-Za-z])")


def entity(m: re.Match) -> str:
    code = m.group(0)
    if code in ENTITIES:
        return ENTITIES[code]
    value = int(code[3:-1], 16) if code[2] in "xX" else int(code[2:-1])
    return chr(value) if 32 <= value < 0x110000 and not 0xD800 <= value < 0xE000 else code

# (regex, what its named groups mean); applied at the start of the line until none matches.
PREFIXES = [
    re.compile(r"^\((?:(?P<actor>[\w.]+) )?pid=\d+(?:, ip=(?P<node>[\d.:a-f]+))?\)\s*"),  # Ray: "(RayWorker pid=12, ip=..)", "(pid=12)"
    # pdsh / deepspeed multi-node: "worker-1: " before a rank prefix, a timestamp or an NCCL line
    re.compile(r"^(?P<node>[A-Za-z][\w.\-]*): (?=\[rank\d|\[default\d|\[\d{4}-|\[[IWEF]\d|[\w.\-]+:\d+:\d+ \[\d+\])"),
    # sglang: "[2025-01-30 18:11:27 TP1] " (the tensor-parallel rank on this node)
    re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: (?:DP|TP|PP|EP)(?P<local_rank>\d+))+\]\s?"),
    re.compile(r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?,?\s*"),
    re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\s+"),  # syslog / journalctl: "Jul 13 21:22:34 "
    re.compile(r"^[0-9a-f]{8} (?:\[rank=(?P<rank>\d+)\] )?\|\|\s?"),  # Determined: "fa88a9df [rank=1] || "
    re.compile(r"^\[pod/(?P<node>[\w.\-]+)/[\w.\-]+\]\s"),  # kubectl logs --prefix
    re.compile(r"^(?P<node>[A-Za-z][\w.\-]*-\d+)\s+\|\s"),  # docker compose: "trainer-1  | "
    re.compile(r"^\s*\|\s+"),  # a log pasted as a table (CloudWatch, Markdown): "  | "
    re.compile(r"^\d\d:\d\d:\d\d[.,]\d+\s+"),
    re.compile(r"^std(?:err|out): (?=\S|  )"),  # a subprocess's output relayed by its parent (accelerate test, pytest)
    # a process's own stderr or stdout written line by line through a logger (FastChat's StreamToLogger, copied by LLaVA, Hunyuan3D's
    # api_server: "2025-03-19 10:46:16 | ERROR | stderr |   File ..."): the stream's own line, a traceback's frame included
    re.compile(r"^(?:ERROR|WARNING|INFO|DEBUG|CRITICAL) \| std(?:err|out) \| (?=\S|  )"),
    re.compile(r"^\[(?:\d{4,7})\]\s+(?=\[)"),  # a pid before another prefix
    re.compile(r"^\[rank(?P<rank>\d+)\]:?\s?"),
    re.compile(r"^\[default(?P<local_rank>\d+)\]:\s?"),
    re.compile(r"^\[[A-Za-z_]+(?P<rank>\d+)(?:\|\d+)?\]:\s?"),  # [trainer3]:, [worker0|0]:
    re.compile(r"^\[\d+,(?P<rank>\d+)\]<std(?:out|err)>:\s?"),  # mpirun --tag-output
    re.compile(r"^\s*(?P<rank>\d{1,5}): "),  # srun --label
    re.compile(r"^\[(?P<rank>\d{1,5})\] (?=\S)"),
    # glog, as torch's C++ and torchrun's Python loggers write it
    re.compile(r"^\[?[IWEF]\d{3,4} \d\d:\d\d:\d\d\.\d+(?: +\d+)? [^\]\s]+:\d+\]\s?"),
    re.compile(r"^\[[IWEF] [^\]]*:\d+\]\s?"),
    re.compile(r"^(?:ERROR|WARNING|INFO|DEBUG|CRITICAL): ?[\w.]+:(?=\S)"),
    # vLLM / sglang: "ERROR 09-25 06:40:46 multiproc_worker_utils.py:226] ", "... [multiproc_executor.py:912] "
    re.compile(r"^(?:ERROR|WARNING|INFO|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.]+:\d+\]\]?\s?"),
    # TorchX: "trainer/0 [1]:" (role/replica [local rank])
    re.compile(r"^[\w\-]+/\d+ \[(?P<local_rank>\d+)\]:\s?"),
    re.compile(r"^[\w.]+: \[(?:WARNING|ERROR|INFO|DEBUG)\]\s*"),
    # NCCL: host:pid:tid [cuda device]
    re.compile(r"^(?P<node>[A-Za-z0-9_.\-]+):\d+:\d+ \[(?P<device>\d+)\] "),
]
# All prefixes as one alternation (tried in list order, as a loop over PREFIXES would): the outer
# group p<i> names the prefix that matched, its own groups are renamed <name>_<i>.
GROUP_NAME = re.compile(r"[(][?]P<(\w+)>")


def numbered(i: int, pattern: str) -> str:
    return f"(?P<p{i}>" + GROUP_NAME.sub(lambda g: f"(?P<{g.group(1)}_{i}>", pattern) + ")"


ANY_PREFIX = re.compile("|".join(numbered(i, p.pattern) for i, p in enumerate(PREFIXES)))
PREFIX_GROUPS = {f"p{i}": [(f"{name}_{i}", name) for name in p.groupindex] for i, p in enumerate(PREFIXES)}
# A traceback quotes the source line that raised: `raise RuntimeError(f"NCCL error: {e}")` is code,
# not a message (the message itself follows on the exception's own line).
SOURCE_LINE = re.compile(r"^(?:raise|return|assert|elif|if|except|print|warnings\.warn|log(?:ger)?\.\w+)\b[ (]")
# Other lines that are code, not output, in a script or a shell session a thread pastes (bigcode-project/starcoder#86:
# https://github.com/bigcode-project/starcoder/issues/86, `os.environ['MASTER_PORT'] = '9994' # modify if RuntimeError:
# Address already in use` in the user's finetune.py was read as the store's error): a Python assignment of a literal or a
# call (`x = "..."`, `os.environ['X'] = '1'`; a shell's `X=1 cmd` has no spaces and no subscript, and stays a command), a
# call statement with a comment after it, a docstring's line, a shell's echo, export or #! line, an import, a def or a class line. Their words are what the program would
# print or what its author wrote about it, not what this run printed.
CODE_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*(?:\[[^\]]*\])+\s*|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s+)[-+*/|]?=(?!=)\s*(?:[rbfu]{0,2}[\"'\[{(]|[A-Za-z_][\w.]*\()"
    r"|^[A-Za-z_][\w.]*\(.*\)\s*#\s"
    r"|^[rbfu]?(?:\"\"\"|\'\'\')"
    r"|^echo\s+[\"'$\w-]|^export\s+[A-Za-z_]\w*=|^#!/"
    r"|^(?:import\s+[\w.]+(?:\s+as\s+\w+)?\s*(?:#|$)|from\s+[\w.]+\s+import\s|def\s+\w+\s*\(|class\s+\w+\s*[(:])"
)
IN_TEXT_RANK = re.compile(r"\[(?:PG [^\]]*?)?Rank (?P<rank>\d+)\]|(?<![\w-])rank(?:\s*:|=)\s*(?P<rank2>\d+)")
IN_TEXT_LOCAL = re.compile(r"\blocal_rank: (?P<local_rank>\d+)|--local[_-]rank=(?P<arg>\d+)")


WRAPPED = ">*`<\""


@dataclass(frozen=True)
class LogLine:
    """One message with where it came from (None: the line does not say)."""

    text: str
    rank: Optional[int] = None
    local_rank: Optional[int] = None
    node: Optional[str] = None

    def is_source(self) -> bool:
        """A line of Python source quoted by a traceback, or of a script or shell session pasted (CODE_LINE)."""
        return SOURCE_LINE.match(self.text) is not None or CODE_LINE.match(self.text) is not None

    def where(self) -> str:
        parts = []
        if self.rank is not None:
            parts.append(f"rank {self.rank}")
        elif self.local_rank is not None:
            parts.append(f"local rank {self.local_rank}")
        if self.node:
            parts.append(self.node)
        return ", ".join(parts)


def strip(raw: str) -> LogLine:
    """One physical segment -> its message and origin."""
    if len(raw) > MAX_LINE:  # keep the head (prefixes) and the tail (an error printed after a bar)
        raw = raw[: MAX_LINE // 4] + " \u2026 " + raw[-(MAX_LINE * 3 // 4) :]
    text = (ANSI.sub("", raw) if "\x1b" in raw else raw).rstrip("\r\n")
    if text[:1] == "[":
        text = BARE_ANSI.sub("", text)
    if text[:1] in "*_":  # a whole line in emphasis first: "***(Actor pid=1) ...***" is no bold opened before a star
        text = unemphasised(text)
    if text[:1] in WRAPPED or text[:2] == "  " and text.lstrip()[:1] in WRAPPED:
        text = WRAP_HEAD.sub("", text)
    if text[:1] in MARKED or text[:2] == "  " and text.lstrip()[:1] in MARKED:
        text = unmarked(text)
    text = unquoted(text)
    if "&" in text:
        text = ENTITY.sub(entity, text)
        if text[:1] in ">`<":  # markup a page escaped with the text: "&gt; _RuntimeError: ..._" is a quote
            text = unquoted(unmarked(WRAP_HEAD.sub("", text)))
    if "\\'" in text:
        text = ESCAPED_APOSTROPHE.sub("'", text)
    if "%20" in text and " " not in text.strip():  # a line copied out of a URL: every space written %20
        text = URL_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    rank = local_rank = None
    node = None
    piped = text.lstrip()[:2] == "| "  # a one-cell table row "| RuntimeError: ... |": its closing pipe goes too
    if text[:1] in " \t" and text.lstrip(" \t")[:1] in "[(":
        text = text.lstrip(" \t")  # an indented paste (a Markdown code block): the prefix is after the indent
    for _ in range(8):
        m = ANY_PREFIX.match(text)  # the first prefix (in list order) that matches, found in one call
        if m is None or m.end() == 0 or m.lastgroup is None:
            break
        g = {short: m.group(full) for full, short in PREFIX_GROUPS[m.lastgroup]}
        if g.get("rank") is not None and rank is None:
            rank = int(g["rank"])
        if g.get("local_rank") is not None and local_rank is None:
            local_rank = int(g["local_rank"])
        if g.get("device") is not None and local_rank is None:
            local_rank = int(g["device"])
        if g.get("node") and node is None:
            node = g["node"]
        text = text[m.end() :]
    if text[:1] in "`<" or text[:2] == "**" and text[2:3] != "*":  # Markdown inside a launcher's prefix: "[rank0]: `RuntimeError: ...`"
        text = unquoted(WRAP_HEAD.sub("", text))  # (glog's "*** SIGBUS" is no Markdown)
    if piped and text[-1:] == "|" and text.count("|") == 1:
        text = text[:-1].rstrip()
    if text[:1] in "*_" or text[-1:] in "*_":  # emphasis inside a launcher's prefix: "[rank0]: _RuntimeError: ..._"
        text = unemphasised(text)
    if rank is None and "ank" in text:
        m = IN_TEXT_RANK.search(text)
        if m:
            rank = int(m.group("rank") or m.group("rank2"))
    if local_rank is None and "local" in text:
        m = IN_TEXT_LOCAL.search(text)
        if m:
            local_rank = int(m.group("local_rank") or m.group("arg"))
    return LogLine(text.strip(), rank, local_rank, node)


MARKED = "*_-+0123456789\u2022\u2023\u25e6"  # what a line with a bullet, a gutter or emphasis starts with


def unmarked(text: str) -> str:
    """The text without a list's bullet, a viewer's line-number gutter or Markdown emphasis around it (diagB16: a paste
    that writes its error in italics, `_RuntimeError: ... backend gloo_`, meituan/YOLOv6#361)."""
    m = GUTTER.match(text) or BULLET.match(text)
    if m:
        text = text[m.end() :].lstrip()
    return unemphasised(text)


def unemphasised(text: str) -> str:
    """The text without Markdown emphasis around it, or opened or closed on it (an italic span over several lines)."""
    body = text.strip()
    if body[:1] in "*_":
        m = EMPHASIS.match(body)
        if m:
            return (m.group("inner_s") or m.group("inner_u")) + m.group("end")
        m = EMPHASIS_OPEN.match(body)
        if m:
            body = body[m.end() :]
            return body[: -len(c.group(0))] if (c := EMPHASIS_CLOSE.search(body)) and not DUNDER_END.search(body) else body
    if body[-1:] in "*_" and EXCEPTION_HEAD.match(body) and not DUNDER_END.search(body):
        c = EMPHASIS_CLOSE.search(body)
        if c and body.count(c.group(0)[0]) % 2 == 1 or c and c.group(0)[0] == "_":
            return body[: c.start()]
    return text


def unquoted(text: str) -> str:
    """The text without the Markdown that ends it (bold, a fence) or holds it as inline code."""
    if text[:1] in " \t" and text.lstrip()[:1] == "`":
        text = text.lstrip()  # inline code in an indented block
    if text[-1:] in "*`>\"":
        text = WRAP_TAIL.sub("", text)
    if len(text) > 2 and text[0] == "`" == text[-1] and text[1] != "`":  # `RuntimeError: ...` as inline code
        return text[1:-1]
    if len(text) > 1 and text[0] == "`" and text[1] not in "` ":  # inline code opened on this line, closed on a later one (or cut)
        return text[1:]
    if len(text) > 1 and text[-1] == "`" and text[-2] not in "` " and text.count("`") == 1:
        # inline code opened on an earlier line, closed on this one: a traceback pasted as one `...` span ends "AssertionError`"
        # (diagB11: Jun-CEN/Open-World-Semantic-Segmentation#3 read its exception's line as a cut traceback's)
        return text[:-1]
    return text


# Two records on one physical line, the line break between them lost in the paste: an exception's line
# glued to the end of a progress bar ("... 50/51 [44:23<00:53, 53.27s/it]KeyError: 'x'") or of the source
# line a traceback quotes ("....to(torch.float32)ValueError: ..."; a name right after a closing bracket is no
# Python), or another rank's prefixed line glued to the end of one ("... using GPU 1[rank0]: KeyError: 'lr'").
# Each match ends the first record; the next begins where it ends.
GLUED_RECORD = re.compile(
    r"(?:/(?:s|it)(?:,[^\[\]]*)?\]\s*|[\])])(?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)(?::\s|$))"
    r"|(?<=[^\s\]:])\s*(?=\[(?:rank|default)\d+\]:)"
)
GLUED_WORDS = ("Error", "Exception", "Interrupt", "Exit", "Failure")


# Two processes that print the same exception at once interleave its writes (the class, ": ", the message) on one line:
# "SyntaxErrorSyntaxError: : invalid syntaxinvalid syntax" (heldout20w: two ranks of one start,
# https://github.com/Viola868/deepseek_training/blob/e92843f895a592e816604e541afb72871dea9fd2/train.err) is one exception's line.
DOUBLED = re.compile(r"(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?P=cls): : (?P<message>\S.*)")


def undoubled(part: str) -> str:
    """The exception line two processes wrote at once (DOUBLED), as one of them wrote it; any other line as it is."""
    m = DOUBLED.fullmatch(part.strip())
    if m is None:
        return part
    message = m.group("message").rstrip()
    half = len(message) // 2
    return f"{m.group('cls')}: {message[:half]}" if len(message) % 2 == 0 and message[:half] == message[half:] else part


def segments(raw: str) -> list[LogLine]:
    """A physical line -> its messages: tqdm and friends rewrite a line with bare
    carriage returns, so one 'line' can hold many; and a paste may lose the line
    break between two records (GLUED_RECORD)."""
    raw = raw.rstrip("\r\n")
    parts = [p for p in raw.split("\r") if p.strip()] if "\r" in raw else [raw]
    if ": : " in raw:
        parts = [undoubled(p) for p in parts]
    if "<br" in raw or "<BR" in raw:  # a page's line breaks inside one physical line (not its last one, WRAP_TAIL's)
        parts = [q for p in parts for q in HTML_BREAK.split(p) if q.strip()]
    out = []
    for part in parts:
        if any(word in part for word in GLUED_WORDS) or part.find("[rank", 1) > 0 or part.find("[default", 1) > 0:
            out += glued(part)
        else:
            out.append(strip(part))
    return out


def glued(part: str) -> list[LogLine]:
    """The records of one segment, where a paste glued them together; a record with no
    prefix of its own came from the same process as the one it is glued to."""
    cuts = [m.end() for m in GLUED_RECORD.finditer(part) if 0 < m.end() < len(part)]
    if not cuts:
        return [strip(part)]
    out: list[LogLine] = []
    start = 0
    for end in cuts + [len(part)]:
        record = strip(part[start:end])
        if not record.text and end < len(part):
            continue  # only prefixes before it (a quote, Ray's or docker's): the same record goes on
        start = end
        if out and record.rank is None and record.local_rank is None and record.node is None:
            first = out[0]
            record = LogLine(record.text, first.rank, first.local_rank, first.node)
        out.append(record)
    return out
