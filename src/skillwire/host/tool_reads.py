"""`read_skill` and `read_resource`: which skill a name or URI means, which skill answers a file, and the read.

- `read_skill` is the only activation path (`SkillHost.load`: entry, limits, approval, verified SKILL.md);
  its result names the skill root so relative references resolve.
- `read_resource` reads a file of an active skill (absolute URI, or a path relative to the skill root as
  SKILL.md writes it), lists a directory, or does an ordinary read of any other resource of that server.
  A file of a skill not loaded in this session is read by loading it only when that needs nobody asked
  (a local or already approved skill). Reading a SKILL.md this way never activates anything.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable

from skillwire.core.display import escape as one_line
from skillwire.core.errors import InvalidSkillURI, SkillNotFound, SkillwireError
from skillwire.core.uri import in_scope, is_absolute
from skillwire.host.active import ActiveSkill
from skillwire.host.gate import other_origin_loaded
from skillwire.host.host import SkillHost, SkillSession
from skillwire.host.registry import RegisteredSkill
from skillwire.host.search import SkillSearch
from skillwire.host.tool_messages import _Refusal, existing_files_text, explain, loaded_header, relative_paths


class SkillReads:
    """`read_skill` and `read_resource` over one host, in one conversation (`session`: the skills it loaded
    decide what a relative path and a cross-origin read mean); `SkillTools` dispatches to it. `refresh`
    relists every origin, for a name or URI of a server this host has not listed yet."""

    def __init__(
        self,
        host: SkillHost,
        session: SkillSession,
        search: SkillSearch,
        refresh: Callable[[], Awaitable[list[str]]],
    ) -> None:
        self.host = host
        self.session = session
        self._search = search
        self._refresh = refresh

    def resolve_skill_uri(self, server: str, uri: str) -> str:
        """The SKILL.md URI `read_skill` would load for `uri` (a URI, or a listed skill's bare or qualified
        name); raises an exception whose text is the tool error when it names no skill or several."""
        return self._resolve_skill_uri(server, uri)

    def _resolve_skill_uri(self, server: str, uri: str) -> str:
        """The SKILL.md URI for `uri`; a bare or qualified name of a listed skill of that server is accepted."""
        if is_absolute(uri):
            return uri
        matches = [
            s
            for s in self.host.registry
            if s.ref.origin == server and uri in (s.name, s.display_name, s.display_name.split("/", 1)[-1])
        ]
        if len({s.ref.uri for s in matches}) == 1:
            return matches[0].ref.uri
        if matches:
            raise _Refusal(
                f"{uri!r} names several skills of server {server!r}: "
                + ", ".join(s.ref.uri for s in matches)
                + ". Pass one of these URIs."
            )
        raise _Refusal(self._no_such_skill(server, uri))

    def _no_such_skill(self, server: str, uri: str) -> str:
        candidates = {s.ref.uri: s for s in self.host.registry if s.ref.origin == server}
        close = difflib.get_close_matches(uri, list(candidates), n=3, cutoff=0.6)
        hint = f" Close matches: {', '.join(close)}." if close else ""
        return (
            f"Not found: server {server!r} lists no skill at {uri!r}.{hint} Use list_skills (with a query) to find "
            "the skill, then pass its server and uri exactly as shown."
        )

    async def read_skill(self, server: str, uri: str) -> str:
        if not is_absolute(uri) and server not in self.host.registry.origins():
            await self._refresh()  # a name is looked up in the listing, which this host may not have yet
        skill_uri = self._resolve_skill_uri(server, uri)
        try:
            skill = await self.session.load(server, skill_uri)
        except SkillNotFound:
            if server not in self.host.registry.origins():
                await self._refresh()  # so the refusal can name close matches
            raise _Refusal(self._no_such_skill(server, skill_uri)) from None
        except InvalidSkillURI as exc:
            raise _Refusal(f"Not a skill URI: {exc}. Pass the uri exactly as list_skills shows it.") from None
        self._search.note_body_known(skill.ref.origin, skill.ref.uri)
        paths = relative_paths(skill)
        others = [p for p in paths if skill.path.file_uri(p) != skill.ref.uri]
        registered = self.host.registry.get(skill.ref)
        name = registered.display_name if registered is not None else skill.name
        header = loaded_header(
            name,
            server,
            skill.root_uri,
            None if skill.entry.is_dynamic else others,
            skill.allowed_tools,
        )
        return header + "\n" + skill.instructions.render()

    # -- read_resource ------------------------------------------------------------------------------------------------

    def _active_of(self, server: str) -> list[ActiveSkill]:
        """The active skills of one server, most recent first, one per skill."""
        seen: set[str] = set()
        out: list[ActiveSkill] = []
        for skill in reversed(self.session.active):
            if skill.active and skill.ref.origin == server and skill.ref.uri not in seen:
                seen.add(skill.ref.uri)
                out.append(skill)
        return out

    def _preapproved(self, skill: RegisteredSkill) -> bool:
        """Whether loading `skill` needs nobody asked: a local skill (local folders load without approval),
        or one with an approval in the host's persistent store. Loading it to answer a read therefore
        widens nothing: `read_skill` would load it without a question too."""
        if skill.kind == "local":
            return True
        try:
            return self.host.approvals.get(skill.ref) is not None
        except SkillwireError:
            return False

    def _listed_holding(self, server: str, uri: str) -> list[RegisteredSkill]:
        """The listed skills of `server` whose root holds `uri`, innermost first."""
        bare = uri.rstrip("/")
        found = [
            s
            for s in self.host.registry
            if s.ref.origin == server and (bare == s.entry.path.root_uri or s.entry.path.file_path_of(bare) is not None)
        ]
        return sorted(found, key=lambda s: -len(s.entry.path.segments))

    async def _load_for_read(self, skill: RegisteredSkill, file_uri: str) -> ActiveSkill:
        """Load a pre-approved skill to read one of its files; a refusal names the file and the way on."""
        try:
            return await self.session.load(skill.ref.origin, skill.ref.uri)
        except SkillwireError as exc:
            raise _Refusal(
                f"{file_uri} is a file of the skill {skill.ref.uri} (server {skill.ref.origin!r}), which is not "
                f"loaded, and loading it now failed: {explain(exc)}"
            ) from None

    async def _holders_to_load(self, server: str, uri: str) -> list[RegisteredSkill]:
        """The listed skills of `server` holding `uri` that a read may load, innermost first: none while a
        skill of another server is loaded (that read is a cross-origin read, asked about as such: host/gate.py)."""
        if other_origin_loaded(self.session.active, server) is not None:
            return []
        if server not in self.host.registry.origins():
            await self._refresh()
        return self._listed_holding(server, uri)

    async def read_resource(self, server: str, uri: str) -> str:
        if not is_absolute(uri):
            return await self._read_relative(server, uri)
        bare = uri.rstrip("/")
        holders: list[ActiveSkill] = [
            s for s in self._active_of(server) if bare == s.root_uri or s.path.file_path_of(bare) is not None
        ]
        if not holders:
            # A file of a skill not loaded in this session (a client that starts a new bridge per call, or
            # a full URI given before read_skill): a pre-approved skill is loaded for it; any other is a
            # refusal naming the skill to load. Only then is it an ordinary resource read.
            ready = [s for s in await self._holders_to_load(server, bare) if self._preapproved(s)]
            if ready and not bare.endswith("/SKILL.md"):  # reading a SKILL.md never activates anything
                holders = [await self._load_for_read(ready[0], bare)]
        if holders:
            # A skill nested inside another active one: the skill whose manifest lists the file (or the
            # directory) answers; only when none does is it "no such file" of the innermost.
            listing = [s for s in holders if s.entry.is_dynamic or bare in {f.uri for f in s.entry.files}]
            directory = [s for s in holders if _is_directory_of(s, bare)]
            innermost = max(holders, key=lambda s: len(s.path.segments))
            return await self._read_in_skill((listing or directory or [innermost])[0], uri, uri)
        return (await self.session.read_resource(server, uri)).render()  # asks across origins (host/gate.py)

    def _listed_with_file(self, server: str, reference: str) -> list[tuple[RegisteredSkill, str]]:
        """(skill, the file's full URI) for each listed skill of `server` whose manifest has `reference`."""
        found: list[tuple[RegisteredSkill, str]] = []
        for skill in self.host.registry:
            if skill.ref.origin != server or skill.entry.is_dynamic:
                continue
            try:
                target = skill.entry.path.resolve(reference)
            except InvalidSkillURI:
                continue
            if skill.entry.file(target) is not None:
                found.append((skill, target))
        return found

    async def _read_relative(self, server: str, reference: str) -> str:
        active = self._active_of(server)
        if not active:
            # No skill of that server is loaded in this session: a client that runs each call in a new
            # bridge (langchain-mcp-adapters' default) loaded it in another one. Resolve against the
            # pre-approved skills (persistent approvals, local folders): nothing is widened.
            if other_origin_loaded(self.session.active, server) is None:
                if server not in self.host.registry.origins():
                    await self._refresh()
                candidates = self._listed_with_file(server, reference)
            else:
                candidates = []  # a skill of another server is loaded: reading this one's files is not its business
            # Never its SKILL.md: reading a SKILL.md never activates anything.
            ready = [(s, t) for s, t in candidates if self._preapproved(s) and not t.endswith("/SKILL.md")]
            if len(ready) == 1:
                listed_skill, target = ready[0]
                loaded_skill = await self._load_for_read(listed_skill, target)
                return await self._read_in_skill(loaded_skill, target, reference)
            if len(ready) > 1:
                raise _Refusal(
                    f"{reference!r} is a file of more than one skill of server {server!r}: "
                    + ", ".join(target for _, target in ready)
                    + ". Pass the full URI of the one you mean."
                )
            loaded = sorted({f"{s.ref.origin}: {s.ref.uri}" for s in self.session.active if s.active})
            elsewhere = f" Loaded skills: {'; '.join(loaded)}." if loaded else ""
            if candidates:
                holder, target = candidates[0]
                others = f" (also in {len(candidates) - 1} other skill(s))" if len(candidates) > 1 else ""
                raise _Refusal(
                    f"{reference!r} is a path relative to a skill's root; no skill of server {server!r} is loaded."
                    f"{elsewhere} It is {target}, a file of the skill {holder.ref.uri}{others}: load that skill "
                    f"with read_skill(server={server!r}, uri={holder.ref.uri!r}) first, then read the file again."
                )
            raise _Refusal(
                f"{reference!r} is a path relative to a skill's root, but no skill of server {server!r} is loaded "
                f"and no listed skill of it has that file.{elsewhere} Load the skill with read_skill first, or pass "
                "the file's full URI."
            )
        holders: list[tuple[ActiveSkill, str]] = []
        for skill in active:
            try:
                target = skill.path.resolve(reference) if reference.strip("./") else skill.root_uri
            except InvalidSkillURI:
                continue
            if skill.entry.is_dynamic or target == skill.root_uri or target in {f.uri for f in skill.entry.files}:
                holders.append((skill, target))
                continue
            if _is_directory_of(skill, target.rstrip("/")):
                holders.append((skill, target))
        static = [h for h in holders if not h[0].entry.is_dynamic]
        if len(static) > 1:
            raise _Refusal(
                f"{reference!r} exists in more than one loaded skill of server {server!r}: "
                + ", ".join(target for _, target in static)
                + ". Pass the full URI of the one you mean."
            )
        if static or holders:
            skill, target = (static or holders)[0]
            return await self._read_in_skill(skill, target, reference)
        names = " and ".join(repr(s.ref.uri) for s in active[:3])
        try:
            full = f" ({active[0].path.resolve(reference)})"
        except InvalidSkillURI:
            full = ""
        raise _Refusal(
            f"No such file in this skill: {reference!r}{full} is not in the manifest of {names} (server {server!r}). "
            + existing_files_text(active[0], reference)
        )

    async def _read_in_skill(self, skill: ActiveSkill, uri: str, as_given: str) -> str:
        """A file of an active skill (verified), or one of its directories (from the manifest)."""
        bare = uri.rstrip("/")
        if skill.entry.is_dynamic or bare in {f.uri for f in skill.entry.files}:
            return (await skill.read(bare)).render()
        if not _is_directory_of(skill, bare):
            relative = skill.path.file_path_of(bare) or as_given
            raise _Refusal(
                f"No such file in this skill: {as_given!r}{f' ({bare})' if as_given != bare else ''} is not in the "
                f"manifest of {skill.ref.uri!r} "
                f"(server {skill.ref.origin!r}); nothing was fetched. " + existing_files_text(skill, relative)
            )
        view = skill.list_directory(bare)
        lines = [f"{one_line(d)}/ (directory)" for d in view.directories] + [
            f"{one_line(f.uri)} ({f.size} bytes)" for f in view.files
        ]
        return (
            f"Directory {one_line(view.uri)} of skill {one_line(skill.ref.uri)} (origin {skill.ref.origin!r}), "
            "from its verified manifest:\n" + "\n".join(lines)
        )


def _is_directory_of(skill: ActiveSkill, uri: str) -> bool:
    """`uri` (no trailing slash) is the root or a directory of the skill's held manifest."""
    return uri == skill.root_uri or any(f.uri != uri and in_scope(f.uri, uri) for f in skill.entry.files)
