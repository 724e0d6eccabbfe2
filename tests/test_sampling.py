"""The sampling layer (bayescomp.sampling) and stan/correlated.stan, on every engine and route.

Every Stan test runs for each route this machine has: the pystan engine's native and public
routes, and the cmdstanpy engine where CmdStan is installed. They check known answers (the
closed-form Student-t posterior, scipy's densities) and each other (the same seed gives the
same draws on both pystan routes, and to CmdStan's CSV precision on cmdstanpy). Compiled
programs are reused from the per-user caches, so only a machine's first run pays the
compiles. Tolerances are a few Monte Carlo standard errors.
"""
import asyncio
import contextlib
import io
import re
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import arviz as az
import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayescomp import sampling
from bayescomp.sampling import Draws, EngineWarning, inference_data
from bayescomp.models.likelihood import compound_symmetric_logpdf

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


# --- the interface, no Stan needed ---------------------------------------------------------

def test_stan_file_finds_the_programs():
    path = sampling.stan_file("correlated")
    assert path.name == "correlated.stan" and path.is_file()
    assert "parameters" in path.read_text()
    with pytest.raises(FileNotFoundError, match="no_such_program.stan"):
        sampling.stan_file("no_such_program")


def test_program_code_is_a_name_or_code():
    name, code = sampling.program_code("correlated")
    assert name == "correlated"
    # the shipped program's own text, with its #include of the shared likelihood inlined
    assert "#include" not in code and "cs_normal_suff_lpdf" in code
    assert code.startswith(sampling.stan_file("correlated").read_text().split("functions {")[0])
    code = "parameters { real y; } model { y ~ std_normal(); }"
    assert sampling.program_code(code) == ("model", code)


def test_resolve_backend(monkeypatch):
    assert sampling.resolve_backend("pystan") == "pystan"
    assert sampling.resolve_backend("cmdstanpy") == "cmdstanpy"
    with pytest.raises(ValueError, match="unknown Stan backend 'stam'"):
        sampling.resolve_backend("stam")
    cmdstan, pystan = sampling.ENGINES["cmdstanpy"], sampling.ENGINES["pystan"]
    monkeypatch.setattr(cmdstan, "unavailable", lambda: "CmdStan not installed: install_cmdstan")
    monkeypatch.setattr(pystan, "unavailable", lambda: None)
    assert sampling.resolve_backend() == "pystan"
    monkeypatch.setattr(pystan, "unavailable", lambda: "pystan is not importable: pip install pystan")
    with pytest.raises(RuntimeError, match="pip install pystan") as error:
        sampling.resolve_backend("auto")
    assert "install_cmdstan" in str(error.value)
    monkeypatch.setattr(cmdstan, "unavailable", lambda: None)
    assert sampling.resolve_backend() == "cmdstanpy"


@pytest.fixture
def fake_cmdstan(tmp_path, monkeypatch):
    """A directory cmdstanpy accepts as CmdStan (it asks only for a makefile), named by
    $CMDSTAN, with pystan reported available."""
    home = tmp_path / "cmdstan-9.9.9"
    home.mkdir()
    (home / "makefile").write_text("CMDSTAN_VERSION := 9.9.9\n")
    monkeypatch.setenv("CMDSTAN", str(home))
    monkeypatch.setattr(sampling.ENGINES["pystan"], "unavailable", lambda: None)
    return home


def test_a_cmdstan_still_being_built_is_never_used(fake_cmdstan):
    import fcntl

    cmdstan = sampling.ENGINES["cmdstanpy"]
    assert cmdstan.unavailable() is None and sampling.resolve_backend() == "cmdstanpy"
    lock = fake_cmdstan.with_name("cmdstan-9.9.9.lock")
    with open(lock, "w") as held:   # as the builder's `exec 9>"$DEST.lock"; flock 9`
        fcntl.flock(held, fcntl.LOCK_EX)
        assert cmdstan.unavailable() == (
            f"the CmdStan in {fake_cmdstan} is unfinished: it is still being built (wait until "
            f"the build finishes); {lock} is there and {fake_cmdstan}/.bayescomp-built is not")
        assert sampling.resolve_backend("auto") == "pystan"
        with pytest.raises(RuntimeError, match=r"still being built .*; or choose "
                           r"backend='pystan'$"):
            sampling.sample("correlated", {"n": 2, "rho": 0.1, "x": [0.1, 0.2]},
                            backend="cmdstanpy")
    # the builder was killed: its lock file stays, nobody holds it, no end marker
    assert "is unfinished: its build was interrupted (run the build again)" in \
        cmdstan.unavailable()
    assert sampling.resolve_backend("auto") == "pystan"
    (fake_cmdstan / ".bayescomp-built").touch()   # the builder's last step
    assert cmdstan.unavailable() is None and sampling.resolve_backend() == "cmdstanpy"


def test_sample_checks_its_arguments():
    data = {"n": 5, "rho": 0.2, "mean_diff": 0.0, "ss": 1.0}
    with pytest.raises(ValueError, match="seed"):
        sampling.sample("correlated", data, backend="pystan", seed=-1)
    with pytest.raises(ValueError, match="3 entries for 2 chains"):
        sampling.sample("correlated", data, backend="pystan", chains=2, inits=[{"mu": 0}] * 3)
    with pytest.raises(ValueError, match="no route 'direct'.*'native' or 'public'"):
        sampling.sample("correlated", data, backend="pystan", route="direct")
    with pytest.raises(TypeError, match="'s' must be numeric"):
        sampling.sample("correlated", dict(data, s="text"), backend="pystan")


def test_inference_data_unflattens_stans_column_major_names():
    # B[i, j] = 10 i + j, Stan's column-major order (the first index varies fastest)
    b = [(f"B.{i}.{j}", 10 * i + j) for j in (1, 2, 3) for i in (1, 2)]
    stats = ["lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__",
             "energy__"]
    columns = stats + ["mu"] + [name for name, _ in b] + ["k", "log_lik.1", "log_lik.2"]
    row = [-1.5, 0.9, 0.3, 2, 3, 1, 4.0, 0.25] + [value for _, value in b] + [7, -0.1, -0.2]
    values = np.tile(np.array(row, dtype=float), (2, 5, 1))   # 2 chains, 5 draws
    code = "generated quantities { int k = 7; }"
    idata = inference_data.build(Draws(columns, values, "test", "v", "2.0.0"), code, {"seed": 3})
    assert idata.posterior["B"].shape == (2, 5, 2, 3)
    np.testing.assert_array_equal(idata.posterior["B"].values[0, 0], [[11, 12, 13], [21, 22, 23]])
    assert idata.posterior["k"].dtype == np.int64 and idata.posterior["mu"].dims == ("chain", "draw")
    assert idata.log_likelihood["log_lik"].shape == (2, 5, 2) and "log_lik" not in idata.posterior
    stats_ = idata.sample_stats
    assert set(stats_.data_vars) == set(sampling.SAMPLE_STATS)
    assert stats_["diverging"].dtype == bool and stats_["tree_depth"].dtype == np.int64
    assert float(stats_["lp"][0, 0]) == -1.5 and float(stats_["acceptance_rate"][0, 0]) == 0.9
    assert idata.attrs["seed"] == idata.posterior.attrs["seed"] == stats_.attrs["seed"] == 3
    with pytest.raises(RuntimeError, match="energy__"):
        inference_data.build(Draws(columns[:6] + columns[7:], values[:, :, [*range(6), *range(7, 17)]],
                                   "test", "v", "2.0.0"), code, {})


# --- Stan, on every engine and route -------------------------------------------------------

DATA = {"n": 10, "rho": 0.1, "mean_diff": 0.004, "ss": 9 * 0.01**2 / (1 / 10 + 0.1 / 0.9)}
SMALL = dict(chains=2, iter_warmup=200, iter_sampling=200)
# A matrix, a Cholesky factor, an array of vectors, an int and an empty generated quantity,
# and log_lik (ArviZ's rule moves it to a log_likelihood group).
MATRIX_CODE = """
data { int<lower=1> N; vector[N] y; }
parameters { real mu; real<lower=0> sigma; matrix[2, 3] B; cholesky_factor_corr[3] L; }
transformed parameters { array[2] vector[3] t; for (i in 1:2) t[i] = B[i]' * i; }
model { y ~ normal(mu, sigma); to_vector(B) ~ normal(0, 1); L ~ lkj_corr_cholesky(2);
        mu ~ normal(0, 10); sigma ~ normal(0, 5); }
generated quantities {
  vector[N] log_lik;
  int above = mu > 0;
  array[0] real nothing;
  for (n in 1:N) log_lik[n] = normal_lpdf(y[n] | mu, sigma);
}
"""
MATRIX_DATA = {"N": 5, "y": [0.1, -0.3, 0.5, 1.2, 0.0]}


@pytest.fixture(scope="module", params=["pystan:native", "pystan:public", "cmdstanpy:cmdstan"])
def engine(request):
    """(backend, route), skipping an engine this machine lacks; programs compiled first."""
    backend, route = request.param.split(":")
    request.getfixturevalue(f"{backend}_backend")   # skips, saying why, without it
    with warnings.catch_warnings():
        warnings.simplefilter("error", EngineWarning)  # the route asked for, not a fallback
        for program in ("correlated", MATRIX_CODE):
            assert sampling.engine(backend).compile(*sampling.program_code(program), route=route) == route
    return backend, route


def fit(engine, program="correlated", data=DATA, **settings):
    backend, route = engine
    return sampling.sample(program, data, backend=backend, route=route, **{**SMALL, **settings})


@pytest.mark.stan
@pytest.mark.parametrize("n, rho", CASES)
def test_stan_log_density_is_the_mvn_logpdf(pystan_backend, n, rho):
    import stan

    rng = np.random.default_rng(10 + n)
    mu, sigma = 0.05, 0.3
    x = rng.multivariate_normal(np.full(n, mu), correlated_cov(n, rho, sigma))
    count, m, ss = suff_stats(x)
    name, code = sampling.program_code("correlated")
    sampling.engine("pystan").compile(name, code, route="public")  # built outside ./build
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        model = stan.build(code, data={"n": count, "rho": rho, "mean_diff": m, "ss": ss})
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
def test_matches_the_closed_form_t(engine, n, rho, seed):
    # S chosen so that the t has scale 0.01: each ROPE region gets a sizeable probability.
    data = dict(n=n, rho=rho, mean_diff=0.004, ss=(n - 1) * 0.01**2 / (1 / n + rho / (1 - rho)))
    idata = fit(engine, data=data, seed=seed, chains=4, iter_warmup=500, iter_sampling=2500)
    check_against_closed_form(idata, data)


@pytest.mark.stan
def test_names_and_recorded_settings(engine):
    backend, route = engine
    idata = fit(engine, seed=5, adapt_delta=0.9, max_treedepth=8)
    assert set(idata.posterior.data_vars) == {"mu", "sigma"}
    assert idata.posterior["mu"].dims == ("chain", "draw") and idata.posterior["mu"].shape == (2, 200)
    for name in sampling.SAMPLE_STATS:
        assert idata.sample_stats[name].dims == ("chain", "draw"), name
    assert idata.sample_stats["diverging"].dtype == bool
    assert int(idata.sample_stats["tree_depth"].max()) <= 8
    expected = dict(backend=backend, route=route, seed=5, adapt_delta=0.9, max_treedepth=8, **SMALL)
    for attrs in (idata.attrs, idata.posterior.attrs, idata.sample_stats.attrs):
        assert {key: attrs[key] for key in expected} == expected
        assert re.fullmatch(r"2\.\d+\.\d+", attrs["stan_version"])
        assert attrs["engine_version"] == sampling.engine(backend).version()
        assert re.fullmatch(rf"{backend} \d+\.\d+\.\d+, (httpstan|CmdStan) \d+\.\d+\.\d+", attrs["engine_version"])


@pytest.mark.stan
def test_seed_reproduces_draws(engine):
    first, again, other = (fit(engine, seed=seed) for seed in (123, 123, 124))
    for name in ("mu", "sigma"):
        np.testing.assert_array_equal(first.posterior[name], again.posterior[name])
        assert not np.array_equal(first.posterior[name], other.posterior[name])
    np.testing.assert_array_equal(first.sample_stats["lp"], again.sample_stats["lp"])
    drawn = fit(engine, seed=None)
    seed = drawn.attrs["seed"]
    assert isinstance(seed, int)
    np.testing.assert_array_equal(drawn.posterior["mu"], fit(engine, seed=seed).posterior["mu"])


@pytest.mark.stan
def test_one_chain_is_the_first_of_two(engine):
    # cmdstanpy names a single chain's output file without a chain number: read all the same,
    # and the same draws as chain 1 of a two-chain run with that seed
    one, two = fit(engine, seed=11, chains=1), fit(engine, seed=11)
    assert one.posterior["mu"].shape == (1, 200)
    np.testing.assert_array_equal(one.posterior["mu"].values[0], two.posterior["mu"].values[0])


@pytest.mark.stan
def test_inits(engine):
    # inits far out in the tail: the first draws of warm-up are not kept, but the adapted
    # chains must still find the posterior (whose mean is 0.004)
    for inits in ({"mu": 0.0, "sigma": 0.02}, 0.5, [{"mu": 0.01, "sigma": 0.01 * c} for c in (1, 2)]):
        idata = fit(engine, seed=7, inits=inits)
        assert idata.posterior["mu"].shape == (2, 200)
        assert abs(float(idata.posterior["mu"].mean()) - 0.004) < 0.01


def test_both_engines_build_the_same_cpp(pystan_backend, cmdstanpy_backend, tmp_path):
    """The native route's C++ is what CmdStan's stanc writes with the package's flags
    (programs.STANC_FLAGS, --O1), comments and stanc's version aside: so the engines give
    the same draws for a seed; and the flags change the C++ (they are applied)."""
    import subprocess

    import cmdstanpy

    from bayescomp.sampling import _httpstan
    from bayescomp.sampling.programs import STANC_FLAGS

    def code_lines(cpp):   # the source's path in error locations, stanc's version and flags
        return [re.sub(r"'[^']*model\.stan'", "'model.stan'", line) for line in cpp.splitlines()
                if not line.lstrip().startswith("//")
                and not re.search(r"stanc_version|stancflags", line)]

    _, code = sampling.program_code("hierarchical")
    native = _httpstan.stanc(code, "model", STANC_FLAGS)
    source = tmp_path / "model.stan"
    source.write_text(code)
    subprocess.run([str(Path(cmdstanpy.cmdstan_path()) / "bin" / "stanc"), "--name", "model",
                    *STANC_FLAGS, "--o", str(tmp_path / "model.hpp"), str(source)], check=True,
                   capture_output=True)
    assert code_lines(native) == code_lines((tmp_path / "model.hpp").read_text())
    assert code_lines(native) != code_lines(_httpstan.stanc(code, "model"))


@pytest.mark.stan
def test_the_pystan_routes_give_the_same_draws(pystan_backend):
    for program, data in (("correlated", DATA), (MATRIX_CODE, MATRIX_DATA)):
        native, public = (sampling.sample(program, data, backend="pystan", route=route, seed=21,
                                          inits=0.5, **SMALL) for route in ("native", "public"))
        assert native.groups() == public.groups()
        for group in native.groups():
            assert list(native[group].data_vars) == list(public[group].data_vars)
            for var in native[group].data_vars:
                assert native[group][var].dtype == public[group][var].dtype, var
                np.testing.assert_array_equal(native[group][var], public[group][var], err_msg=var)


@pytest.mark.stan
def test_cmdstanpy_gives_pystans_draws(cmdstanpy_backend, pystan_backend):
    """The same Stan sampler, seed and chain numbers: the same draws, up to CmdStan's CSV."""
    settings = dict(seed=3, iter_warmup=300, iter_sampling=300, chains=2)
    for program, data in (("correlated", DATA), (MATRIX_CODE, MATRIX_DATA)):
        cmd = sampling.sample(program, data, backend="cmdstanpy", **settings)
        py = sampling.sample(program, data, backend="pystan", **settings)
        for var in ("mu", "sigma"):
            np.testing.assert_allclose(cmd.posterior[var], py.posterior[var], rtol=1e-5, err_msg=var)


@pytest.mark.stan
def test_matrix_parameters_and_log_lik(engine):
    posterior_ = fit(engine, MATRIX_CODE, MATRIX_DATA, seed=8)
    posterior = posterior_.posterior
    assert set(posterior.data_vars) == {"mu", "sigma", "B", "L", "t", "above"}
    assert posterior["B"].shape == (2, 200, 2, 3) and posterior["L"].shape == (2, 200, 3, 3)
    assert posterior["above"].dtype == np.int64
    # Stan's column-major names mapped to the right cells: L is lower triangular, t[i] = i B[i]
    assert np.all(np.triu(posterior["L"].values, 1) == 0)
    np.testing.assert_allclose(posterior["t"].values[:, :, 1], 2 * posterior["B"].values[:, :, 1],
                               rtol=1e-5)
    np.testing.assert_allclose(np.diagonal(posterior["L"].values @ np.swapaxes(posterior["L"].values, -1, -2),
                                           axis1=-2, axis2=-1), 1, rtol=1e-5)
    assert posterior_.log_likelihood["log_lik"].shape == (2, 200, 5)


@pytest.mark.stan
def test_works_inside_a_running_event_loop(engine):
    async def main():
        asyncio.get_running_loop()  # as in Jupyter
        return fit(engine, seed=9)

    inside = asyncio.run(main())
    np.testing.assert_array_equal(inside.posterior["mu"], fit(engine, seed=9).posterior["mu"])


@pytest.mark.stan
def test_concurrent_calls_from_threads(engine):
    reference = {seed: fit(engine, seed=seed) for seed in (3, 4)}
    matrix = fit(engine, MATRIX_CODE, MATRIX_DATA, seed=3)
    with sampling.threaded_fits(), ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(fit, engine, seed=seed) for seed in (3, 4)]
        futures.append(pool.submit(fit, engine, MATRIX_CODE, MATRIX_DATA, seed=3))
        results = [future.result() for future in futures]
    for seed, idata in zip((3, 4), results):
        np.testing.assert_array_equal(idata.posterior["mu"], reference[seed].posterior["mu"])
    np.testing.assert_array_equal(results[2].posterior["B"], matrix.posterior["B"])


def httpstan_fits():
    """Every fit in httpstan's cache (pystan's public route must delete the ones it makes)."""
    import httpstan.cache

    return sorted(httpstan.cache.cache_directory().glob("models/*/fits/*"))


def httpstan_sockets():
    """The socket files httpstan binds in the temporary directory, one per fit of pystan's
    public route (the route must remove them)."""
    return set(Path(tempfile.gettempdir()).glob("httpstan_*.sock"))


@pytest.mark.stan
def test_quiet_and_nothing_written_to_cwd(engine, tmp_path, monkeypatch, capfd):
    before, sockets = httpstan_fits(), httpstan_sockets()
    monkeypatch.chdir(tmp_path)
    fit(engine, seed=11)
    with pytest.raises(RuntimeError):
        fit(engine, seed=11, inits=[{"mu": 0.0, "sigma": -1.0}] * 2)
    capfd.readouterr()   # what the failure explains may be shown; a good fit prints nothing
    fit(engine, seed=12)
    assert list(tmp_path.iterdir()) == []
    assert httpstan_fits() == before
    assert httpstan_sockets() <= sockets
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.stan
def test_invalid_data_and_inits_are_readable_errors(engine):
    with pytest.raises(RuntimeError, match="rho must be < 1"):
        fit(engine, data=dict(DATA, rho=1.0), seed=1)
    with pytest.raises(RuntimeError, match="ss must be > 0"):
        fit(engine, data=dict(DATA, ss=0.0), seed=1)
    with pytest.raises(RuntimeError, match=r"(?s)Lower bounded variable is -1|sigma is -1"):
        fit(engine, seed=1, inits=[{"mu": 0.0, "sigma": -1.0}] * 2)
    # the failed fits left the engine usable
    assert fit(engine, seed=1).posterior["mu"].shape == (2, 200)


@pytest.mark.stan
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="initial-exec TLS is Linux's")
def test_a_full_static_tls_block_gets_a_module_that_needs_none(pystan_backend, monkeypatch):
    """Where the process's static TLS block is full, an initial-exec module fails to load;
    the program is then built with the default TLS model and loaded instead: the same draws
    for the seed, no fall back to the public route, and its record says how it was built."""
    import json
    from bayescomp.sampling import _native

    data = {"n": 10, "rho": 0.1, "mean_diff": 0.004, "ss": 9 * 0.01 ** 2 / (1 / 10 + 0.1 / 0.9)}
    usual = sampling.sample("correlated", data, backend="pystan", route="native", seed=7, **SMALL)
    real_open, opened = _native._open, []

    def full_static_tls(target):
        record = json.loads((target.parent / "record.json").read_text())
        if "-ftls-model=initial-exec" in record["toolchain"]["flags"]:
            raise ImportError(f"{target}: cannot allocate memory in static TLS block")
        opened.append(record)
        return real_open(target)

    monkeypatch.setattr(_native, "_open", full_static_tls)
    monkeypatch.setattr(_native, "_MODULES", {})   # as if it had not been loaded yet
    with warnings.catch_warnings():
        warnings.simplefilter("error", EngineWarning)   # no fall back to the public route
        copy = sampling.sample("correlated", data, backend="pystan", route="native", seed=7,
                               **SMALL)
    assert len(opened) == 1 and opened[0]["name"] == "correlated"
    assert not any(flag.startswith("-ftls-model") for flag in opened[0]["toolchain"]["flags"])
    assert copy.attrs["route"] == "native"
    np.testing.assert_array_equal(copy.posterior["mu"].values, usual.posterior["mu"].values)
