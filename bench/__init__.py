"""Benchmarks: run with `python -m bench.<name>`; results land in bench/results/ (git-ignored)."""
