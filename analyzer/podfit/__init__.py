"""podfit: are your Kubernetes workloads sized to run fast?"""

__version__ = "0.1.0"
