"""Passkey retrieval: can a language model find one number hidden in a long text?

A five-digit key is stated by one sentence, at one chosen place inside filler sentences that say
nothing (the sentence states it twice), and the text ends with a question. The model answers by
greedy decoding; it is right when the first run of five digits it writes is the key
(:func:`passkey_found`). The answer rests on a few tokens far back, so the test measures whether
a model *uses* its whole context, not merely whether it stays fluent (after the passkey test of
Mohtashami and Jaggi, 2023).

The filler is cut at a token, not at a sentence's end, so the needle may split a filler sentence
and the question may follow a cut-off word ("... Here\nWhat is the pass key?").

The prompt is built in token ids, so that its length is exact::

    [intro] [filler ... filler] [needle] [filler ... filler] [question]
             ^ depth · (filler tokens) tokens before the needle

:func:`rope_recipe` puts one of :mod:`~transformerland.encodings.rope_scaling`'s recipes into a
transformers RoPE model (its ``rotary_emb``'s frequencies and attention factor), and
:func:`passkey_trial` runs one prompt, :func:`passkey_trials` several of one length in a batch.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import math
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from .._validation import (
    model_vocab_size,
    require_callable,
    require_choice,
    require_ids_below,
    require_index_tensor,
    require_int,
    require_positive_int,
    require_str,
)
from ..encodings.rope_scaling import rope_frequencies, scaling_recipes

__all__ = [
    "ANSWER_TOKENS",
    "JUDGING",
    "WORDING",
    "WORDINGS",
    "PasskeyPrompt",
    "PasskeyResult",
    "Wording",
    "fisher_p",
    "greedy_digits",
    "load_passkey_grid",
    "long_context_recipes",
    "mcnemar_p",
    "needle_depths",
    "passkey_found",
    "passkey_keys",
    "passkey_prompt",
    "passkey_scores",
    "passkey_trial",
    "passkey_trials",
    "rope_recipe",
    "wilson_interval",
]


@dataclass(frozen=True)
class Wording:
    """The four texts of a passkey prompt; ``needle`` holds ``{key}`` twice, the others no digit."""

    intro: str
    filler: str
    needle: str
    question: str


#: The wordings tried. ``"landmark"`` is the prompt of Mohtashami and Jaggi (2023), word for word; the
#: others are ours or theirs with our question. The default, :data:`WORDING`, is the one on which plain
#: SmolLM2 found the key most often at 7,680 tokens (``benchmarks/passkey_grid.py --choose-wording``).
WORDINGS: dict[str, Wording] = {
    "stairs": Wording(
        "A number is hidden in the long text below. Remember it: you will be asked for it at the end.\n",
        " The stairs climb. The lamps are lit. The clocks tick on the wall. Up we go, and down again.",
        " The pass key is {key}. Remember it. {key} is the pass key.",
        "\nWhat is the pass key? The pass key is",
    ),
    "stairs, digits asked": Wording(
        "A number is hidden in the long text below. Remember it: you will be asked for it at the end.\n",
        " The stairs climb. The lamps are lit. The clocks tick on the wall. Up we go, and down again.",
        " The pass key is {key}. Remember it. {key} is the pass key.",
        "\nWhat is the pass key? Answer with its five digits.\nThe pass key is",
    ),
    "landmark": Wording(
        "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. "
        "I will quiz you about the important information there.",
        " The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.",
        " The pass key is {key}. Remember it. {key} is the pass key.",
        " What is the pass key? The pass key is",
    ),
    "landmark, digits asked": Wording(
        "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. "
        "I will quiz you about the important information there.",
        " The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.",
        " The pass key is {key}. Remember it. {key} is the pass key.",
        "\nWhat is the pass key? Answer with its five digits.\nThe pass key is",
    ),
}
WORDING = "landmark, digits asked"


@dataclass
class PasskeyPrompt:
    """``input_ids``: ``(1, T)`` long; ``key``: the five digits; ``needle_at``: the needle's first token index."""

    input_ids: torch.Tensor
    key: str
    needle_at: int


@dataclass
class PasskeyResult:
    """One trial: the prompt's length and depth, the recipe, the key, what the model wrote, whether it found it."""

    n_tokens: int
    depth: float
    recipe: str
    key: str
    answer: str
    found: bool
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The most tokens a generated answer may have (a key is five digits; a few more tokens suffice).
MAX_NEW_TOKENS = 64

#: Tokens written per answer by default. SmolLM2 writes the space and each digit as separate tokens,
#: so a bare key takes six; 24 leave room for an answer that first restates the question. (The grid
#: committed with the library was measured with 7, before this default; its file records that.)
ANSWER_TOKENS = 24

#: How :func:`passkey_found` judges an answer, in words (written into a grid's file).
JUDGING = "the first run of five digits in the answer is the key (re.search(r'\\d{5}', answer))"


def passkey_found(answer: str, key: str) -> bool:
    """Whether the first run of five digits in ``answer`` is ``key`` (e.g. ``' 40721.'`` finds ``'40721'``).

    A longer run counts by its first five digits (``' 407213'`` finds ``'40721'``); an answer with
    no five digits in a row finds nothing.
    """
    require_str(answer, "answer")
    if not (isinstance(key, str) and len(key) == 5 and key.isdigit()):
        raise ValueError(f"key must be a string of five digits such as '40721', got {key!r}.")
    first = re.search(r"\d{5}", answer)
    return first is not None and first.group() == key


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False).input_ids)


def _require_model(model: object) -> nn.Module:
    """A transformers causal language model (an ``nn.Module`` with a ``config``)."""
    if not isinstance(model, nn.Module) or not hasattr(model, "config"):
        raise TypeError(
            f"model must be a transformers causal language model such as load_smollm2()'s, got {type(model).__name__}."
        )
    return model


def _require_needle(depth: object, key: object, depth_name: str = "depth", key_name: str = "key") -> None:
    """A needle's depth (0 to 1 of the filler) and key (a string of digits), or an error naming the argument."""
    if not isinstance(depth, (int, float)) or isinstance(depth, bool) or not 0.0 <= depth <= 1.0:
        raise ValueError(f"{depth_name} must be a number from 0 (start) to 1 (end) of the filler, got {depth!r}.")
    if not (isinstance(key, str) and key.isdigit()):
        raise ValueError(f"{key_name} must be a string of digits such as '40721', got {key!r}.")


def passkey_prompt(tokenizer: Any, n_tokens: int, depth: float, key: str, wording: str = WORDING) -> PasskeyPrompt:
    """The prompt of exactly ``n_tokens`` tokens with ``key`` at ``depth`` (0: first, 1: last) of the filler.

    The filler paragraph is repeated and cut, in tokens, to fill what the intro, the needle and
    the question leave.
    """
    require_callable(tokenizer, "tokenizer", "a transformers tokenizer such as load_smollm2()'s")
    n_tokens = require_positive_int(n_tokens, "n_tokens")
    _require_needle(depth, key)
    require_choice(wording, "wording", tuple(WORDINGS))
    words = WORDINGS[wording]
    intro, question = _ids(tokenizer, words.intro), _ids(tokenizer, words.question)
    needle = _ids(tokenizer, words.needle.format(key=key))
    room = n_tokens - len(intro) - len(needle) - len(question)
    if room < 1:
        raise ValueError(
            f"n_tokens = {n_tokens} leaves no room for filler: the intro, needle and question alone take "
            f"{n_tokens - room} tokens; ask for more."
        )
    paragraph = _ids(tokenizer, words.filler)
    filler = (paragraph * (room // len(paragraph) + 1))[:room]
    before = round(depth * room)
    ids = intro + filler[:before] + needle + filler[before:] + question
    return PasskeyPrompt(torch.tensor([ids]), key, len(intro) + before)


def passkey_keys(count: int, seed: int = 0) -> list[str]:
    """``count`` five-digit keys (10000 to 99999) drawn with ``seed``: one per needle of a grid."""
    count = require_positive_int(count, "count")
    seed = require_int(seed, "seed", low=0)
    generator = torch.Generator().manual_seed(seed)
    return [str(int(k)) for k in torch.randint(10000, 100000, (count,), generator=generator)]


def _rotary_embeddings(model: nn.Module) -> list[nn.Module]:
    _require_model(model)
    found = [m for m in model.modules() if hasattr(m, "inv_freq") and hasattr(m, "attention_scaling")]
    if not found:
        raise ValueError(
            "model has no transformers rotary embedding (a module with inv_freq and attention_scaling); "
            "pass a RoPE model such as load_smollm2()'s."
        )
    return found


@contextlib.contextmanager
def rope_recipe(
    model: nn.Module, scaling: Mapping[str, object] | None, seq_len: int | None = None
) -> Iterator[nn.Module]:
    """Inside the ``with`` block, ``model`` (a transformers RoPE model) uses the recipe ``scaling``.

    The frequencies come from :func:`~transformerland.encodings.rope_frequencies` with the model's
    head width and base; ``"dynamic"`` reads ``seq_len`` (the prompt's length), once: the few
    tokens generated after the prompt use the same frequencies. The rotary module's ``inv_freq``
    (``(head_dim/2,)``) and ``attention_scaling`` are restored on leaving.
    """
    rotaries = _rotary_embeddings(model)
    config = model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    base = float(config.rope_parameters["rope_theta"])
    inv_freq, factor = rope_frequencies(head_dim, base, scaling, seq_len=seq_len)  # (d/2,) float64
    saved = []
    for rotary in rotaries:
        saved.append((rotary, rotary.inv_freq.clone(), rotary.attention_scaling))
        rotary.inv_freq.copy_(inv_freq.to(rotary.inv_freq))
        rotary.attention_scaling = factor
    try:
        yield model
    finally:
        for rotary, old, scale in saved:
            rotary.inv_freq.copy_(old)
            rotary.attention_scaling = scale


@torch.no_grad()
def _greedy(model: nn.Module, input_ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedy decoding after ``input_ids`` ``(B, T)`` (prompts of one length, no padding): ``(B, new_tokens)``.

    The prompt's pass keeps only the last position's logits (``logits_to_keep=1``): ``(B, 1, vocab)``.
    """
    out = model(input_ids, use_cache=True, logits_to_keep=1)
    written = []
    for step in range(new_tokens):
        token = out.logits[:, -1].argmax(-1, keepdim=True)  # (B, 1)
        written.append(token)
        if step + 1 < new_tokens:
            out = model(token, past_key_values=out.past_key_values, use_cache=True)
    return torch.cat(written, dim=1)


def greedy_digits(model: nn.Module, input_ids: torch.Tensor, new_tokens: int = 7) -> torch.Tensor:
    """Greedy decoding of ``new_tokens`` after ``input_ids`` ``(1, T)``, with the model's cache: ``(new_tokens,)``.

    ``new_tokens`` is at most :data:`MAX_NEW_TOKENS`; ``input_ids`` holds one prompt of at least one token.
    """
    _require_model(model)
    require_index_tensor(input_ids, "input_ids", ndim=2, what="token ids")
    if input_ids.shape[0] != 1 or input_ids.shape[1] < 1:
        raise ValueError(
            f"input_ids must be one prompt of at least one token, shape (1, T), got {tuple(input_ids.shape)}."
        )
    new_tokens = require_positive_int(new_tokens, "new_tokens", cap=MAX_NEW_TOKENS)
    require_ids_below(input_ids, "input_ids", model_vocab_size(model))
    return _greedy(model, input_ids, new_tokens)[0]


def passkey_trials(
    model: nn.Module,
    tokenizer: Any,
    n_tokens: int,
    depths: list[float],
    keys: list[str],
    scaling: Mapping[str, object] | None = None,
    recipe: str = "plain RoPE",
    new_tokens: int = ANSWER_TOKENS,
    wording: str = WORDING,
) -> list[PasskeyResult]:
    """Prompts of ``n_tokens`` tokens, key ``keys[i]`` at ``depths[i]``, answered in one batch under ``scaling``.

    Every prompt has exactly ``n_tokens`` tokens, so the batch ``(len(depths), n_tokens)`` needs no
    padding and each row sees the positions it would see alone. ``found`` is :func:`passkey_found` of
    the ``new_tokens`` tokens written greedily; ``seconds`` is the batch's time shared equally.
    """
    _require_model(model)
    require_str(recipe, "recipe")
    if not isinstance(depths, (list, tuple)) or not isinstance(keys, (list, tuple)) or not depths:
        raise TypeError(
            f"depths and keys must be non-empty lists of the same length, got {type(depths).__name__} "
            f"and {type(keys).__name__}; pass one depth and one key per needle."
        )
    if len(depths) != len(keys):
        raise ValueError(f"depths and keys must pair up, got {len(depths)} depths and {len(keys)} keys.")
    for i, (depth, key) in enumerate(zip(depths, keys, strict=True)):
        _require_needle(depth, key, f"depths[{i}]", f"keys[{i}]")
    new_tokens = require_positive_int(new_tokens, "new_tokens", cap=MAX_NEW_TOKENS)
    prompts = [passkey_prompt(tokenizer, n_tokens, d, k, wording) for d, k in zip(depths, keys, strict=True)]
    device = next(model.parameters()).device
    start = time.perf_counter()
    with rope_recipe(model, scaling, seq_len=n_tokens):
        written = _greedy(model, torch.cat([p.input_ids for p in prompts]).to(device), new_tokens)  # (B, new)
    answers = [tokenizer.decode(row) for row in written.cpu()]
    seconds = (time.perf_counter() - start) / len(prompts)
    return [
        PasskeyResult(n_tokens, float(d), recipe, k, a, passkey_found(a, k), seconds)
        for d, k, a in zip(depths, keys, answers, strict=True)
    ]


def passkey_trial(
    model: nn.Module,
    tokenizer: Any,
    n_tokens: int,
    depth: float,
    key: str,
    scaling: Mapping[str, object] | None = None,
    recipe: str = "plain RoPE",
    new_tokens: int = ANSWER_TOKENS,
    wording: str = WORDING,
) -> PasskeyResult:
    """One prompt of ``n_tokens`` tokens, the key at ``depth``, answered under the recipe ``scaling``.

    ``found`` is :func:`passkey_found` of the ``new_tokens`` tokens written greedily: the first
    run of five digits among them is the key. (:func:`passkey_trials` runs several in one batch.)
    """
    _require_needle(depth, key)
    return passkey_trials(model, tokenizer, n_tokens, [depth], [key], scaling, recipe, new_tokens, wording)[0]


def long_context_recipes(original_length: int = 8192, factor: float = 4.0) -> dict[str, dict[str, object] | None]:
    """The rows the book's long-context benchmarks measure, by name.

    Plain RoPE, then linear (PI), NTK-aware, YaRN and Llama 3 at ``factor`` (as
    :func:`~transformerland.encodings.scaling_recipes` configures them), and dynamic NTK twice, each
    name stating its configured factor: ``"dynamic NTK (f=1)"``, its canonical form (effective factor
    ``max(1, ℓ/L)`` at length ``ℓ``), and ``"dynamic NTK (f=4)"`` (for ``factor`` 4: ``4ℓ/L − 3``).
    """
    recipes = scaling_recipes(original_length=original_length, factor=factor)
    dynamic = recipes.pop("dynamic NTK")
    canonical = {**dynamic, "factor": 1.0}
    return {**recipes, "dynamic NTK (f=1)": canonical, f"dynamic NTK (f={factor:g})": dynamic}


def wilson_interval(found: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a share ``found / trials`` (95 % for the default ``z``): ``(low, high)``.

    Unlike ``p ± z·√(p(1−p)/n)``, it stays inside [0, 1] and is not empty at 0 or ``trials``
    found: 10 of 10 gives about (0.72, 1.0), so ten needles cannot tell 100 % from 80 %.
    """
    found, trials = _found_of(found, trials)
    if not isinstance(z, (int, float)) or isinstance(z, bool) or not math.isfinite(z) or z <= 0:
        raise ValueError(f"z must be a positive number of standard deviations (1.96 for 95 %), got {z!r}.")
    share = found / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar test of two rows that answered the same trials: its p-value.

    Only the trials the two rows disagree on tell them apart: ``only_a`` found by row a and
    missed by row b, ``only_b`` the other way round. Were the rows equally good, each of these
    ``n = only_a + only_b`` trials would be a fair coin's toss, and the p-value is the chance of a
    split at least as uneven as the one seen, in either direction:
    ``min(1, 2 · Σ_{k ≤ min(only_a, only_b)} C(n, k) / 2^n)``. 24 against 8 gives about 0.007;
    15 against 9, about 0.31 (no evidence either way); no disagreement at all, 1. (The terms are
    summed as logarithms, so that counts in the millions neither overflow nor take long.)
    """
    only_a = require_int(only_a, "only_a", low=0)
    only_b = require_int(only_b, "only_b", low=0)
    n, fewer = only_a + only_b, min(only_a, only_b)
    if 2 * fewer == n:
        return 1.0
    return min(1.0, 2 * _sum_of_exps([_log_choose(n, k) - n * math.log(2) for k in range(fewer + 1)]))


def fisher_p(found_a: int, trials_a: int, found_b: int, trials_b: int) -> float:
    """Exact two-sided Fisher test of two shares measured on *different* trials: its p-value.

    Where two rows answered the same needles, :func:`mcnemar_p` compares them needle by needle; two
    groups of different needles (a row's shorter prompts against its longer ones) can only be compared
    by their counts. Given the ``found_a + found_b`` keys found among all ``trials_a + trials_b``
    needles, were the two shares equal, any ``trials_a`` of the needles would be as likely as any
    other to be group a, so group a's count follows the hypergeometric law
    ``P(k) = C(found, k) · C(missed, trials_a − k) / C(trials, trials_a)``. The p-value sums ``P(k)``
    over every ``k`` no more likely than the one seen. 3 of 4 against 1 of 4 gives 34/70 ≈ 0.49;
    41 of 60 against 104 of 120, about 0.005. (The terms are summed as logarithms, as in
    :func:`mcnemar_p`.)
    """
    found_a, trials_a = _found_of(found_a, trials_a, "_a")
    found_b, trials_b = _found_of(found_b, trials_b, "_b")
    found, trials = found_a + found_b, trials_a + trials_b
    possible = range(max(0, trials_a - (trials - found)), min(found, trials_a) + 1)
    # group a finds k of the found keys: log P(k), for every k the margins allow
    logs = {
        k: _log_choose(found, k) + _log_choose(trials - found, trials_a - k) - _log_choose(trials, trials_a)
        for k in possible
    }
    seen = logs[found_a]
    return min(1.0, _sum_of_exps([term for term in logs.values() if term <= seen + 1e-9]))  # no more likely


def _found_of(found: int, trials: int, suffix: str = "") -> tuple[int, int]:
    """``found`` of ``trials`` needles, checked: ``trials`` positive, ``0 <= found <= trials``."""
    trials = require_positive_int(trials, f"trials{suffix}")
    found = require_int(found, f"found{suffix}", low=0)
    if found > trials:
        raise ValueError(
            f"found{suffix} = {found} is more than trials{suffix} = {trials}; count the needles found among them."
        )
    return found, trials


def _log_choose(n: int, k: int) -> float:
    """``ln C(n, k)``, through the log-gamma function, so that large counts neither overflow nor take long."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _sum_of_exps(logs: list[float]) -> float:
    """``Σ exp(term)`` over ``logs``, with the largest term factored out so that none underflows to 0."""
    top = max(logs)
    return math.exp(top) * sum(math.exp(term - top) for term in logs)


def needle_depths(count: int) -> list[float]:
    """``count`` depths spread evenly from near the start to near the end: ``(k + 0.5) / count``."""
    count = require_positive_int(count, "count")
    return [round((k + 0.5) / count, 4) for k in range(count)]


def load_passkey_grid() -> dict[str, Any]:
    """The passkey grid measured by ``benchmarks/passkey_grid.py`` and shipped with the library.

    A dict with ``"trials"`` (one dict per trial, the fields of :class:`PasskeyResult`), ``"runs"``
    (provenance of each sitting: date, command, device, versions, seconds), ``"recipes"``,
    ``"wording"``, ``"prompt"``, ``"new_tokens"`` (tokens written per answer) and ``"judging"``
    (the rule that set each trial's ``found``, in words).
    """
    text = importlib.resources.files("transformerland").joinpath("data/passkey_grid.json").read_text()
    return json.loads(text)


def passkey_scores(trials: list[dict[str, Any]]) -> dict[str, dict[int, float]]:
    """Share of needles found, ``recipe → {length: share}``, from a grid's trials.

    Each trial is a dict with at least ``"recipe"``, ``"n_tokens"`` and ``"found"`` (as
    :meth:`PasskeyResult.as_dict` writes them); an empty list gives an empty dict.
    """
    if not isinstance(trials, list):
        raise TypeError(f"trials must be a list of dicts (a grid's 'trials'), got {type(trials).__name__}.")
    for trial in trials:
        if not isinstance(trial, dict) or not {"recipe", "n_tokens", "found"} <= set(trial):
            raise ValueError(
                "each trial must be a dict with 'recipe', 'n_tokens' and 'found' (as PasskeyResult.as_dict() "
                f"writes it), got {trial!r}."
            )
    found: dict[str, dict[int, list[bool]]] = {}
    for trial in trials:
        found.setdefault(trial["recipe"], {}).setdefault(trial["n_tokens"], []).append(bool(trial["found"]))
    return {recipe: {n: sum(v) / len(v) for n, v in sorted(rows.items())} for recipe, rows in found.items()}
