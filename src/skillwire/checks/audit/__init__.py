"""The audit behind `skillwire check`: what a skills server does on the wire, held against SEP-2640.

`audit(send, capabilities)` talks to one server through `send` (one raw request in, the raw result
object out, `MCPError` for a JSON-RPC error) and returns every `Finding`. It never trusts a client
wrapper: entries are validated here, field by field, so a broken entry is reported on its own skill
instead of being skipped. The steps:

1. Capabilities: the extension (an inline settings object), `directoryRead`, the `resources` capability.
2. `skills/list`, every page: `resultType`, `ttlMs`/`cacheScope`, the cursor chain, each entry's shape
   (URI, name rules, frontmatter, `resources`, digests, sizes, limits), entries split across pages.
3. Concurrently, at most `concurrency` requests in flight: `skills/get` of every listed skill; one
   `resources/read` of every listed file (size, digest, and the SKILL.md frontmatter compared with the
   entry's under YAML 1.2); `resources/list` (a resource inside a skill that its manifest omits);
   error codes for a skill and files that cannot exist.
4. With `directoryRead: true`: `resources/directory/read` of every skill root and every directory the
   manifest implies, plus any unexpected subdirectory, compared child by child with the manifest.

Every finding carries a stable rule id (`RULES`), its severity (a MUST broken is a failure, a SHOULD is a
warning), the skill URI (or `server`), the requirement's section tag and a message saying exactly what
differed.

The package, by job: `rules` (the rule table), `records` (what an audit keeps), `state` (the one
state every step shares: findings, progress, the skills listed, requests), `listing` (steps 1-2),
`reads` (step 3), `directories` (step 4), each an object over that state, and `coordinator` (builds
them, the order, and `audit()`).
"""

# The names the command line and the tests use, re-exported (`X as X`) so `skillwire.checks.audit` keeps
# its interface; the package stays internal (no `__all__`), as the module was.
from skillwire.checks.audit.coordinator import Auditor as Auditor
from skillwire.checks.audit.coordinator import audit as audit
from skillwire.checks.audit.records import AuditResult as AuditResult
from skillwire.checks.audit.records import AuditStats as AuditStats
from skillwire.checks.audit.rules import ENTRY_RULES as ENTRY_RULES
from skillwire.checks.audit.rules import MODERN_ERA as MODERN_ERA
from skillwire.checks.audit.rules import RULES as RULES
from skillwire.checks.audit.rules import SERVER as SERVER
from skillwire.checks.audit.rules import Progress as Progress
from skillwire.checks.audit.rules import Send as Send
