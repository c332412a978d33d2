"""Typer only: one small module per command; options -> one call -> render."""
