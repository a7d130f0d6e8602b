"""k2's ``k2.fsa_properties``: the bits of ``Fsa.properties`` (k2's values) and ``to_str``."""

from arrays import _native

VALID = 0x01  # start state 0, one final state (the last), -1 exactly on arcs entering it
NONEMPTY = 0x02  # at least one state
TOPSORTED = 0x04  # no arc goes to a lower-numbered state
TOPSORTED_AND_ACYCLIC = 0x08  # every arc goes to a higher-numbered state
ARC_SORTED = 0x10  # each state's arcs sorted by label, then destination
ARC_SORTED_AND_DETERMINISTIC = 0x20  # arc-sorted, no two arcs of a state share a label
EPSILON_FREE = 0x40  # no arc labelled 0
ACCESSIBLE = 0x80  # every state reachable from the start
COACCESSIBLE = 0x0100  # every state reaches the final state
ALL = 0x01FF


def to_str(p: int) -> str:
    """The names of the bits set in `p` joined by ``|`` (k2's ``FsaPropertiesAsString``)."""
    return str(_native.fsa_properties_as_str(int(p)))
