"""podfit: are your Kubernetes workloads sized to run fast?"""

from . import codecache

__version__ = "0.1.0"

# before any module of the package defines a dataclass (see podfit.codecache)
codecache.install()
