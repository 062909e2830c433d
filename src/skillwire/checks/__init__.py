"""Rule engines that report and never serve: `lint` (local skill folders, before they are published)
and `audit` (a running server, behind `skillwire check`), sharing one `Finding` type and rule registry
(`findings`), with the Markdown link rules (`links`) and the YAML interop hazards (`hazards`)."""
