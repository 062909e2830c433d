"""Where skills come from: filesystem roots, skills defined in code, generated skills; immutable snapshots."""
