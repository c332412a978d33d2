"""`gpudoctor report`: check, a short allreduce and a short train-smoke, written
as one Markdown file to attach to a bug report (what people paste instead of
torch's collect_env). A step that fails is a section saying so; the file is
always written.

    steps.py     the steps, each run to a StepResult whatever happens inside it
    document.py  StepResults -> the Markdown file (collapsible sections)
"""
