"""Progressive disclosure with hard safety (seed 003): Level-2 bodies, Level-3 excerpts.

``load_skill_body(ref, limits)`` and ``load_resource(ref, path, section_hint, limits)``
return a :class:`LoadResult` (text + :class:`LoadReport`); :func:`injection_block`
renders the §6 context block; :func:`safe_join` is the path jail on its own.
"""

from skillrt.loading.loader import load_resource, load_skill_body
from skillrt.loading.paths import check_relative_path, safe_join
from skillrt.loading.report import (
    LoadReport,
    LoadResult,
    injection_block,
    new_run_id,
    observations_dir,
)
from skillrt.loading.sections import Heading, scan_headings

__all__ = [
    "Heading",
    "LoadReport",
    "LoadResult",
    "check_relative_path",
    "injection_block",
    "load_resource",
    "load_skill_body",
    "new_run_id",
    "observations_dir",
    "safe_join",
    "scan_headings",
]
