"""The simulation study of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017, Machine Learning).

Many collections of datasets with a known population difference ``delta0`` are simulated;
on each, two tests decide:

* the Wilcoxon signed-rank test on the dataset means (two-sided, alpha 0.05), the
  recommended frequentist test across datasets (Demsar 2006): it "rejects" or not;
* the hierarchical model (:func:`bayescomp.hierarchical`): from the posterior of the next
  dataset's difference (``HierarchicalResult.next_dataset.probabilities``) it declares a *difference*
  when P(left) > 0.95 or P(right) > 0.95, *equivalence* when P(rope) > 0.95, else nothing.

:func:`run_study` returns, for every (delta0, number of datasets k), the rates of those
decisions with binomial 95% intervals, and the root mean squared error against the true
delta_i of the shrunken estimates (posterior means of delta_i) and of the raw dataset means
(the per-dataset maximum-likelihood estimates). :func:`power_curve` varies delta0 at k = 50.

Processes and settings (our choices; the design follows the paper's Section on simulations,
the numbers are not copied from it)
-------------------------------------------------------------------------------------------
``process="normal"`` (the paper's sampling from the model, process (a))
    ``delta_i ~ N(delta0, sigma0)`` with ``sigma0 = 0.0025``; on dataset i, 10 runs of
    10-fold cross-validation, i.e. n = 100 differences with compound-symmetric correlation
    ``rho = 1/10`` and standard deviation ``sigma_i ~ U(0.02, 0.04)`` (typical of accuracies
    of 10-fold CV). The noise of a dataset mean is then ``sigma_i sqrt((1 + 99 rho) / 100)``,
    about 0.01, four times sigma0: the regime where shrinkage matters.
    ``"cauchy"`` and ``"mixture"`` draw delta_i from :func:`bayescomp.simulate.draw_deltas`
    instead (misspecified population).
``process="naive_bayes"`` (the paper's realistic process (b))
    :func:`bayescomp.simulate.cv_naive_bayes_collection`: delta_i drawn as above, a balanced
    binary class and two binary features agreeing with it with probabilities ``theta =
    0.8`` and ``theta - delta_i``, 1000 instances, two one-feature naive Bayes classifiers
    compared by 10 runs of stratified 10-fold CV. Nothing there follows the model's
    likelihood exactly (accuracies are discrete, the correlation is whatever CV makes).

``delta0 = 0`` asks how often each test sees a difference that is not there; ``delta0 =
0.005`` is a difference that exists but is practically negligible (half the ROPE of 0.01):
as k grows the signed-rank test rejects ever more often, which is right for its null and
wrong for the practical question, whereas the hierarchical test should declare equivalence
more often. With sigma0 = 0.0025 the next dataset's difference stays inside the ROPE
with probability 0.98 (delta0 = 0.005) and 0.9999 (delta0 = 0).

Reproducibility and parallelism
-------------------------------
Run r of the cell (process, delta0, k) uses ``SeedSequence(seed, spawn_key=(h, r))`` with h
a CRC-32 of the cell, for both its simulation and the seed of its fit: results depend neither on
``n_jobs`` nor on which other cells are run (a power curve reuses the study's runs at equal
delta0 and k). Fits are joblib tasks run with ``prefer="threads"`` (each Stan fit samples in
child processes), so a ``joblib.parallel_backend("dask")`` or ``("ray")`` context spreads a
full study over a cluster.
"""
from __future__ import annotations

import time
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from bayescomp import sampling
from bayescomp.baselines.across_datasets import wilcoxon_test
from bayescomp.exceptions import ConstantDifferencesWarning, SamplingWarning
from bayescomp.models.hierarchical import hierarchical
from bayescomp.summarised import Summarised
from bayescomp.validation import simulate

__all__ = ["StudyResult", "run_study", "power_curve", "combine", "PROCESSES"]

PROCESSES = ("normal", "cauchy", "mixture", "naive_bayes")
#: decisions counted in the aggregated table: column of the per-run table -> name
DECISIONS = {"signed_rank_reject": "signed_rank", "hier_difference": "hier_difference",
             "hier_equivalence": "hier_equivalence"}

@dataclass(frozen=True, eq=False)
class StudyResult(Summarised):
    """Outcome of a simulation study.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per simulated collection: ``process``, ``delta0``, ``n_datasets``, ``run``,
        ``seed`` (of the run's fit), ``wilcoxon_p``, ``signed_rank_reject``, ``p_left``, ``p_rope``,
        ``p_right`` (next dataset), ``hier_difference``, ``hier_equivalence``,
        ``delta0_mean`` (posterior mean of delta0), ``mse_shrunk``, ``mse_raw`` (mean over
        the datasets of the squared error of the posterior means of delta_i and of the raw
        means), ``divergences``, ``diagnostics_ok``, ``problems`` (the sampler's complaints,
        abridged), ``seconds``.
    table : pandas.DataFrame
        One row per (delta0, n_datasets): ``runs``; for each decision (``signed_rank``,
        ``hier_difference``, ``hier_equivalence``) the ``count``, ``rate`` and Wilson 95%
        interval ``low``, ``high``; ``rmse_shrunk``, ``rmse_raw`` (square roots of the mean
        MSE over runs) and their ratio; ``sampling_problems`` (fits whose diagnostics
        failed); ``seconds`` (mean per fit).
    settings : dict
    """

    runs: pd.DataFrame = field(repr=False)
    table: pd.DataFrame = field(repr=False)
    settings: dict = field(repr=False)

    @classmethod
    def from_runs(cls, runs: pd.DataFrame, settings: dict | None = None) -> "StudyResult":
        """A result from a per-run table (e.g. one saved with ``runs.to_csv``), re-aggregated."""
        return cls(runs, _aggregate(runs), dict(settings or {}))

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def summary(self) -> str:
        s = self.settings
        t = self.table
        shown = pd.DataFrame({
            "delta0": t["delta0"], "k": t["n_datasets"], "runs": t["runs"],
            **{f"{name} [95% CI]": [f"{r:.3f} [{lo:.3f}, {hi:.3f}]" for r, lo, hi in
                                    zip(t[f"{name}_rate"], t[f"{name}_low"], t[f"{name}_high"])]
               for name in DECISIONS.values()},
            "rmse_shrunk": t["rmse_shrunk"], "rmse_raw": t["rmse_raw"],
            "problems": t["sampling_problems"]})
        return "\n".join([
            f"Simulation study ({s['process']} process): {len(self.runs)} fits, seed {s['seed']}, "
            f"ROPE {s['rope']}, sigma0 {s['sigma0']}, sigma {s['sigma']}, "
            f"{s['n_scores']} scores per dataset, rho {s['rho']:.3g}",
            f"  signed-rank at alpha {s['alpha']}; hierarchical decisions at {s['threshold']} "
            f"on the next dataset; fits {s['fit_options']}",
            shown.to_string(index=False, float_format=lambda v: f"{v:.4g}"),
        ])


def _cell_sequence(seed: int, process: str, delta0: float, n_datasets: int,
                   run: int) -> np.random.SeedSequence:
    cell = zlib.crc32(f"{process}|{float(delta0):.12g}|{int(n_datasets)}".encode())
    return np.random.SeedSequence(seed, spawn_key=(cell, run))


def _simulate(process: str, n_datasets: int, delta0: float, rng, *, sigma0: float, sigma,
              n_scores: int, folds: int, rho: float, theta: float, n_samples: int):
    if process == "naive_bayes":
        delta = simulate.draw_deltas(n_datasets, delta0, sigma0, "normal", rng)
        return simulate.cv_naive_bayes_collection(
            n_datasets, delta, theta=theta, n_samples=n_samples, runs=n_scores // folds,
            folds=folds, delta0=delta0, seed=rng)
    sigmas = rng.uniform(*sigma, n_datasets) if np.ndim(sigma) else sigma
    return simulate.collection(n_datasets, n_scores, delta0=delta0, sigma0=sigma0,
                               sigma=sigmas, rho=rho, distribution=process, seed=rng)


def _one_run(process: str, delta0: float, n_datasets: int, run: int, *, seed: int, rope,
             alpha: float, threshold: float, simulation: dict, fit_options: dict) -> dict:
    """One fit of the study. ``seed`` is the study's root seed: with the cell and the run it
    makes this run's simulation seed and the seed of its fit (see the module notes). ``simulation``
    holds the keyword arguments of :func:`_simulate`; ``fit_options`` those of
    :func:`~bayescomp.models.hierarchical.hierarchical`."""
    sequence = _cell_sequence(seed, process, delta0, n_datasets, run)
    data_sequence, fit_sequence = sequence.spawn(2)
    fit_seed = sampling.seeds.stan_seed(fit_sequence)
    sim = _simulate(process, n_datasets, delta0, np.random.default_rng(data_sequence),
                    **simulation)
    start = time.perf_counter()
    try:
        result = hierarchical(sim.scores, "a", "b", rope=rope, seed=fit_seed,
                              baselines=False, **fit_options)
    except Exception as exc:
        exc.add_note(f"(bayescomp.validation.study: {process}, delta0 {delta0}, k {n_datasets}, run {run})")
        raise
    seconds = time.perf_counter() - start
    wilcoxon = wilcoxon_test(sim.scores.mean_differences("a", "b"))
    p_left, p_rope, p_right = map(float, result.next_dataset.probabilities)
    shrunk = result.datasets["delta_mean"].to_numpy()
    raw = result.datasets["mean"].to_numpy()
    return dict(
        process=process, delta0=delta0, n_datasets=n_datasets, run=run, seed=fit_seed,
        wilcoxon_p=wilcoxon.p_value, signed_rank_reject=wilcoxon.p_value < alpha,
        p_left=p_left, p_rope=p_rope, p_right=p_right,
        hier_difference=max(p_left, p_right) > threshold, hier_equivalence=p_rope > threshold,
        delta0_mean=float(result.population.mean),
        mse_shrunk=float(np.mean((shrunk - sim.delta) ** 2)),
        mse_raw=float(np.mean((raw - sim.delta) ** 2)),
        divergences=result.diagnostics.divergences, diagnostics_ok=result.diagnostics.ok,
        problems="; ".join(p.split(":")[0] for p in result.diagnostics.problems),
        seconds=seconds)


def _interval(count: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(int(count), int(n)).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def _aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (delta0, k), group in runs.groupby(["delta0", "n_datasets"], sort=True):
        n = len(group)
        row = dict(delta0=delta0, n_datasets=k, runs=n)
        for column, name in DECISIONS.items():
            count = int(group[column].sum())
            low, high = _interval(count, n)
            row.update({f"{name}_count": count, f"{name}_rate": count / n,
                        f"{name}_low": low, f"{name}_high": high})
        row["rmse_shrunk"] = float(np.sqrt(group["mse_shrunk"].mean()))
        row["rmse_raw"] = float(np.sqrt(group["mse_raw"].mean()))
        row["rmse_ratio"] = row["rmse_shrunk"] / row["rmse_raw"]
        row["sampling_problems"] = int((~group["diagnostics_ok"]).sum())
        row["seconds"] = float(group["seconds"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def run_study(delta0_values=(0.0, 0.005), n_datasets_values=(10, 20, 30, 40, 50), *,
              repetitions: int = 100, rope: float = 0.01, sigma0: float = 0.0025,
              sigma=(0.02, 0.04), n_scores: int = 100, folds: int = 10,
              process: str = "normal", theta: float = 0.8, n_samples=1000,
              alpha: float = 0.05, threshold: float = 0.95, seed: int | None = 0,
              n_jobs=None, fit_options: dict | None = None,
              show_progress: bool = False, progress: bool | None = None) -> StudyResult:
    """Run the simulation study (see the module notes for the processes and their settings).

    Parameters
    ----------
    delta0_values : sequence of float
        Population mean differences ``a - b`` to simulate.
    n_datasets_values : sequence of int
        Numbers of datasets k per collection.
    repetitions : int
        Collections simulated per (delta0, k).
    rope : float
        Half-width of the ROPE of the hierarchical test.
    sigma0 : float
        Spread of the true delta_i around delta0.
    sigma : float or (float, float)
        Standard deviation of one fold's difference, or the bounds of a uniform it is drawn
        from per dataset (model-based processes only).
    n_scores, folds : int
        Scores per dataset (runs x folds) and folds; ``rho = 1 / folds``.
    process : {"normal", "cauchy", "mixture", "naive_bayes"}
        How delta_i and the scores are generated.
    theta, n_samples
        Settings of the naive-Bayes process (:func:`bayescomp.simulate.cv_naive_bayes_collection`).
    alpha : float
        Level of the signed-rank test.
    threshold : float
        Posterior probability the hierarchical test needs to declare.
    seed : int, optional
        Root of every run's seed (see the module notes); None draws one, recorded in
        ``settings``.
    n_jobs : int, optional
        Passed to :class:`joblib.Parallel` (threads unless a ``joblib.parallel_backend``
        context says otherwise).
    fit_options : dict, optional
        Passed to :func:`bayescomp.hierarchical` (``chains``, ``iter_warmup``,
        ``iter_sampling``, ``prior``, ``backend``, ...).
    show_progress : bool
        Print "run i/N" to stderr as fits complete (the package's one name for the flag).
    progress : bool, optional
        Former name of ``show_progress``, still accepted.

    Returns
    -------
    StudyResult
        A :class:`SamplingWarning` is issued once if some fits had sampling problems (the
        per-fit warnings are silenced; see ``runs.diagnostics_ok``).
    """
    if process not in PROCESSES:
        raise ValueError(f"process must be one of {PROCESSES}, got {process!r}")
    if n_scores % folds:
        raise ValueError(f"n_scores {n_scores} must be runs x folds, a multiple of {folds}")
    if repetitions < 1:
        raise ValueError(f"repetitions must be positive, got {repetitions}")
    seed = sampling.check_seed(seed)
    fit_options = dict(fit_options or {})
    for reserved in ("rope", "seed", "baselines"):
        if reserved in fit_options:
            raise ValueError(f"fit_options may not set {reserved!r}: run_study sets it")
    simulation = dict(sigma0=sigma0, sigma=tuple(sigma) if np.ndim(sigma) else float(sigma),
                      n_scores=n_scores, folds=folds, rho=1.0 / folds, theta=theta,
                      n_samples=n_samples)
    cells = [(float(d), int(k), r) for d in delta0_values for k in n_datasets_values
             for r in range(repetitions)]
    tasks = (delayed(_one_run)(process, d, k, r, seed=seed, rope=rope, alpha=alpha,
                               threshold=threshold, simulation=simulation,
                               fit_options=fit_options)
             for d, k, r in cells)
    rows = []
    with sampling.threaded_fits() as (_, stderr), warnings.catch_warnings():
        # set once here, in the main thread, before the workers start: per-fit sampling
        # warnings are summarised below instead
        warnings.simplefilter("ignore", SamplingWarning)
        warnings.simplefilter("ignore", ConstantDifferencesWarning)
        outputs = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(tasks)
        for i, row in enumerate(outputs, 1):
            rows.append(row)
            if show_progress or progress:
                print(f"run {i}/{len(cells)}: delta0 {row['delta0']}, k {row['n_datasets']}",
                      file=stderr, flush=True)
    runs = pd.DataFrame(rows)
    table = _aggregate(runs)
    problems = int((~runs["diagnostics_ok"]).sum())
    if problems:
        warnings.warn(f"{problems} of {len(runs)} fits of the study had sampling problems "
                      "(see runs.diagnostics_ok and table.sampling_problems)", SamplingWarning,
                      stacklevel=2)
    settings = dict(seed=seed, rope=rope, **simulation, alpha=alpha, threshold=threshold,
                    process=process, repetitions=repetitions,
                    delta0_values=tuple(delta0_values),
                    n_datasets_values=tuple(n_datasets_values), fit_options=fit_options,
                    n_jobs=n_jobs)
    return StudyResult(runs, table, settings)


def combine(*results: StudyResult, n_datasets=None) -> StudyResult:
    """One result from the runs of several (e.g. a study and extra delta0 of a power curve).

    Runs are identified by (process, delta0, n_datasets, run); a run present in several
    results is kept once (with equal seeds they are the same run). ``n_datasets`` keeps
    only those numbers of datasets. Settings are the first result's, with the union of the
    delta0 and k values.
    """
    if not results:
        raise ValueError("nothing to combine")
    runs = pd.concat([r.runs for r in results], ignore_index=True)
    runs = runs.drop_duplicates(["process", "delta0", "n_datasets", "run"])
    if n_datasets is not None:
        runs = runs[runs["n_datasets"].isin(np.atleast_1d(n_datasets))]
    runs = runs.sort_values(["delta0", "n_datasets", "run"]).reset_index(drop=True)
    settings = dict(results[0].settings,
                    delta0_values=tuple(sorted(runs["delta0"].unique())),
                    n_datasets_values=tuple(sorted(runs["n_datasets"].unique())))
    return StudyResult(runs, _aggregate(runs), settings)


def power_curve(delta0_values=(0.0, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03),
                n_datasets: int = 50, **options) -> StudyResult:
    """Decision rates against delta0 at a fixed number of datasets (default k = 50).

    ``options`` go to :func:`run_study`; with the same ``seed`` the runs at a delta0 and k
    that :func:`run_study` also ran are the same runs.
    """
    return run_study(delta0_values, (n_datasets,), **options)
