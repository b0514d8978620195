"""Persisted enable/disable state of skills (S6, seed 004 §3.4): :class:`EnableState`."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt.store.base import Store

__all__ = ["EnableState", "disabled_names", "set_enabled"]


class EnableState(ABC):
    """Which skills are disabled, by qualified name (a skill never set is enabled)."""

    @abstractmethod
    def disabled(self) -> frozenset[str]:
        """The names of the disabled skills."""

    @abstractmethod
    def set(self, name: str, enabled: bool, *, at: float) -> None:
        """Enable or disable ``name``."""

    @abstractmethod
    def token(self) -> str:
        """A short string that changes whenever any skill is enabled or disabled (hot
        reload polls it)."""


def disabled_names(store: Store) -> frozenset[str]:
    return store.enable_state.disabled()


def set_enabled(store: Store, name: str, enabled: bool) -> None:
    store.enable_state.set(name, enabled, at=time.time())
