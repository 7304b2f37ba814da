# Report formats: the SARIF Multitool (Microsoft's SARIF validator, a self-contained binary from npm)
# for tests/test_formats.py, which skips its check, saying why, when the tool is absent.
.PHONY: sarif-multitool

SARIF_MULTITOOL_VERSION := 5.7.0

sarif-multitool: .cache/sarif-multitool/.installed  ## install the pinned SARIF Multitool (npm) into .cache/

.cache/sarif-multitool/.installed:
	mkdir -p .cache/sarif-multitool
	cd .cache/sarif-multitool && npm install --no-audit --no-fund @microsoft/sarif-multitool@$(SARIF_MULTITOOL_VERSION)
	chmod u+x .cache/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
	touch $@

.PHONY: bench-hook
bench-hook: venv tools  ## one small file, as a pre-commit hook sees it: podfit vs kube-score and conftest (wall, CPU, ratios)
	$(PY) bench/hook.py
