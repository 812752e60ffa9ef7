"""Safe, fast YAML loading with line numbers on demand.

Parsing goes through PyYAML's C loader (ten times faster than ruamel's round-trip loader on platform-sized
files). Line numbers for a key path come from ruamel.yaml, parsed lazily and once per file, only when a
finding or an error needs one. Loading refuses what would hurt a CI runner: Python object tags (never
constructed), duplicate keys (the API server rejects them, editors hide them), alias bombs and deep nesting.
"""

from __future__ import annotations

import io
import os
import re
from itertools import accumulate
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import yaml

from kueueplan.errors import InputRefusedError, KueueplanError

try:  # the C extension is an optional part of PyYAML wheels
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - pure-Python fallback
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# Limits on what one file may hold. They bound work, not size: nodes (every scalar, list and mapping, counted
# per file and after alias expansion), aliases and nesting depth. The defaults hold Kueue's large-scale
# performance shape (1,000 ClusterQueues, 50,000 workloads: about 300,000 nodes) with room to spare, and keep a
# file's parse under about 0.5 GB; docs/validate.md states them.
MAX_NODES = 1_000_000
MAX_ALIASES = 10_000
MAX_DEPTH = 200
MAX_FILE_BYTES = 256 * 1024 * 1024  # only a backstop for reading: the node limit is what binds
POSITIONS_FULL_BYTES = 512 * 1024  # documents up to this size get every key's line at once; larger: per path

Path_ = tuple[str | int, ...]


class YamlError(KueueplanError):
    """A file that is not usable YAML for kueueplan."""


class LimitError(YamlError, InputRefusedError):
    """A file over a resource limit (nodes, aliases, depth, size): unusable input in every command (exit 2),
    never a finding among others, since nothing of it was read."""


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that refuses duplicate keys and keeps every scalar a plain Python value."""


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    # YAML's merge key (https://yaml.org/type/merge.html), implemented here rather than by PyYAML's
    # flatten_mapping, whose precedence among several merged mappings changed between patch releases:
    # a key written in the mapping overrides merged ones, and among merged mappings the first one wins.
    # Only a key written twice in the mapping itself is a duplicate (the API server rejects those).
    result: dict[Any, Any] = {}
    for source in _merge_sources(loader, node):
        for key, value in source.items():
            result.setdefault(key, value)
    seen: set[Any] = set()
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise YamlError("a mapping key must be a scalar", line=key_node.start_mark.line + 1,
                            column=key_node.start_mark.column + 1) from None
        if key in seen:
            raise YamlError(f"duplicate key {key!r}", line=key_node.start_mark.line + 1,
                            column=key_node.start_mark.column + 1,
                            hint="remove one of the two entries; the API server rejects duplicate keys")
        seen.add(key)
        result[key] = loader.construct_object(value_node, deep=deep)
    return result


def _merge_sources(loader: _Loader, node: yaml.MappingNode) -> list[dict[Any, Any]]:
    """The mappings that `<<` keys merge into `node`, in precedence order (earlier wins)."""
    sources: list[dict[Any, Any]] = []
    for key_node, value_node in node.value:
        if key_node.tag != _MERGE_TAG:
            continue
        nodes = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in nodes:
            if not isinstance(source, yaml.MappingNode):
                raise YamlError("`<<` merges only mappings (or a list of mappings)",
                                line=source.start_mark.line + 1, column=source.start_mark.column + 1)
            sources.append(loader.construct_object(source, deep=True))
    return sources


def _construct_timestamp_as_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    # Kubernetes objects never hold YAML timestamps; keep the text as the API server would.
    return str(loader.construct_scalar(node))


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)


@dataclass
class Document:
    """One YAML document: its plain data and where it came from."""

    data: Any
    file: str
    index: int
    line: int
    _lines: dict[Path_, tuple[int, int]] | None = field(default=None, repr=False, compare=False)
    _text: str | None = field(default=None, repr=False, compare=False)

    def line_of(self, path: Path_ = ()) -> int | None:
        """1-based line of the key (or list item) at `path`; the nearest existing ancestor if it is missing."""
        found = self._position(path)
        return found[0] if found else None

    def column_of(self, path: Path_ = ()) -> int | None:
        found = self._position(path)
        return found[1] if found else None

    def _position(self, path: Path_) -> tuple[int, int] | None:
        path = tuple(path)
        if not path or self._text is None:
            return (self.line, 1)  # the document itself: known without reading it again
        if self._lines is None:
            self._lines = _positions(self._text, self.index)
        hit = self._lines.get(path)
        known = _SHALLOW in self._lines and len(path) <= SHALLOW_DEPTH  # missing: the ancestors answer
        if hit is None and _LOCATE_EACH in self._lines and not known:
            # A large document: find this path alone (bounded by the node limit, stopping once found)
            # rather than composing the whole document and every key's position.
            hit = self._lines[path] = _locate(self._text, self.index, path) or (self.line, 1)
        if hit:
            return hit
        for cut in range(len(path) - 1, -1, -1):
            hit = self._lines.get(path[:cut])
            if hit:
                return hit
        return (self.line, 1)


def read_text(path: str | Path) -> str:
    """Read a file as UTF-8 text, refusing binaries and oversized files with a clear error."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LimitError(f"file is {size} bytes; kueueplan reads YAML files up to {MAX_FILE_BYTES} bytes",
                            file=str(path))
        raw = p.read_bytes()
    except OSError as err:
        raise YamlError(f"cannot read file: {err.strerror or err}", file=str(path)) from None
    if b"\x00" in raw:
        raise YamlError("binary file, not YAML", file=str(path), hint="remove it or exclude it from the inputs")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise YamlError("not UTF-8 text", file=str(path), line=line,
                        hint="save the file as UTF-8; Kubernetes manifests are UTF-8") from None


YAML_SUFFIXES = (".yaml", ".yml")


def yaml_files(folder: Path, suffixes: tuple[str, ...] = YAML_SUFFIXES) -> list[Path]:
    """YAML files below a folder in sorted order, skipping hidden files and folders (.git, .venv).

    A symlink that leads out of the repository (see `input_root`) is refused: a pull request could otherwise
    make CI read, and report on, any file of the runner. Symlinked folders are not walked.
    """
    root = input_root(folder)
    files = sorted(p for p in folder.rglob("*") if p.suffix in suffixes and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    for p in files:
        refuse_outside(p, root)
    return files


def input_root(path: Path) -> Path:
    """The repository an input belongs to: the nearest folder above it holding `.git`; without one, the
    working directory when the input lies below it, else the input folder itself."""
    start = Path(os.path.abspath(path))
    for p in (start, *start.parents):
        if (p / ".git").exists():
            return p
    cwd = Path.cwd()
    if start == cwd or cwd in start.parents:
        return cwd
    return start if start.is_dir() else start.parent


def refuse_linked_out(path: Path) -> None:
    """A file named on the command line, refused when it is a symlink out of its repository (`input_root`):
    in CI the path comes from the workflow but the file from the pull request, which could link it to any
    file of the runner."""
    refuse_outside(path, input_root(path))


def refuse_outside(path: Path, root: Path) -> None:
    """Refuse `path` when following its symlinks leads out of `root`."""
    real_root = root.resolve()
    target = path.resolve()
    if target != real_root and real_root not in target.parents:
        raise YamlError(f"{path} is a symlink to {target}, outside {root}", file=str(path),
                        hint="kueueplan does not follow symlinks out of the repository; copy the file in")


def load_file(path: str | Path) -> list[Document]:
    return load_text(read_text(path), file=str(path))


def load_text(text: str, file: str = "<stdin>") -> list[Document]:
    """Parse every document of a multi-document YAML text. Empty documents are dropped."""
    _check_depth_and_nodes(text, file)
    try:
        if "&" not in text:
            # No anchors, so no aliases to expand: straight from libyaml's events to Python data.
            spans = _spans(text)
            built = _build_from_events(text, spans)
            if built is None:  # something only the full loader handles (tags, merge keys, a duplicate key)
                built = [(data, None) for data in yaml.load_all(text, Loader=_Loader)]
            return [Document(data=data, file=file, index=i, line=_first_line(text, spans, i), _text=text,
                             _lines=lines)
                    for i, (data, lines) in enumerate(built) if data is not None]
        return _load_composed(text, file)
    except YamlError as err:
        err.file = file
        raise
    except yaml.constructor.ConstructorError as err:
        raise _tag_error(err, file) from None
    except yaml.MarkedYAMLError as err:
        raise _marked_error(err, file, text) from None
    except yaml.YAMLError as err:
        raise YamlError(f"invalid YAML: {err}", file=file) from None
    except RecursionError:
        raise LimitError(f"nesting deeper than {MAX_DEPTH} levels", file=file) from None


_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "timestamp"))
SHALLOW_DEPTH = 4  # large documents: positions of key paths up to this length are kept from the one parse


class _Fallback(Exception):
    """The fast builder met something it leaves to the full loader (which then decides, errors included)."""


def _build_from_events(text: str, spans: tuple[tuple[int, int, int], ...]
                       ) -> list[tuple[Any, dict[Path_, tuple[int, int]] | None]] | None:
    """Every document's data straight from libyaml's event stream, or None to use the full loader.

    Composing node objects (each with two marks) and constructing from them costs about ten times the parse
    on a 2 MB scenario; plain data needs neither. Scalars resolve exactly as the safe loader resolves them
    (its resolver and constructors, once per distinct plain value). Anything else - an explicit tag, an
    alias, a merge key, a complex or duplicate key - returns None so that the full loader handles it,
    errors and all. Documents over POSITIONS_FULL_BYTES also get the line and column of every key path up
    to SHALLOW_DEPTH long (each `workloads` and `manifests` item of a large scenario), which would otherwise
    each need a pass of their own.
    """
    loader = _Loader(text)  # the event source, and the resolver and constructors of scalars
    try:
        return _events_to_data(spans, loader)
    except _Fallback:
        return None
    finally:
        loader.dispose()


def _events_to_data(spans: tuple[tuple[int, int, int], ...], loader: _Loader
                    ) -> list[tuple[Any, dict[Path_, tuple[int, int]] | None]]:
    # each distinct scalar resolved and constructed once: plain ones (int, bool, null, ...) and quoted ones (str)
    plain: dict[str, Any] = {}
    quoted: dict[str, Any] = {}
    constructors = loader.yaml_constructors
    docs: list[tuple[Any, dict[Path_, tuple[int, int]] | None]] = []
    # One frame per open collection: [container, pending key (mappings; _NO_KEY when a key is expected),
    # its key path or None when positions are not kept below it]
    stack: list[list[Any]] = []
    lines: dict[Path_, tuple[int, int]] | None = None
    root: Any = None
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    collection_end = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    for event in _events(loader):
        cls = event.__class__
        if cls is scalar_event:
            tag = event.tag
            if tag is not None and tag != "!":
                raise _Fallback
            scalars = plain if event.implicit[0] else quoted
            value = scalars.get(event.value, _NO_KEY)
            if value is _NO_KEY:
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
                if tag not in _PLAIN_TAGS:
                    raise _Fallback
                value = scalars[event.value] = constructors[tag](loader, yaml.ScalarNode(tag, event.value))
        elif cls is mapping_start or cls is sequence_start:
            if event.tag is not None and event.tag != "!" or event.anchor is not None:
                raise _Fallback
            value = {} if cls is mapping_start else []
        elif cls in collection_end:
            value = stack.pop()[0]
            if not stack:
                root = value
                continue
            top = stack[-1]
            if top[1] is not _NO_KEY:
                top[0][top[1]] = value
                top[1] = _NO_KEY
            else:
                top[0].append(value)
            continue
        elif cls is yaml.DocumentStartEvent:
            index = len(docs)
            big = index < len(spans) and spans[index][1] - spans[index][0] > POSITIONS_FULL_BYTES
            lines = {_LOCATE_EACH: (0, 1), _SHALLOW: (0, 1)} if big else None
            root = None
            continue
        elif cls is yaml.DocumentEndEvent:
            docs.append((root, lines))
            continue
        elif cls is yaml.AliasEvent:
            raise _Fallback
        else:
            continue
        # a scalar or a new collection: a key, a mapping value, a list item or the document itself
        path: Path_ | None = ()
        if stack:
            top = stack[-1]
            container = top[0]
            if container.__class__ is dict:
                if top[1] is _NO_KEY:  # a key
                    if cls is not scalar_event or value in container:
                        raise _Fallback  # a complex key, or a duplicate (the full loader says where)
                    top[1] = value
                    if top[2] is not None and len(top[2]) < SHALLOW_DEPTH:
                        lines[top[2] + (value,)] = (event.start_mark.line + 1, event.start_mark.column + 1)
                    continue
                if cls is scalar_event:
                    container[top[1]] = value
                    top[1] = _NO_KEY
                    continue
                parent = top[2]
                path = parent + (top[1],) if parent is not None and len(parent) < SHALLOW_DEPTH else None
            else:
                parent = top[2]
                path = parent + (len(container),) if parent is not None and len(parent) < SHALLOW_DEPTH else None
                if path is not None:
                    lines[path] = (event.start_mark.line + 1, event.start_mark.column + 1)
                if cls is scalar_event:
                    container.append(value)
                    continue
        elif cls is scalar_event:
            root = value
            continue
        stack.append([value, _NO_KEY, path if lines is not None else None])
    return docs


_NO_KEY = object()


def _events(loader: Any) -> Iterator[Any]:
    """The loader's parsing events, up to and including StreamEnd (then the parser returns None): yaml.parse
    without its generator, which costs a frame resumption and a check_event call per event (an eighth of
    reading a 2 MB scenario). The caller disposes of the loader."""
    return iter(loader.get_event, None)


def _load_composed(text: str, file: str) -> list[Document]:
    """Anchors present: compose the node graph first and measure it before anything is expanded."""
    documents = []
    for index, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
        if node is None:
            continue
        _check_size(node, file)
        data = _construct(node, file)
        if data is not None:
            documents.append(Document(data=data, file=file, index=index, line=node.start_mark.line + 1,
                                      _text=text))
    return documents


_SEPARATOR = re.compile(r"^(---|\.\.\.)(\s|$)", re.M)


@lru_cache(maxsize=16)
def _spans(text: str) -> tuple[tuple[int, int, int], ...]:
    """(start, end, first line) of every document, counted as YAML counts them (and so as Document.index is).

    After an explicit `---` there is always a document (perhaps empty); before the first `---` or after a
    `...`, only if there is content besides comments, blank lines and directives. Lines are counted
    incrementally, so a file of thousands of documents costs one pass.
    """
    out: list[tuple[int, int, int]] = []
    pos, line, explicit = 0, 1, False
    for mark in [*_SEPARATOR.finditer(text), None]:
        end = mark.start() if mark is not None else len(text)
        if explicit or _has_content(text[pos:end]):
            out.append((pos, end, line))
        if mark is None:
            break
        explicit = mark.group(1) == "---"
        newline = text.find("\n", mark.start())
        next_pos = len(text) if newline < 0 else newline + 1
        line += text.count("\n", pos, next_pos)
        pos = next_pos
    return tuple(out)


_CONTENT_LINE = re.compile(r"^[ \t]*[^\s#%]", re.M)
_FIRST_LINE = re.compile(r"^[ \t]*[^\s#]", re.M)


def _has_content(chunk: str) -> bool:
    return _CONTENT_LINE.search(chunk) is not None


def _first_line(text: str, spans: tuple[tuple[int, int, int], ...], index: int) -> int:
    """1-based line of a document's first content line (what an error about the whole object points at)."""
    if index >= len(spans):
        return 1
    start, end, line = spans[index]
    found = _FIRST_LINE.search(text, start, end)
    return line + text.count("\n", start, found.start()) if found else line


_FLOW_BRACKETS = re.compile(r"[^\[\]{}]+")
_BLOCK_PREFIX = re.compile(r"(?m)^[ \t-]*")
_OPEN = {"[": 1, "{": 1, "]": -1, "}": -1}


def _check_depth_and_nodes(text: str, file: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH and more than MAX_NODES nodes before anything is composed.

    libyaml's composer is recursive (deep nesting overflows the C stack) and builds every node of a document
    with its marks at once (a 30 MB flat list takes gigabytes). Cheap upper bounds clear ordinary files at
    once: depth from block indentation plus flow brackets, nodes from the characters that can start one. Only
    a file that might exceed a limit pays for an exact pass over libyaml's event stream, which stops at the
    first node over the limit and holds one event at a time.
    """
    brackets = _FLOW_BRACKETS.sub("", text)
    flow = max(accumulate((_OPEN[c] for c in brackets), initial=0))
    block = max((len(m) for m in _BLOCK_PREFIX.findall(text)), default=0)
    deep = flow + block + 1 > MAX_DEPTH
    many = _node_bound(text) > MAX_NODES
    if deep or many:
        _count_events(text, file)


def _node_bound(text: str) -> int:
    """More nodes than `text` can hold: each node starts a line or follows one of `-:,[{?` (or `&*!` marks
    it; those prefix a node that is already counted, so they are left out)."""
    return (text.count("\n") + 1 + 3 * (text.count("-") + text.count(":") + text.count(",") + text.count("[")
                                         + text.count("{") + text.count("?")))


def _count_events(text: str, file: str) -> None:
    depth = nodes = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise LimitError(f"nesting deeper than {MAX_DEPTH} levels", file=file,
                                    line=event.start_mark.line + 1, hint="flatten the document")
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
                continue
            elif not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                continue
            nodes += 1
            if nodes > MAX_NODES:
                raise LimitError(f"more than {MAX_NODES:,} YAML nodes in one file (each scalar, list and mapping "
                                "is a node)", file=file, line=event.start_mark.line + 1,
                                hint="split the file; kueueplan reads files of up to "
                                     f"{MAX_NODES:,} nodes (docs/validate.md)")
    except yaml.YAMLError as err:
        if "nesting depth" in str(err):  # libyaml's scanner met its own depth limit first
            mark = getattr(err, "problem_mark", None)
            raise LimitError(f"nesting deeper than {MAX_DEPTH} levels", file=file,
                             line=mark.line + 1 if mark else None, hint="flatten the document") from None
        return  # the real parse reports the syntax error with its position


def _construct(node: yaml.Node, file: str) -> Any:
    loader = _Loader("")
    try:
        return loader.construct_document(node)
    except YamlError as err:
        err.file = file
        raise
    except yaml.constructor.ConstructorError as err:
        raise _tag_error(err, file) from None
    except RecursionError:
        raise LimitError(f"nesting deeper than {MAX_DEPTH} levels", file=file,
                        line=node.start_mark.line + 1) from None
    finally:
        loader.dispose()


def _check_size(root: yaml.Node, file: str) -> None:
    """Refuse alias bombs and deep nesting before constructing anything.

    Counts nodes as if every alias were expanded, memoising shared nodes so the count itself is cheap.
    """
    expanded: dict[int, int] = {}
    aliases = 0

    def count(node: yaml.Node, depth: int) -> int:
        nonlocal aliases
        if depth > MAX_DEPTH:
            raise LimitError(f"nesting deeper than {MAX_DEPTH} levels", file=file, line=node.start_mark.line + 1,
                            hint="flatten the document")
        key = id(node)
        if key in expanded:
            aliases += 1  # a node met again is an alias (or a merge of one)
            if aliases > MAX_ALIASES:
                raise LimitError(f"more than {MAX_ALIASES:,} aliases in one document", file=file,
                                line=node.start_mark.line + 1, hint="write the repeated parts out")
            return expanded[key]
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += count(k, depth + 1) + count(v, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += count(item, depth + 1)
        if total > MAX_NODES:
            raise LimitError(f"document expands to more than {MAX_NODES} nodes (an alias bomb?)", file=file,
                            line=node.start_mark.line + 1, hint="remove the repeated aliases")
        expanded[key] = total
        return total

    count(root, 0)


def _tag_error(err: yaml.constructor.ConstructorError, file: str) -> YamlError:
    mark = err.problem_mark
    return YamlError(f"unsupported YAML tag: {err.problem}", file=file, line=mark.line + 1 if mark else None,
                     hint="kueueplan reads plain YAML only; remove the !tag")


def _marked_error(err: yaml.MarkedYAMLError, file: str, text: str = "") -> YamlError:
    problem = err.problem or err.context or "invalid YAML"
    mark = err.problem_mark or err.context_mark
    message, hint, at_context = _plain(err, text)
    if at_context and err.context_mark is not None:
        mark = err.context_mark
    return YamlError(f"invalid YAML: {message or problem}", file=file, line=mark.line + 1 if mark else None,
                     column=mark.column + 1 if mark else None, hint=hint)


def _plain(err: yaml.MarkedYAMLError, text: str) -> tuple[str | None, str | None, bool]:
    """libyaml's message in words a new user can act on: (message, hint, point at the context mark)."""
    problem, context = err.problem or "", err.context or ""
    mark, ctx = err.problem_mark, err.context_mark
    char = _char_at(text, mark)
    opened = f" at line {ctx.line + 1}" if ctx is not None else ""
    if char == "\t" or "tab character" in problem:
        return "tabs are not allowed for indentation; use spaces", "replace the tab characters with spaces", False
    if "cannot start any token" in problem:
        shown = repr(char) if char else "this character"
        return (f"a value cannot start with {shown}", f"quote the value, e.g. '{_rest_of_line(text, mark)}'",
                False)
    if "mapping values are not allowed" in problem:
        return ("a ': ' inside a value (or a key indented under a value)",
                "quote the value if it contains ': ', e.g. command: \"echo a: b\"; else fix the indentation", False)
    if "could not find expected ':'" in problem:
        return ("a line that is neither 'key: value' nor '- item' (a ':' is missing?)",
                "add the ':' after the key, or indent the line as part of the value above", True)
    if "did not find expected key" in problem or "expected '-' indicator" in problem:
        return ("this line's indentation does not match the lines above it",
                "indent keys of one mapping (and items of one list) by the same number of spaces", False)
    if "expected ',' or ']'" in problem or "expected ',' or '}'" in problem:
        bracket = "[" if "]" in problem else "{"
        return (f"a '{bracket}' opened{opened} is not closed (or two items lack a ',' between them)",
                f"close it with '{']' if bracket == '[' else '}'}' or add the missing comma", False)
    if "end of stream" in problem and "quoted scalar" in context:
        return f"a quote opened{opened} is never closed", "add the closing quote", True
    if "undefined alias" in problem:
        return "an alias (*name) refers to no anchor (&name) above it", "define the anchor first or fix the name", False
    if "duplicate anchor" in context or "duplicate anchor" in problem:
        return "an anchor (&name) is defined twice", "rename one of them", False
    if "unknown escape" in problem:
        return ("an unknown backslash escape in a double-quoted string",
                "use single quotes, or write \\\\ for a backslash", False)
    return None, None, False


def _char_at(text: str, mark: Any) -> str:
    if mark is None or not text:
        return ""
    lines = text.split("\n")
    if mark.line >= len(lines) or mark.column >= len(lines[mark.line]):
        return ""
    return lines[mark.line][mark.column]


def _rest_of_line(text: str, mark: Any) -> str:
    line = text.split("\n")[mark.line] if mark is not None and text else ""
    return line[mark.column:].strip()[:40].replace("'", "''") if line else "..."


def _positions(text: str, index: int) -> dict[Path_, tuple[int, int]]:
    """Line and column of every key path in document `index`, from ruamel's C composer.

    Only that document's text is composed (about a quarter of a millisecond), so a finding in a
    3,000-object file costs no more than one in a small file. Positions are a courtesy: on any trouble the
    answer falls back to the document's first line.
    """
    spans = _spans(text)
    if index >= len(spans):
        return {}
    start, end, line = spans[index]
    if end - start > POSITIONS_FULL_BYTES:
        return {_LOCATE_EACH: (line, 1)}
    try:
        node = _ruamel_safe().compose(text[start:end])
    except Exception:  # noqa: BLE001 - PyYAML already accepted the text; lines are best effort
        return {}
    return _node_positions(node, line - 1) if node is not None else {}


_LOCATE_EACH: Path_ = ("\0locate-each",)  # marks a document too large to map every key at once
_SHALLOW: Path_ = ("\0shallow",)  # marks a large document whose key paths up to SHALLOW_DEPTH long are all known


def _locate(text: str, index: int, target: Path_) -> tuple[int, int] | None:
    """Line and column of `target` (or its nearest existing ancestor) in document `index`, from libyaml's event
    stream: one event at a time, stopping as soon as the answer is known."""
    spans = _spans(text)
    if index >= len(spans):
        return None
    start, end, line = spans[index]
    best: tuple[int, int] | None = None
    # Frames of the open collections: [path, is_mapping, next index or pending key, expecting a key]
    stack: list[list[Any]] = []

    def mark(event: Any) -> tuple[int, int]:
        return (line + event.start_mark.line, event.start_mark.column + 1)

    def is_prefix(path: Path_ | None) -> bool:
        return path is not None and len(path) <= len(target) and target[:len(path)] == path

    try:
        for event in yaml.parse(text[start:end], Loader=_BaseLoader):
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                frame = stack.pop()
                if is_prefix(frame[0]):
                    return best  # the subtree that could hold the target is done
                _advance(stack)
                continue
            if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent,
                                      yaml.SequenceStartEvent)):
                continue
            if not stack:
                path: Path_ | None = ()
            else:
                top = stack[-1]
                if top[1] and top[3]:  # a mapping key
                    key = event.value if isinstance(event, yaml.ScalarEvent) else None
                    key_path = top[0] + (key,) if top[0] is not None and key is not None else None
                    if is_prefix(key_path):
                        best = mark(event)
                        if key_path == target:
                            return best
                    top[2], top[3] = key_path, False
                    if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                        stack.append([None, isinstance(event, yaml.MappingStartEvent), 0, True])  # complex key
                    continue
                path = top[2] if top[1] else (top[0] + (top[2],) if top[0] is not None else None)
                if not top[1] and is_prefix(path):
                    best = mark(event)
                    if path == target:
                        return best
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append([path, isinstance(event, yaml.MappingStartEvent), 0, True])
            else:
                _advance(stack)
    except yaml.YAMLError:
        return best
    return best


def _advance(stack: list[list[Any]]) -> None:
    """A child of the innermost open collection is complete: expect the next key or item."""
    if not stack:
        return
    top = stack[-1]
    if top[1]:
        top[3] = True
    else:
        top[2] += 1


@lru_cache(maxsize=1)
def _ruamel_safe() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe")  # the C extension when installed (ruamel.yaml.clib), pure Python otherwise


def _node_positions(root: Any, line_offset: int) -> dict[Path_, tuple[int, int]]:
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    positions: dict[Path_, tuple[int, int]] = {(): (line_offset + root.start_mark.line + 1, 1)}
    stack: list[tuple[Any, Path_]] = [(root, ())]
    while stack:
        current, path = stack.pop()
        if len(path) > MAX_DEPTH:
            continue
        if isinstance(current, MappingNode):
            children = [((key.value,), key, value) for key, value in current.value]
        elif isinstance(current, SequenceNode):
            children = [((i,), item, item) for i, item in enumerate(current.value)]
        else:
            continue
        for step, mark_node, child in children:
            mark = mark_node.start_mark
            positions.setdefault(path + step, (line_offset + mark.line + 1, mark.column + 1))
            stack.append((child, path + step))
    return positions
