# Fuzz: tests/test_fuzz.py's properties with many more, randomized examples (the test suite runs a
# fixed, derandomized few). FUZZ_EXAMPLES scales every property alike: 3000 takes 12-20 minutes on
# two cores. A failure prints its falsifying example, the input that fails the property.
.PHONY: fuzz
FUZZ_EXAMPLES ?= 3000

fuzz: venv-test  ## long property-based fuzz run (FUZZ_EXAMPLES=3000, 12+ minutes): crashes, exits, repeatability
	PODFIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz.py --hypothesis-show-statistics
