"""The adapter between the scores and ``stan/hierarchical.stan``: data, start, post-draws.

The program samples sigma0 and every sigma_i by their log-odds, log(nu - 1) and the
standardised Student-t mixing weights, with delta0 and every delta_i integrated out (see
the program's header; it draws delta0 and writes sigma0 itself).
This module prepares its data on a unit scale, chooses initial values in the posterior's
bulk, and turns the draws into the model's parameters on the units of the scores: delta_i
from its normal conditional, alpha and beta given nu (:mod:`bayescomp.models.nu_prior`).
"""
from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import xarray as xr
from scipy import special

from bayescomp.models import nu_prior
from bayescomp.models.hierarchical_density import (data_terms, log_lambda_given,
                                                   sigma0_coordinates, sigma_coordinates,
                                                   sigma_given,
                                                   squared_standard_errors, unbounded)
from bayescomp.data.resolution import (difference_ss, floored_datasets, floored_masks,
                                       score_step, steps)
from bayescomp.data.scores import Scores
from bayescomp.exceptions import ConstantDifferencesWarning
from bayescomp.models.likelihood import compound_symmetric_logpdf
from bayescomp.sampling.threads import map_on_cores

PROGRAM = "hierarchical"


def sigma0_median(means, noise, upper: float, dof=None) -> float:
    """Posterior median of sigma0 in the normal-population version of the model.

    Means ``m_i ~ delta0 + N(0, sigma0^2) + noise_i e_i`` with delta0 flat and sigma0
    uniform on (0, upper), evaluated on a logarithmic grid of sigma0. Without ``dof`` the
    noise e_i is standard normal, and delta0 integrates out in closed form (datasets x 400
    numbers): close enough to start the sampler. With ``dof`` (one per dataset) e_i is
    Student-t with those degrees of freedom, as a mean is whose fold variance is estimated
    from few folds, and a dataset's mean given delta0 is taken as Student-t with scale
    sqrt(noise_i^2 + sigma0^2) (the convolution, approximately); delta0 is then integrated
    on a grid of the means' quantiles and a range beyond them (120 x about 100 points).
    """
    means, noise = np.asarray(means, dtype=float), np.asarray(noise, dtype=float)
    low = 1e-3 * noise.min()
    if dof is None:
        grid = np.geomspace(low, max(upper, 10 * low), 400)
        variance = noise[None, :] ** 2 + grid[:, None] ** 2
        weight = 1 / variance
        centre = (weight * means).sum(axis=1) / weight.sum(axis=1)
        log_density = (np.log(grid)  # the uniform prior, on the log grid
                       - 0.5 * np.log(variance).sum(axis=1) - 0.5 * np.log(weight.sum(axis=1))
                       - 0.5 * (weight * (means - centre[:, None]) ** 2).sum(axis=1))
    else:
        dof = np.asarray(dof, dtype=float)
        grid = np.geomspace(low, max(upper, 10 * low), 120)
        # dense where the means are, and out to a range beyond them on either side
        spread = np.ptp(means)
        centres = np.unique(np.concatenate([
            np.quantile(means, np.linspace(0, 1, 81)),
            np.linspace(means.min() - spread, means.max() + spread, 21)]))
        # trapezoid weights of the centres (one centre: a point mass)
        spacing = np.gradient(centres) if centres.size > 1 else np.ones(1)
        constant = special.gammaln((dof + 1) / 2) - special.gammaln(dof / 2)
        log_density = np.empty(grid.size)
        for k, sigma0 in enumerate(grid):   # a row of the grid at a time: q x ~100 numbers
            variance = noise ** 2 + sigma0 ** 2
            log_t = (constant - 0.5 * np.log(dof * variance)
                     - (dof + 1) / 2 * np.log1p((means - centres[:, None]) ** 2
                                                / (dof * variance)))
            log_density[k] = (np.log(sigma0)   # the uniform prior, on the log grid
                              + special.logsumexp(log_t.sum(axis=1), b=spacing))
    cumulative = np.cumsum(np.exp(log_density - log_density.max()))
    return float(grid[np.searchsorted(cumulative, cumulative[-1] / 2)])


def weighted_median(values, weights) -> float:
    """The median of ``values`` weighted by ``weights`` (> 0): the midpoint of the smallest
    value whose cumulative weight from below reaches half the total and the largest whose
    cumulative weight from above does. With equal weights, numpy's median."""
    order = np.argsort(values, kind="stable")
    values, weights = np.asarray(values, float)[order], np.asarray(weights, float)[order]
    below = np.cumsum(weights)
    above = np.cumsum(weights[::-1])[::-1]
    # a relative tolerance: cumulative sums of equal weights round around half the total
    half = 0.5 * below[-1] * (1 - 1e-12)
    return 0.5 * float(values[np.argmax(below >= half)]
                       + values[len(values) - 1 - np.argmax(above[::-1] >= half)])


def population_spread(data: dict) -> float:
    """sigma0*, an estimate of sigma0 from the program's data: :func:`sigma0_median` with
    Student-t noise of n_i - 2 degrees of freedom (at least 1), scale se_i sqrt((n_i - 1) /
    (n_i - 2)), the marginal of a mean whose sigma_i is integrated out under its uniform
    prior, given its fold variance."""
    se2 = squared_standard_errors(data["ss"], data["n_scores"], data["rho"],
                                  data["sigma_lower"])
    n_scores = np.asarray(data["n_scores"], dtype=float)
    dof = np.maximum(n_scores - 2, 1)
    return sigma0_median(data["mean_diff"], np.sqrt(se2 * (n_scores - 1) / dof),
                         data["sigma0_upper"], dof=dof)


def mean_centre(data: dict, spread: float | None = None) -> float:
    """The reference point of the means m_i in the program (``mean_centre``): their median
    weighted by 1 / (se_i^2 + sigma0*^2), the precision of m_i under a normal population
    whose sigma0* is ``spread``, by default :func:`population_spread`.

    The program centres each log(lambda_i) by dataset i's squared deviation from this point
    (device 5), a stand-in for its deviation from delta0, which is integrated out. The plain
    median of the means was that stand-in until a real collection showed its failure: on
    OC1's two search variants over 51 UCI datasets (5 x 5-fold), one dataset's differences
    are all 0 with a floor of 1e-5 (unit scale) while the median mean is 0.011, so that
    dataset pins delta0 near 0 whenever sigma0 is small, yet the median's centring put its
    log(lambda_i) about 5 too low there: its z-score ran to 15-22, 12-75 divergent
    transitions a fit, and 2 seeds of 8 unreliable. Weighted by the precision, the median
    is that dataset's 0 (no divergence, 15 leapfrog steps a draw instead of 33-39); with
    equal standard errors it is the plain median, and it stays robust to outlying datasets,
    which a weighted mean is not. sigma0* was the normal-noise median until 4-fold
    cross-validation showed its failure (bbtcomp's 132 datasets, logistic regression against
    a ridge classifier): the means of 4 folds have heavy-tailed noise, the posterior puts
    sigma0 near 0 with delta0 at the 0 of 9 identical datasets (quadrature over delta0,
    sigma0 and nu with sigma_i and delta_i integrated agrees), but normal noise read the
    outlying datasets as the population's spread (sigma0* 2.3 against 0.06 with Student-t
    noise, unit scale) and the centre was the plain median, 0.32: z-scores ran to 60 and a
    fit had 184-622 divergent transitions, unreliable on every seed after 3 attempts. At the
    identical datasets' 0, 5-6 divergent transitions a first fit, and the retries settle it
    on most seeds (benchmarks/results/real_pairs.md, 22).
    """
    se2 = squared_standard_errors(data["ss"], data["n_scores"], data["rho"],
                                  data["sigma_lower"])
    spread = population_spread(data) if spread is None else spread
    return weighted_median(np.asarray(data["mean_diff"], dtype=float), 1 / (se2 + spread ** 2))


def prepare(scores: Scores, first: str, second: str, prior) -> tuple[dict, float]:
    """Stan data on a unit scale (the differences over their mean within-dataset standard
    deviation) and that scale.

    ``prior`` is a :class:`bayescomp.models.hierarchical_prior.HierarchicalPrior`. Warns with a
    :class:`ConstantDifferencesWarning` naming the datasets whose ``sigma_i`` the floor sets
    (:func:`bayescomp.data.resolution.floored_datasets`).
    """
    differences = scores.differences(first, second)
    rows = [scores.algorithm_index(first), scores.algorithm_index(second)]
    n = scores.n_scores
    means = np.array([x.mean() for x in differences])
    ss = difference_ss(scores.datasets, *rows)     # 0 where the spread is rounding noise
    if np.isnan([score_step(d.values[rows]) for d in scores.datasets]).all():
        raise ValueError(f"every score of {first} and {second} is the same number on every "
                         "dataset: there is nothing to compare")
    # each dataset's step from every algorithm's scores (bayescomp.data.resolution)
    floor = steps(scores.datasets) / np.sqrt(12)
    floored = floored_datasets(scores.dataset_names, *floored_masks(ss, n, scores.rho, floor))
    if floored:
        warnings.warn(f"{first} - {second} {floored}; there sigma_i is bounded below by the "
                      "floor, the scores' resolution / sqrt(12) (see bayescomp.hierarchical)",
                      ConstantDifferencesWarning, stacklevel=3)

    rho = scores.rho
    # the floor stands in for the spread of constant datasets: the scale and the default
    # bounds then never collapse to rounding noise
    scale = float(np.maximum(np.sqrt(ss / n), floor).mean())
    among = means.std() if len(means) > 1 and means.std() > 0 else scale
    noise = np.sqrt(squared_standard_errors(ss, n, rho, floor))
    # delta0's uniform prior spans the largest difference (the paper's bound), and at least
    # five standard errors beyond every dataset's mean: on constant differences the largest
    # difference is the mean itself, and the posterior of delta0 would pile up at the bound
    delta0_bound = prior.delta0_bound or max(
        max(np.abs(x).max() for x in differences), float(np.max(np.abs(means) + 5 * noise)))
    sigma0_upper = prior.sigma0_upper or prior.sigma_factor * among
    sigma_upper = prior.sigma_upper or prior.sigma_factor * scale
    if sigma_upper <= floor.max():
        raise ValueError(f"prior sigma_upper {sigma_upper} is below the resolution floor "
                         f"{floor.max()} of sigma_i")
    data = dict(
        n_datasets=len(scores), n_scores=[int(k) for k in n], rho=rho.tolist(),
        mean_diff=(means / scale).tolist(), ss=(ss / scale ** 2).tolist(),
        delta0_bound=float(delta0_bound / scale), sigma0_upper=float(sigma0_upper / scale),
        sigma_lower=(floor / scale).tolist(), sigma_upper=float(sigma_upper / scale),
        population=int(prior.population == "student"),
        **nu_prior.stan_data_for(prior.nu, prior.alpha, prior.beta))
    data.update(coordinates(data))
    return data, scale


def coordinates(data: dict) -> dict:
    """What the program's coordinates are centred and scaled by, from its data:
    ``mean_centre`` (:func:`mean_centre`) and sigma0's ``sigma0_offset`` and
    ``sigma0_scale`` (:func:`~bayescomp.models.hierarchical_density.sigma0_coordinates`),
    both from the same estimate of sigma0 (:func:`population_spread`)."""
    spread = population_spread(data)
    return dict(mean_centre=mean_centre(data, spread), **sigma0_coordinates(data, spread))


#: the range of the chains' initial log(nu - 1): nu from 1.14 (the heavy-tailed mode of a
#: near-identical pair sits at 1.0-1.4) to 34 (its near-normal mode at 25-40)
LOG_NU_MINUS_ONE_STARTS = (-2.0, 3.5)


#: the number of datasets up to which the pairwise model's fits target an acceptance rate of
#: 0.95 (:func:`size_adapt_delta`): the size of the tutorial's real collection and of the
#: benchmarks that chose 0.95 (benchmarks/results/warmup.md)
ACCEPTANCE_SIZE = 54


def size_adapt_delta(n_datasets: int) -> float:
    """NUTS's target acceptance rate for the pairwise model's fit of ``n_datasets`` datasets:
    0.95 up to :data:`ACCEPTANCE_SIZE` datasets, then ``1 - 0.05 sqrt(n_datasets / 54)``,
    at least 0.8 (Stan's default).

    Why: the leapfrog's energy error over a trajectory has a spread that grows as
    ``sqrt(d) step^2`` in ``d`` well-scaled dimensions, and one minus the acceptance rate with
    it; at a fixed target the adapted step falls as ``d^(-1/4)``. Holding the step where 0.95
    puts it at 54 datasets (about 0.26 on an easy pair) means a target that falls as above:
    each coordinate is integrated as accurately as at 54, and a trajectory of the same length
    keeps 15 leapfrog steps where at 0.95 it needed the next doubling, 31 (400 datasets, 0.864:
    0.6-0.8x the time on the easy pair; the same decisions on the hard grid's collections
    above 54 datasets and on bbtcomp's 132; benchmarks/results/warmup.md)."""
    return float(max(0.8, 1 - 0.05 * np.sqrt(max(n_datasets, ACCEPTANCE_SIZE) / ACCEPTANCE_SIZE)))


def initial_values(data: dict, chains: int, rng: np.random.Generator) -> list[dict]:
    """Initial values per chain, in the posterior's bulk and spread around it.

    Stan's default (uniform on (-2, 2) unconstrained) starts sigma0 at 10% to 90% of its
    prior bound, a thousand times the spread of the data, and the first warm-up iterations
    can overshoot from there into a corner they never leave (seen: sigma0 = 4e-12,
    nu = 1.04, R-hat 1.55). Here sigma0 starts at its normal-population estimate
    (:func:`sigma0_median`) times exp(U(-1, 1)), each sigma_i at its dataset's spread.
    log(nu - 1) is dispersed over :data:`LOG_NU_MINUS_ONE_STARTS` in strata, one per chain
    (chain k of C uniform in the k-th C-th of the range): on near-identical algorithms the
    posterior has a heavy-tailed mode (nu near 1) and a near-normal one (nu in the bulk of
    its prior), and chains that start in both find both, on every seed, so that the modes
    are seen rather than missed by chance. ``rng`` draws the spread (the
    initial values' stream of :class:`bayescomp.sampling.Seeds`).
    """
    terms = data_terms(data)
    floor = terms["sigma_lower"]
    sigma0 = sigma0_median(terms["mean_diff"], np.sqrt(terms["se2"]), data["sigma0_upper"])
    fold_sd = np.sqrt(terms["contrasts"] / terms["exponent"])
    size = floor.size
    low, high = LOG_NU_MINUS_ONE_STARTS
    strata = low + (high - low) * (np.arange(chains) + rng.uniform(0, 1, chains)) / chains
    inits = []
    for log_nu_minus_one in strata:
        start = np.maximum(fold_sd, 1.05 * floor) * np.exp(rng.uniform(0, 0.2, size))
        chain = dict(
            sigma0_log_odds=float(unbounded(min(sigma0 * np.exp(rng.uniform(-1, 1)),
                                                0.5 * data["sigma0_upper"]),
                                            0.0, data["sigma0_upper"])),
            sigma_log_odds=unbounded(np.minimum(start, 0.5 * data["sigma_upper"]), floor,
                                     data["sigma_upper"]).tolist())
        if data["population"]:
            chain.update(log_nu_minus_one=[float(log_nu_minus_one)],
                         lambda_z=rng.uniform(-1, 1, size).tolist())
        inits.append(chain)
    return inits


def continuation_inits(idata, data: dict) -> list[dict]:
    """Each chain's last draw as initial values, so that a continued fit picks up where the
    chain stopped: the sampled coordinates as drawn (sigma0 and the sigma_i by their
    log-odds, which have no bounds)."""
    posterior = idata.posterior
    inits = []
    for chain in range(posterior.sizes["chain"]):
        last = posterior.isel(chain=chain, draw=-1)
        init = dict(sigma0_log_odds=float(last["sigma0_log_odds"]),
                    sigma_log_odds=np.ravel(last["sigma_log_odds"].values).tolist())
        if data["population"]:
            init.update(log_nu_minus_one=np.ravel(last["log_nu_minus_one"].values).tolist(),
                        lambda_z=np.ravel(last["lambda_z"].values).tolist())
        inits.append(init)
    return inits


def sampled_scales(posterior, data: dict):
    """nu (chain, draw), sigma_i and log(lambda_i) (chain, draw, dataset) at every draw of a
    fit of the program, from the sampled u_i, sigma0, log(nu - 1) and z_i (the program
    computes them in its model block and does not write them); nu and log(lambda_i) are None
    for a normal population."""
    sigma = sigma_given(data, posterior["sigma_log_odds"].values)
    if not data["population"]:
        return None, sigma, None
    nu = 1 + np.exp(posterior["log_nu_minus_one"].values[..., 0])
    return nu, sigma, log_lambda_given(data, posterior["sigma0"].values, nu,
                                       posterior["lambda_z"].values)


def delta_conditional(delta0, sigma0, sigma, log_lambda, data: dict) -> tuple:
    """Centre and sd of every delta_i's normal conditional given the sampled parameters.

    Given sigma_i and lambda_i, delta_i ~ N(delta0, sigma0^2 / lambda_i) a priori and the
    mean m_i ~ N(delta_i, sigma_i^2 v_i): the conditional is normal with precision
    1 / (sigma_i^2 v_i) + lambda_i / sigma0^2. Everything on the unit scale of ``data``;
    ``delta0``, ``sigma0`` are (chain, draw), ``sigma`` and ``log_lambda``
    (:func:`sampled_scales`) (chain, draw, dataset); ``log_lambda`` None for a normal
    population. Returns two (chain, draw, dataset) arrays.
    """
    terms = data_terms(data)
    noise_precision = 1 / (sigma ** 2 * terms["mean_share"])
    weight = np.ones_like(sigma) if log_lambda is None else np.exp(log_lambda)
    prior_precision = weight / sigma0[..., None] ** 2
    precision = noise_precision + prior_precision
    centre = ((noise_precision * terms["mean_diff"] + prior_precision * delta0[..., None])
              / precision)
    return centre, 1 / np.sqrt(precision)


def draw_delta(centre, spread, rng) -> np.ndarray:
    """Draws of every delta_i from its normal conditional (:func:`delta_conditional`)."""
    return centre + rng.standard_normal(centre.shape) * spread


def _by_chain(posterior, data: dict) -> tuple:
    """nu, sigma_i (:func:`sampled_scales`) and delta_i's conditional centre and sd
    (:func:`delta_conditional`) at every draw, chain by chain in threads (numpy's elementwise
    operations release the GIL: at 400 datasets and 4 x 1000 draws :func:`to_user_scale`
    took 0.21-0.28 s with the chains one after another, 0.14-0.17 s in threads on 2 cores);
    nu None for a normal population."""
    def one(chain):
        part = posterior.isel(chain=[chain])
        nu, sigma, log_lambda = sampled_scales(part, data)
        return (nu, sigma, *delta_conditional(part["delta0"].values, part["sigma0"].values,
                                              sigma, log_lambda, data))

    parts = map_on_cores(one, range(posterior.sizes["chain"]))
    return tuple(None if pieces[0] is None else np.concatenate(pieces)
                 for pieces in zip(*parts))


def to_user_scale(idata, data: dict, scale: float, datasets, rng: np.random.Generator,
                  log_likelihood: bool, prior) -> az.InferenceData:
    """The posterior on the units of the scores, with datasets named, delta_i drawn given
    the sampled parameters, and alpha and beta given nu (the paper's prior of nu); ``rng``
    draws them (the post-draws' stream of :class:`bayescomp.sampling.Seeds`). delta0's
    conditional given the rest, N(``delta0_centre``, ``delta0_sd``) truncated to
    +-``attrs["delta0_bound"]``, and every delta_i's, N(``delta_centre``, ``delta_spread``)
    given delta0 too, are kept for :mod:`bayescomp.models.region_masses`."""
    posterior = idata.posterior

    def per_draw(values):
        return xr.DataArray(values, dims=("chain", "draw"),
                            coords=dict(chain=posterior.chain, draw=posterior.draw))

    def per_dataset(values):
        return xr.DataArray(values, dims=("chain", "draw", "dataset"),
                            coords=dict(chain=posterior.chain, draw=posterior.draw,
                                        dataset=list(datasets)))

    nu, sigma, centre, spread = _by_chain(posterior, data)
    # delta0's conditional given the rest (normal, truncated to the bound), which
    # bayescomp.models.region_masses reads the population's probabilities from
    variables = {name: posterior[name] * scale
                 for name in ("delta0", "sigma0", "delta0_centre", "delta0_sd")}
    if nu is not None:
        variables["nu"] = per_draw(nu)
        if prior.nu == "gamma":
            alpha, beta = nu_prior.draw_alpha_beta(nu, prior.alpha, prior.beta, rng)
            variables.update(alpha=per_draw(alpha), beta=per_draw(beta))
    # delta_i's conditional given the rest, which region_masses reads each dataset's
    # probabilities from, and a draw of it
    delta = draw_delta(centre, spread, rng)
    for values in (delta, centre, spread, sigma):   # the arrays are this function's own
        values *= scale
    variables.update(delta=per_dataset(delta), delta_centre=per_dataset(centre),
                     delta_spread=per_dataset(spread), sigma=per_dataset(sigma),
                     delta_next=posterior["delta_next"] * scale)
    user = xr.Dataset(variables, attrs=dict(posterior.attrs,
                                            delta0_bound=float(data["delta0_bound"]) * scale))
    groups = dict(posterior=user, sample_stats=idata.sample_stats)
    if log_likelihood:
        terms = data_terms(data)
        log_lik = compound_symmetric_logpdf(terms["mean_diff"] * scale, terms["ss"] * scale ** 2,
                                            terms["n_scores"], terms["rho"], delta, sigma)
        groups["log_likelihood"] = xr.Dataset({"differences": per_dataset(log_lik)})
    return az.InferenceData(**groups)


def unconstrained(idata, data: dict) -> np.ndarray:
    """The sampled parameters on Stan's unconstrained scale, (chain, draw, dimension): where
    ``lp__`` is the log density. The log-odds of sigma0 in (0, upper) and the log-odds u_i of
    the sigma_i, offset and scaled as the program declares them, log(nu - 1) and the
    z-scores as they are.
    """
    posterior = idata.posterior
    offset, scale = sigma_coordinates(data)
    columns = [((posterior["sigma0_log_odds"].values - data["sigma0_offset"])
                / data["sigma0_scale"])[..., None],
               (posterior["sigma_log_odds"].values - offset) / scale]
    if data["population"]:
        log_nu = posterior["log_nu_minus_one"].values
        columns += [log_nu.reshape(log_nu.shape[:2] + (-1,)), posterior["lambda_z"].values]
    return np.concatenate(columns, axis=-1)
