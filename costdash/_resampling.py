"""Pieces shared by every bootstrap in costdash (cost-curve bands and BCOST / BDELTACOST):
the random generator argument, argument checks and the paper's order-statistic interval."""

from __future__ import annotations

import math
import operator
from typing import Self

import numpy as np
from numpy.typing import NDArray

from costdash.errors import ParameterError

RngLike = int | np.integer | np.random.Generator | None

BAND_MAX_REPLICATES = 10_000
"""Largest number of bootstrap replicates a cost-curve band accepts
(``costdash.bands.MAX_REPLICATES``)."""

MIN_CALIBRATED_REPLICATES = 200
"""Fewest bootstrap replicates accepted for a band that carries a confidence level
(``costdash.bands.MIN_CALIBRATED_REPLICATES``)."""

MULTICLASS_MAX_REPLICATES = 100_000
"""Upper bound on the number of bootstrap replicates BCOST and BDELTACOST accept
(``costdash.multiclass.MAX_REPLICATES``)."""

# The bounds live here, not in costdash.bands or costdash.multiclass, so that the CLI and the
# view state them without importing those packages (tests/test_cli_startup.py).


def as_generator(rng: RngLike) -> np.random.Generator:
    """A Generator from None (fresh entropy), a non-negative integer seed, or a Generator."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ParameterError(f"rng seed must be a non-negative integer; got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise ParameterError("rng must be None, a non-negative integer seed or a "
                         f"numpy.random.Generator; got {type(rng).__name__}")


def check_level(level: object) -> float:
    """A confidence level strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise ParameterError(f"level must be a number strictly between 0 and 1; got {level!r}")
    value = float(level)
    if not 0.0 < value < 1.0:
        raise ParameterError(f"level must be strictly between 0 and 1 (e.g. 0.95); got {value:g}")
    return value


def check_replicates(replicates: object, maximum: int) -> int:
    """A whole number of replicates in [1, maximum]."""
    if isinstance(replicates, bool):
        raise ParameterError(f"replicates must be an integer; got {replicates!r}")
    try:
        b = operator.index(replicates)  # type: ignore[arg-type]
    except TypeError:
        raise ParameterError(f"replicates must be an integer; got {replicates!r}") from None
    if not 1 <= b <= maximum:
        raise ParameterError(f"replicates must be between 1 and {maximum}; got {b}")
    return b


def order_statistic_ranks(level: float, replicates: int) -> tuple[int, int]:
    """1-based ranks of an interval's ends among ``replicates`` sorted values.

    Margineantu & Dietterich's rule (their Table 2): ``lb = floor((1 - level) / 2 * B) + 1`` and
    ``ub = B + 1 - lb``; for level 0.95 and B = 1000 the 26th and 975th values, for 0.9 the 51st
    and 950th.
    """
    # The tiny tolerance keeps floating-point noise ((1 - 0.9) / 2 * 1000 = 49.999...) from
    # moving the rank by one.
    lb = math.floor((1.0 - level) / 2.0 * replicates + 1e-9) + 1
    return lb, replicates + 1 - lb


def readonly(a: NDArray) -> NDArray:
    """``a``, made read-only: results keep their replicates, which must not be edited."""
    a.setflags(write=False)
    return a


class AtLevel:
    """Mixin of the results that keep what their interval was read from (sorted replicates or
    counts), so that another confidence level is a re-reading, never a new resampling.

    A subclass supplies ``_at_level(level)``, called with a checked level.
    """

    __slots__ = ()

    def at_level(self, level: float) -> Self:
        """The same result with its interval (and what follows from it) read at another
        confidence level from what it kept: no new resampling. A bootstrap result is re-cut from
        its stored replicates, the ones a fresh call with the same random generator state would
        draw; a closed-form one is recomputed from its stored counts.

        Parameters
        ----------
        level : float
            New confidence level in (0, 1).

        Returns
        -------
        Same type as this result
        """
        return self._at_level(check_level(level))

    def _at_level(self, level: float) -> Self:
        raise NotImplementedError
