"""Calls whose value differs between evaluations: per call, or per transaction (each arm runs
in a transaction of its own, so the query's one moment, transaction id or connection is one per
arm). A block that computes one over the split table's rows is not split."""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.block_parts import function_name

#: Functions whose value differs between the arms' and the final query's evaluations: a value
#: per call, or per transaction (each arm runs in a transaction of its own, so the query's one
#: moment, transaction id or connection is one per arm). These are the functions DuckDB's
#: catalog marks VOLATILE or CONSISTENT_WITHIN_QUERY in every overload, as sqlglot names them,
#: less those with a refusal of their own or a value every arm shares (test_connection_state.py
#: holds this list to the catalog and names why each of those is safe).
NONDETERMINISTIC: frozenset[str] = frozenset(
    {
        "random",
        "rand",
        "uuid",
        "gen_random_uuid",
        "uuidv4",
        "uuidv7",
        "setseed",
        "nextval",
        "currval",
        "setval",
        "now",
        "current_timestamp",
        "get_current_timestamp",
        "transaction_timestamp",
        "current_time",
        "current_localtime",
        "current_localtimestamp",
        "localtime",
        "localtimestamp",
        "current_date",  # also today()
        "txid_current",
        "current_transaction_id",
        "current_connection_id",
        "current_query_id",
        "vector_type",  # how the arm's engine holds the rows
    }
)


def nondeterministic(node: exp.Expr) -> bool:
    """Whether ``node`` is a call whose value differs between evaluations (``age(ts)`` with
    one argument counts from the transaction's day)."""
    if isinstance(node, (exp.Rand, exp.Uuid)):
        return True
    if not isinstance(node, exp.Func):
        return False
    name = function_name(node)
    return name in NONDETERMINISTIC or (name == "age" and len(list(node.iter_expressions())) == 1)


__all__ = ["NONDETERMINISTIC", "nondeterministic"]
