"""Every pairwise comparison of several algorithms, run in parallel through joblib.

:func:`compare_all` compares each unordered pair ``(algorithms[i], algorithms[j])``, ``i < j``,
with differences ``algorithms[i] - algorithms[j]``: the hierarchical model across datasets,
or the Bayesian correlated t-test when the collection holds a single dataset. Beside the
Bayesian probabilities it reports a frequentist p-value per pair (Wilcoxon signed-rank on
the dataset means, or the Nadeau-Bengio corrected t-test on one dataset), corrected for
multiple comparisons across the pairs.

Parallelism and oversubscription
--------------------------------
The fits are joblib tasks, so a ``joblib.parallel_backend(...)`` context decides where they
run (``"dask"`` or ``"ray"`` spread them over a cluster). Each Stan fit already runs its
chains in parallel processes: cmdstanpy starts ``chains`` processes per fit; pystan sends
chains to one pool of ``os.cpu_count()`` processes per Python process. Hence

* ``n_jobs=None`` (joblib's default, 1 outside a backend context) runs one fit at a time,
  which already keeps ``chains`` cores busy;
* ``n_jobs > 1`` without a context uses threads (``prefer="threads"``): sampling happens in
  child processes, so the GIL costs little, and with pystan the concurrent fits of one
  process share its pool instead of multiplying processes. cmdstanpy still runs
  ``n_jobs x chains`` processes: choose ``n_jobs`` about ``cores // chains``;
* process-based backends (``"loky"``, dask workers as processes) give each worker its
  own pystan pool of ``cpu_count`` processes: use them on machines or clusters with
  ``n_jobs x min(chains, cpu_count)`` cores to spare. pystan cannot start its pool in a
  daemonic process: dask's worker processes are daemonic unless
  ``dask.config.set({"distributed.worker.daemon": False})`` precedes the cluster's start;
  ``LocalCluster(processes=False)`` (threads) needs nothing.

Every pair is fitted with ``seed`` as it is, so a pair's numbers are those of
``bayescomp.hierarchical(scores, first, second, seed=seed)`` with the same options (and of
``bayescomp compare --seed``), whatever ``n_jobs``, the order of execution or the other
algorithms; a seed spawned per pair would tie them to the pair's position instead. Sharing
a seed correlates nothing a user reads: each pair is a different posterior, the seed fixes
only the stream of random numbers the sampler consumes, and every pair's Monte Carlo error
is what any seed would give it.

Warnings issued inside a fit (e.g. :class:`~bayescomp.exceptions.SamplingWarning`) are
recorded in the task, whatever thread or process runs it, and re-issued here naming the pair.

A hierarchical fit that still fails its sampler diagnostics after its retries (see
:func:`bayescomp.hierarchical`) is unreliable: its row says ``reliable`` False and
``decision`` "unreliable (sampling problems)", the summary and report name it, and
:func:`bayescomp.presentation.plots.plot_probability_heatmap` hatches its cells when given
``unreliable=result.unreliable_pairs()``. Its probabilities stay in the table and in
:meth:`AllPairsResult.probability_matrix`, for inspection only.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.baselines.multiple_testing import CORRECTIONS, adjust_p_values
from bayescomp.models.correlated import correlated_ttest
from bayescomp.data.scores import Scores
from bayescomp.decisions import SCOPES, THRESHOLD
from bayescomp.models.all_pairs_result import ALPHA, AllPairsResult
from bayescomp.exceptions import BayescompWarning
from bayescomp.rope import Rope

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike

METHODS = ("auto", "hierarchical", "correlated")


# --- warnings recorded per task ----------------------------------------------------------
# Before Python 3.14, warnings.catch_warnings swaps process-wide state (filters, showwarning)
# and restores it on exit, so in threads it misroutes other threads' warnings; libraries
# (arviz, xarray, aiohttp) enter it in every thread too. Worker threads therefore record
# through warnings._showwarnmsg, which is called after the filters for every warning shown
# and which catch_warnings never saves or restores; it files each warning by thread.
_local = threading.local()
_hook_lock = threading.Lock()
_hook = {"users": 0, "original": None}


def _showwarnmsg(message):
    caught = getattr(_local, "caught", None)
    if caught is None:
        _hook["original"](message)
    else:
        caught.append(message)


@contextlib.contextmanager
def _recording_warnings():
    if threading.current_thread() is threading.main_thread() or \
            getattr(sys.flags, "context_aware_warnings", False):
        with warnings.catch_warnings(record=True) as caught:  # safe: no other thread here
            yield caught
        return
    caught = []
    with _hook_lock:
        if _hook["users"] == 0:
            _hook["original"], warnings._showwarnmsg = warnings._showwarnmsg, _showwarnmsg
        _hook["users"] += 1
    _local.caught = caught
    try:
        yield caught
    finally:
        _local.caught = None
        with _hook_lock:
            _hook["users"] -= 1
            if _hook["users"] == 0:
                warnings._showwarnmsg = _hook["original"]


def _fit_pair(scores: Scores, first: str, second: str, method: str, rope: Rope, seed: int,
              fit_options: dict):
    """One comparison, run by a joblib worker: (result, [(message, category), ...])."""
    with _recording_warnings() as caught:
        try:
            if method == "hierarchical":
                from bayescomp.models.hierarchical import hierarchical  # arviz: imported when first needed
                result = hierarchical(scores, first, second, rope=rope, seed=seed, **fit_options)
            else:
                result = correlated_ttest(scores, first, second, rope=rope)
        except Exception as exc:
            exc.add_note(f"(bayescomp.compare_all: comparing {first} vs {second}, seed {seed})")
            if "daemonic processes" in str(exc):
                exc.add_note("pystan samples in child processes, which a daemonic worker cannot "
                             "start: with dask, run dask.config.set({'distributed.worker.daemon': "
                             "False}) before starting the cluster, use threads, or cmdstanpy")
            raise
    return result, [(str(w.message), w.category) for w in caught]


def _row(result, method: str, seed: int) -> dict:
    row = dict(first=result.first, second=result.second, method=method)
    if method == "hierarchical":
        for scope in SCOPES[method]:
            estimate = getattr(result, scope)
            row.update({f"{scope}_{k}": float(p) for k, p in
                        zip(("p_left", "p_rope", "p_right"), estimate.probabilities)})
            row[f"{scope}_decision"] = estimate.decision(THRESHOLD)  # "unreliable" when it is
        base = result.baselines
        row.update(test="wilcoxon", p_value=base.wilcoxon.p_value if base else np.nan,
                   reliable=bool(result.reliable),
                   attempts=len(result.settings.get("attempts", ())) or 1,
                   modes=len(result.modes),
                   quadrature=result.by_quadrature,
                   ess_bulk=result.settings["ess"]["bulk"],
                   ess_tail=result.settings["ess"]["tail"])
    else:  # one dataset, no sampling, hence no sampling problems
        row.update({f"dataset_{k}": float(p) for k, p in
                    zip(("p_left", "p_rope", "p_right"), result.probabilities)})
        row.update(dataset_decision=result.decision(THRESHOLD), test="nadeau-bengio",
                   p_value=result.nb_p_value, reliable=True, attempts=1, modes=0,
                   quadrature=False,
                   ess_bulk=np.nan, ess_tail=np.nan)
    row["seed"] = seed
    return row


def compare_all(scores: Scores, *, rope: RopeLike = 0.01, method: str = "auto",
                n_jobs: int | None = None, seed: int | None = None,
                correction: str | None = "holm", show_progress: bool = False,
                **fit_options) -> AllPairsResult:
    """Compare every pair of algorithms, in parallel through joblib.

    Parameters
    ----------
    scores : Scores
        At least two algorithms. Pairs are ``(algorithms[i], algorithms[j])`` with ``i < j``
        and differences ``algorithms[i] - algorithms[j]``.
    rope : float or (float, float)
        Region of practical equivalence in the units of the scores.
    method : {"auto", "hierarchical", "correlated"}
        "auto": the correlated t-test for a single dataset, the hierarchical model otherwise.
    n_jobs : int, optional
        Passed to :class:`joblib.Parallel`: None means 1 unless a ``joblib.parallel_backend``
        context says otherwise. Without a context, ``n_jobs > 1`` runs threads (see the
        module notes on oversubscription: every Stan fit already runs its chains in
        parallel processes).
    seed : int, optional
        The seed of every pair's fit, used as it is: a pair's numbers equal
        :func:`bayescomp.hierarchical` on that pair with this seed and the same options
        (the module notes say why one seed serves every pair). None draws one seed, once,
        for every pair, recorded as :attr:`AllPairsResult.seed`.
    correction : {"holm", "bonferroni", None}
        Multiple-comparison correction of the frequentist p-values across pairs.
    show_progress : bool
        Print "fit k/N: first vs second" to stderr as fits complete (the same flag as
        :func:`bayescomp.hierarchical`'s).
    **fit_options
        Passed to :func:`bayescomp.hierarchical` (``chains``, ``iter_warmup``,
        ``iter_sampling``, ``prior``, ``backend``, ``adapt_delta``, ...); ignored by the
        correlated t-test, which has no options.

    Returns
    -------
    AllPairsResult
        Warnings of each fit (e.g. RetryWarning, SamplingWarning) are re-issued here,
        naming the pair. Unreliable fits are flagged (``reliable``, ``decision``).

    Examples
    --------
    >>> import joblib                                                 # doctest: +SKIP
    >>> with joblib.parallel_backend("dask"):                         # doctest: +SKIP
    ...     result = compare_all(scores, rope=0.01, seed=1, chains=4)
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    if len(scores.algorithms) < 2:
        raise ValueError(f"need at least 2 algorithms to compare, got {list(scores.algorithms)}")
    if method == "auto":
        method = "correlated" if len(scores) == 1 else "hierarchical"
    if method == "correlated" and len(scores) != 1:
        raise ValueError(f"the correlated t-test compares on one dataset, the scores hold "
                         f"{len(scores)}; use method='hierarchical' or scores.subset([name])")
    if method == "hierarchical" and len(scores) < 2:
        raise ValueError("the hierarchical model needs at least 2 datasets; use method='correlated'")
    from joblib import Parallel, delayed

    from bayescomp import sampling

    seed = sampling.check_seed(seed)   # drawn here once when None, recorded, given every pair
    rope = Rope.coerce(rope)
    pairs = list(combinations(scores.algorithms, 2))

    tasks = (delayed(_fit_pair)(scores.subset(algorithms=pair), *pair, method, rope, seed,
                                fit_options)
             for pair in pairs)
    results, rows = {}, []
    with sampling.threaded_fits() as (_, stderr):
        outputs = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(tasks)
        for k, ((first, second), (result, caught)) in enumerate(zip(pairs, outputs), 1):
            for message, category in caught:
                # the package's own warnings concern the pair; others (libraries) are
                # re-issued as they are, so that the usual once-per-place rule applies
                pair = f"{first} vs {second}: " if issubclass(category, BayescompWarning) else ""
                warnings.warn(pair + message, category, stacklevel=2)
            if show_progress:
                print(f"fit {k}/{len(pairs)}: {first} vs {second}", file=stderr, flush=True)
            results[(first, second)] = result
            rows.append(_row(result, method, seed))

    table = pd.DataFrame(rows)
    table["p_value_corrected"] = adjust_p_values(table["p_value"], correction)
    table["reject"] = table["p_value_corrected"] <= ALPHA
    scoped = [f"{scope}_{k}" for scope in SCOPES[method]
              for k in ("p_left", "p_rope", "p_right", "decision")]
    table = table[["first", "second", "method", *scoped, "test", "p_value", "p_value_corrected",
                   "reject", "reliable", "attempts", "modes", "quadrature", "ess_bulk", "ess_tail",
                   "seed"]]
    return AllPairsResult(tuple(scores.algorithms), method, rope, correction, table, results,
                          seed=seed)
