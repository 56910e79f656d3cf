"""The error hierarchy: one root, a subclass per phase, each mixing in the builtin that fits."""

from __future__ import annotations


class DauError(Exception):
    """Root of every error this package raises on purpose."""


class PostureError(DauError, ValueError):
    """A posture was requested that cannot be resolved into a share."""


class SplitError(DauError, ValueError):
    """A split was asked for that cannot be executed or merged as asked."""


class ProfileError(DauError, ValueError):
    """A profile, span list or link rate that cannot be used as given."""


class SqlError(DauError, ValueError):
    """A query or data set the SQL front end refuses before any engine runs."""


class SizingError(DauError, ValueError):
    """A resource, placement, calibration or memory plan that cannot be built as asked."""


class ClusterError(DauError, RuntimeError):
    """A cluster that cannot be used as given (a bad argument, a scheduler that does not answer,
    a missing extra), or that lost rows it alone held while a query ran."""


class ArmError(DauError, RuntimeError):
    """An arm failed while running its share; ``arm`` says which (``"device"`` or ``"host"``),
    or what stopped the split (``"reader"``: rows that could not be read; ``"transfer"``: a
    partial a cluster cannot carry back)."""

    def __init__(self, arm: str, message: str) -> None:
        super().__init__(f"{arm} arm failed: {message}")
        self.arm = arm


class FoldError(DauError, RuntimeError):
    """The final query refused to fold the arms' partials into the answer (moments too
    ill-conditioned to combine within the float tolerance); the Session answers unsplit."""


__all__ = [
    "ArmError",
    "FoldError",
    "ClusterError",
    "DauError",
    "PostureError",
    "ProfileError",
    "SizingError",
    "SplitError",
    "SqlError",
]
