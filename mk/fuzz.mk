# Fuzz: tests/test_fuzz.py's properties with many more, randomized examples (the test suite runs a
# fixed, derandomized few). FUZZ_EXAMPLES scales every property alike: 1800 takes 10-15 minutes on
# two cores. A failure prints the falsifying example and the seed to reproduce it with
# `--hypothesis-seed`.
.PHONY: fuzz
FUZZ_EXAMPLES ?= 1800

fuzz: venv-test  ## long property-based fuzz run (FUZZ_EXAMPLES=1800, 10+ minutes): crashes, exits, repeatability
	PODFIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz.py --hypothesis-show-statistics
