"""The `skillwire` command."""
