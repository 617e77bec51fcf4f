"""Questions about the whole fleet and about change: every pending pod explained, drain and
grow what-ifs, gangs, stranded devices (see kubectl_dra/fleet/*.py)."""
