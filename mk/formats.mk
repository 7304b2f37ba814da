# Report formats: the SARIF Multitool (Microsoft's SARIF validator, a self-contained binary from npm)
# for tests/test_formats.py, which skips its check, saying why, when the tool is absent.
.PHONY: sarif-multitool sarif-multitool-for-tests

SARIF_MULTITOOL_VERSION := 5.7.0

sarif-multitool: .cache/sarif-multitool/.installed  ## install the pinned SARIF Multitool (npm) into .cache/

.cache/sarif-multitool/.installed:
	mkdir -p .cache/sarif-multitool
	cd .cache/sarif-multitool && npm install --no-audit --no-fund @microsoft/sarif-multitool@$(SARIF_MULTITOOL_VERSION)
	chmod u+x .cache/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
	touch $@

# `make test` installs it where npm is available, so CI runs the check rather than skip it.
pytest: sarif-multitool-for-tests
sarif-multitool-for-tests:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) -s sarif-multitool || echo "the SARIF Multitool could not be installed: its check will skip"; \
	else echo "no npm: the SARIF Multitool check of tests/test_formats.py will skip"; fi

.PHONY: bench-hook
bench-hook: venv tools-bench  ## one small file, as a pre-commit hook sees it: podfit vs kube-score and conftest (wall, CPU, ratios)
	$(PY) bench/hook.py
