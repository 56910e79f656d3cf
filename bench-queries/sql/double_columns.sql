-- Sums and means over DOUBLE columns (a derived table of lineitem's integers as doubles, as a
-- Parquet file written from a data frame holds them). The type of a DOUBLE column bounds
-- nothing, so in the fifty-sixth session each float sum carried the greatest magnitude of its
-- arm's finite values (rewrite/overflow.py); since the fifty-seventh, DuckDB's statistics of
-- the values (the columns' min and max, through the casts and the product) bound them and the
-- sums carry nothing. double_unbounded.sql measures the guard where nothing bounds the values.
SELECT l_returnflag,
       l_linestatus,
       sum(line) AS sum_line,
       sum(part) AS sum_part,
       sum(part * line) AS sum_product,
       avg(supp) AS avg_supp,
       count(*) AS count_order
FROM (SELECT l_returnflag, l_linestatus, l_shipdate, l_linenumber::DOUBLE AS line,
             l_partkey::DOUBLE AS part, l_suppkey::DOUBLE AS supp
      FROM lineitem) AS l
WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
