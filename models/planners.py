"""Planner backends: chat models that answer a planning prompt with text, registered by name.

A backend is anything with a `name` and `complete(messages) -> str`; messages are `ChatMessage`s
(role, text, optional RGB images). The planner in `tether.planning.llm` builds the prompt, reads
the reply as a plan and sends back the exact problems; backends only move text (and images) to a
model and back. Built by name from a `BackendConfig`, heavy libraries imported on first use:

    openai        any OpenAI-compatible chat-completions server (`vllm serve`, ...): images as
                  PNG data URLs, a timeout per request and retries (models/openai_chat.py)
    transformers  a Qwen2.5-VL / Qwen3-VL checkpoint from a local directory, inputs prepared
                  with qwen-vl-utils; never downloads (models/qwen_vl.py)

    backend = get_backend("openai", BackendConfig(model="Qwen/Qwen2.5-VL-7B-Instruct",
                                                  base_url="http://gpu:8000/v1"))
    backend.complete([ChatMessage("user", "Plan: put the bowl on the plate")])

The `openai` backend sends `BackendConfig.api_key` as `Authorization: Bearer KEY`; by default it
is the `OPENAI_API_KEY` environment variable, else "EMPTY" (what a vLLM server started without
`--api-key` accepts), so hosted and key-protected servers work without code changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from tether.errors import TetherError, did_you_mean


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


BACKENDS: dict[str, Callable[[BackendConfig], ChatBackend]] = {}


def register_backend(name: str, factory: Callable[[BackendConfig], ChatBackend]) -> None:
    BACKENDS[name] = factory


def _openai(config: BackendConfig) -> ChatBackend:
    from tether.models.openai_chat import OpenAIChat

    return OpenAIChat(config)


def _transformers(config: BackendConfig) -> ChatBackend:
    from tether.models.qwen_vl import QwenVLChat

    return QwenVLChat(config)


register_backend("openai", _openai)
register_backend("transformers", _transformers)


def get_backend(name: str, config: BackendConfig | None = None) -> ChatBackend:
    if name not in BACKENDS:
        raise TetherError(f"unknown planner backend '{name}'{did_you_mean(name, BACKENDS)}; "
                          f"backends: {', '.join(sorted(BACKENDS))}")
    return BACKENDS[name](config or BackendConfig())
