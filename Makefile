# The two commands of the README: `make demo` and `make test`.
# Each creates the local virtual environment .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python demo/run_demo.py

lint: $(STAMP)
	$(BIN)/ruff check pytest_plangraph tests bench demo
	$(BIN)/ruff format --check pytest_plangraph tests bench demo
	$(BIN)/mypy --strict pytest_plangraph
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
