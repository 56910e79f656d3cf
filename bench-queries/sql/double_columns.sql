-- Q1's pricing summary over DOUBLE columns (a derived table of lineitem's values as doubles, as
-- a Parquet file written from a data frame holds them): each float sum and mean carries the
-- greatest magnitude of its arm's finite values since the fifty-sixth session, which the types
-- of a DOUBLE column do not bound (rewrite/overflow.py). Measures what that costs.
SELECT l_returnflag,
       l_linestatus,
       sum(qty) AS sum_qty,
       sum(price) AS sum_base_price,
       sum(price * (1 - discount)) AS sum_disc_price,
       avg(qty) AS avg_qty,
       avg(discount) AS avg_disc,
       count(*) AS count_order
FROM (SELECT l_returnflag, l_linestatus, l_shipdate, l_quantity::DOUBLE AS qty,
             l_extendedprice::DOUBLE AS price, l_discount::DOUBLE AS discount
      FROM lineitem) AS l
WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
