-- Float sums no type or statistic bounds: quotients by a value that crosses zero (never zero
-- here), whose magnitude DuckDB's statistics leave unknown. Each sum and mean carries the greatest magnitude of its arm's
-- finite values (rewrite/overflow.py; double_columns.sql's sums are bounded by the columns'
-- statistics since the fifty-seventh session and carry nothing): measures what the guard costs.
SELECT l_returnflag,
       l_linestatus,
       sum(l_partkey / (l_linenumber::DOUBLE - 4.5)) AS sum_part_per_line,
       sum(l_suppkey / (l_linenumber::DOUBLE - 4.5)) AS sum_supp_per_line,
       avg(l_orderkey / (l_linenumber::DOUBLE - 4.5)) AS avg_order_per_line,
       count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
