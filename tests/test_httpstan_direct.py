"""The pystan backend's fast routes against pystan's public route: the same draws, names, shapes.

Every test runs for both :mod:`bayescomp._httpstan_direct` and :mod:`bayescomp._stan_native`.
"""
import asyncio
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from bayescomp import backends

pytestmark = pytest.mark.stan

CORRELATED_DATA = {"n": 10, "rho": 0.1, "mean_diff": 0.01, "ss": 0.004}
# A matrix, a Cholesky factor, an array of vectors, an int and an empty generated quantity,
# and log_lik (ArviZ moves it to a log_likelihood group). The model block prints in the tails
# of mu, at some of the sampler's gradients.
MATRIX_CODE = """
data { int<lower=1> N; vector[N] y; }
parameters { real mu; real<lower=0> sigma; matrix[2, 3] B; cholesky_factor_corr[3] L; }
transformed parameters { array[2] vector[3] t; for (i in 1:2) t[i] = B[i]' * i; }
model { y ~ normal(mu, sigma); to_vector(B) ~ normal(0, 1); L ~ lkj_corr_cholesky(2);
        mu ~ normal(0, 10); sigma ~ normal(0, 5);
        if (abs(mu) > 1.5) print("mu in the tail: ", mu); }
generated quantities {
  vector[N] log_lik;
  int above = mu > 0;
  array[0] real nothing;
  for (n in 1:N) log_lik[n] = normal_lpdf(y[n] | mu, sigma);
}
"""
MATRIX_DATA = {"N": 5, "y": [0.1, -0.3, 0.5, 1.2, 0.0]}
SMALL = dict(chains=3, iter_warmup=150, iter_sampling=100, adapt_delta=0.8, max_treedepth=10)


@pytest.fixture(scope="module", params=["direct", "native"])
def direct(request, pystan_backend):
    """sample_direct or sample_native, with both programs compiled (in a temporary directory)."""
    from bayescomp._httpstan_direct import sample_direct
    from bayescomp._stan_native import sample_native

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as cwd:
        os.chdir(cwd)
        try:
            for program in ("correlated", MATRIX_CODE):
                backends._pystan_compile(*backends._program(program), show_progress=False)
        finally:
            os.chdir(here)
    return sample_direct if request.param == "direct" else sample_native


def run(function, program, data, **settings):
    name, code = backends._program(program)
    settings = {**SMALL, "inits": None, "show_progress": False, **settings}
    return function(name, code, backends._to_stan_data(data), **settings)


def assert_same(expected, actual):
    assert expected.groups() == actual.groups()
    for group in expected.groups():
        assert list(expected[group].data_vars) == list(actual[group].data_vars), group
        for var in expected[group].data_vars:
            want, got = expected[group][var], actual[group][var]
            assert (got.dims, got.shape, got.dtype) == (want.dims, want.shape, want.dtype), var
            np.testing.assert_array_equal(got.values, want.values, err_msg=var)
        assert list(expected[group].coords) == list(actual[group].coords), group
        for name, coord in expected[group].coords.items():
            np.testing.assert_array_equal(actual[group].coords[name].values, coord.values)
            assert actual[group].coords[name].dtype == coord.dtype, (group, name)
        for key, value in expected[group].attrs.items():
            if key != "created_at":
                assert actual[group].attrs[key] == value, (group, key)


@pytest.mark.parametrize("inits", [None, 0.5, "list"])
def test_correlated_draws_equal_pystans(direct, inits):
    if inits == "list":
        inits = [{"mu": 0.01, "sigma": 0.02 * (c + 1)} for c in range(SMALL["chains"])]
    expected, version = run(backends._sample_pystan_public, "correlated", CORRELATED_DATA, seed=21, inits=inits)
    actual, direct_version = run(direct, "correlated", CORRELATED_DATA, seed=21, inits=inits)
    assert_same(expected, actual)
    assert direct_version == version
    assert set(actual.posterior.data_vars) == {"mu", "sigma"}
    attrs = dict(backend="pystan", stan_version=version, seed=21)
    standardized = backends._standardize(actual, attrs)  # what backends.sample would return
    assert all(name in standardized.sample_stats for name in backends.SAMPLE_STATS)
    assert standardized.sample_stats["diverging"].dtype == bool


def test_matrix_parameters_and_log_lik_equal_pystans(direct):
    expected, _ = run(backends._sample_pystan_public, MATRIX_CODE, MATRIX_DATA, seed=8)
    actual, _ = run(direct, MATRIX_CODE, MATRIX_DATA, seed=8)
    assert_same(expected, actual)
    posterior = actual.posterior
    assert set(posterior.data_vars) == {"mu", "sigma", "B", "L", "t", "above"}
    assert posterior["B"].shape == (3, 100, 2, 3) and posterior["L"].shape == (3, 100, 3, 3)
    assert posterior["t"].shape == (3, 100, 2, 3)
    assert posterior["above"].dtype == np.int64
    # Stan's column-major names mapped to the right cells: L is lower triangular, t[i] = i B[i]
    assert np.all(np.triu(posterior["L"].values, 1) == 0)
    np.testing.assert_allclose(posterior["t"].values[:, :, 1], 2 * posterior["B"].values[:, :, 1])
    assert actual.log_likelihood["log_lik"].shape == (3, 100, 5)
    assert "log_lik" not in posterior


def test_other_seed_other_draws(direct):
    first, _ = run(direct, "correlated", CORRELATED_DATA, seed=1)
    other, _ = run(direct, "correlated", CORRELATED_DATA, seed=2)
    assert not np.array_equal(first.posterior["mu"], other.posterior["mu"])


def test_initialization_failure_is_a_readable_error(direct):
    bad = [{"mu": 0.0, "sigma": -1.0}] * SMALL["chains"]
    with pytest.raises(RuntimeError, match=r"(?s)failed on chain \d.*Lower bounded variable is -1.*Initialization failed"):
        run(direct, "correlated", CORRELATED_DATA, seed=1, inits=bad)
    # data under which no initial value has a finite density
    with pytest.raises(RuntimeError, match=r"(?s)negative infinity.*failed after 100 attempts"):
        run(direct, MATRIX_CODE, dict(MATRIX_DATA, y=[float("inf")] * 5), seed=1)
    # the abandoned chains freed httpstan's workers: sampling still works
    idata, _ = run(direct, "correlated", CORRELATED_DATA, seed=1)
    assert idata.posterior["mu"].shape == (3, 100)


def test_invalid_data_is_refused(direct):
    with pytest.raises(RuntimeError, match="rho must be < 1"):
        run(direct, "correlated", dict(CORRELATED_DATA, rho=1.0), seed=1)
    with pytest.raises(RuntimeError, match="variable does not exist.*variable name=rho"):
        run(direct, "correlated", {"n": 10}, seed=1)
    with pytest.raises(RuntimeError, match=r"2\*\*31"):
        run(direct, "correlated", CORRELATED_DATA, seed=2**31)


def test_works_inside_a_running_event_loop(direct):
    async def main():
        asyncio.get_running_loop()  # as in Jupyter
        return run(direct, "correlated", CORRELATED_DATA, seed=9)

    inside, _ = asyncio.run(main())
    outside, _ = run(direct, "correlated", CORRELATED_DATA, seed=9)
    np.testing.assert_array_equal(inside.posterior["mu"], outside.posterior["mu"])


def test_concurrent_calls_from_threads(direct):
    reference = {seed: run(direct, "correlated", CORRELATED_DATA, seed=seed)[0] for seed in (3, 4)}
    matrix = run(direct, MATRIX_CODE, MATRIX_DATA, seed=3)[0]
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(run, direct, "correlated", CORRELATED_DATA, seed=seed) for seed in (3, 4)]
        futures.append(pool.submit(run, direct, MATRIX_CODE, MATRIX_DATA, seed=3))
        results = [future.result()[0] for future in futures]
    for seed, idata in zip((3, 4), results):
        np.testing.assert_array_equal(idata.posterior["mu"], reference[seed].posterior["mu"])
    np.testing.assert_array_equal(results[2].posterior["B"], matrix.posterior["B"])


def fits_in_httpstan_cache():
    import httpstan.cache
    import httpstan.models

    found = []
    for program in ("correlated", MATRIX_CODE):
        name = httpstan.models.calculate_model_name(backends._program(program)[1])
        fits = httpstan.cache.model_directory(name) / "fits"
        found += sorted(fits.iterdir()) if fits.is_dir() else []
    return found


def test_quiet_and_leaves_nothing_behind(direct, tmp_path, monkeypatch, capfd):
    fits = fits_in_httpstan_cache()
    private_tmp = tempfile.mkdtemp(prefix="bc-")  # short: socket paths must fit in 108 bytes
    try:
        with monkeypatch.context() as patch:
            patch.setattr(tempfile, "tempdir", private_tmp)  # where the socket directories go
            patch.chdir(tmp_path)
            run(direct, "correlated", CORRELATED_DATA, seed=11)
            with pytest.raises(RuntimeError):
                run(direct, "correlated", CORRELATED_DATA, seed=11, inits=[{"sigma": -1.0}] * SMALL["chains"])
        assert os.listdir(private_tmp) == []
    finally:
        shutil.rmtree(private_tmp, ignore_errors=True)
    assert list(tmp_path.iterdir()) == []
    assert fits_in_httpstan_cache() == fits
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_show_progress_echoes_stans_messages(direct, capfd):
    run(direct, "correlated", CORRELATED_DATA, seed=12, show_progress=True)
    _, err = capfd.readouterr()
    assert "chain 1: Iteration: 250 / 250 [100%]  (Sampling)" in err
    assert "chain 3: Iteration:" in err


def test_the_programs_messages_reach_the_user_as_from_httpstans_driver(direct, capfd):
    """The native route computes gradients with its own stan::model::gradient (one message
    stream per thread): the program's print() lines still arrive, chain by chain the same as
    from httpstan's compiled driver."""
    from bayescomp._httpstan_direct import sample_direct

    def printed(function):
        capfd.readouterr()
        run(function, MATRIX_CODE, MATRIX_DATA, seed=8, show_progress=True)
        by_chain = {}
        for line in capfd.readouterr().err.splitlines():
            if "mu in the tail" in line:
                by_chain.setdefault(line.split(":")[0], []).append(line)
        return by_chain

    lines = printed(direct)
    assert len(lines) == SMALL["chains"] and min(map(len, lines.values())) > 10
    assert lines == printed(sample_direct)


def test_records_stans_own_time_per_chain(direct):
    import time

    start = time.perf_counter()
    idata, _ = run(direct, "correlated", CORRELATED_DATA, seed=5)
    wall = time.perf_counter() - start
    seconds = idata.posterior.attrs["stan_seconds"]
    # Stan's clock of each chain's warm-up and sampling lies within the call's wall time
    assert len(seconds) == SMALL["chains"]
    assert all(0 < t <= wall for t in seconds), (seconds, wall)
