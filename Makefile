# Two commands from a fresh clone. They need Python 3.11, 3.12 or 3.13, npm (for MathJax) and make;
# the Makefile takes the first it finds (below), or the one named: `make test PYTHON=/path/to/python`.
# The first run downloads the pinned packages (.venv: about 1.2 GB), MathJax (10 MB) and, unless BLC_DATA_DIR
# names a folder holding X.txt and y.txt, the lab data (38 kB, into the cache).
#   make book   builds the HTML book from the committed, executed chapters -> _build/html/index.html
#   make pdf    the whole book as one PDF (one-page HTML printed by headless Chromium) -> _build/pdf/book.pdf
#   make pdf-course  the course alone (no reference part) as one PDF -> _build/pdf/course.pdf
#   make test   runs every test (lib unit tests, README example, book build, the book in headless
#               Chromium, every chapter's downloaded notebook run by nbval in a fresh environment)
# Both install MathJax and axe-core (pinned, sha256-checked, from the npm registry) into the
# git-ignored _vendor/, so the book renders its math offline and the browser test checks accessibility.
# For authors:
#   make check    lib's unit, property and reference-value tests and the chapters' static checks
#                 (about a minute: no book build, browser or chapter run)
#   make execute  re-executes every chapter in place (then commit the outputs)
#   make lock     re-pins requirements.lock from the venv and regenerates environment.yml
#   make bench    runs the benchmarks

VENV   := .venv
BIN    := $(VENV)/bin

# The interpreter: PYTHON= if given; else the Python of an existing .venv (it keeps the one it was
# made with; `rm -rf .venv` to change); else the first of python3.13, python3.12, python3.11 that
# runs, on the PATH or installed by pyenv ($(pyenv root)/versions/3.13.*/bin/python3.13 ...: on a
# machine where only pyenv's shims are on the PATH, a shim of a version not selected fails to run,
# so pyenv's own installs are searched too). Supported: what pyproject.toml's requires-python admits.
PY_SUPPORTED := import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))
PYENV_VERSIONS := $(shell (pyenv root 2>/dev/null || echo "$${PYENV_ROOT:-$$HOME/.pyenv}") | sed 's|$$|/versions|')
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in $(BIN)/python \
    $(foreach v,3.13 3.12 3.11,python$(v) $$(ls -d $(PYENV_VERSIONS)/$(v).*/bin/python$(v) 2>/dev/null | sort -rV)); do \
  "$$p" -c '$(PY_SUPPORTED)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
endif
PYVER := $(shell "$(PYTHON)" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# One stamp per Python version: `make test PYTHON=...` with another version remakes .venv.
STAMP  := $(VENV)/.installed-$(PYVER)
CHAPTERS := $(wildcard chapters/*.ipynb)
MATHJAX  := _vendor/mathjax/.installed

# One BLAS thread per process: the chapters' linear algebra is small, and several threads on a
# shared 2-core machine oversubscribe it (a 751x751 Cholesky goes from 0.01 s to seconds). The
# grid engine gets its parallelism from joblib processes instead.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: book pdf pdf-course test check execute lock bench clean check-data mathjax

$(STAMP): requirements.lock pyproject.toml
	@test -n "$(PYVER)" && "$(PYTHON)" -c '$(PY_SUPPORTED)' || { echo "No Python 3.11-3.13 found (tried python3.13, python3.12, python3.11 and pyenv's $(PYENV_VERSIONS)); name one: make $(MAKECMDGOALS) PYTHON=/path/to/python3.13" >&2; exit 1; }
	@echo "Python $(PYVER): $(PYTHON)"
	@if [ -x $(BIN)/python ] && ! $(BIN)/python -c 'import sys; sys.exit("%d.%d" % sys.version_info[:2] != "$(PYVER)")' 2>/dev/null; then \
	  echo "$(VENV) holds another Python: made anew with $(PYVER)"; rm -rf $(VENV); fi
	test -x $(BIN)/python || "$(PYTHON)" -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	@# setuptools 77 or later builds lib (editable here, and the wheel the book serves); a venv of
	@# Python 3.12 or later has none of its own, one of 3.11 an older one
	$(BIN)/python -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 77)' 2>/dev/null \
	  || $(BIN)/python -m pip install --quiet "setuptools>=77"
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

$(MATHJAX): scripts/install_mathjax.py | $(STAMP)
	$(BIN)/python scripts/install_mathjax.py
	@touch $@

mathjax: $(MATHJAX)

book: $(STAMP) $(MATHJAX)
	$(BIN)/jupyter-book build -W -n --keep-going .
	@test -f _build/html/index.html && echo "book written to _build/html/index.html"

# The whole book on one HTML page, typeset by MathJax and printed to A4 by Chromium (as the browser
# test drives it; Debian's chromium and chromium-driver), solutions and errata opened, with a title
# page, a contents page, page numbers and bookmarks. pdf-course: the start page, the core and the
# optional chapters and the bibliography, without the reference part.
pdf: $(STAMP) $(MATHJAX)
	$(BIN)/jupyter-book build -W -n --keep-going --builder singlehtml .
	$(BIN)/python scripts/print_pdf.py _build/singlehtml _build/pdf/book.pdf
	@echo "book written to _build/pdf/book.pdf"

pdf-course: $(STAMP) $(MATHJAX)
	$(BIN)/jupyter-book build -W -n --keep-going --builder singlehtml .
	$(BIN)/python scripts/print_pdf.py --course _build/singlehtml _build/pdf/course.pdf
	@echo "course written to _build/pdf/course.pdf"

check-data: $(STAMP)
	@$(BIN)/python -m lib

test: $(STAMP) $(MATHJAX) check-data
	$(BIN)/python -m pytest

# For authors, after changing a function or a chapter: lib's unit, property and reference-value
# tests and the chapters' static checks (no book build, no browser, no chapter run): about a minute.
check: $(STAMP) check-data
	$(BIN)/python -m pytest -m "not book"

execute: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.timeout=900 --ExecutePreprocessor.kernel_name=python3 $(CHAPTERS)

lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -vi '^blc-book' > requirements.lock
	$(BIN)/python scripts/write_environment.py

bench: $(STAMP)
	$(BIN)/python benchmarks/grid.py
	$(BIN)/python benchmarks/grid.py --simulate-workers 2 16 64
	$(BIN)/python benchmarks/evidence_search.py
	$(BIN)/python benchmarks/approx.py

clean:
	rm -rf _build
