"""DuckDB's benchmark files as sqllogictest files, so the slt runner replays them as an oracle.

    python -m dau_scheduler.benchmark_files DUCKDB_SOURCE OUT [--scale-down 100]
    cd DUCKDB_SOURCE && python -m dau_scheduler.slt OUT --device polars ...

DuckDB's ``benchmark/**/*.benchmark`` files (its micro benchmarks, h2oai, ClickBench, ...) each
build tables (``load``, ``init``) and time one query (``run``), some with a query over its
answer (``result_query``). They are written in their own format: a ``template`` file with
``KEY=VALUE`` lines filled in, ``include`` of shared parts, ``argument`` defaults, and blocks
that read their SQL from a file of the DuckDB source tree. Each is written out as a ``.test``
file under ``OUT`` (the same relative path): the setup as ``statement ok`` records and each
query as a ``query`` record, whose answer the runner takes from DuckDB itself.

The benchmarks' tables are sized for timing (10M to 250M rows): every integer literal of at
least 200,000 (underscores allowed) in the setup and the queries is divided by
``--scale-down`` (at least 1,000 is kept), so ``range(0, 10000000)`` builds 100K rows and a
filter constant scales with it. A file whose template, include or SQL file is missing, or that
cannot be read, is reported and skipped. ``require`` lines are kept: the runner leaves out the
files needing an extension this DuckDB lacks (``httpfs``, ``tpch``, ...). Paths in the SQL are
relative to the DuckDB source tree, so the runner is started there.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

#: Blocks of SQL, ended by a blank line, or read whole from the file named after the keyword.
_BLOCKS = ("load", "run", "init", "cleanup", "reload")
#: Integer literals (digits, underscores between them), not inside names, numbers or quotes.
_INTEGER = re.compile(r"(?<![\w.'])(\d[\d_]{5,})(?![\w.'])")
_SMALLEST_SCALED = 200_000


def scaled(sql: str, factor: int) -> str:
    """``sql`` with each integer literal of at least 200,000 divided by ``factor`` (at least
    1,000 kept)."""
    if factor <= 1:
        return sql

    def divide(match: re.Match[str]) -> str:
        value = int(match.group(1).replace("_", ""))
        return str(max(value // factor, 1000)) if value >= _SMALLEST_SCALED else match.group(0)

    return _INTEGER.sub(divide, sql)


@dataclass
class Benchmark:
    """What one benchmark file (with its template and includes) holds."""

    blocks: dict[str, str] = field(default_factory=dict)
    requires: list[str] = field(default_factory=list)
    result_queries: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)

    def fill(self, text: str) -> str:
        for key, value in self.values.items():
            text = text.replace("${" + key + "}", value)
        return text


def read(relative: str, root: Path, into: Benchmark | None = None) -> Benchmark:
    """The benchmark at ``relative`` (a path under the DuckDB source ``root``, as the files
    name each other). Raises OSError or ValueError naming what could not be read."""
    bench = into if into is not None else Benchmark()
    lines = (root / relative).read_text().splitlines()
    at = 0

    def next_line() -> str | None:
        nonlocal at
        if at >= len(lines):
            return None
        at += 1
        return bench.fill(lines[at - 1])

    def until(end: str) -> list[str]:
        taken = []
        while (line := next_line()) is not None and line != end:
            taken.append(line)
        return taken

    while (line := next_line()) is not None:
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split(" ")
        keyword = words[0].lower()
        if keyword in _BLOCKS:
            body = "\n".join(until(""))
            if len(words) > 1 and words[1]:
                body = bench.fill((root / words[1]).read_text())
            bench.blocks[keyword] = body.strip()
        elif keyword == "require":
            bench.requires.append(words[1].lower())
        elif keyword == "template":
            for pair in until(""):
                key, _, value = pair.partition("=")
                bench.values[key] = value
            return read(words[1], root, bench)  # the template is the rest of the file
        elif keyword == "argument":
            bench.values.setdefault(words[1], words[2])
        elif keyword == "include":
            read(words[1], root, bench)
        elif keyword == "result_query":
            bench.result_queries.append("\n".join(until("----")))
            until("")
        elif keyword in ("result", "assert"):
            if keyword == "assert":
                until("----")
            until("")
        # name, group, subgroup, cache, storage, retry, resultmode, ...: timing only
    return bench


def _statements(sql: str) -> list[str]:
    return [s.query.strip() for s in duckdb.extract_statements(sql)]


def as_test(bench: Benchmark, source: str, factor: int) -> str:
    """The sqllogictest text of ``bench``: its setup as statements, its queries as queries."""
    if "run" not in bench.blocks:
        raise ValueError("no run block")
    out = [f"# from {source}, integer literals of 200,000 and more divided by {factor}"]
    out += [f"require {name}\n" for name in bench.requires]
    out.append("statement ok\nSET enable_progress_bar = false\n")
    for block in ("init", "load"):
        for sql in _statements(scaled(bench.blocks.get(block, ""), factor)):
            out.append(f"statement ok\n{sql}\n")
    *setup, query = _statements(scaled(bench.blocks["run"], factor))
    out += [f"statement ok\n{sql}\n" for sql in setup]
    for sql in [query, *(scaled(q, factor).strip() for q in bench.result_queries)]:
        out.append(f"query I\n{sql}\n----\n")
    return "\n".join(out)


def convert(root: Path, out: Path, factor: int = 100) -> tuple[int, list[str]]:
    """Write every benchmark under ``root/benchmark`` as a test under ``out``; how many were
    written, and each one skipped with why."""
    written, skipped = 0, []
    for path in sorted((root / "benchmark").rglob("*.benchmark")):
        relative = path.relative_to(root)
        try:
            text = as_test(read(str(relative), root), str(relative), factor)
        except (OSError, ValueError, IndexError, duckdb.Error) as exc:
            skipped.append(f"{relative}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        target = out / relative.with_suffix(".test")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n")
        written += 1
    return written, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a DuckDB source tree (holding benchmark/)")
    parser.add_argument("out", type=Path, help="where the .test files are written")
    parser.add_argument("--scale-down", type=int, default=100, metavar="F")
    args = parser.parse_args(argv)
    if not (args.root / "benchmark").is_dir():
        parser.error(f"{args.root} holds no benchmark/ folder")
    if args.scale_down < 1:
        parser.error(f"--scale-down must be at least 1, not {args.scale_down}")
    written, skipped = convert(args.root, args.out, args.scale_down)
    for line in skipped:
        print("skipped", line)
    print(f"{written} benchmark files written to {args.out}, {len(skipped)} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
