"""The version, in a leaf module: anything may import it without importing the rest."""

__version__ = "0.1.0"
