# Rego policy library: unit tests with coverage, formatting, strict check, conftest verify,
# and the lint benchmark (podfit's engines vs conftest on a generated corpus).
.PHONY: rego-test bench-lint

REGO_COVERAGE_MIN ?= 99

rego-test: tools  ## opa fmt/check --strict, opa test with coverage >= 99%, conftest verify
	@test -z "$$($(TOOLS)/opa fmt --list policies)" || { echo "opa fmt: not formatted:"; $(TOOLS)/opa fmt --list policies; exit 1; }
	$(TOOLS)/opa check --strict policies
	$(TOOLS)/opa test policies
	@$(TOOLS)/opa test policies --coverage --format json | python3 -c 'import json, sys; c = json.load(sys.stdin)["coverage"]; print(f"rego coverage {c:.1f}%"); sys.exit(0 if c >= $(REGO_COVERAGE_MIN) else 1)'
	$(TOOLS)/conftest verify --policy policies/

bench-lint: venv tools  ## objects/s for podfit (each engine) and conftest on a generated 10,000-object corpus
	$(PY) bench/lint.py --objects 10000

TEST_TARGETS += rego-test

# The embedded engine's compiled policies (analyzer/podfit/data/policies.wasm, committed so that
# `pip install` needs no Go); tests/test_wasm.py rebuilds it and fails when it is stale.
.PHONY: wasm
wasm: venv tools  ## recompile the policies to WebAssembly for the embedded engine (after editing policies/)
	$(PY) -c 'from pathlib import Path; from podfit.engines.wasm import build_bundle; from podfit.paths import policies_dir; print(build_bundle("$(TOOLS)/opa", policies_dir(), Path("analyzer/podfit/data")))'
