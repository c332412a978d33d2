"""What `gpudoctor allreduce` shows on stderr while it runs: the results table
filling in row by row, a progress bar over the sizes, and notes (the NCCL
narrowing reruns). Nothing of it reaches stdout, so `--json | jq` stays clean."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpudoctor.commands.allreduce.bandwidth import Row, public_row
from gpudoctor.commands.allreduce.table import results_table


class SweepDisplay:
    def __init__(self, console: Console, total_sizes: int, title: str, live: bool = True):
        self.console = console
        self.title = title
        self.rows: list[dict] = []
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.task = self.progress.add_task("starting ranks", total=total_sizes)
        # A joined rank 0 waiting for its peers: the CLI sets its notice (cli/output.waiting_notice).
        self.on_wait: Callable[..., None] = lambda _wait: None
        # On a pipe or a file there is nothing to animate: only the notes are printed.
        self.live = Live(self._render(), console=console, transient=True, refresh_per_second=8) if (
            live and console.is_terminal
        ) else None

    def _render(self):
        return Group(results_table(self.rows, self.title), self.progress)

    def __enter__(self) -> "SweepDisplay":
        if self.live:
            self.live.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.live.stop()

    def _refresh(self) -> None:
        if self.live:
            self.live.update(self._render())

    def stage(self, rank: int, stage: str, step: int) -> None:
        if rank == 0 and stage:
            self.progress.update(self.task, description=stage)
            self._refresh()

    def row(self, row: Row) -> None:
        self.rows.append(public_row(row))
        self.progress.update(self.task, completed=len(self.rows))
        self._refresh()

    def note(self, text: str) -> None:
        (self.live.console if self.live else self.console).print(f"[dim]gpudoctor:[/dim] {text}")

    def hooks(self):
        from gpudoctor.commands.allreduce.job import Hooks

        return Hooks(on_stage=self.stage, on_row=self.row, on_note=self.note, on_wait=self.on_wait)
