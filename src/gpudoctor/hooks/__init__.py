"""Hooks installed into a user's process by `gpudoctor run` and `gpudoctor.watch()`.

Importing this package stays cheap (no torch): the hooks themselves are set up
in hooks/install.py once the script imports torch.
"""
