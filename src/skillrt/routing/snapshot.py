"""A built router index saved whole, so a cold process loads it instead of rebuilding it.

Building the index of 1,000 real skills from the store's caches still parses every
skill's cached fields, builds the BM25F postings and looks up ~10,000 vectors (about half
a second). When nothing changed, a short-lived process (a CLI route, a prompt hook without
a daemon) loads this snapshot instead: one ``.npz`` file of arrays (no pickle), written
atomically next to the local state store, under a key that hashes everything the arrays
depend on: the code's recipes, the document model, and each skill's fields key (its
identity, frontmatter hash and SKILL.md size, mtime and inode). Any change gives a new key,
hence a rebuild (in which unchanged skills still come from the caches); the newest few
snapshots are kept. A snapshot that cannot be read is ignored (and rebuilt), never an error.
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.atomic import atomic_write_bytes
from skillrt.routing.fields import FIELDS_RECIPE, BodySection, SkillFields

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend
    from skillrt.routing.lexical import LexicalIndex
    from skillrt.routing.semantic import SemanticIndex

__all__ = [
    "SNAPSHOT_VERSION",
    "Snapshot",
    "load_snapshot",
    "save_snapshot",
    "snapshot_key",
]

#: Bump when what an index holds or how it is computed changes.
SNAPSHOT_VERSION = "router-index-v1"
#: Snapshots kept per folder (one per recently used catalogue).
KEEP = 4
_FOLDER = "router-index"


@dataclass(frozen=True)
class Snapshot:
    """What a saved index gives back: its lexical and semantic parts and each skill's
    sections (the fields' terms are only needed to build the lexical part)."""

    lexical: LexicalIndex
    semantic: SemanticIndex
    fields: list[SkillFields]


def snapshot_key(
    fields_keys: Sequence[str], backend: EmbeddingBackend, recipe: Sequence[object]
) -> str:
    """The key of an index over skills with these fields keys (see the module docstring)."""
    head = json.dumps([SNAPSHOT_VERSION, FIELDS_RECIPE, backend.model_id, *map(str, recipe)])
    digest = hashlib.sha256(head.encode("utf-8"))
    for key in fields_keys:
        digest.update(key.encode("ascii"))
    return digest.hexdigest()


def snapshot_folder(store_path: Path) -> Path:
    """Where the indexes over the cache at ``store_path`` are saved."""
    return store_path.parent / _FOLDER


def snapshot_path(store_path: Path, key: str) -> Path:
    return snapshot_folder(store_path) / f"{key[:32]}.npz"


def save_snapshot(
    path: Path, key: str, lexical: LexicalIndex, semantic: SemanticIndex, fields: list[SkillFields]
) -> None:
    """Write the index atomically, then drop the oldest snapshots past :data:`KEEP`."""
    import numpy as np

    sections = json.dumps(
        [[[s.heading, s.text] for s in f.sections] for f in fields], ensure_ascii=False
    ).encode("utf-8")
    arrays: dict[str, Any] = {
        "key": np.frombuffer(key.encode("ascii"), dtype=np.uint8),
        "sections": np.frombuffer(sections, dtype=np.uint8),
    }
    arrays.update({f"lex_{k}": v for k, v in lexical.to_arrays().items()})
    arrays.update({f"sem_{k}": v for k, v in semantic.to_arrays().items()})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    try:
        atomic_write_bytes(path, buffer.getvalue())
        others = sorted(
            (p for p in path.parent.glob("*.npz") if p != path),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in others[KEEP - 1 :]:
            old.unlink(missing_ok=True)
    except OSError as exc:  # a cache that cannot be written costs the next cold start
        warnings.warn(f"router index snapshot not saved: {exc}", RuntimeWarning, stacklevel=2)


def load_snapshot(path: Path, key: str, backend: EmbeddingBackend) -> Snapshot | None:
    """The index saved at ``path`` under ``key``, or None (absent, torn, another key)."""
    import numpy as np

    from skillrt.routing.lexical import LexicalIndex
    from skillrt.routing.semantic import SemanticIndex

    try:
        with np.load(path, allow_pickle=False) as data:
            arrays: dict[str, NDArray[np.generic]] = {name: data[name] for name in data.files}
        if bytes(arrays["key"]).decode("ascii") != key:
            return None
        lexical = LexicalIndex.from_arrays(
            {k[4:]: v for k, v in arrays.items() if k.startswith("lex_")}
        )
        semantic = SemanticIndex.from_arrays(
            backend, {k[4:]: v for k, v in arrays.items() if k.startswith("sem_")}
        )
        groups = json.loads(bytes(arrays["sections"]).decode("utf-8"))
        fields = [SkillFields(tuple(BodySection(h, t) for h, t in group)) for group in groups]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeError) as exc:
        warnings.warn(f"router index snapshot ignored ({exc})", RuntimeWarning, stacklevel=2)
        return None
    if len(fields) != semantic.n_skills or lexical.n_docs != semantic.n_skills:
        return None
    return Snapshot(lexical, semantic, fields)
