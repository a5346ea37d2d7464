"""The chat protocol: what a planner, a verifier or a diagnoser sends a chat model, and gets back.

A `ChatBackend` is anything with a `name` and `complete(messages) -> str`; messages are
`ChatMessage`s (role, text, optional RGB images); `BackendConfig` holds the settings a backend
reads. Backends (models/openai_chat.py, models/qwen_vl.py) import this module and register
themselves in `BACKENDS`; `tether.models.planners` imports them all and builds one by name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from tether.registry import Registry


@dataclass
class ChatMessage:
    role: str  # system, user or assistant
    text: str
    images: list[np.ndarray] = field(default_factory=list)  # H x W x 3 uint8 RGB


def default_api_key() -> str:
    """`OPENAI_API_KEY` from the environment, else "EMPTY" (vLLM's key when it checks none)."""
    return os.environ.get("OPENAI_API_KEY") or "EMPTY"


@dataclass
class BackendConfig:
    """Settings of a backend; each backend reads the ones it needs."""

    model: str = ""  # the served model name (openai) or a local directory (transformers)
    base_url: str = "http://localhost:8000/v1"
    api_key: str = field(default_factory=default_api_key, repr=False)  # never printed
    timeout: float = 60.0  # seconds per request
    retries: int = 2  # extra attempts on connection errors, timeouts and 5xx
    max_tokens: int = 1024
    temperature: float = 0.0


@runtime_checkable
class ChatBackend(Protocol):
    name: str

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        """The model's reply to `messages` (`TetherError` when the model cannot be reached)."""


BACKENDS: Registry[Callable[[BackendConfig], ChatBackend]] = Registry("planner backend")
