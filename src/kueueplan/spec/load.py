"""Loading spec files into models, with errors that name file:line:column, the field and the fix.

`load_spec(path)` reads a file or a folder (every *.yaml / *.yml below it, in sorted path order) and returns a
`Platform`: the documents by kind, in file order, each remembering where it came from. `Platform.resolve(env)`
applies the environment's overlays and returns the effective documents for that environment.
"""

from __future__ import annotations

import copy
import json
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ValidationError

from kueueplan.errors import KueueplanError
from kueueplan.kube.yamlio import Document, load_file, yaml_files
from kueueplan.spec.models import API_VERSION, DOCUMENT_MODELS

Loc = tuple[str | int, ...]
KINDS = tuple(DOCUMENT_MODELS)


@dataclass
class Entry:
    """One spec document: its validated model and where it was written (for error messages)."""

    model: Any
    doc: Document
    overlay: Document | None = None  # the environment document whose overlay changed it
    overlay_path: Loc = ()

    @property
    def name(self) -> str:
        return self.model.metadata.name

    @property
    def kind(self) -> str:
        return self.model.kind

    def error(self, message: str, path: Loc = (), hint: str | None = None) -> KueueplanError:
        """An error located at `path` (a path inside `spec`), in the overlay if the overlay set that field."""
        if self.overlay is not None and _has_path(self.overlay.data, self.overlay_path + path):
            return _located(self.overlay, self.overlay_path + path, message, hint)
        return _located(self.doc, ("spec",) + path, message, hint)

    def locate(self, candidates: Iterable[Loc]) -> tuple[str, int | None]:
        """File and line of the first candidate path (inside `spec`) that the overlay or the document writes;
        else the nearest written ancestor of the first. A step may be an object with a `name`: the item of
        a `quotas` list with that flavor (overlays merge quotas by flavor, so indexes differ)."""
        candidates = list(candidates) or [()]
        for path in candidates:
            if self.overlay is not None:
                concrete = _by_flavor(self.overlay.data, self.overlay_path + path)
                if concrete is not None:
                    return self.overlay.file, self.overlay.line_of(concrete)
            concrete = _by_flavor(self.doc.data, ("spec",) + path)
            if concrete is not None:
                return self.doc.file, self.doc.line_of(concrete)
        partial = _by_flavor(self.doc.data, ("spec",) + candidates[0], partial=True) or ("spec",)
        return self.doc.file, self.doc.line_of(partial)


@dataclass
class Platform:
    """Every document of a spec folder, by kind, in file order."""

    root: Path
    entries: dict[str, list[Entry]] = field(default_factory=lambda: {kind: [] for kind in KINDS})

    def environments(self) -> list[Entry]:
        return self.entries["Environment"]

    def environment(self, name: str) -> Entry:
        for entry in self.environments():
            if entry.name == name:
                return entry
        known = ", ".join(e.name for e in self.environments()) or "none"
        raise KueueplanError(f"no Environment named {name!r} in {self.root} (known: {known})",
                             hint=_did_you_mean(name, [e.name for e in self.environments()]))

    def resolve(self, env_name: str) -> dict[str, list[Entry]]:
        """The documents that apply to one environment, with its overlays merged in."""
        env = self.environment(env_name)
        overlays = env.model.spec.overlays
        result: dict[str, list[Entry]] = {}
        for kind in KINDS:
            if kind == "Environment":
                continue
            chosen = [e for e in self.entries[kind] if _in_env(e, env_name)]
            names = {e.name for e in chosen}
            for name in overlays.get(kind, {}):
                if name not in names:
                    raise _located(env.doc, ("spec", "overlays", kind, name),
                                   f"overlay for unknown {kind} {name!r} (not defined for environment {env_name!r})",
                                   _did_you_mean(name, sorted(names)))
            result[kind] = [_apply_overlay(e, env, overlays.get(kind, {}).get(e.name)) for e in chosen]
        return result


def _in_env(entry: Entry, env: str) -> bool:
    wanted = entry.model.metadata.environments
    return wanted is None or env in wanted


# --------------------------------------------------------------------------- loading


def spec_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise KueueplanError(f"spec folder {path} does not exist", hint="pass the folder holding your spec files")
    return yaml_files(path)


def load_spec(path: str | Path) -> Platform:
    root = Path(path)
    platform = Platform(root=root)
    files = spec_files(root)
    if not files:
        raise KueueplanError(f"no spec files (*.yaml) in {root}")
    seen: dict[tuple[str, str], Entry] = {}
    for file in files:
        for doc in load_file(file):
            entry = load_document(doc)
            key = (entry.kind, entry.name)
            if key in seen:
                first = seen[key].doc
                raise _located(doc, ("metadata", "name"),
                               f"{entry.kind} {entry.name!r} is defined twice (first at {first.file}:{first.line})")
            seen[key] = entry
            platform.entries[entry.kind].append(entry)
    # A spec is a set of named documents: which file holds a document, and the order of the files, must not
    # change the output (issue 7, determinism). Order only matters inside a document (e.g. a team's flavors).
    for entries in platform.entries.values():
        entries.sort(key=lambda e: e.name)
    if not platform.environments():
        raise KueueplanError(f"no Environment document in {root}",
                             hint="add e.g. `kind: Environment` with `metadata: {name: prod}`")
    return platform


def load_document(doc: Document) -> Entry:
    data = doc.data
    if not isinstance(data, dict):
        raise _located(doc, (), "a spec document must be a mapping with apiVersion, kind, metadata and spec")
    if data.get("apiVersion") != API_VERSION:
        raise _located(doc, ("apiVersion",), f"apiVersion must be {API_VERSION!r}, got {data.get('apiVersion')!r}",
                       "spec files hold kueueplan documents only; Kubernetes manifests go elsewhere")
    kind = data.get("kind")
    model_cls = DOCUMENT_MODELS.get(kind) if isinstance(kind, str) else None
    if model_cls is None:
        raise _located(doc, ("kind",), f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}",
                       _did_you_mean(str(kind), list(KINDS)))
    try:
        model = model_cls.model_validate(data)
    except ValidationError as err:
        raise translate_error(err, doc, model_cls) from None
    return Entry(model=model, doc=doc)


# --------------------------------------------------------------------------- overlays


def merge_patch(base: Any, patch: Any, path: Loc = ()) -> Any:
    """JSON merge patch (RFC 7386), except that `quotas` lists merge by `flavor` (resources merge by name)."""
    if isinstance(patch, dict) and isinstance(base, dict):
        result = dict(base)
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            elif key == "quotas" and isinstance(value, list) and isinstance(base.get(key), list):
                result[key] = _merge_quotas(base[key], value)
            else:
                result[key] = merge_patch(base.get(key), value, path + (key,))
        return result
    return copy.deepcopy(patch)


def _merge_quotas(base: list[Any], patch: list[Any]) -> list[Any]:
    merged = [copy.deepcopy(q) for q in base]
    # Only string flavor names key the merge: anything else is left for the model to report (no TypeError).
    index = {q["flavor"]: i for i, q in enumerate(merged) if isinstance(q, dict) and isinstance(q.get("flavor"), str)}
    for item in patch:
        flavor = item.get("flavor") if isinstance(item, dict) and isinstance(item.get("flavor"), str) else None
        if flavor in index:
            merged[index[flavor]] = merge_patch(merged[index[flavor]], item)
        else:
            merged.append(copy.deepcopy(item))
    # `resources: null` in an overlay removes that flavor from the quotas.
    return [q for q in merged if not (isinstance(q, dict) and "flavor" in q and not q.get("resources"))]


def _apply_overlay(entry: Entry, env: Entry, patch: dict[str, Any] | None) -> Entry:
    if not patch:
        return entry
    overlay_path: Loc = ("spec", "overlays", entry.kind, entry.name)
    data = dict(entry.doc.data)
    data["spec"] = merge_patch(data.get("spec") or {}, patch)
    try:
        model = type(entry.model).model_validate(data)
    except ValidationError as err:
        # Report in the overlay when it wrote the offending field, else in the base document.
        first = err.errors()[0]
        loc = tuple(first["loc"])
        if loc[:1] == ("spec",) and _has_path(env.doc.data, overlay_path + loc[1:len(loc)]):
            raise translate_error(err, env.doc, type(entry.model), prefix=overlay_path, strip=1) from None
        raise translate_error(err, entry.doc, type(entry.model)) from None
    return Entry(model=model, doc=entry.doc, overlay=env.doc, overlay_path=overlay_path)


# --------------------------------------------------------------------------- errors


def _has_path(data: Any, path: Loc) -> bool:
    for key in path:
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
            data = data[key]
        else:
            return False
    return True


def _by_flavor(data: Any, path: tuple[Any, ...], partial: bool = False) -> Loc | None:
    """`path` with quota items (steps with a `name`) turned into list indexes, if `data` has all of it; with
    `partial`, the longest prefix it has."""
    out: list[str | int] = []
    for step in path:
        name = getattr(step, "name", None)
        if name is not None and isinstance(data, list):
            index = next((i for i, q in enumerate(data) if isinstance(q, dict) and q.get("flavor") == name), None)
            step = index
        if step is not None and _has_path(data, (step,)):
            out.append(step)
            data = data[step]
        else:
            return tuple(out) if partial else None
    return tuple(out)


def _located(doc: Document, path: Loc, message: str, hint: str | None = None) -> KueueplanError:
    field_path = _dotted(path)
    text = f"{field_path}: {message}" if field_path else message
    return KueueplanError(text, file=doc.file, line=doc.line_of(path), column=doc.column_of(path), hint=hint)


def _dotted(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower().replace("_", ""): c for c in choices}
        key = word.lower().replace("_", "").replace("-", "")
        if key in lowered:
            close = [lowered[key]]
    return f"did you mean {close[0]!r}?" if close else None


def translate_error(err: ValidationError, doc: Document, model_cls: type[BaseModel],
                    prefix: Loc = (), strip: int = 0) -> KueueplanError:
    """The first pydantic error as a KueueplanError at file:line:column, with the field path and a fix.

    `prefix`/`strip` re-root a location: an overlay validated as part of a full document reports its errors
    at `prefix + loc[strip:]` inside the environment document.
    """
    errors = err.errors()
    # An unknown field usually explains a "missing" one next to it (a misspelling), so report it first.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(p for p in first["loc"] if isinstance(p, (str, int)) and p != "[key]")
    where = prefix + loc[strip:]
    kind = first["type"]
    hint = None
    if kind == "extra_forbidden":
        allowed = _fields_at(model_cls, loc[:-1])
        message = f"unknown field {loc[-1]!r}"
        suggestion = _did_you_mean(str(loc[-1]), allowed)
        if suggestion:
            message += f"; {suggestion}"
        elif allowed:
            hint = f"allowed fields here: {', '.join(allowed)}"
        return _located(doc, where, message, hint)
    if kind == "missing":
        return _located(doc, where, "required field is missing", f"add '{loc[-1]}'")
    message = first["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if kind == "literal_error":
        expected = first.get("ctx", {}).get("expected", "")
        hint = f"write one of {expected}"
        message = f"{first.get('input')!r} is not allowed"
    elif kind in _SHAPES:
        message = f"expected {_SHAPES[kind]} (got {_yaml_kind(first.get('input'))})"
    elif kind.endswith("_type") and "input" in first:
        message = f"{message} (got {type(first['input']).__name__} {first['input']!r})"
        if kind in ("string_type",) and isinstance(first["input"], (int, float, bool)):
            hint = f"quote it: \"{json.dumps(first['input'])}\""
    return _located(doc, where, message, hint)


_SHAPES = {"model_type": "a mapping", "dict_type": "a mapping", "model_attributes_type": "a mapping",
           "list_type": "a list"}


def _yaml_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r}"


def _fields_at(model_cls: Any, loc: Loc) -> list[str]:
    """Field names of the model found by following `loc` through `model_cls`'s annotations."""
    current: Any = model_cls
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(str(part))
            if info is None:
                return []
            current = info.annotation
            continue
        origin = typing.get_origin(current)
        args = typing.get_args(current)
        if origin in (list, tuple) and args:
            current = args[0]
        elif origin is dict and len(args) == 2:
            current = args[1]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(tp: Any) -> Any:
    """Strip Annotated and Optional so the model (or container) type remains."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            tp = models[0] if models else members[0]
        else:
            return tp

