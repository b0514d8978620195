"""The daemon's wire format and where a daemon listens (standard library only).

One JSON object per line each way, UTF-8, ``\\n``-terminated; a connection may carry
any number of requests, answered in order::

    -> {"id": 1, "op": "route", "args": {"query": "..."}, "expect": {...}, "token": "..."}
    <- {"id": 1, "ok": true, "result": {...}}
    <- {"id": 1, "ok": false, "error": {"code": "E_BAD_REQUEST", "message": "..."}}

``expect`` (optional) names the skills the caller means (its roots, config file and
project); a daemon serving other skills answers ``E_DAEMON_MISMATCH`` and the caller
works in-process instead. ``token`` is required over TCP only (a Unix socket is
``0600``, so only its owner can connect); it is in the daemon's info file.
"""

from __future__ import annotations

import os

from skillrt import fastjson

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

#: Default socket file name, in the state folder.
SOCKET_NAME = "skillrt.sock"
#: The running daemon's info file (pid, address, token), in the state folder, ``0600``.
INFO_NAME = "skillrt.daemon.json"
#: Locked (``flock``) by the state folder's daemon for its whole life.
LOCK_NAME = "skillrt.daemon.lock"
#: Environment variable naming the socket (a path, or ``tcp://127.0.0.1:PORT``).
ENV_SOCKET = "SKILLRT_SOCKET"
TCP_PREFIX = "tcp://"
LOOPBACK = "127.0.0.1"
#: Longest request line accepted (a prompt plus its history fits many times over).
MAX_LINE_BYTES = 4 * 1024 * 1024
#: ``sockaddr_un.sun_path`` holds 108 bytes on Linux (104 on macOS), NUL included.
MAX_UNIX_PATH_BYTES = 103

OPS = ("ping", "status", "route", "context", "activate", "read", "resolve", "shutdown")

# Stable error codes of the protocol (the ops' own errors keep the runtime's codes).
E_BAD_REQUEST = "E_BAD_REQUEST"
E_BUSY = "E_BUSY"
E_TOO_LARGE = "E_TOO_LARGE"
E_UNKNOWN_OP = "E_UNKNOWN_OP"
E_UNAUTHORIZED = "E_UNAUTHORIZED"
E_DAEMON_MISMATCH = "E_DAEMON_MISMATCH"

Address = str | tuple[str, int]


def encode(message: Any) -> bytes:
    """One message as a protocol line."""
    return fastjson.dumps(message).encode("utf-8") + b"\n"


def error_reply(rid: Any, err: Any) -> dict[str, Any]:
    """The reply refusing request ``rid`` with ``err`` (a ``SkillrtError``)."""
    return {"id": rid, "ok": False, "error": err.to_dict()}


def reply_line(reply: dict[str, Any]) -> bytes:
    """A reply as a protocol line (the C encoder: replies can be large, requests small)."""
    import json

    text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


def parse_address(text: str) -> Address:
    """``tcp://127.0.0.1:PORT`` -> ``(host, port)`` (loopback only); anything else is a
    socket path. Raises ValueError for a TCP address that is not loopback."""
    if not text.startswith(TCP_PREFIX):
        return os.path.abspath(os.path.expanduser(text))
    host, sep, port = text[len(TCP_PREFIX) :].rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"invalid daemon address {text!r}: use tcp://127.0.0.1:PORT")
    if host not in (LOOPBACK, "localhost"):
        raise ValueError(f"the daemon only listens on loopback, not {host!r}")
    return (LOOPBACK, int(port))


def format_address(address: Address) -> str:
    if isinstance(address, tuple):
        return f"{TCP_PREFIX}{address[0]}:{address[1]}"
    return address


def default_socket(state_dir: str) -> str:
    return os.path.join(os.path.abspath(state_dir), SOCKET_NAME)


def info_path(state_dir: str) -> str:
    return os.path.join(os.path.abspath(state_dir), INFO_NAME)


def read_info(state_dir: str) -> dict[str, Any] | None:
    """The running daemon's info file, or None (missing, unreadable or not ours)."""
    return read_info_file(info_path(state_dir))


def read_info_file(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A daemon info file at ``path``: a JSON object, or None (missing, unreadable, not
    an object)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = fastjson.loads(fh.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def locate(state_dir: str, explicit: str | None = None) -> tuple[Address, str | None]:
    """Where the daemon of ``state_dir`` listens, and the token to send.

    ``explicit`` (``--socket`` or ``SKILLRT_SOCKET``) wins; else the default socket, or
    the TCP address a ``serve --port`` daemon wrote to its info file.
    """
    if explicit:
        address = parse_address(explicit)
        token = None
        if isinstance(address, tuple):
            found = read_info(state_dir) or {}
            if found.get("address") == format_address(address):
                token = found.get("token")
        return address, token
    sock = default_socket(state_dir)
    if os.path.exists(sock):
        return sock, None
    info = read_info(state_dir)
    if info and str(info.get("address", "")).startswith(TCP_PREFIX):
        try:
            return parse_address(str(info["address"])), info.get("token")
        except ValueError:
            pass
    return sock, None
