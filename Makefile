# The two commands of the README: `make demo` and `make test`.
# Each creates the local virtual environment .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean browser

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

test: lint browser
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

# The HTML report is tested in a real headless Chromium: Debian's chromium package.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	if [ "$$(id -u)" = 0 ]; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else \
		echo "make test: the HTML report tests need a headless Chromium and this user cannot" \
			"install one; run 'apt-get update && apt-get install -y chromium' as root" >&2; \
		exit 1; \
	fi

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
