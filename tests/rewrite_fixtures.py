"""Golden rewrite fixtures: ``tests/fixtures/rewrite/*.sql``, each an input query with the partial,
complement (where the host adds an outer join's unmatched rows) and final SQL (or the refusal)
it compiles to. ``python tests/rewrite_fixtures.py DATA`` rewrites
their expected sections from the current compiler; review the diff before committing it."""

from __future__ import annotations

import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "rewrite"
SECTIONS = ("input", "partial", "complement", "final", "refusal")


def read(path: Path) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in path.read_text().splitlines():
        if line.startswith("-- ") and line[3:].strip() in SECTIONS:
            current = line[3:].strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}


def write(path: Path, sections: dict[str, str]) -> None:
    text = "".join(f"-- {k}\n{sections[k].strip()}\n" for k in SECTIONS if sections.get(k))
    path.write_text(text)


if __name__ == "__main__":
    from dau_scheduler import Session

    with Session(sys.argv[1], device=None) as session:
        for fixture in sorted(FIXTURES.glob("*.sql")):
            sections = read(fixture)
            plan = session.explain(sections["input"])
            write(
                fixture,
                {
                    "input": sections["input"],
                    "partial": plan.partial_sql or "",
                    "complement": plan.complement_sql or "",
                    "final": plan.final_sql or "",
                    "refusal": plan.refusal or "",
                },
            )
            print("wrote", fixture.name)
