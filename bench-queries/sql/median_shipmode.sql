-- Q12's late lines of 1994 by ship mode: their median quantity, the 75th percentile of the
-- discount and the median absolute deviation of the price (the arms filter lineitem; the
-- final query takes the quantiles of the rows that pass: decision 032).
SELECT l_shipmode,
       median(l_quantity) AS med_qty,
       quantile_disc(l_discount, 0.75) AS p75_discount,
       mad(l_extendedprice) AS mad_price,
       count(*) AS items
FROM lineitem
WHERE l_receiptdate >= DATE '1994-01-01' AND l_receiptdate < DATE '1995-01-01'
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
GROUP BY l_shipmode
ORDER BY l_shipmode
