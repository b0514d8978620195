"""The client's first lines read before the SDK is loaded (:class:`EarlyInput`): whole
lines across reads, bounded waits, and nothing lost or reordered at the hand-over."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.mcp.early import EarlyInput


@pytest.fixture
def pipe() -> Iterator[tuple[io.BufferedReader, int]]:
    r, w = os.pipe()
    reader = os.fdopen(r, "rb")
    try:
        yield reader, w
    finally:
        reader.close()
        try:
            os.close(w)
        except OSError:
            pass


def test_a_line_written_in_pieces_is_read_whole(pipe: tuple[io.BufferedReader, int]) -> None:
    reader, w = pipe
    early = EarlyInput(reader)
    os.write(w, b'{"a": ')
    timer = threading.Timer(0.05, os.write, (w, b'1}\n{"b": 2}\n'))
    timer.start()
    assert early.readline() == b'{"a": 1}\n'
    assert early.readline(timeout=5) == b'{"b": 2}\n'
    timer.join()


def test_a_wait_for_the_next_line_is_bounded(pipe: tuple[io.BufferedReader, int]) -> None:
    reader, w = pipe
    early = EarlyInput(reader)
    assert early.readline(timeout=0.01) is None  # the client has sent nothing more
    os.write(w, b"partial")
    assert early.readline(timeout=0.01) is None  # half a line is no line
    os.close(w)
    assert early.readline(timeout=1) == b"partial"  # the stream ended inside it
    assert early.readline(timeout=1) == b""


def test_the_rest_completes_a_line_begun(pipe: tuple[io.BufferedReader, int]) -> None:
    reader, w = pipe
    early = EarlyInput(reader)
    os.write(w, b'{"x": 1}\n{"y":')
    assert early.readline() == b'{"x": 1}\n'
    assert early.readline(timeout=0.01) is None
    timer = threading.Timer(0.05, os.write, (w, b' 2}\n{"z": 3}\n'))
    timer.start()
    rest = early.rest()
    timer.join()
    assert rest[0] == b'{"y": 2}\n'
    os.close(w)
    # what the SDK's buffered reader then reads follows on without a gap
    assert b"".join(rest) + reader.read() == b'{"y": 2}\n{"z": 3}\n'


def test_a_line_never_ended_is_handed_on_after_a_bounded_wait(
    pipe: tuple[io.BufferedReader, int],
) -> None:
    reader, w = pipe
    early = EarlyInput(reader)
    os.write(w, b'{"x": 1}\n{"y":')
    assert early.readline() == b'{"x": 1}\n'
    assert early.rest(timeout=0.05) == (b'{"y":',)  # the client stalled mid-line


def test_a_stream_without_a_descriptor_is_read_as_a_stream() -> None:
    early = EarlyInput(io.BytesIO(b"one\ntwo\n"))
    assert early.readline() == b"one\n"
    assert early.readline(timeout=0.1) is None  # it cannot be waited on: nothing early
    assert early.rest() == ()


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"") + b"\n"), min_size=1, max_size=8
    ),  # fmt: skip
    cuts=st.lists(st.integers(min_value=1, max_value=97), max_size=12),
    taken=st.integers(min_value=0, max_value=8),
)
def test_lines_taken_then_the_rest_give_back_every_byte_in_order(
    lines: list[bytes], cuts: list[int], taken: int
) -> None:
    data = b"".join(lines)
    r, w = os.pipe()
    reader = os.fdopen(r, "rb")
    try:
        pieces, at = [], 0
        for cut in cuts:
            pieces.append(data[at : at + cut])
            at += cut
        pieces.append(data[at:])
        for piece in pieces:
            os.write(w, piece)  # small: the pipe holds them all
        os.close(w)
        early = EarlyInput(reader)
        got = [early.readline(timeout=1) for _ in range(min(taken, len(lines)))]
        assert got == lines[: len(got)]
        assert b"".join(got) + b"".join(early.rest()) + reader.read() == data
    finally:
        reader.close()
