from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.lint.model import FileModel
from gpudoctor.lint.rule import Hit, Rule


class UnreadableFile(Rule):
    """The file's bytes cannot be decoded as text the way Python would read
    them: UTF-8 by default, or the encoding its PEP 263 coding comment names
    (`# -*- coding: latin-1 -*-` on line 1 or 2).

    Reported by the linter itself; linting goes on with the other files.
    """

    id = "unreadable-file"
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
