# dau-scheduler: every target sets up .venv in the checkout when it is absent.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo test test-full corpus fuzz lint bench gpu-check gpu-kit gpu-rehearse gpu-translator clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## generate TPC-H SF 0.1 (cached) and split all 22 queries against DuckDB
	$(BIN)/dau demo

test: $(STAMP)  ## run the test suite (no GPU needed; gpu tests skip)
	$(BIN)/pytest -n 3 --dist worksteal -q  # three workers on two cores: one runs while another waits on a cluster; idle ones take queued tests from busy ones

test-full: $(STAMP)  ## the suite with every cell of its larger matrices (make test runs a covering sample)
	DAU_FULL_SUITE=1 $(BIN)/pytest -n 3 --dist worksteal -q

corpus: $(STAMP)  ## every tests/slt file on each device and over Arrow copies (the suite runs a sample)
	$(BIN)/python -W ignore::DeprecationWarning -m dau_scheduler.slt tests/slt/*.test --device polars --arrow
	$(BIN)/python -W ignore::DeprecationWarning -m dau_scheduler.slt tests/slt/*.test --device duckdb
	$(BIN)/python -W ignore::DeprecationWarning -m dau_scheduler.slt tests/slt/*.test --device polars --keep-session

fuzz: $(STAMP)  ## the property tests with new random draws (make test draws the same ones every run)
	DAU_HYPOTHESIS_PROFILE=explore $(BIN)/pytest -n 2 -q -m property

lint: $(STAMP)  ## ruff, and mypy --strict on src/
	$(BIN)/ruff check src tests bench-queries gpu probes
	$(BIN)/mypy

bench: $(STAMP)  ## TPC-H SF1 benchmarks: split overhead, profile prediction, posture regret
	$(BIN)/python bench-queries/split_overhead.py --scale 1 --runs 5
	$(BIN)/python bench-queries/profiles.py prediction --runs 7
	$(BIN)/python bench-queries/profiles.py regret --runs 3

gpu-check: $(STAMP)  ## gpu tests, link rates, TPC-H SF1 overhead and regret on cudf (needs a GPU and '.[gpu]')
	$(BIN)/pytest -m gpu -q
	$(BIN)/dau link
	$(BIN)/python bench-queries/split_overhead.py --scale 1 --devices cudf
	$(BIN)/python bench-queries/profiles.py regret --runs 3 --device cudf

gpu-kit: $(STAMP)  ## CUDA 13 wheels for the lent H200: download, closure check, cut into .gpu/partN
	$(BIN)/python gpu/kit.py build

gpu-rehearse: gpu-kit  ## install the kit here as the device would and run gpu/check.py --dry-run
	$(BIN)/python gpu/kit.py rehearse

gpu-translator: $(STAMP)  ## cudf-polars' translator on this CPU, for --device gpu-limited (docs/gpu.md)
	$(BIN)/python gpu/translator.py build

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
