# Two commands on a fresh machine: `make demo` and `make test`. Each sets up .venv first:
# demo installs the package alone (rendering and checking), test adds the [dev,probe] extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE := $(VENV)/.installed
FULL := $(VENV)/.installed-dev

.PHONY: setup demo test lint render check golden promtool clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(BASE): pyproject.toml requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

$(FULL): pyproject.toml requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,probe]'
	touch $(BASE) $(FULL)

setup: $(BASE)

# promtool checks and unit-tests the alert rules. Without apt-get or root the script says why it
# skipped, and the promtool tests skip too.
promtool:
	@sh .ci/install-promtool.sh

# Upstream's admission rules for `upstream-admission`: an offline copy beside the checkout when there
# is one (as in CI), else the cache `trainstack admission fetch` fills (the check says which).
# Without either, a production stack's check fails (`upstream-admission` is mandatory there).
SHARED := $(wildcard ../shared/admission)
ADMISSION := $(if $(SHARED),--admission-dir ../shared)
demo: setup
	$(BIN)/trainstack render --all
ifeq ($(SHARED),)
	@echo "make demo: no ../shared beside the checkout; fetching upstream's admission rules into the cache"
	$(BIN)/trainstack admission fetch
else
	@echo "make demo: upstream's admission rules and CRDs from ../shared (--admission-dir ../shared)"
endif
	-$(BIN)/trainstack admission status $(ADMISSION)
	$(BIN)/trainstack check --all $(ADMISSION)
	@echo
	@echo "Next: create your own stack: $(BIN)/trainstack init <name> --nodes 64 --gpus-per-node 8"
	@echo "(walk-through in docs/new-stack.md), then: $(BIN)/trainstack render <name> && $(BIN)/trainstack check <name>$(if $(ADMISSION), $(ADMISSION))"
	@echo "Docs: README.md (commands, GitOps with Argo CD or Flux, Pulumi), modules/<capability>/README.md"
	@echo "(every option), docs/architecture.md. Tests and the probe: make test (installs the dev and probe extras)."

# lint first: a style or pyflakes error fails `make test` (and CI) before pytest starts.
# One pytest-xdist worker per core; whole test modules go to a worker, the slow ones first
# (tests/support/parallel.py). `pytest -n 0` (or plain `pytest`) runs the suite in one process.
test: $(FULL) promtool lint
	$(BIN)/python -m pytest -q -n auto --dist loadfile

# Re-render the committed golden output (deploy/<stack>/) after an intended change; commit it on
# its own ("golden: <why>") so reviewers see the rendered diff apart from the code.
golden: setup
	$(BIN)/trainstack render --all

# Style and pyflakes checks (ruff, settings in pyproject.toml); `ruff check --fix` repairs most.
# ruff comes with the dev extra.
lint: $(FULL)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
