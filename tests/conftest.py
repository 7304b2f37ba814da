from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / ".tools" / "bin"
# an EKS cluster's profile: pool general of 4-CPU m5.xlarge nodes, pool memory-spot of 8-CPU
# r6g.2xlarge nodes labelled workload=cache and tainted dedicated=cache:NoSchedule
EKS_PLATFORM = ROOT / "testdata" / "platform-import" / "eks" / "platform.yaml"
if str(ROOT / "analyzer") not in sys.path:
    sys.path.insert(0, str(ROOT / "analyzer"))


def tool(name: str) -> str | None:
    """Path of a pinned Go tool built by `make tools`, else one on PATH."""
    p = TOOLS / name
    if p.is_file() and os.access(p, os.X_OK):
        return str(p)
    return shutil.which(name)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True)
def _files_as_given(monkeypatch):
    """Charts and kustomizations read file by file (PF908/PF909), as without helm and kustomize:
    what a test sees does not depend on the tools on this machine. The tests of rendering in place
    (tests/test_render.py) name the tools they run."""
    monkeypatch.setenv("PODFIT_HELM", "off")
    monkeypatch.setenv("PODFIT_KUSTOMIZE", "off")
