-- The median and 90th percentile of a line's revenue per order priority over one quarter's
-- orders (a join and a filter the arms run; the medians over the rows that pass, in the final
-- query: decision 032, refused before the fifty-fourth session).
SELECT o_orderpriority,
       median(l_extendedprice * (1 - l_discount)) AS med_revenue,
       quantile_cont(l_extendedprice, 0.9) AS p90_price,
       count(*) AS items
FROM lineitem
JOIN orders ON l_orderkey = o_orderkey
WHERE o_orderdate >= DATE '1995-01-01' AND o_orderdate < DATE '1995-04-01'
GROUP BY o_orderpriority
ORDER BY o_orderpriority
