"""Random queries over nested values: lists (empty, NULL, with NULL elements), structs, maps,
fixed-size arrays and JSON text; unnest in SELECT, in a derived table and as a lateral join;
list functions, lambdas and comprehensions, slices, struct fields and map lookups in WHERE,
GROUP BY and aggregates; nested values as group keys, DISTINCT keys and aggregates' inputs.
Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
SETUP = [
    "CREATE TABLE t AS SELECT i, i % 5 AS k, "
    "CASE WHEN i % 13 = 0 THEN NULL WHEN i % 7 = 0 THEN []::INTEGER[] "
    "ELSE [i % 10, CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 7) % 11 END, i % 4][1:1 + i % 3] END AS l, "
    "CASE WHEN i % 17 = 0 THEN NULL ELSE {'a': i % 6, 'b': ['x', 'y', NULL, 'é'][i % 4 + 1], "
    "'c': ((i * 31) % 1000 / 10.0)::DECIMAL(6,1)} END AS s, "
    "CASE WHEN i % 19 = 0 THEN NULL WHEN i % 5 = 0 THEN MAP {}::MAP(VARCHAR, INTEGER) "
    "ELSE MAP {'p': i % 9, 'q': (i * 3) % 7} END AS m, "
    "[i % 3, (i * 5) % 4, 1]::INTEGER[3] AS a, "
    'CASE WHEN i % 23 = 0 THEN NULL ELSE \'{"v": \' || (i % 8) || \', "w": "\' || '
    "['u', 'v'][i % 2 + 1] || '\"}' END AS j, "
    "[['x', 'y'], ['z'], [], NULL][i % 4 + 1] AS ls "
    "FROM range(3000) r(i)",
]
LIST_INT = [
    "l",
    "list_sort(l)",
    "list_distinct(l)",
    "l[2:]",
    "l[:2]",
    "list_concat(l, [k])",
    "[x * 2 for x in l if x > 1]",
    "list_transform(l, x -> x + k)",
    "list_filter(l, x -> x % 2 = 0)",
    "flatten([l, [k]])",
    "list_reverse(l)",
]
SCALAR_INT = [
    "len(l)",
    "l[1]",
    "list_sum(l)",
    "list_max(l)",
    "list_aggregate(l, 'min')",
    "s.a",
    "struct_extract(s, 'a')",
    "m['p']",
    "element_at(m, 'q')[1]",
    "cardinality(m)",
    "a[2]",
    "list_position(l, 3)",
    "array_length(l)",
    "(j::JSON->>'v')::INTEGER",
    "len(ls)",
    "list_count(l)",
    "list_dot_product(a::DOUBLE[], [1.0, 2.0, 0.5]::DOUBLE[3])::DOUBLE",
    "list_reduce(list_concat(l, [1]), (x, y) -> x + y)",
]
SCALAR_ANY = [
    "s.b",
    "s.c",
    "j::JSON->>'w'",
    "list_extract(ls, 1)",
    "map_keys(m)",
    "s",
    "a",
    "ls",
    "list_string_agg(ls)",
    "array_to_string(l, '-')",
    "struct_pack(x := k, y := s.a)",
]
CONDS = [
    "list_contains(l, 3)",
    "len(l) > 1",
    "l[1] > 5",
    "s.a = 2",
    "s.b IS NULL",
    "m['p'] > 4",
    "cardinality(m) = 0",
    "l IS NULL",
    "l = []",
    "a[1] = 0",
    "list_has_any(l, [1, 2])",
    "s.c BETWEEN 20 AND 60",
    "j::JSON->>'w' = 'u'",
    "3 IN (SELECT unnest(l))",
    "l @> [1]",
    "array_contains(ls, 'z')",
    "s > {'a': 3, 'b': 'x', 'c': 0.0}",
]
AGGS = [
    "count(*)",
    "sum({i})",
    "min({i})",
    "max({i})",
    "count({x})",
    "count(DISTINCT {x})",
    "min({x})",
    "max({x})",
    "avg({i})",
    "bool_or({c})",
    "sum({i}) FILTER (WHERE {c})",
]


def agg():
    f = R.choice(AGGS)
    return f.format(i=R.choice(SCALAR_INT), x=R.choice(SCALAR_ANY + LIST_INT), c=R.choice(CONDS))


def where():
    return f" WHERE {R.choice(CONDS)}" if R.random() < 0.4 else ""


lines = []
for statement in SETUP:
    lines += ["statement ok", statement, ""]
for _ in range(COUNT):
    form = R.randint(1, 8)
    if form == 1:
        q = f"SELECT {agg()}, {agg()} FROM t{where()}"
    elif form == 2:
        key = R.choice(SCALAR_ANY + SCALAR_INT + LIST_INT + ["k"])
        q = f"SELECT {key} AS g, {agg()} FROM t{where()} GROUP BY g ORDER BY ALL"
    elif form == 3:
        source = R.choice(["l", "list_distinct(l)", "[x + 1 for x in l]", "map_values(m)", "a"])
        q = (
            f"SELECT k, count(*), sum(x), count(x), min(x) FROM (SELECT k, unnest({source}) AS x "
            f"FROM t{where()}) GROUP BY k ORDER BY ALL"
        )
    elif form == 4:
        q = f"SELECT count(*), sum(u.x), max(u.x) FROM t, unnest(t.l) AS u(x){where()}"
    elif form == 5:
        q = f"SELECT i, {R.choice(SCALAR_ANY + LIST_INT)} AS v FROM t{where()} ORDER BY i LIMIT {R.randint(1, 40)}"
    elif form == 6:
        q = f"SELECT DISTINCT {R.choice(SCALAR_ANY + LIST_INT)} AS v FROM t{where()} ORDER BY ALL"
    elif form == 7:
        q = f"SELECT count(*), sum(i) FROM t, range(3) r(x) WHERE x < len(l){where().replace(' WHERE', ' AND')}"
    else:
        q = f"SELECT unnest(s), i FROM t{where()} ORDER BY i LIMIT {R.randint(1, 20)}"
    lines += ["query I", q, ""]
write(out, lines)
