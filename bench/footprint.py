"""The install a pre-commit hook makes: ``pip install`` of podfit (no extras, or the extras given)
into a fresh virtualenv, as pre-commit does for each hook environment. Prints the size of the
environment's site-packages (du, MB) and its five largest distributions.

    .venv/bin/python bench/footprint.py            # what `podfit check` needs
    .venv/bin/python bench/footprint.py exact      # with the exact solver (podfit[exact])
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 10**6


def du(path: Path) -> int:
    """Bytes on disk under ``path`` (du -s --block-size=1)."""
    out = subprocess.run(["du", "-s", "--block-size=1", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def distributions(site: Path) -> dict[str, int]:
    """Bytes on disk per distribution, from each ``*.dist-info/RECORD`` (files listed once each)."""
    sizes: dict[str, int] = {}
    for record in site.glob("*.dist-info/RECORD"):
        name = record.parent.name.split("-")[0]
        total = 0
        for line in record.read_text(encoding="utf-8").splitlines():
            rel = line.split(",")[0]
            p = (site / rel).resolve()
            if p.is_file():
                total += p.stat().st_blocks * 512
        sizes[name] = total
    return sizes


def install(target: Path, extras: str = "") -> tuple[Path, float]:
    """A fresh virtualenv at ``target`` with podfit installed from this checkout (not editable);
    its site-packages and the install's wall time."""
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
    py = target / "bin" / "python"
    spec = f"{ROOT}[{extras}]" if extras else str(ROOT)
    t = time.perf_counter()
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", spec], check=True)
    took = time.perf_counter() - t
    (site,) = target.glob("lib/python*/site-packages")
    return site, took


def empty(target: Path) -> int:
    """Bytes of a fresh virtualenv's own site-packages (pip, and setuptools before Python 3.12)."""
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
    (site,) = target.glob("lib/python*/site-packages")
    return du(site)


def measure(extras: str = "") -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        base = empty(Path(tmp) / "empty")
        site, took = install(Path(tmp) / "venv", extras)
        total = du(site)
        sizes = distributions(site)
    return {"seconds": took, "total": total, "added": total - base, "base": base, "distributions": sizes}


def main(argv: list[str]) -> int:
    extras = argv[0] if argv else ""
    m = measure(extras)
    sizes: dict[str, int] = m["distributions"]  # type: ignore[assignment]
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    print(f"pip install podfit{f'[{extras}]' if extras else ''} into a fresh virtualenv: {m['seconds']:.0f} s")
    print(
        f"site-packages: {m['total'] / MB:.0f} MB (du), of which the empty virtualenv's own "
        f"{m['base'] / MB:.0f} MB: podfit's install adds {m['added'] / MB:.0f} MB"
    )
    print("largest distributions: " + ", ".join(f"{n} {b / MB:.0f} MB" for n, b in largest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
