"""The host side of SEP-2640: discover, approve, load, verify, cache, and tools for the model."""
