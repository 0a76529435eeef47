# The two set-up commands: `make demo` and `make test`. Both install what is missing first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
KG     := $(VENV)/bin/kg
STAMP  := $(VENV)/.installed

.PHONY: demo test test-pure typecheck install neo4j stop bench-ingest clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version' 
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)
	$(KG) neo4j install

neo4j: install
	$(KG) neo4j start

demo: neo4j
	$(KG) demo
	$(PY) examples/serve_demo.py

test: neo4j
	$(PY) -m pytest

test-pure: $(STAMP)  # the tests that need no database (docs/architecture.md); no server is started
	$(PY) -m pytest -m "not neo4j"

typecheck: $(STAMP)
	$(PY) -m mypy

stop:
	$(KG) neo4j stop

bench-ingest: neo4j
	$(PY) -m bench.ingest --turns 50000 --json

clean:
	rm -rf $(VENV) build *.egg-info
