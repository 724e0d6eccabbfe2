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

import warnings
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from . import backends, nu_prior
from .baselines import baselines as run_baselines
from .correlated import correlated_ttests
from .data import Scores
from .decisions import decide
from .diagnostics import Diagnostics, diagnose, warn_if_problems
from .exceptions import ConstantDifferencesWarning
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


def choose_centering(means, ss, n, rho) -> bool:
    """Whether to sample the delta_i centred (True) or non-centred (False).

    Centring mixes best when the data pin delta_i down compared with its prior scale; the
    non-centred form avoids the funnel of a small sigma0 when they do not (Betancourt &
    Girolami 2015). The datasets are centred when the robust spread of their means (scaled
    median absolute deviation) exceeds (1.5 + 2 / sqrt(datasets)) times their typical
    standard error, or when some dataset lies far out (more than five robust spreads and
    three of its own standard errors from the median): such a population has heavy tails, a
    small nu, and a non-centred Student-t then samples badly.

    Measured on simulated collections (4 chains x (1000 + 1000), adapt_delta 0.95): with 54
    datasets, centring mixed from a ratio of about 1.4 up and failed below (R-hat 1.01-1.18).
    With 10 to 30 datasets the spread of the means is itself uncertain (the MAD's relative
    standard error is about 1.2 / sqrt(datasets)): centring failed at estimated ratios of
    1.51, 1.55, 1.71 and 1.96 (R-hat 1.011-1.156, minimum ESS 17-198) and was the slower form
    at another 1.51. The margin 2 / sqrt(datasets) avoids these five in the 52 collections;
    it costs speed on 4 others that centring would have sampled well (minimum ESS 2-3 times
    lower, still converged).
    """
    means, ss, n, rho = (np.asarray(v, dtype=float) for v in (means, ss, n, rho))
    noise = np.sqrt(ss / (n - 1) * (1 + (n - 1) * rho) / n)
    distance = np.abs(means - np.median(means))
    spread = 1.4826 * np.median(distance)
    outlying = distance > np.maximum(5 * spread, 3 * noise)
    threshold = 1.5 + 2 / np.sqrt(len(means))
    return bool(spread > threshold * np.sqrt(np.mean(noise ** 2)) or outlying.any())


def describe_centering(centered: bool) -> str:
    """"centered" or "noncentered"."""
    return "centered" if centered else "noncentered"


def _prepare(scores: Scores, first: str, second: str, prior: HierarchicalPrior,
             parameterization: str):
    """Stan data on a unit scale, the scale itself, and whether the delta_i are centred."""
    differences = scores.differences(first, second)
    rows = [scores.algorithm_index(first), scores.algorithm_index(second)]
    n = scores.n_scores
    means = np.array([x.mean() for x in differences])
    ss = np.array([np.sum((x - x.mean()) ** 2) for x in differences])
    sds = np.sqrt(ss / n)
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

    within = sds.mean()
    scale = within if within > 0 else float(np.max(floor))
    among = means.std() if len(means) > 1 and means.std() > 0 else within
    among = among if among > 0 else scale
    delta0_bound = prior.delta0_bound or max(np.max([np.abs(x).max() for x in differences]), scale)
    sigma0_upper = prior.sigma0_upper or prior.sigma_factor * among
    sigma_upper = prior.sigma_upper or prior.sigma_factor * max(within, scale)
    if sigma_upper <= floor.max():
        raise ValueError(f"prior sigma_upper {sigma_upper} is below the resolution floor "
                         f"{floor.max()} of sigma_i")

    rho = scores.rho
    if parameterization == "auto":
        centered = choose_centering(means, ss, n, rho)
    elif parameterization in ("centered", "noncentered"):
        centered = parameterization == "centered"
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
        **nu_prior.stan_data(prior.alpha, prior.beta), centered=int(centered),
        sigma_sampled=sigma_sampled(n, ss, rho, floor).astype(int).tolist())
    return data, float(scale), centered


def delta0_logit_guess(means, ss, n, rho, floor, bound, centered: bool) -> dict:
    """How the Stan program standardises delta0 on the logit scale of its prior (a guess).

    The centre comes from the median of the means. The scale is the spread of delta0's
    posterior: with non-centred delta_i its whole spread, from the variance of the means and
    their mean squared standard error, divided by the number of datasets; with centred
    delta_i the spread around the mean of the delta_i (sigma0 / sqrt(datasets)), since the
    program then moves delta0 with that mean at ``delta0_logit_slope``. Only the sampler's
    efficiency depends on these numbers, not the posterior.
    """
    variance = ss / np.maximum(n - 1, 1) / (1 - rho) * (1 + (n - 1) * rho) / n
    noise = np.mean(np.maximum(variance, floor ** 2))
    among = max(means.var() - noise, noise / 4) if centered else means.var() + noise
    share = np.clip((np.median(means) + bound) / (2 * bound), 0.01, 0.99)
    slope = 1 / (2 * bound * share * (1 - share))   # d logit / d delta0 at the centre
    return dict(delta0_logit_center=float(np.log(share / (1 - share))),
                delta0_logit_scale=float(slope * np.sqrt(among / len(means))),
                delta0_logit_slope=float(slope if centered else 0.0),
                delta0_guess=float(bound * (2 * share - 1)))


def delta_from_parameters(posterior, centered: bool) -> xr.DataArray:
    """delta_i from the sampled delta_param: itself if centred, else delta0 + sigma0 x it."""
    param = posterior["delta_param"]
    if centered:
        return param
    return (posterior["delta0"] + posterior["sigma0"] * param).transpose(*param.dims)


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
    alpha, beta = (posterior["nu"].copy(data=draws) for draws in nu_prior.draw_alpha_beta(
        posterior["nu"].values, prior.alpha, prior.beta, rng))
    user = xr.Dataset({
        "delta0": posterior["delta0"] * scale, "sigma0": posterior["sigma0"] * scale,
        "nu": posterior["nu"], "alpha": alpha, "beta": beta,
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

    def decision(self, threshold: float = 0.95) -> str:
        """Decision for the next dataset from :attr:`probabilities`."""
        return decide(self.probabilities, threshold, labels=self.labels)

    def to_frame(self) -> pd.DataFrame:
        """One row per dataset (see :attr:`datasets`)."""
        return self.datasets.copy()

    def summary(self) -> str:
        left, equal, right = self.labels
        d0 = self.delta0
        p, share = self.probabilities, self.most_probable
        s = self.settings
        table = self.datasets[["n", "rho", "mean", "p_right_ttest", "delta_mean", "delta_hdi_low",
                               "delta_hdi_high", "p_left", "p_rope", "p_right"]]
        lines = [
            f"Hierarchical model: {self.first} - {self.second} on {len(self.datasets)} datasets, "
            f"ROPE {self.rope}",
            f"  prior {s['prior_name']}, {s['parameterization']} delta_i, backend {s['backend']}, "
            f"seed {s['seed']}",
            f"delta0 (mean difference of the population): mean {d0['mean']:.4g}, sd {d0['sd']:.4g}, "
            f"95% HDI [{d0['hdi_low']:.4g}, {d0['hdi_high']:.4g}]",
            f"  P({left}) = {d0['p_left']:.4f}   P({equal}) = {d0['p_rope']:.4f}   "
            f"P({right}) = {d0['p_right']:.4f}",
            "Next dataset (posterior mean of the probabilities):",
            f"  P({left}) = {p[0]:.4f}   P({equal}) = {p[1]:.4f}   P({right}) = {p[2]:.4f}"
            f"   decision at 0.95: {self.decision()}",
            f"  share of draws where each is most probable: {share[0]:.4f} / {share[1]:.4f} / "
            f"{share[2]:.4f}",
            "Per dataset (mean and p_right_ttest: raw; delta_*: shrunken):",
            table.to_string(float_format=lambda v: f"{v:.4g}"),
        ]
        if self.baselines is not None:
            lines += ["Baselines on the dataset means:", self.baselines.summary()]
        lines.append(self.diagnostics.summary())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _report(self):
        left, equal, right = self.labels
        d0, p, share = self.delta0, self.probabilities, self.most_probable
        table = self.datasets
        table = pd.DataFrame({
            "n": table.n, "mean": table["mean"], f"P({right}), t-test": table.p_right_ttest,
            "delta_i": table.delta_mean,
            "95% HDI": [f"[{a:.3g}, {b:.3g}]" for a, b in zip(table.delta_hdi_low,
                                                           table.delta_hdi_high)],
            f"P({left})": table.p_left, f"P({equal})": table.p_rope, f"P({right})": table.p_right})
        facts = [
            f"ROPE {self.rope}; differences are {self.first} - {self.second}; "
            f"prior {self.settings['prior_name']}",
            f"delta0: mean {d0['mean']:.4g}, 95% HDI [{d0['hdi_low']:.4g}, {d0['hdi_high']:.4g}]; "
            f"P({left}) {d0['p_left']:.3f}, P({equal}) {d0['p_rope']:.3f}, "
            f"P({right}) {d0['p_right']:.3f}",
            f"next dataset: P({left}) {p[0]:.3f}, P({equal}) {p[1]:.3f}, P({right}) {p[2]:.3f} "
            f"(most probable in {share[0]:.3f} / {share[1]:.3f} / {share[2]:.3f} of draws); "
            f"decision at 0.95: {self.decision()}",
            f"sampler: {self.diagnostics.verdict} (max R-hat {self.diagnostics.max_rhat:.3f}, "
            f"min ESS {min(self.diagnostics.min_ess_bulk, self.diagnostics.min_ess_tail):.0f}, "
            f"{self.diagnostics.divergences} divergences)",
        ]
        title = (f"Hierarchical model: {self.first} vs {self.second} on "
                 f"{len(self.datasets)} datasets")
        return title, facts, table


def _region_summary(draws, rope: Rope, hdi_prob: float = 0.95) -> dict:
    low, high = az.hdi(np.asarray(draws).reshape(-1), hdi_prob=hdi_prob)
    left, inside, right = rope.shares(draws)
    return dict(mean=float(np.mean(draws)), sd=float(np.std(draws, ddof=1)), hdi_low=low,
                hdi_high=high, p_left=left, p_rope=inside, p_right=right)


def hierarchical(scores: Scores, first: str, second: str, *, rope=0.01, prior="paper",
                 parameterization: str = "auto", backend: str = "auto", chains: int = 4,
                 iter_warmup: int = 1000, iter_sampling: int = 1000, seed=None,
                 adapt_delta: float = 0.95, max_treedepth: int = 10, baselines: bool = True,
                 log_likelihood: bool = False, show_progress: bool = False) -> HierarchicalResult:
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
    chains, iter_warmup, iter_sampling, seed, adapt_delta, max_treedepth
        NUTS settings. A seed (drawn and recorded when None) makes the fit reproducible.
        ``adapt_delta`` defaults to 0.95 rather than Stan's 0.8: with few datasets the
        posterior of (nu, sigma0) is heavy-tailed, and a gradient here is cheap.
    baselines : bool
        Also run the frequentist and Bayesian signed-rank and sign tests on the dataset means.
    log_likelihood : bool
        Add the pointwise log-likelihood of every dataset's differences given the draws
        of delta_i and sigma_i (a ``log_likelihood`` group, e.g. for ``arviz.loo``).

    Returns
    -------
    HierarchicalResult
        Problems of the sampler are raised as a :class:`SamplingWarning` with advice.
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
    if seed is None:
        seed = int(np.random.default_rng().integers(2 ** 31 - 1))
    data, scale, centered = _prepare(scores, first, second, prior, parameterization)
    fit = backends.sample("hierarchical", data, backend=backend, chains=chains,
                          iter_warmup=iter_warmup, iter_sampling=iter_sampling, seed=seed,
                          adapt_delta=adapt_delta, max_treedepth=max_treedepth,
                          show_progress=show_progress)
    idata = _user_scale(fit, data, scale, scores.dataset_names, centered, seed, log_likelihood,
                        prior)
    diagnostics = diagnose(idata, var_names=["delta0", "sigma0", "nu", "delta", "sigma"],
                           max_treedepth=max_treedepth)
    warn_if_problems(diagnostics, f"hierarchical model {first} - {second}")

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
                    chains=chains, iter_warmup=iter_warmup, iter_sampling=iter_sampling,
                    adapt_delta=adapt_delta, max_treedepth=max_treedepth)
    return HierarchicalResult(
        first, second, rope, idata, next_masses,
        pd.Series(_region_summary(delta0, rope), name="delta0"),
        pd.DataFrame(rows).set_index("dataset"),
        run_baselines(scores, first, second, rope=rope, seed=seed) if baselines else None,
        diagnostics, settings)
