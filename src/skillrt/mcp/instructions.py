"""The texts the MCP server sends as its instructions (no imports: ``skillrt mcp
--with-hook`` answers ``initialize`` with :data:`HOOKED` before anything else is loaded).
"""

from __future__ import annotations

#: Before the catalogue, when nothing else routes the user's messages.
PREAMBLE = (
    "This server gives you Agent Skills: folders of instructions for specific tasks.\n"
    "- Before starting a task, call route_skills with the user's request. If it returns "
    "skills, call load_skill for each (in plan order) and follow the instructions; if "
    "the plan is empty, answer without a skill.\n"
    "- When a skill's instructions point to a file, read it with read_skill_resource "
    "(or the skill://<name>/<path> resource) only when you need it.\n"
    "- When the user writes $skill-name, call resolve_mentions with their message.\n"
    "The skills available now:\n"
)

#: The whole text when skillrt's prompt hook already routes each message for the
#: client. It lists no skills: the client lists the skills of its own folders, the hook
#: brings the one a message needs, and load_skill's ``name`` parameter enumerates them
#: all. Fixed, so it does not depend on the catalogue, the config or the store.
HOOKED = (
    "This server gives you Agent Skills: folders of instructions for specific tasks.\n"
    "- skillrt's prompt hook already routes each of the user's messages: the skill it "
    "chose is in the conversation (a 'Using skill: <name>' block, or a one-line reminder "
    "of one). Follow it; do not call route_skills for that message again.\n"
    "- Call load_skill for a skill the hook only pointed to, or that you decide you need "
    "later (its name parameter lists every skill); read a skill's files with "
    "read_skill_resource only when you need them.\n"
)
