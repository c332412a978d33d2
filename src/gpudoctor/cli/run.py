"""gpudoctor run (being built)."""

import typer


def register(app: typer.Typer) -> None:
    pass
