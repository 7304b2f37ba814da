# Packing analyzer: benchmark and tests.
.PHONY: bench-pack test-packing

bench-pack: venv  ## packing benchmark: nodes vs lower bound vs first-fit-decreasing by sum, and time
	$(PY) bench/pack.py

test-packing: venv-test  ## packing engine, `podfit pack` and the PF303/PF601-PF604 fixtures
	$(PY) -m pytest -q tests/test_packing.py tests/test_packing_cli.py tests/test_packing_bounds.py
