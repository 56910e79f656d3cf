"""What the probes that draw a table of typed values share: the draw of one row's values, the
statement that makes the table from them, and the keyed table ``aggregates.py`` and
``holistic.py`` draw."""


def draw(rng, types, values, null_rate):
    """One value per type: NULL (None) with probability ``null_rate``, else one of
    ``values[type]``."""
    return [None if rng.random() < null_rate else rng.choice(values[t]) for t in types]


def literal(value, type_):
    """``value`` as a literal of ``type_`` (None as a typed NULL)."""
    if value is None:
        return f"NULL::{type_}"
    return "'" + str(value).replace("'", "''") + f"'::{type_}"


def values_table(name, columns, rows):
    """``CREATE TABLE name`` from ``rows`` of SQL literals, its columns named ``columns``."""
    body = ", ".join("(" + ", ".join(row) + ")" for row in rows)
    return f"CREATE TABLE {name} AS SELECT * FROM (VALUES {body}) v({', '.join(columns)})"


def keyed_table(rng, columns, values, count, copies=1):
    """``CREATE TABLE t`` of ``count`` rows: ``i``, a key ``k`` (0-3 or NULL), a text key ``g``
    ('x', 'y', 'z' or NULL) and one drawn value per column of ``columns`` (name -> type; 12%
    NULL), every 40th row a group of its own (k = 4, g = 'w') holding only NULLs; each row
    ``copies`` times, shuffled (many vectors, DuckDB's threads) where more than one."""
    rows = []
    for i in range(count):
        row = [i, rng.choice([0, 1, 2, 3, None]), rng.choice(["x", "y", "z", None])]
        row += draw(rng, columns.values(), values, 0.12)
        if i % 40 == 0:  # a group of all-NULL values
            row = [i, 4, "w"] + [None] * len(columns)
        rows.append(row)
    create = values_table(
        "t",
        ["i", "k", "g", *columns],
        [
            [str(r[0]), "NULL" if r[1] is None else str(r[1]), literal(r[2], "VARCHAR")]
            + [literal(v, t) for v, t in zip(r[3:], columns.values(), strict=True)]
            for r in rows
        ],
    )
    if copies > 1:
        create = create.replace("SELECT * FROM (VALUES", "SELECT v.* FROM (VALUES", 1)
        create += f", range({copies}) c(c) ORDER BY hash(c, v.i)"
    return create
