# Two commands set up everything on a fresh machine:
#   make run   - create .venv, install, build the dataset offline from the bundled snapshots
#   make test  - the same set-up, then the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: help install bytecode run test test-e2e test-all lint format bench ui clean browser postgres preview-png

help:
	@echo "make run    set up .venv and build the dataset (warehouse/, exports/)"
	@echo "make test   set up .venv and run the fast tests (about two minutes)"
	@echo "make test-e2e  the end-to-end tests (whole builds, servers, browser; CI runs both)"
	@echo "make lint   ruff check and format check"
	@echo "make bench  run the performance benchmark (python -m benchmarks; docs/performance.md)"
	@echo "make bytecode  compile the package's bytecode (run and bench do it first)"
	@echo "make ui     open the Dagster UI on this project's instance"
	@echo "make preview-png  render the preview page again for the README's and docs/preview.md's images"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

# The package's bytecode, written once (quick when it is current): where PYTHONDONTWRITEBYTECODE
# is set, Python compiles every module of ours again at each start, 0.4 s of every build.
bytecode: install
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m compileall -q pipeline

run: install bytecode
	$(BIN)/speedbook build

# The preview page test drives Debian's chromium headless; install it when missing.
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null; then SUDO=sudo; \
	  else echo "chromium is missing and installing it needs root: apt-get install chromium" >&2; \
	    exit 1; fi; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }

# The tests start a private PostgreSQL cluster (tests/servers.py) from Debian's packages; install
# them when missing. The cluster the package may create is never used: the tests run their own.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null; then SUDO=sudo; \
	  else echo "postgresql is missing and installing it needs root: apt-get install postgresql" >&2; \
	    exit 1; fi; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql; }

# The test files are spread over the cores (pytest-xdist); one file stays on one worker, so its
# module fixtures are built once. TEST_WORKERS=0 runs them in this process.
# `make test` is the fast tier (parsers, rules, SQL, commands on small inputs); `make test-e2e` the
# end-to-end tier (whole builds, crashes, the wheel, the browser, the servers, the bench smoke);
# CI (.ci/run) runs lint and both.
TEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile
test: install postgres
	$(PYTEST) -m "not e2e"

test-e2e: install browser postgres
	$(PYTEST) -m e2e

test-all: install browser postgres
	$(PYTEST)

lint: install
	$(BIN)/ruff check pipeline tests benchmarks
	$(BIN)/ruff format --check pipeline tests benchmarks

format: install
	$(BIN)/ruff format pipeline tests benchmarks
	$(BIN)/ruff check --fix pipeline tests benchmarks

# The README's image of the preview page: the preview test's fresh screenshot, copied over it.
preview-png: install browser
	$(BIN)/python -m pytest tests/test_preview.py -k "test_screenshot or test_model_screenshot" -q
	cp tests/artifacts/preview.png tests/fixtures/preview.png
	cp tests/artifacts/preview-model.png docs/preview.png

# the poll scenario at the issue's size (docs/performance.md gives the others); not in the wheel
bench: install bytecode
	nice $(BIN)/python -m benchmarks poll --release-cadence daily --json bench-results.json

ui: install
	$(BIN)/speedbook ui

# everything a build made (the lake, Dagster's instance, the build's state) and the venv; the
# snapshots in warehouse/raw stay
clean:
	rm -rf $(VENV) warehouse/catalog.* warehouse/lake warehouse/dagster warehouse/state \
	  warehouse/build.lock warehouse/build_report.json warehouse/raw/.snapshot-index.json
