"""The protocol's rules, pure: no I/O and no `mcp` import, so every rule is testable in isolation."""
