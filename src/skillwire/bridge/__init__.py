"""`skillwire bridge`: MCP-served skills as three model tools, for hosts that do not load SEP-2640 skills.

`config` reads the upstreams (command line or TOML), `upstreams` keeps one lazy, self-healing
connection per upstream, `approval` turns the host's approval gate into MCP elicitation, and `server`
is the MCP server the host connects to.
"""
