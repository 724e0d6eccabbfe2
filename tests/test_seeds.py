"""One seed path: the user's seed checked and drawn once, every random step on its own stream
spawned from ``numpy.random.SeedSequence(seed)``, each attempt's Stan seed recorded.

The known answers are recomputed here with numpy's own spawning (``SeedSequence.spawn``), a
route independent of the package's ``spawn_key`` arithmetic, and the fits are redone step by
step from the public pieces (``prepare``, ``initial_values``, ``sampling.sample``)."""
import json
import warnings

import numpy as np
import pytest

import bayescomp as bc
from bayescomp import sampling
from bayescomp.models.hierarchical_prior import PRIORS
from bayescomp.models.hierarchical_program import initial_values, prepare, to_user_scale
from bayescomp.sampling import seeds as seeds_module

# 2 chains x 10 draws fail the ESS check at every attempt: three attempts, two retries
STARVED = dict(chains=2, iter_warmup=10, iter_sampling=10)


def spawned_stan_seeds(seed, n):
    """Stan's seeds of the first n attempts, by numpy's spawning: stream 0, then its children."""
    stan_stream = np.random.SeedSequence(seed).spawn(1)[0]
    return [int(child.generate_state(1)[0] >> 1) for child in stan_stream.spawn(n)]


@pytest.fixture(scope="module")
def scores():
    return bc.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1,
                                  seed=4).scores


@pytest.fixture
def count_draws(monkeypatch):
    """The number of seeds drawn from fresh entropy since the test began."""
    drawn = []
    real = seeds_module.draw_seed

    def draw():
        drawn.append(real())
        return drawn[-1]

    monkeypatch.setattr(seeds_module, "draw_seed", draw)
    return drawn


# --- without Stan -------------------------------------------------------------------------

def test_check_seed_takes_integers_in_range_and_draws_for_none(count_draws):
    assert sampling.check_seed(0) == 0 and sampling.check_seed(2 ** 31 - 1) == 2 ** 31 - 1
    assert type(sampling.check_seed(np.int64(7))) is int
    assert count_draws == []
    drawn = sampling.check_seed(None)
    assert count_draws == [drawn] and 0 <= drawn <= 2 ** 31 - 1
    for bad in (True, 1.5, "3", np.random.SeedSequence(1)):
        with pytest.raises(TypeError, match="seed must be an integer or None"):
            sampling.check_seed(bad)
    for bad in (-1, 2 ** 31):
        with pytest.raises(ValueError, match=r"seed must be in \[0, 2147483647\]"):
            sampling.check_seed(bad)


def test_streams_are_numpys_spawned_children():
    seeds = sampling.Seeds(12345)
    children = np.random.SeedSequence(12345).spawn(len(seeds_module.STREAMS))
    for index, stream in enumerate(seeds_module.STREAMS[1:], start=1):
        np.testing.assert_array_equal(seeds.sequence(stream).generate_state(4),
                                      children[index].generate_state(4))
        np.testing.assert_array_equal(seeds.generator(stream).random(3),
                                      np.random.default_rng(children[index]).random(3))
    stan = [seeds.stan_seed(k) for k in (1, 2, 3)]
    assert stan == spawned_stan_seeds(12345, 3)
    assert len(set(stan)) == 3 and all(0 <= s <= 2 ** 31 - 1 for s in stan)
    # each call starts its stream afresh: a retry afresh gets the same initial values
    assert seeds.generator("initial_values").random() == seeds.generator("initial_values").random()
    with pytest.raises(ValueError, match="unknown random stream"):
        seeds.sequence("stan")
    with pytest.raises(ValueError, match="numbered from 1"):
        seeds.stan_seed(0)


# --- with Stan ------------------------------------------------------------------------------

@pytest.mark.stan
def test_attempts_get_distinct_recorded_seeds_spawned_from_the_users(scores, count_draws):
    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # without the quadrature, which would answer in place of the second retry
            return bc.hierarchical(scores, "a", "b", seed=3, baselines=False,
                                   quadrature=False, **STARVED)

    result = fit()
    attempts = result.settings["attempts"]
    assert len(attempts) == 3
    expected = spawned_stan_seeds(3, 3)
    assert [a["stan_seed"] for a in attempts] == expected
    assert result.settings["stan_seeds"] == tuple(expected) and len(set(expected)) == 3
    assert result.settings["seed"] == 3                      # the user's, as given
    # the last attempt ran Stan with its own seed (the seed Stan's engine recorded)
    assert result.idata.posterior.attrs["seed"] == expected[-1]
    document = json.loads(json.dumps(result.to_dict()))
    assert document["settings"]["seed"] == 3
    assert document["settings"]["stan_seeds"] == expected
    assert [a["stan_seed"] for a in document["attempts"]] == expected
    # same seed, same draws and numbers, retries included; no seed drawn for a given one
    again = fit()
    np.testing.assert_array_equal(again.idata.posterior["delta"].values,
                                  result.idata.posterior["delta"].values)
    np.testing.assert_array_equal(again.next_dataset.probabilities,
                                  result.next_dataset.probabilities)
    assert count_draws == []


@pytest.mark.stan
def test_a_fit_redone_step_by_step_from_the_streams(scores, stan_backend):
    """Stan's seed, the initial values, the post-draws and the baselines each from the
    stream the module notes name: the fit redone from the public pieces gives its numbers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, "a", "b", seed=8, retries=0, backend=stan_backend,
                                 **STARVED)
        data, scale = prepare(scores, "a", "b", PRIORS["paper"])
    (stan_seed,) = spawned_stan_seeds(8, 1)
    children = np.random.SeedSequence(8).spawn(4)
    fit = sampling.sample("hierarchical", data, backend=stan_backend, seed=stan_seed,
                          inits=initial_values(data, 2, np.random.default_rng(children[1])),
                          adapt_delta=0.95, max_treedepth=10, **STARVED)
    np.testing.assert_array_equal(result.idata.posterior["sigma0"].values,
                                  (fit.posterior["sigma0"] * scale).values)
    user = to_user_scale(fit, data, scale, scores.dataset_names,
                         np.random.default_rng(children[2]), False, PRIORS["paper"])
    np.testing.assert_array_equal(result.idata.posterior["delta"].values,
                                  user.posterior["delta"].values)
    baselines = bc.baselines(scores, "a", "b", rope=0.01, seed=children[3])
    np.testing.assert_array_equal(result.baselines.bayesian_signed_rank.mean_masses,
                                  baselines.bayesian_signed_rank.mean_masses)
    np.testing.assert_array_equal(result.baselines.bayesian_sign.mean_masses,
                                  baselines.bayesian_sign.mean_masses)


@pytest.mark.stan
def test_compare_all_draws_one_seed_for_every_pair(three_algorithms, count_draws):
    three = three_algorithms
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drawn = bc.compare_all(three, rope=0.01, retries=0, baselines=False, **STARVED)
        assert count_draws == [drawn.seed]                 # once, for the three pairs
        assert drawn.table.seed.tolist() == [drawn.seed] * 3
        given = bc.compare_all(three, rope=0.01, seed=drawn.seed, retries=0, baselines=False,
                               **STARVED)
    assert count_draws == [drawn.seed]                     # none for a given seed
    for pair, fit in drawn.results.items():
        assert fit.settings["stan_seeds"] == tuple(spawned_stan_seeds(drawn.seed, 1))
        np.testing.assert_array_equal(fit.idata.posterior["delta0"].values,
                                      given.results[pair].idata.posterior["delta0"].values)
