-- Sums and means over DOUBLE columns (a derived table of lineitem's integers as doubles, as a
-- Parquet file written from a data frame holds them): each float sum and mean carries the
-- greatest magnitude of its arm's finite values since the fifty-sixth session, which the type
-- of a DOUBLE column does not bound (rewrite/overflow.py). Measures what that costs.
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
