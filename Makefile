# Two commands from a fresh clone. They need Python 3.11, npm (for MathJax) and make on the PATH;
# an interpreter not called python3.11: `make test PYTHON=/path/to/python3.11`. The first run
# downloads the pinned packages (.venv: about 1.2 GB), MathJax (10 MB) and, unless BLC_DATA_DIR
# names a folder holding X.txt and y.txt, the lab data (38 kB, into the cache).
#   make book   builds the HTML book from the committed, executed chapters -> _build/html/index.html
#   make pdf    the whole book as one PDF (one-page HTML printed by headless Chromium) -> _build/pdf/book.pdf
#   make pdf-course  the course alone (no reference part) as one PDF -> _build/pdf/course.pdf
#   make test   runs every test (lib unit tests, README example, book build, the book in headless
#               Chromium, every chapter's downloaded notebook run by nbval in a fresh environment)
# Both install MathJax and axe-core (pinned, sha256-checked, from the npm registry) into the
# git-ignored _vendor/, so the book renders its math offline and the browser test checks accessibility.
# For authors:
#   make execute  re-executes every chapter in place (then commit the outputs)
#   make lock     re-pins requirements.lock from the venv and regenerates environment.yml
#   make bench    runs the benchmarks

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CHAPTERS := $(wildcard chapters/*.ipynb)
MATHJAX  := _vendor/mathjax/.installed

# One BLAS thread per process: the chapters' linear algebra is small, and several threads on a
# shared 2-core machine oversubscribe it (a 751x751 Cholesky goes from 0.01 s to seconds). The
# grid engine gets its parallelism from joblib processes instead.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: book pdf pdf-course test execute lock bench clean check-data mathjax

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required (set PYTHON=...)"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e . || $(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(MATHJAX): scripts/install_mathjax.py
	$(PYTHON) scripts/install_mathjax.py
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

clean:
	rm -rf _build
