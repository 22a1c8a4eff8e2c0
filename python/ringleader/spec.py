"""Job specs from Python: a ``JobSpec`` message, a dict, keyword arguments or
the textproto/JSON file ``ringctl submit --file`` reads.

The keywords are derived from the ``JobSpec`` descriptor, never listed by
hand, so a field added to ``proto/ringleader/v1/job.proto`` is a keyword the
moment the stubs are regenerated. A field is reachable as

* its top-level name: ``epochs=3``, ``precision="bf16"``,
  ``lr_schedule={"kind": "cosine", "warmup_steps": 100}``; a message with
  a ``kind`` also takes the kind alone: ``lr_schedule="cosine"``;
* its path with ``__``: ``lr_schedule__kind="cosine"``,
  ``export__safetensors_path="/data/m.safetensors"``;
* its own name when no other field below ``JobSpec`` has it:
  ``warmup_steps=100``, ``gradient_compression="bf16"``, ``momentum=0.9``.

Enum values take the value's name (``"LR_SCHEDULE_KIND_COSINE"``), its
suffix in any case (``"cosine"``), a unique leading part of it (``"bf16"``
for ``PRECISION_BF16_MIXED``) or its number. Values are type-checked here;
ranges are the coordinator's validator's (``common/job_spec_validator``),
which refuses a spec with every violation listed.
"""
from __future__ import annotations

import collections
import difflib
import numbers
import os
import pathlib
from typing import Any, Dict, Iterator, List, Mapping, Tuple, Union

from google.protobuf import descriptor as _descriptor
from google.protobuf import json_format, message, text_format

from .errors import InvalidSpecError
from .v1 import job_pb2

FieldDescriptor = _descriptor.FieldDescriptor
JobSpec = job_pb2.JobSpec
SpecLike = Union[JobSpec, Mapping[str, Any], str, os.PathLike, None]

TEXT_EXTENSIONS = (".textproto", ".txtpb", ".pbtxt", ".txt")
# As common/job_spec_io.h: a spec is a few hundred bytes; the cap keeps a
# wrong path (a dataset) from being read whole.
MAX_SPEC_FILE_BYTES = 1 << 20


def _walk(desc: _descriptor.Descriptor, prefix: Tuple[str, ...] = ()
          ) -> Iterator[Tuple[Tuple[str, ...], FieldDescriptor]]:
    for field in desc.fields:
        path = prefix + (field.name,)
        yield path, field
        if field.message_type is not None:
            yield from _walk(field.message_type, path)


def _build_keywords() -> Dict[str, Tuple[str, ...]]:
    table: Dict[str, Tuple[str, ...]] = {}
    by_leaf: Dict[str, List[Tuple[str, ...]]] = collections.defaultdict(list)
    for path, _ in _walk(JobSpec.DESCRIPTOR):
        table["__".join(path)] = path
        if len(path) > 1:
            by_leaf[path[-1]].append(path)
    for name, paths in by_leaf.items():
        if len(paths) == 1 and name not in table:
            table[name] = paths[0]
    return table


KEYWORDS: Dict[str, Tuple[str, ...]] = _build_keywords()
_AMBIGUOUS: Dict[str, List[str]] = {
    name: sorted("__".join(p) for p in paths)
    for name, paths in collections.defaultdict(list, {
        leaf: [p for p in KEYWORDS.values() if p[-1] == leaf]
        for leaf in {p[-1] for p in KEYWORDS.values()}}).items()
    if name not in KEYWORDS and len(paths) > 1
}


def keywords() -> Dict[str, str]:
    """Every keyword a spec takes, mapped to its field's dotted path."""
    return {k: ".".join(v) for k, v in sorted(KEYWORDS.items())}


def resolve_keyword(name: str) -> Tuple[str, ...]:
    """The field path of keyword ``name``; InvalidSpecError naming it if none."""
    path = KEYWORDS.get(name)
    if path is not None:
        return path
    if name in _AMBIGUOUS:
        raise InvalidSpecError(
            f"keyword {name!r} is ambiguous in the job spec: use one of "
            + ", ".join(_AMBIGUOUS[name]))
    close = [k for k in KEYWORDS if "__" not in k and name in k][:3] or \
        difflib.get_close_matches(name, list(KEYWORDS), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close \
        else " (ringleader.spec_keywords() lists them)"
    raise InvalidSpecError(f"unknown keyword {name!r} for the job spec{hint}")


def _enum_value(field: FieldDescriptor, value: Any, where: str) -> int:
    enum = field.enum_type
    names = [v.name for v in enum.values]
    prefix = os.path.commonprefix(names) if len(names) > 1 else ""
    prefix = prefix[:prefix.rfind("_") + 1]
    suffixes = {v.name[len(prefix):].lower(): v.number for v in enum.values}
    if isinstance(value, bool):
        pass
    elif isinstance(value, numbers.Integral):
        if int(value) in enum.values_by_number:
            return int(value)
    elif isinstance(value, str):
        if value in enum.values_by_name:
            return enum.values_by_name[value].number
        key = value.lower()
        if key in suffixes:
            return suffixes[key]
        starts = [n for s, n in suffixes.items() if s.startswith(key + "_")]
        if len(starts) == 1:
            return starts[0]
    choices = ", ".join(s for s in suffixes if not s.endswith("unspecified"))
    raise InvalidSpecError(f"{where}: {value!r} is not one of {choices} "
                           f"({enum.name})")


def _scalar(field: FieldDescriptor, value: Any, where: str,
            json_like: bool = False) -> Any:
    t = field.type
    if json_like and isinstance(value, str) and t not in (
            FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES,
            FieldDescriptor.TYPE_ENUM):
        # The proto3 JSON mapping (MessageToDict) writes 64-bit integers and
        # special floats as strings.
        try:
            value = float(value) if t in (FieldDescriptor.TYPE_DOUBLE,
                                          FieldDescriptor.TYPE_FLOAT) \
                else int(value)
        except ValueError:
            pass
    if t == FieldDescriptor.TYPE_ENUM:
        return _enum_value(field, value, where)
    if t == FieldDescriptor.TYPE_BOOL:
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return bool(value)
        raise InvalidSpecError(f"{where} takes True or False, not {value!r}")
    if t == FieldDescriptor.TYPE_STRING:
        if isinstance(value, (str, os.PathLike)):
            return os.fspath(value)
        raise InvalidSpecError(f"{where} takes a string, not {value!r}")
    if t == FieldDescriptor.TYPE_BYTES:
        if isinstance(value, bytes):
            return value
        raise InvalidSpecError(f"{where} takes bytes, not {value!r}")
    if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        raise InvalidSpecError(f"{where} takes a number, not {value!r}")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise InvalidSpecError(f"{where} takes an integer, not {value!r}")


def _set_field(msg: message.Message, field: FieldDescriptor, value: Any,
               where: str, json_like: bool = False) -> None:
    name = field.name
    if field.label == FieldDescriptor.LABEL_REPEATED:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(
                value, "__iter__"):
            raise InvalidSpecError(f"{where} takes a list, not {value!r}")
        items = list(value)
        container = getattr(msg, name)
        del container[:]
        for i, item in enumerate(items):
            if field.message_type is not None:
                _merge(container.add(), item, f"{where}[{i}]")
            else:
                container.append(
                    _scalar(field, item, f"{where}[{i}]", json_like))
        return
    if field.message_type is not None:
        _merge(getattr(msg, name), value, where)
        return
    checked = _scalar(field, value, where, json_like)
    try:
        setattr(msg, name, checked)
    except (TypeError, ValueError) as e:  # Out of the wire type's range.
        raise InvalidSpecError(f"{where}: {e}") from None


def _merge(msg: message.Message, value: Any, where: str) -> None:
    """Sets the fields ``value`` names on ``msg``; the others stay."""
    if isinstance(value, message.Message):
        if value.DESCRIPTOR is not msg.DESCRIPTOR:
            raise InvalidSpecError(
                f"{where} takes a {msg.DESCRIPTOR.name} (or a dict), not a "
                f"{value.DESCRIPTOR.name}")
        msg.CopyFrom(value)
        return
    kind = msg.DESCRIPTOR.fields_by_name.get("kind")
    if kind is not None and kind.enum_type is not None and \
            isinstance(value, (str, int)):
        # The shorthand ringctl's flags have: lr_schedule="cosine" sets
        # lr_schedule.kind, optimizer="adamw" optimizer.kind.
        _set_field(msg, kind, value, f"{where}.kind" if where else "kind")
        return
    if not isinstance(value, Mapping):
        raise InvalidSpecError(
            f"{where} takes a dict of {msg.DESCRIPTOR.name} fields, not "
            f"{value!r}")
    desc = msg.DESCRIPTOR
    by_json = {f.json_name: f for f in desc.fields}
    for key, item in value.items():
        field = desc.fields_by_name.get(key) or by_json.get(key)
        if field is None:
            close = difflib.get_close_matches(
                str(key), list(desc.fields_by_name), n=2, cutoff=0.7)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" \
                if close else ""
            raise InvalidSpecError(
                f"{where}: {desc.name} has no field {key!r}{hint}")
        _set_field(msg, field, item, f"{where}.{field.name}" if where
                   else field.name, json_like=True)


def set_path(spec: JobSpec, path: Tuple[str, ...], value: Any,
             keyword: str) -> None:
    """Sets the field at ``path`` to ``value``, checked for type."""
    msg: message.Message = spec
    for name in path[:-1]:
        msg = getattr(msg, name)
    field = msg.DESCRIPTOR.fields_by_name[path[-1]]
    dotted = ".".join(path)
    where = f"keyword {keyword}" + (f" ({dotted})" if keyword != dotted else "")
    _set_field(msg, field, value, where)


def apply_keywords(spec: JobSpec, fields: Mapping[str, Any]) -> JobSpec:
    """``spec`` with every keyword of ``fields`` set, in order."""
    for keyword, value in fields.items():
        set_path(spec, resolve_keyword(keyword), value, keyword)
    return spec


def load_spec_file(path: Union[str, os.PathLike]) -> JobSpec:
    """Parses a job file as ``ringctl submit --file`` does.

    ``.json`` is the proto3 JSON mapping; ``.textproto``, ``.txtpb``,
    ``.pbtxt`` and ``.txt`` are protobuf text format. Parsing is strict:
    an unknown field or trailing garbage is an error naming the file.
    """
    p = pathlib.Path(path)
    suffix = p.suffix.lower()
    if suffix != ".json" and suffix not in TEXT_EXTENSIONS:
        raise InvalidSpecError(
            f"{p}: a job file ends in .json or one of "
            f"{', '.join(TEXT_EXTENSIONS)}")
    try:
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such job file")
        if p.stat().st_size > MAX_SPEC_FILE_BYTES:
            raise InvalidSpecError(
                f"{p}: larger than {MAX_SPEC_FILE_BYTES} bytes: not a job file")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidSpecError(f"{p}: {e}") from None
    if not text.strip():
        raise InvalidSpecError(f"{p}: job spec is empty")
    spec = JobSpec()
    try:
        if suffix == ".json":
            json_format.Parse(text, spec)
        else:
            text_format.Parse(text, spec)
    except (text_format.ParseError, json_format.ParseError) as e:
        raise InvalidSpecError(f"{p}: {e}") from None
    return spec


def job_spec(spec: SpecLike = None, /, **fields: Any) -> JobSpec:
    """A ``JobSpec`` from any form a user holds one in.

    Args:
        spec: a ``JobSpec`` (copied), a dict of its fields (proto or JSON
            names, nested dicts for messages), a path to a job file, or None.
        **fields: keywords set on top of ``spec``, as ``ringctl submit``'s
            flags override its file (see :func:`spec_keywords`).

    Raises:
        InvalidSpecError: an unknown keyword or field, a value of the wrong
            type, or a job file that does not parse.
    """
    out = JobSpec()
    if isinstance(spec, JobSpec):
        out.CopyFrom(spec)
    elif isinstance(spec, (str, os.PathLike)):
        out = load_spec_file(spec)
    elif isinstance(spec, Mapping):
        _merge(out, spec, "")
    elif spec is not None:
        raise InvalidSpecError(
            "a job spec is a ringleader.v1.JobSpec, a dict or a job file "
            f"path, not {type(spec).__name__}")
    return apply_keywords(out, fields)
