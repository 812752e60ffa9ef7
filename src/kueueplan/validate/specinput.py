"""Spec folders: load with the spec helper's loader, compile every environment, validate the manifests.

Each environment's manifests form their own universe, so the same ClusterQueue in dev and prod is not a
duplicate. Findings on compiled objects name the spec folder and the environment.
"""

from __future__ import annotations

from pathlib import Path

from kueueplan.validate.model import Obj, make_obj


def compiled_objects(folder: Path) -> list[Obj]:
    from kueueplan.compile import compile_platform

    objects: list[Obj] = []
    for env, manifests in sorted(compile_platform(folder).items()):
        where = f"{folder} (environment {env})"
        for manifest in manifests:
            if not isinstance(manifest, dict):
                continue
            obj = make_obj(manifest, None, where)
            obj.universe, obj.env = f"spec:{folder}:{env}", env
            objects.append(obj)
    return objects
