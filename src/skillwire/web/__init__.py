"""The catalog web page (issue 39): one renderer, two views (a served catalog, any server through the host)."""
