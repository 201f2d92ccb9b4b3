# vmsched: `make run` reproduces the seed evaluations (`vmsched reproduce --all`), `make test` runs every test.
# Both call `make setup`, which is idempotent: it creates .venv, installs the Python tools and
# builds the Rust extension (release) only when something changed.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
# cargo from PATH, else rustup's default location (installed by `setup` if missing).
export PATH := $(HOME)/.cargo/bin:$(PATH)

PY_DEPS := maturin>=1.5,<2 pytest>=7 pandas>=1.5 pyarrow>=12 tqdm>=4.60 matplotlib>=3.6 tomli>=1.1
DEPS_STAMP  := $(VENV)/.deps-stamp
BUILD_STAMP := $(VENV)/.build-stamp
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml $(wildcard Cargo.lock)

.PHONY: help setup rust run quick arena examples test test-rust test-py bench clean

help:
	@echo "make run    - set up, then reproduce every seed evaluation (report in out/reproduce)"
	@echo "make quick  - the shortened reproductions (out/reproduce-quick)"
	@echo "make arena  - every policy on the standard suite, ranked (out/arena)"
	@echo "make examples - the example scenarios under credit, cfs and rr (out/examples)"
	@echo "make test   - set up, then cargo test (core) and pytest (tests/)"
	@echo "make setup  - create .venv and build the vmsched extension (idempotent)"
	@echo "make bench  - simulator speed (vmsched bench)"

setup: rust $(BUILD_STAMP)

rust:
	@if ! cargo --version >/dev/null 2>&1; then \
	  echo "cargo not found: installing the Rust toolchain with rustup"; \
	  if command -v rustup >/dev/null 2>&1; then \
	    rustup toolchain install stable --profile minimal && rustup default stable; \
	  else \
	    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal; \
	  fi; \
	fi
	@cargo --version >/dev/null

$(VPY):
	@rm -rf $(VENV)
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 -m venv failed (python3-venv missing?); trying virtualenv"; rm -rf $(VENV); \
	  $(PYTHON) -m pip install --user --quiet virtualenv && $(PYTHON) -m virtualenv $(VENV); }
	@$(VPY) -m pip install --quiet --upgrade pip

$(DEPS_STAMP): $(VPY) pyproject.toml
	$(VPY) -m pip install --quiet $(foreach d,$(PY_DEPS),'$(d)')
	@touch $@

$(BUILD_STAMP): $(DEPS_STAMP) $(RUST_SRC) pyproject.toml
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
	  $(VENV)/bin/maturin develop --release --quiet
	@touch $@

run: setup
	$(VENV)/bin/vmsched reproduce --all --out out/reproduce

quick: setup
	$(VENV)/bin/vmsched reproduce --all --quick --out out/reproduce-quick

arena: setup
	$(VENV)/bin/vmsched arena --out out/arena

examples: setup
	$(VENV)/bin/vmsched examples --out out/examples

test: setup test-rust test-py

# At release speed, with the debug build's assertions and overflow checks on (session 18: two
# bugs, an unsigned underflow and a failed debug assertion, had passed release-only tests).
test-rust: rust
	RUSTFLAGS="$(RUSTFLAGS) -C debug-assertions=on -C overflow-checks=on" cargo test --workspace --release --exclude vmsched-py

test-py: setup
	$(VPY) -m pytest -q tests

bench: setup
	$(VENV)/bin/vmsched bench

clean:
	rm -rf $(VENV) out python/vmsched/_core*.so
	cargo clean
