from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import ERROR, Hit, Rule


class UnreadableFile(Rule):
    """The file could not be read as Python source, so no rule looked at it.

    Most often its bytes cannot be decoded the way Python would read them:
    UTF-8 by default, or the encoding its PEP 263 coding comment names
    (`# -*- coding: latin-1 -*-` on line 1 or 2). The same rule reports a file
    that was skipped without being read, with the reason and its own fix:
    permission denied, a symbolic link loop, something that is not a regular
    file (a named pipe, a device, a socket: reading those could block or never
    end), a file above the size limit (5 MB; the environment variable
    `GPUDOCTOR_MAX_SOURCE_BYTES` sets another, in bytes), or one of more than
    200,000 statements and items (its lines, `;` and `,` counted before parsing:
    a syntax tree costs ~2.5 KB a statement; `GPUDOCTOR_MAX_SOURCE_ITEMS` sets
    another). A notebook's code cells past its first 10,000 are not read, and
    said with this rule.

    Reported by the linter itself; linting goes on with the other files.
    """

    id = "unreadable-file"
    severity = ERROR  # not checked at all: a CI run must not pass as if it had been
    message = "the file cannot be decoded"
    fix = "iconv -f ENCODING -t UTF-8 FILE, or add a PEP 263 line: # -*- coding: latin-1 -*-"

    VALID = (
        '''
        # -*- coding: latin-1 -*-
        name = "café"
        ''',
    )
    INVALID = (
        '''
        # -*- coding: ascii -*-
        name = "café"  # flagged
        ''',
        '''
        # -*- coding: klingon -*-  # flagged
        name = "qapla"
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        return iter(())  # the engine reports it: there is no text to check
