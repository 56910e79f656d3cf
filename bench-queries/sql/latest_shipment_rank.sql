-- Each order's latest AIR or RAIL shipments at a discount, ties kept: a window over TPC-H's
-- lineitem rows (rank() in QUALIFY), which the final query computes over the arms' rows.
SELECT l_orderkey, l_linenumber, l_shipdate, l_quantity
FROM lineitem
WHERE l_discount > 0.05 AND l_shipmode IN ('AIR', 'RAIL')
QUALIFY rank() OVER (PARTITION BY l_orderkey ORDER BY l_shipdate DESC) = 1
