"""The helpers of ``tests/execution/support.py``, loaded by file path so they work
whether or not ``tests/`` is itself a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_NAME = "_skillrt_execution_test_support"


def _load() -> ModuleType:
    found = sys.modules.get(_NAME)
    if found is not None:
        return found
    path = Path(__file__).resolve().parent.parent / "execution" / "support.py"
    spec = importlib.util.spec_from_file_location(_NAME, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module
    spec.loader.exec_module(module)
    return module


_support = _load()
ENV = _support.ENV
EXAMPLES = _support.EXAMPLES
REPO = _support.REPO
SHARED = _support.SHARED
Scripted = _support.Scripted
make_runtime = _support.make_runtime
scripted = _support.scripted
