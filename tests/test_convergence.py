"""R-hat and ESS of many quantities at once (bayescomp.models.convergence) against ArviZ's
per-quantity functions, on AR(1) chains of several shapes with the degenerate cases ArviZ
handles (constants, ties, a NaN draw, odd and too few draws); a single chain against the
formula by scipy; and the diagnostics of a hierarchical fit against ArviZ on its draws."""
import logging
import warnings

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescomp as bc
from bayescomp.models.convergence import convergence, ess_bulk, ess_mean, ess_tail, rank_rhat
from bayescomp.models.diagnostics import diagnose, posterior_draws, variable_convergence
from bayescomp.models.hierarchical_runs import reported_ess
from bayescomp.validation.simulate import collection


def autoregressive(rng, n_chains, n_draws, n_quantities, phi):
    """AR(1) chains (chain, draw, quantity) with coefficient ``phi``."""
    x = np.empty((n_chains, n_draws, n_quantities))
    x[:, 0] = rng.normal(size=(n_chains, n_quantities))
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=(n_chains, n_quantities))
    return x


def arviz_per_quantity(draws):
    """ArviZ's rank R-hat, bulk and tail ESS of every quantity of (chain, draw, quantity)."""
    logging.getLogger("arviz").setLevel(logging.ERROR)   # its NaN and shape warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [np.array([float(function(draws[..., k], method=method))
                          for k in range(draws.shape[2])])
                for function, method in ((az.rhat, "rank"), (az.ess, "bulk"), (az.ess, "tail"))]


@pytest.mark.parametrize("n_chains, n_draws, n_quantities", [
    (4, 1000, 12), (2, 7, 6), (3, 501, 8), (4, 4, 5), (6, 57, 7), (4, 3, 5)])
@pytest.mark.parametrize("phi", [0.0, 0.6, 0.95, -0.5])
def test_equal_to_arviz(n_chains, n_draws, n_quantities, phi):
    rng = np.random.default_rng(n_chains * 1000 + n_draws + int(10 * phi))
    draws = autoregressive(rng, n_chains, n_draws, n_quantities, phi)
    draws[0, 0] += 3.0                                   # one chain starting far off
    draws[..., 0] = 1.5                                  # a constant
    draws[..., 1] = np.round(draws[..., 1])              # heavy ties
    draws[..., 2] = (draws[..., 2] > 1.3).astype(float)  # two values, one rare
    draws[1, 0, 3] = np.nan                              # a NaN draw
    draws[..., 4] *= 1e-9                                # a tiny scale
    rhat, bulk, tail = convergence(draws)
    for one_by_one, together, want, name in zip(
            (rank_rhat, ess_bulk, ess_tail), (rhat, bulk, tail), arviz_per_quantity(draws),
            ("rhat", "bulk", "tail")):
        got = one_by_one(draws)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=0, err_msg=name)
        np.testing.assert_array_equal(together, got, err_msg=name)


def test_shapes_of_the_results():
    rng = np.random.default_rng(3)
    draws = autoregressive(rng, 4, 200, 6, 0.3)
    assert isinstance(rank_rhat(draws[..., 0]), float)
    assert ess_tail(draws.reshape(4, 200, 2, 3)).shape == (2, 3)
    assert ess_bulk(draws[..., :1]).shape == (1,)
    assert ess_bulk(draws[..., 0]) == pytest.approx(float(az.ess(draws[..., 0])), rel=1e-10)
    with pytest.raises(ValueError, match="shaped"):
        rank_rhat(draws[0, :, 0])


def test_one_chain_is_compared_by_its_halves():
    # the published definition written out with scipy: ranks over both halves, normal
    # scores with Blom's offset, the larger of the bulk and the folded R-hat
    rng = np.random.default_rng(11)
    chain = autoregressive(rng, 1, 801, 1, 0.7)[0, :, 0] + np.linspace(0, 4, 801)

    def rhat(halves):
        z = stats.norm.ppf((stats.rankdata(halves).reshape(halves.shape) - 0.375)
                           / (halves.size + 0.25))
        n = z.shape[1]
        within = z.var(axis=1, ddof=1).mean()
        return np.sqrt(((n - 1) / n * within + z.mean(axis=1).var(ddof=1)) / within)

    halves = np.stack([chain[:400], chain[-400:]])
    expected = max(rhat(halves), rhat(np.abs(halves - np.median(halves))))
    assert rank_rhat(chain[None]) == pytest.approx(expected, rel=1e-12)
    assert rank_rhat(chain[None]) > 1.05   # the trend shows


@pytest.mark.stan
def test_fit_diagnostics_are_arviz_on_its_draws(stan_backend):
    scores = collection(12, 20, delta0=0.01, seed=4).scores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, "a", "b", rope=0.01, backend=stan_backend, seed=7,
                                 iter_warmup=300, iter_sampling=300, baselines=False)
    names = ["delta0", "sigma0", "delta", "sigma", "nu"]
    posterior = result.idata.posterior[names]
    rhat, bulk, tail = (np.concatenate([np.ravel(v.values) for v in d.data_vars.values()])
                        for d in (az.rhat(posterior), az.ess(posterior, method="bulk"),
                                  az.ess(posterior, method="tail")))
    assert result.diagnostics.max_rhat == pytest.approx(np.max(rhat), rel=1e-10)
    assert result.diagnostics.min_ess_bulk == pytest.approx(np.min(bulk), rel=1e-10)
    assert result.diagnostics.min_ess_tail == pytest.approx(np.min(tail), rel=1e-10)
    again = diagnose(result.idata, var_names=names)
    assert again == result.diagnostics
    assert posterior_draws(posterior).shape == (4, 300, 3 + 2 * 12)
    # one pass over more variables: each variable's own R-hat and ESS, as arviz has them,
    # and the same diagnostics when diagnose is handed them
    statistics = variable_convergence(result.idata.posterior, names + ["delta_next"])
    for name in names + ["delta_next"]:
        for values, reference in zip(statistics[name], (
                az.rhat(result.idata, var_names=[name]), az.ess(result.idata, var_names=[name]),
                az.ess(result.idata, var_names=[name], method="tail"))):
            np.testing.assert_allclose(values, np.ravel(reference[name].values), rtol=1e-10)
    assert diagnose(result.idata, var_names=names, statistics=statistics) == result.diagnostics
    # the smallest ESS over the reported quantities (delta0, delta_next, sigma0, nu, delta_i)
    reported = ["delta0", "delta_next", "sigma0", "nu", "delta"]
    expected = [min(float(np.min(az.ess(result.idata, var_names=reported, method=method)[name]))
                    for name in reported) for method in ("bulk", "tail")]
    np.testing.assert_allclose(reported_ess(statistics), expected, rtol=1e-10)
    assert result.settings["ess"]["bulk"] == pytest.approx(expected[0], rel=1e-10)


@pytest.mark.parametrize("phi", [0.0, 0.9, -0.5])
def test_ess_of_the_mean_equals_arviz(phi):
    rng = np.random.default_rng(21 + int(10 * phi))
    draws = autoregressive(rng, 4, 500, 3, phi)
    draws[..., 1] = (draws[..., 1] > 1.0).astype(float)      # an indicator
    draws[..., 2] *= np.exp(draws[..., 2])                     # skewed: ranks would differ
    want = [float(az.ess(draws[..., k], method="mean")) for k in range(3)]
    np.testing.assert_allclose(ess_mean(draws), want, rtol=1e-10)
