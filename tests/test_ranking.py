"""The Plackett-Luce ranking (bayescomp.models.ranking): known answers.

* the rankings, ties and tie orders read from the scores, by hand;
* the Stan program's log-likelihood (generated ``log_lik``, its sum over the subsets of each
  tied group) equals a plain Python Plackett-Luce likelihood summed over every order of the
  tied algorithms, at the sampled worths;
* with many datasets and the uniform Dirichlet prior the posterior mean is close to an
  independent maximum-likelihood fit (scipy.optimize on the Plackett-Luce likelihood);
* known worths are recovered inside their credible intervals;
* rank probabilities are a doubly stochastic matrix consistent with p_best and the ranks;
* the ROPE ties algorithms within it of the best of their group: two algorithms within the
  ROPE of each other on every dataset have equal P(best) by symmetry, a winner beyond it
  still wins;
* the same seed gives the same draws, and pystan and CmdStan give the same draws.
"""
import json
import re
from itertools import permutations, product

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

import bayescomp as bc
from bayescomp.models import ranking
from bayescomp.models.ranking import (MAX_TIED, mean_scores, observed_ranks, rank_algorithms,
                                     tie_groups, tie_layout)

SHORT = dict(chains=2, iter_warmup=500, iter_sampling=1000)


def scores_from_rankings(orders, names, ties=()):
    """Scores whose dataset means rank the algorithms as ``orders`` (rows, best first);
    ``ties`` lists (dataset, algorithm, algorithm) pairs given equal scores."""
    k = len(names)
    values = np.zeros((len(orders), k))
    for d, order in enumerate(orders):
        # place j scores 0.9 - 0.05 j: a step five times the default ROPE, no tie
        values[d, order] = 0.9 - 0.05 * np.arange(k)
    for d, a, b in ties:
        values[d, b] = values[d, a]
    return scores_from_means(values, names)


def scores_from_means(values, names):
    """Scores with the given means (datasets x algorithms): two splits per dataset, the
    mean -+ 0.001 (a constant shift keeps the order of the means)."""
    values = np.asarray(values, dtype=float)
    return bc.from_arrays({n: np.stack([values[:, i] + 0.001, values[:, i] - 0.001], axis=1)
                           for i, n in enumerate(names)}, n_folds=2)


def pl_loglik(log_worth, orders):
    """Plackett-Luce log-likelihood of strict orders (rows, best first), written plainly."""
    total = 0.0
    for order in orders:
        for j in range(len(order) - 1):
            rest = order[j:]
            total += log_worth[order[j]] - np.log(np.sum(np.exp(log_worth[rest])))
    return total


def simulate_orders(worths, n, rng):
    """Plackett-Luce rankings: repeatedly draw the next algorithm with probability
    proportional to its worth among those left."""
    orders = []
    for _ in range(n):
        left, order = list(range(len(worths))), []
        while left:
            p = np.asarray(worths)[left]
            order.append(left.pop(rng.choice(len(left), p=p / p.sum())))
        orders.append(order)
    return np.array(orders)


# --- reading the data: no Stan ----------------------------------------------------------------

def test_tie_groups_and_observed_ranks_by_hand():
    assert [g.tolist() for g in tie_groups([0.8, 0.9, 0.8, 0.7])] == [[1], [0, 2], [3]]
    assert [g.tolist() for g in tie_groups([0.8, 0.9, 0.8, 0.7], higher_is_better=False)] == \
        [[3], [0, 2], [1]]
    # rounding noise is a tie: a mean of the same numbers summed in another order
    a = np.mean([0.1, 0.2, 0.7])
    b = np.mean([0.7, 0.1, 0.2])
    assert len(tie_groups([a, b])) == 1
    means = pd.DataFrame([[0.8, 0.9, 0.8, 0.7]], columns=list("abcd"))
    assert observed_ranks(means).iloc[0].tolist() == [2.5, 1, 2.5, 4]


def test_rope_ties_within_the_rope_of_the_groups_best():
    # A ~ B and B ~ C (gaps 0.006) but not A ~ C (0.012): A and B tie, C leads the next group
    assert [g.tolist() for g in tie_groups([0.900, 0.894, 0.888], rope=0.01)] == [[0, 1], [2]]
    # a gap of exactly the ROPE is within it, whatever the rounding of 0.9 - 0.89
    assert [g.tolist() for g in tie_groups([0.89, 0.9, 0.7], rope=0.01)] == [[1, 0], [2]]
    assert [g.tolist() for g in tie_groups([0.89, 0.9, 0.7], rope=0.0099)] == [[1], [0], [2]]
    # losses: the smallest first, the ROPE measured from it
    assert [g.tolist() for g in tie_groups([0.20, 0.105, 0.10, 0.111], False, rope=0.01)] == \
        [[2, 1], [3], [0]]
    means = pd.DataFrame([[0.900, 0.894, 0.888, 0.5]], columns=list("abcd"))
    assert observed_ranks(means).iloc[0].tolist() == [1, 2, 3, 4]
    assert observed_ranks(means, rope=0.01).iloc[0].tolist() == [1.5, 1.5, 3, 4]


def every_order(groups):
    """Every strict order (best first) consistent with tie groups, enumerated."""
    return [np.concatenate(parts) for parts in product(*(list(permutations(g)) for g in groups))]


def test_tie_layout_keeps_the_groups_or_draws_one_order():
    groups = [np.array([1]), np.array([0, 2, 4]), np.array([3, 5])]
    order, group_size = tie_layout(groups, "average")
    assert order.tolist() == [1, 0, 2, 4, 3, 5] and group_size.tolist() == [1, 3, 0, 0, 2, 0]
    one, sizes = tie_layout(groups, "random", rng=np.random.default_rng(0))
    assert tuple(one) in {tuple(o) for o in every_order(groups)} and sizes.tolist() == [1] * 6
    with pytest.raises(ValueError, match="ties"):
        tie_layout(groups, "first")


def test_bad_arguments_say_what_to_do():
    scores = scores_from_rankings([[0, 1, 2]], ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"Dirichlet prior .* \['a', 'b', 'c'\]"):
        rank_algorithms(scores, prior=[1, 0, 1], seed=1)
    with pytest.raises(ValueError, match="at least 2 algorithms"):
        rank_algorithms(scores.subset(algorithms=["a"]), seed=1)
    with pytest.raises(ValueError, match="ties must be one of"):
        rank_algorithms(scores, ties="drop", seed=1)
    with pytest.raises(ValueError, match="ROPE must be symmetric"):
        rank_algorithms(scores, rope=(-0.01, 0.02), seed=1)
    with pytest.raises(ValueError, match="half-width must be"):
        rank_algorithms(scores, rope=-0.01, seed=1)
    # more algorithms tied on a dataset than the exact sum takes: named, with what to do
    many = scores_from_rankings([list(range(MAX_TIED + 1))] * 2,
                                [f"m{k}" for k in range(MAX_TIED + 1)])
    with pytest.raises(ValueError, match=rf"dataset '0': {MAX_TIED + 1} algorithms tie .*"
                                         "ties='random'"):
        rank_algorithms(many, rope=1.0, seed=1)


# --- the Stan program -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tied_fit(stan_backend):
    """5 algorithms on 12 datasets, three of them with ties (one a 3-way tie)."""
    rng = np.random.default_rng(3)
    names = ["a", "b", "c", "d", "e"]
    orders = simulate_orders([0.35, 0.25, 0.2, 0.12, 0.08], 12, rng)
    ties = [(0, orders[0][0], orders[0][1]), (4, orders[4][1], orders[4][2]),
            (4, orders[4][1], orders[4][3]), (7, orders[7][3], orders[7][4])]
    scores = scores_from_rankings(orders, names, ties)
    return scores, rank_algorithms(scores, seed=5, backend=stan_backend, **SHORT)


@pytest.mark.stan
def test_stan_loglik_is_the_sum_over_tie_orders(tied_fit):
    scores, result = tied_fit
    assert result.settings["tied_datasets"] == 3
    means = mean_scores(scores).to_numpy()
    assert [len(every_order(tie_groups(row))) for row in means] == [2, 1, 1, 1, 6, 1, 1, 2, 1,
                                                                    1, 1, 1]
    draws = result.worths.to_numpy()
    log_lik = result.idata.log_likelihood["log_lik"].values.reshape(len(draws), -1)
    for s in range(0, len(draws), 97):
        log_worth = np.log(draws[s])
        for d in range(len(scores)):
            orders = every_order(tie_groups(means[d]))
            expected = np.log(np.sum([np.exp(pl_loglik(log_worth, [o])) for o in orders]))
            # the other treatments of a tie differ by log 2 or more
            assert log_lik[s, d] == pytest.approx(expected, rel=1e-10)


@pytest.mark.stan
def test_large_tie_groups_sum_every_order(stan_backend):
    # 7 algorithms: a group of 5 between a winner and a loser (120 orders), a group of 6
    # before the last (720), and, as the last place is its own group, a group of 6 that
    # takes places 2-7 (probability 1: no information). The sum over the subsets against the
    # orders enumerated, at draws far from uniform worths.
    names = [f"m{k}" for k in range(7)]
    means = np.array([[0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1],
                      [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1],
                      [0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
                      [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]])
    scores = scores_from_means(means, names)
    result = rank_algorithms(scores, seed=3, backend=stan_backend, chains=1, iter_warmup=200,
                             iter_sampling=50)
    draws = result.worths.to_numpy()
    log_lik = result.idata.log_likelihood["log_lik"].values.reshape(len(draws), -1)
    groups = [tie_groups(row) for row in means]
    assert [len(every_order(g)) for g in groups] == [120, 720, 720, 1]
    for s in range(0, len(draws), 10):
        log_worth = np.log(draws[s])
        for d, dataset_groups in enumerate(groups):
            expected = np.log(np.sum([np.exp(pl_loglik(log_worth, [o]))
                                      for o in every_order(dataset_groups)]))
            assert log_lik[s, d] == pytest.approx(expected, rel=1e-10, abs=1e-12)
    # on dataset 2 the tied group takes the last six places with probability 1: only the
    # winner's place, probability w_0, is information
    np.testing.assert_allclose(log_lik[:, 2], np.log(draws[:, 0]), rtol=1e-10)


@pytest.mark.stan
def test_rank_probabilities_are_doubly_stochastic_and_consistent(tied_fit):
    _, result = tied_fit
    probabilities = result.rank_probabilities
    k = len(result.algorithms)
    assert probabilities.shape == (k, k) and list(probabilities.columns) == list(range(1, k + 1))
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, atol=1e-12)
    np.testing.assert_allclose(probabilities.sum(axis=0), 1, atol=1e-12)
    pd.testing.assert_series_equal(result.p_best, probabilities[1].rename("p_best"))
    assert list(result.p_best.index) == list(result.algorithms)
    np.testing.assert_allclose(result.expected_rank["mean"],
                               probabilities.to_numpy() @ np.arange(1, k + 1), atol=1e-12)
    assert np.all(result.expected_rank["low"] <= result.expected_rank["mean"])
    assert np.all(result.expected_rank["mean"] <= result.expected_rank["high"])
    np.testing.assert_allclose(result.worths.sum(axis=1), 1, atol=1e-6)
    # worth mean: the probability of ranking first on a new dataset
    np.testing.assert_allclose(result.worth["mean"], result.worths.mean(), atol=1e-12)


@pytest.mark.stan
def test_outputs_name_the_best_algorithm(tied_fit):
    _, result = tied_fit
    best = result.best
    verdict = result.verdict()
    assert verdict.endswith(".") and not re.search(r"[.:;]\s+[A-Z]", verdict)  # one sentence
    assert best in result.verdict() and best in result.summary()
    frame = result.to_frame()
    assert frame.index[0] == result.expected_rank["mean"].idxmin()
    assert {"p_best", "rank_mean", "rank_low", "rank_high", "worth_mean"} <= set(frame.columns)
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["best"] == best
    assert payload["rank_probabilities"][best][0] == pytest.approx(result.p_best[best])
    markdown = result.to_markdown()
    assert markdown.startswith("### Plackett-Luce ranking of 5 algorithms") and best in markdown
    assert "\\toprule" in result.to_latex()


@pytest.mark.stan
def test_posterior_mean_is_close_to_the_maximum_likelihood_fit(stan_backend):
    rng = np.random.default_rng(11)
    true = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    orders = simulate_orders(true, 400, rng)
    scores = scores_from_rankings(orders, ["a", "b", "c", "d", "e"])
    # independent MLE: log worths with the last fixed at 0, BFGS on the plain likelihood
    fit = optimize.minimize(lambda v: -pl_loglik(np.append(v, 0.0), orders), np.zeros(4),
                            method="BFGS")
    # BFGS stops on precision loss at the optimum: judge the fit by its gradient instead
    assert np.abs(fit.jac).max() < 1e-3, fit
    mle = np.exp(np.append(fit.x, 0.0))
    mle /= mle.sum()
    result = rank_algorithms(scores, seed=2, backend=stan_backend, prior=1.0, **SHORT)
    # uniform Dirichlet: the posterior mode is the MLE; with 400 rankings mean and mode
    # differ by a small fraction of the posterior sd (measured: 0.06 sd at most)
    distance = np.abs(result.worth["mean"].to_numpy() - mle) / result.worth["sd"].to_numpy()
    assert distance.max() < 0.25, distance


@pytest.mark.stan
def test_known_worths_are_recovered(stan_backend):
    rng = np.random.default_rng(21)
    true = pd.Series([0.45, 0.25, 0.15, 0.1, 0.05], index=["a", "b", "c", "d", "e"])
    scores = scores_from_rankings(simulate_orders(true.to_numpy(), 150, rng), list(true.index))
    # shuffle the algorithms' order in the Scores: the result must follow names, not positions
    scores = scores.subset(algorithms=["c", "e", "a", "d", "b"])
    result = rank_algorithms(scores, seed=4, backend=stan_backend, interval=0.99, **SHORT)
    worth = result.worth.loc[true.index]
    assert np.all((worth["hdi_low"] <= true) & (true <= worth["hdi_high"])), worth
    assert result.best == "a" and result.p_best["a"] > 0.95
    assert result.verdict().startswith("a is the best of the 5 algorithms")
    assert result.expected_rank.loc["a", "high"] == 1


@pytest.mark.stan
def test_lower_is_better_reverses_the_ranking(stan_backend):
    orders = [[0, 1, 2]] * 8 + [[1, 0, 2]] * 2
    scores = scores_from_rankings(orders, ["a", "b", "c"])
    up = rank_algorithms(scores, seed=1, backend=stan_backend, **SHORT)
    down = rank_algorithms(scores, seed=1, backend=stan_backend, higher_is_better=False, **SHORT)
    assert up.best == "a" and down.best == "c"
    assert down.observed_ranks["c"].tolist() == [1.0] * 10


@pytest.mark.stan
def test_same_seed_same_draws_on_both_engines(pystan_backend, cmdstanpy_backend):
    scores = bc.datasets.load_classifiers()
    py = rank_algorithms(scores, seed=8, backend="pystan", **SHORT)
    again = rank_algorithms(scores, seed=8, backend="pystan", **SHORT)
    cmd = rank_algorithms(scores, seed=8, backend="cmdstanpy", **SHORT)
    cmd_again = rank_algorithms(scores, seed=8, backend="cmdstanpy", **SHORT)
    np.testing.assert_array_equal(py.worths, again.worths)
    np.testing.assert_array_equal(cmd.worths, cmd_again.worths)
    # the same Stan sampler and seed, the draws as doubles
    np.testing.assert_allclose(py.worths, cmd.worths, rtol=1e-10)
    other = rank_algorithms(scores, seed=9, backend="pystan", **SHORT)
    assert not np.array_equal(py.worths, other.worths)
    assert py.settings["backend"] == "pystan" and cmd.settings["backend"] == "cmdstanpy"


def monte_carlo_se(result, algorithm, rank):
    """Monte Carlo standard error of P(rank of the worth of ``algorithm`` is ``rank``), from
    the effective sample size of the indicator across the chains."""
    import arviz as az

    chains = result.idata.posterior.sizes["chain"]
    indicator = (ranking.ranks_of_draws(result.worths.to_numpy())[:, list(result.algorithms)
                                                                  .index(algorithm)] == rank)
    p = indicator.mean()
    return np.sqrt(p * (1 - p) / az.ess(indicator.reshape(chains, -1).astype(float)))


@pytest.mark.stan
def test_algorithms_within_the_rope_tie_and_a_winner_beyond_it_wins(stan_backend):
    rng = np.random.default_rng(7)
    base = rng.uniform(0.7, 0.9, 12)
    # a above b by 0.004 on every dataset: inside the ROPE, a hair's win without it
    a, b = base, base - 0.004
    top = scores_from_means(np.column_stack([a, b, base - 0.05, base - 0.10]), list("abcd"))
    tied = rank_algorithms(top, seed=3, backend=stan_backend, **SHORT)
    assert tied.settings["rope"] == 0.01 and tied.settings["tied_datasets"] == 12
    # a and b enter the likelihood symmetrically: equal P(best) up to Monte Carlo error
    se = np.hypot(monte_carlo_se(tied, "a", 1), monte_carlo_se(tied, "b", 1))
    assert abs(tied.p_best["a"] - tied.p_best["b"]) < 4 * se, (tied.p_best, se)
    assert tied.p_best["a"] + tied.p_best["b"] > 0.95
    assert tied.observed_ranks[["a", "b"]].to_numpy().tolist() == [[1.5, 1.5]] * 12
    # without the ROPE the same data make a best: a win by 0.004 counts as a win
    strict = rank_algorithms(top, rope=0, seed=3, backend=stan_backend, **SHORT)
    assert strict.best == "a" and strict.p_best["a"] > 0.95
    # a winner beyond the ROPE on every dataset still wins; a and b tie for second
    winner = scores_from_means(np.column_stack([a, b, base - 0.10, base + 0.02]), list("abdw"))
    result = rank_algorithms(winner, seed=3, backend=stan_backend, **SHORT)
    assert result.best == "w" and result.p_best["w"] > 0.95
    # the summary's two tables list the algorithms alike, by the rank of the worth (w first),
    # not in the order of the scores' columns (w last)
    frame = result.to_frame()
    rows = result.summary().split("Probability of each rank")[1].splitlines()[3:]
    assert frame.index[0] == "w" and list(result.algorithms)[-1] == "w"
    assert [line.split()[0] for line in rows[:len(frame)]] == list(frame.index)
    assert result.verdict().startswith("w is the best of the 4 algorithms")
    se = np.hypot(monte_carlo_se(result, "a", 2), monte_carlo_se(result, "b", 2))
    second = result.rank_probabilities[2]
    assert abs(second["a"] - second["b"]) < 4 * se, (second, se)
    # the outputs state the ROPE and tell the rank of the worth from the observed rank
    verdict = result.verdict()
    assert "ties within the ROPE 0.01" in verdict and "rank of its worth" in verdict
    assert "mean observed rank 1.00 on the 12 datasets" in verdict
    for text in (result.summary(), result.to_markdown()):
        assert "within the ROPE 0.01 of the best of their group tie" in text
        assert "not the mean observed rank" in text


def test_module_is_exported():
    assert bc.rank_algorithms is rank_algorithms and bc.RankingResult is ranking.RankingResult


@pytest.mark.stan
def test_figure_shows_every_algorithm(tied_fit):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, result = tied_fit
    ranks_ax, heat_ax = result.plot()
    order = list(result.expected_rank["mean"].sort_values().index)
    assert [t.get_text() for t in heat_ax.get_yticklabels()] == order
    shown = heat_ax.images[0].get_array()
    np.testing.assert_allclose(shown, result.rank_probabilities.loc[order].to_numpy())
    # best at the top: labels by descending height are the table's order
    ticks = sorted(zip(ranks_ax.get_yticks(), [t.get_text() for t in ranks_ax.get_yticklabels()]),
                   reverse=True)
    assert [label for _, label in ticks] == list(result.to_frame().index)
    # the two ranks, named apart: dots at the worth's mean rank, crosses at the observed one
    frame = result.to_frame()
    worth, = [line for line in ranks_ax.lines if line.get_gid() == "worth_rank"]
    observed, = [line for line in ranks_ax.lines if line.get_gid() == "observed_rank"]
    np.testing.assert_allclose(worth.get_xdata(), frame.rank_mean)
    np.testing.assert_allclose(observed.get_xdata(), result.observed_ranks.mean()[frame.index])
    assert [t.get_text() for t in ranks_ax.get_legend().get_texts()] == [
        "rank of the worth: posterior mean, 95% interval",
        "mean observed rank on the 12 datasets (ties within ROPE 0.01)"]
    plt.close("all")


@pytest.mark.stan
def test_command_line_rank(stan_backend, tmp_path, monkeypatch, capsys):
    from bayescomp.cli import main as cli

    monkeypatch.chdir(tmp_path)
    csv = tmp_path / "scores.csv"
    bc.datasets.load_classifiers(as_frame=True).to_csv(csv, index=False)
    options = ["--seed", "3", "--backend", stan_backend, "--chains", "2", "--iter-warmup",
               "500", "--iter-sampling", "1000", "--ess", "1500"]
    code = cli.main(["rank", str(csv), *options, "--out", str(tmp_path / "out"),
                     "--json", str(tmp_path / "rank.json")])
    assert code == 0, capsys.readouterr().err
    direct = rank_algorithms(bc.read_csv(csv), seed=3, backend=stan_backend, ess=1500, **SHORT)
    printed = capsys.readouterr().out
    assert direct.verdict() in printed
    payload = json.loads((tmp_path / "rank.json").read_text())
    assert payload["best"] == direct.best == "forest" and payload["command"] == "rank"
    assert payload["settings"]["rope"] == 0.01 == direct.settings["rope"]
    assert payload["algorithms"]["forest"]["p_best"] == pytest.approx(direct.p_best["forest"])
    assert payload["ess"] == pytest.approx(direct.settings["ess"]) and \
        payload["ess"]["target"] == 1500
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ranking.png", "report.md"]
    assert (tmp_path / "out" / "report.md").read_text().startswith("### Plackett-Luce ranking")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "rank.json", "scores.csv"]
    # bad input: one line naming the problem, exit code 2
    assert cli.main(["rank", str(csv), "--column", "learner"]) == 2
    assert "--column expects KEY=NAME" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:  # bad usage: argparse's one line, code 2
        cli.main(["rank", str(csv), "--rope", "-0.01,0.02"])
    assert exit_info.value.code == 2
    assert "expects a half-width W >= 0" in capsys.readouterr().err
