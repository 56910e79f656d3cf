-- DuckDB's own PIVOT benchmark (benchmark/tpch/pivot/lineitem_pivot_shipdate.benchmark): each
-- ship date's revenue per return flag, the flags' values found from the rows first (DuckDB's
-- MULTI statement). Split since the forty-eighth session as the grouped query of filtered
-- sums DuckDB binds a PIVOT to (rewrite/pivots.py); the values query runs on the host first.
FROM (PIVOT lineitem ON l_returnflag USING SUM(l_extendedprice) GROUP BY l_shipdate)
ORDER BY l_shipdate
LIMIT 10
