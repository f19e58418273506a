"""Where the jobs' bands are kept: their cache keys, their bytes, and :class:`BandCache`.

A bootstrap band keeps every replicate curve (B x G float64, 1.6 MB for B = 1000) so that
a new confidence level needs no new resampling (``band.at_level``). The job puts the band in the
shared flask-caching cache (:class:`BandCache`) and sends the browser only a small reference; a
normal callback reads it back. The cache holds ``.npz`` bytes (arrays plus a JSON header), never
pickled objects of ours, keyed by a hash of everything that determines the band: data set id,
classifier(s), threshold(s), the band's method, whether it is simultaneous and how thresholds are
selected (:class:`costdash.band_choice.BandChoice`), replicates (0 for a closed-form band, which
does not resample), seed and grid.

The band defaults (:data:`DEFAULT_REPLICATES`, :data:`DEFAULT_SEED`) are the view's, re-exported
here; :data:`BAND_GRID` is the PC(+) grid of every band the dashboard computes.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np

from costdash.band_choice import BandChoice, band_choice
from costdash.bands import CostBand, DifferenceBand, SignificantInterval
from costdash.view import DEFAULT_REPLICATES, DEFAULT_SEED  # re-exported: defined by the view

if TYPE_CHECKING:
    from flask_caching import Cache

__all__ = ["BAND_GRID", "BAND_TIMEOUT", "DEFAULT_REPLICATES", "DEFAULT_SEED", "BandCache",
           "band_key", "cost_band_key", "decode_band", "difference_band_key", "encode_band"]

BAND_TIMEOUT = 24 * 3600
"""Seconds a computed band stays in the result cache (they are large: B x G float64)."""


def band_key(kind: str, **fields_: Any) -> str:
    """Cache key of a band: a hash of everything that determines it (JSON, order-independent)."""
    text = json.dumps({"kind": kind, **fields_}, sort_keys=True, separators=(",", ":"),
                      default=float)
    return f"band:v2:{kind}:{hashlib.sha256(text.encode()).hexdigest()[:40]}"


BAND_GRID = 201
"""PC(+) points of every band the dashboard computes (Confidence and Compare pages, reports)."""

def cost_band_key(data_id: str, model: str, threshold: float | None, replicates: int,
                  seed: int, choice: BandChoice | None = None) -> str:
    """Cache key of the cost band of ``model`` (the Confidence page's job, the report's band).

    ``choice``: the band asked for (default: the default of the question, see
    :func:`costdash.band_choice.band_choice`); a closed-form band ignores ``replicates``.
    """
    if choice is None:
        choice = band_choice(fixed=threshold is not None)
    return band_key("cost", data=data_id, model=model, threshold=threshold,
                    replicates=0 if choice.closed_form else replicates, seed=seed,
                    grid=BAND_GRID, **choice.key_fields())


def difference_band_key(data_id: str, a: str, b: str, replicates: int, seed: int,
                        choice: BandChoice | None = None,
                        threshold: float | tuple[float, float] | None = None) -> str:
    """Cache key of the band of ``a - b`` (the Compare page's job); as :func:`cost_band_key`,
    with the fixed threshold(s), one for both or ``(t_a, t_b)``, when there are some."""
    if choice is None:
        choice = band_choice(fixed=threshold is not None, difference=True)
    thresholds = None if threshold is None else (
        list(threshold) if isinstance(threshold, (tuple, list)) else [threshold, threshold])
    return band_key("difference", data=data_id, a=a, b=b, threshold=thresholds,
                    replicates=0 if choice.closed_form else replicates, seed=seed,
                    grid=BAND_GRID, **choice.key_fields())


_BANDS = {"cost": CostBand, "difference": DifferenceBand}


def encode_band(band: CostBand | DifferenceBand) -> bytes:
    """``.npz`` bytes of a band: its arrays, and its other fields as a JSON header."""
    arrays: dict[str, np.ndarray] = {}
    header: dict[str, Any] = {"band": "cost" if isinstance(band, CostBand) else "difference"}
    for f in fields(band):
        value = getattr(band, f.name)
        if isinstance(value, np.ndarray):
            arrays[f.name] = value
        elif f.name == "significant":
            header[f.name] = [[s.lo, s.hi, s.better] for s in value]
        elif isinstance(value, float) and not math.isfinite(value):
            header[f.name] = None if math.isnan(value) else str(value)
        else:
            header[f.name] = value
    buffer = io.BytesIO()
    np.savez(buffer, header=np.array(json.dumps(header)), **arrays)
    return buffer.getvalue()


def decode_band(blob: bytes) -> CostBand | DifferenceBand:
    """The band :func:`encode_band` packed (arrays read-only, as the core returns them)."""
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        header = json.loads(str(npz["header"]))
        arrays = {name: npz[name] for name in npz.files if name != "header"}
    cls = _BANDS[header.pop("band")]
    for a in arrays.values():
        a.setflags(write=False)
    if "significant" in header:
        header["significant"] = tuple(SignificantInterval(lo, hi, better)
                                      for lo, hi, better in header["significant"])
    return cls(**header, **arrays)


class BandCache:
    """Bands in the shared flask-caching cache (every worker process and job sees them)."""

    def __init__(self, cache: Cache, timeout: int = BAND_TIMEOUT):
        self.cache, self.timeout = cache, timeout

    def get(self, key: str) -> CostBand | DifferenceBand | None:
        blob = self.cache.get(key)
        if blob is None:
            return None
        try:
            return decode_band(blob)
        except (ValueError, KeyError, TypeError, OSError):  # stale format: compute it again
            return None

    def put(self, key: str, band: CostBand | DifferenceBand) -> bool:
        """Keep ``band`` under ``key``; False when the cache did not take it (Redis down)."""
        return bool(self.cache.set(key, encode_band(band), timeout=self.timeout))

    def has(self, key: str) -> bool:
        return self.cache.has(key)
