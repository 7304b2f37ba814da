"""Path helpers shared by the CI-facing renderers (sarif, github): repo-relative, '/'-separated."""

from __future__ import annotations

import os
from urllib.parse import quote

from ..loader import STDIN_NAME


def relative_path(path: str, base: str) -> str:
    """``path`` relative to ``base`` with '/' separators; stdin's name and paths outside ``base`` stay absolute."""
    if path == STDIN_NAME:
        return path
    absolute = os.path.normpath(os.path.join(base, path))
    rel = os.path.relpath(absolute, base)
    if rel == ".." or rel.startswith(".." + os.sep):
        return absolute.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def artifact_uri(path: str, base: str) -> str:
    """A SARIF ``artifactLocation.uri``: relative URI reference for files under ``base``, ``file://`` otherwise."""
    if path == STDIN_NAME:
        return path
    rel = relative_path(path, base)
    if rel.startswith("/"):
        return "file://" + quote(rel)
    return quote(rel)
