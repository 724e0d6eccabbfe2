"""The Bayesian critical-difference diagram (plots.plot_bayesian_cd) and its groups.

Known answers: maximal cliques of hand-made graphs and, on random graphs, of a brute-force
search over every subset; planted groups in synthetic draws of a stand-in for
``bc.compare_many``'s result (a dataclass with the attributes of ``JointLike``), whose
positions and intervals are checked against the draws and arviz's HDI.
"""
import itertools
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import arviz as az  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from bayescomp import plots  # noqa: E402
from bayescomp.rope import Rope  # noqa: E402

ABC = ("A", "B", "C", "D", "E")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@dataclass
class Joint:
    """A stand-in for compare_many's result: the pair table from the draws (population and
    next dataset alike) unless one is given."""

    algorithms: tuple
    rope: Rope
    population_draws: np.ndarray
    reliable: bool = True
    table: pd.DataFrame | None = None

    def to_frame(self):
        if self.table is not None:
            return self.table.copy()
        rows = []
        for i, j in itertools.combinations(range(len(self.algorithms)), 2):
            d = self.population_draws[:, i] - self.population_draws[:, j]
            p = self.rope.shares(d)
            row = dict(first=self.algorithms[i], second=self.algorithms[j], delta0_mean=d.mean(),
                       reliable=self.reliable)
            for scope in ("population", "next_dataset"):
                row.update({f"{scope}_p_{r}": v for r, v in zip(("left", "rope", "right"), p)})
            rows.append(row)
        return pd.DataFrame(rows)


def planted(means, spread, n=4000, seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    draws = np.asarray(means) + spread * rng.standard_normal((n, len(means)))
    draws -= draws.mean(axis=1, keepdims=True)   # relative to the mean of the K, as the model's
    return Joint(ABC[:len(means)], Rope(-0.01, 0.01), draws, **kwargs)


def by_gid(artists, gid):
    return [a for a in artists if a.get_gid() == gid]


def drawn_groups(ax, gid, positions):
    """The groups of the bars of ``gid``: names whose positions are the bar's inner vertices."""
    groups = set()
    for bar in by_gid(ax.lines, gid):
        xs = bar.get_xdata()[1:-1]
        members = []
        for x in xs:
            hits = [name for name, p in positions.items() if abs(p - x) < 1e-12]
            assert len(hits) == 1, (x, positions)
            members.append(hits[0])
        groups.add(frozenset(members))
    return groups


def relative_means(result):
    means = result.population_draws.mean(axis=0)
    return dict(zip(result.algorithms, means - means.max()))


# --------------------------------------------------------------------------- cliques

def chain_matrix(k, edges, p=0.99):
    matrix = np.zeros((k, k))
    for i, j in edges:
        matrix[i, j] = matrix[j, i] = p
    return matrix


@pytest.mark.parametrize("k, edges, expected", [
    (3, [(0, 1), (1, 2)], (("A", "B"), ("B", "C"))),                    # a chain
    (3, [(0, 1), (0, 2), (1, 2)], (("A", "B", "C"),)),                  # complete
    (3, [], ()),                                                         # isolated: no groups
    (4, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)], (("A", "B", "C"), ("B", "C", "D"))),
    (5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)],                       # a 5-cycle: its edges
     (("A", "B"), ("A", "E"), ("B", "C"), ("C", "D"), ("D", "E"))),
    (5, [(0, 1), (2, 3)], (("A", "B"), ("C", "D"))),                     # E alone: in no group
])
def test_equivalence_groups_of_hand_made_graphs(k, edges, expected):
    names = ABC[:k]
    matrix = chain_matrix(len(names), edges)
    assert plots.equivalence_groups(names, matrix) == expected
    # the same graph as a mapping of pairs and as a DataFrame in another order
    mapping = {(names[i], names[j]): matrix[i, j]
               for i, j in itertools.combinations(range(len(names)), 2)}
    assert plots.equivalence_groups(names, mapping) == expected
    frame = pd.DataFrame(matrix, index=list(names), columns=list(names)).iloc[::-1, ::-1]
    assert plots.equivalence_groups(names, frame) == expected


def test_equivalence_needs_the_threshold_and_no_more():
    names = ("A", "B", "C")
    matrix = chain_matrix(3, [(0, 1)], p=0.95) + chain_matrix(3, [(1, 2)], p=0.9499999)
    assert plots.equivalence_groups(names, matrix) == (("A", "B"),)
    assert plots.equivalence_groups(names, matrix, threshold=0.9) == (("A", "B"), ("B", "C"))
    with pytest.raises(ValueError, match="threshold"):
        plots.equivalence_groups(names, matrix, threshold=0.5)


def brute_force_cliques(k, adjacency):
    cliques = [set(s) for r in range(1, k + 1) for s in itertools.combinations(range(k), r)
               if all(adjacency[i, j] for i, j in itertools.combinations(s, 2))]
    return {frozenset(c) for c in cliques if not any(c < other for other in cliques)}


@pytest.mark.parametrize("seed", range(20))
def test_groups_are_the_maximal_cliques_of_a_brute_force_search(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 10))
    upper = np.triu(rng.random((k, k)) < rng.uniform(0.2, 0.9), 1)
    adjacency = upper | upper.T
    names = tuple(f"m{i}" for i in range(k))
    groups = plots.equivalence_groups(names, np.where(adjacency, 0.99, 0.01))
    expected = {c for c in brute_force_cliques(k, adjacency) if len(c) > 1}
    assert {frozenset(names.index(a) for a in g) for g in groups} == expected
    assert len(groups) == len(expected)                       # each clique once
    assert list(groups) == sorted(groups, key=lambda g: [names.index(a) for a in g])


def test_undecided_groups_join_only_pairs_no_region_decides():
    names = ("A", "B", "C", "D")
    probabilities = {("A", "B"): (0.3, 0.5, 0.2), ("B", "C"): (0.5, 0.02, 0.48),
                     ("A", "C"): (0.0, 0.01, 0.99),          # decided: A better
                     ("C", "D"): (0.0, 0.97, 0.03),          # equivalent, not undecided
                     ("A", "D"): (0.2, 0.05, 0.75), ("B", "D"): (0.4, 0.1, 0.5)}
    assert plots.undecided_groups(names, probabilities) == (("A", "B", "D"), ("B", "C"))
    with pytest.raises(ValueError, match="not one of the algorithms"):
        plots.undecided_groups(names, {("A", "Z"): (0.3, 0.4, 0.3)})


# --------------------------------------------------------------------------- the figure

def test_planted_groups_are_drawn_at_the_draws_positions_and_intervals(tmp_path):
    result = planted([0, 0, 0, -0.05, -0.05], spread=1e-4)
    ax = plots.plot_bayesian_cd(result)
    positions = relative_means(result)
    assert drawn_groups(ax, "equivalent_group", positions) == {frozenset("ABC"), frozenset("DE")}
    assert by_gid(ax.lines, "undecided_group") == []
    # algorithms best first; each point at its mean relative to the best, draw by draw
    names = [t.get_text() for t in by_gid(ax.texts, "algorithm")]
    assert names == sorted(positions, key=lambda a: -positions[a])
    means = [line.get_xdata()[0] for line in by_gid(ax.lines, "mean")]
    assert np.allclose(means, [positions[a] for a in names], rtol=0, atol=1e-12)
    draws = result.population_draws
    best = result.algorithms.index(names[0])
    for name, patch in zip(names, by_gid(ax.patches, "hdi")):
        low, high = az.hdi(draws[:, result.algorithms.index(name)] - draws[:, best], hdi_prob=0.95)
        assert patch.get_x() == pytest.approx(low, abs=1e-12)
        assert patch.get_x() + patch.get_width() == pytest.approx(high, abs=1e-12)
    band, = by_gid(ax.patches, "rope_band")
    assert (band.get_x(), band.get_x() + band.get_width()) == pytest.approx((-0.01, 0.01))
    assert ax.get_title() == ""
    ax.figure.savefig(tmp_path / "planted.png", dpi=60)


def test_undecided_pairs_are_dashed_bars_never_equivalent():
    # B sits on the ROPE's edge below A, with a spread of a ROPE: P(rope) and P(right) (A
    # better) near 0.5
    result = planted([0.0, -0.01, -0.1], spread=0.007, seed=3)
    table = result.to_frame().set_index(["first", "second"])
    ab = table.loc[("A", "B"), ["population_p_rope", "population_p_right"]]
    assert ab.between(0.3, 0.7).all()
    ax = plots.plot_bayesian_cd(result)
    positions = relative_means(result)
    assert drawn_groups(ax, "undecided_group", positions) == {frozenset("AB")}
    assert by_gid(ax.lines, "equivalent_group") == []
    bar, = by_gid(ax.lines, "undecided_group")
    assert bar.get_linestyle() != "-" and bar.get_color() != "black"


def test_probabilities_are_read_from_the_table_not_from_the_draws():
    """Bars follow the table's probabilities (and the chosen scope), here 0.5 in the ROPE."""
    result = planted([0, 0, -0.05], spread=1e-4)
    table = result.to_frame()
    ab = (table["first"] == "A") & (table["second"] == "B")
    table.loc[ab, ["next_dataset_p_left", "next_dataset_p_rope", "next_dataset_p_right"]] = \
        [0.25, 0.5, 0.25]
    result.table = table
    positions = relative_means(result)
    population = plots.plot_bayesian_cd(result)
    assert drawn_groups(population, "equivalent_group", positions) == {frozenset("AB")}
    nxt = plots.plot_bayesian_cd(result, scope="next_dataset")
    assert drawn_groups(nxt, "equivalent_group", positions) == set()
    assert drawn_groups(nxt, "undecided_group", positions) == {frozenset("AB")}
    # a lower threshold: P(rope) = 0.5 still decides nothing (it must exceed 0.5)
    assert by_gid(plots.plot_bayesian_cd(result, threshold=0.51, scope="next_dataset").lines,
                  "equivalent_group") == []


def test_an_unreliable_fit_draws_no_bars_and_says_so():
    result = planted([0, 0, 0, -0.05, -0.05], spread=1e-4, reliable=False)
    ax = plots.plot_bayesian_cd(result)
    assert by_gid(ax.lines, "equivalent_group") == by_gid(ax.lines, "undecided_group") == []
    assert "UNRELIABLE" in ax.get_title()
    assert all(p.get_hatch() for p in by_gid(ax.patches, "hdi"))
    assert len(by_gid(ax.patches, "hdi")) == 5


def test_an_unreliable_pair_of_a_reliable_fit_is_never_joined():
    result = planted([0, 0, 0, -0.05, -0.05], spread=1e-4)
    table = result.to_frame()
    table["reliable"] = ~((table["first"] == "A") & (table["second"] == "B"))
    result.table = table
    ax = plots.plot_bayesian_cd(result)
    assert drawn_groups(ax, "equivalent_group", relative_means(result)) == \
        {frozenset("AC"), frozenset("BC"), frozenset("DE")}
    assert ax.get_title().startswith("1 pair(s) unreliable")
    assert not any(p.get_hatch() for p in by_gid(ax.patches, "hdi"))


def test_a_member_between_non_members_is_marked_on_the_bar():
    # from a table: A and C equivalent, B between them in position and in no group
    result = planted([0, -0.004, -0.008], spread=1e-4)
    rows = [("A", "B", (0, 0, 1)), ("A", "C", (0, 1, 0)), ("B", "C", (1, 0, 0))]
    result.table = pd.DataFrame([dict(first=a, second=b, reliable=True,
                                      **{f"{s}_p_{r}": v for s in ("population", "next_dataset")
                                         for r, v in zip(("left", "rope", "right"), p)})
                                 for a, b, p in rows])
    ax = plots.plot_bayesian_cd(result)
    bar, = by_gid(ax.lines, "equivalent_group")
    assert list(bar.get_markevery()) == [1, 2]          # A and C, not B in between
    assert drawn_groups(ax, "equivalent_group", relative_means(result)) == {frozenset("AC")}


def test_draws_on_given_axes_and_rejects_bad_arguments():
    result = planted([0, -0.02], spread=1e-3)
    _, ax = plt.subplots()
    assert plots.plot_bayesian_cd(result, ax=ax) is ax
    with pytest.raises(ValueError, match="scope"):
        plots.plot_bayesian_cd(result, scope="dataset")
    with pytest.raises(ValueError, match="threshold"):
        plots.plot_bayesian_cd(result, threshold=1.5)
    result.population_draws = result.population_draws[:, :1]
    with pytest.raises(ValueError, match="draws x 2"):
        plots.plot_bayesian_cd(result)


def test_one_algorithm_and_a_rope_of_width_zero_still_draw(tmp_path):
    single = planted([0.0], spread=1e-3)
    ax = plots.plot_bayesian_cd(single)
    assert [t.get_text() for t in by_gid(ax.texts, "algorithm")] == ["A"]
    assert by_gid(ax.lines, "equivalent_group") == by_gid(ax.lines, "undecided_group") == []
    # no ROPE: nothing is equivalent, the band is a line at 0
    result = planted([0, 0, -0.05], spread=1e-4)
    result.rope = Rope(0.0, 0.0)
    ax = plots.plot_bayesian_cd(result)
    band, = by_gid(ax.patches, "rope_band")
    assert band.get_x() == 0 and band.get_width() == 0
    assert by_gid(ax.lines, "equivalent_group") == []
    ax.figure.savefig(tmp_path / "no_rope.png", dpi=60)


def test_names_in_any_script_render_without_warnings(tmp_path):
    import warnings

    result = planted([0, -0.02, -0.04], spread=1e-3)
    result.algorithms = ("forêt $x$", "木", "\U0001F332 tree")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plots.plot_bayesian_cd(result)
        ax.figure.savefig(tmp_path / "names.png", dpi=60)
    texts = [t.get_text() for t in by_gid(ax.texts, "algorithm")]
    assert texts[0] == r"forêt \$x\$"
