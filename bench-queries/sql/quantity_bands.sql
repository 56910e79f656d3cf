-- Lineitem's quantities banded by region (a range join with no equality key: an IEJoin on the
-- Polars arm since the forty-second session, which writes such an inner join as a cross join
-- under WHERE; 6M x 5 possible pairs at SF 1, under the 1e8 the arm holds). The bands are a
-- derived table's columns: Polars 1.44 fails to plan two inequalities against expressions of
-- the joined table ("unable to find column"), which the arm then refuses.
SELECT b.r_name, count(*) AS items, sum(l_extendedprice) AS revenue
FROM lineitem
JOIN (SELECT r_name, r_regionkey * 10 + 1 AS lo, r_regionkey * 10 + 10 AS hi FROM region) AS b
  ON l_quantity BETWEEN b.lo AND b.hi
WHERE l_shipdate >= DATE '1995-01-01'
GROUP BY b.r_name
ORDER BY b.r_name
