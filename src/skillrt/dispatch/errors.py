"""Dispatcher errors beyond the four guard codes of seed 000 §6 (in ``skillrt.errors``)."""

from __future__ import annotations

from skillrt.errors import DispatchError


class UnknownRole(DispatchError):
    """No role guide with that name (``available`` lists the known roles)."""

    code = "E_UNKNOWN_ROLE"
