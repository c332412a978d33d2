"""The bottom of the house: what every layer may import, and which imports nothing of
gpudoctor's own (findings and reports, exit codes, the codec, the usage error, user files,
stack frames, the version). tests/test_layers.py holds it to that."""
