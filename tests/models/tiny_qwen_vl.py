"""A tiny, randomly initialised Qwen2.5-VL checkpoint built offline for tests.

The tokenizer is a byte-level BPE trained with `tokenizers` on the planner's system prompt,
wrapped as transformers' `Qwen2Tokenizer` with the chat and vision special tokens Qwen2.5-VL's
processor needs; the image processor keeps images to 2 x 2 merged patches. Its replies are
noise: it exists to run the real `transformers` backend end to end.
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|image_pad|>", "<|video_pad|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif c['type'] == 'text' %}"
    "{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
PIXELS = 56 * 56  # one 2 x 2 block of merged 14 px patches


def build_tiny_qwen_vl(folder: Path, corpus: list[str], seed: int = 0) -> Path:
    """Save a tiny Qwen2.5-VL model, tokenizer and processor to `folder`; return it."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import (
        AddedToken,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2Tokenizer,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=1000, special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    tokenizer = Qwen2Tokenizer(vocab=bpe.get_vocab(), merges=merges, eos_token="<|im_end|>",
                               pad_token="<|endoftext|>")
    tokenizer.add_tokens([AddedToken(t, special=True) for t in SPECIAL])
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=PIXELS, max_pixels=PIXELS),
        tokenizer=tokenizer, video_processor=Qwen2VLVideoProcessor(),
        chat_template=CHAT_TEMPLATE)
    config = Qwen2_5_VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                     "max_position_embeddings": 32768,
                     "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
                     "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"]},
        vision_config={"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "out_hidden_size": 32, "fullatt_block_indexes": [0], "window_size": 56},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(seed)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
