# Rego policy library (issue 3): unit tests with coverage, formatting, strict check, conftest verify,
# and the lint benchmark (podfit's engines vs conftest on a generated corpus).
.PHONY: rego-test bench-lint

REGO_COVERAGE_MIN ?= 95

rego-test: tools  ## opa fmt/check --strict, opa test with coverage >= 95%, conftest verify
	@test -z "$$($(TOOLS)/opa fmt --list policies)" || { echo "opa fmt: not formatted:"; $(TOOLS)/opa fmt --list policies; exit 1; }
	$(TOOLS)/opa check --strict policies
	$(TOOLS)/opa test policies
	@$(TOOLS)/opa test policies --coverage --format json | python3 -c 'import json, sys; c = json.load(sys.stdin)["coverage"]; print(f"rego coverage {c:.1f}%"); sys.exit(0 if c >= $(REGO_COVERAGE_MIN) else 1)'
	$(TOOLS)/conftest verify --policy policies/

bench-lint: venv tools  ## objects/s for podfit (each engine) and conftest on a generated 10,000-object corpus
	$(PY) bench/lint.py --objects 10000

TEST_TARGETS += rego-test
