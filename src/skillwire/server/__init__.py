"""Adapter over the official `mcp` SDK: the skills extension, resource handlers, and the serve app."""
