"""The `transformers` planner backend: a Qwen2.5-VL / Qwen3-VL checkpoint from a local directory.

The model and its processor load from `config.model` (a directory; nothing is downloaded,
`HF_HUB_OFFLINE` is set) on the first request; images go through `qwen_vl_utils.
process_vision_info` exactly as the model card prescribes; the reply is greedy-decoded, at most
`max_tokens` new tokens. CPU works for small checkpoints; give a GPU machine the `openai`
backend and a vLLM server instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.models.chat import BACKENDS, BackendConfig, ChatMessage


@BACKENDS.register("transformers")
class QwenVLChat:
    name = "transformers"

    def __init__(self, config: BackendConfig):
        if not config.model or not Path(config.model).is_dir():
            raise TetherError(f"the transformers backend needs --model DIR, a local checkpoint "
                              f"directory; '{config.model}' is not one")
        self.config = config
        self._model: Any = None
        self._processor: Any = None

    def load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self._processor = AutoProcessor.from_pretrained(self.config.model)
        self._model = AutoModelForImageTextToText.from_pretrained(self.config.model).eval()

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        import torch
        from PIL import Image
        from qwen_vl_utils import process_vision_info

        if self._model is None:
            self.load()
        chat = [{"role": m.role, "content": [
            *({"type": "image", "image": Image.fromarray(i)} for i in m.images),
            {"type": "text", "text": m.text}]} for m in messages]
        text = self._processor.apply_chat_template(chat, tokenize=False,
                                                   add_generation_prompt=True)
        images, videos = process_vision_info(chat)
        inputs = self._processor(text=[text], images=images, videos=videos, return_tensors="pt")
        with torch.no_grad():
            out = self._model.generate(**inputs, max_new_tokens=self.config.max_tokens,
                                       do_sample=False)
        new = out[:, inputs["input_ids"].shape[1]:]
        return self._processor.batch_decode(new, skip_special_tokens=True)[0]
