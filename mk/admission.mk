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
