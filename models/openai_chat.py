"""The `openai` planner backend: an OpenAI-compatible chat-completions endpoint.

What `vllm serve MODEL` exposes at `/v1/chat/completions` (and OpenAI, and most local servers).
Images are sent as `image_url` parts holding PNG data URLs, so a VLM sees the scene without a
file server. Each request has `timeout` seconds; connection errors, timeouts and 5xx replies are
retried `retries` times by the client with backoff; what still fails is a `TetherError` saying
which server did not answer and why. The key (`BackendConfig.api_key`: `--api-key`, else
`OPENAI_API_KEY`, else "EMPTY") goes as the `Authorization: Bearer` header. Each request is logged
at DEBUG.
"""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from tether.errors import TetherError
from tether.models.chat import BACKENDS, BackendConfig, ChatMessage

log = logging.getLogger(__name__)


def data_url(image: np.ndarray) -> str:
    """An RGB array as a `data:image/png;base64,...` URL."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(image, dtype=np.uint8)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def to_openai(message: ChatMessage) -> dict[str, Any]:
    if not message.images:
        return {"role": message.role, "content": message.text}
    parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": data_url(i)}}
                                   for i in message.images]
    parts.append({"type": "text", "text": message.text})
    return {"role": message.role, "content": parts}


@BACKENDS.register("openai")
class OpenAIChat:
    name = "openai"

    def __init__(self, config: BackendConfig):
        import openai

        if not config.model:
            raise TetherError("the openai backend needs --model (the name the server serves, "
                              "e.g. Qwen/Qwen2.5-VL-7B-Instruct)")
        self.config = config
        self.client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key,
                                    timeout=config.timeout, max_retries=config.retries)

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        import openai

        log.debug("asking %s (model %s): %d messages, %d images", self.config.base_url,
                  self.config.model, len(messages), sum(len(m.images) for m in messages))
        try:
            reply = self.client.chat.completions.create(
                model=self.config.model, messages=[to_openai(m) for m in messages],
                max_tokens=self.config.max_tokens, temperature=self.config.temperature)
        except openai.APITimeoutError:
            raise TetherError(
                f"the planner server {self.config.base_url} did not answer within "
                f"{self.config.timeout:g} s ({self.config.retries} retries)") from None
        except openai.APIConnectionError as exc:
            raise TetherError(f"cannot reach the planner server {self.config.base_url}: "
                              f"{exc.__cause__ or exc}") from None
        except openai.APIStatusError as exc:
            raise TetherError(f"the planner server {self.config.base_url} answered "
                              f"{exc.status_code}: {exc.message}") from None
        content = reply.choices[0].message.content if reply.choices else None
        if not content:
            raise TetherError(f"the planner server {self.config.base_url} sent an empty reply")
        return content
