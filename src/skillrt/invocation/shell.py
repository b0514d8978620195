"""Is this line shell-like command text? (seed 004 §6: ``$`` there is a shell variable.)

A line counts as a command line when, after indentation, ``>`` quote markers and a
list bullet, it

* starts with a shell prompt (``$ ``, ``% ``, ``user@host:~$ ``, ``PS C:\\> ``, ``>>> ``),
* starts with an environment assignment (``X=1 …``, ``X=$HOME/y``),
* starts with a path to run (``./build.sh``, ``/usr/bin/env``), or
* starts with a lowercase command word followed by arguments: always for words that are
  not English (``echo``, ``export``, ``git``, ``kubectl`` …), and for words that are also
  English (``make``, ``find``, ``set`` …) only when the line shows other shell evidence
  (a ``-flag``, a pipe, ``&&``, a redirect, ``$(…)``, ``${…}``, ``$VAR``, a quoted
  ``"$x"``, an assignment or a ``./path``).

So "please use $tdd to fix the echo bug" stays prose, "echo $PATH" does not, and
"make sure $tdd runs" is prose while "make -C build $target" is a command.
"""

from __future__ import annotations

import re

#: Command words that (almost) never start an English sentence.
_STRONG = """
    echo export cd ls printf unset sudo doas git grep egrep fgrep rg ag sed awk gawk
    python python2 python3 py pip pip3 pipx uv poetry conda pytest ruff mypy node npm npx
    yarn pnpm bun deno docker podman kubectl helm terraform tofu ansible vagrant curl wget
    bash sh zsh fish ksh dash chmod chown chgrp mkdir rmdir rm mv cp ln ssh scp rsync sftp
    eval exec xargs psql mysql sqlite3 redis-cli mongo cargo rustc rustup gcc clang javac
    java mvn gradle ruby gem perl php gofmt brew apt apt-get yum dnf apk pacman
    systemctl journalctl tar unzip zip gzip gunzip aws gcloud az gh jq yq tee wc tr
    du df ps pkill killall nohup env cat setx pwsh powershell cmd dotnet nc netstat
    nslookup openssl base64 sha256sum md5sum chroot crontab launchctl
"""
STRONG_COMMANDS = frozenset(_STRONG.split())
#: Command words that are also ordinary English; they need more shell evidence.
_WEAK = """
    make find set source test sort head tail touch kill which alias read local for while
    if case until select time watch open man less more diff patch cut top install run
    start stop build deploy trap wait shift declare typeset let function return exit go
    service bundle dig
"""
WEAK_COMMANDS = frozenset(_WEAK.split())

_LINE_HEAD = re.compile(
    r"""
    [ \t]*(?:>(?!>>)[ \t]*)*                            # indentation, quote markers
    (?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?                  # a list bullet
    (?P<prompt>(?:[$%]|[\w.-]+@[\w.-]+(?::\S*)?[$#%]|PS[ ][A-Za-z]:[^>\n]*>|>>>)[ \t]+)?
    (?:(?:sudo|doas|time|nohup|exec|command)[ \t]+)?    # wrappers
    (?P<assign>[A-Za-z_][A-Za-z0-9_]*=)?
    (?P<path>\.{0,2}/[^\s/]+\S*)?
    (?P<word>[a-z][a-z0-9_.+-]*)?(?P<after>[ \t]|$)?
    """,
    re.VERBOSE,
)
_EVIDENCE = re.compile(
    r"""
      (?:^|\s)--?[A-Za-z]        # a flag
    | \|\|? | && | [<>]          # pipes, lists, redirects
    | \$[({]                     # $(cmd) ${VAR}
    | \$[A-Z_][A-Z0-9_]*\b       # $VAR
    | ["']\$                     # "$x"
    | (?:^|\s)[A-Za-z_]\w*=\S    # assignment
    | (?:^|\s)(?:\.{1,2}|~)/     # ./path ../path ~/path
    """,
    re.VERBOSE,
)


def is_command_line(line: str) -> bool:
    """True when ``line`` (one line, no newline) reads as shell command text."""
    m = _LINE_HEAD.match(line)
    if m is None:  # pragma: no cover - every group is optional, so it always matches
        return False
    if m.group("prompt") or m.group("assign") or m.group("path"):
        return True
    word = m.group("word")
    if not word or m.group("after") is None:
        return False
    if word in STRONG_COMMANDS:
        return True
    if word in WEAK_COMMANDS:
        return _EVIDENCE.search(line, m.end("word")) is not None
    return False
