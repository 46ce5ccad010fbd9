# Everything runs in a project-local virtual environment, created on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.npyio-installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

## make demo: generate the sample dataset (once) and stream it through npyio
demo: $(STAMP)
	$(PY) -m npyio demo

## make test: the whole suite
test: $(STAMP)
	$(PY) -m pytest

## make lint: ruff and mypy
lint: $(STAMP)
	$(VENV)/bin/ruff check npyio tests bench
	$(VENV)/bin/mypy

## make bench: measure the pipelines for real (see bench/README.md)
bench: $(STAMP)
	$(PY) -m npyio bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache
