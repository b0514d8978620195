"""Editing a settings file in place: only what changed is touched (issue 27: install
rewrote inline objects over several lines)."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.install.jsonedit import edit_text

_leaf = st.none() | st.booleans() | st.integers(-5, 5) | st.text('ab"é\\ ', max_size=4)
_data = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("xyz", max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


def render(
    value: Any, rng: random.Random, indent: str, depth: int = 0, inline: bool = False
) -> str:
    """JSON in a person's mixed layout: each container inline or one member a line."""
    if not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False)
    inline = inline or rng.random() < 0.4
    if isinstance(value, dict):
        parts = [
            json.dumps(k, ensure_ascii=False) + ": " + render(v, rng, indent, depth + 1, inline)
            for k, v in value.items()
        ]
        open_, close = "{", "}"
    else:
        parts = [render(v, rng, indent, depth + 1, inline) for v in value]
        open_, close = "[", "]"
    if inline:
        return open_ + ", ".join(parts) + close
    pad = indent * (depth + 1)
    return open_ + "\n" + ",\n".join(pad + p for p in parts) + "\n" + indent * depth + close


HOOK = {"matcher": "", "hooks": [{"type": "command", "command": "skillrt hook claude-code"}]}


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=3), _data, max_size=4),
    st.integers(0, 10_000),
    st.sampled_from(["  ", "    ", "\t"]),
)
def test_add_then_remove_gives_back_the_bytes(data: dict[str, Any], seed: int, indent: str) -> None:
    rng = random.Random(seed)
    text = render(data, rng, indent) + "\n"
    assert json.loads(text) == data
    changed = json.loads(text)
    hooks = changed.setdefault("hooks", {}) if isinstance(changed.get("hooks"), dict) else None
    if hooks is None:
        changed["hooks_x"] = {"UserPromptSubmit": [HOOK]}
    else:
        hooks.setdefault("UserPromptSubmit", [])
        if isinstance(hooks["UserPromptSubmit"], list):
            hooks["UserPromptSubmit"].append(HOOK)
        else:
            hooks["UserPromptSubmit"] = [HOOK]
    edited = edit_text(text, data, changed)
    assert json.loads(edited) == changed
    # the change is one insertion: taking it out again gives back every byte
    assert edit_text(edited, changed, data) == text


@settings(max_examples=300, deadline=None)
@given(_data, _data, st.integers(0, 10_000))
def test_any_change_lands_as_asked(old: Any, new: Any, seed: int) -> None:
    text = render(old, random.Random(seed), "  ")
    assert json.loads(edit_text(text, old, new)) == new


def test_an_inline_object_stays_inline_and_the_rest_keeps_its_bytes() -> None:
    text = '{\n  "env": {"A": "1"},\n  "hooks": {"Stop": []},\n  "x": [1, 2]\n}\n'
    old = json.loads(text)
    new = json.loads(text)
    new["hooks"]["UserPromptSubmit"] = [HOOK]
    edited = edit_text(text, old, new)
    assert edited.startswith(
        '{\n  "env": {"A": "1"},\n  "hooks": {"Stop": [], "UserPromptSubmit": ['
    )
    assert edited.endswith('},\n  "x": [1, 2]\n}\n')
    new["x"].remove(1)
    assert edit_text(text, old, new).endswith('"x": [2]\n}\n')


def test_a_key_written_twice_only_its_last_is_edited() -> None:
    # JSON parsers (Python's, Node's) keep a repeated key's last value: the earlier one is
    # dead text, left as it stands, and never read against the last one's data.
    dead = '  "hooks": {"UserPromptSubmit": [{"hooks": []}], "x": [1, 2, 3]},\n'
    text = "{\n" + dead + '  "hooks": {"Stop": []}\n}\n'
    old = json.loads(text)
    for change in ({"UserPromptSubmit": [HOOK], "Stop": []}, {"Stop": [1]}, {}):
        new = {**old, "hooks": change}
        edited = edit_text(text, old, new)
        assert json.loads(edited) == new and edited.startswith("{\n" + dead)


_slashy = st.recursive(
    st.none() | st.integers(-5, 5) | st.text('/*"\\ab\n', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text("/*xy", max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text("xyz/", max_size=3), _slashy, max_size=4), st.integers(0, 10_000))
def test_comments_are_kept_and_strings_left_alone(data: dict[str, Any], seed: int) -> None:
    from skillrt.install.jsonedit import blank_comments

    text = render(data, random.Random(seed), "  ")
    assert blank_comments(text) == text  # "//" or "/*" in a string is no comment
    commented = "// head\n" + text.replace("\n", " // tail\n", 1) + "/* end */\n"
    assert json.loads(blank_comments(commented)) == data
    new = {**data, "hooks": {"BeforeAgent": [HOOK]}}
    edited = edit_text(commented, data, new, comments=True)
    assert json.loads(blank_comments(edited)) == new
    assert edited.startswith("// head\n") and edited.endswith("/* end */\n")
