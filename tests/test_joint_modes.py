"""Chains of the joint model that do not mix (bayescomp.models.joint_modes): chains drawn in
known modes are grouped into them, and a pair decides only what every mode decides."""
import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescomp as bc
from bayescomp.models.joint_modes import find_joint_modes
from bayescomp.models.paper_analysis import rope_sensitivity

ROPE = bc.Rope(-0.01, 0.01)
OPTIONS = dict(var_names=["delta0", "sigma0", "nu"], max_treedepth=10)


SCALES = [0.3, 0.2, 0.001, 0.001]


def _draws(centres, n_draws=1000, seed=0):
    """Four chains of exact normal draws, chains 0-1 in the first mode and 2-3 in the second:
    each mode's (log(nu - 1), log sigma0, delta0 of pair 0, delta0 of pair 1) centre given."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(centre, SCALES, (2, n_draws, 4)) for centre in centres])


def _idata(centres, n_draws=1000, seed=0):
    """The draws of :func:`_draws` as a fit's InferenceData."""
    x = _draws(centres, n_draws, seed)
    rng = np.random.default_rng(seed)
    posterior = dict(nu=1 + np.exp(x[..., 0]), sigma0=np.exp(x[..., 1]), delta0=x[..., 2:])
    return az.from_dict(posterior=posterior, dims={"delta0": ["pair"]}, sample_stats=dict(
        diverging=np.zeros((4, n_draws), bool), tree_depth=np.full((4, n_draws), 3),
        energy=rng.normal(size=(4, n_draws))))


def _population(idata):
    """Every draw's population masses: one copy of delta0 per draw, the draw itself."""
    return ROPE.indicators(idata.posterior["delta0"].values)


def _masses(idata, probabilities=(0.0, 0.01, 0.99)):
    """Every draw's population and next-dataset masses (:func:`_population`, :func:`_next`)."""
    return _population(idata), _next(idata, probabilities)


def _next(idata, probabilities):
    """Every draw's next-dataset masses: the same per pair."""
    chains, draws = idata.posterior.sizes["chain"], idata.posterior.sizes["draw"]
    return np.broadcast_to(np.asarray(probabilities, float), (chains, draws, 2, 3)).copy()


def test_separate_modes_that_agree_decide():
    # pair 0 inside the ROPE in both modes, pair 1 right of it in both
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [3.0, 1.5, 0.002, 0.04]])
    modes = find_joint_modes(idata, *_masses(idata), **OPTIONS)
    assert modes.separate and modes.parts == ((0, 1), (2, 3))
    assert modes.settled(0.95)
    for part in modes.probabilities[("population", 0)]:
        np.testing.assert_allclose(part, [0, 1, 0])
    for part in modes.probabilities[("population", 1)]:
        np.testing.assert_allclose(part, [0, 0, 1])


def test_separate_modes_that_disagree_settle_without_deciding_that_pair():
    # pair 0: inside the ROPE in one mode, right of it in the other
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [3.0, 1.5, 0.03, 0.05]])
    modes = find_joint_modes(idata, *_masses(idata), **OPTIONS)
    assert modes.separate and modes.settled(0.95)
    decided = bc.decisions.decide_modes(modes.probabilities[("population", 0)],
                                        modes.mcse[("population", 0)], 0.95)
    assert decided == bc.decisions.MODES_DISAGREE
    assert bc.decisions.decide_modes(modes.probabilities[("population", 1)],
                                     modes.mcse[("population", 1)], 0.95) == "right"


def test_separate_modes_are_weighed_by_their_known_masses():
    """Two separate modes of known masses 0.7 and 0.3 (each mode's draws exact draws of its
    normal component, two chains each): their weights come back within 0.02, with standard
    errors that say so, through the pairwise model's bridge sampling."""
    centres = np.array([[0.0, 0.0, 0.0, 0.05], [3.0, 1.5, 0.03, 0.05]])

    def density(points):
        return np.logaddexp(*[np.log(w) + stats.norm(c, SCALES).logpdf(points).sum(-1)
                              for c, w in zip(centres, (0.7, 0.3))])

    idata = _idata(centres)
    modes = find_joint_modes(idata, *_masses(idata), **OPTIONS,
                             unconstrained=_draws(centres), log_density=density,
                             rng=np.random.default_rng(0))
    assert modes.separate and modes.weighed and modes.weights_note is None
    np.testing.assert_allclose(modes.weights, [0.7, 0.3], atol=0.02)
    assert np.all(modes.weight_errors < 0.02)
    # without a log density, or with draws too few for the dimension: not weighed, and why
    unweighed = find_joint_modes(idata, *_masses(idata), **OPTIONS)
    assert not unweighed.weighed and "no log density" in unweighed.weights_note
    wide = np.concatenate([_draws(centres), np.zeros((4, 1000, 600))], axis=-1)
    refused = find_joint_modes(idata, *_masses(idata), **OPTIONS,
                               unconstrained=wide, log_density=lambda p: density(p[:, :4]),
                               rng=np.random.default_rng(0))
    assert not refused.weighed and np.isnan(refused.weights).all()
    assert "too few draws" in refused.weights_note


def test_one_group_of_chains_is_read_chain_by_chain():
    # all four chains in one mode: one part per chain, and they agree
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 0.05]])
    modes = find_joint_modes(idata, *_masses(idata), **OPTIONS)
    assert not modes.separate and modes.parts == ((0,), (1,), (2,), (3,))
    assert modes.settled(0.95)
    # a chain whose next-dataset probability sits just below the threshold: not settled
    masses = _next(idata, [0.0, 0.01, 0.99])
    masses[3] = [0.0, 0.06, 0.94]
    assert not find_joint_modes(idata, _population(idata), masses, **OPTIONS).settled(0.95)


def test_chains_too_short_to_read_one_by_one_are_not_read():
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 0.05]], n_draws=60)
    assert find_joint_modes(idata, *_masses(idata), **OPTIONS) is None


@pytest.mark.stan
@pytest.mark.slow
def test_joint_model_decides_a_near_identical_pair_on_every_seed(stan_backend):
    """At K = 2 on the simulated near-identical collection (the pairwise model's two modes)
    the joint fit's chains do not mix; before joint_modes it was UNRELIABLE after its retries
    on seeds 1-3 (benchmarks/results/joint.md). Every seed now decides "equivalent"."""
    scores = bc.simulate.near_identical_collection(54, seed=2).scores
    for seed in (1, 2):
        result = bc.compare_many(scores, rope=0.01, seed=seed, backend=stan_backend)
        assert result.reliable
        assert result.population[("a", "b")].decision(0.95) == "equivalent"
        assert result.to_frame()["population_decision"].tolist() == ["equivalent"]
        # the report's ROPE sensitivity reads the parts as the pair table does: at 1x the
        # same decisions
        sensitivity = rope_sensitivity(result)
        at_one = sensitivity[sensitivity["factor"] == 1.0]
        for scope in ("population", "next_dataset"):
            assert at_one[f"{scope}_decision"].tolist() == \
                result.to_frame()[f"{scope}_decision"].tolist()
    # another prior of nu read off the last fit's draws mode by mode decides as its own fit
    # does. Juarez & Steel's: its density over the paper's stays below e^0.9 times its value
    # at nu = 2 for every nu, so the weights are bounded and usable whatever draws a machine's
    # rounding gives. (baycomp's prior, which the report reads this way, grows without bound
    # over the paper's in nu's upper tail, where the near-normal mode follows the prior: its
    # Pareto k was 0.7 or less on one machine and 2.4 on another, and the report then refits.)
    from bayescomp.models.joint_posterior import reweighted_pair_table
    from bayescomp.models.prior_reweighting import log_nu_prior, reweighting

    assert result.modes, "the test is of a fit in modes"
    nu = 1 + np.exp(np.linspace(-30, 8, 2001))
    log_ratio = (log_nu_prior(bc.PRIORS["juarez_steel"], nu)
                 - log_nu_prior(bc.PRIORS["paper"], nu))
    assert log_ratio.max() - np.interp(0.0, np.log(nu - 1), log_ratio) < 1
    masses = result.mode_weights if result.modes_weighed else [np.nan] * len(result.modes)
    weights = reweighting(result.idata.posterior["nu"].values, "paper", bc.PRIORS["paper"],
                          bc.PRIORS["juarez_steel"], result.modes, masses)
    assert weights.usable
    table = reweighted_pair_table(result, weights.weights)
    own = bc.compare_many(scores, rope=0.01, seed=seed, prior="juarez_steel",
                          backend=stan_backend)
    for scope in ("population", "next_dataset"):
        assert table[f"{scope}_decision"].tolist() == own.to_frame()[f"{scope}_decision"].tolist()


def _heavy_weight(nu, points, density):
    """The heavy-tailed mode's (nu < 3) share of the pooled (chain, draw) draws, its weight
    by bridge sampling of each side's draws (as many on each side) and the weight's
    standard error (to first order, from the errors of the two log masses)."""
    from bayescomp.models.mode_mass import log_masses

    heavy = nu < 3
    n = min(heavy.sum(), (~heavy).sum())
    logs, errors = log_masses([(0,), (1,)], np.stack([points[heavy][:n], points[~heavy][:n]]),
                              density, np.random.default_rng(0))
    weight = 1 / (1 + np.exp(logs[1] - logs[0]))
    return heavy, weight, weight * (1 - weight) * np.hypot(*errors)


@pytest.fixture(scope="module")
def joint_weight_at_k2(stan_backend):
    """The heavy-tailed mode's (nu < 3) weight in the joint model at K = 2 on the simulated
    near-identical collection, by bridge sampling of the draws split at nu = 3 through the
    program's log density in numpy (joint_density); 4 x 1000 draws, seed 11 (about 25 s)."""
    from functools import partial

    from bayescomp.models import joint_density, joint_program

    scores = bc.simulate.near_identical_collection(54, seed=2).scores
    data, _ = joint_program.prepare(scores, bc.PRIORS["paper"])
    fit = bc.sampling.sample("joint", joint_program.stan_data(data), backend=stan_backend,
                             chains=4, iter_warmup=1000, iter_sampling=1000, seed=11,
                             adapt_delta=0.95,
                             inits=joint_program.initial_values(data, 4, np.random.default_rng(11)))
    return _heavy_weight(fit.posterior["nu"].values, joint_density.unconstrained(fit, data),
                         partial(joint_density.log_density, data))


@pytest.mark.stan
@pytest.mark.slow
def test_the_joint_weight_of_a_mode_is_its_chains_share(joint_weight_at_k2):
    """Where the joint chains cross between the two modes, the heavy-tailed mode's weight by
    bridge sampling is within three standard errors of its share of the pooled draws.

    (Not compared with the pairwise model's weight: on modes the chains cross between,
    bridge sampling's weights were 0.15-0.18 from the chains' own shares in both models, and
    the package weighs only separate modes; the two models' shares are compared in
    benchmarks/results/joint.md, "The heavy-tailed mode at K = 2".)"""
    heavy, joint, joint_error = joint_weight_at_k2
    # the chains cross: each holds both modes (at least 1% of its draws in each), and both
    # hold a real share of the pooled draws. (How often each chain crosses depends on the
    # draws: on one machine every chain held 10-99% heavy-tailed draws, on another 2.8-96%.)
    per_chain = heavy.mean(axis=1)
    assert np.all(per_chain >= 0.01) and np.all(per_chain <= 0.99)
    assert 0.1 < heavy.mean() < 0.9
    assert 0 < joint_error < 0.2
    share, share_error = heavy.mean(), heavy.mean(axis=1).std(ddof=1) / 2
    assert abs(joint - share) < 3 * np.hypot(joint_error, share_error)


def test_weighed_modes_name_a_best_algorithm_and_unweighed_ones_do_not():
    """The summary's lines on a joint fit in two separate modes: with weights, the best
    algorithm is named from the mixture's P(rank 1) and the weights are shown with their
    errors; without, no algorithm is named and the reason is given."""
    from types import SimpleNamespace

    import pandas as pd

    from bayescomp.presentation.results.joint import best_sentence, modes_lines

    weighed = SimpleNamespace(
        p_best=pd.Series({"a": 0.97, "b": 0.03}), p_best_mcse=pd.Series({"a": 0.005, "b": 0.005}),
        p_best_gap_mcse=pd.Series({"a": 0.0, "b": 0.01}), best="a",
        reliable=True, rope=ROPE, modes=((0, 1), (2, 3)),
        modes_separate=True, modes_weighed=True, mode_weights=(0.7, 0.3),
        mode_weight_errors=(0.01, 0.01), weights_note=None, UNRELIABLE="unreliable")
    assert best_sentence(weighed, 0.95).startswith("a has the best population mean")
    assert "mixed by their estimated weights" in best_sentence(weighed, 0.95)
    assert "Weights (posterior mass by bridge sampling, with standard errors): 0.700 +- 0.010; " \
           "0.300 +- 0.010" in modes_lines(weighed)[0]
    note = "bridge sampling could not estimate a mode's mass"
    unweighed = SimpleNamespace(**{**vars(weighed), "modes_weighed": False,
                                   "mode_weights": (np.nan, np.nan), "weights_note": note})
    assert best_sentence(unweighed, 0.95).startswith("Best algorithm: no verdict")
    assert f"weights are not estimated ({note})" in modes_lines(unweighed)[0]


def test_pair_probabilities_mix_the_modes_by_their_weights():
    """Pair 0's delta0 right of the ROPE in mode 1 (chains 0-1) and inside it in mode 2
    (chains 2-3), each mode's next-dataset masses constant: mixed by weights 0.7 and 0.3 the
    probabilities are 0.7 / 0.3 exactly (systematic resampling), as sampled 0.5 / 0.5; the
    Monte Carlo errors are the chains' as sampled either way."""
    from bayescomp.models.joint_posterior import pair_estimates
    from bayescomp.models.modes import mixture_indices

    delta0 = np.concatenate([np.full((2, 100, 1), 0.05), np.zeros((2, 100, 1))])
    masses = np.concatenate([np.broadcast_to([0.0, 0.2, 0.8], (2, 100, 1, 3)),
                             np.broadcast_to([0.1, 0.9, 0.0], (2, 100, 1, 3))])
    order = mixture_indices(((0, 1), (2, 3)), (0.7, 0.3), 4, 100)
    regions = ROPE.indicators(delta0)
    (population, population_mcse), (next_dataset, _) = pair_estimates(regions, masses, order)[0]
    np.testing.assert_allclose(population, [0.0, 0.3, 0.7])
    np.testing.assert_allclose(next_dataset, 0.7 * np.array([0.0, 0.2, 0.8])
                               + 0.3 * np.array([0.1, 0.9, 0.0]))
    (as_sampled, mcse), _ = pair_estimates(regions, masses, np.arange(400))[0]
    np.testing.assert_allclose(as_sampled, [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(mcse, population_mcse)
