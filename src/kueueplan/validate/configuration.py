"""Kueue's Configuration among the inputs: the `kueue-manager-config` ConfigMap, read once per object.

A rule about the Configuration reports on a *view*: an `Obj` whose data is the decoded
`controller_manager_config.yaml` and whose paths are paths inside it. The view names the ConfigMap (same ref) and
locates a path at its line inside the embedded file (plain manifests: the line of the data key plus the line in
the block), or at the spec line that wrote it (an Environment's `configuration`).

`universe_configuration(ctx, obj)` is the Configuration the objects of one apply unit run under: the ConfigMap
among them, else the default install of their Kueue release (`assumed` is then True).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kueueplan.errors import InputRefusedError, KueueplanError
from kueueplan.kube.configuration import CONFIGMAP_KEY, CONFIGMAP_NAME, Configuration, parse_configuration
from kueueplan.kube.podsets import version_tuple
from kueueplan.kube.yamlio import load_text
from kueueplan.validate.model import Context, Obj

NEWEST = (0, 19)


@dataclass
class Found:
    """One kueue-manager-config ConfigMap: its file (None when it cannot be decoded) and where its fields are."""

    configmap: Obj
    view: Obj
    data: dict[str, Any] | None
    problem: tuple[tuple[str | int, ...], str] | None = None  # (path in the ConfigMap, why it cannot be read)


def is_manager_config(obj: Obj) -> bool:
    return obj.kind == "ConfigMap" and obj.api_version == "v1" and obj.name == CONFIGMAP_NAME


def release_of(obj: Obj, ctx: Context) -> tuple[int, int]:
    version = obj.kueue_version or ctx.kueue_version
    if not version:
        return NEWEST
    try:
        major, minor, *_ = version_tuple(version)
    except KueueplanError:
        return NEWEST
    return int(major), int(minor)


def read(obj: Obj) -> Found:
    """The ConfigMap's Configuration, decoded once per object (rules share it through `obj.cache`)."""
    cached = obj.cache.get("kueue-configuration")
    if cached is None:
        cached = obj.cache["kueue-configuration"] = _read(obj)
    return cached


def _read(obj: Obj) -> Found:
    data = obj.data.get("data")
    text = data.get(CONFIGMAP_KEY) if isinstance(data, dict) else None
    key_path = ("data", CONFIGMAP_KEY)
    if not isinstance(text, str):
        return Found(obj, obj, None, (("data",), f"has no data.{CONFIGMAP_KEY}: Kueue's manager reads its "
                                                 "Configuration from that key and would not start"))
    try:
        docs = load_text(text, file=obj.file)  # the same limits as any input (nodes, aliases, depth)
    except InputRefusedError:
        raise  # over a limit: exit 2, as everywhere
    except KueueplanError as err:
        return Found(obj, obj, None, (key_path, f"{CONFIGMAP_KEY} is not valid YAML ({err.message}): Kueue's "
                                                "manager would not start"))
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        return Found(obj, obj, None, (key_path, f"{CONFIGMAP_KEY} must hold one Configuration mapping"))
    embedded = docs[0]
    view = Obj(data=embedded.data, doc=None, file=obj.file, api_version=obj.api_version, kind=obj.kind,
               name=obj.name, namespace=obj.namespace, universe=obj.universe, env=obj.env,
               env_in_ref=obj.env_in_ref, kueue_version=obj.kueue_version)
    if obj.doc is not None:
        key_line = obj.doc.line_of(obj.path_prefix + key_path)
        block = "\n" in text.rstrip("\n")  # a literal block: the file starts on the line after the key

        def where(path: tuple[str | int, ...]) -> tuple[str, int | None]:
            if key_line is None or not block:
                return obj.file, key_line
            return obj.file, key_line + (embedded.line_of(path) or 1)

        view.origin = where
    else:
        view.origin = lambda path: obj.where(key_path + tuple(path))
    return Found(obj, view, embedded.data)


def manager_configs(ctx: Context) -> list[Obj]:
    return [o for o in ctx.by_kind.get("ConfigMap", []) if is_manager_config(o)]


@dataclass
class Effective:
    config: Configuration
    view: Obj | None  # None: no ConfigMap, the release's default install is assumed
    release: tuple[int, int]

    @property
    def assumed(self) -> bool:
        return self.view is None

    def describe(self) -> str:
        if self.view is None:
            return f"a default install of Kueue v{self.release[0]}.{self.release[1]} (no kueue-manager-config found)"
        return f"ConfigMap {CONFIGMAP_NAME}"


def universe_configuration(ctx: Context, obj: Obj) -> Effective | None:
    """The effective Configuration for `obj`'s apply unit; None when its ConfigMap cannot be read (KP450 says
    why) or two ConfigMaps disagree."""
    # One Configuration per apply unit, shared by every rule that asks (kept on the Context of this run).
    cache: dict[str, Effective | None] | None = getattr(ctx, "_kueue_configurations", None)
    if cache is None:
        cache = {}
        setattr(ctx, "_kueue_configurations", cache)
    if obj.universe not in cache:
        cache[obj.universe] = _effective(ctx, obj)
    return cache[obj.universe]


def _effective(ctx: Context, obj: Obj) -> Effective | None:
    maps = [m for m in manager_configs(ctx) if m.universe == obj.universe]
    release = release_of(maps[0] if maps else obj, ctx)
    if len(maps) > 1:
        return None
    if not maps:
        return Effective(parse_configuration(None, release), None, release)
    found = read(maps[0])
    if found.data is None:
        return None
    try:
        return Effective(parse_configuration(found.data, release), found.view, release)
    except KueueplanError:
        return None
