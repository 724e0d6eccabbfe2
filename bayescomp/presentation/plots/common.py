"""What every figure shares: colours, new axes, the ROPE band, dataset order and fonts."""
from __future__ import annotations

import functools
import re

import numpy as np

from bayescomp.rope import Rope

#: Colours of the regions (left: second better, rope: equivalent, right: first better).
REGION_COLORS = ("#4C72B0", "#8C8C8C", "#DD8452")
ROPE_COLOR = "#BBBBBB"

# Fonts tried after the default one for characters it lacks (CJK, symbols), when installed.
# Colour-emoji fonts are bitmap fonts that Agg cannot draw, hence absent.
_FALLBACK_FONTS = (
    "Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR",
    "Source Han Sans", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback",
    "Microsoft YaHei", "SimHei", "MS Gothic", "Hiragino Sans", "PingFang SC", "Malgun Gothic",
    "Apple SD Gothic Neo", "Arial Unicode MS", "Noto Sans", "Noto Sans Symbols",
    "Noto Sans Symbols2", "Noto Emoji", "Segoe UI Symbol", "Symbola")


def pyplot():
    import matplotlib.pyplot as plt
    return plt


def new_axes(ax, figsize):
    if ax is None:
        _, ax = pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def difference_label(first: str, second: str) -> str:
    return clean_text(f"mean difference {first} - {second}  (> 0: {first} better)")


def shade_rope(ax, rope: Rope, label: bool = True):
    """The ROPE as a grey band (a line when it has width 0), gid ``"rope"``."""
    text = f"ROPE {rope}" if label else None
    band = ax.axvspan(rope.low, rope.high, color=ROPE_COLOR, alpha=0.35, lw=0, label=text,
                      zorder=0)
    band.set_gid("rope")
    if rope.low == rope.high:
        ax.axvline(rope.low, color=ROPE_COLOR, lw=2, zorder=0)
    return band


def padded(low: float, high: float, fraction: float = 0.05) -> tuple[float, float]:
    width = high - low
    if width <= 0:
        width = max(abs(low), abs(high), 1e-3)
    return low - fraction * width, high + fraction * width


def dataset_order(means, sort: bool) -> np.ndarray:
    """Positions of the datasets from the bottom row up: by ascending mean difference (a
    stable sort, ties in the given order) when ``sort``, else as given. One rule for
    :func:`plot_differences` and :func:`plot_shrinkage`, so their rows line up."""
    means = np.asarray(means, dtype=float)
    return np.argsort(means, kind="stable") if sort else np.arange(means.size)


#: Most datasets a per-dataset figure names one per row; beyond it the figure is compact:
#: every row drawn unlabelled in a fixed height, only the extremes named.
MAX_NAMED = 40
#: Datasets named at each end of a compact figure.
N_EXTREMES = 3


def rows_height(k: int, extra: float, max_named: int = MAX_NAMED) -> float:
    """Figure height (inches) of a figure of ``k`` dataset rows: 0.42 in per named row,
    a fixed 7 in once the rows are too many to name (bounded at any ``k``)."""
    return max(3.5, 0.42 * k + extra) if k <= max_named else 7.0 + extra


def name_rows(ax, names, max_named: int = MAX_NAMED, n_extremes: int = N_EXTREMES) -> list[str]:
    """Name the rows of a per-dataset figure (row i at y = i, sorted or not); the names shown.

    Up to ``max_named`` rows each get their name as tick label. Beyond it the rows are too
    dense to name (a thousand in a few inches): only the ``n_extremes`` bottom and top rows
    are named, in the left margin at readable spacing, each joined by a thin line to its
    row; these are texts with gid ``"name"``.
    """
    names = [clean_text(name) for name in names]
    k = len(names)
    if k <= max_named:
        ax.set_yticks(np.arange(k))
        ax.set_yticklabels(names)
        return names
    ax.set_yticks([])
    n = min(n_extremes, k // 2)
    rows = list(range(n)) + list(range(k - n, k))
    # label slots: the bottom and top eighths of the axis, a twentieth of its height apart
    step = k / 20
    slots = [(i + 0.5) * step for i in range(n)] + [k - 1 - (n - 1 - i + 0.5) * step
                                                     for i in range(n)]
    import matplotlib.transforms as transforms
    blended = transforms.blended_transform_factory(ax.transAxes, ax.transData)
    for row, slot in zip(rows, slots):
        text = ax.annotate(names[row], xy=(0, row), xycoords=blended, xytext=(-0.03, slot),
                           textcoords=blended, ha="right", va="center", fontsize=8,
                           arrowprops=dict(arrowstyle="-", lw=0.5, color="#777777",
                                           shrinkA=1, shrinkB=0))
        text.set_gid("name")
    return [names[row] for row in rows]


# --------------------------------------------------------------------------- fonts

@functools.cache
def fonts() -> tuple[tuple[str, frozenset], ...]:
    """(family, code points) of the default font and of the installed fallback fonts."""
    from matplotlib import font_manager, ft2font

    default = font_manager.findfont(font_manager.FontProperties())
    installed = {entry.name: entry.fname for entry in font_manager.fontManager.ttflist}
    paths = [(font_manager.FontProperties(fname=default).get_name(), default)]
    paths += [(name, installed[name]) for name in _FALLBACK_FONTS if name in installed]
    found = []
    for name, path in paths:
        try:
            found.append((name, frozenset(ft2font.FT2Font(path).get_charmap())))
        except (OSError, RuntimeError):  # an unreadable font file: not a fallback
            continue
    return tuple(found)


def font_families() -> list[str]:
    """The default family followed by the installed fallbacks (matplotlib >= 3.6 tries
    them in turn for each character)."""
    return [name for name, _ in fonts()]


def renderable(character: str) -> bool:
    """Whether one of :func:`fonts` has a glyph for ``character``."""
    code = ord(character)
    return character.isspace() or any(code in points for _, points in fonts())


def clean_text(text) -> str:
    """``text`` as the figures show it: characters no installed font can draw become
    ``<U+XXXX>`` (instead of an empty box and a matplotlib warning), and ``$`` is escaped
    so that a name is never read as mathtext."""
    text = str(text)
    cleaned = "".join(ch if renderable(ch) else f"<U+{ord(ch):04X}>" for ch in text)
    return re.sub(r"(?<!\\)\$", r"\\$", cleaned)  # idempotent: an escaped $ stays as it is


def finish(ax):
    """Clean the texts of ``ax`` (:func:`clean_text`: titles, axis labels, texts, legend)
    and let them and the tick labels fall back on the installed fonts; returns ``ax``.

    Tick labels are cleaned where they are set: matplotlib re-creates them at draw time.
    """
    texts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label,
             *ax.texts]
    legend = ax.get_legend()
    if legend is not None:
        texts += list(legend.get_texts())
    for text in texts:
        content = text.get_text()
        if content:
            text.set_text(clean_text(content))
    families = font_families()
    if len(families) > 1:
        for text in texts:
            text.set_fontfamily(families)
        ax.tick_params(labelfontfamily=families)
    return ax
