"""Tests of the rules that report: lint, check, YAML interop hazards, and their agreement (no processes)."""
