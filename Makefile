# Every target sets up what it needs: a fresh clone with python3 and make is enough.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test lint typecheck pytest demo bench bench-long clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts fixtures
	$(BIN)/ruff format --check src tests benchmarks scripts fixtures

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/bootstrap_kappa.py
	$(BIN)/python benchmarks/bench_long_sessions.py

bench-long: $(STAMP)
	$(BIN)/python benchmarks/bench_long_sessions.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
