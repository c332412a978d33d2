"""`gpudoctor lint`: find distributed-training pitfalls in source code.

Pure `ast` / `tokenize` work: nothing here imports torch. The engine
(`engine`) runs rules (`rules/`, one module each) over a shared per-file
model (`model`); `formats` turns diagnostics into text, JSON, SARIF or GitHub
annotations; `explain` renders a rule's documentation page.
"""
