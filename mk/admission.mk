# Admission policies (`podfit export gatekeeper`): Gatekeeper's gator, built from the pinned
# module by scripts/install-tools.sh (skipped when already built), runs the exported templates
# over the fixtures in tests/test_admission.py, which `make test`'s pytest runs.
.PHONY: gator test-admission

gator:  ## build the pinned gator (Gatekeeper's CLI) into .tools/bin
	scripts/install-tools.sh gator

pytest: gator

test-admission: venv-test gator  ## `podfit export gatekeeper` run by gator over testdata/, against `podfit check`
	$(PY) -m pytest -q tests/test_admission.py

TEST_TARGETS += gator

# The CEL evaluator of `podfit export vap`'s tests: k8s.io/apiserver's CEL environment, pinned in
# scripts/cel-eval/go.mod (34 s cold here), rebuilt when its source changes.
.PHONY: cel-eval
cel-eval: $(TOOLS)/cel-eval  ## build the CEL evaluator (k8s.io/apiserver's CEL environment) into .tools/bin

$(TOOLS)/cel-eval: scripts/cel-eval/go.mod scripts/cel-eval/go.sum scripts/cel-eval/main.go
	mkdir -p $(TOOLS)
	cd scripts/cel-eval && CGO_ENABLED=0 go build -trimpath -o $(CURDIR)/$(TOOLS)/cel-eval .

pytest: cel-eval
TEST_TARGETS += cel-eval
