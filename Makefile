# Two commands on a fresh machine: `make demo` and `make test`. Each sets up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint render check golden promtool clean

$(STAMP): pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,probe]'
	touch $(STAMP)

setup: $(STAMP)

# promtool checks and unit-tests the alert rules; Debian's `prometheus` package ships it.
promtool:
	@command -v promtool >/dev/null 2>&1 || { \
	  echo "installing promtool (Debian package prometheus)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq prometheus >/dev/null; }

demo: setup
	$(BIN)/trainstack render --all
	$(BIN)/trainstack check --all

test: setup promtool
	$(BIN)/python -m pytest -q

# Re-render the committed golden output (deploy/<stack>/) after an intended change; commit it on
# its own ("golden: <why>") so reviewers see the rendered diff apart from the code.
golden: setup
	$(BIN)/trainstack render --all

# Style and pyflakes checks (ruff, settings in pyproject.toml); `ruff check --fix` repairs most.
lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
