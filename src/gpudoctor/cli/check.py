"""gpudoctor check: probe this machine (or read a saved snapshot), run every
check, print the findings. Heavy imports stay inside the command."""

from __future__ import annotations

from typing import Optional

import typer

from gpudoctor.cli.output import JsonOpt, MarkdownOpt, StrictOpt, check_formats, emit, usage_error


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
        facts_file: Optional[str] = typer.Option(
            None, "--facts", metavar="FILE", help="Diagnose a snapshot saved with `check --json` instead of this machine."
        ),
        visible: Optional[str] = typer.Option(
            None, "--visible", metavar="LIST", help="Show what torch would see with CUDA_VISIBLE_DEVICES=LIST (e.g. 1,0)."
        ),
    ) -> None:
        """Why can't PyTorch see or use the GPUs, and what to do about it."""
        check_formats(json_out, markdown)
        from gpudoctor.checks import run_checks
        from gpudoctor.findings import Report
        from gpudoctor.probe.codec import SnapshotError
        from gpudoctor.probe.facts import collect, load
        from gpudoctor.render.check_summary import markdown_sections, rich_header

        if facts_file is not None:
            if visible is not None:
                usage_error("--visible probes this machine; it cannot be combined with --facts")
            try:
                facts = load(facts_file)
            except SnapshotError as exc:
                usage_error(str(exc))
        else:
            facts = collect(visible=visible)
        report = Report("check", run_checks(facts), {"facts": facts.to_dict()})
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: rich_header(facts),
            markdown_sections=lambda: markdown_sections(facts),
        )
