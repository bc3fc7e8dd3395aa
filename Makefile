# Two commands on a fresh machine: `make lab` and `make test`; `make check` while working.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.nbext-installed

.PHONY: lab test check lint bench emulator clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,lab]'
	touch $(STAMP)

# Colab's widget stack beside ours: a second venv with nbext (editable, so it runs this
# checkout) and the versions Colab ships, for tests/compat/, which runs a guide in its
# kernel. Built once and kept; rebuilt when pyproject.toml or this file changes.
IPYW7_VENV := .venv-ipyw7
IPYW7_PINS := ipywidgets==7.7.1 ipykernel==6.17.1

$(IPYW7_VENV)/.nbext-installed: pyproject.toml Makefile
	rm -rf $(IPYW7_VENV)
	$(PYTHON) -m venv $(IPYW7_VENV)
	$(IPYW7_VENV)/bin/python -m pip install -q --upgrade pip
	$(IPYW7_VENV)/bin/python -m pip install -q -e . $(IPYW7_PINS)
	touch $@

# JupyterLab refuses to start as root without --allow-root; root is the usual user in
# Docker, cloud VMs and CI shells, so the flag is added for root only. LAB_ARGS passes
# more flags, e.g. make lab LAB_ARGS="--no-browser --port 8899".
ALLOW_ROOT := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ALLOW_ROOT) $(LAB_ARGS)

# pytest's exit code 5 (no tests collected) is a failure here, as any non-zero code.
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The quick tier, while working: tests/ but the browser (e2e), the Binder build and every
# test marked slow, and not the guides under nbval (notebooks/). Two processes (xdist):
# many tests wait on real time (a server's answer, a rate-limit window) rather than on
# the CPU, so two share two cores well. PYTEST_ARGS adds options, e.g. -x or a path.
check: $(STAMP)
	$(BIN)/python -m pytest tests -m "not slow and not e2e" -n 2 $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check nbext tests benchmarks
	$(BIN)/ruff format --check nbext tests benchmarks
	$(BIN)/mypy
	$(BIN)/vulture

# The emulator against the service SDK's test server under wrk (apt-get install -y wrk);
# e.g. make bench BENCH_ARGS="--rounds 5".
bench: $(STAMP)
	$(BIN)/python benchmarks/emulator_throughput.py $(BENCH_ARGS)

# EMULATOR_ARGS passes flags, e.g. make emulator EMULATOR_ARGS="--port 8001 --no-rate-limit".
emulator: $(STAMP)
	$(BIN)/python -m nbext.emulator $(EMULATOR_ARGS)

clean:
	rm -rf $(VENV) $(IPYW7_VENV) build dist .pytest_cache .mypy_cache .ruff_cache
