"""Hot reload over real stdio: skills added, changed, removed or disabled on disk show up
as list-changed notifications and in the re-listed tools and resources."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp_support import disable, stdio_client

#: Hang guard only (the server polls every 0.1 s); never a performance limit.
WAIT_S = 30
POLL = ("--poll", "0.1")


async def enum_of(client: Any) -> list[str]:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    return list(tools["load_skill"].input_schema["properties"]["name"].get("enum", []))


async def uris_of(client: Any) -> dict[str, Any]:
    return {str(r.uri): r for r in (await client.list_resources()).resources}


def test_legacy_notifications(
    catalogue: Path, state: Path, make_skill: Callable[..., Path]
) -> None:
    seen: list[str] = []
    arrived = {"tools": anyio.Event(), "resources": anyio.Event()}

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            method = message.method
            seen.append(method)
            if method == "notifications/tools/list_changed":
                arrived["tools"].set()
            if method == "notifications/resources/list_changed":
                arrived["resources"].set()

    def reset() -> None:
        arrived["tools"] = anyio.Event()
        arrived["resources"] = anyio.Event()

    async def scenario() -> None:
        async with stdio_client(
            catalogue, state, mode="legacy", extra=POLL, message_handler=on_message
        ) as client:
            assert "fresh" not in await enum_of(client)

            # Added: a new enum value and new resources.
            make_skill(
                "fresh",
                description="A skill added while serving.",
                root=catalogue,
                files={"references/more.md": "# More\n"},
            )
            with anyio.fail_after(WAIT_S):
                await arrived["tools"].wait()
                await arrived["resources"].wait()
            assert "fresh" in await enum_of(client)
            uris = await uris_of(client)
            assert "skill://fresh/SKILL.md" in uris
            assert "skill://fresh/references/more.md" in uris
            assert (
                "A skill added while serving."
                in (await client.call_tool("load_skill", {"name": "fresh"})).structured_content[
                    "description"
                ]
            )

            # Changed: a reference edited -> resources change (new digest), tools do not.
            reset()
            before = uris["skill://code-review/references/checklist.md"].meta
            (catalogue / "code-review/references/checklist.md").write_text("# Checklist v2\n")
            with anyio.fail_after(WAIT_S):
                await arrived["resources"].wait()
            assert not arrived["tools"].is_set()
            after = (await uris_of(client))["skill://code-review/references/checklist.md"].meta
            assert before != after
            read = await client.read_resource("skill://code-review/references/checklist.md")
            assert read.contents[0].text == "# Checklist v2\n"

            # Removed: gone from the enum and the resources.
            reset()
            shutil.rmtree(catalogue / "fresh")
            with anyio.fail_after(WAIT_S):
                await arrived["tools"].wait()
            assert "fresh" not in await enum_of(client)
            assert "skill://fresh/SKILL.md" not in await uris_of(client)
            gone = await client.call_tool("load_skill", {"name": "fresh"})
            assert gone.is_error

            # Disabled from another process (the CLI): dropped from the enum.
            reset()
            await anyio.to_thread.run_sync(disable, catalogue, state, "commit-messages")
            with anyio.fail_after(WAIT_S):
                await arrived["tools"].wait()
            assert "commit-messages" not in await enum_of(client)

    anyio.run(scenario)
    assert "notifications/tools/list_changed" in seen


def test_modern_listen_stream(
    catalogue: Path, state: Path, make_skill: Callable[..., Path]
) -> None:
    async def scenario() -> None:
        async with stdio_client(catalogue, state, mode="auto", extra=POLL) as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True, resources_list_changed=True) as sub:
                make_skill("late", description="Added on the 2026 wire.", root=catalogue)
                kinds: set[str] = set()
                with anyio.fail_after(WAIT_S):
                    async for event in sub:
                        kinds.add(type(event).__name__)
                        if kinds >= {"ToolsListChanged", "ResourcesListChanged"}:
                            break
            assert "late" in await enum_of(client)
            assert "skill://late/SKILL.md" in await uris_of(client)

    anyio.run(scenario)
