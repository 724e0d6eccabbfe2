"""The hierarchical model of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017).

The differences ``first - second`` on the n_i splits of dataset i are normal with mean
``delta_i`` and compound-symmetric covariance ``sigma_i^2 ((1 - rho_i) I + rho_i 11')``;
``delta_i ~ Student-t(nu, delta0, sigma0)``; ``delta0`` and ``sigma0`` are uniform,
``sigma_i`` uniform, and ``nu - 1 ~ Gamma(alpha, beta)`` with uniform ``alpha`` and ``beta``.
Stan's NUTS samples it (``stan/hierarchical.stan``) on the datasets' sufficient statistics,
with ``sigma_i`` integrated out in closed form wherever that is numerically safe; ``sigma_i``
is then drawn from its exact conditional given ``delta_i`` (:mod:`bayescomp.likelihood`).
Likewise ``alpha`` and ``beta`` are integrated out of the prior of ``nu`` and drawn given
``nu`` afterwards (:mod:`bayescomp.nu_prior`).

Constant differences on a dataset (zero variance) would make the posterior improper, as
``sigma_i -> 0`` is then unbounded. Every ``sigma_i`` therefore has a floor: the standard
deviation ``q / sqrt(12)`` of a rounding error of one step ``q`` of the scores' resolution,
where ``q`` is the smallest gap (above 1e-9 relative, i.e. floating-point noise) between two
distinct scores of the dataset (of the whole collection if the dataset has none). Below it the data cannot tell variances apart.
The floor is deterministic and, on datasets whose differences vary, far below ``sigma_i``.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from . import nu_prior, sampling
from .baselines import baselines as run_baselines
from .correlated import correlated_ttests
from .data import Scores
from .decisions import decide
from .diagnostics import Diagnostics, diagnose, warn_if_problems
from .exceptions import ConstantDifferencesWarning, RetryWarning
from .likelihood import compound_symmetric_logpdf, draw_sigma, sigma_sampled
from .reports import Reportable
from .rope import Rope, most_probable_shares, region_labels


@dataclass(frozen=True)
class HierarchicalPrior:
    """Hyper-priors of the hierarchical model.

    Parameters
    ----------
    alpha, beta : (float, float)
        Bounds of the uniform priors on the shape and rate of ``nu - 1 ~ Gamma(alpha, beta)``.
    sigma_factor : float
        Default upper bounds: ``sigma_i < sigma_factor x`` the mean within-dataset standard
        deviation of the differences, ``sigma0 < sigma_factor x`` the standard deviation of
        the dataset means (as in the paper and its reference code, factor 1000).
    delta0_bound, sigma0_upper, sigma_upper : float, optional
        Explicit bounds in the units of the scores: ``delta0 ~ U(-delta0_bound, delta0_bound)``
        (default the largest absolute difference), ``sigma0 ~ U(0, sigma0_upper)``,
        ``sigma_i ~ U(floor_i, sigma_upper)``.
    """

    alpha: tuple[float, float] = (0.5, 5.0)
    beta: tuple[float, float] = (0.05, 0.15)
    sigma_factor: float = 1000.0
    delta0_bound: float | None = None
    sigma0_upper: float | None = None
    sigma_upper: float | None = None

    def __post_init__(self):
        for name in ("alpha", "beta"):
            low, high = getattr(self, name)
            if not 0 < low < high:
                raise ValueError(f"prior bounds of {name} must satisfy 0 < low < high, got {(low, high)}")
        for name in ("sigma_factor", "delta0_bound", "sigma0_upper", "sigma_upper"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"prior {name} must be positive, got {value}")


PRIORS = {
    # Corani et al. (2017)
    "paper": HierarchicalPrior(),
    # baycomp's HierarchicalTest defaults
    "baycomp": HierarchicalPrior(alpha=(1.0, 2.0), beta=(0.01, 0.1)),
}


def _resolution(values: np.ndarray) -> float:
    """Smallest gap between distinct scores, ignoring floating-point noise (0.7 + 0.02 vs 0.72)."""
    gaps = np.diff(np.unique(values))
    gaps = gaps[gaps > 1e-9 * max(1.0, float(np.max(np.abs(values))))]
    return float(gaps.min()) if gaps.size else np.nan


def _standard_errors(ss, n, rho, floor) -> np.ndarray:
    """Standard error of each dataset's mean difference, its fold variance held at least at
    the resolution floor (identical scores still carry the rounding of one step)."""
    variance = np.maximum(ss / np.maximum(n - 1, 1) / (1 - rho), floor ** 2)
    return np.sqrt(variance * (1 + (n - 1) * rho) / n)


def _sigma0_median(means, noise, upper: float) -> float:
    """Posterior median of sigma0 in the normal-population version of the model.

    Means ``m_i ~ N(delta0, se_i^2 + sigma0^2)`` with delta0 flat and sigma0 uniform on
    (0, upper): delta0 integrates out in closed form, and sigma0's density is evaluated on a
    logarithmic grid. Cheap (datasets x 400 numbers) and close enough to steer the sampler.
    """
    low = 1e-3 * noise.min()
    grid = np.geomspace(low, max(upper, 10 * low), 400)
    variance = noise[None, :] ** 2 + grid[:, None] ** 2
    weight = 1 / variance
    centre = (weight * means).sum(axis=1) / weight.sum(axis=1)
    log_density = (np.log(grid)  # the uniform prior, on the log grid
                   - 0.5 * np.log(variance).sum(axis=1) - 0.5 * np.log(weight.sum(axis=1))
                   - 0.5 * (weight * (means - centre[:, None]) ** 2).sum(axis=1))
    cumulative = np.cumsum(np.exp(log_density - log_density.max()))
    return float(grid[np.searchsorted(cumulative, cumulative[-1] / 2)])


def choose_centering(means, ss, n, rho, floor=0.0, sigma0_upper=None) -> np.ndarray:
    """Per dataset, whether to sample delta_i centred (True) or non-centred (False).

    Centring mixes best where the data pin delta_i down compared with its prior scale
    sigma0; the non-centred form avoids the funnel of a small sigma0 where they do not
    (Betancourt & Girolami 2015). Dataset i is centred when sigma0's posterior median, in
    the normal-population version of the model (:func:`_sigma0_median`), exceeds
    ``sqrt(t^2 - 1)`` times the standard error ``se_i`` of its mean, with
    ``t = 1.5 + 2 / sqrt(datasets)``; also when it lies far out (more than five robust
    spreads and three of its own standard errors from the median), since an outlier's
    delta_i sits in the tail of a heavy-tailed population, pinned by its data. Outliers do
    not enter the estimate of sigma0: a Student-t population explains them by its tails.

    One choice per dataset matters on real collections: datasets on which both algorithms
    score identically pin their delta_i to the resolution of the scores, far more tightly
    than noisy folds pin the others'; a single choice for all put half the collection in a
    funnel (a 10-dataset 5 x 2 collection, half identical: R-hat 1.07, 3,740 of 4,000
    draws at the maximum tree depth, E-BFMI 0.10 with all centred). With equal standard
    errors the rule is close to the all-or-none rule of earlier versions, calibrated on
    simulated collections (4 chains x (1000 + 1000), adapt_delta 0.95): centred when the
    robust spread of the means exceeds ``t`` standard errors. With 54 datasets, centring
    mixed from a ratio of about 1.4 up and failed below (R-hat 1.01-1.18); with 10 to 30
    datasets the spread is itself uncertain (the MAD's relative standard error is about
    1.2 / sqrt(datasets)), whence the margin 2 / sqrt(datasets).

    Parameters
    ----------
    means, ss, n, rho : array_like
        Each dataset's mean difference, sum of squared deviations, number of scores and
        correlation.
    floor : array_like
        Lower bound of the fold standard deviation (the resolution floor of sigma_i).
    sigma0_upper : float, optional
        Upper bound of sigma0's uniform prior; default 1000 times the spread of the means.

    Returns
    -------
    numpy.ndarray of bool
    """
    means, ss, n, rho = (np.asarray(v, dtype=float) for v in (means, ss, n, rho))
    noise = _standard_errors(ss, n, rho, np.broadcast_to(np.asarray(floor, dtype=float),
                                                           means.shape))
    distance = np.abs(means - np.median(means))
    spread = 1.4826 * np.median(distance)
    outlying = distance > np.maximum(5 * spread, 3 * noise)
    if sigma0_upper is None:
        sigma0_upper = 1000 * max(means.std(), noise.max())
    bulk = ~outlying if (~outlying).sum() >= 2 else np.ones_like(outlying)
    sigma0 = _sigma0_median(means[bulk], noise[bulk], sigma0_upper)
    threshold = 1.5 + 2 / np.sqrt(len(means))
    return outlying | (sigma0 > np.sqrt(threshold ** 2 - 1) * noise)


def describe_centering(centered) -> str:
    """"centered", "noncentered", or "mixed (k of n centered)"."""
    centered = np.atleast_1d(np.asarray(centered, dtype=bool))
    if centered.all():
        return "centered"
    if not centered.any():
        return "noncentered"
    return f"mixed ({int(centered.sum())} of {centered.size} centered)"


def _prepare(scores: Scores, first: str, second: str, prior: HierarchicalPrior,
             parameterization: str):
    """Stan data on a unit scale, the scale itself, and which delta_i are centred (a bool
    per dataset)."""
    differences = scores.differences(first, second)
    rows = [scores.algorithm_index(first), scores.algorithm_index(second)]
    n = scores.n_scores
    means = np.array([x.mean() for x in differences])
    ss = np.array([np.sum((x - x.mean()) ** 2) for x in differences])
    magnitude = np.array([max(1.0, float(np.abs(d.values[rows]).max())) for d in scores.datasets])
    # a - b with a = b + 0.02 differs from 0.02 by rounding: that spread is no information
    ss = np.where(np.sqrt(ss / n) <= 1e-9 * magnitude, 0.0, ss)
    resolution = np.array([_resolution(d.values[rows]) for d in scores.datasets])
    if np.isnan(resolution).all():
        raise ValueError(f"every score of {first} and {second} is the same number on every "
                         "dataset: there is nothing to compare")
    resolution = np.where(np.isnan(resolution), np.nanmin(resolution), resolution)
    floor = resolution / np.sqrt(12)
    constant = [name for name, s in zip(scores.dataset_names, ss) if s == 0]
    if constant:
        warnings.warn(
            f"{first} - {second} is constant on dataset(s) {constant}; their sigma_i is "
            "bounded below by the scores' resolution / sqrt(12) (see bayescomp.hierarchical)",
            ConstantDifferencesWarning, stacklevel=3)

    rho = scores.rho
    # the floor stands in for the spread of constant datasets: the scale and the default
    # bounds then never collapse to rounding noise
    sds = np.maximum(np.sqrt(ss / n), floor)
    within = sds.mean()
    scale = within
    among = means.std() if len(means) > 1 and means.std() > 0 else within
    noise = _standard_errors(ss, n, rho, floor)
    # delta0's uniform prior spans the largest difference (the paper's bound), and at least
    # five standard errors beyond every dataset's mean: on constant differences the largest
    # difference is the mean itself, and the posterior of delta0 would pile up at the bound
    delta0_bound = prior.delta0_bound or max(
        max(np.abs(x).max() for x in differences), float(np.max(np.abs(means) + 5 * noise)))
    sigma0_upper = prior.sigma0_upper or prior.sigma_factor * among
    sigma_upper = prior.sigma_upper or prior.sigma_factor * within
    if sigma_upper <= floor.max():
        raise ValueError(f"prior sigma_upper {sigma_upper} is below the resolution floor "
                         f"{floor.max()} of sigma_i")

    if parameterization == "auto":
        centered = choose_centering(means, ss, n, rho, floor, sigma0_upper)
    elif parameterization in ("centered", "noncentered"):
        centered = np.full(len(means), parameterization == "centered")
    else:
        raise ValueError("parameterization must be 'auto', 'centered' or 'noncentered', "
                         f"got {parameterization!r}")
    data = dict(
        n_datasets=len(scores), n_scores=[int(k) for k in n], rho=rho.tolist(),
        mean_diff=(means / scale).tolist(), ss=(ss / scale ** 2).tolist(),
        delta0_bound=float(delta0_bound / scale), sigma0_upper=float(sigma0_upper / scale),
        **delta0_logit_guess(means / scale, ss / scale ** 2, n, rho, floor / scale,
                              delta0_bound / scale, centered),
        sigma_lower=(floor / scale).tolist(), sigma_upper=float(sigma_upper / scale),
        **nu_prior.stan_data(prior.alpha, prior.beta), centered=centered.astype(int).tolist(),
        sigma_sampled=sigma_sampled(n, ss, rho, floor).astype(int).tolist())
    return data, float(scale), centered


def delta0_logit_guess(means, ss, n, rho, floor, bound, centered) -> dict:
    """How the Stan program standardises delta0 on the logit scale of its prior (a guess).

    The centre comes from the median of the means. The scale is the spread of delta0's
    posterior: with non-centred delta_i its whole spread, from the variance of the means and
    their mean squared standard error, divided by the number of datasets; with every delta_i
    centred the spread around their mean (sigma0 / sqrt(datasets)), since the program then
    moves delta0 with that mean at ``delta0_logit_slope``. Only the sampler's efficiency
    depends on these numbers, not the posterior.
    """
    all_centered = bool(np.all(centered))
    variance = ss / np.maximum(n - 1, 1) / (1 - rho) * (1 + (n - 1) * rho) / n
    noise = np.mean(np.maximum(variance, floor ** 2))
    among = max(means.var() - noise, noise / 4) if all_centered else means.var() + noise
    share = np.clip((np.median(means) + bound) / (2 * bound), 0.01, 0.99)
    slope = 1 / (2 * bound * share * (1 - share))   # d logit / d delta0 at the centre
    return dict(delta0_logit_center=float(np.log(share / (1 - share))),
                delta0_logit_scale=float(slope * np.sqrt(among / len(means))),
                delta0_logit_slope=float(slope if all_centered else 0.0),
                delta0_guess=float(bound * (2 * share - 1)))


def initial_values(data: dict, centered, chains: int, seed: int) -> list[dict]:
    """Initial values per chain, in the posterior's bulk and spread around it.

    Stan's default (uniform on (-2, 2) unconstrained) starts sigma0 at 10% to 90% of its
    prior bound, a thousand times the spread of the data. From there the first warm-up
    iterations overshoot into the corner where sigma0 is near 0 and nu near 1, in which
    every non-centred delta_i follows a Cauchy-like prior: seen on a 54-dataset collection,
    half of it identical, where one chain stayed at sigma0 = 4e-12 and nu = 1.04 with a
    step size of 0 and every draw at the maximum tree depth (R-hat 1.55). Starting from the
    normal-population estimate of sigma0 (:func:`_sigma0_median`) times exp(U(-1, 1)), each
    delta_i within a standard error of its mean, delta0 within its guessed spread and
    nu - 1 between 1.6 and 33 avoids that, and the chains still start apart for R-hat.
    """
    rng = np.random.default_rng([seed, 1015])
    unit = {k: np.asarray(data[k], dtype=float)
            for k in ("mean_diff", "ss", "n_scores", "rho", "sigma_lower")}
    means, floor = unit["mean_diff"], unit["sigma_lower"]
    se = _standard_errors(unit["ss"], unit["n_scores"], unit["rho"], floor)
    sigma0 = _sigma0_median(means, se, data["sigma0_upper"])
    centered = np.broadcast_to(np.asarray(centered, dtype=bool), means.shape)
    sampled = np.asarray(data["sigma_sampled"], dtype=bool)
    fold_sd = np.sqrt(unit["ss"] / np.maximum(unit["n_scores"] - 1, 1) / (1 - unit["rho"]))
    inits = []
    for _ in range(chains):
        jitter = rng.uniform(-1, 1, means.size)
        chain = dict(
            delta0_z=float(rng.uniform(-1, 1)),
            sigma0=float(min(sigma0 * np.exp(rng.uniform(-1, 1)), 0.5 * data["sigma0_upper"])),
            log_nu_minus_one=float(rng.uniform(0.5, 3.5)),
            delta_param=np.where(centered, means + jitter * se, jitter).tolist())
        if sampled.any():
            low = floor[sampled]
            start = np.maximum(fold_sd[sampled], low * 1.05) * np.exp(rng.uniform(0, 0.2, low.size))
            chain["sigma_param"] = np.minimum(start, 0.5 * data["sigma_upper"]).tolist()
        inits.append(chain)
    return inits


def delta_from_parameters(posterior, centered) -> xr.DataArray:
    """delta_i from the sampled delta_param: itself where centred, else delta0 + sigma0 x it."""
    param = posterior["delta_param"]
    centered = np.broadcast_to(np.asarray(centered, dtype=bool), param.shape[-1:])
    if centered.all():
        return param
    shifted = (posterior["delta0"] + posterior["sigma0"] * param).transpose(*param.dims)
    return param.copy(data=np.where(centered, param.values, shifted.values))


def sigma_from_parameters(posterior, delta: xr.DataArray, data: dict, rng) -> xr.DataArray:
    """sigma_i: sampled by Stan where it stayed a parameter, else drawn given delta_i.

    Everything on the unit scale of the Stan data; ``delta`` as from
    :func:`delta_from_parameters`.
    """
    sampled = np.asarray(data["sigma_sampled"], dtype=bool)
    unit = {k: np.asarray(data[k], dtype=float)
            for k in ("mean_diff", "ss", "n_scores", "rho", "sigma_lower")}
    sigma = draw_sigma(delta.values, unit["mean_diff"], unit["ss"], unit["n_scores"],
                       unit["rho"], unit["sigma_lower"], data["sigma_upper"], rng)
    if sampled.any():
        sigma[..., sampled] = posterior["sigma_param"].values
    return delta.copy(data=sigma)


def _user_scale(idata, data: dict, scale: float, datasets, centered: bool, seed: int,
                log_likelihood: bool, prior: HierarchicalPrior) -> az.InferenceData:
    """The posterior on the units of the scores, with datasets named, and sigma_i, alpha and
    beta drawn given the sampled parameters."""
    posterior = idata.posterior

    def per_dataset(variable):
        extra = [d for d in variable.dims if d not in ("chain", "draw")][0]
        return variable.rename({extra: "dataset"}).assign_coords(dataset=list(datasets))

    delta = delta_from_parameters(posterior, centered)
    # its own stream: the seed also seeds Stan, and these draws must not mirror Stan's
    rng = np.random.default_rng([seed, 2017])
    sigma = per_dataset(sigma_from_parameters(posterior, delta, data, rng) * scale)
    delta = per_dataset(delta * scale)
    # nu from the sampled log(nu - 1): CmdStan's CSV keeps 6 digits, which round a nu
    # within 5e-6 of 1 to exactly 1, and log(nu - 1) would then be -inf
    nu = 1 + np.exp(posterior["log_nu_minus_one"])
    alpha, beta = (nu.copy(data=draws) for draws in nu_prior.draw_alpha_beta(
        nu.values, prior.alpha, prior.beta, rng))
    user = xr.Dataset({
        "delta0": posterior["delta0"] * scale, "sigma0": posterior["sigma0"] * scale,
        "nu": nu, "alpha": alpha, "beta": beta,
        "delta": delta, "sigma": sigma, "delta_next": posterior["delta_next"] * scale},
        attrs=posterior.attrs)
    groups = dict(posterior=user, sample_stats=idata.sample_stats)
    if log_likelihood:
        means, ss = (np.asarray(data[k]) * factor
                     for k, factor in (("mean_diff", scale), ("ss", scale ** 2)))
        log_lik = compound_symmetric_logpdf(means, ss, np.asarray(data["n_scores"]),
                                            np.asarray(data["rho"]), delta.values, sigma.values)
        groups["log_likelihood"] = xr.Dataset({"differences": delta.copy(data=log_lik)})
    return az.InferenceData(**groups)


@dataclass(frozen=True)
class HierarchicalResult(Reportable):
    """Posterior of the hierarchical model for ``first - second``.

    Attributes
    ----------
    probabilities : ndarray
        For the next dataset: the posterior mean of the Student-t mass left of, inside and
        right of the ROPE.
    most_probable : ndarray
        Share of posterior draws in which left, rope or right has the largest mass
        (the numbers baycomp and the paper print).
    delta0 : pandas.Series
        Mean, sd, 95% HDI and P(left / rope / right) of the population mean difference.
    datasets : pandas.DataFrame
        Per dataset (index): ``n``, ``rho``, raw ``mean`` difference with its correlated
        t-test (``p_left_ttest``, ``p_rope_ttest``, ``p_right_ttest``, 95% ``ttest_hdi_low``,
        ``ttest_hdi_high``) and the shrunken delta_i (``delta_mean``, ``delta_sd``,
        ``delta_hdi_low``, ``delta_hdi_high``, ``p_left``, ``p_rope``, ``p_right``).
    """

    first: str
    second: str
    rope: Rope
    idata: az.InferenceData = field(repr=False)
    next_masses: np.ndarray = field(repr=False)
    delta0: pd.Series = field(repr=False)
    datasets: pd.DataFrame = field(repr=False)
    baselines: object = field(repr=False)
    diagnostics: Diagnostics = field(repr=False)
    settings: dict = field(repr=False)

    @property
    def labels(self) -> tuple[str, str, str]:
        return region_labels(self.first, self.second)

    @property
    def probabilities(self) -> np.ndarray:
        return self.next_masses.mean(axis=0)

    @property
    def most_probable(self) -> np.ndarray:
        return most_probable_shares(self.next_masses)

    UNRELIABLE = "unreliable (sampling problems)"

    @property
    def reliable(self) -> bool:
        """Whether the final fit passed its sampler diagnostics; if not, no decision is made."""
        return self.diagnostics.ok

    @property
    def attempts(self) -> tuple:
        """Every fit made, in order: its settings, diagnostics verdict, problems and seconds."""
        return tuple(self.settings.get("attempts", ()))

    def decision(self, threshold: float = 0.95) -> str:
        """Decision for the next dataset from :attr:`probabilities`; ``"unreliable (sampling
        problems)"`` when the fit is not :attr:`reliable`."""
        if not self.reliable:
            return self.UNRELIABLE
        return decide(self.probabilities, threshold, labels=self.labels)

    def _advice(self) -> str:
        s = self.settings
        other = _other_parameterization(s["parameterization"])
        steps = ["run longer (iter_warmup, iter_sampling; CLI --iter-warmup, --iter-sampling)",
                 f"raise adapt_delta above {s['adapt_delta']} (--adapt-delta)"]
        if other is not None:
            steps.append(f"try parameterization={other!r} (--parameterization {other})")
        if s.get("retries", 0) == 0:
            steps.append("or let the package retry (retries=2, --retries 2)")
        return "; ".join(steps) + "; then check the trace plots (plots.plot_diagnostics)"

    def _unreliable_lines(self) -> list[str]:
        n = len(self.attempts)
        after = f" after {n} attempts" if n > 1 else ""
        return [f"UNRELIABLE: the sampler failed its diagnostics{after}; the numbers below are "
                "not a decision.",
                *[f"  - {problem}" for problem in self.diagnostics.problems],
                f"  What to do: {self._advice()}."]

    def _attempt_lines(self) -> list[str]:
        lines = []
        for a in self.attempts:
            verdict = "ok" if a["ok"] else "; ".join(p.split(":")[0] for p in a["problems"])
            lines.append(f"  {a['attempt']}. {a['parameterization']}, adapt_delta "
                         f"{a['adapt_delta']}, {a['iter_warmup']} + {a['iter_sampling']} "
                         f"iterations: {verdict} ({a['seconds']:.1f} s)")
        return lines

    def to_frame(self) -> pd.DataFrame:
        """One row per dataset (see :attr:`datasets`)."""
        return self.datasets.copy()

    def verdicts(self, threshold: float = 0.95) -> list[str]:
        """The verdicts on the population (delta0) and on the next dataset, one sentence each
        (:func:`bayescomp.verdicts.verdict`); none when the fit is not :attr:`reliable`."""
        from .verdicts import verdict
        d0 = self.delta0[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)
        return [verdict(masses, self.first, self.second, threshold=threshold, scope=scope,
                        rope=self.rope, reliable=self.reliable)
                for masses, scope in ((d0, "On the population of datasets (delta0)"),
                                      (self.probabilities, "On the next dataset"))]

    def to_dict(self, threshold: float = 0.95) -> dict:
        """Every number :meth:`summary` shows, JSON-ready (NaN as None), regions keyed by the
        algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        from .serialize import hierarchical_dict
        return hierarchical_dict(self, threshold)

    def _table(self) -> pd.DataFrame:
        """The per-dataset table of the summary and the report, columns named by algorithm."""
        from .verdicts import format_number as n
        left, equal, right = self.labels
        t = self.datasets
        return pd.DataFrame({
            "n": t.n, "mean": t["mean"], f"P({right}), t-test": t.p_right_ttest,
            "delta_i": t.delta_mean,
            "95% HDI": [f"[{n(a)}, {n(b)}]" for a, b in zip(t.delta_hdi_low, t.delta_hdi_high)],
            f"P({left})": t.p_left, f"P({equal})": t.p_rope, f"P({right})": t.p_right})

    def summary(self) -> str:
        from .reports import text_table
        from .verdicts import format_number as n, probability as pr
        left, equal, right = self.labels
        d0 = self.delta0
        p, share = self.probabilities, self.most_probable
        s = self.settings
        lines = [] if self.reliable else self._unreliable_lines()
        lines += [
            f"Hierarchical model: {self.first} - {self.second} on {len(self.datasets)} datasets, "
            f"ROPE {self.rope}",
            *self.verdicts(),
            f"  prior {s['prior_name']}, {s['parameterization']} delta_i, backend {s['backend']}, "
            f"seed {s['seed']}",
            f"  engine {s.get('engine_version')}, route {s.get('route')}, Stan {s.get('stan_version')}",
            f"delta0 (mean difference of the population): mean {n(d0['mean'])}, sd {n(d0['sd'])}, "
            f"95% HDI [{n(d0['hdi_low'])}, {n(d0['hdi_high'])}]",
            f"  P({left}) = {pr(d0['p_left'])}   P({equal}) = {pr(d0['p_rope'])}   "
            f"P({right}) = {pr(d0['p_right'])}",
            "Next dataset (posterior mean of the probabilities):",
            f"  P({left}) = {pr(p[0])}   P({equal}) = {pr(p[1])}   P({right}) = {pr(p[2])}"
            f"   decision at 0.95: {self.decision()}",
            f"  share of draws where each is most probable: {pr(share[0])} / {pr(share[1])} / "
            f"{pr(share[2])}",
            "Per dataset (mean and t-test: raw; delta_i: shrunken):",
            text_table(self._table()),
        ]
        if self.baselines is not None:
            lines += ["Baselines on the dataset means:", self.baselines.summary()]
        if len(self.attempts) > 1:
            lines += ["Attempts (a fit that failed its diagnostics was run again with safer "
                      "settings, same seed):", *self._attempt_lines()]
        lines.append(self.diagnostics.summary())
        if not self.reliable:
            lines.append(f"UNRELIABLE: no decision ({len(self.diagnostics.problems)} sampling "
                         "problem(s), listed at the top)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _report(self):
        from .verdicts import format_number as n, probability as pr
        left, equal, right = self.labels
        d0, p, share = self.delta0, self.probabilities, self.most_probable
        g = self.diagnostics
        table = self._table()
        facts = [
            f"ROPE {self.rope}; differences are {self.first} - {self.second}; "
            f"prior {self.settings['prior_name']}",
            f"delta0: mean {n(d0['mean'])}, 95% HDI [{n(d0['hdi_low'])}, {n(d0['hdi_high'])}]; "
            f"P({left}) {pr(d0['p_left'])}, P({equal}) {pr(d0['p_rope'])}, "
            f"P({right}) {pr(d0['p_right'])}",
            f"next dataset: P({left}) {pr(p[0])}, P({equal}) {pr(p[1])}, P({right}) {pr(p[2])} "
            f"(most probable in {pr(share[0])} / {pr(share[1])} / {pr(share[2])} of draws)",
            f"sampler: {g.verdict} (max R-hat {n(g.max_rhat)}, "
            f"min ESS {n(min(g.min_ess_bulk, g.min_ess_tail))}, {g.divergences} divergences)",
        ]
        if len(self.attempts) > 1:
            facts.append("attempts: " + " / ".join(line.strip() for line in self._attempt_lines()))
        title = (f"Hierarchical model: {self.first} vs {self.second} on "
                 f"{len(self.datasets)} datasets")
        if not self.reliable:
            banner = self._unreliable_lines()
            facts.insert(0, banner[0] + " Problems: " + "; ".join(self.diagnostics.problems)
                         + ". What to do: " + self._advice() + ".")
            title += " (UNRELIABLE: sampling problems)"
        return title, facts, table


def _region_summary(draws, rope: Rope, hdi_prob: float = 0.95) -> dict:
    low, high = az.hdi(np.asarray(draws).reshape(-1), hdi_prob=hdi_prob)
    left, inside, right = rope.shares(draws)
    return dict(mean=float(np.mean(draws)), sd=float(np.std(draws, ddof=1)), hdi_low=low,
                hdi_high=high, p_left=left, p_rope=inside, p_right=right)


def _other_parameterization(used: str) -> str | None:
    """The fixed parameterisation a retry switches to from ``used`` (as
    :func:`describe_centering` names it), or None if there is none.

    From a mixed choice both fixed forms are "other"; the non-centred one is taken: where
    it samples badly (delta_i pinned by their data) it mixes slowly, which the doubled
    iterations address, whereas a centred funnel diverges.
    """
    if used.startswith("mixed"):
        return "noncentered"
    return {"centered": "noncentered", "noncentered": "centered"}.get(used)


def _safer_run(run: dict, retry: int, first_used: str) -> dict | None:
    """Settings of retry number ``retry`` (from 1), or None when there is no safer one.

    Retry 1 raises adapt_delta to at least 0.99 and doubles iter_warmup and iter_sampling;
    retry 2 keeps these and switches to the other parameterisation than the first fit used.
    """
    if retry == 1:
        return dict(run, adapt_delta=max(0.99, run["adapt_delta"]),
                    iter_warmup=2 * run["iter_warmup"], iter_sampling=2 * run["iter_sampling"])
    other = _other_parameterization(first_used)
    if retry == 2 and other is not None:
        return dict(run, parameterization=other)
    return None


def hierarchical(scores: Scores, first: str, second: str, *, rope=0.01, prior="paper",
                 parameterization: str = "auto", backend: str = "auto", route: str = "auto",
                 chains: int = 4,
                 iter_warmup: int = 1000, iter_sampling: int = 1000, seed=None,
                 adapt_delta: float = 0.95, max_treedepth: int = 10, baselines: bool = True,
                 log_likelihood: bool = False, show_progress: bool = False,
                 retries: int = 2) -> HierarchicalResult:
    """Compare two algorithms across datasets with the hierarchical model.

    Parameters
    ----------
    scores : Scores
        Paired scores on several datasets (numbers of scores and rho may differ).
    first, second : str
        Algorithms; differences are ``first - second``.
    rope : float or (float, float)
        Region of practical equivalence in the units of the scores.
    prior : "paper", "baycomp" or HierarchicalPrior
    parameterization : "auto", "centered" or "noncentered"
        How delta_i is sampled. "auto" decides from the data (:func:`choose_centering`):
        centred when the datasets' means pin the delta_i down (centring then mixes best),
        non-centred when they do not (avoiding the funnel of a small sigma0).
    backend : "auto", "cmdstanpy" or "pystan"
    route : str
        How the engine reaches Stan (:func:`bayescomp.sampling.sample`); "auto" is its fastest.
    chains, iter_warmup, iter_sampling, seed, adapt_delta, max_treedepth
        NUTS settings. A seed (drawn and recorded when None) makes the fit reproducible.
        ``adapt_delta`` defaults to 0.95 rather than Stan's 0.8: with few datasets the
        posterior of (nu, sigma0) is heavy-tailed, and a gradient here is cheap.
    baselines : bool
        Also run the frequentist and Bayesian signed-rank and sign tests on the dataset means.
    log_likelihood : bool
        Add the pointwise log-likelihood of every dataset's differences given the draws
        of delta_i and sigma_i (a ``log_likelihood`` group, e.g. for ``arviz.loo``).
    retries : int
        How many times a fit that fails its diagnostics is run again with safer settings,
        with the same seed (0 disables): first with adapt_delta raised to at least 0.99 and
        iter_warmup and iter_sampling doubled, then also with the other parameterisation
        than the first fit used. Sampling stops at the first fit that passes. Each retry
        is announced by a :class:`RetryWarning`; ``settings["attempts"]`` records every fit.
        At most 2 retries are defined.

    Returns
    -------
    HierarchicalResult
        Problems of the final fit are raised as a :class:`SamplingWarning` with advice; such
        a result is not :attr:`~HierarchicalResult.reliable` and makes no decision.
    """
    rope = Rope.coerce(rope)
    if len(scores) < 2:
        raise ValueError(f"the hierarchical model needs at least 2 datasets, got {len(scores)}; "
                         "for one dataset use correlated_ttest")
    if isinstance(prior, str):
        if prior not in PRIORS:
            raise ValueError(f"unknown prior {prior!r}; choose from {sorted(PRIORS)} "
                             "or pass a HierarchicalPrior")
        prior_name, prior = prior, PRIORS[prior]
    else:
        prior_name = "custom"
    if isinstance(retries, bool) or not isinstance(retries, (int, np.integer)) or retries < 0:
        raise ValueError(f"retries must be a non-negative integer, got {retries!r}")
    if seed is None:
        seed = int(np.random.default_rng().integers(2 ** 31 - 1))
    what = f"hierarchical model {first} - {second}"
    data, scale, centered = _prepare(scores, first, second, prior, parameterization)
    run = dict(parameterization=parameterization, adapt_delta=adapt_delta,
               iter_warmup=iter_warmup, iter_sampling=iter_sampling)
    attempts = []
    while True:
        started = time.perf_counter()
        fit = sampling.sample("hierarchical", data, backend=backend, route=route, chains=chains,
                              inits=initial_values(data, centered, chains, seed),
                              iter_warmup=run["iter_warmup"], iter_sampling=run["iter_sampling"],
                              seed=seed, adapt_delta=run["adapt_delta"],
                              max_treedepth=max_treedepth, show_progress=show_progress)
        idata = _user_scale(fit, data, scale, scores.dataset_names, centered, seed,
                            log_likelihood, prior)
        diagnostics = diagnose(idata, var_names=["delta0", "sigma0", "nu", "delta", "sigma"],
                               max_treedepth=max_treedepth)
        attempts.append(dict(
            attempt=len(attempts) + 1, parameterization=describe_centering(centered),
            adapt_delta=run["adapt_delta"], iter_warmup=run["iter_warmup"],
            iter_sampling=run["iter_sampling"], ok=diagnostics.ok,
            verdict=diagnostics.verdict, problems=diagnostics.problems,
            seconds=time.perf_counter() - started))
        safer = None if diagnostics.ok or len(attempts) > retries else \
            _safer_run(run, len(attempts), attempts[0]["parameterization"])
        if safer is None:
            break
        switched = safer["parameterization"] != run["parameterization"]
        run = safer
        warnings.warn(
            f"{what}: retried with "
            + (f"the {run['parameterization']} parameterization, " if switched else "")
            + f"adapt_delta {run['adapt_delta']}, {run['iter_warmup']} + "
            f"{run['iter_sampling']} iterations after: " + "; ".join(diagnostics.problems),
            RetryWarning, stacklevel=2)
        if switched:
            with warnings.catch_warnings():
                # constant datasets were already reported by the first _prepare
                warnings.simplefilter("ignore", ConstantDifferencesWarning)
                data, scale, centered = _prepare(scores, first, second, prior,
                                                 run["parameterization"])
    warn_if_problems(diagnostics, what + (f" (after {len(attempts)} attempts)"
                                          if len(attempts) > 1 else ""))

    post = idata.posterior
    nu, delta0, sigma0 = (post[v].values.reshape(-1) for v in ("nu", "delta0", "sigma0"))
    next_masses = rope.probabilities(stats.t(nu, loc=delta0, scale=sigma0))

    with warnings.catch_warnings():
        # constant datasets were already reported above
        warnings.simplefilter("ignore", ConstantDifferencesWarning)
        ttests = correlated_ttests(scores, first, second, rope=rope)
    rows = []
    for i, (name, test) in enumerate(zip(scores.dataset_names, ttests)):
        shrunk = _region_summary(post["delta"].values[:, :, i], rope)
        rows.append({"dataset": name, "n": test.posterior.n, "rho": test.posterior.rho,
                     "mean": test.posterior.mean, "p_left_ttest": test.probabilities[0],
                     "p_rope_ttest": test.probabilities[1], "p_right_ttest": test.probabilities[2],
                     **dict(zip(("ttest_hdi_low", "ttest_hdi_high"), test.interval())),
                     **{f"delta_{k}" if k in ("mean", "sd", "hdi_low", "hdi_high") else k: v
                        for k, v in shrunk.items()}})
    settings = dict(prior_name=prior_name, prior=prior,
                    parameterization=describe_centering(centered), centered=centered,
                    backend=fit.attrs.get("backend", backend), seed=seed, scale=scale,
                    **{key: fit.attrs.get(key) for key in ("engine_version", "route", "stan_version")},
                    chains=chains, iter_warmup=run["iter_warmup"],
                    iter_sampling=run["iter_sampling"], adapt_delta=run["adapt_delta"],
                    max_treedepth=max_treedepth, retries=retries, attempts=tuple(attempts))
    return HierarchicalResult(
        first, second, rope, idata, next_masses,
        pd.Series(_region_summary(delta0, rope), name="delta0"),
        pd.DataFrame(rows).set_index("dataset"),
        run_baselines(scores, first, second, rope=rope, seed=seed) if baselines else None,
        diagnostics, settings)
