"""The class of the twenty-seventh round (issue 35, diagB27): a Windows program that could not write its own text, because
its output (or a file it opened) uses the Windows code page and the text holds a character that page lacks.

Python on Windows writes to the console itself in UTF-16 (3.6+), but to everything else in the ANSI code page (cp1252 in
Western Europe and the Americas, cp874 Thai, cp936/gbk Chinese, cp932 Japanese, ...): output redirected to a file
(`python train.py > log.txt`, PowerShell's `Tee-Object`, an IDE's or a scheduler's capture), a pipe, and every file
`open()` is given no `encoding=` for. A check mark, an arrow, an emoji or a letter of another script in a print then raises
`UnicodeEncodeError: 'charmap' codec can't encode character '\\u2713'` (every single-byte page reports itself as
'charmap'; the double-byte ones by name: 'gbk', 'cp932', 'cp949', 'big5') at that print, and the run stops there, after
however many epochs it had done. The same error caught and logged by the script ("Error in training script: 'charmap'
codec can't encode character ...") is the same failure.

One verdict, `console-encoding`, keyed on the code page's codec in the message, never on the message alone: 'ascii' (a
Linux locale of C, or a str.encode('ascii') of the program's own), 'latin-1' (an HTTP header) and 'utf-8' (a lone
surrogate) are other failures with other fixes, and stay theirs.

Written from heldout26w (apologizesss-ai-gold-bot, amulyteppali-..., aryansh33-models-deepfake-hybrids, amk1912-weather-
prediction; the last three are UTF-16 files PowerShell's redirection wrote) and heldout18w (Lamlam44-Plant_Disease_
Prediction); heldout24b, heldout25w and heldout23w were not read while writing (the transfer check).
"""

from __future__ import annotations

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# Python's codec names of the Windows ANSI code pages: 'charmap' for every single-byte one (cp1250-cp1258, cp874), and
# the double-byte ones by their own names (cp932/shift_jis, cp936/gbk/gb2312, cp949/euc_kr, cp950/big5), 'mbcs' for
# whichever the system has
WINDOWS_CODECS = r"charmap|mbcs|cp\d{3,5}|gbk|gb2312|gb18030|big5(?:hkscs)?|shift_jis|euc_kr|euc_jp"

PATTERNS = [
    pattern(
        "console-encoding",
        "platform",
        CAUSE,
        E,
        "Python could not write a character in the Windows code page its output uses: the run stopped at that print or write",
        r"(?:\b(?P<exception>UnicodeEncodeError): )?'(?P<codec>" + WINDOWS_CODECS + r")' codec can't encode characters?(?: (?P<character>'[^']{1,12}'))?",
        ("codec can't encode",),
        why="""On Windows, Python writes in the ANSI code page (cp1252, cp874, gbk, ...) wherever its output is not the console
        itself: redirected to a file or a pipe (python train.py > log.txt, PowerShell's Tee-Object, an IDE's, a scheduler's or a
        service's capture), and in every file open() is given no encoding= for. A character that page lacks (an emoji, a check
        mark, an arrow, a letter of another script) raises UnicodeEncodeError at the print or write that holds it, and the run
        stops there, however far it had got. Changing the console's code page (chcp 65001) does not change what Python writes to
        a file or a pipe; its UTF-8 mode does, for print and for open() alike.""",
        fix="""set PYTHONUTF8=1   # cmd, before the run (PowerShell: $env:PYTHONUTF8=1; or python -X utf8 train.py): print and open() then write UTF-8 whatever the code page; only the output: set PYTHONIOENCODING=utf-8; or in the code, open(path, "w", encoding="utf-8") for the file it writes""",
        examples=[
            ("UnicodeEncodeError: 'charmap' codec can't encode character '\\U0001f680' in position 0: character maps to <undefined>",
             "Apologizesss/ai-gold-bot training_log.txt (heldout26w: a print of an emoji, encodings\\cp874.py in the frame)"),
            ("UnicodeEncodeError: 'charmap' codec can't encode character '\\u2192' in position 30: character maps to <undefined>",
             "aryansh33/models training log (heldout26w: a print of an arrow; PowerShell's redirection, cp1252)"),
            ("Error in training script: 'charmap' codec can't encode character '\\u2713' in position 0: character maps to <undefined>",
             "amk1912/weather-prediction-using-machine-learning training log (heldout26w: caught and logged by the script, its last line)"),
            ("UnicodeEncodeError: 'gbk' codec can't encode character '\\xa0' in position 12: illegal multibyte sequence",
             "a Chinese Windows' cp936 (its codec named by itself)"),
        ],
        not_examples=[
            "UnicodeEncodeError: 'ascii' codec can't encode character '\\u2019' in position 5: ordinal not in range(128)",
            "UnicodeEncodeError: 'latin-1' codec can't encode character '\\u2026' in position 30: ordinal not in range(256)",
            "UnicodeEncodeError: 'utf-8' codec can't encode character '\\udcff' in position 3: surrogates not allowed",
            "UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 2411: character maps to <undefined>",
        ],
        fields=groups,
    ),
]
