# Linters, both part of `make test`. Python: ruff and mypy, pinned in the `lint` extra
# (pyproject.toml holds their settings). Rego: regal, built from the pinned module in
# scripts/tools/regal (the Go proxy refuses `go install github.com/styrainc/regal@v0.35.1`, as it
# will not list the versions, but builds it as a dependency); .regal/config.yaml holds its settings.
.PHONY: regal lint-rego lint-python

$(VENV)/.installed-lint: $(VENV)/.installed-test pyproject.toml
	$(PY) -m pip install -q -e '.[test,lint]'
	touch $@

lint-python: $(VENV)/.installed-lint  ## ruff check and ruff format --check on analyzer, tests, bench, lab and scripts; mypy on the podfit package and the calibration lab
	$(VENV)/bin/ruff check analyzer tests bench lab scripts
	$(VENV)/bin/ruff format --check analyzer tests bench lab scripts
	$(VENV)/bin/mypy

TEST_TARGETS += lint-python

$(TOOLS)/regal: scripts/tools/regal/go.mod scripts/tools/regal/go.sum
	mkdir -p $(TOOLS)
	cd scripts/tools/regal && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o $(CURDIR)/$(TOOLS)/regal github.com/styrainc/regal

regal: $(TOOLS)/regal  ## build the pinned regal into .tools/bin

lint-rego: regal  ## regal lint on policies/ (configuration in .regal/config.yaml)
	$(TOOLS)/regal lint policies

TEST_TARGETS += lint-rego
