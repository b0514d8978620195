"""The three runners (X1): a stdin command, an OpenAI-compatible HTTP endpoint, dry-run.

Failure classification (what the fallback state machine of 001 §10 sees):

======================================  =========  =======================================
failure                                 retryable  why
======================================  =========  =======================================
timeout (process group killed)          yes        slow model / overloaded host
exit 75 (EX_TEMPFAIL), 124 (timeout(1)) yes        the program says "try again";
                                                   ``execution.retryable_exit_codes``
exit 127 / 126 (not found / not exec.)  no         the runner command is wrong
                                                   (``scope=runner``: no skill will help)
any other non-zero exit, a signal       no         the run failed on this task
HTTP 408, 429, 5xx                      yes        rate limit / transient server error
connection refused / reset / timeout    yes        the endpoint restarts or is flaky
malformed JSON / no choices             yes        a proxy or gateway hiccup; a second
                                                   failure bans the path anyway
HTTP 401 / 403 / 404, other 4xx         no         bad key, wrong model or URL, bad
                                                   request (``scope=runner`` for 401/
                                                   403/404)
unknown host, bad base URL              no         bad config (``scope=runner``)
======================================  =========  =======================================

Trust model of the command runner: ``--runner-cmd`` is the user's own shell command
line (like ``git -c core.editor=...``) and runs with ``shell=True`` so pipes and
``"$(cat)"`` work; nothing from a skill, a prompt or a model is ever put into the
command string — the prompt only reaches the process on stdin. The process gets an
explicit environment: PATH, HOME, LANG, TERM, TMPDIR plus the names in
``execution.pass_env``, never the caller's whole environment, and runs in its own
process group so a timeout kills the command and everything it started.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from typing import IO, Any

from skillrt import interrupts
from skillrt.config import ExecutionConfig
from skillrt.errors import ConfigError, RunnerError, RunnerTimeout
from skillrt.execution.base import Runner, RunnerResult
from skillrt.execution.options import RunnerOptions
from skillrt.execution.processes import end_group, notify_spawn

#: Always passed to a command runner (when set in the caller's environment).
BASE_ENV = ("PATH", "HOME", "LANG", "TERM", "TMPDIR")
#: Kept from stderr in errors and results.
STDERR_TAIL_BYTES = 8192
_READ_CHUNK = 65536


def minimal_env(environ: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The runner's environment: :data:`BASE_ENV` plus ``pass_env``, taken from ``environ``."""
    names = [*BASE_ENV, *pass_env]
    env = {name: environ[name] for name in names if name in environ}
    env.setdefault("PATH", os.defpath)
    return env


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """``data[:limit]`` without splitting a UTF-8 sequence."""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]


class _CappedReader(threading.Thread):
    """Drains a pipe, keeping at most ``cap`` bytes (the rest is read and dropped, so
    the child never blocks on a full pipe)."""

    def __init__(self, stream: IO[bytes], cap: int, *, keep_tail: bool = False) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.cap = cap
        self.keep_tail = keep_tail
        self.buf = bytearray()
        self.total = 0

    def run(self) -> None:
        try:
            while True:
                chunk = (
                    self.stream.read1(_READ_CHUNK)
                    if hasattr(self.stream, "read1")
                    else (self.stream.read(_READ_CHUNK))
                )
                if not chunk:
                    break
                self.total += len(chunk)
                if self.keep_tail:
                    self.buf.extend(chunk)
                    if len(self.buf) > self.cap:
                        del self.buf[: len(self.buf) - self.cap]
                elif len(self.buf) < self.cap + 4:
                    # +4: room to finish a UTF-8 sequence at the cut.
                    self.buf.extend(chunk[: self.cap + 4 - len(self.buf)])
        except (OSError, ValueError):
            pass
        finally:
            try:
                self.stream.close()
            except OSError:
                pass

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def text(self) -> str:
        data = bytes(self.buf)
        if self.keep_tail:
            return data.decode("utf-8", errors="replace")
        return _cut_utf8(data, self.cap).decode("utf-8", errors="replace")


class CommandRunner(Runner):
    """Runs a shell command with the prompt on stdin; stdout is the output."""

    name = "command"

    def __init__(
        self,
        command: str,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout_s: float = 300.0,
        max_output_bytes: int = 1_000_000,
        retryable_exit_codes: Iterable[int] = (75, 124),
        kill_grace_s: float = 1.0,
        writes_files: bool = False,
    ) -> None:
        if not command or not command.strip():
            raise ConfigError("the runner command is empty", reason="runner_cmd_empty")
        self.command = command
        self.writes_files = writes_files
        self.env = dict(env) if env is not None else {"PATH": os.defpath}
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.max_output_bytes = max_output_bytes
        self.retryable_exit_codes = frozenset(retryable_exit_codes)
        self.kill_grace_s = kill_grace_s

    @classmethod
    def from_config(
        cls,
        execution: ExecutionConfig,
        *,
        environ: Mapping[str, str],
        cwd: str | os.PathLike[str] | None = None,
    ) -> CommandRunner:
        if not execution.runner_cmd:
            raise ConfigError(
                "the command runner needs a command (--runner-cmd or execution.runner_cmd)",
                reason="no_runner_cmd",
                runner=cls.name,
            )
        return cls(
            execution.runner_cmd,
            env=minimal_env(environ, execution.pass_env),
            cwd=cwd,
            timeout_s=execution.timeout_s,
            max_output_bytes=execution.max_output_bytes,
            retryable_exit_codes=execution.retryable_exit_codes,
            kill_grace_s=execution.kill_grace_s,
            writes_files=execution.writes_files,
        )

    def spec(self) -> dict[str, Any]:
        return {"kind": self.name, "runner_cmd": self.command, "writes_files": self.writes_files}

    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                self.command,
                shell=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:  # e.g. cwd missing, /bin/sh absent
            raise RunnerError(
                f"cannot start the runner command: {exc}",
                retryable=False,
                scope="runner",
                runner=self.name,
                command=self.command,
            ) from exc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        out = _CappedReader(proc.stdout, self.max_output_bytes)
        err = _CappedReader(proc.stderr, STDERR_TAIL_BYTES, keep_tail=True)
        out.start()
        err.start()
        timed_out = False
        writer: threading.Thread | None = None
        try:
            # Whoever must never run a second agent beside this one records its group
            # first (skillrt.execution.processes); only then does the agent get its prompt.
            notify_spawn(proc.pid, writes_files=self.writes_files)
            writer = threading.Thread(target=_feed, args=(proc.stdin, prompt), daemon=True)
            writer.start()
            timed_out = not _wait(proc, timeout)
            if timed_out:
                self._kill_group(proc)
        except BaseException:
            # Interrupted (SIGTERM, Ctrl-C) or the spawn was not recorded: the agent must
            # not outlive the call that started it.
            self._kill_group(proc)
            if writer is None:
                _close(proc.stdin)
            raise
        finally:
            # Reap, and make sure no reader thread outlives the call for long.
            proc.wait()
            if writer is not None:
                writer.join(timeout=1.0)
            out.join(timeout=2.0)
            err.join(timeout=2.0)
        latency_ms = (time.perf_counter() - start) * 1000
        output, stderr = out.text(), err.text()
        context: dict[str, Any] = {
            "runner": self.name,
            "exit_code": proc.returncode,
            "stderr": stderr[-2000:],
            "latency_ms": round(latency_ms, 3),
            "output_excerpt": output[:2000],
            # Runs often print their report last (see dispatch/repair.py).
            "output_tail": output[-4000:] if len(output) > 2000 else "",
        }
        if timed_out:
            raise RunnerTimeout(
                f"the runner command timed out after {timeout:g}s (process group killed)",
                timeout_s=timeout,
                scope="transient",
                **context,
            )
        code = proc.returncode
        if code != 0:
            raise RunnerError(
                _exit_message(code, stderr),
                retryable=code in self.retryable_exit_codes,
                scope="runner" if code in (126, 127) else "skill",
                **context,
            )
        return RunnerResult(
            output=output,
            exit_code=code,
            stderr=stderr,
            latency_ms=latency_ms,
            truncated=out.truncated,
            meta={"runner": self.name, "output_bytes": out.total},
        )

    def _kill_group(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGTERM the whole process group, then SIGKILL after the grace period (the
        caller reaps the leader)."""
        end_group(proc.pid, grace_s=self.kill_grace_s, reap=proc.poll)


def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait for ``proc`` to exit, at most ``timeout`` seconds (None: no limit); whether
    it did. Wakes now and then so a stop request whose ``KeyboardInterrupt`` was
    swallowed still ends the wait (:mod:`skillrt.interrupts`)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        interrupts.check()
        left = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
        if left <= 0:
            return proc.poll() is not None
        try:
            proc.wait(timeout=left)
            return True
        except subprocess.TimeoutExpired:
            continue


def _feed(stdin: IO[bytes], prompt: str) -> None:
    try:
        stdin.write(prompt.encode("utf-8"))
    except (BrokenPipeError, OSError, ValueError):
        pass  # the command does not read stdin (or exited): not an error by itself
    finally:
        try:
            stdin.close()
        except (BrokenPipeError, OSError):
            pass


def _close(stream: IO[bytes]) -> None:
    try:
        stream.close()
    except OSError:
        pass


def _exit_message(code: int, stderr: str) -> str:
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    tail = f": {last.strip()[:300]}" if last else ""
    if code == 127:
        return f"the runner command was not found (exit 127){tail}"
    if code == 126:
        return f"the runner command is not executable (exit 126){tail}"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the runner command was killed by {name}{tail}"
    return f"the runner command exited with status {code}{tail}"


class OpenAIRunner(Runner):
    """POSTs the prompt to ``<base_url>/chat/completions`` (any OpenAI-compatible server)."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        max_output_bytes: int = 1_000_000,
        max_response_bytes: int = 20_000_000,
        system_prompt: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        api_key_env: str | None = None,
    ) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"the runner base URL must start with http:// or https://: {base_url!r}",
                reason="bad_base_url",
            )
        if not model:
            raise ConfigError("the openai runner needs a model name (--model)", reason="no_model")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        #: Where the key came from (saved for a rebuild; the key itself never is).
        self.api_key_env = api_key_env if api_key else None
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.max_output_bytes = max_output_bytes
        self.max_response_bytes = max_response_bytes
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})

    @classmethod
    def from_config(
        cls,
        execution: ExecutionConfig,
        *,
        environ: Mapping[str, str],
        cwd: str | os.PathLike[str] | None = None,
    ) -> OpenAIRunner:
        if not execution.base_url:
            raise ConfigError(
                "the openai runner needs a base URL (--base-url or execution.base_url)",
                reason="no_base_url",
                runner=cls.name,
            )
        # A local server needs no key: without the variable the request has no
        # Authorization header (a rebuild that had one refuses to go on without it).
        key = environ.get(execution.api_key_env) or None
        return cls(
            execution.base_url,
            execution.model or "",
            api_key=key,
            api_key_env=execution.api_key_env,
            timeout_s=execution.timeout_s,
            max_output_bytes=execution.max_output_bytes,
        )

    def spec(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.name, "base_url": self.base_url, "model": self.model}
        if self.api_key_env:
            out["api_key_env"] = self.api_key_env
            out["env"] = [self.api_key_env]  # must be set again on resume
        return out

    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        messages = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": prompt})
        body = json.dumps({"model": self.model, "messages": messages, **self.extra_body})
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.url, data=body.encode("utf-8"), headers=headers, method="POST"
        )
        start = time.perf_counter()
        ctx: dict[str, Any] = {"runner": self.name, "url": self.url, "model": self.model}
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(self.max_response_bytes + 1)
                status = response.status
        except urllib.error.HTTPError as exc:
            raise _http_error(exc, ctx, start) from exc
        except TimeoutError as exc:
            raise RunnerTimeout(
                f"the endpoint did not answer within {timeout:g}s",
                timeout_s=timeout,
                scope="transient",
                latency_ms=_ms(start),
                **ctx,
            ) from exc
        except urllib.error.URLError as exc:
            raise _url_error(exc, ctx, start, timeout) from exc
        except (ConnectionError, OSError) as exc:
            raise RunnerError(
                f"connection to the endpoint failed: {exc}",
                retryable=True,
                scope="transient",
                latency_ms=_ms(start),
                **ctx,
            ) from exc
        latency_ms = _ms(start)
        if len(raw) > self.max_response_bytes:
            raise RunnerError(
                f"the response is over {self.max_response_bytes:,} bytes",
                retryable=False,
                scope="skill",
                status=status,
                latency_ms=latency_ms,
                **ctx,
            )
        content, usage, finish = _parse_completion(raw, ctx, latency_ms, status)
        data = content.encode("utf-8")
        truncated = len(data) > self.max_output_bytes
        if truncated:
            content = _cut_utf8(data, self.max_output_bytes).decode("utf-8", errors="replace")
        return RunnerResult(
            output=content,
            exit_code=0,
            latency_ms=latency_ms,
            tokens_in=_int(usage.get("prompt_tokens")),
            tokens_out=_int(usage.get("completion_tokens")),
            truncated=truncated,
            meta={"runner": self.name, "model": self.model, "finish_reason": finish},
        )


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _http_error(exc: urllib.error.HTTPError, ctx: dict[str, Any], start: float) -> RunnerError:
    code = exc.code
    try:
        detail = exc.read(4096).decode("utf-8", errors="replace")
    except (OSError, http.client.HTTPException, ValueError):  # a broken body keeps the status
        detail = ""
    message = _error_detail(detail) or exc.reason or ""
    retry_after = exc.headers.get("Retry-After") if exc.headers else None
    retryable = code in (408, 429) or 500 <= code <= 599
    scope = "transient" if retryable else ("runner" if code in (401, 403, 404) else "skill")
    extra: dict[str, Any] = {"status": code, "latency_ms": _ms(start), **ctx}
    if retry_after:
        extra["retry_after"] = retry_after
    return RunnerError(
        f"the endpoint answered HTTP {code}" + (f": {message}" if message else ""),
        retryable=retryable,
        scope=scope,
        **extra,
    )


def _error_detail(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:300]
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
    return ""


def _url_error(
    exc: urllib.error.URLError, ctx: dict[str, Any], start: float, timeout: float
) -> RunnerError:
    reason = exc.reason
    if isinstance(reason, TimeoutError):
        return RunnerTimeout(
            f"the endpoint did not answer within {timeout:g}s",
            timeout_s=timeout,
            scope="transient",
            latency_ms=_ms(start),
            **ctx,
        )
    if isinstance(reason, socket.gaierror):
        return RunnerError(
            f"cannot resolve the endpoint host: {reason}",
            retryable=False,
            scope="runner",
            latency_ms=_ms(start),
            **ctx,
        )
    transient = isinstance(reason, (ConnectionError, OSError))
    return RunnerError(
        f"cannot reach the endpoint: {reason}",
        retryable=transient,
        scope="transient" if transient else "runner",
        latency_ms=_ms(start),
        **ctx,
    )


def _parse_completion(
    raw: bytes, ctx: dict[str, Any], latency_ms: float, status: int
) -> tuple[str, dict[str, Any], str | None]:
    def malformed(why: str) -> RunnerError:
        return RunnerError(
            f"the endpoint returned a malformed completion: {why}",
            retryable=True,
            scope="transient",
            status=status,
            latency_ms=latency_ms,
            body_excerpt=raw[:300].decode("utf-8", errors="replace"),
            **ctx,
        )

    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise malformed("not JSON") from exc
    if not isinstance(data, dict):
        raise malformed("not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise malformed("no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is None and isinstance(choices[0].get("text"), str):
        content = choices[0]["text"]  # legacy completions shape
    if not isinstance(content, str):
        raise malformed("no message content")
    raw_usage = data.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    finish = choices[0].get("finish_reason")
    return content, usage, finish if isinstance(finish, str) else None


class DryRunRunner(Runner):
    """Returns the assembled prompt as its output: shows what a model would get."""

    name = "dry-run"
    dry_run = True

    @classmethod
    def from_config(
        cls,
        execution: ExecutionConfig,
        *,
        environ: Mapping[str, str],
        cwd: str | os.PathLike[str] | None = None,
    ) -> DryRunRunner:
        return cls()

    def spec(self) -> dict[str, Any]:
        return {"kind": self.name}

    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        return RunnerResult(
            output=prompt,
            latency_ms=0.0,
            tokens_in=None,
            tokens_out=None,
            meta={"runner": self.name, "dry_run": True},
        )


#: Runner name -> class: how config, the CLI and a resumed workflow name a runner.
RUNNERS: dict[str, type[Runner]] = {
    CommandRunner.name: CommandRunner,
    OpenAIRunner.name: OpenAIRunner,
    DryRunRunner.name: DryRunRunner,
}
RUNNER_NAMES = tuple(RUNNERS)


def build_runner(
    execution: ExecutionConfig,
    options: RunnerOptions | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Runner:
    """The one way a runner is built: ``options`` applied to ``execution``, then the
    class :data:`RUNNERS` names builds itself from the result.

    ``environ`` is the caller's environment: a command runner gets only
    :func:`minimal_env` of it, the openai runner reads its key from it.
    """
    if options is not None:
        execution = options.apply(execution)
    kind = execution.runner
    cls = RUNNERS.get(kind)
    if cls is None:
        raise ConfigError(
            f"unknown runner {kind!r}; use one of {', '.join(RUNNER_NAMES)}",
            reason="unknown_runner",
            runner=kind,
        )
    return cls.from_config(execution, environ=environ or {}, cwd=cwd)


def spec_options(
    spec: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    options: RunnerOptions | None = None,
) -> RunnerOptions | None:
    """The options a saved :meth:`Runner.spec` stands for; None when it names no runner
    that can be built by name (a Python object). A variable the spec needs (its API key)
    must be set in ``environ`` again — or the one ``options`` name instead
    (``--api-key-env``): a missing one is a :class:`ConfigError` naming it."""
    kind = spec.get("kind")
    cls = RUNNERS.get(kind) if isinstance(kind, str) else None
    if cls is None or cls.spec is Runner.spec:
        return None
    env = environ or {}
    needed = [str(name) for name in spec.get("env") or ()]
    renamed = options.api_key_env if options is not None else None
    if renamed:  # the key is read from another variable now
        needed = [renamed if name == spec.get("api_key_env") else name for name in needed]
    missing = [name for name in needed if not env.get(name)]
    if missing:
        raise ConfigError(
            f"the run's {kind} runner reads its API key from ${missing[0]}, which is not set "
            f"here: export {missing[0]} and try again (keys are never saved with a run)",
            reason="api_key_missing",
            runner=kind,
            key=missing[0],
        )
    settings = {k: spec[k] for k in cls.settings if k in spec}
    if kind == CommandRunner.name and "runner_cmd" not in settings and spec.get("cmd"):
        settings["runner_cmd"] = spec["cmd"]  # saved before the spec used config keys
    return RunnerOptions(runner=kind, **settings)


def rebuild_runner(
    execution: ExecutionConfig,
    spec: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    options: RunnerOptions | None = None,
) -> Runner | None:
    """The runner a saved :meth:`Runner.spec` describes (``options`` over it), built by
    :func:`build_runner`; None when the spec cannot be built by name (see
    :func:`spec_options`)."""
    if options is not None and options.kind() not in (None, spec.get("kind")):
        return build_runner(execution, options, environ=environ, cwd=cwd)  # another kind
    base = spec_options(spec, environ=environ, options=options)
    if base is None:
        return None
    chosen = options.over(base) if options is not None else base
    return build_runner(execution, chosen, environ=environ, cwd=cwd)
