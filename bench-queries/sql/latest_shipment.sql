-- Each order's latest AIR or RAIL shipment at a discount (a DISTINCT ON of TPC-H's lineitem;
-- l_linenumber breaks ties, so no two rows of an order tie on every ORDER BY value).
SELECT DISTINCT ON (l_orderkey) l_orderkey, l_linenumber, l_shipdate, l_quantity
FROM lineitem
WHERE l_discount > 0.05 AND l_shipmode IN ('AIR', 'RAIL')
ORDER BY l_orderkey, l_shipdate DESC, l_linenumber
