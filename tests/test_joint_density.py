"""The log density of stan/joint.stan in numpy (bayescomp.models.joint_density): Stan's lp__ at
every draw of short fits on both engines, and the model written with scipy at points that are
not draws."""
import numpy as np
import pytest
from scipy import special

import bayescomp as bc
from bayescomp.models import joint_program as jp
from bayescomp.models.joint_density import bartlett_layout, dimensions, log_density, unconstrained


def _collection(k: int) -> bc.Scores:
    """K = 2: the simulated near-identical pair (12 datasets); K = 3: three algorithms of the
    built-in example."""
    if k == 2:
        return bc.simulate.near_identical_collection(12, seed=3).scores
    scores = bc.datasets.load_classifiers()
    return scores.subset(algorithms=list(scores.algorithms)[:k])


@pytest.mark.stan
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("engine", ["cmdstanpy_backend", "pystan_backend"])
def test_log_density_is_lp_at_every_draw(request, engine, k):
    """At every draw of a short fit the numpy log density is Stan's lp__ itself, constants
    included (the program adds everything with target +=): within 1e-9 where lp__ moves by
    several units (measured: 6e-14 on both engines)."""
    backend = request.getfixturevalue(engine)
    data, _ = jp.prepare(_collection(k), bc.PRIORS["paper"])
    # pystan through its public API (the same draws): each program the native route loads
    # takes static TLS, of which one process has little, and tests/test_sampling.py's
    # native-route tests need what is left in the suite's process
    route = "public" if backend == "pystan" else "auto"
    fit = bc.sampling.sample("joint", jp.stan_data(data), backend=backend, route=route, chains=2,
                             iter_warmup=200, iter_sampling=200, seed=3,
                             inits=jp.initial_values(data, 2, np.random.default_rng(1)))
    lp = fit.sample_stats["lp"].values
    points = unconstrained(fit, data)
    assert points.shape == lp.shape + (dimensions(data)["lambda_z"].stop,)
    assert lp.std() > 1
    assert np.abs(log_density(data, points) - lp).max() < 1e-9


def _scipy_at(data, point, model_density):
    """The model's log density at an unconstrained point through the constrained parameters
    (conftest.joint_model_log_density) plus the Jacobians of Stan's transforms: sigma0 =
    upper * logistic(u), dsigma0/du = sigma0 (upper - sigma0) / upper; A_kk = exp(v_k)."""
    slices, upper = dimensions(data), data["sigma0_upper"]
    sigma0 = upper * special.expit(point[slices["sigma0"]][0])
    _, _, on_diagonal = bartlett_layout(data["d"])
    diagonal = np.exp(point[slices["shape"]][on_diagonal])
    jacobian = np.log(sigma0 * (upper - sigma0) / upper) + np.log(diagonal).sum()
    return jacobian + model_density(data, sigma0, diagonal, point[slices["shape"]][~on_diagonal],
                                    point[slices["log_nu_minus_one"]][0],
                                    point[slices["kappa_z"]], point[slices["lambda_z"]])


@pytest.mark.parametrize("k", [2, 3, 4])
def test_log_density_is_the_models_at_other_points(joint_model_log_density, k):
    """At points spread over the unconstrained scale (not draws), the numpy log density
    differs from the model written with scipy by one constant: to 1e-5, the error of the
    interpolated prior of log(nu - 1) (stan/hierarchical.stan's device 8)."""
    if k == 4:
        scores = bc.datasets.load_classifiers()
    else:
        scores = _collection(k)
    data, _ = jp.prepare(scores, bc.PRIORS["paper"])
    rng = np.random.default_rng(k)
    dimension = dimensions(data)["lambda_z"].stop
    points = rng.normal(0, 1, (8, dimension))
    points[:, dimensions(data)["sigma0"]] -= 4     # sigma0 near the data's scale
    ours = log_density(data, points)
    theirs = np.array([_scipy_at(data, p, joint_model_log_density) for p in points])
    assert np.ptp(ours) > 10          # the points are far apart in density
    np.testing.assert_allclose(ours - ours[0], theirs - theirs[0], atol=1e-5, rtol=0)
    # one point, or a (chain, draw) array of them: the same numbers
    np.testing.assert_array_equal(log_density(data, points.reshape(2, 4, -1)).ravel(), ours)
    assert log_density(data, points[3]) == ours[3]


def test_points_the_density_cannot_reach_are_minus_infinity():
    """Far out in a proposal's tails (lambda_i overflowing) the log density is -inf, not NaN
    and not an error, and the other points of the batch keep their values."""
    data, _ = jp.prepare(_collection(3), bc.PRIORS["paper"])
    slices = dimensions(data)
    points = np.zeros((3, slices["lambda_z"].stop))
    points[1, slices["lambda_z"]] = -1e6
    values = log_density(data, points)
    assert values[1] == -np.inf and np.isfinite(values[[0, 2]]).all()
    assert values[0] == values[2]
    with pytest.raises(ValueError, match="coordinates"):
        log_density(data, points[:, 1:])
