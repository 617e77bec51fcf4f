# kubectl-dra developer entry points. Every target works on a fresh machine:
# it creates .venv and installs the project into it first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?= -n auto

.PHONY: demo test test-lowest lint constraints bench bench-instructions dist install clean

# the demo's own environment: the CLI and nothing else (the test extra would change what
# `validate` does: with kubernetes-validate installed it also checks the other kinds' schemas)
DEMO_VENV  ?= .venv-demo
DEMO_STAMP := $(DEMO_VENV)/.installed

# constraints.txt pins what CI and the container image install: the versions the suite last passed with
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

$(DEMO_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(DEMO_VENV)/bin/python -m pip install --quiet -c constraints.txt -e .
	touch $(DEMO_STAMP)

## make demo: preview, explain and usage on the bundled demo cluster state (the CLI alone installed)
demo: $(DEMO_STAMP)
	@PATH="$(CURDIR)/$(DEMO_VENV)/bin:$$PATH" bash examples/demo.sh

## make test: the whole suite (unit, conformance, CLI, webhook over TLS); the package's bytecode
## is compiled first, as pip does for a normal install, so that the hundreds of CLI processes the
## tests start do not each compile it again (where PYTHONDONTWRITEBYTECODE is set, they would)
test: lint
	$(BIN)/python -m compileall -q kubectl_dra webhook >/dev/null
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## make test-lowest: the suite with every runtime dependency at the lowest version pyproject.toml
## claims (packaging/lowest_constraints.py), in its own venv (.venv-lowest)
test-lowest:
	$(PYTHON) -m venv .venv-lowest
	mkdir -p build && $(PYTHON) packaging/lowest_constraints.py > build/lowest-constraints.txt
	.venv-lowest/bin/python -m pip install --quiet -c build/lowest-constraints.txt -e '.[test]'
	.venv-lowest/bin/python -m compileall -q kubectl_dra webhook >/dev/null
	.venv-lowest/bin/python -m pytest $(PYTEST_ARGS)

## make constraints: pin constraints.txt to what .venv has installed (after changing dependencies
## and seeing make test pass)
constraints: $(STAMP)
	{ sed -n '1,2p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^kubectl-dra'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

## make lint: ruff (rules in pyproject.toml) over the tree and mypy over kubectl_dra/ and webhook/
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

## make bench: benchmarks (the admission one needs wrk: apt-get install wrk); figures go to docs/benchmarks.md by hand
bench: $(STAMP)
	@$(BIN)/python -c "import gunicorn" 2>/dev/null || $(BIN)/python -m pip install --quiet -c constraints.txt -e '.[bench]'
	$(BIN)/python -m benchmarks.run

## make bench-instructions: instruction counts (callgrind) of a repeated preview, a first preview,
## review() and the webhook's answers: the same on a busy or an idle machine (minutes; needs valgrind)
bench-instructions: $(STAMP)
	$(BIN)/python -m benchmarks.instructions

## make dist: the plugin dist/kubectl-dra (a launcher and one zipapp per supported CPython, this
## platform), its krew archive, and the manifest dist/dra.yaml when the project's URLs are known;
## other platforms: packaging/build_plugin.py --platform TAG
dist: $(STAMP)
	$(BIN)/python packaging/build_plugin.py

clean:
	rm -rf $(VENV) $(DEMO_VENV) .venv-lowest build dist *.egg-info .pytest_cache .hypothesis
