"""Thin adapter over `mcp.client`: one protocol call per wrapper, as the SEP's SDK guidance shows."""
