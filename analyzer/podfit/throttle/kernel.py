"""Which of the simulator's kernel switches a Linux release needs. Pure: the release is given.

``podfit throttle --kernel RELEASE`` sets the scenario from it; the kernel calibration
(``lab/calibrate/``, not part of the package) simulates the machine it measured with it.
"""

from __future__ import annotations

import re

__all__ = ["kernel_flags"]

# releases whose major.minor cannot be read are taken as 6.6: today's accounting, no task-based throttle
_UNKNOWN_RELEASE = (6, 6)


def kernel_flags(release: str) -> dict[str, bool]:
    """The :class:`~podfit.throttle.Scenario` switches matching a kernel release (``5.4.0-100-generic``,
    ``6.18.44``), by field name: slice expiry before 5.4, empty-group accounting before 6.6,
    task-based throttling from 6.18."""
    m = re.match(r"(\d+)\.(\d+)", release)
    ver = (int(m.group(1)), int(m.group(2))) if m else _UNKNOWN_RELEASE
    return {
        "pre_5_4_expiry": ver < (5, 4),
        "account_empty_throttled": ver < (6, 6),
        "task_based_throttle": ver >= (6, 18),
    }
