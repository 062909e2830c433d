"""Tests of skillwire.core: the pure rules (URIs, entries, manifests, cursors, verification, SKILL.md, YAML)."""
