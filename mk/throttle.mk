# CFS throttling simulator: benchmark, tests, lint; the kernel calibration lab (lab/calibrate/, not shipped).
.PHONY: bench-throttle test-throttle calibrate calibrate-throttle lint-throttle

bench-throttle: venv  ## throttling benchmark: 256 CPUs, 200 threads, 10 simulated s (target < 0.5 s)
	$(PY) bench/throttle.py

test-throttle: venv-test  ## simulator, `podfit throttle`, PF203 fixtures, kernel calibration (needs root for cgroups)
	$(PY) -m pytest -q tests/test_throttle.py tests/test_throttle_golden.py tests/test_throttle_rule.py \
	  lab/calibrate/test_calibrate.py

calibrate: calibrate-throttle  ## kernel vs simulator on 18 configurations, 5 runs each (a benchmark; root: creates and removes a cpu cgroup)

calibrate-throttle: venv  ## run the kernel calibration table (root: creates and removes a cpu cgroup); lab/calibrate/NOTEBOOK.md
	$(PY) lab/calibrate/calibrate.py --repeat 5

lint-throttle: $(VENV)/.installed-lint  ## ruff check and ruff format --check on the throttle package and the calibration lab (ruff pinned in the lint extra)
	$(VENV)/bin/ruff check analyzer/podfit/throttle/ lab/calibrate/
	$(VENV)/bin/ruff format --check analyzer/podfit/throttle/ lab/calibrate/
