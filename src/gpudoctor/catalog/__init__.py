"""What gpudoctor can say, as data: one entry per finding id (what it means,
why it matters, the fix, which command reports it). The pages under docs/ are
generated from here (`python -m gpudoctor.docs`); tests/test_docs.py fails when
code emits an id the catalog lacks, or the pages and the catalog differ."""
