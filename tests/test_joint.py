"""The joint model of K algorithms (bc.compare_many): its coordinates, its likelihood with
the fold noise integrated out, its invariance to the order of the algorithms, its K = 2
agreement with bc.hierarchical, and the agreement of its pair table and ranks."""
from __future__ import annotations

import json
import warnings
from itertools import permutations

import arviz as az
import numpy as np
import pytest
from scipy import integrate, stats

import bayescomp as bc
from bayescomp.models import joint_program as jp
from bayescomp.models.joint_density import bartlett_layout, dimensions
from bayescomp.models.joint_ranks import rank_probabilities
from bayescomp.models.modes import probability_mcse
from bayescomp.rope import Rope


def _scores(k: int, n_datasets: int, seed: int, n_scores: int = 20, rho: float = 0.1) -> bc.Scores:
    rng = np.random.default_rng(seed)
    arrays = {}
    for i in range(n_datasets):
        base = rng.normal(0.8, 0.05)
        shared = rng.normal(0, 0.02, n_scores)
        arrays[f"d{i}"] = np.array([base + 0.01 * a + shared + rng.normal(0, 0.02, n_scores)
                                    for a in range(k)])
    names = [f"a{a}" for a in range(k)]
    return bc.from_arrays({name: np.array([arrays[f"d{i}"][a] for i in range(n_datasets)])
                           for a, name in enumerate(names)},
                          datasets=[f"d{i}" for i in range(n_datasets)], rho=rho)


def test_contrast_basis_is_scaled_helmert():
    for k in (2, 3, 5):
        G = jp.contrast_basis(k)
        assert np.allclose(G.T @ G, 2 * np.eye(k - 1))
        assert np.allclose(G.T @ np.ones(k), 0)
    assert np.allclose(jp.contrast_basis(2), [[1.0], [-1.0]])
    # every pair's difference is g_ab . z with z = G'y
    pairs, vectors = jp.pair_vectors(4)
    y = np.array([0.3, 0.1, 0.7, 0.2])
    z = jp.contrast_basis(4).T @ y
    for (a, b), g in zip(pairs, vectors):
        assert g @ z == pytest.approx(y[a] - y[b])


@pytest.mark.parametrize("d", [1, 2, 3])
def test_log_likelihood_is_scipys_multivariate_t(d):
    rng = np.random.default_rng(d)
    root = rng.normal(size=(d, d))
    psi = root @ root.T + d * np.eye(d)
    m, delta = rng.normal(size=d), rng.normal(size=d)
    for dof in (3.0, 17.0, 96.0):
        expected = stats.multivariate_t(loc=delta, shape=psi, df=dof).logpdf(m)
        assert jp.log_likelihood(m, psi, dof, delta) == pytest.approx(expected, rel=1e-10)


def test_sigma_integrated_likelihood_at_k2_is_the_numerical_integral():
    """At d = 1 the Student-t of m_i given delta_i (Sigma_i integrated out) is, up to a
    constant, the integral over sigma of the raw differences' compound-symmetric normal
    density times sigma's prior: uniform with the soft floor exp(-(n - 1) floor^2 / (2
    sigma^2))."""
    scores = _scores(2, 3, seed=4, n_scores=12, rho=0.2)
    data, scale = jp.prepare(scores, bc.PRIORS["paper"])
    x = scores.datasets[0].values[0] - scores.datasets[0].values[1]
    n, rho = x.size, 0.2
    floor = data["floor_sd"][0] * scale
    correlation = (1 - rho) * np.eye(n) + rho * np.ones((n, n))

    def integral(delta):
        def integrand(sigma):
            return (stats.multivariate_normal(np.full(n, delta), sigma ** 2 * correlation).pdf(x)
                    * np.exp(-(n - 1) * floor ** 2 / (2 * sigma ** 2)))
        return np.log(integrate.quad(integrand, 1e-4, 1.0, points=[x.std()], limit=200,
                                     epsabs=0, epsrel=1e-11)[0])

    psi = data["noise_scale"][0] * scale ** 2
    deltas = [x.mean(), x.mean() + 0.01, x.mean() - 0.03]
    numeric = [integral(v) for v in deltas]
    closed = [jp.log_likelihood([x.mean()], psi, data["noise_dof"][0], [v]) for v in deltas]
    for k in (1, 2):
        assert closed[k] - closed[0] == pytest.approx(numeric[k] - numeric[0], abs=1e-7)


def _conditional(delta0, prior, noise, m):
    """The normal conditional of delta given m ~ N(delta, noise), delta ~ N(delta0, prior),
    in covariance form (defined for a singular prior)."""
    gain = prior @ np.linalg.inv(prior + noise)
    return delta0 + gain @ (m - delta0), prior - gain @ prior


@pytest.mark.parametrize("rank", [3, 2])
def test_draw_delta_is_the_normal_conditional(rank):
    """Draws of delta_i against the closed-form conditional, for a full population covariance
    and one with a null direction (where delta_i must equal delta0 along it exactly); and
    delta_pair_conditional's centre and sd of every pair against the same closed form and
    against the draws (Matheron's rule) along the pair's vector."""
    rng = np.random.default_rng(3)
    d, n, draws = 3, 2, 40000
    factor = rng.normal(size=(d, d))
    if rank < d:
        factor[:, -1] = 0
        factor = np.linalg.qr(rng.normal(size=(d, d)))[0] @ factor   # not triangular
    noise = np.stack([np.cov(rng.normal(size=(d, 8))) for _ in range(n)])
    data = dict(mean_contrast=rng.normal(size=(n, d)), noise_scale=noise)
    delta0 = np.array([0.3, -0.2, 0.1])
    log_kappa = np.full((1, draws, n), np.log([0.5, 2.0]))
    log_lambda = np.full((1, draws, n), np.log([1.5, 0.4]))
    delta = jp.draw_delta(np.broadcast_to(delta0, (1, draws, d)),
                          np.broadcast_to(factor, (1, draws, d, d)), log_kappa, log_lambda,
                          data, np.random.default_rng(4))
    for i, (lam, kappa) in enumerate([(1.5, 0.5), (0.4, 2.0)]):
        mean, cov = _conditional(delta0, factor @ factor.T / lam, noise[i] / kappa,
                                 data["mean_contrast"][i])
        sample = delta[0, :, i]
        se = np.sqrt(np.diag(cov) / draws)
        assert np.all(np.abs(sample.mean(axis=0) - mean) < 4 * se + 1e-12)
        np.testing.assert_allclose(np.cov(sample.T), cov, atol=0.03 * np.abs(cov).max())
        if rank < d:
            null = np.linalg.svd(factor)[0][:, -1]
            np.testing.assert_allclose((sample - delta0) @ null, 0, atol=1e-9)
        _, vectors = jp.pair_vectors(d + 1)
        centre, sd = jp.delta_pair_conditional(delta0, factor, log_kappa[0, 0], log_lambda[0, 0],
                                               data, vectors)
        np.testing.assert_allclose(centre[i], vectors @ mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sd[i], np.sqrt(np.einsum("pi,ij,pj->p", vectors, cov, vectors)),
                                   rtol=1e-7)
        pairs = sample @ vectors.T
        assert np.all(np.abs(pairs.mean(axis=0) - centre[i]) < 4 * sd[i] / np.sqrt(draws))
        np.testing.assert_allclose(pairs.std(axis=0), sd[i], rtol=0.02)


def test_delta0_copies_are_draws_of_its_normal_conditional():
    """delta0_copies draws N(centre, precision^-1) in the sampled coordinates and turns them
    by the rotation: 200,000 copies of one posterior draw have mean V c and covariance
    V P^-1 V' (known answer, within six standard errors)."""
    from bayescomp.models.joint_program import delta0_copies

    rng = np.random.default_rng(11)
    root = rng.normal(size=(3, 3))
    precision = root @ root.T + 0.5 * np.eye(3)
    centre = np.array([0.3, -1.0, 2.0])
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    copies = delta0_copies(centre[None, None], precision[None, None], rotation, 200_000,
                           rng)[0, 0]
    covariance = rotation @ np.linalg.inv(precision) @ rotation.T
    sd = np.sqrt(np.diag(covariance))
    n = len(copies)
    np.testing.assert_array_less(np.abs(copies.mean(axis=0) - rotation @ centre),
                                 6 * sd / np.sqrt(n))
    # a sample covariance's standard error is at most sd_i sd_j sqrt(2 / n)
    np.testing.assert_array_less(np.abs(np.cov(copies.T) - covariance),
                                 6 * np.outer(sd, sd) * np.sqrt(2 / n))


def test_lower_factor_is_choleskys_and_defined_on_a_null_direction():
    rng = np.random.default_rng(5)
    full = rng.normal(size=(6, 4, 4))
    np.testing.assert_allclose(jp.lower_factor(full),
                               np.linalg.cholesky(full @ np.swapaxes(full, -1, -2)), atol=1e-10)
    singular = full.copy()
    singular[..., 0] = 0
    lower = jp.lower_factor(singular)
    np.testing.assert_allclose(lower @ np.swapaxes(lower, -1, -2),
                               singular @ np.swapaxes(singular, -1, -2), atol=1e-12)
    assert np.allclose(np.triu(lower, 1), 0) and np.all(np.diagonal(lower, 0, -2, -1) >= 0)


def test_prepared_data_rotate_with_the_order_of_the_algorithms():
    """Permuting the algorithms changes every contrast by one orthogonal matrix R = G'PG/2:
    the means by R, the noise scales by R . R', the bounds and the scale not at all; so the
    program's log density (whose priors are orthogonally invariant) is unchanged."""
    scores = _scores(4, 5, seed=2)
    base, scale = jp.prepare(scores, bc.PRIORS["paper"])
    G = jp.contrast_basis(4)
    for order in list(permutations(range(4)))[1::7]:
        permuted = scores.subset(algorithms=[scores.algorithms[a] for a in order])
        data, permuted_scale = jp.prepare(permuted, bc.PRIORS["paper"])
        P = np.eye(4)[list(order)]
        R = G.T @ P @ G / 2
        assert np.allclose(R @ R.T, np.eye(3))
        assert permuted_scale == pytest.approx(scale)
        assert data["sigma0_upper"] == pytest.approx(base["sigma0_upper"])
        assert np.allclose(data["mean_contrast"], base["mean_contrast"] @ R.T)
        assert np.allclose(data["noise_scale"], R @ base["noise_scale"] @ R.T)
        # the likelihood of the same effects, rotated, is the same
        delta = np.random.default_rng(0).normal(size=(5, 3))
        assert np.allclose(
            jp.log_likelihood(data["mean_contrast"], data["noise_scale"], data["noise_dof"],
                              delta @ R.T),
            jp.log_likelihood(base["mean_contrast"], base["noise_scale"], base["noise_dof"],
                              delta))


def test_rank_probabilities_share_places_within_the_rope():
    rope = Rope(-0.01, 0.01)
    effects = np.array([[0.05, 0.045, -0.095],     # a, b tie (0.005 apart), c last
                        [0.05, 0.0, -0.05],        # strict order a, b, c
                        [-0.05, 0.0, 0.05]])       # c, b, a
    ranks = rank_probabilities(effects, rope, ["a", "b", "c"])
    assert np.allclose(ranks.sum(axis=0), 1) and np.allclose(ranks.sum(axis=1), 1)
    assert ranks.loc["a", 1] == pytest.approx((0.5 + 1 + 0) / 3)
    assert ranks.loc["b", 1] == pytest.approx(0.5 / 3)
    assert ranks.loc["c", 3] == pytest.approx(2 / 3)


def test_two_splits_are_refused_and_three_compare_any_number():
    # many short datasets: five named and a count
    with pytest.raises(ValueError, match=r"at least 3 splits on every dataset .* 9 of 9 have "
                                         r"2 \('d0', 'd1', 'd2', 'd3', 'd4' and 4 more\)"):
        jp.prepare(_scores(5, 9, seed=1, n_scores=2), bc.PRIORS["paper"])
    data, _ = jp.prepare(_scores(6, 3, seed=1, n_scores=3), bc.PRIORS["paper"])
    assert data["d"] == 5 and np.array_equal(data["noise_dof"], [1.0, 1.0, 1.0])


def test_each_contrast_has_the_pairwise_noise_whatever_k():
    # Sigma_i integrated out under |Sigma_i|^(1/2 - d): each contrast's mean is Student-t with
    # n_i - 2 degrees of freedom and the scale K = 2 gives it (the program's device 1), the
    # floor term (n_i - 1) b_i floor_i^2 aside, which takes the floor of all K's scores
    scores = _scores(4, 5, seed=3, n_scores=6, rho=0.2)
    data, scale = jp.prepare(scores, bc.PRIORS["paper"])
    pairs, vectors = jp.pair_vectors(4)
    n, rho = data["n_scores"], data["rho"]
    a = rho + (1 - rho) / n
    for (first, second), g in zip(pairs, vectors):
        names = [scores.algorithms[first], scores.algorithms[second]]
        pair, pair_scale = jp.prepare(scores.subset(algorithms=names), bc.PRIORS["paper"])
        assert np.array_equal(data["noise_dof"], pair["noise_dof"])
        contrast = np.einsum("j,njk,k->n", g, data["noise_scale"], g) * scale ** 2
        floor2, pair_floor2 = (data["floor_sd"] * scale) ** 2, (pair["floor_sd"] * pair_scale) ** 2
        expected = (pair["noise_scale"][:, 0, 0] * pair_scale ** 2
                    + a * (n - 1) * (floor2 - pair_floor2) / (n - 2))
        assert contrast == pytest.approx(expected, rel=1e-10)


@pytest.fixture(scope="module")
def three_algorithms(stan_backend):
    scores = _scores(3, 6, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bc.compare_many(scores, seed=3, backend=stan_backend, iter_warmup=500,
                               iter_sampling=500)


@pytest.mark.stan
def test_pair_table_and_ranks_come_from_the_same_draws(three_algorithms):
    result = three_algorithms
    frame = result.to_frame()
    assert list(frame.columns) == [
        "first", "second", "delta0_mean", "delta0_hdi_low", "delta0_hdi_high",
        "population_p_left", "population_p_rope", "population_p_right", "population_decision",
        "next_dataset_p_left", "next_dataset_p_rope", "next_dataset_p_right",
        "next_dataset_decision", "reliable"]
    assert [tuple(r) for r in frame[["first", "second"]].values] == [
        ("a0", "a1"), ("a0", "a2"), ("a1", "a2")]
    draws = result.population_draws
    assert draws.shape[1] == 3 and np.allclose(draws.sum(axis=1), 0, atol=1e-12)
    names = list(result.algorithms)
    for _, row in frame.iterrows():
        difference = draws[:, names.index(row["first"])] - draws[:, names.index(row["second"])]
        assert np.allclose(result.rope.shares(difference),
                           row[["population_p_left", "population_p_rope", "population_p_right"]]
                           .astype(float))
        assert row["delta0_mean"] == pytest.approx(difference.mean())
    assert result.p_best.sum() == pytest.approx(1)
    assert np.allclose(result.rank_probabilities.sum(axis=0), 1)
    assert np.allclose(result.rank_probabilities.sum(axis=1), 1)
    # P(a best) is at most P(a better than b, or tied with it) for every other b
    better = result.probability_matrix("better") + result.probability_matrix("rope")
    for a in names:
        for b in names:
            if a != b:
                assert result.p_best[a] <= better.loc[a, b] + 1e-9
    assert set(result.datasets.columns) >= {"dataset", "first", "second", "delta_mean",
                                            "delta_hdi_low", "delta_hdi_high", "p_left",
                                            "p_rope", "p_right"}
    assert len(result.datasets) == 6 * 3
    # each dataset's probabilities, from delta_i's conditional, agree with the shares of
    # its draws within 4 Monte Carlo errors (and 3 / draws where no draw fell in a region:
    # its probability is then below that at 95%)
    for (dataset, first, second), row in result.datasets.set_index(
            ["dataset", "first", "second"]).iterrows():
        draws = result.idata.posterior["delta"].sel(dataset=dataset,
                                                    pair=f"{first} - {second}").values
        indicators = result.rope.indicators(draws)
        assert np.all(np.abs(row[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)
                             - indicators.reshape(-1, 3).mean(axis=0))
                      <= 4 * probability_mcse(indicators) + 3 / draws.size)
    json.dumps(result.to_dict())
    assert "Joint comparison" in result.to_markdown()
    assert "a0 vs a1" in result.summary()
    # the summary's ranks, as the report's, list the most probably best first
    rows = result.summary().split("Ranks of the population means")[1].splitlines()[3:]
    order = list(result.p_best.sort_values(ascending=False, kind="stable").index)
    assert [line.split()[0] for line in rows[:len(order)]] == order
    assert "tabular" in result.to_latex()


@pytest.mark.stan
def test_copies_of_delta0_agree_with_the_programs_draw_and_halve_its_error(three_algorithms):
    """The pair table reads 16 copies of delta0 per posterior draw, drawn in numpy from its
    conditional; the program draws one from the same conditional (generated quantities).
    Two routes to P(left / rope / right): they agree within Monte Carlo error, and the
    copies' error is under half the single draw's."""
    from bayescomp.models.joint_posterior import population_masses
    from bayescomp.models.modes import probability_mcse

    result = three_algorithms
    post = result.idata.posterior
    copies = population_masses(post, result.rope)
    single = result.rope.indicators(post["delta0"].values)
    for p, row in enumerate(result.to_frame().itertuples()):
        by_copies, by_draw = copies[:, :, p], single[:, :, p]
        estimate = by_copies.reshape(-1, 3).mean(axis=0)
        np.testing.assert_allclose(estimate, [row.population_p_left, row.population_p_rope,
                                              row.population_p_right], rtol=0, atol=1e-12)
        errors = probability_mcse(by_copies), probability_mcse(by_draw)
        # a region that no single draw reached has a Monte Carlo error of 0 by the draws'
        # own estimate, which says nothing: there the single draws' error is at least a
        # proportion's, sqrt(p (1 - p) / n), at the copies' p (a probability of 5e-4 leaves
        # 2,000 draws without a hit 37% of the time)
        n_draws = by_draw.shape[0] * by_draw.shape[1]
        floor = np.sqrt(estimate * (1 - estimate) / n_draws)
        assert np.all(np.abs(estimate - by_draw.reshape(-1, 3).mean(axis=0))
                      <= 4 * np.hypot(errors[0], np.maximum(errors[1], floor)) + 1e-12)
        away = (estimate > 0.01) & (estimate < 0.99)
        assert away.any() and np.all(errors[0][away] < 0.5 * errors[1][away]), errors


def _k2_agreement(scores, first, second, backend, seed=5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = bc.compare_many(scores, [first, second], seed=seed, backend=backend)
        pair = bc.hierarchical(scores, first, second, seed=seed, backend=backend,
                               baselines=False)
    row = joint.to_frame().iloc[0]
    joint_p = row[["population_p_left", "population_p_rope", "population_p_right"]].astype(float)
    estimate = joint.population[(first, second)]
    tolerance = np.maximum(0.03, 3 * np.hypot(estimate.mcse, pair.population.mcse))
    assert np.all(np.abs(joint_p.values - pair.population.probabilities) <= tolerance), \
        (joint_p.values, pair.population.probabilities)
    # at K = 2, P(first ranked first) = P(first better) + P(equivalent) / 2
    assert joint.p_best[first] == pytest.approx(row["population_p_right"]
                                                + row["population_p_rope"] / 2)
    return joint, pair


@pytest.mark.stan
@pytest.mark.slow
def test_k2_is_the_papers_model_on_the_builtin_example(stan_backend):
    scores = bc.datasets.load_classifiers()
    _k2_agreement(scores, "forest", "tree", stan_backend)


@pytest.mark.stan
@pytest.mark.slow
def test_k2_is_the_papers_model_on_a_near_identical_pair(stan_backend):
    scores = bc.simulate.near_identical_collection(12, seed=3).scores
    _k2_agreement(scores, *scores.algorithms[:2], stan_backend)


@pytest.mark.stan
@pytest.mark.slow
def test_k2_is_the_papers_model_on_a_ragged_design(stan_backend):
    """Datasets of 1 x 10, 10 x 10, 5 x 2, 3 x 5 and 1 x 5 splits, each with its own rho."""
    scores = bc.simulate.benchmark_collection(15, design="ragged", delta0=0.01, seed=4).scores
    assert len(set(scores.n_scores)) > 2
    _k2_agreement(scores, "a", "b", stan_backend)


@pytest.mark.stan
def test_program_log_density_is_the_models(pystan_backend, joint_model_log_density):
    """log p(data, theta) of stan/joint.stan at several points, differenced (Stan drops
    constants), against the model written with scipy (conftest.joint_model_log_density)."""
    import stan

    from bayescomp import sampling

    scores = _scores(3, 5, seed=9, n_scores=15)
    data, _ = jp.prepare(scores, bc.PRIORS["paper"])
    program_data = jp.stan_data(data)
    _, code = sampling.program_code("joint")
    sampling.engine("pystan").compile("joint", code, route="public")
    model = stan.build(code, data=sampling._to_stan_data(program_data), random_seed=1)
    q = 5

    rng = np.random.default_rng(2)
    points = [(0.5, [1.2, 0.8], [0.3], 1.5, rng.normal(size=q), rng.normal(size=q)),
              (0.2, [0.7, 1.4], [-0.5], 0.2, rng.normal(size=q), rng.normal(size=q)),
              (1.5, [2.0, 0.3], [1.1], 3.0, rng.normal(size=q), rng.normal(size=q)),
              (0.05, [1.0, 1.0], [0.0], -1.0, rng.normal(size=q), rng.normal(size=q))]
    free = [model.unconstrain_pars(dict(
        sigma0=p[0], shape=[[p[1][0], 0.0], [p[2][0], p[1][1]]], log_nu_minus_one=p[3],
        kappa_z=list(p[4]), lambda_z=list(p[5]))) for p in points]
    stan_lp = [model.log_prob(point, adjust_transform=False) for point in free]
    expected = [joint_model_log_density(data, *p) for p in points]
    # the Bartlett factor's coordinates in Stan's order, as joint_density lays them out:
    # row by row, the entries below the diagonal, then the log of the diagonal's
    p = points[0]
    rows, cols, diagonal = bartlett_layout(2)
    assert list(zip(rows, cols)) == [(0, 0), (1, 0), (1, 1)] and diagonal.tolist() == [
        True, False, True]
    np.testing.assert_allclose(np.asarray(free[0])[dimensions(data)["shape"]],
                               [np.log(p[1][0]), p[2][0], np.log(p[1][1])], rtol=1e-12)
    for k in range(1, len(points)):
        # the prior of nu is interpolated (cubic Hermite, error ~1e-6), the moments of
        # log(kappa) (a = 6) and log(lambda) are exact forms or Stirling's series (1e-10)
        assert stan_lp[k] - stan_lp[0] == pytest.approx(expected[k] - expected[0], abs=1e-5)


def test_sampling_rotation_is_the_populations_principal_directions():
    """The program samples V'z with V orthogonal and the eigenvectors of the means'
    covariance, narrowest population share first; at K = 2, V = 1 and nothing moves; the
    likelihood of rotated effects in rotated data is the likelihood."""
    scores = _scores(4, 8, seed=3)
    data, _ = jp.prepare(scores, bc.PRIORS["paper"])
    V = jp.sampling_rotation(data)
    assert np.allclose(V.T @ V, np.eye(3))
    means = np.asarray(data["mean_contrast"])
    noise = np.asarray(data["noise_scale"]).mean(axis=0)
    spread = V.T @ np.cov(means.T) @ V
    assert np.allclose(spread - np.diag(np.diag(spread)), 0, atol=1e-12)
    # the population's share along each direction: the means' spread less the noise, floored
    share = np.maximum(np.diag(spread) - np.diag(V.T @ noise @ V), 0.05 * np.trace(noise) / 3)
    assert np.all(np.diff(share) >= 0)
    rotated = jp.rotate(data, V)
    assert np.allclose(rotated["mean_contrast"], means @ V)
    assert np.allclose(rotated["noise_scale"], V.T @ np.asarray(data["noise_scale"]) @ V)
    assert np.allclose(rotated["scatter"], V.T @ np.asarray(data["scatter"]) @ V)
    delta = np.random.default_rng(1).normal(size=(8, 3))
    assert np.allclose(
        jp.log_likelihood(rotated["mean_contrast"], rotated["noise_scale"],
                          data["noise_dof"], delta @ V),
        jp.log_likelihood(means, data["noise_scale"], data["noise_dof"], delta))
    pair, _ = jp.prepare(scores.subset(algorithms=["a0", "a1"]), bc.PRIORS["paper"])
    assert np.array_equal(jp.sampling_rotation(pair), [[1.0]])


@pytest.mark.stan
@pytest.mark.slow
def test_sampling_in_principal_directions_leaves_the_posterior_unchanged(stan_backend,
                                                                        monkeypatch):
    """Two routes to one posterior: the program sampled in the data's contrasts (V = I)
    and in the population's principal directions agree on every pair's probabilities, nu
    and sigma0 within Monte Carlo error, on a collection with a near-identical pair."""
    rng = np.random.default_rng(4)
    base = [rng.normal(0.8, 0.05) + rng.normal(0, 0.02, 20) for _ in range(12)]
    first = [b + rng.normal(0.01, 0.01) + rng.normal(0, 0.02, 20) for b in base]
    second = [b + rng.normal(0, 0.01) + rng.normal(0, 0.02, 20) for b in base]
    # a third algorithm within a thousandth of the second on every split
    third = [s + rng.normal(0, 0.001, 20) for s in second]
    scores = bc.from_arrays({"a0": first, "a1": second, "a2": third}, rho=0.1)
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results["principal"] = bc.compare_many(scores, seed=2, backend=stan_backend)
        monkeypatch.setattr("bayescomp.models.joint.sampling_rotation",
                            lambda data: np.eye(data["d"]))
        results["identity"] = bc.compare_many(scores, seed=2, backend=stan_backend)
    principal, identity = results["principal"], results["identity"]
    assert principal.reliable and identity.reliable
    for key, estimate in principal.population.items():
        other = identity.population[key]
        tolerance = 4 * np.hypot(estimate.mcse, other.mcse) + 1e-3
        assert np.all(np.abs(estimate.probabilities - other.probabilities) <= tolerance), key
    for name in ("nu", "sigma0"):
        draws = [r.idata.posterior[name].values for r in (principal, identity)]
        log_means = [np.log(d).mean() for d in draws]
        errors = [np.log(d).std() / np.sqrt(float(az.ess(np.log(d)))) for d in draws]
        assert abs(log_means[0] - log_means[1]) <= 4 * np.hypot(*errors), name


def test_constant_differences_are_named_pair_by_pair():
    """A pair equal on every split of a dataset is named with that dataset, as the pairwise
    model names it; a pair that differs by a constant up to rounding too; others are not."""
    rng = np.random.default_rng(5)
    first = [rng.normal(0.8, 0.02, 10) for _ in range(4)]
    second = [x.copy() for x in first]
    second[1] = second[1] + rng.normal(0, 0.01, 10)     # differs on d1 only
    third = [x + 0.1 + rng.normal(0, 0.01, 10) for x in first]
    third[2] = first[2] + 0.02              # a constant shift of a and of b on d2
    scores = bc.from_arrays({"a": first, "b": second, "c": third},
                            datasets=["d0", "d1", "d2", "d3"], rho=0.1)
    with pytest.warns(bc.ConstantDifferencesWarning) as caught:
        jp.prepare(scores, bc.PRIORS["paper"])
    messages = sorted(str(w.message) for w in caught
                      if issubclass(w.category, bc.ConstantDifferencesWarning))
    assert len(messages) == 3
    assert messages[0].startswith("a - b is constant on dataset(s) ['d0', 'd2', 'd3']")
    assert messages[1].startswith("a - c is constant on dataset(s) ['d2']")
    assert messages[2].startswith("b - c is constant on dataset(s) ['d2']")


@pytest.mark.stan
@pytest.mark.slow
def test_k2_on_scmamps_example_is_its_published_hierarchical_analysis(scmamp_example,
                                                                      stan_backend):
    """The acceptance check's K = 2 case on real data: the joint model of AlgC and AlgD alone
    gives scmamp's published per-dataset numbers of the paper's model, within the tolerances
    of tests/test_hierarchical.py's check of bc.hierarchical (Monte Carlo error of both)."""
    scores, published = scmamp_example
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.compare_many(scores, ["AlgC", "AlgD"], rope=0.01, seed=2024,
                                 iter_sampling=2000, backend=stan_backend)
    assert result.reliable and result.diagnostics.max_rhat < 1.01
    ours = result.datasets.set_index("dataset").loc[published.index]
    np.testing.assert_array_less(np.abs(ours.delta_mean - published["mean"]), 0.2 * ours.delta_sd)
    for region in ("left", "rope", "right"):
        np.testing.assert_allclose(ours[f"p_{region}"], published[region], atol=0.07)


@pytest.mark.stan
@pytest.mark.slow
def test_all_four_of_scmamps_example_in_one_call_keep_the_pairwise_decisions(scmamp_example,
                                                                            stan_backend):
    """The acceptance check on a real benchmark held out from development: the joint model of
    all four algorithms of scmamp's example, in one call, against the paper's model fitted to
    each pair alone (``bc.compare_all``, the same seed). Every pair the pairwise fits decide
    the joint model decides alike (AlgA > AlgB, AlgC > AlgB, AlgD > AlgB), and no pair is
    decided in the opposite direction. Their probabilities may differ: the pairwise fits'
    population sds break the triangle inequality (benchmarks/results/joint.md), which no
    single population covariance can. On the same draws, P(best) is at most every pair's
    P(better or equivalent), and the algorithm decided worse than all others ranks last."""
    scores, _ = scmamp_example
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = bc.compare_many(scores, rope=0.01, seed=1, backend=stan_backend)
        pairwise = bc.compare_all(scores, rope=0.01, seed=1, backend=stan_backend, n_jobs=1)
    assert joint.reliable and joint.diagnostics.max_rhat < 1.01
    ours = joint.to_frame().set_index(["first", "second"])
    theirs = pairwise.to_frame().set_index(["first", "second"])
    assert list(ours.index) == list(theirs.index)
    decided = theirs["population_decision"] != "undecided"
    assert decided.sum() == 3
    assert (ours.loc[decided, "population_decision"]
            == theirs.loc[decided, "population_decision"]).all()
    for (first, second), decision in ours["population_decision"].items():
        opposite = {f"{first} better": f"{second} better",
                    f"{second} better": f"{first} better"}.get(decision)
        assert theirs.loc[(first, second), "population_decision"] != opposite
    p_better_or_tied = joint.probability_matrix("better") + joint.probability_matrix("rope")
    for first in joint.algorithms:
        for second in joint.algorithms:
            if first != second:
                assert joint.p_best[first] <= p_better_or_tied.loc[first, second] + 1e-9
    last = joint.rank_probabilities.loc["AlgB"].idxmax()
    assert last == joint.rank_probabilities.columns[-1]
