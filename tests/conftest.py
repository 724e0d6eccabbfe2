"""Shared fixtures: which Stan backends this machine has (tests needing one skip, saying why),
a Python without scikit-learn, scmamp's published example with its published numbers, and
made-up diagnostics for the tests of retries."""
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayescomp

from bayescomp import sampling


@pytest.fixture(scope="session")
def pystan_backend():
    """'pystan', or skip: pystan is not importable (it has no Windows build)."""
    reason = sampling.ENGINES["pystan"].unavailable()
    if reason is not None:
        pytest.skip(reason)
    return "pystan"


@pytest.fixture(scope="session")
def cmdstanpy_backend():
    """'cmdstanpy', or skip: no CmdStan install (CMDSTAN, ~/.cmdstan) was found.

    In CI (CI=true) beside the developers' CmdStan builder (../shared/cmdstan/install.sh),
    which .ci/run runs when no CmdStan is found, a missing CmdStan fails the test instead:
    there the cmdstanpy tests must run, not skip silently.
    """
    reason = sampling.ENGINES["cmdstanpy"].unavailable()
    if reason is None:
        return "cmdstanpy"
    builder = Path(__file__).resolve().parents[2] / "shared" / "cmdstan" / "install.sh"  # <repo>/../shared
    if os.environ.get("CI") == "true" and builder.is_file():
        pytest.fail(f"{reason}; in CI .ci/run should have built it with {builder}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def stan_backend():
    """Whatever backend 'auto' picks, or skip when there is none."""
    try:
        return sampling.resolve_backend("auto")
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def run_without_sklearn():
    """Run Python code in a fresh interpreter where ``import sklearn`` fails, with the
    bayescomp under test importable; fails the test on a non-zero exit."""
    root = Path(bayescomp.__file__).resolve().parents[1]

    def run(code: str):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in sys.path if p])
        result = subprocess.run([sys.executable, "-c", "import sys; sys.modules['sklearn'] = None\n"
                                 + code], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr

    return run


@pytest.fixture(scope="session")
def write_long_csv():
    """A function writing scores as the long CSV the command line reads (columns dataset,
    algorithm, run, fold, score, rho) and returning its path."""
    def write(scores, path):
        scores.to_frame().to_csv(path, index=False)
        return path
    return write


@pytest.fixture(scope="session")
def three_algorithms():
    """Three algorithms on 4 simulated datasets of 20 scores: a and b of a simulated pair,
    c the scores of b plus normal noise (sd 0.02), for the all-pairs tests."""
    pair = bayescomp.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1,
                                         seed=4).scores
    rng = np.random.default_rng(0)
    return bayescomp.from_arrays({"a": [d.values[0] for d in pair.datasets],
                                  "b": [d.values[1] for d in pair.datasets],
                                  "c": [d.values[1] + rng.normal(0, 0.02, d.n_scores)
                                        for d in pair.datasets]}, rho=0.1)


@pytest.fixture(scope="session")
def joint_model_log_density():
    """The joint model's log density (stan/joint.stan's model, written with scipy's
    distributions rather than the program's algebra) at one point given by its constrained
    parameters, up to a constant: the Gamma densities of kappa_i and lambda_i on the log
    scale (as z-scores of their priors' moments), the Bartlett factor's chi and normal
    densities, the prior of log(nu - 1) (bayescomp.models.nu_prior), and the means' normal
    densities with delta0 integrated out (a Gaussian integral: the densities at the weighted
    centre times (2 pi)^(d/2) |precision|^(-1/2)). ``data`` is joint_program.prepare's."""
    from scipy import special, stats

    from bayescomp.models import nu_prior

    def log_z_density(z, a):
        # log(x) = digamma(a) - log(a) + sqrt(trigamma(a)) z, x ~ Gamma(a, rate a)
        scale = np.sqrt(special.polygamma(1, a))
        log_x = special.digamma(a) - np.log(a) + scale * z
        return (np.sum(stats.gamma.logpdf(np.exp(log_x), a, scale=1 / a) + log_x + np.log(scale)),
                log_x)

    def log_density(data, sigma0, diagonal, lower, u, kappa_z, lambda_z):
        d = data["d"]
        m, psi, dof = data["mean_contrast"], data["noise_scale"], data["noise_dof"]
        shape = np.diag(np.asarray(diagonal, dtype=float))
        shape[np.tril_indices(d, -1)] = lower
        B = sigma0 * np.sqrt(d / np.sum(shape ** 2)) * shape
        nu = 1 + np.exp(u)
        total = (np.sum(stats.chi.logpdf(diagonal, d + 2 - np.arange(1, d + 1)))
                 + np.sum(stats.norm.logpdf(lower)) + nu_prior.log_density(np.array([u]))[0][0])
        kappa_part, log_kappa = log_z_density(np.asarray(kappa_z), dof / 2)
        lambda_part, log_lambda = log_z_density(np.asarray(lambda_z), nu / 2)
        total += kappa_part + lambda_part
        T = psi / np.exp(log_kappa)[:, None, None] + (B @ B.T) / np.exp(log_lambda)[:, None, None]
        precision = np.linalg.inv(T)
        total_precision = precision.sum(axis=0)
        centre = np.linalg.solve(total_precision, np.einsum("nij,nj->i", precision, m))
        total += sum(stats.multivariate_normal(centre, T[i]).logpdf(m[i]) for i in range(len(m)))
        return total + d / 2 * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(total_precision)[1]

    return log_density


#: ../shared beside the checkout (reference data for the developers' validation)
SHARED = Path(os.environ.get("BAYESCOMP_SHARED", Path(__file__).resolve().parents[2] / "shared"))


@pytest.fixture(scope="session")
def scmamp_example():
    """scmamp's ``data_kcv_example`` (4 algorithms x 10 datasets, 10 x 10-fold AUC) and the
    hierarchical model's published per-dataset numbers for AlgC - AlgD (scmamp's vignette,
    ROPE 0.01, rho 0.1): posterior mean of delta_i, P(left), P(rope), P(right), where "left"
    is AlgC worse by more than the ROPE. Skips where ../shared is absent."""
    path = SHARED / "data" / "kcv_example_auc.csv"
    if not path.exists():
        pytest.skip(f"reference data {path} is absent (../shared is not beside the checkout)")
    scores = bayescomp.from_wide(pd.read_csv(path), dataset="DB", run="Rep", fold="Fold")
    published = pd.DataFrame({
        "mean": [-0.0029651, 0.0003654, 0.0060135, 0.0108973, 0.0084060, -0.0086159,
                 0.0393366, 0.0064343, 0.0055262, 0.0226002],
        "left": [0.0994, 0.0122, 0.0006, 0.0068, 0.0894, 0.4182, 0.0070, 0.0888, 0.0420, 0.0048],
        "rope": [0.8948, 0.9716, 0.8136, 0.4922, 0.5162, 0.5658, 0.2690, 0.5500, 0.6580, 0.2844],
        "right": [0.0058, 0.0162, 0.1858, 0.5010, 0.3944, 0.0160, 0.7240, 0.3612, 0.3000, 0.7108],
    }, index=[str(i) for i in range(1, 11)])
    return scores, published


@pytest.fixture
def made_up_diagnostics(monkeypatch):
    """``install(module, verdicts)`` replaces ``module.diagnose`` so that fit k's diagnostics
    take the fields ``verdicts[k]`` (of Diagnostics; a clean sampler otherwise) over the real
    ones, and returns the list the InferenceData diagnosed are appended to, in order."""
    def install(module, verdicts):
        real, seen = module.diagnose, []

        def diagnose(idata, **options):
            seen.append(idata)
            made_up = dict(divergences=0, treedepth_saturated=0, min_bfmi=1.0)
            made_up.update(verdicts[len(seen) - 1])
            return dataclasses.replace(real(idata, **options), **made_up)

        monkeypatch.setattr(module, "diagnose", diagnose)
        return seen
    return install
