"""How the joint model runs a fit again: by the pairwise model's rules
(:mod:`bayescomp.models.hierarchical_runs`), from where its chains are."""
import importlib
import warnings

import arviz as az
import numpy as np
import pytest

import bayescomp as bc
from bayescomp.models.joint_program import continuation_inits

joint_module = importlib.import_module("bayescomp.models.joint")
runs_module = importlib.import_module("bayescomp.models.hierarchical_runs")


def test_joint_continuation_starts_every_chain_at_its_last_draw_inside_the_bounds():
    """The last draw of each chain, with sigma0 and the Bartlett diagonal moved off their
    bounds (where Stan rejects an initial value) by a relative 1e-6, nothing else changed."""
    rng = np.random.default_rng(1)
    chains, draws, d, q = 2, 3, 2, 4
    factor = np.zeros((chains, draws, d, d))
    factor[..., [0, 1], [0, 1]] = rng.uniform(0.5, 2, (chains, draws, d))
    factor[..., 1, 0] = rng.normal(size=(chains, draws))
    values = dict(sigma0=rng.uniform(0.1, 0.5, (chains, draws)), shape=factor,
                  log_nu_minus_one=rng.normal(size=(chains, draws)),
                  kappa_z=rng.normal(size=(chains, draws, q)),
                  lambda_z=rng.normal(size=(chains, draws, q)))
    values["sigma0"][0, -1] = 2.0          # at the upper bound
    values["shape"][1, -1, 0, 0] = 0.0     # the Bartlett diagonal at its lower bound
    fit = az.from_dict(posterior=values)
    inits = continuation_inits(fit, dict(sigma0_upper=2.0, d=d))
    assert inits[0]["sigma0"] == pytest.approx(2.0 * (1 - 1e-6))
    assert inits[1]["sigma0"] == values["sigma0"][1, -1]
    moved = values["shape"][1, -1].copy()
    moved[0, 0] = 1e-6
    assert inits[1]["shape"] == moved.tolist()
    assert inits[0]["shape"] == values["shape"][0, -1].tolist()
    for chain in range(chains):
        for name in ("kappa_z", "lambda_z"):
            assert inits[chain][name] == values[name][chain, -1].tolist()
        assert inits[chain]["log_nu_minus_one"] == values["log_nu_minus_one"][chain, -1]


def joint_with_made_up_verdicts(scores, monkeypatch, made_up_diagnostics, verdicts):
    """``bc.compare_many`` (2 chains x (100 + 50), an ESS target of 1: the retries alone)
    whose diagnostics of fit k are replaced by ``verdicts[k]``
    (:func:`conftest.made_up_diagnostics`). Returns the result and the InferenceData
    diagnosed, in order."""
    seen = made_up_diagnostics(joint_module, verdicts)
    # chains that fail only their ESS are read as modes first: not this test's subject
    monkeypatch.setattr(joint_module, "find_joint_modes", lambda *args, **options: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.compare_many(scores, seed=5, chains=2, iter_warmup=100, iter_sampling=50,
                                 ess=1)
    return result, seen


@pytest.mark.stan
@pytest.mark.parametrize("k", [2, 3])
def test_a_joint_fit_that_mixes_slowly_goes_on_from_its_chains(three_algorithms, monkeypatch,
                                                                made_up_diagnostics, k):
    """The first fit fails its ESS (made up): the chains go on from their last draws with
    their adapted step size and no warm-up, and the draws are pooled, also at K = 2 (the
    Bartlett factor 1 x 1)."""
    scores = three_algorithms.subset(algorithms=three_algorithms.algorithms[:k])
    result, seen = joint_with_made_up_verdicts(scores, monkeypatch,
                                               made_up_diagnostics, [
        dict(problems=("effective sample size 99 < 200: made up by the test",)),
        dict(problems=())])
    assert [(a["continued"], a["iter_warmup"], a["iter_sampling"], a["draws"], a["ok"])
            for a in result.attempts] == [(False, 100, 50, 50, False), (True, 0, 50, 100, True)]
    # the continued fit begins with the first fit's draws, unchanged
    for name in ("delta0", "sigma0", "nu"):
        np.testing.assert_array_equal(seen[1].posterior[name].values[:, :50],
                                      seen[0].posterior[name].values)
    steps = seen[1].sample_stats["step_size"].values
    np.testing.assert_allclose(steps[:, 50:], np.repeat(steps[:, 49:50], 50, axis=1), rtol=1e-5)
    assert result.reliable and result.settings["iter_sampling"] == 100
    assert result.idata.posterior.sizes["draw"] == 100


@pytest.mark.stan
def test_a_joint_fit_that_diverged_redraws_at_half_its_step(three_algorithms, monkeypatch,
                                                             made_up_diagnostics):
    """The first fit diverges (made up): the chains go on from their last draws at half
    their adapted step, and half as many new draws replace the divergent ones."""
    result, seen = joint_with_made_up_verdicts(three_algorithms, monkeypatch,
                                               made_up_diagnostics, [
        dict(problems=("1 divergent transition(s): made up by the test",), divergences=1),
        dict(problems=())])
    assert [(a["continued"], a["redraw"], a["adapt_delta"], a["iter_warmup"],
             a["iter_sampling"], a["draws"], a["ok"]) for a in result.attempts] == [
        (False, False, 0.95, 100, 50, 50, False), (True, True, 0.99, 0, 25, 25, True)]
    first_step = seen[0].sample_stats["step_size"].values[:, -1]
    np.testing.assert_allclose(seen[1].sample_stats["step_size"].values,
                               np.repeat(0.5 * first_step[:, None], 25, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(result.idata.posterior["delta0"].values,
                                  seen[1].posterior["delta0"].values)
    assert result.reliable and result.settings["iter_sampling"] == 25


@pytest.mark.stan
def test_a_joint_fit_is_extended_until_the_ess_target_or_the_cap(three_algorithms, monkeypatch):
    """2 chains x 500 draws fall short of an ESS target of 800 (the 4 datasets' posterior
    mixes slowly: a tail ESS of 0.3 per draw): the fit goes on from where
    its chains are, with their step size and no warm-up, until the target holds or the cap
    (MAX_DRAWS_FACTOR times the draws) is reached; the ESS recorded is ArviZ's."""
    short_run = dict(seed=4, chains=2, iter_warmup=300, iter_sampling=500, ess=800)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.compare_many(three_algorithms, **short_run)
        # the cap at the first fit's draws and no retries: that fit alone
        monkeypatch.setattr(runs_module, "MAX_DRAWS_FACTOR", 1)
        short = bc.compare_many(three_algorithms, retries=0, **short_run)
    assert len(short.attempts) == 1
    assert min(short.settings["ess"]["bulk"], short.settings["ess"]["tail"]) < 800
    assert len(result.attempts) > 1 and all(a["continued"] and a["iter_warmup"] == 0
                                            for a in result.attempts[1:])
    draws = result.idata.posterior.sizes["draw"]
    assert result.settings["iter_sampling"] == draws > 500
    bulk, tail = (min(float(az.ess(result.idata, var_names=[name], method=method)[name].min())
                      for name in joint_module.REPORTED) for method in ("bulk", "tail"))
    assert result.settings["ess"]["target"] == 800
    np.testing.assert_allclose([result.settings["ess"]["bulk"], result.settings["ess"]["tail"]],
                               [bulk, tail], rtol=1e-10)
    assert min(bulk, tail) >= 800 or draws == 4 * 500
    assert f"ESS of the reported quantities {bulk:.0f} bulk, {tail:.0f} tail (target 800)" \
        in result.summary()
    assert result.to_dict()["settings"]["ess"]["target"] == 800
    # from where the chains were: the first fit's draws unchanged, its step size kept
    np.testing.assert_array_equal(result.idata.posterior["sigma0"].values[:, :500],
                                  short.idata.posterior["sigma0"].values)
    steps = result.idata.sample_stats["step_size"].values
    np.testing.assert_allclose(steps[:, 500:], np.repeat(steps[:, 499:500], draws - 500, axis=1),
                               rtol=1e-5)


def test_a_joint_ess_target_must_be_a_positive_integer(three_algorithms):
    for bad in (0, -5, 2.5, True, "1000"):
        with pytest.raises(ValueError, match="ess must be a positive integer"):
            bc.compare_many(three_algorithms, ess=bad)


def test_retries_must_be_a_non_negative_integer(three_algorithms):
    # refused before anything is sampled, by the joint model as by the pairwise one (a
    # negative count used to mean none, a fraction a whole retry more)
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="retries must be a non-negative integer"):
            bc.compare_many(three_algorithms, retries=bad)
        with pytest.raises(ValueError, match="retries must be a non-negative integer"):
            bc.hierarchical(three_algorithms, "a", "b", retries=bad)



def test_a_rope_or_one_name_in_place_of_the_algorithms_is_refused(three_algorithms):
    # compare_many's second argument is the algorithms: a ROPE there (or one name, whose
    # letters are no names) is refused before anything is sampled, by paper_analysis too; the
    # ROPE and the seed are keyword-only, as in every entry point
    from bayescomp.models.paper_analysis import paper_analysis
    for wrong in (0.01, "a"):
        for entry in (bc.compare_many, paper_analysis):
            with pytest.raises(TypeError, match=r"algorithms must be a sequence of names of "
                               r"\['a', 'b', 'c'\], got " + repr(wrong)):
                entry(three_algorithms, wrong)
    for entry in (bc.compare_many, paper_analysis):
        with pytest.raises(TypeError, match="positional"):
            entry(three_algorithms, None, 0.01)
    with pytest.raises(TypeError, match="positional"):
        bc.compare_all(three_algorithms, 0.01)
