"""Frozen fact dataclasses <-> plain JSON values, for `--json` and `--facts`,
and the one codec for what crosses a process boundary (`encode` / `decode`:
a rank's result or exception, the runtime hooks' facts), with a schema version
checked on load.

Turning facts into dicts happens only here, at the JSON boundary. Reading
follows the dataclass type hints, so a snapshot saved by `gpudoctor check
--json` (on this machine or in someone's bug report) comes back as the same
typed facts. A field missing from an older snapshot becomes
`Unavailable("not in snapshot")` where its type allows, else its default.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, Union

from gpudoctor.core.unavailable import JSON_KEY, Unavailable


# The version of every contract that crosses a process boundary. Both sides are
# the same gpudoctor today; the check catches a rank or a report file written by
# another version (a stale install on one node). Bump it when a contract changes.
SCHEMA_VERSION = 1


class SnapshotError(ValueError):
    """A snapshot does not match the facts' shape."""


def encode(value: Any) -> dict[str, Any]:
    """A frozen dataclass as the envelope that crosses a process boundary."""
    return {"schema": SCHEMA_VERSION, "kind": type(value).__name__, "data": to_plain(value)}


def decode(cls: type, payload: Any, where: str = "payload") -> Any:
    """The inverse of `encode`: SnapshotError unless the schema version and the
    kind are this gpudoctor's and the data fits `cls`."""
    if not isinstance(payload, dict) or "data" not in payload:
        raise SnapshotError(f"{where}: not a gpudoctor envelope")
    if payload.get("schema") != SCHEMA_VERSION:
        raise SnapshotError(f"{where}: schema {payload.get('schema')!r}, this gpudoctor reads {SCHEMA_VERSION}")
    if payload.get("kind") != cls.__name__:
        raise SnapshotError(f"{where}: a {payload.get('kind')!r}, expected a {cls.__name__!r}")
    return from_plain(cls, payload["data"], where)


# Types that are their own plain form, and each dataclass's field names: looked up
# by exact type, because a rank's trace publisher encodes ~100 records every half
# second in a training job and `dataclasses.fields` per value cost it ~1 % of a core.
_PLAIN = frozenset({str, int, float, bool, type(None)})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def to_plain(value: Any) -> Any:
    cls = type(value)
    if cls in _PLAIN:
        return value
    names = _FIELD_NAMES.get(cls)
    if names is not None:
        return {name: to_plain(getattr(value, name)) for name in names}
    if cls is Unavailable:
        return {JSON_KEY: value.reason}
    if cls is tuple or cls is list:
        return [to_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(value))
        return {name: to_plain(getattr(value, name)) for name in names}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def from_plain(cls: type, data: Any, where: str = "facts") -> Any:
    """Build `cls` (a fact dataclass) from plain data; SnapshotError if it does not fit."""
    return _read(cls, data, where)


_hints_cache: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _hints_cache:
        _hints_cache[cls] = typing.get_type_hints(cls)
    return _hints_cache[cls]


def _is_unavailable(data: Any) -> bool:
    return isinstance(data, dict) and set(data) == {JSON_KEY} and isinstance(data[JSON_KEY], str)


def _read(tp: Any, data: Any, where: str) -> Any:
    """`data` read as type `tp`: one reader per kind of type hint."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return _read_union(typing.get_args(tp), data, where)
    if tp is Unavailable:
        if _is_unavailable(data):
            return Unavailable(data[JSON_KEY])
        raise SnapshotError(f"{where}: expected an unavailable marker")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _read_dataclass(tp, data, where)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise SnapshotError(f"{where}: expected a list, got {type(data).__name__}")
        if args and args[-1] is not Ellipsis:  # tuple[int, str]: one type per position
            if len(data) != len(args):
                raise SnapshotError(f"{where}: expected {len(args)} items, got {len(data)}")
            return tuple(_read(t, v, f"{where}[{i}]") for i, (t, v) in enumerate(zip(args, data)))
        item = args[0] if args else Any
        return tuple(_read(item, v, f"{where}[{i}]") for i, v in enumerate(data))
    if origin is dict:
        key_t, val_t = typing.get_args(tp) or (str, Any)
        if not isinstance(data, dict):
            raise SnapshotError(f"{where}: expected an object, got {type(data).__name__}")
        return {_read_key(key_t, k, where): _read(val_t, v, f"{where}.{k}") for k, v in data.items()}
    if tp is Any:
        return data
    return _read_scalar(tp, data, where)


def _read_enum(tp: type[enum.Enum], data: Any, where: str) -> Any:
    """A str Enum's member, from its word."""
    try:
        return tp(data)
    except ValueError:
        raise SnapshotError(f"{where}: {data!r} is not one of {[m.value for m in tp]}") from None


def _read_key(tp: Any, key: Any, where: str) -> Any:
    """A mapping's key: JSON's are text; dict[int, ...] gets its numbers back."""
    if tp is int:
        try:
            return int(key)
        except (TypeError, ValueError):
            raise SnapshotError(f"{where}: key {key!r} is not a number") from None
    return str(key)


def _read_union(options: tuple, data: Any, where: str) -> Any:
    """`X | None`, `X | Unavailable`: the marker or null if allowed, else the first option that fits."""
    if _is_unavailable(data):
        if Unavailable in options:
            return Unavailable(data[JSON_KEY])
        raise SnapshotError(f"{where}: may not be unavailable")
    if data is None:
        if type(None) in options:
            return None
        raise SnapshotError(f"{where}: may not be null")
    errors = []
    for option in options:
        if option in (Unavailable, type(None)):
            continue
        try:
            return _read(option, data, where)
        except SnapshotError as exc:
            errors.append(str(exc))
    raise SnapshotError(errors[0] if errors else f"{where}: unexpected value {data!r}")


def _read_dataclass(tp: type, data: Any, where: str) -> Any:
    """A field missing from older data takes its default, else Unavailable where its type allows."""
    if not isinstance(data, dict):
        raise SnapshotError(f"{where}: expected an object, got {type(data).__name__}")
    hints = _hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        if f.name in data:
            kwargs[f.name] = _read(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is not dataclasses.MISSING:
            kwargs[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            kwargs[f.name] = f.default_factory()
        elif _allows_unavailable(hints[f.name]):
            kwargs[f.name] = Unavailable("not in snapshot")
        else:
            raise SnapshotError(f"{where}.{f.name}: missing")
    return tp(**kwargs)


def _read_scalar(tp: Any, data: Any, where: str) -> Any:
    """bool, int, float, str: exactly (a bool is not an int here; an int is a float);
    a str Enum from its word."""
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _read_enum(tp, data, where)
    if tp is bool:
        if isinstance(data, bool):
            return data
        raise SnapshotError(f"{where}: expected true/false, got {data!r}")
    if tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
        raise SnapshotError(f"{where}: expected an integer, got {data!r}")
    if tp is float:
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return float(data)
        raise SnapshotError(f"{where}: expected a number, got {data!r}")
    if tp is str:
        if isinstance(data, str):
            return data
        raise SnapshotError(f"{where}: expected a string, got {data!r}")
    raise SnapshotError(f"{where}: cannot read type {tp!r}")


def _allows_unavailable(tp: Any) -> bool:
    return tp is Unavailable or (
        typing.get_origin(tp) in (Union, types.UnionType) and Unavailable in typing.get_args(tp)
    )
