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
