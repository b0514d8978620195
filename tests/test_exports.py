"""``skillrt`` exports the facade and every type it takes and returns."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import typing

import skillrt
from skillrt.runtime import SkillRuntime

#: Names in annotations that are Python's own, not skillrt's.
_NOT_OURS = {"Any", "Callable", "Collection", "Mapping", "Sequence", "Path", "Unpack", "None",
             "builtins"}  # fmt: skip
_NOT_OURS |= {"bool", "int", "float", "str", "tuple", "list", "dict", "bytes", "type"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names(annotation: object) -> set[str]:
    text = getattr(annotation, "__forward_arg__", annotation)  # a TypedDict's keys
    return set(_NAME.findall(str(text))) - _NOT_OURS


def _facade_types() -> set[str]:
    found: set[str] = set()
    for name, member in vars(SkillRuntime).items():
        if name.startswith("_") and name != "__init__":
            continue
        fn = member.fget if isinstance(member, property) else member
        for annotation in getattr(fn, "__annotations__", {}).values():
            found |= _names(annotation)
    # The options a method takes as **options: Unpack[...] are part of its signature.
    for name in [n for n in found if n.endswith("Options")]:
        options = getattr(skillrt, name)
        for annotation in options.__annotations__.values():
            found |= _names(annotation)
    return found


def test_every_type_the_facade_takes_or_returns_is_exported() -> None:
    missing = sorted(_facade_types() - set(skillrt.__all__))
    assert missing == [], f"skillrt does not export: {missing}"


def test_every_export_resolves_to_what_its_module_defines() -> None:
    assert skillrt.__all__ == sorted(skillrt.__all__)
    assert set(dir(skillrt)) >= set(skillrt.__all__)
    for name in skillrt.__all__:
        value = getattr(skillrt, name)
        if name == "__version__":
            assert isinstance(value, str)
            continue
        module = sys.modules[skillrt._EXPORTS[name]]
        assert getattr(module, name) is value
        if inspect.isclass(value) and not typing.is_typeddict(value):
            assert value.__name__ == name


def test_the_facade_can_be_used_from_the_package_alone() -> None:
    request = skillrt.DispatchRequest(skill=None, prompt="hello")
    with skillrt.SkillRuntime(roots=[], persist=False) as rt:
        result = rt.dispatch(request, record=False)
    assert isinstance(result, skillrt.DispatchResult) and result.ok
    assert isinstance(result.header.trace.request_id, str)


def test_importing_the_package_imports_nothing_it_exports() -> None:
    code = (
        "import sys, skillrt; "
        "print(sorted(m for m in sys.modules if m.startswith('skillrt.') or m == 'numpy'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"
