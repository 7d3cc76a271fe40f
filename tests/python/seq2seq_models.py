"""A decoder layer of an encoder-decoder model, cached as transformers' static EncoderDecoderCache
is exported (Whisper's, T5's): for the cache rewrites' tests (ir_passes/test_grown_cache.py,
ir_passes/test_encoder_caches.py)."""

from __future__ import annotations

import torch


class CrossAttendingDecoder(torch.nn.Module):
    """One decoder layer of an encoder-decoder model cached as transformers' static
    EncoderDecoderCache is exported (Whisper's, T5's): the self-attention cache written at the
    position, the cross-attention cache written whole from the encoder's states on every call
    (constant rows 0..source-1). Either attention may come with or without a mask."""

    def __init__(self, self_mask: bool, cross_mask: bool, width=32, heads=4, context=12, source=6, vocab=40):
        super().__init__()
        torch.manual_seed(0)
        self.self_mask, self.cross_mask, self.heads, self.context = self_mask, cross_mask, heads, context
        # Given, as transformers gives it: the frontend then spells a missing mask as a scalar.
        self.scale = (width // heads) ** -0.5
        self.embed = torch.nn.Embedding(vocab, width)
        self.projections = torch.nn.ModuleDict({name: torch.nn.Linear(width, width) for name in
                                                ("q", "k", "v", "o", "cross_q", "cross_k", "cross_v", "cross_o")})
        self.head = torch.nn.Linear(width, vocab)
        for name, rows in (("self_k", context), ("self_v", context), ("cross_k", source), ("cross_v", source)):
            self.register_buffer(name, torch.zeros(1, heads, rows, width // heads), persistent=False)

    def _split(self, name, x):
        return self.projections[name](x).unflatten(-1, (self.heads, -1)).transpose(1, 2)

    def forward(self, tokens, states, position):
        x = self.embed(tokens)
        self.self_k.index_copy_(2, position, self._split("k", x))
        self.self_v.index_copy_(2, position, self._split("v", x))
        mask = (torch.arange(self.context) <= position).view(1, 1, 1, -1) if self.self_mask else None
        attended = torch.nn.functional.scaled_dot_product_attention(self._split("q", x), self.self_k, self.self_v,
                                                                    attn_mask=mask, scale=self.scale)
        x = x + self.projections["o"](attended.transpose(1, 2).flatten(2))
        rows = torch.arange(states.shape[1])
        self.cross_k.index_copy_(2, rows, self._split("cross_k", states))
        self.cross_v.index_copy_(2, rows, self._split("cross_v", states))
        mask = torch.ones(1, 1, 1, states.shape[1], dtype=torch.bool) if self.cross_mask else None
        attended = torch.nn.functional.scaled_dot_product_attention(self._split("cross_q", x), self.cross_k,
                                                                    self.cross_v, attn_mask=mask, scale=self.scale)
        return self.head(x + self.projections["cross_o"](attended.transpose(1, 2).flatten(2)))
