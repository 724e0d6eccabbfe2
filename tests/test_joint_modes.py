"""Chains of the joint model that do not mix (bayescomp.models.joint_modes): chains drawn in
known modes are grouped into them, and a pair decides only what every mode decides."""
import arviz as az
import numpy as np
import pytest

import bayescomp as bc
from bayescomp.models.joint_modes import find_joint_modes
from bayescomp.models.paper_analysis import rope_sensitivity

ROPE = bc.Rope(-0.01, 0.01)
OPTIONS = dict(var_names=["delta0", "sigma0", "nu"], max_treedepth=10)


def _idata(centres, n_draws=1000, seed=0):
    """Four chains of exact normal draws, chains 0-1 in the first mode and 2-3 in the second:
    each mode's (nu, log sigma0, delta0 of pair 0, delta0 of pair 1) centre given."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(centre, [0.3, 0.2, 0.001, 0.001], (2, n_draws, 4))
                        for centre in centres])
    posterior = dict(nu=1 + np.exp(x[..., 0]), sigma0=np.exp(x[..., 1]), delta0=x[..., 2:])
    return az.from_dict(posterior=posterior, dims={"delta0": ["pair"]}, sample_stats=dict(
        diverging=np.zeros((4, n_draws), bool), tree_depth=np.full((4, n_draws), 3),
        energy=rng.normal(size=(4, n_draws))))


def _next(idata, probabilities):
    """Every draw's next-dataset masses: the same per pair."""
    chains, draws = idata.posterior.sizes["chain"], idata.posterior.sizes["draw"]
    return np.broadcast_to(np.asarray(probabilities, float), (chains, draws, 2, 3)).copy()


def test_separate_modes_that_agree_decide():
    # pair 0 inside the ROPE in both modes, pair 1 right of it in both
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [3.0, 1.5, 0.002, 0.04]])
    modes = find_joint_modes(idata, _next(idata, [0.0, 0.01, 0.99]), ROPE, **OPTIONS)
    assert modes.separate and modes.parts == ((0, 1), (2, 3))
    assert modes.settled(0.95)
    for part in modes.probabilities[("population", 0)]:
        np.testing.assert_allclose(part, [0, 1, 0])
    for part in modes.probabilities[("population", 1)]:
        np.testing.assert_allclose(part, [0, 0, 1])


def test_separate_modes_that_disagree_settle_without_deciding_that_pair():
    # pair 0: inside the ROPE in one mode, right of it in the other
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [3.0, 1.5, 0.03, 0.05]])
    modes = find_joint_modes(idata, _next(idata, [0.0, 0.01, 0.99]), ROPE, **OPTIONS)
    assert modes.separate and modes.settled(0.95)
    decided = bc.decisions.decide_modes(modes.probabilities[("population", 0)],
                                        modes.mcse[("population", 0)], 0.95)
    assert decided == bc.decisions.MODES_DISAGREE
    assert bc.decisions.decide_modes(modes.probabilities[("population", 1)],
                                     modes.mcse[("population", 1)], 0.95) == "right"


def test_one_group_of_chains_is_read_chain_by_chain():
    # all four chains in one mode: one part per chain, and they agree
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 0.05]])
    modes = find_joint_modes(idata, _next(idata, [0.0, 0.01, 0.99]), ROPE, **OPTIONS)
    assert not modes.separate and modes.parts == ((0,), (1,), (2,), (3,))
    assert modes.settled(0.95)
    # a chain whose next-dataset probability sits just below the threshold: not settled
    masses = _next(idata, [0.0, 0.01, 0.99])
    masses[3] = [0.0, 0.06, 0.94]
    assert not find_joint_modes(idata, masses, ROPE, **OPTIONS).settled(0.95)


def test_chains_too_short_to_read_one_by_one_are_not_read():
    idata = _idata([[0.0, 0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 0.05]], n_draws=60)
    assert find_joint_modes(idata, _next(idata, [0.0, 0.01, 0.99]), ROPE, **OPTIONS) is None


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
