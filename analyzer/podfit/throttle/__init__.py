"""CFS bandwidth-control (CPU limit) throttling simulator. Pure: no I/O."""

from .scenario import CPU_BOUND, REQUEST, PeriodStats, Result, Scenario, Workload
from .sim import simulate

__all__ = ["CPU_BOUND", "REQUEST", "PeriodStats", "Result", "Scenario", "Workload", "simulate"]
