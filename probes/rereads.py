"""Random queries that read a table other than the split table in several places at once, under
names that shadow one another: the forms in which the Polars arm's rewrites wrap a table in a
derived table of its own name (a join's condition on the joined table alone as a filter on it,
``arms/polars_join_sql.filter_joined_table``; an IN set's semi join applied to its table first,
``arms/polars_early_semijoins.py``; plain conditions before correlated subqueries,
``arms/polars_prefilter.py``), beside the same table read again by a scalar subquery, an EXISTS,
an IN set, a CTE or a second join, and beside aliases, derived tables and CTEs named like another
table (which a subquery's FROM does not see: it reads the table). Polars reads a table named
like a derived table as the derived one (30th and 62nd sessions); DuckDB is the oracle.

A split table ``t`` and two small tables ``u`` and ``v`` whose columns share names, with NULL
keys; only integer and text columns, so every answer compares exactly."""

from _probe import JOINED_TABLES, arguments, write

R, out, COUNT = arguments()
lines = [
    *JOINED_TABLES,
    "statement ok",
    "CREATE TABLE v AS SELECT i AS j, i % 4 AS n, ['a','z',NULL][i % 3 + 1] AS s, "
    "CASE WHEN i = 5 THEN NULL ELSE i % 6 END AS k FROM range(9) r(i)",
    "",
]


def small():
    """One of the two small tables' names."""
    return R.choice(["u", "v"])


def plain(a):
    """A condition on ``a``'s columns alone."""
    return R.choice(
        [
            f"{a}.n > {R.randint(-2, 1)}",
            f"{a}.k < {R.randint(2, 10)}",
            f"{a}.s = '{R.choice(['a', 'b', 'z'])}'",
            f"{a}.s IS NOT NULL",
            f"{a}.k IS NULL",
            f"{a}.n IN ({R.randint(-2, 0)}, {R.randint(1, 2)})",
            f"({a}.n = 1 OR {a}.s = 'a')",
            f"{a}.k IS DISTINCT FROM {R.randint(0, 5)}",
        ]
    )


def rows_of(table):
    """A FROM item reading ``table`` under an alias of its own or under its name."""
    return R.choice([f"{table}", f"{table} AS {table}", f"{table} AS w", f"{table} w"])


def subquery_term(outer):
    """A term reading a small table again in a subquery (correlated with an outer source or
    not), possibly under the name an outer source holds."""
    table = small()
    item = rows_of(table)
    a = item.split()[-1]
    col = R.choice(["k", "n", "s"])
    other = R.choice(outer)
    forms = [
        f"{other}.{col} IN (SELECT {a}.{col} FROM {item} WHERE {plain(a)})",
        f"{other}.{col} NOT IN (SELECT {a}.{col} FROM {item} WHERE {a}.{col} IS NOT NULL"
        f"{R.choice(['', ' AND ' + plain(a)])})",
        f"{other}.k {R.choice(['<', '>=', '<>'])} (SELECT count(*) FROM {item} WHERE {plain(a)})",
        f"EXISTS (SELECT 1 FROM {item} WHERE {a}.{col} = {other}.{col})",
        f"NOT EXISTS (SELECT 1 FROM {item} WHERE {a}.{col} = {other}.{col} AND {plain(a)})",
        f"{other}.n >= (SELECT min({a}.n) FROM {item} WHERE {a}.k = {other}.k)",
        f"{other}.k IN (SELECT {a}.k FROM {item} WHERE {a}.n = {other}.n)",
    ]
    return R.choice(forms)


def joined_source():
    """The FROM clause (``t`` and one or two small tables, some under another table's name),
    the names it defines, the conditions its commas leave to WHERE, and its CTEs by name (a
    second CTE of a name is dropped: its join reads the first)."""
    names, parts, joins_where, ctes = ["t"], ["t"], [], {}
    for _ in range(R.randint(1, 2)):
        table = small()
        alias = R.choice([table, table, "w" + str(len(names)), "u" if table == "v" else "v"])
        if alias in names:
            alias = f"x{len(names)}"
        kind = R.choice(["JOIN", "JOIN", "LEFT JOIN", "comma", "derived", "cte"])
        key = R.choice(["k", "n"])
        before = R.choice(names)
        on = f"{before}.{key} = {alias}.{key}"
        if R.random() < 0.5:
            on += f" AND {plain(alias)}"
        if kind == "comma":
            parts.append(f", {table} AS {alias}")
            names.append(alias)
            joins_where.append(on)
            continue
        if kind == "derived":
            rows = f"(SELECT * FROM {table} WHERE {plain(table)}) AS {alias}"
            parts.append(f"JOIN {rows} ON {on}")
        elif kind == "cte":
            name = R.choice(["u", "v", "c1"])
            ctes.setdefault(name, f"{name} AS (SELECT * FROM {table} WHERE {plain(table)})")
            parts.append(f"{R.choice(['JOIN', 'LEFT JOIN'])} {name} AS {alias} ON {on}")
        else:
            parts.append(f"{kind} {table} AS {alias} ON {on}")
        names.append(alias)
    return " ".join(parts).replace(" ,", ","), names, joins_where, ctes


for _q in range(COUNT):
    source, names, conditions, ctes = joined_source()
    for _ in range(R.randint(1, 3)):
        conditions.append(subquery_term(names))
    if R.random() < 0.5:
        conditions.append(plain(R.choice(names)))
    if R.random() < 0.3:
        a, b = R.sample(names, 2) if len(names) > 1 else (names[0], names[0])
        conditions.append(f"(({plain(a)} AND {plain(b)}) OR ({plain(a)} AND {plain(b)}))")
    other = names[-1]
    select = R.choice(
        [
            f"count(*), sum(t.i), count({other}.s)",
            "t.k AS g, count(*), sum(t.i)",
            f"{other}.n AS g, count(*), max(t.i)",
            f"count(*), (SELECT count(*) FROM {small()})",
        ]
    )
    group = " GROUP BY g" if "AS g" in select else ""
    with_ = "WITH " + ", ".join(ctes.values()) + " " if ctes else ""
    where = " AND ".join(conditions)
    lines += ["query I", f"{with_}SELECT {select} FROM {source} WHERE {where}{group}", ""]
write(out, lines)
