"""The one arithmetic of what a host with listing limits keeps (core/host_limits.py), on Claude Code 2.1.337's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from skillwire.core.host_limits import CLAUDE_CODE, HostLimits, entry_size, host_cut


def test_a_300_skill_page_keeps_the_first_100() -> None:
    # What Claude Code did against a 300-skill server: "stopped after 1 page / 100 valid entries with more pending".
    cut = host_cut(CLAUDE_CODE, [[500] * 300])
    assert (cut.kept, cut.kept_bytes, cut.pages, cut.stopped) == (100, 50_000, 1, "skills")
    assert cut.why == "it keeps at most 100 skills"


def test_exactly_100_skills_is_no_cut() -> None:
    cut = host_cut(CLAUDE_CODE, [[500] * 60, [500] * 40])
    assert (cut.kept, cut.pages, cut.stopped, cut.cut) == (100, 2, None, False)


def test_a_page_pending_after_100_skills_is_a_cut_and_is_not_read() -> None:
    def unread() -> Iterator[int]:
        raise AssertionError("the host never reads a page past its skill limit")
        yield 0

    cut = host_cut(CLAUDE_CODE, [[10] * 100, unread()])
    assert (cut.kept, cut.pages, cut.stopped) == (100, 1, "skills")


def test_the_page_limit_stops_small_pages() -> None:
    cut = host_cut(CLAUDE_CODE, [[100, 100]] * 25)
    assert (cut.kept, cut.pages, cut.stopped) == (40, 20, "pages")
    assert cut.why == "it reads at most 20 pages"


def test_the_byte_budget_drops_the_entry_that_would_pass_it() -> None:
    cut = host_cut(CLAUDE_CODE, [[6_000] * 100])
    assert (cut.kept, cut.kept_bytes, cut.stopped) == (87, 522_000, "bytes")  # 88 x 6,000 > 524,288
    assert cut.why == "it reads at most 512 KiB of entries"
    assert host_cut(CLAUDE_CODE, [[512 * 1024]]).kept == 1  # up to the budget inclusive


def test_entries_past_the_cut_are_never_asked_for() -> None:
    asked: list[int] = []

    def sizes() -> Iterator[int]:
        for i in range(1_000):
            asked.append(i)
            yield 1

    assert host_cut(CLAUDE_CODE, [sizes()]).kept == 100
    assert len(asked) == 101  # the 101st shows the host more was pending


@pytest.mark.parametrize(
    ("entry", "size"),
    [
        ({"uri": "skill://a/SKILL.md"}, len(b'{"uri":"skill://a/SKILL.md"}')),
        ({"d": "é ✓"}, len('{"d":"é ✓"}'.encode())),
    ],
)
def test_an_entry_is_measured_as_compact_utf8_json(entry: dict[str, str], size: int) -> None:
    assert entry_size(entry) == size


def test_limits_describe_themselves() -> None:
    assert CLAUDE_CODE.describe() == "100 skills, 20 pages and 512 KiB of entries"
    assert HostLimits("h", 1, 1, 1536, 1).describe() == "1 skills, 1 pages and 1.5 KiB of entries"
