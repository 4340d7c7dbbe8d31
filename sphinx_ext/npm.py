"""Fetching a package from the npm registry once, for the JavaScript the site serves itself.

``npm pack NAME@VERSION`` downloads the package's tarball without installing anything; the callers
(:mod:`sphinx_ext.vendor_js`, :mod:`sphinx_ext.mathjax`) take the few files they serve from it into a
cache folder under ``~/.cache/apple-in-transformerland/``. When npm is missing or the registry cannot be
reached, the error says what was being fetched, from where, and how to supply it by hand.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

#: How to install npm when it is missing (the same words as tools/prerequisites.py).
INSTALL_NPM = "Debian/Ubuntu: sudo apt-get install npm; macOS: brew install node"


def registry() -> str:
    """The npm registry that ``npm pack`` asks (npm's configuration), for the messages."""
    done = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True)
    return done.stdout.strip() or "the npm registry"


def pack(name: str, version: str, scratch: Path, into: Path) -> tarfile.TarFile:
    """Download ``name@version``'s tarball into ``scratch`` and open it; ``into`` is named in the errors.

    Raises RuntimeError naming the package, the registry and the folder where the files can be put by hand.
    """
    what = f"{name}@{version}"
    if shutil.which("npm") is None:
        raise RuntimeError(f"npm is needed once, to fetch {what} into {into}; install it ({INSTALL_NPM}).")
    command = ["npm", "pack", "--loglevel=error", "--fetch-retries=1", what]  # an unreachable registry: ~20 s
    done = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
    if done.returncode:
        said = "\n".join((done.stderr or done.stdout).strip().splitlines()[:4]) or "(npm printed nothing)"
        raise RuntimeError(
            f"could not fetch {what} from {registry()} with `npm pack {what}`: {said}\n"
            f"Offline? Run `make vendor` once with the network (or set npm's registry to a mirror), or unpack "
            f"the package's files into {into} by hand."
        )
    return tarfile.open(scratch / f"{name}-{version}.tgz")
