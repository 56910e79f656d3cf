"""What the probes that draw a table of typed values share: the draw of one row's values and
the statement that makes the table from them."""


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
