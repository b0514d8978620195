"""The per-prompt JSON (skillrt.fastjson) agrees with the json module."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt import fastjson

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)


@given(values)
def test_dumps_parses_back_to_the_same_value(value: Any) -> None:
    text = fastjson.dumps(value)
    assert json.loads(text) == value
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(values)
def test_loads_agrees_with_json(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        assert fastjson.loads(text) == json.loads(text)
        assert fastjson.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    "bad", ["", "   ", "{", "[1,]", "{'a': 1}", "nul", "1 2", '"\\x"', "\ufeff{}", b"\xff\xfe"]
)
def test_bad_documents_raise_value_error(bad: str | bytes) -> None:
    with pytest.raises(ValueError):
        fastjson.loads(bad)


def test_constants_and_refusals() -> None:
    assert math.isnan(fastjson.loads("NaN")) and fastjson.loads("-Infinity") == float("-inf")
    with pytest.raises(ValueError):
        fastjson.dumps(float("nan"))
    with pytest.raises(TypeError):
        fastjson.dumps({1: "a"})
    with pytest.raises(TypeError):
        fastjson.dumps({"a": object()})


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_deep_nesting_is_a_value_error_not_a_recursion_error(depth: int) -> None:
    """Past the interpreter's recursion limit (wherever it is: a newer Python may parse
    5,000 levels) a document is a ValueError like any bad one, never a RecursionError."""
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "0" + "}" * depth):
        try:
            assert fastjson.loads(text) == json.loads(text)
        except ValueError as exc:
            assert "deeply nested" in str(exc)
    with pytest.raises(ValueError, match="deeply nested"):
        fastjson.loads("[" * 200_000 + "]" * 200_000)
    nested: Any = []
    for _ in range(depth):
        nested = [nested]
    with pytest.raises(ValueError, match="deeply nested"):
        fastjson.dumps(nested)


def test_moderate_nesting_still_parses() -> None:
    assert fastjson.loads("[" * 200 + "]" * 200) == json.loads("[" * 200 + "]" * 200)


def test_a_bad_document_is_a_value_error_where_json_was_never_imported() -> None:
    # The C scanner builds its error from json.decoder, looked up only in sys.modules:
    # in the hook's process (no json imported) a document cut short was a SystemError.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from skillrt import fastjson\n"
        "assert 'json.decoder' not in sys.modules\n"
        "for bad in ['{\"a\": \"abc', '[1, 2', '{\"a\"', '\"\\\\u12', '{\"a\": tru}']:\n"
        "    try:\n"
        "        fastjson.loads(bad)\n"
        "    except ValueError:\n"
        "        continue\n"
        "    raise SystemExit('parsed: ' + bad)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "ok", out.stderr
