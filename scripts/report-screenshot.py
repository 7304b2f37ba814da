"""Screenshot of `podfit check --format html` for the docs: report-screenshot.py PATH OUT.png [--dark].

Renders the report of PATH (the shipped examples by default) to a temporary file, opens it in
headless Chromium (tests/headless.py) at 1280 px wide and saves the whole page as a PNG. Fails when
the page logs an error or makes a network request.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from headless import Browser, find_chromium  # noqa: E402


def main(argv: list[str]) -> int:
    dark = "--dark" in argv
    args = [a for a in argv if a != "--dark"]
    src, out = (args + ["testdata/examples", "docs/report-example.png"][len(args) :])[:2]
    binary = find_chromium()
    if binary is None:
        print("no chromium: run `make chromium`", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "report.html"
        podfit = Path(sys.executable).with_name("podfit")
        code = subprocess.run([str(podfit), "check", src, "--format", "html", "--output", str(page_path)]).returncode
        if code > 1:
            return code
        with Browser(binary) as browser:
            page = browser.open(page_path.as_uri(), dark=dark)
            if page.problems() or page.requests():
                print(f"the page logged {page.problems()} and requested {page.requests()}", file=sys.stderr)
                return 1
            page.screenshot(Path(out))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
