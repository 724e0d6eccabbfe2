"""What the benchmarks that refit over seeds share: one row per group saying whether its
decisions are the same on every seed and how its time compares with an easy fit, and the
Markdown file with that summary and every fit's row."""
from __future__ import annotations

from pathlib import Path

import pandas as pd


def summarise(table: pd.DataFrame, by: str, **extra) -> pd.DataFrame:
    """Per ``by`` group of ``table`` (columns population, next, reliable, attempts and
    vs_easy, one row per fit): seeds, every decision seen (" / " between several),
    reliable fits, the most attempts and the largest and median ``vs_easy``. ``extra``
    maps further column names to functions of the grouped table returning a Series."""
    groups = table.groupby(by, sort=False)
    seen = lambda v: " / ".join(sorted(set(v)))  # noqa: E731
    columns = {"seeds": groups.size(), "population": groups["population"].agg(seen),
               "next": groups["next"].agg(seen), "reliable": groups["reliable"].sum()}
    columns.update({name: make(groups) for name, make in extra.items()})
    columns.update({"max_attempts": groups["attempts"].max(),
                    "max_vs_easy": groups["vs_easy"].max(),
                    "median_vs_easy": groups["vs_easy"].median()})
    return pd.DataFrame(columns)


def write(path, title: str, summary: pd.DataFrame, table: pd.DataFrame, group: str) -> None:
    """Print ``summary`` and write it and ``table`` (one row per fit) to ``path``."""
    summary_text = summary.to_string(float_format=lambda v: f"{v:.3g}")
    print(f"\n{summary_text}\n")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = table.to_string(index=False, float_format=lambda v: f"{v:.4g}")
    path.write_text(f"# {title}\n\n## Per {group}\n\n```\n{summary_text}\n```\n\n"
                    f"## Per seed\n\n```\n{text}\n```\n")
