#!/usr/bin/env bash
# Builds the pinned Go tools podfit's tests and linters use into .tools/bin, from source with `go install`
# (no prebuilt binaries; Go's own module and build caches, shared by every tool).
# Usage: scripts/install-tools.sh [tool...]   (default: the tools the tests use; kube-score, which only
# the benchmarks run, when named). Skips tools already built at the pinned version.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
mkdir -p "$bin"
declare -A PKG=(
  [opa]=github.com/open-policy-agent/opa@v1.22.2
  [conftest]=github.com/open-policy-agent/conftest@v0.71.1
  [kubeconform]=github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
  [kube-score]=github.com/zegl/kube-score/cmd/kube-score@v1.20.0
  [actionlint]=github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
  [kustomize]=sigs.k8s.io/kustomize/kustomize/v5@v5.8.1
  # podfit check renders charts with helm template (podfit.render); the tests render charts with it
  [helm]=helm.sh/helm/v3/cmd/helm@v3.22.0
  # Prometheus 3.16 (its Go module is versioned v0.316.0): the usage tests serve a TSDB block with it
  [prometheus]=github.com/prometheus/prometheus/cmd/prometheus@v0.316.0
  [promtool]=github.com/prometheus/prometheus/cmd/promtool@v0.316.0
  # Gatekeeper's CLI: the admission tests run `podfit export gatekeeper`'s templates with `gator test`
  [gator]=github.com/open-policy-agent/gatekeeper/v3/cmd/gator@v3.23.1
)
# remove_all_sd leaves out the service-discovery plugins (AWS, Azure, GCE, Kubernetes, ...): the tests
# scrape nothing, and the build is shorter without them
declare -A TAGS=(
  [prometheus]=remove_all_sd
  [promtool]=remove_all_sd
)
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(opa conftest kubeconform actionlint kustomize helm prometheus promtool)
for t in "${tools[@]}"; do
  pkg=${PKG[$t]:?unknown tool $t}
  tags=${TAGS[$t]:-}
  stamp="$bin/.$t.version"
  want="$pkg${tags:+ tags=$tags}"
  if [ -x "$bin/$t" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    continue
  fi
  echo "building $t ($want)" >&2
  GOBIN="$bin" CGO_ENABLED=0 GOFLAGS="-trimpath${tags:+ -tags=$tags}" go install "$pkg"
  echo "$want" > "$stamp"
done
