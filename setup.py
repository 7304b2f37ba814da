"""Package layout only (metadata lives in pyproject.toml).

``analyzer/podfit`` is the package; ``policies/`` and ``schemas/`` ride along inside the wheel as
``podfit._policies`` and ``podfit._schemas`` so that the Rego library and the JSON Schemas are found
by ``importlib.resources`` wherever podfit is installed.
"""

from setuptools import find_packages, setup

packages = find_packages("analyzer", include=["podfit", "podfit.*"])
setup(
    packages=packages + ["podfit._policies", "podfit._schemas"],
    package_dir={"": "analyzer", "podfit._policies": "policies", "podfit._schemas": "schemas"},
    package_data={
        "podfit": ["*.yaml", "data/*.wasm", "data/*.json", "data/*.css", "data/*.js"],
        "podfit._policies": ["**/*.rego", "**/*.json"],
        "podfit._schemas": ["**/*.json", "**/*.yaml"],
    },
    include_package_data=False,
)
