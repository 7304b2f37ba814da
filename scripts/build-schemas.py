#!/usr/bin/env python3
"""Build standalone Kubernetes JSON schemas for kubeconform, offline.

The kubernetes-validate package ships Kubernetes' JSON schemas per version, but each kind's schema
refers to a shared ``/api/_definitions.json`` that kubeconform cannot resolve. This writes every kind
with its references inlined, in kubeconform's ``-schema-location`` layout, plus podfit's own CRD and
Platform schemas:

    OUT/v1.37.0-standalone/deployment-apps-v1.json
    OUT/v1.37.0-standalone-strict/deployment-apps-v1.json
    OUT/podfit/tanzukubernetescluster-run-v1alpha3.json

Use with::

    kubeconform -kubernetes-version 1.37.0 -strict -ignore-missing-schemas \\
      -schema-location 'OUT/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json' \\
      -schema-location 'OUT/podfit/{{ .ResourceKind }}{{ .KindSuffix }}.json' FILES...
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analyzer"))

from podfit.schemas_k8s import SchemaError, build_schema_tree, kubeconform_locations, shipped_versions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=".tools/schemas", help="output directory (default: .tools/schemas)")
    ap.add_argument(
        "--version",
        action="append",
        dest="versions",
        metavar="X.Y",
        help="Kubernetes version (repeatable; 'all' for every shipped one; default: the newest)",
    )
    args = ap.parse_args()
    versions = args.versions
    if versions == ["all"]:
        versions = shipped_versions()
    t0 = time.perf_counter()
    try:
        counts = build_schema_tree(Path(args.out), versions)
    except SchemaError as e:
        print(f"build-schemas: {e}", file=sys.stderr)
        return 2
    for name, n in counts.items():
        print(f"{args.out}/{name}: {n} schemas")
    print(f"built in {time.perf_counter() - t0:.1f} s; kubeconform -schema-location:")
    for loc in kubeconform_locations(Path(args.out)):
        print(f"  {loc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
