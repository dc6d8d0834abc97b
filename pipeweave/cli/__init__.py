"""Command-line interface: a thin argparse layer over the library (nothing is computed here)."""

from .main import main

__all__ = ["main"]
