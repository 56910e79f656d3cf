"""``python -m dau_scheduler`` is the ``dau`` command (for environments without its script)."""

from __future__ import annotations

from dau_scheduler.cli import main

main()
