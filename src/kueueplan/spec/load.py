"""Loading spec files into models, with errors that name file:line:column, the field and the fix.

`load_spec(path)` reads a file or a folder (every *.yaml / *.yml below it, in sorted path order) and returns a
`Platform`: the documents by kind, in file order, each remembering where it came from. `Platform.resolve(env)`
applies the environment's overlays and returns the effective documents for that environment.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ValidationError

from kueueplan.errors import KueueplanError
from kueueplan.kube.yamlio import Document, load_file, refuse_linked_out, yaml_files
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.spec.models import DOCUMENT_MODELS

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
        """An error located at `path` (a path inside the effective `spec`), in the file that wrote that value:
        the overlay when it set it, else the base document (quota items are matched by flavor)."""
        doc, concrete, _ = self._source(path)
        return _located(doc, concrete, message, hint)

    def locate(self, candidates: Iterable[Loc]) -> tuple[str, int | None]:
        """File and line of the first candidate path (inside `spec`) that the overlay or the document writes;
        else the deepest written ancestor among them (the first on a tie). A step may be an object with a `name`
        and a `key`: the item of a `quotas` list with that flavor, of `clusterQueues` with that name (overlays
        merge those lists by that key, so indexes differ)."""
        candidates = list(candidates) or [()]
        partial: list[tuple[int, Document, Loc]] = []
        for path in candidates:
            doc, concrete, done = self._source(path)
            if done == len(path):
                return doc.file, doc.line_of(concrete)
            partial.append((done, doc, concrete))
        _, doc, concrete = max(partial, key=lambda item: item[0])  # max keeps the first of equals
        return doc.file, doc.line_of(concrete)

    def _source(self, path: Loc) -> tuple[Document, Loc, int]:
        """The document that wrote `path` of the effective spec, the path there, and how many steps exist."""
        base = self.doc.data.get("spec") if isinstance(self.doc.data, dict) else None
        patch = _get(self.overlay.data, self.overlay_path) if self.overlay is not None else _MISSING
        side, concrete, done = trace(base, patch, path)
        if side == "overlay" and self.overlay is not None:
            return self.overlay, self.overlay_path + concrete, done
        return self.doc, ("spec",) + concrete, done


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
                             hint=did_you_mean(name, [e.name for e in self.environments()]))

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
                                   did_you_mean(name, sorted(names)))
            result[kind] = [_apply_overlay(e, env, overlays.get(kind, {}).get(e.name)) for e in chosen]
        return result


def _in_env(entry: Entry, env: str) -> bool:
    wanted = entry.model.metadata.environments
    return wanted is None or env in wanted


# --------------------------------------------------------------------------- loading


def spec_files(path: Path) -> list[Path]:
    if path.is_file():
        refuse_linked_out(path)
        return [path]
    if not path.is_dir():
        raise KueueplanError(f"spec folder {path} does not exist", hint="pass the folder holding your spec files")
    return yaml_files(path)


def resolve_spec_dir(path: str | Path) -> Path:
    """The spec folder meant by `path`: `path` itself, or its `environments/` subfolder when `path` is a project
    folder (an example beside its gen/ and scenarios) whose spec lives there, as `examples/skypilot`."""
    root = Path(path)
    inner = root / "environments"
    if root.name != "environments" and inner.is_dir() and not _has_environment(root):
        return inner
    return root


def _has_environment(folder: Path) -> bool:
    """Whether a YAML file directly in `folder` holds a kueueplan Environment document."""
    if not folder.is_dir():
        return False
    for file in sorted(folder.iterdir()):
        if file.suffix in (".yaml", ".yml") and file.is_file():
            try:
                head = file.read_text(encoding="utf-8", errors="replace")[:65536]
            except OSError:
                continue
            if "kueueplan.io/" in head and re.search(r"(?m)^kind:\s*Environment\s*$", head):
                return True
    return False


def load_spec(path: str | Path) -> Platform:
    root = resolve_spec_dir(path)
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
    if data.get("apiVersion") != KUEUEPLAN_API:
        raise _located(doc, ("apiVersion",), f"apiVersion must be {KUEUEPLAN_API!r}, got {data.get('apiVersion')!r}",
                       "spec files hold kueueplan documents only; Kubernetes manifests go elsewhere")
    kind = data.get("kind")
    model_cls = DOCUMENT_MODELS.get(kind) if isinstance(kind, str) else None
    if model_cls is None:
        raise _located(doc, ("kind",), f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}",
                       did_you_mean(str(kind), list(KINDS)))
    try:
        model = model_cls.model_validate(data)
    except ValidationError as err:
        raise translate_error(err, doc, model_cls) from None
    return Entry(model=model, doc=doc)


# --------------------------------------------------------------------------- overlays


# Lists that merge item by item, keyed by a field: a team's (or a queue's) quotas by flavor, its clusterQueues by
# name. Any other list is replaced whole, as RFC 7386 says.
MERGE_KEYS = {"quotas": "flavor", "clusterQueues": "name"}


def merge_patch(base: Any, patch: Any, path: Loc = ()) -> Any:
    """JSON merge patch (RFC 7386), except that `quotas` lists merge by `flavor` (resources merge by name) and
    `clusterQueues` by `name`."""
    if isinstance(patch, dict) and isinstance(base, dict):
        result = dict(base)
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            elif key in MERGE_KEYS and isinstance(value, list) and isinstance(base.get(key), list):
                result[key] = _merge_keyed(base[key], value, MERGE_KEYS[key])
            else:
                result[key] = merge_patch(base.get(key), value, path + (key,))
        return result
    return copy.deepcopy(patch)


def _merge_keyed(base: list[Any], patch: list[Any], key: str) -> list[Any]:
    return [_merged_item(base, patch, pair) for pair in _keyed_pairs(base, patch, key)]


def _keyed_pairs(base: list[Any], patch: list[Any], key: str) -> list[tuple[int | None, int | None]]:
    """Which base item and which patch item make each item of the merged list (by `key`: flavor, name)."""
    pairs: list[tuple[int | None, int | None]] = [(i, None) for i in range(len(base))]
    # Only string keys merge: anything else is left for the model to report (no TypeError).
    index = {q[key]: i for i, q in enumerate(base) if isinstance(q, dict) and isinstance(q.get(key), str)}
    for j, item in enumerate(patch):
        name = item.get(key) if isinstance(item, dict) and isinstance(item.get(key), str) else None
        if name in index:
            pairs[index[name]] = (index[name], j)
        else:
            pairs.append((None, j))
    # `resources: null` in an overlay removes that flavor from the quotas.
    return [pair for pair in pairs if not _dropped(_merged_item(base, patch, pair))]


def _merged_item(base: list[Any], patch: list[Any], pair: tuple[int | None, int | None]) -> Any:
    b, p = pair
    if p is None:
        return copy.deepcopy(base[b]) if b is not None else None
    return merge_patch(base[b], patch[p]) if b is not None else copy.deepcopy(patch[p])


def _dropped(item: Any) -> bool:
    return isinstance(item, dict) and "flavor" in item and not item.get("resources")


_MISSING = object()


def trace(base: Any, patch: Any, path: Loc) -> tuple[str, Loc, int]:
    """Where `path` of `merge_patch(base, patch)` was written: ("overlay", path in the patch) or ("base", path
    in the base), and how many steps of `path` exist (when not all, the path is the deepest written ancestor).
    A step may be a quota item by flavor (an object with a `name`) or an index into the merged quota list."""
    b, p = base, patch  # the value at the current step in each side; _MISSING where that side has none
    bpath: Loc = ()
    ppath: Loc = ()
    parent: Any = None
    done = 0
    for step in path:
        if p is not _MISSING and b is not _MISSING and parent in MERGE_KEYS and isinstance(b, list) \
                and isinstance(p, list):
            pairs = _keyed_pairs(b, p, MERGE_KEYS[parent])
            pair = _pick(pairs, step, b, p, MERGE_KEYS[parent])
            if pair is None:
                break
            bi, pi = pair
            b, bpath = (b[bi], bpath + (bi,)) if bi is not None else (_MISSING, bpath)
            p, ppath = (p[pi], ppath + (pi,)) if pi is not None else (_MISSING, ppath)
        elif p is not _MISSING:
            if isinstance(p, dict) and isinstance(step, str) and p.get(step) is not None:
                merges = isinstance(b, dict) and (isinstance(p[step], dict) or
                                                  (step in MERGE_KEYS and isinstance(p[step], list)))
                nb = b.get(step, _MISSING) if merges else _MISSING
                if merges and not isinstance(nb, type(p[step])):
                    nb = _MISSING
                b, bpath = nb, (bpath + (step,) if nb is not _MISSING else bpath)
                p, ppath = p[step], ppath + (step,)
            elif isinstance(p, dict) and isinstance(b, dict) and step not in p and step in b:
                p, b, bpath = _MISSING, b[step], bpath + (step,)
            elif isinstance(p, list) and b is _MISSING:
                index = _index(p, step)
                if index is None:
                    break
                p, ppath = p[index], ppath + (index,)
            else:
                break
        else:
            index = _index(b, step) if isinstance(b, list) else step
            if not _has_path(b, (index,)):
                break
            b, bpath = b[index], bpath + (index,)
        parent = step
        done += 1
    return ("overlay", ppath, done) if p is not _MISSING and (ppath or done == len(path)) else ("base", bpath, done)


def _pick(pairs: list[tuple[int | None, int | None]], step: Any, base: list[Any],
          patch: list[Any], key: str) -> tuple[int | None, int | None] | None:
    name = getattr(step, "name", None)
    if name is None:
        return pairs[step] if isinstance(step, int) and 0 <= step < len(pairs) else None
    for bi, pi in pairs:
        item = patch[pi] if pi is not None else base[bi]  # type: ignore[index]
        if isinstance(item, dict) and item.get(key) == name:
            return bi, pi
    return None


def _index(data: list[Any], step: Any) -> int | None:
    """A list step: an index, or the item whose `step.key` (a quota's flavor, a queue's name) is `step.name`."""
    name = getattr(step, "name", None)
    if name is not None:
        key = getattr(step, "key", "flavor")
        return next((i for i, q in enumerate(data) if isinstance(q, dict) and q.get(key) == name), None)
    return step if isinstance(step, int) and 0 <= step < len(data) else None


def _get(data: Any, path: Loc) -> Any:
    return _by_path(data, path) if _has_path(data, path) else _MISSING


def _by_path(data: Any, path: Loc) -> Any:
    for key in path:
        data = data[key]
    return data


def _apply_overlay(entry: Entry, env: Entry, patch: dict[str, Any] | None) -> Entry:
    if not patch:
        return entry
    overlay_path: Loc = ("spec", "overlays", entry.kind, entry.name)
    data = dict(entry.doc.data)
    data["spec"] = merge_patch(data.get("spec") or {}, patch)
    try:
        model = type(entry.model).model_validate(data)
    except ValidationError as err:
        # Report in the file that wrote the offending field: the overlay, or the base document.
        first = next((e for e in err.errors() if e["type"] == "extra_forbidden"), err.errors()[0])
        loc = tuple(p for p in first["loc"] if isinstance(p, (str, int)) and p != "[key]")
        if loc[:1] == ("spec",):
            side, concrete, done = trace(entry.doc.data.get("spec"), patch, loc[1:])
            doc, prefix = (env.doc, overlay_path) if side == "overlay" else (entry.doc, ("spec",))
            # the steps it did not find (a missing field) keep their names
            raise translate_error(err, doc, type(entry.model), prefix=prefix + concrete, strip=1 + done) from None
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


def _located(doc: Document, path: Loc, message: str, hint: str | None = None) -> KueueplanError:
    field_path = _dotted(path)
    text = f"{field_path}: {message}" if field_path else message
    return KueueplanError(text, file=doc.file, line=doc.line_of(path), column=doc.column_of(path), hint=hint)


def _dotted(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
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
        suggestion = did_you_mean(str(loc[-1]), allowed)
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

