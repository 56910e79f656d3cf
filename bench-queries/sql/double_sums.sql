-- Q1's pricing summary over DOUBLE values: sums and means of floats, each of which carries one
-- more partial since the fifty-sixth session (its arm's finite magnitudes added, so the fold
-- can tell a sum near the double's limit: rewrite/overflow.py). Measures what that costs.
SELECT l_returnflag,
       l_linestatus,
       sum(l_quantity::DOUBLE) AS sum_qty,
       sum(l_extendedprice::DOUBLE) AS sum_base_price,
       sum(l_extendedprice::DOUBLE * (1 - l_discount::DOUBLE)) AS sum_disc_price,
       avg(l_quantity::DOUBLE) AS avg_qty,
       avg(l_discount::DOUBLE) AS avg_disc,
       count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
