"""How a skill named on a command line is worded: a URI that names no skill is a usage error.

Which skill a name or URI means is the host's rule (`skillwire.host.resolve`: `resolve_entry`, `did_you_mean`);
an ambiguous name (`AmbiguousName`) ends a command as a usage error (`cli/connect.run_session`).
"""

from __future__ import annotations

from skillwire.cli.args import UsageError
from skillwire.core.errors import InvalidSkillURI
from skillwire.core.uri import is_absolute, parse_uri
from skillwire.host import resolve


def skill_md_uri(text: str) -> str:
    """The SKILL.md URI for a URI written on the command line (`.../SKILL.md` or the skill root)."""
    try:
        parse_uri(text)
    except InvalidSkillURI as exc:
        raise UsageError(f"{text!r} is not a skill URI ({exc.reason}); write skill://<path>/SKILL.md") from None
    try:
        return resolve.skill_md_uri(text)
    except InvalidSkillURI as exc:
        raise UsageError(f"{text!r} does not name a skill ({exc.reason})") from None


# The command line's name for the one rule (SKILL is a URI or a name).
is_uri = is_absolute
