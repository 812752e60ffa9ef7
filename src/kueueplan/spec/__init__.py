"""The platform spec: pydantic models of `kueueplan.io/v1alpha1` documents and their loading.

Public API:
- `load_spec(path) -> Platform`: every document of a spec folder (or file), validated, with file:line errors.
- `Platform.resolve(env) -> {kind: [Entry]}`: the documents of one environment, overlays applied.
- `Entry.error(message, path)`: a KueueplanError located at a field of the document (or of its overlay).
- `kueueplan.spec.models`: the models; `kueueplan.spec.schema.write_schemas(out_dir)`: their JSON Schema.
"""

from kueueplan.spec.load import Entry, Platform, load_spec

__all__ = ["Entry", "Platform", "load_spec"]
