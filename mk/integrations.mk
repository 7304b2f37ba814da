# Integrations: OPA bundle for GitOps, offline Kubernetes schemas, workflow lint, tests.
.PHONY: bundle schemas k8s-schemas lint-workflows test-integrations bench-schemas

BUNDLE := dist/podfit-policies.tar.gz

bundle: $(BUNDLE)  ## OPA bundle of policies/ (no _test.rego) for `conftest pull` / OPA bundle servers

$(BUNDLE): tools $(shell find policies -name '*.rego' -o -name '*.json' 2>/dev/null)
	@mkdir -p $(dir $(abspath $(BUNDLE)))
	cd policies && $(CURDIR)/$(TOOLS)/opa build --bundle . --ignore '*_test.rego' \
	  --revision "$$(git rev-parse --short HEAD 2>/dev/null || echo dev)" -o $(abspath $(BUNDLE))
	@echo "built $(BUNDLE)"

schemas: .tools/schemas/.built  ## standalone Kubernetes JSON schemas for kubeconform (offline), in .tools/schemas

.tools/schemas/.built: venv-test scripts/build-schemas.py analyzer/podfit/schemas_k8s.py $(wildcard schemas/crds/*.json) schemas/platform.schema.json
	$(PY) scripts/build-schemas.py --out .tools/schemas
	touch $@

# The Kubernetes schemas shipped in schemas/kubernetes/ (one file per release podfit targets) come
# from this kubernetes-validate, installed under build/ (not a dependency of the package: 108 MB of every
# release's schemas, plain and strict).
KUBERNETES_VALIDATE := 1.37.0

k8s-schemas: venv  ## regenerate schemas/kubernetes/ (PF902's schemas, kubeversions.RELEASES) from kubernetes-validate
	$(PY) -m pip install -q --upgrade --target build/kubernetes-validate-$(KUBERNETES_VALIDATE) --no-deps \
	  kubernetes-validate==$(KUBERNETES_VALIDATE)
	$(PY) scripts/vendor-k8s-schemas.py \
	  --from build/kubernetes-validate-$(KUBERNETES_VALIDATE)/kubernetes_validate/kubernetes-json-schema

lint-workflows: tools  ## actionlint on every GitHub workflow (and the composite action's example)
	$(TOOLS)/actionlint -no-color .github/workflows/*.yml

test-integrations: venv-test tools  ## formats, PF902, pre-commit, GitHub Action, conftest bundle tests
	$(PY) -m pytest -q tests/test_formats.py tests/test_schema_pf902.py tests/test_integration*.py

bench-schemas: venv-test tools  ## PF902 throughput on 10,000 objects: in-process vs kubeconform
	$(PY) bench/schemas.py

TEST_TARGETS += lint-workflows
