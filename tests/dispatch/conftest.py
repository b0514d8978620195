from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import EXAMPLES
from execution.support import make_runtime
from skillrt.runtime import SkillRuntime


@pytest.fixture
def examples_rt(tmp_path: Path) -> Iterator[SkillRuntime]:
    rt = make_runtime(EXAMPLES, tmp=tmp_path)
    yield rt
    rt.close()
