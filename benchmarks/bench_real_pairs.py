"""Real benchmark pairs: the same verdict on every seed, and the time against an easy pair.

Run from the repository root, with a copy of the public repository BayesianTestsML/tutorial
(the data of Benavoli, Corani, Demsar & Zaffalon 2017, JMLR 18; GPL, so it is read from where
you cloned it and not shipped here)::

    git clone https://github.com/BayesianTestsML/tutorial /tmp/tutorial
    python benchmarks/bench_real_pairs.py /tmp/tutorial --out /tmp/pairs.md   # 8 seeds, every pair
    python benchmarks/bench_real_pairs.py /tmp/tutorial --seeds 3 --backend pystan --out /tmp/p.md

A clone of github.com/bogdanvuk/phd (decision-tree inducers on 51 UCI datasets, 5 x
5-fold; :func:`read_trees`) is read too: ``bench_real_pairs.py /tmp/phd --easy cart gale``,
and so is a clone of github.com/openml/automlbenchmark (seven frameworks on 39 OpenML tasks,
10 folds; :func:`read_automl`): ``bench_real_pairs.py /tmp/amlb --easy h2oautoml
randomforest``, and so is a clone of github.com/w4k2/lie (three scikit-learn classifiers on
18 small UCI datasets, 5 x 2-fold; :func:`read_five_by_two`): ``bench_real_pairs.py /tmp/lie
--easy kNN CART``, and so is a clone of github.com/jwainer/bbtcomp (15 classifiers on 132
datasets, 4-fold; :func:`read_bbtcomp`): ``bench_real_pairs.py /tmp/bbtcomp --easy lgbm dt
--pairs lr-ridge,lr-lda,lgbm-gbm,lgbm-xgb,lr-svml,rf-xrf,rf-svm``.
Any other collection in a CSV that ``bayescomp.read_csv`` reads (long or wide) is run the same
way when the easy pair is named: ``bench_real_pairs.py scores.csv --easy tree logistic
--pairs tree-tree_pruned``. ``sklearn_pairs.py`` beside this file makes such a file of
near-identical scikit-learn learners.

The collection: accuracy of five classifiers (naive Bayes ``nbc``, ``aode``, ``hnb``, C4.5
``j48`` and its grafted version ``j48gr``) on 54 UCI datasets, 10 x 10-fold cross-validation,
read from the tutorial's ``Julia/Data/*.dat``. Two datasets are both named ``credit``; they
become ``credit-1`` and ``credit-2`` in file order. ``j48`` and ``j48gr`` are the
near-identical pair: identical on every fold on 14 datasets, differences of one test case on
most of the others. ``nbc`` against ``aode`` is the easy pair each fit is timed against, in the
same run and seed.

Per pair and seed, ``bayescomp.hierarchical`` with the package's defaults at ROPE 0.01:
``seconds`` and ``vs_easy`` (the ratio to the easy pair's fit of that seed), ``attempts``, the
decisions on the population and the next dataset, ``modes`` ("separate", "crossing", "strata"
or ""), ``quadrature`` (the probabilities by quadrature, where the chains did not mix),
``p_population`` and ``p_next`` (each question's largest probability), ``next_hdi`` (the
next dataset's 95% interval),
the largest R-hat and smallest bulk ESS. The table and a summary per pair (are the decisions
the same on every seed?) are printed and written to ``--out``; what a run showed is
recorded by hand in ``benchmarks/results/real_pairs.md``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from over_seeds import summarise, write

EASY = ("nbc", "aode")


def read_tutorial(root: Path) -> bc.Scores:
    """The tutorial's five classifiers on 54 datasets as ``Scores`` (accuracy as a fraction)."""
    data = Path(root) / "Julia" / "Data"

    def lines(name):
        return [line.strip() for line in (data / f"{name}.dat").read_text().splitlines()
                if line.strip()]

    classifiers = lines("ClassifierNames")
    names = lines("DatasetNames")
    # Unique dataset labels: repeated names get their occurrence number.
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if names.count(name) == 1 else f"{name}-{seen[name]}")
    frame = pd.DataFrame({
        "algorithm": [classifiers[int(i) - 1] for i in lines("ClassifierID")],
        "dataset": [labels[int(i) - 1] for i in lines("DatasetID")],
        "score": np.array(lines("Percent_correct"), dtype=float) / 100,
    })
    # Each (classifier, dataset) block lists its 100 scores in the same split order.
    position = frame.groupby(["algorithm", "dataset"]).cumcount()
    frame["run"] = position // 10 + 1
    frame["fold"] = position % 10 + 1
    return bc.from_long(frame, n_folds=10)


#: where a clone of github.com/bogdanvuk/phd keeps its decision-tree inducers' results
TREE_RESULTS = Path("source") / "scripts" / "results" / "equi_temporal"
#: the inducers with 5 x 5-fold results on all 51 datasets (gatree and nodt have fewer runs on
#: some datasets)
TREE_INDUCERS = ("cart", "gale", "oc1", "oc1_es", "oc1_sa")


def read_trees(root: Path) -> bc.Scores:
    """Test accuracy of five decision-tree inducers on 51 UCI datasets, 5 x 5-fold
    cross-validation, from B. Vukobratovic's thesis repository: CART, GALE and OC1 with
    three of its searches (``oc1``, ``oc1_es``, ``oc1_sa``). Each file lists a dataset's 25
    results run by run, fold by fold; the runs and folds are paired across inducers by
    their position (that they shared the partitions is assumed, not documented)."""
    frames = []
    for inducer in TREE_INDUCERS:
        results = json.loads((Path(root) / TREE_RESULTS / f"{inducer}.js").read_text())
        frame = pd.DataFrame(results["cv_pc_run"])
        position = frame.groupby("dataset").cumcount()
        frames.append(pd.DataFrame({"dataset": frame["dataset"], "algorithm": inducer,
                                    "run": position // 5 + 1, "fold": position % 5 + 1,
                                    "score": frame["accuracy"]}))
    return bc.from_long(pd.concat(frames), n_folds=5)


#: where a clone of github.com/openml/automlbenchmark keeps the per-fold results of its 2019
#: study (Gijsbers et al., "An open source AutoML benchmark", AutoML workshop at ICML 2019)
AUTOML_RESULTS = Path("reports") / "old" / "tables" / "4h" / "all_results.csv"


def read_automl(root: Path) -> bc.Scores:
    """Test accuracy of seven frameworks (four AutoML systems, a random forest, a tuned random
    forest and a constant predictor; 4-hour budget) on 39 OpenML tasks, each its 10 folds,
    from the AutoML benchmark's 2019 results. A framework that failed on a fold has no score
    there (autoweka 21 folds, tpot 12, h2oautoml 11, autosklearn 3); that (task, fold) is left
    out for every framework, so that the scores stay paired, and what was left out is printed.
    rho stays 1/10: a left-out fold does not change the others' test sets."""
    frame = pd.read_csv(Path(root) / AUTOML_RESULTS, usecols=["task", "framework", "fold", "acc"])
    frame = frame.rename(columns={"task": "dataset", "framework": "algorithm", "acc": "score"})
    complete = frame["score"].notna().groupby([frame["dataset"], frame["fold"]]).transform("all")
    left_out = frame.loc[~complete, ["dataset", "fold"]].drop_duplicates()
    if len(left_out):
        total = frame.groupby(["dataset", "fold"]).ngroups
        print(f"left out {len(left_out)} (task, fold) of {total} where a framework has no score: "
              + ", ".join(f"{d} {n}" for d, n in left_out.groupby("dataset").size().items()))
    return bc.from_long(frame[complete].assign(run=1), n_folds=10)


#: where a clone of github.com/w4k2/lie keeps its 5 x 2-fold scores, one file per dataset
FIVE_BY_TWO_SCORES = "scores"
FIVE_BY_TWO_CLASSIFIERS = ("GNB", "kNN", "CART")


def read_five_by_two(root: Path, replication: int = 0) -> bc.Scores:
    """Test accuracy of Gaussian naive Bayes, k nearest neighbours and CART (scikit-learn's
    defaults) on 18 small UCI datasets (iris, wine, soybean, ...), 5 x 2-fold stratified
    cross-validation, from the repository of the study "How to design the fair experimental
    classifier evaluation" (github.com/w4k2/lie).
    Each ``scores/<dataset>_cv52.npy`` holds 2000 replications of the whole 5 x 2 design
    (replication, run, fold, classifier); ``replication`` picks one, a study as a researcher
    would have run it. The test sets hold 23 (soybean) to 1,000 instances, so the scores are
    coarse: on soybean GNB and CART score the same on 68% of the folds. rho = 1/2."""
    arrays = {name: [] for name in FIVE_BY_TWO_CLASSIFIERS}
    names = []
    for path in sorted((Path(root) / FIVE_BY_TWO_SCORES).glob("*_cv52.npy")):
        scores = np.load(path)[replication]              # run, fold, classifier
        names.append(path.name[:-len("_cv52.npy")])
        for index, name in enumerate(FIVE_BY_TWO_CLASSIFIERS):
            arrays[name].append(scores[:, :, index].reshape(-1))
    return bc.from_arrays(arrays, rho=0.5, datasets=names)


BBTCOMP_SCORES = Path("data-raw") / "ll.csv"


def read_bbtcomp(root: Path) -> bc.Scores:
    """Test accuracy of 16 scikit-learn, LightGBM and XGBoost classifiers on 132 PMLB
    datasets, 4-fold cross-validation, one row per fold, from the repository of the
    Bayesian Bradley-Terry comparison package (github.com/jwainer/bbtcomp, MIT licence;
    Wainer 2022). Few folds: each fold variance has 3 degrees of freedom, and the folds hold
    from 12 to tens of thousands of test cases, so that many pairs have identical scores
    on some datasets. ``qda`` is left out: two of its folds on lymphography are empty in
    the file. rho = 1/4."""
    frame = pd.read_csv(Path(root) / BBTCOMP_SCORES).drop(columns="qda")
    frame["fold"] = frame.groupby("db", sort=False).cumcount()
    return bc.from_wide(frame, dataset="db", run=None, n_folds=4)


def read_collection(source: str) -> bc.Scores:
    """The tutorial's collection, the thesis's trees, the AutoML benchmark's results, the
    5 x 2-fold scores or bbtcomp's 4-fold scores from a clone of its repository, else a CSV
    file."""
    path = Path(source)
    if (path / BBTCOMP_SCORES).is_file():
        return read_bbtcomp(path)
    if any((path / FIVE_BY_TWO_SCORES).glob("*_cv52.npy")):
        return read_five_by_two(path)
    if (path / TREE_RESULTS).is_dir():
        return read_trees(path)
    if (path / AUTOML_RESULTS).is_file():
        return read_automl(path)
    return read_tutorial(path) if path.is_dir() else bc.read_csv(path)


def timed(scores, first, second, seed, backend, settings):
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, first, second, rope=0.01, seed=seed, backend=backend,
                                 **settings)
    return result, time.perf_counter() - started


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tutorial", help="a clone of github.com/BayesianTestsML/tutorial, "
                        "or a CSV file of scores")
    parser.add_argument("--easy", nargs=2, default=EASY, metavar=("FIRST", "SECOND"),
                        help="the easy pair every fit is timed against (default nbc aode)")
    parser.add_argument("--seeds", type=int, default=8, help="fitting seeds 1..N")
    parser.add_argument("--backend", default="auto", choices=["auto", "cmdstanpy", "pystan"])
    parser.add_argument("--pairs", default="all",
                        help="'all', or pairs as first-second separated by commas")
    parser.add_argument("--adapt-delta", type=float,
                        help="NUTS's adapt_delta (default: the package's)")
    parser.add_argument("--iter-warmup", type=int,
                        help="warm-up iterations per chain (default: the package's)")
    # required: results/real_pairs.md is a curated record that a run must not overwrite
    parser.add_argument("--out", required=True, help="Markdown file the run is written to")
    args = parser.parse_args(argv)
    settings = {name: value for name, value in (("adapt_delta", args.adapt_delta),
                                                ("iter_warmup", args.iter_warmup))
                if value is not None}
    scores = read_collection(args.tutorial)
    easy = tuple(args.easy)
    pairs = (list(itertools.combinations(scores.algorithms, 2)) if args.pairs == "all" else
             [tuple(pair.split("-")) for pair in args.pairs.split(",")])
    timed(scores, *easy, 0, args.backend, settings)   # compile (or load) before anything is timed
    rows = []
    for seed in range(1, args.seeds + 1):
        _, easy_seconds = timed(scores, *easy, seed, args.backend, settings)
        for first, second in pairs:
            result, seconds = timed(scores, first, second, seed, args.backend, settings)
            rows.append(dict(
                pair=f"{first}-{second}", seed=seed, seconds=seconds,
                vs_easy=seconds / easy_seconds, attempts=len(result.attempts),
                reliable=result.reliable, population=result.population.decision(),
                next=result.next_dataset.decision(),
                modes=("" if not result.modes else
                       "separate" if result.modes_separate else
                       "strata" if result.modes[0].stratum else "crossing"),
                quadrature=result.by_quadrature,
                p_population=float(result.population.probabilities.max()),
                p_next=float(result.next_dataset.probabilities.max()),
                next_hdi=f"[{result.next_dataset.hdi_low:.4g}, {result.next_dataset.hdi_high:.4g}]",
                max_rhat=result.diagnostics.max_rhat,
                min_ess_bulk=result.diagnostics.min_ess_bulk))
            print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1,
                                                     float_format=lambda v: f"{v:.4g}"),
                  flush=True)
    table = pd.DataFrame(rows)
    summary = summarise(table, "pair", same_every_seed=lambda groups: groups.apply(
        lambda g: g["population"].nunique() == 1 and g["next"].nunique() == 1),
        mode_seeds=lambda groups: groups["modes"].agg(lambda v: int(np.sum(v != ""))))
    write(args.out, f"bench_real_pairs.py (seeds 1-{args.seeds}, backend {args.backend}, "
          f"ROPE 0.01, easy pair {easy[0]}-{easy[1]}"
          + "".join(f", {name} {value}" for name, value in settings.items()) + ")", summary, table, "pair")
    return table


if __name__ == "__main__":
    main()
