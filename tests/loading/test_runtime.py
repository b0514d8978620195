"""The SkillRuntime facade methods of the loader."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from skillrt.config import LoaderLimits, RuntimeConfig
from skillrt.runtime import SkillRuntime


def test_runtime_load_read_inject(make_skill: Callable[..., Path], tmp_path: Path) -> None:
    root = tmp_path / "skills"
    big = "# Ref\n\n" + "".join(f"## S{i}\n\n" + "word " * 300 + "\n\n" for i in range(10))
    make_skill("alpha", root=root, body="# Alpha\n\nDo it.\n", files={"references/r.md": big})
    config = RuntimeConfig(project_dir=tmp_path / "proj", state_dir=tmp_path / "state")
    config = dataclasses.replace(config, limits=LoaderLimits(max_resource_excerpt_chars=4000))
    with SkillRuntime(config, roots=[root], persist=False) as rt:
        body = rt.load_body("alpha")
        assert body.text == "# Alpha\n\nDo it.\n"
        assert rt.inject(body).startswith("[Skill: alpha | source=flag]\n[Skill Path: ")
        section = rt.read_resource("alpha", "references/r.md", "## S3")
        assert section.text.startswith("## S3") and not section.truncated
        head = rt.read_resource("alpha", "references/r.md", run_id="r-1")
        assert head.truncated and len(head.text) <= 4000
        expected = tmp_path / "proj" / ".agent" / "runs" / "r-1" / "observations"
        assert rt.observations_dir("r-1") == expected
        assert head.report.storage_ref and Path(head.report.storage_ref).parent == expected
        quiet = rt.read_resource("alpha", "references/r.md", spill=False)
        assert quiet.report.storage_ref is None
