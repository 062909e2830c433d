"""The package version, alone in a module: code inside skillwire that prints it (the command line, the
server's `serverInfo`, the bridge) imports this, not the package root, which imports every layer (and
would make each of them part of an import cycle through the root)."""

__version__ = "0.1.0"
