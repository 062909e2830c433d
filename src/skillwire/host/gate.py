"""The cross-origin read rule: when a read of one server's resource must be asked about.

Skill instructions are untrusted input, and a skill of one server must not be able to make the model
read another server's data without the person's say. Which skill the model is "acting on" cannot be
known from the conversation, so the rule looks at every skill loaded in it (one `SkillSession`), never
at the most recent one alone: loading another skill must never widen what an earlier skill's
instructions can reach.

The rule: while a skill of another origin is loaded, a read of `uri` from `origin` asks, unless `uri`
is inside a loaded skill of `origin` itself (its root: a listed file, a directory of it, or a dynamic
skill's content; an unlisted file there is refused on its own, never fetched). With skills of one
origin only (or none) nothing is asked: that server's own skills reading that server is not crossing.

Used by `SkillHost.read_resource` (which asks the policy), by `SkillTools` (a read it would answer by
loading a pre-approved skill is not one while another origin's skill is loaded) and by the bridge's
pre-flight (which must know before the call whether to ask); `tests/test_rule_owners.py` fails on a
second copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillwire.host.active import ActiveSkill
from skillwire.host.policy import CrossOriginRead


def other_origin_loaded(active: Sequence[ActiveSkill], origin: str) -> ActiveSkill | None:
    """The most recently loaded skill still active whose origin is not `origin`, if any."""
    return next((s for s in reversed(active) if s.active and s.ref.origin != origin), None)


def cross_origin_read(
    active: Sequence[ActiveSkill], origin: str, uri: str, *, acting: ActiveSkill | None = None
) -> CrossOriginRead | None:
    """The question a read of `uri` from `origin` needs in a session with these loaded skills, or None.

    The question names the most recently loaded skill of another origin (the one whose instructions most
    likely asked for the read); the person's answer covers exactly that (skill, origin, uri). An
    embedding application that says which skill a read is for (`acting`, of another origin) is always
    asked about that one."""
    if acting is not None and acting.ref.origin != origin:
        return CrossOriginRead(acting.ref, origin, uri)
    other = other_origin_loaded(active, origin)
    if other is None:
        return None
    bare = uri.rstrip("/")
    for skill in active:
        if (
            skill.active
            and skill.ref.origin == origin
            and (bare == skill.root_uri or skill.path.file_path_of(bare) is not None)
        ):
            return None
    return CrossOriginRead(other.ref, origin, uri)
