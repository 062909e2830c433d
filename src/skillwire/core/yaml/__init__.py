"""Frontmatter YAML, read exactly as npm ``yaml`` reads it.

This package owns one rule: *frontmatter YAML means what a YAML 1.2 core-schema parser reads*, and
"a YAML 1.2 core-schema parser" means, precisely, npm ``yaml`` v2 with default options
(``yaml.parse``), the parser the official conformance suite uses to check that an entry's
``frontmatter`` is identical to its SKILL.md. The differential test in ``tests/core/test_frontmatter.py``
holds this module to that reference.

What that means in practice:

* ``yes``/``no``/``on``/``off``/``y``/``n`` and dates stay strings; ``true``/``True``/``TRUE`` are
  booleans; ``0o17`` is 15, ``0x1F`` is 31, ``010`` is 10; ``1.10`` is the float 1.1.
* Numbers follow JavaScript: integers beyond 2**53 become the nearest float, ``-0`` is ``-0.0``.
  Non-finite numbers (``.inf``, ``.nan``, ``1e999``) cannot be JSON, so they are a
  `FrontmatterError` (npm ``yaml`` returns ``Infinity``, which ``JSON.stringify`` turns into ``null``).
* Merge keys (``<<``) are ordinary keys, as in npm ``yaml``'s core schema.
* Scalar keys are converted to JSON keys the way JavaScript does (``1`` -> ``"1"``, ``true`` ->
  ``"true"``, ``null`` -> ``""``); collection keys are a `FrontmatterError`.
* Two keys that end up as the same JSON key are a `FrontmatterError` naming the key and its line.
* Aliases are expanded under npm ``yaml``'s own budget (``maxAliasCount: 100``), computed without
  building the expanded structure, so an alias bomb fails in milliseconds. Aliased values are
  copied, and the copies may add at most `MAX_ALIAS_NODES` values (npm yaml shares them instead,
  and does not count aliases of empty collections at all).
* Explicit tags behave as in npm ``yaml``: ``!!str``/``!!int``/``!!float``/``!!bool``/``!!null`` apply
  when the text fits the tag (else the value stays a string), unknown and local tags are ignored,
  and the YAML 1.1 types npm would turn into non-JSON objects (``!!binary``, ``!!timestamp``,
  ``!!set``, ``!!omap``, ``!!pairs``, ``!!merge``) are a `FrontmatterError`.

The YAML itself is read by ruamel.yaml's pure-Python parser, whose scanner (PyYAML's, at heart)
is corrected here wherever YAML 1.2 and npm ``yaml`` read text differently (tabs, lone CR and NEL/
LS/PS characters, flow-collection indicators, indentation of continuation lines, ...). Where npm
``yaml`` accepts a malformed document or one that YAML readers disagree on, this module refuses it
with a `FrontmatterError`; `REFUSALS` lists every such class.

Everything here is sans-IO: callers hand in bytes or text.
"""

from __future__ import annotations

from skillwire.core.yaml._compose import MAX_ALIAS_COUNT, MAX_ALIAS_NODES, MAX_DEPTH
from skillwire.core.yaml._decode import MAX_FRONTMATTER_BYTES, frontmatter_size_problem, parse_frontmatter
from skillwire.core.yaml._refusals import REFUSALS

__all__ = [
    "MAX_ALIAS_COUNT",
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_FRONTMATTER_BYTES",
    "REFUSALS",
    "frontmatter_size_problem",
    "parse_frontmatter",
]
