PY ?= python3
# Jupyter refuses to run as root unless told to (containers, CI machines).
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# Only lint the folders that exist (benchmarks/ may not yet).
LINT_PATHS := $(wildcard loom loom_jupyter tests benchmarks tools examples)

.PHONY: venv install test lint bench lab labextension docs notebooks clean

venv: $(VPY)

$(VPY):
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install --upgrade pip

install: $(STAMP)

# The wheel copies the prebuilt extension bundle into the venv: reinstall when it changes.
LABEXT_BUNDLE := $(wildcard loom_jupyter/labextension/package.json loom_jupyter/labextension/static/*)

$(STAMP): pyproject.toml $(LABEXT_BUNDLE) | $(VPY)
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

# Re-execute the notebooks in place (outputs are stored and compared by nbval).
notebooks: install
	$(VPY) tools/run_notebooks.py

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

# Opens the repository root: notebooks/ and the example kernels (examples/, tests/) side by side.
lab: install
	$(VENV)/bin/jupyter lab $(LAB_FLAGS) --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks

# Rebuild the JupyterLab/Notebook extension (needs Node.js and npm; packages from the npm
# registry). Regenerates the word list from the op declarations and the output stylesheet,
# compiles, bundles against this venv's JupyterLab and stamps the bundle with its inputs' hash
# (tests/test_jupyter_labextension.py fails while the stamp and the inputs disagree).
labextension: install
	$(VPY) labextension/generate.py write
	cd labextension && npm install --no-audit --no-fund && npx tsc
	cd labextension && node node_modules/@jupyterlab/builder/lib/build-labextension.js \
		--core-path "$$($(abspath $(VPY)) -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))')" .
	$(VPY) labextension/generate.py stamp
	$(VENV)/bin/pip install --no-deps -e . -q
	touch $(STAMP)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -not -path './.git/*' -prune -exec rm -rf {} +
