# HTML report (issue 19): Debian's chromium for its browser tests, and the screenshot in docs/.
.PHONY: chromium test-html report-screenshot

# Installed when missing and this is root with apt-get (a fresh CI machine); elsewhere the browser
# tests skip and name this target. apt-get update + install took 112 s here (115 packages).
chromium:  ## Debian's chromium for tests/test_html_report.py (apt-get install when missing, as root)
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the HTML report's browser tests"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium \
	    || echo "chromium could not be installed: the browser tests will skip"; \
	else echo "no chromium, and no root/apt-get to install it: the browser tests of the HTML report will skip"; fi

pytest: chromium

test-html: venv-test chromium  ## the HTML report's tests, headless Chromium included
	$(PY) -m pytest -q tests/test_html_report.py

report-screenshot: venv chromium  ## docs/report-example.png: the HTML report of testdata/examples in headless Chromium
	$(PY) scripts/report-screenshot.py testdata/examples docs/report-example.png
