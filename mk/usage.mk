# The real cluster (issue 17): platform import, measured usage and its rules, the real-Prometheus test.
.PHONY: test-usage

test-usage: venv-test  ## platform import, --usage and PF107-PF110/PF209, against a real Prometheus (builds prometheus, promtool)
	scripts/install-tools.sh prometheus promtool
	$(PY) -m pytest -q tests/test_platform_import.py tests/test_usage.py tests/test_usage_rules.py \
	  tests/test_prometheus_usage.py
