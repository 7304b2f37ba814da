# Linters. regal (the Rego linter) is built from the pinned module in scripts/tools/regal: the Go
# proxy refuses `go install github.com/styrainc/regal@v0.35.1` (it will not list the versions), but
# builds it as a dependency. Not yet part of `make test`: `regal lint policies` still reports
# line-length and reference findings to work through (see .regal/config.yaml).
.PHONY: regal lint-rego

$(TOOLS)/regal: scripts/tools/regal/go.mod scripts/tools/regal/go.sum
	mkdir -p $(TOOLS)
	cd scripts/tools/regal && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o $(CURDIR)/$(TOOLS)/regal github.com/styrainc/regal

regal: $(TOOLS)/regal  ## build the pinned regal into .tools/bin

lint-rego: regal  ## regal lint on policies/ (configuration in .regal/config.yaml)
	$(TOOLS)/regal lint policies
