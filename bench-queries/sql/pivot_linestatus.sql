-- A PIVOT with its values listed (a SELECT to DuckDB): each return flag's quantities, revenue
-- and orders per line status, over the rows shipped before 1998-09 (TPC-H Q1's filter).
PIVOT (SELECT * FROM lineitem WHERE l_shipdate <= DATE '1998-09-02')
ON l_linestatus IN ('F', 'O')
USING sum(l_quantity) AS qty, sum(l_extendedprice) AS revenue, count(*) AS orders
GROUP BY l_returnflag
ORDER BY l_returnflag
