"""The memory-budget planner (seed 004): how to run a table of ``n_rows`` x ``n_cols`` within a
budget, what this machine has, and a row count that reads a file in constant memory.

Strategies, by the data's bytes ``B`` against the budget ``M`` (``mem_budget_mb`` MiB):

- ``in_memory`` when ``B <= IN_MEMORY_FRACTION * M``: the query's working memory (hash tables,
  intermediate copies) is about as large as its input, so half the budget holds the data;
- ``chunked`` when ``B <= CHUNKED_LIMIT * M``: the data is read ``recommended_chunk_rows`` rows
  at a time (a chunk is at most ``CHUNK_FRACTION * M``), every chunk's partial is kept and all
  are folded once at the end;
- ``streamed`` beyond: the same chunks, but each partial is folded into one running partial as
  it arrives, so only one chunk and the running partial are ever held.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from dau_scheduler.checks import count, positive
from dau_scheduler.errors import SizingError
from dau_scheduler.machine import cpu_count, machine_summary
from dau_scheduler.paths import data_root, profile_cache_root

MIB = 1 << 20
IN_MEMORY_FRACTION = 0.5
CHUNK_FRACTION = 0.25
CHUNKED_LIMIT = 4.0
#: Bytes per value when only ``n_cols`` is known.
DEFAULT_VALUE_BYTES = 8
#: Rows per second assumed when no calibrated throughput is given (``calibrated: False``).
DEFAULT_ROWS_PER_SECOND = 1e7
STRATEGIES: tuple[str, ...] = ("in_memory", "chunked", "streamed")


def cloud_plan(
    n_rows: int,
    n_cols: int,
    mem_budget_mb: float = 2048,
    *,
    row_bytes: float | None = None,
    throughput: float | None = None,
) -> dict[str, Any]:
    """The strategy, chunking and workers for ``n_rows`` x ``n_cols`` within ``mem_budget_mb``.

    ``row_bytes`` (default ``n_cols * 8``) is the width of one row as read; ``throughput`` rows
    per second (from ``calibrate_resources``) makes ``estimated_seconds`` a measurement-based
    figure, else it uses ``DEFAULT_ROWS_PER_SECOND`` and says so (``calibrated``).
    """
    rows = count("n_rows", n_rows, 0)
    cols = count("n_cols", n_cols, 1)
    budget = positive("mem_budget_mb", mem_budget_mb) * MIB
    width = (
        positive("row_bytes", row_bytes) if row_bytes is not None else cols * DEFAULT_VALUE_BYTES
    )
    rate = positive("throughput", throughput) if throughput is not None else DEFAULT_ROWS_PER_SECOND
    total = rows * width
    threads = cpu_count()
    if total <= IN_MEMORY_FRACTION * budget:
        strategy, chunk_rows, chunks, workers = "in_memory", rows, 1 if rows else 0, threads
    else:
        chunk_rows = max(1, math.floor(CHUNK_FRACTION * budget / width))
        chunks = math.ceil(rows / chunk_rows)
        strategy = "chunked" if total <= CHUNKED_LIMIT * budget else "streamed"
        # Each worker holds one chunk at a time; together they keep to half the budget.
        workers = max(1, min(threads, chunks, math.floor(0.5 * budget / (chunk_rows * width))))
    return {
        "n_rows": rows,
        "n_cols": cols,
        "bytes_total": int(total),
        "mem_budget_mb": mem_budget_mb,
        "recommended_workers": int(workers),
        "recommended_chunk_rows": int(chunk_rows),
        "n_chunks": int(chunks),
        "estimated_seconds": rows / rate,
        "strategy": strategy,
        "row_bytes": float(width),
        "calibrated": throughput is not None,
    }


def cloud_resources() -> dict[str, Any]:
    """This machine: cpu_threads, backend, os, arch, registry_dir (the profile cache), tasks_dir
    (generated data), memory_bytes and gpus."""
    summary = machine_summary()
    return {
        "cpu_threads": summary["cpu_threads"],
        "backend": "threads",
        "os": summary["os"],
        "arch": summary["arch"],
        "registry_dir": str(profile_cache_root()),
        "tasks_dir": str(data_root()),
        "memory_bytes": summary["memory_bytes"],
        "gpus": summary["gpus"],
    }


_PARQUET_MAGIC = b"PAR1"
_LINES = re.compile(rb"[^\r\n]+")


def cloud_count_rows(
    path: str | Path, chunk_rows: int = 100000, has_header: bool = True, delimiter: str = ","
) -> int:
    """Data rows in a CSV file (header excluded when ``has_header``), or a Parquet file's rows
    from its metadata.

    Reads the CSV in blocks of about ``chunk_rows`` lines' worth of bytes, so memory stays
    constant whatever the file's size. A record ends at a newline (LF, CRLF or a lone CR)
    outside double quotes, so quoted fields may hold delimiters and newlines; a missing final
    newline still ends the last record; blank lines are not records. An empty file has 0 rows.
    """
    path = Path(path)
    count("chunk_rows", chunk_rows, 1)
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '\r\n"':
        raise SizingError(
            f"delimiter must be one character other than a quote or newline, got {delimiter!r}"
        )
    if not path.is_file():
        raise SizingError(f"no such file: {path}")
    with path.open("rb") as handle:
        head = handle.read(4)
    if head == _PARQUET_MAGIC or path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            meta = pq.ParquetFile(path).metadata
            # The row groups' counts, which readers read by (a file's own total can be 0
            # over a group of 6: DuckDB's arrow/repeated_no_annotation.parquet).
            return sum(int(meta.row_group(g).num_rows) for g in range(meta.num_row_groups))
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise SizingError(f"{path} is not a readable Parquet file: {exc}") from exc
    records = _count_csv_records(path, block=max(1 << 16, min(chunk_rows * 128, 1 << 26)))
    return max(0, records - 1) if has_header else records


def _count_csv_records(path: Path, block: int) -> int:
    records = 0
    in_quotes = False
    in_record = False  # the current record has at least one byte
    with path.open("rb") as handle:
        while chunk := handle.read(block):
            if not in_quotes and b'"' not in chunk:
                # Fast path: count runs of non-newline bytes; a run continuing the previous
                # block's record is not a new record.
                runs = sum(1 for _ in _LINES.finditer(chunk))
                if in_record and chunk[:1] not in (b"\r", b"\n"):
                    runs -= 1
                records += runs
                in_record = chunk[-1:] not in (b"\r", b"\n")
                continue
            for byte in chunk:
                if byte == 0x22:  # '"': toggles quoting; "" inside quotes toggles twice
                    in_quotes = not in_quotes
                    if not in_record:
                        records += 1
                        in_record = True
                elif byte in (0x0A, 0x0D) and not in_quotes:
                    in_record = False
                elif not in_record:
                    records += 1
                    in_record = True
    return records


__all__ = [
    "CHUNKED_LIMIT",
    "CHUNK_FRACTION",
    "IN_MEMORY_FRACTION",
    "STRATEGIES",
    "cloud_count_rows",
    "cloud_plan",
    "cloud_resources",
]
