-- Q12's late lines of 1994 by ship mode: a median quantity beside their revenue, mean discount
-- and greatest price, kept where the quantity sums past a bound and ordered by revenue
-- (a decimal's SUM and AVG decide exactly beside a median since the fifty-fifth session; the
-- arms filter lineitem, the final query groups the rows that pass: decision 032).
SELECT l_shipmode,
       median(l_quantity) AS med_qty,
       sum(l_extendedprice * (1 - l_discount)) AS revenue,
       avg(l_discount) AS avg_discount,
       max(l_extendedprice) AS max_price,
       count(*) AS items
FROM lineitem
WHERE l_receiptdate >= DATE '1994-01-01' AND l_receiptdate < DATE '1995-01-01'
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
GROUP BY l_shipmode
HAVING sum(l_quantity) > 1000 AND avg(l_discount) > 0.04
ORDER BY revenue DESC
