"""Planner backends: chat models that answer a planning prompt with text, built by name.

A backend (`tether.models.chat.ChatBackend`) only moves text (and images) to a model and back;
the planner in `tether.planning.llm` builds the prompt, reads the reply as a plan and sends back
the exact problems. This module imports every backend, so each is registered in `BACKENDS`, and
builds one from a `BackendConfig`; heavy libraries are imported on first use:

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

from tether.models import openai_chat, qwen_vl
from tether.models.chat import BACKENDS, BackendConfig, ChatBackend, ChatMessage

__all__ = ["BACKENDS", "BackendConfig", "ChatBackend", "ChatMessage", "get_backend"]

ADAPTERS = (openai_chat, qwen_vl)  # imported: each registers its backend


def get_backend(name: str, config: BackendConfig | None = None) -> ChatBackend:
    """The backend registered as `name`, built from `config` (defaults when None)."""
    return BACKENDS.get(name)(config or BackendConfig())
