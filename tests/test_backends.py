"""The Stan backends and stan/correlated.stan.

Stan tests reuse compiled models (httpstan's per-user cache), so only the first run of the
suite on a machine pays the ~1 minute compile. Tolerances are a few Monte Carlo standard
errors, computed from the effective sample size, and the seeds are fixed.
"""
import asyncio
import contextlib
import io
import os
import re

import arviz as az
import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayescomp import backends
from bayescomp.likelihood import compound_symmetric_logpdf

Z = 4.0  # standard errors allowed: a false alarm per check is ~6e-5 for a normal estimate


def suff_stats(x):
    x = np.asarray(x, dtype=float)
    return len(x), x.mean(), float(((x - x.mean()) ** 2).sum())


def correlated_cov(n, rho, sigma):
    return sigma**2 * ((1 - rho) * np.eye(n) + rho * np.ones((n, n)))


def closed_form_posterior(n, m, ss, rho):
    """Corani & Benavoli's Student-t posterior of mu."""
    scale = np.sqrt((1 / n + rho / (1 - rho)) * ss / (n - 1))
    return stats.t(df=n - 1, loc=m, scale=scale)


CASES = [(2, 0.0), (5, 0.1), (30, 0.5)]  # ragged n, distinct rho


# --- the model's algebra, no Stan needed ---------------------------------------------------

@pytest.mark.parametrize("n, rho", CASES)
def test_sufficient_statistics_loglik_is_the_mvn_logpdf(n, rho):
    rng = np.random.default_rng(n)
    for _ in range(5):
        mu, sigma = rng.normal(0, 0.1), rng.uniform(0.01, 2)
        x = rng.multivariate_normal(np.full(n, mu + rng.normal(0, sigma)), correlated_cov(n, rho, sigma))
        expected = stats.multivariate_normal(np.full(n, mu), correlated_cov(n, rho, sigma)).logpdf(x)
        n_x, m, ss = suff_stats(x)
        assert compound_symmetric_logpdf(m, ss, n_x, rho, mu, sigma) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("n", [2, 3, 10, 100])
@pytest.mark.parametrize("rho", [0.0, 0.1, 0.5, 0.9])
def test_t_scale_identity(n, rho):
    assert (1 + (n - 1) * rho) / (n * (1 - rho)) == pytest.approx(1 / n + rho / (1 - rho), rel=1e-12)


def test_closed_form_t_is_the_marginal_of_the_joint_posterior():
    """Integrate sigma out of likelihood x p(sigma) ∝ 1/sigma numerically: the t comes back."""
    from scipy.integrate import quad

    n, rho = 7, 0.2
    n, m, ss = suff_stats(np.random.default_rng(0).normal(0.01, 0.03, n))
    posterior = closed_form_posterior(n, m, ss, rho)
    mus = posterior.ppf([0.05, 0.3, 0.5, 0.8, 0.99])

    def unnormalised(mu):  # integrand in log sigma, so that its Jacobian cancels the 1/sigma
        return quad(lambda t: np.exp(compound_symmetric_logpdf(m, ss, n, rho, mu, np.exp(t)) + 60), -12, 3)[0]

    ratios = [unnormalised(mu) / posterior.pdf(mu) for mu in mus]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-6)


# --- cheap checks of the interface ---------------------------------------------------------

def test_stan_file_finds_the_programs():
    path = backends.stan_file("correlated")
    assert path.name == "correlated.stan" and path.is_file()
    assert "parameters" in path.read_text()
    with pytest.raises(FileNotFoundError, match="no_such_program.stan"):
        backends.stan_file("no_such_program")


def test_program_is_a_name_or_code():
    name, code = backends._program("correlated")
    assert name == "correlated"
    # the shipped program's own text, with its #include of the shared likelihood inlined
    assert "#include" not in code and "cs_normal_suff_lpdf" in code
    assert code.startswith(backends.stan_file("correlated").read_text().split("functions {")[0])
    code = "parameters { real y; } model { y ~ std_normal(); }"
    assert backends._program(code) == ("model", code)


def test_includes_are_inlined_from_the_stan_directory(tmp_path, monkeypatch):
    (tmp_path / "helpers.stanfunctions").write_text("real twice(real x) { return 2 * x; }\n#include <inner.stanfunctions>")
    (tmp_path / "inner.stanfunctions").write_text("real thrice(real x) { return 3 * x; }")
    (tmp_path / "loop.stanfunctions").write_text('#include "loop.stanfunctions"')
    monkeypatch.setattr(backends, "_find_stan", lambda name: tmp_path / name)
    code = backends._expand_includes("functions {\n  #include helpers.stanfunctions\n}\n// #include not.this\n")
    assert code == ("functions {\nreal twice(real x) { return 2 * x; }\n"
                    "real thrice(real x) { return 3 * x; }\n}\n// #include not.this\n")
    with pytest.raises(ValueError, match="circular"):
        backends._expand_includes("#include loop.stanfunctions")


def test_resolve_backend(monkeypatch):
    assert backends.resolve_backend("pystan") == "pystan"
    assert backends.resolve_backend("cmdstanpy") == "cmdstanpy"
    with pytest.raises(ValueError, match="unknown Stan backend 'stam'"):
        backends.resolve_backend("stam")

    def no_cmdstan():
        raise RuntimeError("No CmdStan installation found")

    monkeypatch.setattr(backends, "_cmdstan_home", no_cmdstan)
    monkeypatch.setattr(backends, "_pystan_importable", lambda: True)
    assert backends.resolve_backend() == "pystan"
    monkeypatch.setattr(backends, "_pystan_importable", lambda: False)
    with pytest.raises(RuntimeError, match="pip install pystan") as error:
        backends.resolve_backend("auto")
    assert "install_cmdstan" in str(error.value)
    monkeypatch.setattr(backends, "_cmdstan_home", lambda: "/opt/cmdstan-2.35.0")
    assert backends.resolve_backend() == "cmdstanpy"


def test_stan_data_keeps_ints_as_ints():
    data = backends._to_stan_data(
        {"n": np.int64(5), "k": np.array([1, 2]), "x": np.float32(0.5), "flag": True, "y": [[1.0, 2.0]]}
    )
    assert data == {"n": 5, "k": [1, 2], "x": 0.5, "flag": 1, "y": [[1.0, 2.0]]}
    assert type(data["n"]) is int and type(data["k"][0]) is int and type(data["x"]) is float
    with pytest.raises(TypeError, match="'s' must be numeric"):
        backends._to_stan_data({"s": "text"})


def test_standardize_renames_stan_stat_names_and_records_attrs():
    stan_names = {"lp__": 1.0, "accept_stat__": 0.9, "stepsize__": 0.5, "treedepth__": 2,
                  "n_leapfrog__": 3, "divergent__": False, "energy__": 2.0}
    idata = az.from_dict(posterior={"mu": np.zeros((2, 5))},
                         sample_stats={k: np.full((2, 5), v) for k, v in stan_names.items()})
    idata = backends._standardize(idata, {"backend": "cmdstanpy", "seed": 1})
    assert set(idata.sample_stats.data_vars) == set(backends.SAMPLE_STATS)
    assert idata.attrs["seed"] == idata.posterior.attrs["seed"] == idata.sample_stats.attrs["seed"] == 1
    del idata.sample_stats["energy"]
    with pytest.raises(RuntimeError, match="energy"):
        backends._standardize(idata, {"backend": "cmdstanpy"})


def test_explicit_cmdstanpy_without_cmdstan_says_how_to_install(monkeypatch):
    def no_cmdstan():
        raise RuntimeError("No CmdStan installation found")

    monkeypatch.setattr(backends, "_cmdstan_home", no_cmdstan)
    with pytest.raises(RuntimeError, match="CmdStan not installed.*install_cmdstan"):
        backends.sample("correlated", DATA, backend="cmdstanpy", seed=1)


def test_sample_checks_its_arguments():
    data = {"n": 5, "rho": 0.2, "mean_diff": 0.0, "ss": 1.0}
    with pytest.raises(ValueError, match="seed"):
        backends.sample("correlated", data, backend="pystan", seed=-1)
    with pytest.raises(ValueError, match="3 entries for 2 chains"):
        backends.sample("correlated", data, backend="pystan", chains=2, inits=[{"mu": 0}] * 3)


# --- Stan ----------------------------------------------------------------------------------

DATA = {"n": 10, "rho": 0.1, "mean_diff": 0.004, "ss": 9 * 0.01**2 / (1 / 10 + 0.1 / 0.9)}
SMALL = dict(chains=2, iter_warmup=200, iter_sampling=200)


@pytest.fixture(scope="module")
def compiled_in(tmp_path_factory, pystan_backend):
    """Compile correlated.stan (if not cached yet) from an empty working directory, returned."""
    cwd = tmp_path_factory.mktemp("compile-cwd")
    here = os.getcwd()
    os.chdir(cwd)
    try:
        backends._pystan_compile(*backends._program("correlated"), show_progress=False)
    finally:
        os.chdir(here)
    return cwd


def fits_in_httpstan_cache():
    import httpstan.cache
    import httpstan.models

    code = backends._program("correlated")[1]
    fits = httpstan.cache.model_directory(httpstan.models.calculate_model_name(code)) / "fits"
    return sorted(fits.iterdir()) if fits.is_dir() else []


@pytest.mark.stan
@pytest.mark.parametrize("n, rho", CASES)
def test_stan_log_density_is_the_mvn_logpdf(compiled_in, n, rho):
    import stan

    rng = np.random.default_rng(10 + n)
    mu, sigma = 0.05, 0.3
    x = rng.multivariate_normal(np.full(n, mu), correlated_cov(n, rho, sigma))
    count, m, ss = suff_stats(x)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        model = stan.build(backends._program("correlated")[1],
                           data={"n": count, "rho": rho, "mean_diff": m, "ss": ss})
    loglik = stats.multivariate_normal(np.full(n, mu), correlated_cov(n, rho, sigma)).logpdf(x)
    unconstrained = [mu, np.log(sigma)]
    # Without the Jacobian: log-likelihood + log p(sigma) = ... - log(sigma).
    assert model.log_prob(unconstrained, adjust_transform=False) == pytest.approx(loglik - np.log(sigma), rel=1e-9)
    # With it, the density in (mu, log sigma) is flat: exactly the log-likelihood.
    assert model.log_prob(unconstrained, adjust_transform=True) == pytest.approx(loglik, rel=1e-9)


def check_against_closed_form(idata, data, rope=0.01):
    n, m, ss, rho = data["n"], data["mean_diff"], data["ss"], data["rho"]
    exact = closed_form_posterior(n, m, ss, rho)
    mu = idata.posterior["mu"]
    assert int(idata.sample_stats["diverging"].sum()) == 0
    assert float(az.rhat(idata, var_names=["mu"])["mu"]) < 1.01

    mcse_mean = float(az.mcse(idata, var_names=["mu"], method="mean")["mu"])
    mcse_sd = float(az.mcse(idata, var_names=["mu"], method="sd")["mu"])
    assert abs(float(mu.mean()) - exact.mean()) < Z * mcse_mean
    assert abs(float(mu.std()) - exact.std()) < Z * mcse_sd

    # The joint posterior too: S / ((1 - rho) sigma^2) ~ chi2(n - 1). This is what a wrong
    # prior on sigma shifts most (p(sigma) ∝ 1 would give chi2(n - 2)).
    q = xr.Dataset({"q": ss / ((1 - rho) * idata.posterior["sigma"] ** 2)})
    assert abs(float(q["q"].mean()) - (n - 1)) < Z * float(az.mcse(q, method="mean")["q"])
    assert abs(float(q["q"].std()) - np.sqrt(2 * (n - 1))) < Z * float(az.mcse(q, method="sd")["q"])

    regions = xr.Dataset({
        "left": (mu < -rope).astype(float),
        "rope": (abs(mu) <= rope).astype(float),
        "right": (mu > rope).astype(float),
    })
    expected = {"left": exact.cdf(-rope), "rope": exact.cdf(rope) - exact.cdf(-rope), "right": exact.sf(rope)}
    assert all(0.05 < p < 0.95 for p in expected.values())  # else the check is toothless
    mcse = az.mcse(regions, method="mean")
    for region, p in expected.items():
        assert abs(float(regions[region].mean()) - p) < Z * float(mcse[region]), region


@pytest.mark.stan
@pytest.mark.parametrize("n, rho, seed", [(10, 0.1, 1), (30, 0.5, 2)])
def test_pystan_matches_the_closed_form_t(compiled_in, n, rho, seed):
    # S chosen so that the t has scale 0.01: each ROPE region gets a sizeable probability.
    data = dict(n=n, rho=rho, mean_diff=0.004, ss=(n - 1) * 0.01**2 / (1 / n + rho / (1 - rho)))
    idata = backends.sample("correlated", data, backend="pystan", seed=seed, iter_warmup=500, iter_sampling=2500)
    check_against_closed_form(idata, data)


@pytest.mark.stan
def test_inference_data_names_and_attrs(compiled_in):
    idata = backends.sample("correlated", DATA, backend="pystan", seed=5, adapt_delta=0.9, max_treedepth=8, **SMALL)
    assert set(idata.posterior.data_vars) == {"mu", "sigma"}
    assert idata.posterior["mu"].dims == ("chain", "draw") and idata.posterior["mu"].shape == (2, 200)
    for name in backends.SAMPLE_STATS:
        assert idata.sample_stats[name].dims == ("chain", "draw"), name
    assert idata.sample_stats["diverging"].dtype == bool
    assert int(idata.sample_stats["tree_depth"].max()) <= 8
    expected = dict(backend="pystan", seed=5, adapt_delta=0.9, max_treedepth=8, **SMALL)
    for attrs in (idata.attrs, idata.posterior.attrs, idata.sample_stats.attrs):
        assert {key: attrs[key] for key in expected} == expected
        assert re.fullmatch(r"2\.\d+\.\d+", attrs["stan_version"])


@pytest.mark.stan
def test_seed_reproduces_draws_and_no_fit_is_cached(compiled_in):
    before = fits_in_httpstan_cache()
    first = backends.sample("correlated", DATA, backend="pystan", seed=123, **SMALL)
    again = backends.sample("correlated", DATA, backend="pystan", seed=123, **SMALL)
    other = backends.sample("correlated", DATA, backend="pystan", seed=124, **SMALL)
    for name in ("mu", "sigma"):
        np.testing.assert_array_equal(first.posterior[name], again.posterior[name])
        assert not np.array_equal(first.posterior[name], other.posterior[name])
    np.testing.assert_array_equal(first.sample_stats["lp"], again.sample_stats["lp"])
    # httpstan caches every seeded fit; the backend deletes them, so `again` really resampled.
    assert fits_in_httpstan_cache() == before

    drawn = backends.sample("correlated", DATA, backend="pystan", seed=None, **SMALL)
    seed = drawn.attrs["seed"]
    assert isinstance(seed, int)
    replay = backends.sample("correlated", DATA, backend="pystan", seed=seed, **SMALL)
    np.testing.assert_array_equal(drawn.posterior["mu"], replay.posterior["mu"])


@pytest.mark.stan
def test_inits(compiled_in):
    idata = backends.sample("correlated", DATA, backend="pystan", seed=7, inits={"mu": 0.0, "sigma": 0.02}, **SMALL)
    assert idata.posterior["mu"].shape == (2, 200)
    idata = backends.sample("correlated", DATA, backend="pystan", seed=7, inits=0.5, **SMALL)
    assert idata.posterior["mu"].shape == (2, 200)


@pytest.mark.stan
def test_works_inside_a_running_event_loop(compiled_in):
    async def main():
        asyncio.get_running_loop()  # as in Jupyter
        return backends.sample("correlated", DATA, backend="pystan", seed=9, **SMALL)

    idata = asyncio.run(main())
    direct = backends.sample("correlated", DATA, backend="pystan", seed=9, **SMALL)
    np.testing.assert_array_equal(idata.posterior["mu"], direct.posterior["mu"])


@pytest.mark.stan
def test_quiet_and_nothing_written_to_cwd(compiled_in, tmp_path, monkeypatch, capfd):
    assert list(compiled_in.iterdir()) == []  # where the (first) compile ran
    monkeypatch.chdir(tmp_path)
    backends.sample("correlated", DATA, backend="pystan", seed=11, **SMALL)
    assert list(tmp_path.iterdir()) == []
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.stan
def test_invalid_data_is_refused(compiled_in):
    with pytest.raises(RuntimeError, match="rho must be < 1"):
        backends.sample("correlated", dict(DATA, rho=1.0), backend="pystan", seed=1, **SMALL)
    with pytest.raises(RuntimeError, match="ss must be > 0"):
        backends.sample("correlated", dict(DATA, ss=0.0), backend="pystan", seed=1, **SMALL)


# --- cmdstanpy: only where CmdStan is installed ----------------------------------------------

@pytest.mark.stan
def test_cmdstanpy_matches_the_closed_form_and_pystan(cmdstanpy_backend, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = dict(DATA)
    settings = dict(seed=3, iter_warmup=500, iter_sampling=2500)
    cmd = backends.sample("correlated", data, backend="cmdstanpy", **settings)
    assert list(tmp_path.iterdir()) == []
    check_against_closed_form(cmd, data)
    assert cmd.attrs["backend"] == "cmdstanpy"
    assert set(backends.SAMPLE_STATS) <= set(cmd.sample_stats.data_vars)
    again = backends.sample("correlated", data, backend="cmdstanpy", **settings)
    np.testing.assert_array_equal(cmd.posterior["mu"], again.posterior["mu"])

    if backends._pystan_importable():
        py = backends.sample("correlated", data, backend="pystan", **settings)
        for method, statistic in (("mean", np.mean), ("sd", np.std)):
            se = np.hypot(float(az.mcse(cmd, var_names=["mu"], method=method)["mu"]),
                          float(az.mcse(py, var_names=["mu"], method=method)["mu"]))
            assert abs(statistic(cmd.posterior["mu"].values) - statistic(py.posterior["mu"].values)) < Z * se
