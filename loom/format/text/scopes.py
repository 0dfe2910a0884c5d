"""Name scopes of the text parser.

Values spelled ``%<id>`` (the printer's spelling of an unnamed value, almost every value of a
big module) are found by id in the module's value table rather than through a dict keyed by
their text; only values with other spellings are dict keys. That keeps a large parse from
holding a key string and a dict slot for every value.
"""

from __future__ import annotations

from loom.ir.values import Value


class Scope:
    """The names one region defines: a dict for spelled names, plus where its ids start.

    Values spelled ``%<id>`` (the printer's spelling of unnamed values, almost all of a big
    module) are not keys of ``names``: the parser finds them by id in the module's value
    table, with a one-byte "visible" mark per id (see ``Parser.live``). ``start`` is the first
    value id this scope can hold; ``args`` lists the ids of such values among its region
    arguments, which become visible only when the scope is entered.
    """

    __slots__ = ("names", "start", "args")

    def __init__(self, start: int) -> None:
        self.names: dict[str, Value] = {}
        self.start = start
        self.args: list[int] | None = None
