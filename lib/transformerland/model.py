"""A tiny transformer whose position scheme is a constructor argument.

``position`` is one of ``"none"``, ``"learned"``, ``"sinusoidal"``, ``"rope"`` or ``"alibi"``:
the first three act on the input vectors, the last two inside every attention layer.
"""

from __future__ import annotations

import torch
from torch import nn

from ._validation import require_choice, require_positive_float, require_positive_int, require_tensor
from .attention import SelfAttention
from .encodings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

POSITION_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi")


class TransformerBlock(nn.Module):
    """Pre-norm block: ``x + attention(LN(x))``, then ``x + FFN(LN(x))``. Shapes ``(B, T, D)``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, causal: bool, position: str, rope_base: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = SelfAttention(
            d_model, n_heads, causal=causal, rotary=position == "rope", alibi=position == "alibi", rope_base=rope_base
        )
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class TinyTransformer(nn.Module):
    """Token embedding, a position scheme, ``n_layers`` blocks, a final norm and a linear head.

    Args:
        vocab_size: number of token ids.
        d_model: width of the token vectors.
        n_layers: number of blocks.
        n_heads: attention heads per block.
        d_ff: hidden width of the feed-forward network.
        max_len: rows of the learned table (only used when ``position="learned"``).
        position: the position scheme, one of :data:`POSITION_SCHEMES`.
        causal: decoder (``True``, each token sees its past) or encoder (``False``).
        embed_init_std: initial std of the token embeddings. ``"auto"`` matches them to the
            position signal: 1.0 beside unit-amplitude sinusoids (the paper's √d-scaled
            embeddings), 0.02 otherwise (as BERT and GPT-2 initialise tokens and positions).
        learned_init_std: initial std of the learned table (``None``: N(0, 1)).
        rope_base: base of the rotary frequencies.
        seed: seed for the initial weights, so that the same arguments give the same model.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        d_ff: int = 256,
        max_len: int = 64,
        position: str = "learned",
        causal: bool = True,
        embed_init_std: float | str = "auto",
        learned_init_std: float | None = 0.02,
        rope_base: float = 10000.0,
        seed: int | None = 0,
    ) -> None:
        super().__init__()
        self.vocab_size = require_positive_int(vocab_size, "vocab_size")
        self.position = require_choice(position, "position", POSITION_SCHEMES)
        self.causal = causal
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
            self.embed = nn.Embedding(self.vocab_size, d_model)
            if embed_init_std == "auto":
                embed_init_std = 1.0 if position == "sinusoidal" else 0.02
            nn.init.normal_(self.embed.weight, std=require_positive_float(embed_init_std, "embed_init_std"))
            if position == "learned":
                self.positions: nn.Module = LearnedPositionalEmbedding(max_len, d_model, init_std=learned_init_std)
            elif position == "sinusoidal":
                self.positions = SinusoidalPositionalEncoding(d_model)
            else:
                self.positions = nn.Identity()
            self.blocks = nn.ModuleList(
                TransformerBlock(d_model, n_heads, d_ff, causal=causal, position=position, rope_base=rope_base)
                for _ in range(require_positive_int(n_layers, "n_layers"))
            )
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, self.vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens``: ``(B, T)`` integer ids → logits ``(B, T, vocab_size)``."""
        require_tensor(tokens, "tokens", ndim=2)
        if tokens.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"tokens must be integer ids (torch.long), got dtype {tokens.dtype}.")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(
                f"token ids must lie in 0 … {self.vocab_size - 1}, got values from "
                f"{int(tokens.min())} to {int(tokens.max())}."
            )
        x = self.positions(self.embed(tokens))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
