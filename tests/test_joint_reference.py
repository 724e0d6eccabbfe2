"""The fast joint program against the joint model written plainly.

``stan/joint_reference.stan`` samples every parameter of the joint model of K algorithms
(each delta_i centred, each Sigma_i a covariance matrix, W, nu - 1, alpha and beta) with no
trick (:func:`bayescomp.models.reference.sample_joint_reference`); ``stan/joint.stan``
integrates Sigma_i, every delta_i and delta0 out, writes both Student-t's as scale mixtures
and tabulates nu's prior with alpha and beta integrated out (:func:`bayescomp.compare_many`).
Two independent routes to one posterior: on collections where the plain program samples
cleanly, every compared mean and standard deviation must agree within a few Monte Carlo
standard errors. The last test shows that the comparison has power: the fast program with
its noise scales shrunk by 0.8 fails it.

The plain program samples cleanly only where the data pin every delta_i and Sigma_i well
inside the population: many splits per dataset, a fold noise small beside the population's
spread. Elsewhere its centred delta_i, Sigma_i and sigma0 form funnels (3000 divergences on
3 algorithms x 6 datasets whose population spread is near 0, benchmarks/results/joint.md),
so a reference there would prove nothing.
"""
from __future__ import annotations

import math
import warnings

import arviz as az
import numpy as np
import pytest

import bayescomp as bc
import bayescomp.models.joint as joint_module
from bayescomp.models import joint_program
from bayescomp.models.diagnostics import diagnose
from bayescomp.models.reference import sample_joint_reference
from bayescomp.validation.simulate import compound_symmetric

pytestmark = [pytest.mark.stan, pytest.mark.slow]

#: the sampled parameters of the plain program whose R-hat and ESS must pass
REFERENCE_CHECKED = ["delta0_contrast", "delta_contrast", "sigma0", "nu", "W", "Sigma",
                     "alpha", "beta"]
DRAWS = dict(chains=4, iter_warmup=1000, iter_sampling=1500)
ROPE = 0.01
Z_MAX = 4
#: a probability of a region is compared when both programs' pooled share lies inside:
#: nearer 0 or 1 the few draws on the other side make its Monte Carlo error unreliable
SHARE_RANGE = (0.01, 0.99)


def planted_collection(effects, n_datasets: int, n_scores: int, *, sigma0: float,
                       sigma: float, rho: float = 0.1, tied=None, df=None,
                       seed: int = 0) -> bc.Scores:
    """Scores of ``len(effects)`` algorithms ``m0, m1, ...`` with known population means.

    Parameters
    ----------
    effects : sequence of float
        The algorithms' population means (relative to a common base).
    n_datasets, n_scores : int
        Datasets, and splits on each.
    sigma0 : float
        Each algorithm's dataset means deviate from its effect by N(0, sigma0^2 / 2),
        independently, so that every pair's population spread is sigma0.
    sigma, rho : float
        Each algorithm's fold noise: standard deviation sigma / sqrt(2), correlated rho
        between splits (so a pair's fold differences have sd sigma).
    tied : (int, int, float), optional
        Algorithms a and b whose deviations are correlated r: their pair's population
        spread is sigma0 sqrt(1 - r), the population covariance is not isotropic.
    df : float, optional
        A Student-t population with df degrees of freedom (one chi-square scale per
        dataset, shared by the algorithms), in place of the normal one.
    seed : int
    """
    rng = np.random.default_rng(seed)
    k = len(effects)
    base = [rng.uniform(0.6, 0.9, n_scores) for _ in range(n_datasets)]
    covariance = np.eye(k) * sigma0 ** 2 / 2
    if tied is not None:
        a, b, r = tied
        covariance[a, b] = covariance[b, a] = r * sigma0 ** 2 / 2
    deviations = rng.multivariate_normal(np.zeros(k), covariance, n_datasets)
    if df is not None:
        deviations *= np.sqrt(df / rng.chisquare(df, n_datasets))[:, None]
    arrays = {}
    for a, effect in enumerate(effects):
        folds = compound_symmetric(effect + deviations[:, a], sigma / np.sqrt(2), n_scores,
                                   rho, rng)
        arrays[f"m{a}"] = [b + f for b, f in zip(base, folds)]
    return bc.from_arrays(arrays, rho=rho)


# Noise standard errors of the means (sqrt(rho + (1 - rho) / n) sigma) at 0.23-0.29 of
# sigma0 (0.5 of the tied pair's spread in the second). With noisier data (sigma 0.04 on the first) the plain program
# diverged once in 6000 draws on 1 seed of 3 at adapt_delta 0.95.
COLLECTIONS = {
    # a normal, isotropic population; nu is left to its prior
    "normal 3 x 12 x 50": dict(
        scores=lambda: planted_collection([0.0, 0.01, 0.02], 12, 50, sigma0=0.03,
                                          sigma=0.025, seed=1),
        adapt_delta=0.95),
    # a heavy-tailed population (t, 3 d.o.f.) in which m1 and m2 move together
    # (population spread of m1 - m2 0.013 against 0.03): nu and an anisotropic population
    # covariance are learnt. At adapt_delta 0.95 1 draw in 6000 diverged on 1 seed of 4,
    # where W is small and its Cholesky factor's off-diagonal a funnel (W's scale is its
    # prior's alone); at 0.99 none on 4 seeds.
    "student-t 3 x 20 x 40": dict(
        scores=lambda: planted_collection([0.0, 0.01, 0.03], 20, 40, sigma0=0.03,
                                          sigma=0.02, tied=(1, 2, 0.8), df=3, seed=3),
        adapt_delta=0.99),
    # four algorithms: 6 pairs, 3 x 3 Sigma_i (no divergence at 0.95 on 4 seeds)
    "normal 4 x 12 x 50": dict(
        scores=lambda: planted_collection([0.0, 0.005, 0.015, 0.03], 12, 50, sigma0=0.03,
                                          sigma=0.025, seed=4),
        adapt_delta=0.95),
}


def _checked_datasets(posterior, how_many: int = 2) -> list:
    """The datasets whose delta_i are compared: farthest from and nearest to the centre of
    all delta_i (posterior means), where shrinkage is largest and smallest."""
    means = posterior["delta"].mean(dim=("chain", "draw")).values      # dataset x pair
    distance = np.linalg.norm(means - means.mean(axis=0), axis=1)
    order = np.argsort(distance)
    names = posterior["dataset"].values
    return [names[order[-1]], *names[order[:how_many - 1]]]


def _quantities(posterior, datasets, rope):
    """(label, draws chain x draw, compare the sd) of every compared quantity.

    log(nu - 1), sigma0; per pair delta0, the population's scale sqrt(g' Sigma0 g) (the
    K(K - 1)/2 pair scales determine Sigma0 at K = 3 and 4) and the probabilities of the
    three regions of the ROPE (their sd is a function of their mean: not compared); every
    pair's delta_i on ``datasets`` (where a wrong noise scale shows first).
    """
    out = [("log(nu - 1)", np.log(posterior["nu"].values - 1), True),
           ("sigma0", posterior["sigma0"].values, True)]
    for pair in posterior["pair"].values:
        delta0 = posterior["delta0"].sel(pair=pair).values
        out += [(f"delta0 {pair}", delta0, True),
                (f"population_sd {pair}", posterior["population_sd"].sel(pair=pair).values,
                 True)]
        out += [(f"P({region}) {pair}", indicator, False) for region, indicator in
                zip(("left", "rope", "right"), np.moveaxis(rope.indicators(delta0), -1, 0))]
    for dataset in datasets:
        for pair in posterior["pair"].values:
            out.append((f"delta[{dataset}] {pair}",
                        posterior["delta"].sel(dataset=dataset, pair=pair).values, True))
    return out


def _compare(fast, reference, rope) -> list[dict]:
    """Per quantity, both means and sds and their differences in combined Monte Carlo
    standard errors (ArviZ's, from the ESS of each program's chains)."""
    datasets = _checked_datasets(reference)
    rows = []
    for (label, a, with_sd), (_, b, _) in zip(_quantities(fast, datasets, rope),
                                              _quantities(reference, datasets, rope)):
        if label.startswith("P(") and not (SHARE_RANGE[0] < np.concatenate(
                [a.ravel(), b.ravel()]).mean() < SHARE_RANGE[1]):
            continue
        row = dict(quantity=label, fast=float(a.mean()), reference=float(b.mean()),
                   z=(a.mean() - b.mean()) / math.hypot(float(az.mcse(a)), float(az.mcse(b))))
        if with_sd:
            sd_error = math.hypot(float(az.mcse(a, method="sd")), float(az.mcse(b, method="sd")))
            row.update(fast_sd=float(a.std()), reference_sd=float(b.std()),
                       z_sd=(a.std() - b.std()) / sd_error)
        rows.append(row)
    return rows


def _table(rows) -> str:
    lines = [f"{'quantity':>28} {'fast':>10} {'reference':>10} {'z':>6} "
             f"{'fast sd':>9} {'ref. sd':>9} {'z sd':>6}"]
    for r in rows:
        sd = (f"{r['fast_sd']:9.4g} {r['reference_sd']:9.4g} {r['z_sd']:6.2f}"
              if "z_sd" in r else "")
        lines.append(f"{r['quantity']:>28} {r['fast']:10.4g} {r['reference']:10.4g} "
                     f"{r['z']:6.2f} {sd}")
    return "\n".join(lines)


def _largest_z(rows) -> float:
    return max(max(abs(r["z"]), abs(r.get("z_sd", 0.0))) for r in rows)


def _fast(scores, backend, noise_factor: float = 1.0):
    """compare_many's fit; with ``noise_factor`` != 1 every Psi_i (the noise scale the
    fast program reads) multiplied by it: a deliberately wrong program."""
    prepare = joint_program.prepare

    def wrong_prepare(scores, prior):
        data, scale = prepare(scores, prior)
        return dict(data, noise_scale=data["noise_scale"] * noise_factor), scale

    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        if noise_factor != 1.0:
            patch.setattr(joint_module, "prepare", wrong_prepare)
        return bc.compare_many(scores, rope=ROPE, seed=2017, backend=backend,
                               iter_warmup=DRAWS["iter_warmup"],
                               iter_sampling=DRAWS["iter_sampling"], chains=DRAWS["chains"])


@pytest.fixture(scope="module")
def reference_fits():
    """The plain program's fit of each collection, sampled once per module."""
    return {}


def _reference(name, backend, cache):
    if name not in cache:
        settings = COLLECTIONS[name]
        scores = settings["scores"]()
        fit = sample_joint_reference(scores, seed=2017, backend=backend,
                                     adapt_delta=settings["adapt_delta"], **DRAWS)
        cache[name] = scores, fit, diagnose(fit, var_names=REFERENCE_CHECKED)
    return cache[name]


@pytest.mark.parametrize("name", list(COLLECTIONS))
def test_fast_program_agrees_with_the_reference(name, stan_backend, reference_fits):
    scores, reference, reference_diagnostics = _reference(name, stan_backend, reference_fits)
    fast = _fast(scores, stan_backend)
    rows = _compare(fast.idata.posterior, reference.posterior, fast.rope)
    report = (f"{name}:\nfast: {fast.diagnostics.summary()}\n"
              f"reference: {reference_diagnostics.summary()}\n{_table(rows)}")
    print(report)
    # a reference that did not converge proves nothing: that is a failure, not a pass
    assert reference_diagnostics.ok, report
    assert fast.diagnostics.ok, report
    assert _largest_z(rows) < Z_MAX, report


def test_a_wrong_noise_scale_fails_the_comparison(stan_backend, reference_fits):
    """Known answer for the comparison itself: the fast program reading 0.8 Psi_i (every
    dataset's noise variance 20% too small) narrows every delta_i, by 5 to 8 Monte Carlo
    errors of their sds here (seed 2017); the hyper-parameters barely move (sigma0 by 2)."""
    name = "normal 3 x 12 x 50"
    scores, reference, reference_diagnostics = _reference(name, stan_backend, reference_fits)
    wrong = _fast(scores, stan_backend, noise_factor=0.8)
    rows = _compare(wrong.idata.posterior, reference.posterior, wrong.rope)
    report = f"{name}, noise scale x 0.8:\n{_table(rows)}"
    print(report)
    assert reference_diagnostics.ok and wrong.diagnostics.ok, report
    narrower = [r["z_sd"] < -Z_MAX for r in rows if r["quantity"].startswith("delta[")]
    assert sum(narrower) >= len(narrower) / 2, report
