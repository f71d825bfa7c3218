"""pytest-mobilebench: evaluate coding agents and LLMs on mobile-app development benchmarks."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
