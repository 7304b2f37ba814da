#!/usr/bin/env python3
"""Write schemas/kubernetes/v1.NN.json.gz, the Kubernetes JSON schemas PF902 validates against.

One file per release podfit targets (podfit.kubeversions.RELEASES), from the plain (not strict)
schemas of the kubernetes-validate package: the shared ``_definitions.json`` and every kind's
schema (the files carrying ``x-kubernetes-group-version-kind``; the sub-type files are reached
through the definitions), their ``description``s left out. The strict schemas are derived when read
(podfit.schemas_k8s.strict_schema); this script checks the derivation against kubernetes-validate's
own strict copies and refuses to write when one differs. The output is byte-for-byte reproducible.

    make k8s-schemas     # installs the pinned kubernetes-validate under .tools/, then runs this
    python scripts/vendor-k8s-schemas.py --from DIR/kubernetes-json-schema [--out schemas/kubernetes]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analyzer"))

from podfit.kubeversions import RELEASES  # noqa: E402
from podfit.schemas_k8s import DEFINITIONS, strict_schema  # noqa: E402

_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def without_descriptions(node: Any) -> Any:
    """``node`` without its ``description`` keywords (a property named description stays)."""
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        k: {name: without_descriptions(s) for name, s in v.items()}
        if k in _NAMED and isinstance(v, dict)
        else without_descriptions(v)
        for k, v in node.items()
        if k != "description"
    }


def release_document(source: Path, version: str) -> dict[str, Any]:
    """One release's document; raises ValueError where the strict derivation differs."""
    plain, strict = source / f"v{version}.0-local", source / f"v{version}.0-local-strict"
    if not plain.is_dir() or not strict.is_dir():
        raise ValueError(f"no schemas for {version} under {source}")
    doc: dict[str, Any] = {}
    for f in sorted(plain.glob("*.json")):
        raw = json.loads(f.read_text(encoding="utf-8"))
        if f.name != DEFINITIONS and "x-kubernetes-group-version-kind" not in raw:
            continue  # all.json, and the sub-types (container-v1.json) the definitions hold
        if strict_schema(raw) != json.loads((strict / f.name).read_text(encoding="utf-8")):
            raise ValueError(f"{strict / f.name}: not the plain schema made strict")
        doc[f.name] = without_descriptions(raw)
    return doc


def compressed(doc: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(json.dumps(doc, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    return buf.getvalue()


def installed_source() -> Path | None:
    from importlib.util import find_spec

    spec = find_spec("kubernetes_validate")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        if (Path(loc) / "kubernetes-json-schema").is_dir():
            return Path(loc) / "kubernetes-json-schema"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", type=Path, help="kubernetes-validate's kubernetes-json-schema directory")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "schemas" / "kubernetes")
    args = ap.parse_args()
    source = args.source or installed_source()
    if source is None:
        print("vendor-k8s-schemas: give --from (kubernetes-validate is not installed)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = {f"v{major}.{minor}.json.gz" for major, minor in RELEASES}
    for major, minor in RELEASES:
        version = f"{major}.{minor}"
        try:
            data = compressed(release_document(source, version))
        except ValueError as e:
            print(f"vendor-k8s-schemas: {e}", file=sys.stderr)
            return 2
        (args.out / f"v{version}.json.gz").write_bytes(data)
        print(f"{args.out}/v{version}.json.gz: {len(data) // 1024} KiB")
    for old in args.out.glob("v*.json.gz"):
        if old.name not in wanted:  # a release podfit no longer targets
            old.unlink()
            print(f"removed {old}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
