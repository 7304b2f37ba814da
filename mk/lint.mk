# Linters. Python: ruff and mypy, pinned in the `lint` extra (pyproject.toml holds their settings);
# lint-python is part of `make test`. regal (the Rego linter) is built from the pinned module in
# scripts/tools/regal: the Go proxy refuses `go install github.com/styrainc/regal@v0.35.1` (it will
# not list the versions), but builds it as a dependency. Not yet part of `make test`: `regal lint
# policies` still reports line-length and reference findings to work through (see .regal/config.yaml).
.PHONY: regal lint-rego lint-python

$(VENV)/.installed-lint: $(VENV)/.installed-test pyproject.toml
	$(PY) -m pip install -q -e '.[test,lint]'
	touch $@

lint-python: $(VENV)/.installed-lint  ## ruff check and ruff format --check on analyzer, tests, bench and scripts; mypy on the podfit package
	$(VENV)/bin/ruff check analyzer tests bench scripts
	$(VENV)/bin/ruff format --check analyzer tests bench scripts
	$(VENV)/bin/mypy

TEST_TARGETS += lint-python

$(TOOLS)/regal: scripts/tools/regal/go.mod scripts/tools/regal/go.sum
	mkdir -p $(TOOLS)
	cd scripts/tools/regal && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o $(CURDIR)/$(TOOLS)/regal github.com/styrainc/regal

regal: $(TOOLS)/regal  ## build the pinned regal into .tools/bin

lint-rego: regal  ## regal lint on policies/ (configuration in .regal/config.yaml)
	$(TOOLS)/regal lint policies
