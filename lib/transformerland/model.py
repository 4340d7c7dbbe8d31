"""A tiny transformer whose sizes and position scheme are one frozen :class:`TransformerConfig`.

``position`` is one of ``"none"``, ``"learned"``, ``"sinusoidal"``, ``"rope"`` or ``"alibi"``:
the first three act on the input vectors, the last two inside every attention layer. The
config is checked once, when it is made, and then passed down: model → block → attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ._validation import (
    require_bool,
    require_choice,
    require_elements,
    require_even,
    require_index_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
)
from .attention import SelfAttention, check_heads
from .encodings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

__all__ = ["POSITION_SCHEMES", "TinyTransformer", "TransformerBlock", "TransformerConfig"]

POSITION_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi")


@dataclass(frozen=True)
class TransformerConfig:
    """The sizes and the position scheme of a :class:`TinyTransformer`, checked when it is made.

    Args:
        vocab_size: number of token ids.
        d_model: width ``D`` of the token vectors.
        n_layers: number of blocks.
        n_heads: attention heads per block; must divide ``d_model``.
        d_ff: hidden width of the feed-forward network.
        max_len: rows of the learned table (only used when ``position="learned"``).
        position: the position scheme, one of :data:`POSITION_SCHEMES`.
        causal: decoder (``True``, each token sees its past) or encoder (``False``).
        embed_init_std: initial std of the token embeddings; ``None`` matches them to the position
            signal (see :attr:`token_init_std`).
        learned_init_std: initial std of the learned table; ``None`` keeps ``nn.Embedding``'s N(0, 1).
        rope_base: base of the rotary frequencies (only used when ``position="rope"``).

    Every size is a positive integer up to :data:`~transformerland._validation.MAX_SIZE`, and the
    whole model at most :data:`~transformerland._validation.MAX_ELEMENTS` parameters; ``causal`` is
    a real ``bool``; the numbers are finite and positive.
    """

    vocab_size: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256
    max_len: int = 64
    position: str = "learned"
    causal: bool = True
    embed_init_std: float | None = None
    learned_init_std: float | None = 0.02
    rope_base: float = 10000.0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "d_ff", "max_len"):
            require_positive_int(getattr(self, name), name)
        require_choice(self.position, "position", POSITION_SCHEMES)
        check_heads(self.d_model, self.n_heads, self.attention_position)
        if self.position == "sinusoidal":
            require_even(self.d_model, "d_model", "sines and cosines come in pairs.")
        require_bool(self.causal, "causal", "True: a decoder, each token sees its past; False: an encoder")
        for name in ("embed_init_std", "learned_init_std"):
            if getattr(self, name) is not None:
                require_positive_float(getattr(self, name), name)
        require_positive_float(self.rope_base, "rope_base")
        require_elements(self.parameter_estimate(), "this TransformerConfig's model (parameters)")

    def parameter_estimate(self) -> int:
        """About how many parameters the model has (its weight matrices), checked against ``MAX_ELEMENTS``."""
        d, table = self.d_model, self.max_len if self.position == "learned" else 0
        return 2 * self.vocab_size * d + table * d + self.n_layers * (4 * d * d + 2 * d * self.d_ff)

    @property
    def attention_position(self) -> str:
        """How positions enter attention: ``"rope"``, ``"alibi"``, or ``"none"`` for the input-side schemes."""
        return self.position if self.position in ("rope", "alibi") else "none"

    @property
    def token_init_std(self) -> float:
        """The std the token embeddings start with.

        ``embed_init_std`` when given; otherwise 1.0 beside unit-amplitude sinusoids (the paper's
        √d-scaled embeddings) and 0.02 beside any other scheme (the std BERT uses for its token and
        position tables, and GPT-2 for its token table ``wte``; GPT-2 starts its position table
        ``wpe`` narrower, at 0.01).
        """
        if self.embed_init_std is not None:
            return float(self.embed_init_std)
        return 1.0 if self.position == "sinusoidal" else 0.02


class TransformerBlock(nn.Module):
    """Pre-norm block: ``x + attention(LN(x))``, then ``x + FFN(LN(x))``. Shapes ``(B, T, D)``."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        _require_config(config)
        d = config.d_model
        self.norm1 = nn.LayerNorm(d)
        self.attention = SelfAttention(
            d, config.n_heads, causal=config.causal, position=config.attention_position, rope_base=config.rope_base
        )
        self.norm2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, config.d_ff), nn.GELU(), nn.Linear(config.d_ff, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class TinyTransformer(nn.Module):
    """Token embedding, a position scheme, ``n_layers`` blocks, a final norm and a linear head.

    Args:
        config: the sizes and position scheme, e.g. ``TransformerConfig(vocab_size=16, position="rope")``.
        seed: seed for the initial weights, so that the same config gives the same model
            (``None``: draw from the global generator). The global generator is left as it was.
    """

    def __init__(self, config: TransformerConfig, *, seed: int | None = 0) -> None:
        super().__init__()
        self.config = _require_config(config)
        if seed is not None:
            seed = require_int(seed, "seed", low=0)
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
            self.embed = nn.Embedding(config.vocab_size, config.d_model)
            nn.init.normal_(self.embed.weight, std=config.token_init_std)
            self.positions = _input_positions(config)
            self.blocks = nn.ModuleList(TransformerBlock(config) for _ in range(config.n_layers))
            self.norm = nn.LayerNorm(config.d_model)
            self.head = nn.Linear(config.d_model, config.vocab_size)

    @property
    def causal(self) -> bool:
        """Whether each token sees only its past (a decoder)."""
        return self.config.causal

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens``: ``(B, T)`` integer ids, ``T ≥ 1`` → logits ``(B, T, vocab_size)``.

        An input with no tokens (``T = 0``) is refused: there is nothing to predict.
        """
        require_index_tensor(tokens, "tokens", ndim=2)
        if tokens.shape[1] == 0:
            raise ValueError("tokens holds no tokens (shape (B, 0)): pass at least one token id per row.")
        vocab_size = self.config.vocab_size
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
            raise ValueError(
                f"token ids must lie in 0 … {vocab_size - 1}, got values from "
                f"{int(tokens.min())} to {int(tokens.max())}."
            )
        if tokens.device != self.embed.weight.device:
            raise ValueError(
                f"tokens are on {tokens.device} but the model is on {self.embed.weight.device}: "
                f"move them with tokens.to({str(self.embed.weight.device)!r})."
            )
        x = self.positions(self.embed(tokens.long()))  # (B, T, D)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))  # (B, T, vocab_size)

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def _require_config(config: object) -> TransformerConfig:
    """Return ``config`` if it is a :class:`TransformerConfig`, else say how to make one."""
    if not isinstance(config, TransformerConfig):
        raise TypeError(
            f"config must be a TransformerConfig, got {type(config).__name__}: "
            'build one with TransformerConfig(vocab_size=16, position="learned", ...).'
        )
    return config


def _input_positions(config: TransformerConfig) -> nn.Module:
    """The layer that adds positions to the token vectors: a learned table, the sinusoids, or nothing."""
    if config.position == "learned":
        return LearnedPositionalEmbedding(config.max_len, config.d_model, init_std=config.learned_init_std)
    if config.position == "sinusoidal":
        return SinusoidalPositionalEncoding(config.d_model)
    return nn.Identity()
