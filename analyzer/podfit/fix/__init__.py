"""``podfit fix``: changes that make findings go away, as edits of the files or a Kustomize overlay."""

from .apply import FileResult, ObjectEdit, OverlayError, edit_file, kustomize_overlay, unified_diff
from .plan import FIXABLE, Change, FixOptions, FixPlan, Unfixable, plan_fixes
from .yamledit import CannotPreserve, Edit, apply_edits

__all__ = [
    "FIXABLE",
    "CannotPreserve",
    "Change",
    "Edit",
    "FileResult",
    "ObjectEdit",
    "OverlayError",
    "FixOptions",
    "FixPlan",
    "Unfixable",
    "apply_edits",
    "edit_file",
    "kustomize_overlay",
    "plan_fixes",
    "unified_diff",
]
