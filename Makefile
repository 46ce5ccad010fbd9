# Everything runs in a project-local virtual environment, created on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Two stamps, so that each install runs once: npyio and its dependencies alone (what `make demo`
# and `make bench` need), then the test and docs extras on top (what `make test`, `lint`, `docs`
# and `fuzz` need; after `make demo`, it installs only those).
STAMP     := $(VENV)/.npyio-installed
DEV_STAMP := $(VENV)/.npyio-dev-installed
# tensorflow-io 0.37.1 (the last release) loads only with TensorFlow 2.16.x: its backend is
# tested in a second venv with that pairing.
TFIO_VENV  := .venv-tfio
TFIO_PY    := $(TFIO_VENV)/bin/python
TFIO_STAMP := $(TFIO_VENV)/.npyio-installed
TFIO_PINS  := "tensorflow-cpu==2.16.2" "tensorflow-io==0.37.1" "numpy<2"
# The test tools there, installed in the same pip run as the pins so that they resolve against
# them (numpy<2); matplotlib for the test of `npyio bench --plot` and scipy for the shuffle's
# chi-square test, setuptools >= 77 for the offline install test (tests/test_install.py),
# which run there too.
TFIO_TEST_TOOLS := "pytest>=8" "pytest-xdist>=3" "pytest-benchmark>=4" "hypothesis>=6.100" \
	matplotlib scipy \
	"gcp-storage-emulator>=2026.7.18,<2027" "setuptools>=77"

.PHONY: demo test lint docs bench fuzz clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	@touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,docs]'
	@touch $(DEV_STAMP)

$(TFIO_STAMP): pyproject.toml
	@test -x $(TFIO_PY) || $(PYTHON) -m venv $(TFIO_VENV)
	$(TFIO_PY) -m pip install --quiet --upgrade pip
	$(TFIO_PY) -m pip install --quiet $(TFIO_PINS) $(TFIO_TEST_TOOLS)
	$(TFIO_PY) -m pip install --quiet --no-deps -e .
	@touch $(TFIO_STAMP)

## make demo: generate the sample dataset (once) and stream it through npyio
demo: $(STAMP)
	$(PY) -m npyio demo

# What differs on the oldest supported TensorFlow (2.16), so what its leg runs: npyio/_tf.py's
# raw ops and TensorFlow's error texts (test_tf, test_errors, the readers and the graph parser
# with its header styles, the native reader's build against 2.16's headers and its op
# (tests/native, tests/read), the pipeline's errors and maps), tensorflow-io (npyio bench's
# tfio peer: it fails, not skips, if its ops do not load), the install's
# pins, every option on every source kind once (test_capabilities), Keras 3 there, and a seed's
# shuffle orders (the same numbers on both versions). The rest is TensorFlow-version-free
# plumbing, run on 2.21 alone.
TF216_TESTS := tests/test_tf.py tests/test_errors.py tests/test_install.py tests/read tests/graph tests/native \
	tests/format/test_header_styles.py tests/sources/test_dataset_errors.py tests/pipeline/test_map.py \
	tests/pipeline/test_capabilities.py tests/sources/test_directory_keras.py \
	"tests/pipeline/test_shuffle.py::test_a_seed_gives_the_same_orders_on_every_tensorflow" \
	"tests/sources/test_dataset_crop.py::test_windows_of_per_case_shapes_are_the_kernels_in_the_plain_form" \
	"tests/cli/test_bench.py::test_an_installed_peer_reads_every_sample_in_its_worker[tfio]"

# Each leg runs on TEST_WORKERS processes (pytest-xdist), a test module whole in one of them, so
# that a module's fixtures (servers, clusters, data) stay in one process. In one process the suite
# kept one of CI's two cores busy on average (37 min of CPU in 38 of wall): much of it waits on
# subprocesses, servers and sleeps.
TEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile

## make test: the lint, the strict docs build, the whole suite on the current TensorFlow, then
## what differs on the oldest supported one (TF 2.16, TF216_TESTS), where tensorflow-io's peer
## runs too (and fails, not skips, if its ops do not load)
test: lint docs $(DEV_STAMP) $(TFIO_STAMP)
	$(PY) -m pytest $(PYTEST_PARALLEL)
	NPYIO_TFIO=1 $(TFIO_PY) -m pytest $(PYTEST_PARALLEL) $(TF216_TESTS)

## make lint: ruff (check and format) and mypy
lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check npyio tests bench docs/gen
	$(VENV)/bin/ruff format --check npyio tests bench docs/gen
	$(VENV)/bin/mypy

## make docs: redraw the pipeline diagram and the benchmark chart and copy the recorded
## benchmark tables (bench/results/) into the pages that show them (docs/gen/), then build the
## guide and API reference into site/, strictly: a broken link or reference, or a docstring that
## does not parse, fails it
docs: $(DEV_STAMP)
	$(PY) docs/gen/diagram.py
	$(PY) docs/gen/chart.py
	$(PY) docs/gen/results.py
	$(VENV)/bin/mkdocs build --strict --quiet

## make bench: measure the pipelines for real (see bench/README.md) and record the run as rows
## of bench/results/npyio-bench.md (BENCH_LOAD says what else ran on the machine)
BENCH_LOAD ?= not recorded
bench: $(STAMP)
	@mkdir -p .cache
	$(PY) -m npyio bench --json > .cache/bench-run.json
	$(PY) bench/results.py npyio-bench .cache/bench-run.json --load "$(BENCH_LOAD)" \
		--command "\`npyio bench\`"

## make fuzz: fuzz the parsers against np.load for FUZZ_SECONDS (default 300), randomly;
## failures are saved under tests/fuzz/regressions/ (FUZZERS=damaged,batch picks targets);
## then the native reader's C++ core, built with ASan and UBSan, for NATIVE_FUZZ_SECONDS (a
## fifth of FUZZ_SECONDS by default), differential against the graph path on a sample; then
## HEADER_FUZZ_COUNT (default 1,000,000) headers through the core's header parser, differential
## against the grammar (all) and the graph parser (a sample)
FUZZ_SECONDS ?= 300
NATIVE_FUZZ_SECONDS ?= $(shell expr $(FUZZ_SECONDS) / 5)
HEADER_FUZZ_COUNT ?= 1000000
FUZZERS ?=
fuzz: $(DEV_STAMP)
	$(PY) -m tests.fuzz --seconds $(FUZZ_SECONDS) $(if $(FUZZERS),--fuzzers $(FUZZERS))
	$(PY) -m tests.fuzz.native --seconds $(NATIVE_FUZZ_SECONDS)
	$(PY) -m tests.fuzz.headers --count $(HEADER_FUZZ_COUNT)

clean:
	rm -rf $(VENV) $(TFIO_VENV) site .pytest_cache .hypothesis .mypy_cache .ruff_cache
