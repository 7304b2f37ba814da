# podfit — every set-up step lives here, so a fresh machine needs only `make demo` / `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PODFIT := $(VENV)/bin/podfit
TOOLS  := .tools/bin
export PATH := $(CURDIR)/$(TOOLS):$(PATH)

.PHONY: demo test tools tools-bench venv venv-test pytest clean help release-tag kubelet-schema
.DEFAULT_GOAL := help

help:  ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed
venv-test: $(VENV)/.installed-test

demo: venv  ## install podfit in .venv and check the shipped examples (embedded engine, default platform)
	@status=0; $(PODFIT) check --engine embedded testdata/examples/ || status=$$?; \
	  echo "podfit exited $$status (1 = findings at or above --fail-on, as expected here; 2 = failure)"; \
	  [ $$status -le 1 ]

tools:  ## build the pinned Go tools the tests use (opa, conftest, kubeconform, actionlint, kustomize, helm, prometheus, promtool; gator: make gator) into .tools/bin
	scripts/install-tools.sh

tools-bench: tools  ## and kube-score, which only the benchmarks run
	scripts/install-tools.sh kube-score

kubelet-schema:  ## regenerate schemas/crds/kubeletconfiguration-kubelet-v1beta1.json from the kubelet's Go type (pinned in scripts/kubelet-schema/go.mod)
	cd scripts/kubelet-schema && go run . $$(go list -m -f '{{.Version}}' k8s.io/kubelet) > ../../schemas/crds/kubeletconfiguration-kubelet-v1beta1.json

# Fragments in mk/*.mk add their own targets and append to TEST_TARGETS.
TEST_TARGETS := pytest
-include mk/*.mk

pytest: venv-test tools
	$(PY) -m pytest -q

test: $(TEST_TARGETS)  ## run every test (builds what it needs first)

clean:
	rm -rf $(VENV) build dist .pytest_cache

release-tag:  ## tag the current commit vX.Y.Z from podfit.__version__ (docs/releasing.md)
	@test -z "$$(git status --porcelain)" || { echo "the working tree is not clean"; exit 2; }
	@v=$$(sed -n 's/^__version__ = "\(.*\)"/\1/p' analyzer/podfit/__init__.py); \
	  git tag -a "v$$v" -m "podfit $$v" && echo "tagged v$$v"
