"""The pages under docs/ that are generated from code: `python -m gpudoctor.docs`
writes them, `python -m gpudoctor.docs --check` says which differ (see pages.py)."""
