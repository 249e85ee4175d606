"""The package version (one place; ``certbound.__version__`` re-exports it)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
