"""How well `list_skills(query)` finds the skill a task needs, on a real catalog, next to a library baseline.

    python -m bench.search_eval [--set tune|heldout|both] [--sweep] [--scale 10000] [--json FILE]

Items: `bench/search_items/{tune,heldout}.txt`, written for this bench (not generated): per line the
acceptable skills, the short query a model would send, and the whole task as a user would type it,
written from each skill's purpose without its name or its description's rare words. The tuning set
chose `search/rank.py`'s `Ranking`; the held-out set was written at the same time and is only run to
report, never while choosing. An accepted skill that is nested in a listed skill's folder (so not listed
itself) is found by finding the outer skill (`nested_owners`).

The corpus is `../shared/corpora/awesome-copilot/skills` (419 real skills, MIT) read in place through
a real `SkillHost` local origin, so skills are indexed with their bodies as `--local` skills are; the
repository ships only the items. Without the corpus this prints why and exits 0.

Reported, per item set and form (task, query): recall@1, recall@5, MRR@10, for
- `skillwire`: `SkillSearch` as shipped (bodies, stopwords, aliases, short-query prefixes, cut-off);
- `skillwire-before`: the ranking main had before (name, description and origin only; no stopwords;
  every word of 3+ letters prefix-matched; weights 5/1/0.5), emulated with the same class;
- `bm25s`: the `bm25s` library (BM25, k1=1.5, b=0.75, English stopwords) over name + description + body.
- `skillwire-server`: the server's `find_skills` tool (`server/search_tool.py`) over the same folder
  served as `skillwire serve` serves it; it must rank exactly as `skillwire` (the bridge's list_skills),
  and the run says so: every item's every page and total are compared (`server_matches_bridge`).
`--sweep` tries weight/cut-off variants on the tuning set only. `--scale N` times (CPU) the first query
of a new index, of a restart over an index file and after one change, and later queries, over N
generated skills with bodies, and the memory and file the index takes.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.host import SkillHost
from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.host.search import SkillSearch
from skillwire.search import DEFAULT_RANKING, Ranking
from skillwire.server.extension import SkillsExtension
from skillwire.server.search_tool import MAX_RESULTS, SkillFinder

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "awesome-copilot" / "skills"
ITEMS = Path(__file__).resolve().parent / "search_items"

BEFORE = Ranking(
    name=5.0,
    description=1.0,
    aliases=0.0,
    origin=0.5,
    body_share=0.0,
    prefix_max_words=10_000,
    prefix_min_chars=3,
    relative_cutoff=0.0,
    cutoff_min_words=10_000,
    stopwords=False,
)


@dataclasses.dataclass(frozen=True)
class Item:
    accept: frozenset[str]
    query: str
    task: str


def load_items(name: str) -> list[Item]:
    items = []
    for line in (ITEMS / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        accept, query, task = (part.strip() for part in line.split("|", 2))
        items.append(Item(frozenset(a.strip() for a in accept.split(",")), query, task))
    return items


def nested_owners(host: SkillHost) -> dict[str, str]:
    """The name of each SKILL.md inside a listed skill's folder -> that listed skill's name.

    A SKILL.md nested in another skill's folder is one of the outer skill's files, not a skill of its own
    (the scan lists the outer one only): an item accepting the nested name is answered by finding the outer
    skill, which is what a model would load to read it. Without this such items could never be found.
    """
    listed = {skill.name for skill in host.registry}
    owners: dict[str, str] = {}
    for path in sorted(CORPUS.glob("*/*/**/SKILL.md")):
        owner = path.relative_to(CORPUS).parts[0]
        if owner not in listed:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[1:40]:
            if line.startswith("name:"):
                name = line.split(":", 1)[1].strip().strip("'\"")
                if name and name not in listed:
                    owners.setdefault(name, owner)
                break
    return owners


def resolve(items: list[Item], owners: dict[str, str]) -> list[Item]:
    """Each item with the listed skill that holds an accepted nested skill accepted too (`nested_owners`)."""
    return [
        dataclasses.replace(item, accept=item.accept | {owners[name] for name in item.accept if name in owners})
        for item in items
    ]


Ranker = Callable[[str], list[str]]  # query -> skill names, best first


def score(ranker: Ranker, items: Sequence[Item], form: str) -> dict[str, Any]:
    hits1 = hits5 = 0
    reciprocal = 0.0
    misses: list[str] = []
    for item in items:
        text = item.task if form == "task" else item.query
        ranked = ranker(text)[:10]
        position = next((i for i, name in enumerate(ranked) if name in item.accept), None)
        if position == 0:
            hits1 += 1
        if position is not None and position < 5:
            hits5 += 1
        else:
            misses.append(f"{sorted(item.accept)[0]} <- {text!r} (got {ranked[:3]})")
        if position is not None:
            reciprocal += 1 / (position + 1)
    n = len(items)
    return {"recall@1": hits1 / n, "recall@5": hits5 / n, "mrr@10": reciprocal / n, "n": n, "misses": misses}


def skillwire_ranker(host: SkillHost, ranking: Ranking, *, bodies: bool = True) -> Ranker:
    search = SkillSearch(host.indexable_body if bodies else None, ranking=ranking)

    def rank(text: str) -> list[str]:
        return [s.name for s in search.search(host.registry, text)]

    return rank


def corpus_finder(label: str = "corpus") -> tuple[SkillFinder, SkillCatalog]:
    """`find_skills` over the corpus served as `skillwire serve` serves a folder, its skills indexed under
    the label the bridge's local origin has (`corpus_host`), so both index the very same rows."""
    catalog = SkillCatalog([CORPUS], digest_cache=DigestCache())
    extension = SkillsExtension(catalog)
    return SkillFinder(lambda: catalog.snapshot, extension.request_snapshot, group=label), catalog


def server_ranker() -> Ranker:
    finder, catalog = corpus_finder()

    def rank(text: str) -> list[str]:
        page = finder.answer(catalog.snapshot, text, None, MAX_RESULTS).structured_content
        return [item["name"] for item in page["skills"]]

    return rank


def server_matches_bridge(host: SkillHost, texts: Sequence[str], page_size: int = MAX_RESULTS) -> list[str]:
    """The texts whose `find_skills` pages (every page, by its cursors) or total differ from the bridge's
    `list_skills` ranking of the same text (`SkillSearch`, what list_skills pages through); [] when none."""
    bridge = SkillSearch(host.indexable_body)
    finder, catalog = corpus_finder()
    differing = []
    for text in texts:
        expected = bridge.ranked(host.registry, text, limit=None)
        want = [skill.ref.uri for skill in expected.skills]
        got: list[str] = []
        cursor: str | None = None
        totals = set()
        while True:
            page = finder.answer(catalog.snapshot, text, cursor, page_size).structured_content
            got += [item["uri"] for item in page["skills"]]
            totals.add(page["total"])
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        if got != want or totals != {expected.total}:
            differing.append(text)
    return differing


def bm25s_ranker(host: SkillHost) -> Ranker | None:
    try:
        import bm25s  # type: ignore[import-untyped]
    except ImportError:
        return None
    skills = list(host.registry)
    corpus = [f"{s.name.replace('-', ' ')} {s.description} {host.indexable_body(s) or ''}" for s in skills]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)

    def rank(text: str) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = retriever.retrieve(tokens, k=10, show_progress=False)
        return [skills[int(i)].name for i in docs[0]]

    return rank


def corpus_host() -> SkillHost:
    host = SkillHost(use_cache=False)
    host.add_local("corpus", [CORPUS])
    return host


def print_table(rows: list[tuple[str, str, str, dict[str, Any]]]) -> None:
    print(f"{'set':8} {'ranker':18} {'form':6} {'n':>4} {'R@1':>6} {'R@5':>6} {'MRR@10':>7}")
    for set_name, ranker, form, result in rows:
        print(
            f"{set_name:8} {ranker:18} {form:6} {result['n']:>4} {result['recall@1']:>6.1%} "
            f"{result['recall@5']:>6.1%} {result['mrr@10']:>7.3f}"
        )


def sweep(host: SkillHost, items: list[Item]) -> None:
    variants: dict[str, Ranking] = {"default": DEFAULT_RANKING}
    for share in (0.6, 0.8, 1.2):
        for headings in (1.0, 2.0):
            for description in (1.0, 3.0):
                variants[f"s{share}/d{description}/h{headings}"] = dataclasses.replace(
                    DEFAULT_RANKING, body_share=share, headings=headings, description=description
                )
    for name_weight in (2.0, 6.0, 8.0):
        variants[f"n{name_weight}"] = dataclasses.replace(DEFAULT_RANKING, name=name_weight)
    for aliases in (1.0, 3.0):
        variants[f"a{aliases}"] = dataclasses.replace(DEFAULT_RANKING, aliases=aliases)
    variants["no-stopwords"] = dataclasses.replace(DEFAULT_RANKING, stopwords=False)
    variants["prefix-always"] = dataclasses.replace(DEFAULT_RANKING, prefix_max_words=10_000)
    results = []
    for label, ranking in variants.items():
        ranker = skillwire_ranker(host, ranking)
        task, query = score(ranker, items, "task"), score(ranker, items, "query")
        results.append((task["recall@5"] + query["recall@5"] + task["recall@1"], label, task, query))
    results.sort(key=lambda r: r[0], reverse=True)
    for _, label, task, query in results[:25]:
        print(
            f"{label:22} task R@1 {task['recall@1']:.1%} R@5 {task['recall@5']:.1%} | "
            f"query R@1 {query['recall@1']:.1%} R@5 {query['recall@5']:.1%}"
        )


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def _cpu_ms(action: Callable[[], object]) -> float:
    # Process time, not wall time: the machine this runs on is shared, and a query is CPU-bound.
    started = time.process_time()
    action()
    return (time.process_time() - started) * 1000


def scale(count: int) -> dict[str, float]:
    """CPU time of the first and later queries over `count` generated skills whose bodies are known.

    The generated catalog draws every word from twelve, so each query word matches a quarter of the
    skills and SQLite scores thousands of rows per query: the worst case, not a typical catalog.
    Measured: the first query of a new index (in memory), the first query of a restarted process over an
    index file written before (nothing re-indexed), a first query after one skill changed, and the
    later queries as `list_skills` asks them (first page of 50 and the count).
    """
    words = ["deploy", "invoice", "schema", "render", "audit", "billing"]
    words += ["cluster", "lint", "diagram", "ticket", "forecast", "budget"]
    registry = Registry()
    entries = []
    bodies: dict[str, str] = {}
    for i in range(count):
        name = f"skill-{i:05d}"
        uri = f"skill://{name}/SKILL.md"
        entries.append(
            SkillEntry(
                uri,
                {"name": name, "description": f"Helps with {words[i % 12]} work for team {i % 97}."},
                (ManifestFile(uri, "sha256:" + "0" * 64, 10),),
            )
        )
        bodies[uri] = (
            f"# {name}\n\n## When to use\n\nUse it for {words[i % 12]} and {words[(i * 7) % 12]} tasks.\n\n"
            + f"Steps: check the {words[(i * 5) % 12]} first, then write the result. " * 20
        )
    registry.set_origin("big", "mcp", entries)

    def body_of(skill: RegisteredSkill) -> str | None:
        return bodies.get(skill.ref.uri)

    first_query = "ceramics kiln firing schedule"
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "search.sqlite"
        before = _rss_bytes()
        search = SkillSearch(body_of)
        first_thread = time.thread_time()
        first = _cpu_ms(lambda: search.ranked(registry, first_query, limit=50))
        first_thread = (time.thread_time() - first_thread) * 1000  # the query's own thread, not the bodies'
        # Past BODIES_AT_ONCE the bodies are indexed by a background thread after the first answer: its
        # CPU is timed apart, and the later queries run on the finished index (what a synchronous build
        # gives, row for row).
        background = _cpu_ms(search.wait_for_bodies)
        grown = _rss_bytes() - before
        later: list[float] = []
        for query in ("render the invoice diagram", "audit the cluster budget forecast before deploy", "lint"):
            later += [_cpu_ms(functools.partial(search.ranked, registry, query, limit=50)) for _ in range(20)]
        grown_queried = _rss_bytes() - before  # with the postings those queries cached
        search.close()
        writer = SkillSearch(body_of, path=path)
        first_file = _cpu_ms(lambda: writer.ranked(registry, first_query, limit=50))
        writer.wait_for_bodies()
        writer.close()
        restarted = SkillSearch(body_of, path=path)
        first_restart = _cpu_ms(lambda: restarted.ranked(registry, first_query, limit=50))
        assert restarted.indexed == 0, "a restart over the same catalog re-indexed rows"
        changed = list(entries)
        changed[123] = SkillEntry(
            changed[123].uri, {"name": "skill-00123", "description": "Glazes pottery."}, changed[123].resources
        )
        registry.set_origin("big", "mcp", changed)
        after_change = _cpu_ms(lambda: restarted.ranked(registry, first_query, limit=50))
        restarted.close()
        nobody = SkillSearch()
        first_nobody = _cpu_ms(lambda: nobody.ranked(registry, first_query, limit=50))
        rare = [_cpu_ms(lambda: nobody.ranked(registry, "ceramics", limit=50)) for _ in range(20)]
        file_mb = path.stat().st_size / 1e6
    return {
        "skills": count,
        "first_query_ms": first,
        "first_query_thread_ms": first_thread,
        "bodies_in_background_ms": background,
        "first_query_writing_file_ms": first_file,
        "first_query_after_restart_ms": first_restart,
        "first_query_after_one_change_ms": after_change,
        "first_query_without_bodies_ms": first_nobody,
        "later_query_p50_ms": statistics.median(later),
        "later_query_max_ms": max(later),
        "rare_word_query_p50_ms": statistics.median(rare),
        "index_rss_mb_per_1000": grown / 1e6 / (count / 1000),
        "index_rss_mb_per_1000_after_queries": grown_queried / 1e6 / (count / 1000),
        "index_file_mb_per_1000": file_mb / (count / 1000),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_eval", description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=["tune", "heldout", "both"], default="both")
    parser.add_argument("--sweep", action="store_true", help="try ranking variants on the tuning set")
    parser.add_argument("--scale", type=int, default=0, help="also time queries over N generated skills")
    parser.add_argument("--misses", action="store_true", help="print each missed item")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {}
    if not CORPUS.is_dir():
        print(f"search_eval: skipped: the corpus {CORPUS} is absent (it lives in ../shared beside the repo)")
    else:
        host = corpus_host()
        print(f"corpus: {CORPUS} ({len(host.registry)} skills; the only corpus available here)")
        owners = nested_owners(host)
        if args.sweep:
            sweep(host, resolve(load_items("tune"), owners))
            return 0
        rankers: dict[str, Ranker] = {
            "skillwire": skillwire_ranker(host, DEFAULT_RANKING),
            "skillwire-before": skillwire_ranker(host, BEFORE, bodies=False),
            "skillwire-server": server_ranker(),
        }
        baseline = bm25s_ranker(host)
        if baseline is not None:
            rankers["bm25s"] = baseline
        else:
            print("bm25s is not installed (pip install -e '.[dev]'): the baseline row is missing")
        rows = []
        sets = ["tune", "heldout"] if args.set == "both" else [args.set]
        for set_name in sets:
            items = resolve(load_items(set_name), owners)
            nested = sum(1 for item in load_items(set_name) if any(name in owners for name in item.accept))
            if nested:
                print(f"{set_name}: {nested} items accept a skill nested in a listed one; its outer skill counts too")
            for ranker_name, ranker in rankers.items():
                for form in ("task", "query"):
                    result = score(ranker, items, form)
                    rows.append((set_name, ranker_name, form, result))
                    out[f"{set_name}/{ranker_name}/{form}"] = result
        print_table(rows)
        texts = [text for name in sets for item in load_items(name) for text in (item.query, item.task)]
        differing = server_matches_bridge(host, texts)
        out["server_pages_differing"] = differing
        print(
            f"find_skills (server) vs list_skills (bridge): {len(texts) - len(differing)} of {len(texts)} queries "
            "rank identically, every page and total" + ("" if not differing else f"; differing: {differing[:5]}")
        )
        if args.misses:
            for set_name, ranker_name, form, result in rows:
                if ranker_name == "skillwire":
                    for miss in result["misses"]:
                        print(f"  miss {set_name}/{form}: {miss}")
    if args.scale:
        timing = scale(args.scale)
        out["scale"] = timing
        with open("/proc/loadavg") as loadavg:
            load = loadavg.read().split()[0]
        print(
            f"{timing['skills']:,} skills with bodies, CPU time (load average {load}): first query of a new "
            f"index {timing['first_query_ms']:.0f} ms (its thread {timing['first_query_thread_ms']:.0f} ms; bodies "
            f"then indexed in the background in {timing['bodies_in_background_ms']:.0f} ms; "
            f"{timing['first_query_writing_file_ms']:.0f} ms writing "
            f"the file; without bodies {timing['first_query_without_bodies_ms']:.0f} ms), after a restart "
            f"{timing['first_query_after_restart_ms']:.0f} ms, after one skill changed "
            f"{timing['first_query_after_one_change_ms']:.1f} ms; later queries p50 "
            f"{timing['later_query_p50_ms']:.1f} ms (max {timing['later_query_max_ms']:.1f} ms; a rare word "
            f"{timing['rare_word_query_p50_ms']:.2f} ms); index ~{timing['index_rss_mb_per_1000']:.2f} MB RSS "
            f"({timing['index_rss_mb_per_1000_after_queries']:.2f} MB with the later queries' cached postings), "
            f"{timing['index_file_mb_per_1000']:.2f} MB of file per 1,000 skills"
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
