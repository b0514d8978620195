"""The error catalogue: every error class lives in ``skillrt.errors``, is exported, and is
drawn in its docstring tree under its real parent with its real code."""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import skillrt
import skillrt.errors as errors
from skillrt.errors import SkillrtError

SRC = Path(skillrt.__file__).resolve().parent
_TREE_LINE = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+)\s+(?P<code>\S+)")


def _all_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(skillrt.__path__, "skillrt.")]
    return [n for n in names if n != "skillrt.__main__"]


def _subclasses(cls: type) -> set[type]:
    out: set[type] = set()
    for sub in cls.__subclasses__():
        out.add(sub)
        out |= _subclasses(sub)
    return out


def _tree() -> dict[str, tuple[str | None, str]]:
    """``name -> (parent, code)`` as the docstring draws it."""
    doc = errors.__doc__ or ""
    block = doc.split("::", 1)[1].split("\n\n", 2)[1]
    drawn: dict[str, tuple[str | None, str]] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        m = _TREE_LINE.match(line.strip("\n")[4:])
        assert m, f"not a tree line: {line!r}"
        depth = len(m.group("indent"))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else None
        assert m.group("name") not in drawn, f"{m.group('name')} is drawn twice"
        drawn[m.group("name")] = (parent, m.group("code"))
        stack.append((depth, m.group("name")))
    return drawn


def test_every_error_class_is_in_the_catalogue_exported_and_drawn() -> None:
    for name in _all_modules():
        importlib.import_module(name)
    classes = _subclasses(SkillrtError) | {SkillrtError}
    names = [c.__name__ for c in classes]
    assert len(names) == len(set(names)), "two error classes share a name"
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), "two error classes share a code"
    drawn = _tree()
    for cls in classes:
        assert cls.__module__ == "skillrt.errors", f"{cls.__name__} is defined outside"
        assert cls.__name__ in errors.__all__, f"{cls.__name__} is not exported"
        assert getattr(errors, cls.__name__) is cls
        assert cls.__name__ in drawn, f"{cls.__name__} is missing from the docstring tree"
        parent, code = drawn[cls.__name__]
        base = cls.__bases__[0]
        assert parent == (None if cls is SkillrtError else base.__name__), cls
        assert code == cls.code, f"{cls.__name__}: the tree says {code}, the class {cls.code}"
    assert set(drawn) == {c.__name__ for c in classes}
    assert set(errors.__all__) == {c.__name__ for c in classes}


def test_no_error_class_is_defined_outside_the_catalogue() -> None:
    catalogue = set(errors.__all__)
    for path in SRC.rglob("*.py"):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                }
                assert not bases & catalogue, f"{path}: {node.name} extends {bases & catalogue}"


def test_the_daemon_protocol_codes_match_the_catalogue() -> None:
    from skillrt.daemon import protocol

    assert errors.DaemonRequestError.code == protocol.E_BAD_REQUEST
    assert errors.RequestTooLarge.code == protocol.E_TOO_LARGE
    assert errors.UnknownOp.code == protocol.E_UNKNOWN_OP
    assert errors.Unauthorized.code == protocol.E_UNAUTHORIZED
    assert errors.DaemonMismatch.code == protocol.E_DAEMON_MISMATCH
    assert errors.DaemonBusy.code == protocol.E_BUSY


def test_fields_are_typed_attributes_and_a_misspelt_one_is_refused() -> None:
    err = errors.FileTooLarge("too big", path="a.md", size=5, limit=4)
    assert (err.path, err.size, err.limit, err.reason) == ("a.md", 5, 4, None)
    assert err.to_dict() == {
        "code": "FileTooLarge",
        "message": "too big",
        "path": "a.md",
        "size": 5,
        "limit": 4,
    }
    with pytest.raises(TypeError, match="sise"):
        errors.FileTooLarge("too big", sise=5)
    with pytest.raises(TypeError):
        err.context["size"] = 6  # type: ignore[index]
    assert err.fill(size=9, skill="s").size == 5 and err.skill == "s"
    assert list(err.to_dict()) == ["code", "message", "path", "size", "limit", "skill"]


def test_errors_survive_pickling_with_their_fields() -> None:
    err = errors.RunnerError("boom", retryable=True, scope="transient", exit_code=75)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is errors.RunnerError and again.to_dict() == err.to_dict()
    remote = errors.RemoteError({"code": "SkillNotFound", "message": "no", "name": "x"})
    assert pickle.loads(pickle.dumps(remote)).to_dict() == remote.to_dict()
    assert remote.to_dict()["code"] == "SkillNotFound" and remote.to_dict()["name"] == "x"
