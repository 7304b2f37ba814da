"""Package layout only (metadata lives in pyproject.toml).

``analyzer/podfit`` is the package; ``policies/`` and ``schemas/`` ride along inside the wheel as
``podfit._policies`` and ``podfit._schemas`` so that the Rego library and the JSON Schemas are found
by ``importlib.resources`` wherever podfit is installed. An editable install (``pip install -e``,
``make venv``) maps only ``analyzer/``: ``podfit.paths`` finds ``policies/`` and ``schemas/`` in the
checkout itself, and a plain ``analyzer/`` layout lets setuptools install a static path entry
(no import hook to load at every start, no build warning about it).
"""

import sys

from setuptools import find_packages, setup

packages = find_packages("analyzer", include=["podfit", "podfit.*"])
package_data = {"podfit": ["*.yaml", "data/*.wasm", "data/*.json", "data/*.css", "data/*.js"]}
if "editable_wheel" in sys.argv:
    setup(packages=packages, package_dir={"": "analyzer"}, package_data=package_data, include_package_data=False)
else:
    setup(
        packages=packages + ["podfit._policies", "podfit._schemas"],
        package_dir={"": "analyzer", "podfit._policies": "policies", "podfit._schemas": "schemas"},
        package_data={
            **package_data,
            "podfit._policies": ["**/*.rego", "**/*.json"],
            "podfit._schemas": ["**/*.json", "**/*.json.gz", "**/*.yaml"],
        },
        include_package_data=False,
    )
