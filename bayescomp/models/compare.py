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
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.baselines.multiple_testing import CORRECTIONS, adjust_p_values
from bayescomp.models.correlated import correlated_ttest
from bayescomp.data.scores import Scores
from bayescomp.decisions import MODES_DISAGREE, SCOPE_NAMES, SCOPES
from bayescomp.exceptions import BayescompWarning
from bayescomp.presentation.reports import Reportable, text_table
from bayescomp.presentation.serialize import modes_dict
from bayescomp.rope import Rope
from bayescomp.presentation.verdicts import format_number, json_number, rope_dict, verdict, verdict_dict

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike

METHODS = ("auto", "hierarchical", "correlated")
ALPHA = 0.05
THRESHOLD = 0.95


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
                   modes=len(result.modes))
    else:  # one dataset, no sampling, hence no sampling problems
        row.update({f"dataset_{k}": float(p) for k, p in
                    zip(("p_left", "p_rope", "p_right"), result.probabilities)})
        row.update(dataset_decision=result.decision(THRESHOLD), test="nadeau-bengio",
                   p_value=result.nb_p_value, reliable=True, attempts=1, modes=0)
    row["seed"] = seed
    return row


@dataclass(frozen=True, eq=False)
class AllPairsResult(Reportable):
    """Every pairwise comparison of several algorithms.

    Attributes
    ----------
    algorithms : tuple of str
    method : {"hierarchical", "correlated"}
    rope : Rope
    correction : {"holm", "bonferroni", None}
    table : pandas.DataFrame
        One row per pair (differences ``first - second``): ``first``, ``second``, ``method``;
        per scope (:attr:`scopes`: ``population`` and ``next_dataset`` for the hierarchical
        model, the population's delta0 and the next dataset's posterior mean masses;
        ``dataset`` for the correlated t-test on one dataset), ``<scope>_p_left``,
        ``<scope>_p_rope``, ``<scope>_p_right`` and ``<scope>_decision`` (at 0.95, as the
        result's ``decision()`` words it: "unreliable (sampling problems)" for a fit that
        failed its sampler diagnostics); ``test`` and ``p_value`` of the frequentist
        baseline, ``p_value_corrected``, ``reject`` (corrected p-value at most 0.05),
        ``reliable`` (a decision can be made: the final fit passed its diagnostics, or its
        chains decided as :attr:`HierarchicalResult.modes` says), ``attempts`` (fits made,
        retries included), ``modes`` (the modes or chains a fit whose chains do not mix
        decided by, 0 when they mix) and ``seed`` (the seed of the pair's fit: :attr:`seed`,
        the same in every row).
    results : dict
        ``(first, second) -> HierarchicalResult or CorrelatedTTestResult``.
    seed : int
        The seed of every pair's fit (the one given, or the one drawn for ``seed=None``).
    """

    algorithms: tuple
    method: str
    rope: Rope
    correction: str | None
    table: pd.DataFrame = field(repr=False)
    results: dict = field(repr=False)
    seed: int = 0
    alpha: float = ALPHA
    threshold: float = THRESHOLD

    @property
    def scopes(self) -> tuple[str, ...]:
        """The questions each pair answers, as prefixes of the table's columns."""
        return SCOPES[self.method]

    def probability_matrix(self, kind: str = "better", scope: str | None = None) -> pd.DataFrame:
        """Square matrix of pairwise probabilities, algorithms as index and columns.

        Parameters
        ----------
        kind : {"better", "rope"}
            "better": entry ``[a, b]`` is P(a better than b by more than the ROPE), i.e.
            ``p_right`` of ``a - b`` and ``p_left`` of ``b - a``. "rope": the symmetric
            P(a and b practically equivalent). The diagonal is NaN.
        scope : str, optional
            One of :attr:`scopes`; default the first, the population for the hierarchical
            model.
        """
        if kind not in ("better", "rope"):
            raise ValueError(f"kind must be 'better' or 'rope', got {kind!r}")
        scope = scope or self.scopes[0]
        if scope not in self.scopes:
            raise ValueError(f"scope must be one of {self.scopes}, got {scope!r}")
        names = list(self.algorithms)
        matrix = pd.DataFrame(np.nan, index=pd.Index(names), columns=pd.Index(names))
        for _, row in self.table.iterrows():
            first, second = row["first"], row["second"]
            if kind == "better":
                matrix.loc[first, second] = row[f"{scope}_p_right"]
                matrix.loc[second, first] = row[f"{scope}_p_left"]
            else:
                matrix.loc[first, second] = matrix.loc[second, first] = row[f"{scope}_p_rope"]
        return matrix

    def to_frame(self) -> pd.DataFrame:
        """The table, one row per pair (a copy)."""
        return self.table.copy()

    @property
    def reliable(self) -> bool:
        """Whether every fit passed its sampler diagnostics (after its retries)."""
        return bool(self.table["reliable"].all())

    def unreliable_pairs(self) -> list[tuple[str, str]]:
        """The pairs ``(first, second)`` whose final fit failed its sampler diagnostics."""
        bad = self.table[~self.table["reliable"].astype(bool)]
        return list(zip(bad["first"], bad["second"]))

    def _n_datasets(self) -> int:
        return len(next(iter(self.results.values())).datasets) \
            if self.method == "hierarchical" else 1

    def _pair_verdicts(self, row, threshold: float) -> list[str]:
        """The verdicts of one row at ``threshold``: population and next dataset, or the one
        dataset."""
        first, second, reliable = row["first"], row["second"], bool(row["reliable"])
        pair = f"{first} vs {second}"
        if not reliable:  # one sentence: neither scope has a verdict
            return [verdict([np.nan] * 3, first, second, scope=pair, reliable=False)]
        result = self.results[(first, second)]
        # where the chains sit in several modes, the decision is theirs (the probabilities
        # mix the modes by estimated weights)
        return [verdict([row[f"{scope}_p_left"], row[f"{scope}_p_rope"], row[f"{scope}_p_right"]],
                        first, second, threshold=threshold,
                        scope=f"{pair}, {SCOPE_NAMES[scope]}" if len(self.scopes) > 1 else pair,
                        rope=self.rope,
                        decision=getattr(result, scope).decision(threshold) if row["modes"]
                        else None)
                for scope in self.scopes]

    def verdicts(self, threshold: float | None = None) -> list[str]:
        """One sentence per pair and scope (:func:`bayescomp.presentation.verdicts.verdict`) at
        ``threshold`` (default the result's, 0.95): population (delta0) and next dataset for
        the hierarchical model, the dataset for the correlated t-test."""
        threshold = self.threshold if threshold is None else threshold
        return [sentence for _, row in self.table.iterrows()
                for sentence in self._pair_verdicts(row, threshold)]

    def display_table(self) -> pd.DataFrame:
        """The table as the summary and the reports show it: per pair and scope, the
        probabilities under column names that say whose (``P(first better)``,
        ``P(equivalent)``, ``P(second better)``; ``first`` and ``second`` name the
        algorithms of the row) and the decision, the p-values and, for the hierarchical
        model, whether the fit can decide (``UNRELIABLE`` where not)."""
        t = self.table
        shown = pd.DataFrame({"first": t["first"], "second": t["second"]})
        for scope in self.scopes:
            where = f"{SCOPE_NAMES[scope]}: " if len(self.scopes) > 1 else ""
            shown[f"{where}P(first better)"] = t[f"{scope}_p_right"]
            shown[f"{where}P(equivalent)"] = t[f"{scope}_p_rope"]
            shown[f"{where}P(second better)"] = t[f"{scope}_p_left"]
            shown[f"{where}decision"] = t[f"{scope}_decision"]
        shown[f"{t['test'].iloc[0]} p_value"] = t.p_value
        shown["p_value corrected"] = t.p_value_corrected
        if self.method == "hierarchical":
            decisions = zip(*(t[f"{scope}_decision"] for scope in self.scopes))
            shown["fit"] = [("ok" if not modes else f"ok, {modes} modes agree" if
                             MODES_DISAGREE not in chosen else f"{modes} modes disagree")
                            if reliable else "UNRELIABLE" for reliable, modes, chosen in
                            zip(t.reliable.astype(bool), t.modes, decisions)]
            shown["attempts"] = t.attempts
        return shown

    def to_dict(self) -> dict:
        """Every number the summary shows, JSON-ready, each pair's probabilities keyed by
        the algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        pairs = []
        for _, row in self.table.iterrows():
            first, second = row["first"], row["second"]
            common = dict(threshold=self.threshold, rope=self.rope,
                          reliable=bool(row["reliable"]))
            entry = {"first": first, "second": second, "reliable": bool(row["reliable"]),
                     "attempts": int(row["attempts"]), "seed": int(row["seed"]),
                     "test": row["test"], "p_value": json_number(row["p_value"]),
                     "p_value_corrected": json_number(row["p_value_corrected"]),
                     "reject": bool(row["reject"])}
            for scope in self.scopes:
                entry[scope] = verdict_dict(
                    [row[f"{scope}_p_left"], row[f"{scope}_p_rope"], row[f"{scope}_p_right"]],
                    first, second, scope=f"{first} vs {second}, {SCOPE_NAMES[scope]}",
                    decision=row[f"{scope}_decision"] if row["modes"] else None, **common)
            if self.method == "hierarchical":
                entry["modes"] = modes_dict(self.results[(first, second)], self.threshold)
                if not row["reliable"]:
                    entry["problems"] = list(self.results[(first, second)].diagnostics.problems)
            pairs.append(entry)
        return {"method": self.method, "algorithms": list(self.algorithms),
                "n_datasets": self._n_datasets(), "rope": rope_dict(self.rope),
                "threshold": self.threshold, "correction": self.correction,
                "alpha": self.alpha, "seed": json_number(self.seed), "reliable": self.reliable,
                "unreliable_pairs": [list(p) for p in self.unreliable_pairs()], "pairs": pairs}

    def _problem_lines(self) -> list[str]:
        return [f"sampling problems, {a} vs {b}: "
                + "; ".join(self.results[(a, b)].diagnostics.problems)
                for a, b in self.unreliable_pairs()]

    def summary(self) -> str:
        test = self.table["test"].iloc[0]
        unreliable = self.unreliable_pairs()
        lines = [] if not unreliable else [
            f"UNRELIABLE: {len(unreliable)} of {len(self.table)} fits failed their sampler "
            "diagnostics after their retries; their probabilities are not a decision: "
            + ", ".join(f"{a} vs {b}" for a, b in unreliable)]
        lines += [
            f"All {len(self.table)} pairwise comparisons of {len(self.algorithms)} algorithms on "
            f"{self._n_datasets()} dataset(s): {self.method} (differences first - second), "
            f"ROPE {self.rope}, seed {self.seed}",
            f"decisions at {format_number(self.threshold)}; p-values: {test}, corrected by "
            f"{self.correction or 'nothing'}, reject at {format_number(self.alpha)}",
            *self.verdicts(),
            text_table(self.display_table(), index=False),
            *self._problem_lines(),
        ]
        if unreliable:
            lines.append("what to do: run longer (iter_warmup, iter_sampling), raise adapt_delta, "
                         "or more retries; see each pair's "
                         "result.summary()")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _report(self):
        facts = [f"{self.method}; differences first - second; ROPE {self.rope}; seed {self.seed}",
                 f"decisions at {format_number(self.threshold)}; p-values: "
                 f"{self.table['test'].iloc[0]}, corrected by {self.correction or 'nothing'}"]
        title = f"All pairwise comparisons of {len(self.algorithms)} algorithms"
        if self.method == "hierarchical":
            unreliable = self.unreliable_pairs()
            named = ": " + ", ".join(f"{a} vs {b}" for a, b in unreliable) if unreliable else ""
            facts.append(f"sampling problems in {len(unreliable)} of {len(self.table)} fits"
                         + named)
            facts += self._problem_lines()
            if unreliable:
                facts.insert(0, f"UNRELIABLE: {len(unreliable)} fit(s) failed their sampler "
                             "diagnostics after their retries, no decision is made for them: "
                             + ", ".join(f"{a} vs {b}" for a, b in unreliable))
                title += f" ({len(unreliable)} UNRELIABLE fit(s))"
        return title, facts, self.display_table()


def compare_all(scores: Scores, rope: RopeLike = 0.01, *, method: str = "auto",
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
    ...     result = compare_all(scores, 0.01, seed=1, chains=4)
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
    if seed is None:  # drawn once, as bayescomp.hierarchical draws it, and recorded
        seed = int(np.random.default_rng().integers(2 ** 31 - 1))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer or None, got {seed!r}")
    seed = int(seed)
    rope = Rope.coerce(rope)
    pairs = list(combinations(scores.algorithms, 2))

    from joblib import Parallel, delayed

    from bayescomp import sampling

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
                   "reject", "reliable", "attempts", "modes", "seed"]]
    return AllPairsResult(tuple(scores.algorithms), method, rope, correction, table, results,
                          seed=seed)
