"""Benchmarks (``make bench``); not part of the test suite. Figures go to docs/benchmarks.md."""
