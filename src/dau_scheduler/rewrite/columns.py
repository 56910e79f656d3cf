"""The columns of each base table a query reads, from sqlglot's qualified reading of it."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.comma_scopes import CommaScopeError, scope_after_commas
from dau_scheduler.rewrite.dialect import DIALECT

#: What sqlglot raises on a query it cannot analyse: the query is refused, never failed.
UNANALYSABLE = (
    SqlglotError,
    ValueError,
    KeyError,
    TypeError,
    AssertionError,
    AttributeError,  # sqlglot's qualify on a recursive CTE of a CTE (DuckDB's test_cte.test)
    RecursionError,
)
#: The terminal codes sqlglot's parse errors underline the bad token with.
_UNDERLINE = re.compile(r"\x1b\[\d+m")


#: DuckDB's virtual columns of a file scan, which ``SELECT *`` leaves out and no schema holds.
_FILE_SCAN_COLUMNS = re.compile(
    r"Column '(filename|file_row_number|file_index)' could not be resolved", re.IGNORECASE
)


def unanalysable(exc: BaseException) -> str:
    """The refusal for a query sqlglot cannot analyse (``exc``, one of ``UNANALYSABLE``), on one
    line and without the terminal codes a parse error underlines its token with."""
    said = " ".join(_UNDERLINE.sub("", str(exc)).split())
    virtual = _FILE_SCAN_COLUMNS.search(said)
    if virtual is not None:
        return (
            f"the query reads DuckDB's virtual column {virtual.group(1)} of a file scan, "
            "which the arms' reads of the files' rows do not carry"
        )
    return f"the query could not be analysed for splitting: {said}"


def alias_subqueries(tree: exp.Expr) -> exp.Expr:
    """Each unaliased scalar subquery among a SELECT's outputs wrapped in an alias of sqlglot's
    own ``_col_<i>`` name. Left as it is, the subquery carries the name itself, and sqlglot's
    qualify cannot read ``ORDER BY <i+1>`` (SQLite's select1.test: ``ORDER BY 4,2,1,3`` over
    ``(SELECT count(*) ...)`` raised an AssertionError)."""
    for select in tree.find_all(exp.Select):
        for position, projection in enumerate(select.expressions):
            if isinstance(projection, exp.Subquery) and not projection.alias:
                name = exp.to_identifier(f"_col_{position}")
                projection.replace(exp.Alias(this=projection.copy(), alias=name))
    return tree


def _named_elsewhere(column: exp.Column) -> bool:
    """A bare name that is not a table's column: a lambda's parameter, or an output alias the
    query refers to (``ORDER BY total``)."""
    node = column.parent
    while node is not None:
        if isinstance(node, exp.Lambda) and column.name in {e.name for e in node.expressions}:
            return True
        if isinstance(node, exp.Select):
            return column.name in {e.alias for e in node.expressions if e.alias}
        node = node.parent
    return False


def _reads_whole_rows(tree: exp.Expr) -> bool:
    """Whether the query reads columns no column reference names: ``COLUMNS(*)`` (or a regex),
    a positional reference (``#2``),
    a star sqlglot left unexpanded (``struct_pack(d.*)``), a table or alias used as a value
    (``SELECT t FROM t``: the whole row as a struct), or a column sqlglot could not place in a
    table (``variant_extract(v, 'a').variant_extract('b')``, DuckDB's variant_typeof.test:
    ``v`` was not seen, so neither was its type)."""
    for node in tree.walk():
        if isinstance(node, (exp.Columns, exp.TableColumn, exp.PositionalColumn)):
            return True  # (#2: the FROM clause's second column, whichever columns are read)
        if isinstance(node, exp.Column) and not node.table and not _named_elsewhere(node):
            return True
        if isinstance(node, exp.Identifier) and (
            isinstance(node.parent, (exp.Func, exp.Paren))
            or (isinstance(node.parent, exp.Dot) and node is node.parent.this)
        ):
            # a name sqlglot read as neither a column nor a table: a Dot chain, or the value
            # of a method call (a.filter(lambda x: x > 0), s.f.upper() and (a).upper() read a
            # column sqlglot does not see)
            return True
        if isinstance(node, exp.Star) and not isinstance(node.parent, exp.Count):
            return True
    return False


def query_columns(sql: str, schema: dict[str, dict[str, str]]) -> dict[str, set[str]]:
    """The columns of each base table the query reads (``SELECT *`` reads them all; where the
    query reads columns it does not name, every column of every table it reads: reading too
    few changes what ``COLUMNS(*)`` expands to, DuckDB's test_columns_unpacked.test)."""
    try:
        tree = alias_subqueries(sqlglot.parse_one(sql, read=DIALECT))
        try:  # a join condition after a comma in FROM binds its names as DuckDB does
            tree = scope_after_commas(tree, schema)
            whole = False
        except CommaScopeError:  # what the planner refuses to split: every column, to be safe
            whole = True
        tree = qualify(
            tree,
            schema=dict(schema),
            dialect=DIALECT,
            validate_qualify_columns=False,
        )
    except UNANALYSABLE as exc:
        raise SqlError(f"cannot read the columns this query uses: {exc}") from exc
    out: dict[str, set[str]] = {}
    if whole or _reads_whole_rows(tree):
        for table in tree.find_all(exp.Table):
            name = table.name.lower()
            if name in schema:
                out[name] = {column.lower() for column in schema[name]}
        return out
    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and source.name.lower() in schema:
                out.setdefault(source.name.lower(), set()).add(column.name.lower())
    return out


__all__ = ["UNANALYSABLE", "alias_subqueries", "query_columns"]
