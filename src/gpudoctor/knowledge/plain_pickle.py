"""Read a pickle that holds plain data only, and refuse any other.

`pickle.loads` imports and calls whatever a file names (`os.system` through
`__reduce__` is one line of an attacker's script), and a run folder is something
users download from a cluster or a colleague. Torch's Flight Recorder dump (torch
2.13, gloo and NCCL alike) is a pickle of builtin dicts, lists, tuples, strings,
numbers, booleans and None: no opcode in it names a callable. So the unpickler
here admits no name at all: every GLOBAL, STACK_GLOBAL, INST, OBJ-by-name and
extension code goes through `find_class`, which refuses; a persistent id goes
through `persistent_load`, which refuses. Nothing a file names is ever imported
or executed: the refusal happens before any lookup, naming what the file asked for.
"""

from __future__ import annotations

import io
import pickle


class RefusedPickle(ValueError):
    """The pickle names something to import or call; `str()` says what, in words."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> type:
        # Say what it asked for (cut: the name is the attacker's text) and import nothing.
        raise RefusedPickle(f"it names {module[:80]}.{name[:80]}, which gpudoctor would have to import and call")

    def persistent_load(self, pid: object) -> object:
        raise RefusedPickle("it holds a persistent reference, which only the program that wrote it can resolve")


def loads_plain(data: bytes) -> object:
    """The object a plain-data pickle holds. RefusedPickle when it names a callable;
    ValueError when it is not a whole pickle."""
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except RefusedPickle:
        raise
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    except Exception as exc:  # noqa: BLE001 - a broken pickle raises almost anything (IndexError, KeyError, ...)
        raise ValueError(f"not a readable pickle ({type(exc).__name__})") from None
