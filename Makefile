PY ?= python3
# Jupyter refuses to run as root unless told to (containers, CI machines).
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# Only lint the folders that exist (benchmarks/ may not yet).
LINT_PATHS := $(wildcard loom loom_jupyter tests benchmarks tools examples)

.PHONY: venv install test lint bench lab docs clean

venv: $(VPY)

$(VPY):
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install --upgrade pip

install: $(STAMP)

$(STAMP): pyproject.toml | $(VPY)
	$(VENV)/bin/pip install -e '.[test,jupyter]'
	touch $@

test: install
	$(VPY) -m pytest tests --nbval notebooks/

lint: install
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)

# Regenerate the op reference (docs/ops/) and the builder stubs from the declarations.
docs: install
	$(VPY) -c 'import sys, loom.opdocs as d; sys.exit(d.main(["--write"]))'

# The bench extra (xdsl, used for comparisons) is installed only for `make bench`.
$(BENCH_STAMP): $(STAMP)
	$(VENV)/bin/pip install -e '.[test,jupyter,bench]'
	touch $@

bench: $(BENCH_STAMP)
	@set -e; for f in benchmarks/*.py; do \
		[ -e "$$f" ] || continue; \
		echo "== $$f"; \
		$(VPY) "$$f"; \
	done

lab: install
	mkdir -p notebooks
	$(VENV)/bin/jupyter lab $(LAB_FLAGS) notebooks/

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -not -path './.git/*' -prune -exec rm -rf {} +
