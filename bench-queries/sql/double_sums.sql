-- Q1's pricing summary over decimals made DOUBLE values: sums and means of floats whose values
-- the column types bound (a DECIMAL(15, 2) below 1e13), so they carry no magnitude partial
-- (rewrite/overflow.py; a first form of it recomputed the casts there: the Polars arm 1.9x).
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
