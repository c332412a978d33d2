"""`gpudoctor check`: probing is probe/, judging is checks/ (both shared with the
other commands); what is check's own is its view, the header of facts above the
findings (view.py)."""
