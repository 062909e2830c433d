"""URI-structure helpers (`core/uri.py`: `ancestors`, `lineage`, `parent_of`, `child_name`) against the
inline slicing they replaced (issue 24 item 3), on the walks a snapshot does: laying out every file's
directories and finding the skill that answers a directory read.

    python -m bench.uri_bench [--skills 10000] [--repeat 5]

The "inline" functions below are the code as it was in `catalog/snapshot.py`, kept here only as the
baseline. Each figure is the best of `--repeat` runs (CPU time, the least disturbed); the ratio is
helpers / inline (1.00 = the same cost).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from urllib.parse import unquote

from skillwire.core.uri import ancestors, child_name, lineage, parent_of


def file_uris(skills: int) -> list[str]:
    out = []
    for i in range(skills):
        root = f"skill://acme/team-{i % 50}/skill-{i}"
        out.append(f"{root}/SKILL.md")
        out.extend(f"{root}/{folder}/file-{j}.md" for folder in ("references", "scripts", "assets") for j in range(3))
    return out


def layout_inline(uris: list[str]) -> int:
    children: dict[str, dict[str, tuple[str, bool]]] = {}
    for uri in uris:
        scheme_sep = uri.index("://") + 3
        cut, is_leaf = len(uri), True
        while True:
            slash = uri.rfind("/", scheme_sep, cut)
            if slash < 0:
                break
            parent, name = uri[:slash], unquote(uri[slash + 1 : cut])
            kids = children.setdefault(parent, {})
            if name in kids:
                break
            kids[name] = (uri[:cut], is_leaf)
            cut, is_leaf = slash, False
    return len(children)


def layout_helpers(uris: list[str]) -> int:
    children: dict[str, dict[str, tuple[str, bool]]] = {}
    for uri in uris:
        child, is_leaf = uri, True
        for parent in ancestors(uri):
            name = child_name(child)
            kids = children.setdefault(parent, {})
            if name in kids:
                break
            kids[name] = (child, is_leaf)
            child, is_leaf = parent, False
    return len(children)


def lookup_inline(uris: list[str], roots: set[str]) -> int:
    found = 0
    for uri in uris:
        scheme_sep = uri.find("://") + 3
        candidate, cut = uri, len(uri)
        while True:
            if candidate in roots:
                found += 1
                break
            cut = uri.rfind("/", scheme_sep, cut)
            if cut < 0:
                break
            candidate = uri[:cut]
    return found


def lookup_helpers(uris: list[str], roots: set[str]) -> int:
    found = 0
    for uri in uris:
        for candidate in lineage(uri):
            if candidate in roots:
                found += 1
                break
    return found


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    uris = file_uris(args.skills)
    roots = {parent_of(u) or u for u in uris if u.endswith("/SKILL.md")}
    directories = sorted({a for u in uris for a in ancestors(u)})
    cases = [
        ("lay out directories", lambda: layout_inline(uris), lambda: layout_helpers(uris), len(uris)),
        ("skill of a directory", lambda: lookup_inline(directories, roots), lambda: lookup_helpers(directories, roots),
         len(directories)),
    ]  # fmt: skip
    print(f"{args.skills:,} skills, {len(uris):,} file URIs, {len(directories):,} directories; best of {args.repeat}")
    print(f"{'walk':<22} {'inline µs/URI':>14} {'helpers µs/URI':>15} {'ratio':>6}")
    for name, inline, helpers, n in cases:
        (t_inline, r_inline), (t_helpers, r_helpers) = best(inline, args.repeat), best(helpers, args.repeat)
        assert r_inline == r_helpers, (name, r_inline, r_helpers)  # both walks find the same thing
        print(f"{name:<22} {t_inline / n * 1e6:>14.3f} {t_helpers / n * 1e6:>15.3f} {t_helpers / t_inline:>6.2f}")


if __name__ == "__main__":
    main()
