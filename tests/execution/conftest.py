from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt.runtime import SkillRuntime

from .support import EXAMPLES, make_runtime


@pytest.fixture
def examples_rt(tmp_path: Path) -> Iterator[SkillRuntime]:
    rt = make_runtime(EXAMPLES, tmp=tmp_path)
    yield rt
    rt.close()
