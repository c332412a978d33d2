"""An error's signature, the same on every machine, and a search for it in the tracker of
the project whose code raised it.

The signature is the exception's type and its message with what differs between runs taken
out: numbers, paths, addresses, hex ids. The search looks for the longest stretch of the
message that has none of those, as a phrase, in the project's issues (open and closed).
"""

from __future__ import annotations

import re
from urllib.parse import quote_plus

URL = re.compile(r"https?://\S+")
ADDRESS = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[[0-9a-fA-F:]{3,}\](?::\d+)?|\b0x[0-9a-fA-F]+\b")
HEX_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b")
PATH = re.compile(r"(?<![\w<])(?:[A-Za-z]:)?(?:[\\/]|\.{1,2}[\\/]|~[\\/])?(?:[\w.\-~]+[\\/])+[\w.\-]*|(?<![\w<])[\\/][\w.\-]+")
# A list, a set or a tuple of two or more quoted names, as Python prints one in a message (peft's "Target modules {'q_proj',
# 'v_proj'} not found in the base model", a subprocess's command): the names differ between runs, the words around them do not
NAMES = re.compile(r"""[\[{(]\s*(?:'[^'\n]{0,200}'|"[^"\n]{0,200}")(?:\s*,\s*(?:'[^'\n]{0,200}'|"[^"\n]{0,200}"))+\s*,?\s*[\]})]""")
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)*(?:e[-+]?\d+)?(?:[KMGT]i?B|[mu]?s|%)?(?!\w)")
HOLES = re.compile(r"<(?:n|path|addr|id|url|names)>")
MAX_WORDS = 12


def signature(what: str, message: str) -> str:
    """'RuntimeError: CUDA out of memory. Tried to allocate <n> MiB (GPU <n>; …)'; a list of quoted names is `<names>`."""
    text = " ".join(message.split())
    text = URL.sub("<url>", text)
    text = NAMES.sub("<names>", text)
    text = ADDRESS.sub("<addr>", text)
    text = HEX_ID.sub("<id>", text)
    text = PATH.sub("<path>", text)
    text = NUMBER.sub("<n>", text)
    return f"{what}: {text}" if text and what else text or what


def phrase(sig_message: str) -> str:
    """The longest stretch of a signature's message without a hole, at most MAX_WORDS words."""
    runs = [" ".join(r.split()) for r in HOLES.split(sig_message)]
    runs = [r.strip(" ,.:;'\"()[]{}!?=-，。；：") for r in runs]  # (and a paste's full-width punctuation)
    best = max(runs, key=lambda r: len(r.split()), default="")
    return " ".join(best.split()[:MAX_WORDS])


def search_url(project: str, what: str, message: str) -> str:
    """https://github.com/OWNER/REPO/issues?q=… for this error, open and closed issues; with no
    project (the code that raised it is not known, or its tracker is not), every project's issues."""
    sig = signature("", message).lstrip(": ")
    words = phrase(sig)
    short = what.rsplit(".", 1)[-1]
    if len(words.split()) < 2:
        words = short if not words else f"{short} {words}"
    return issues(project, '"' + re.sub(r"[\"'`]", "", words) + '"')


def frame_search_url(project: str, path: str, func: str) -> str:
    """A search for a traceback cut before its message, by the frame it ends in: the threads that
    quote the same traceback name the same file and function (its line moves between versions)."""
    name = re.split(r"[/\\]", path)[-1]
    return issues(project, f'"{name}"' + (f' "in {func}"' if func and func.isidentifier() else ""))


def issues(project: str, query: str) -> str:
    if project:
        return f"https://github.com/{project}/issues?q={quote_plus('is:issue ' + query)}"
    return f"https://github.com/search?type=issues&q={quote_plus(query)}"
