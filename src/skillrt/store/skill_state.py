"""Persisted enable/disable state of skills (S6, seed 004 §3.4): :class:`EnableState`."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Protocol

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


class _Store(Protocol):
    """A :class:`~skillrt.store.base.Store`, as far as these helpers use it."""

    @property
    def enable_state(self) -> EnableState: ...


def disabled_names(store: _Store) -> frozenset[str]:
    return store.enable_state.disabled()


def set_enabled(store: _Store, name: str, enabled: bool) -> None:
    store.enable_state.set(name, enabled, at=time.time())
