"""``bayescomp report``: a paper's analysis in one command, every sentence the numbers'.

One run of the command (and one of the library function behind it, with the same seed) on a
small simulated collection is shared by the tests: the paragraph is parsed back and each
number and decision compared with the result's; the LaTeX rows with ``to_frame()``; the
ROPE sensitivity with the pair table and with the draws; the faults end in one line.
"""
import contextlib
import io
import json
import os
import re

import numpy as np
import pandas as pd
import pytest

import bayescomp as bc
from bayescomp.cli.main import main
from bayescomp.models.joint_posterior import (next_dataset_masses, population_masses,
                                              reweighted_pair_table)
from bayescomp.models.paper_analysis import paper_analysis
from bayescomp.models.prior_reweighting import reweighting, weighted_estimate

SEED = 5
SHORT = dict(iter_warmup=300, iter_sampling=300)
SHORT_ARGS = ["--iter-warmup", "300", "--iter-sampling", "300"]
NAMES = ("knn", "svm", "tree")


def simulated(n_datasets=9, n_splits=15, seed=31):
    """knn best by 0.03; svm and tree 0.008 apart (near the ROPE's edge: undecided or
    equivalent), on datasets of 3 runs x 5 folds."""
    rng = np.random.default_rng(seed)
    base = [rng.uniform(0.7, 0.9) + rng.normal(0, 0.02, n_splits) for _ in range(n_datasets)]
    return bc.from_arrays({"knn": [b + 0.03 + rng.normal(0, 0.01, n_splits) for b in base],
                           "svm": [b + rng.normal(0, 0.01, n_splits) for b in base],
                           "tree": [b + 0.008 + rng.normal(0, 0.01, n_splits) for b in base]},
                          n_folds=5, datasets=[f"d{i}" for i in range(n_datasets)])


def write_csv(scores, path):
    scores.to_frame().to_csv(path, index=False)
    return path


def run_cli(args):
    """The exit code, stdout and stderr of the command line run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def scores():
    return simulated()


@pytest.fixture(scope="module")
def analysis(scores, stan_backend):
    """The library function behind the command, on the same scores and seed."""
    return paper_analysis(scores, rope=0.01, seed=SEED, backend=stan_backend, **SHORT)


@pytest.fixture(scope="module")
def cli_run(scores, stan_backend, tmp_path_factory):
    """``bayescomp report`` run once, from an empty working directory."""
    work = tmp_path_factory.mktemp("report")
    path = write_csv(scores, work / "scores.csv")
    cwd = work / "cwd"
    cwd.mkdir()
    out = work / "out"
    here = os.getcwd()
    os.chdir(cwd)
    try:
        code, stdout, stderr = run_cli(["report", path, "--out", out, "--seed", SEED,
                                        "--backend", stan_backend, *SHORT_ARGS])
    finally:
        os.chdir(here)
    return dict(code=code, stdout=stdout, stderr=stderr, out=out, cwd=cwd,
                document=json.loads((out / "report.json").read_text()))


# --- the command: its files, its exit code, the library's numbers ----------------------------

@pytest.mark.stan
def test_report_writes_its_files_in_dir_and_nothing_else(cli_run, analysis):
    out = cli_run["out"]
    assert cli_run["code"] == (0 if analysis.reliable else 1), cli_run["stderr"]
    others = [name for name in NAMES if name != analysis.best]
    expected = {"report.md", "report.tex", "report.json", "pairs.png", "bayesian_cd.png",
                "critical_difference.png", *(f"best_vs_{name}.png" for name in others)}
    assert {p.name for p in out.iterdir()} == expected   # no staging file left behind
    assert list(cli_run["cwd"].iterdir()) == []
    listed = re.search(r"<!-- bayescomp analysis: (.*) -->", (out / "report.md").read_text())
    assert set(listed.group(1).split(", ")) == expected   # --overwrite replaces exactly these
    for name in expected - {"report.md", "report.tex", "report.json"}:
        assert (out / name).read_bytes().startswith(b"\x89PNG")


@pytest.mark.stan
def test_the_command_is_the_library_called_directly(cli_run, analysis):
    document, direct = cli_run["document"], analysis.to_dict()
    for key in ("algorithms", "n_datasets", "rope", "seed", "prior", "best", "reliable",
                "best_against_others", "rope_sensitivity", "prior_sensitivity", "friedman",
                "paragraph"):
        assert document[key] == json.loads(json.dumps(direct[key])), key
    assert document["joint"]["pairs"] == json.loads(json.dumps(direct["joint"]["pairs"]))
    assert analysis.paragraph() in cli_run["stdout"]


def heavy_tailed(n_datasets=12, n_splits=10, seed=5):
    """a and b each shifted from c by 0.01 times a Cauchy draw per dataset: a heavy-tailed
    population (nu's posterior near 1), where nu's two priors weigh the draws alike."""
    rng = np.random.default_rng(seed)
    base = [rng.uniform(0.7, 0.9) + rng.normal(0, 0.02, n_splits) for _ in range(n_datasets)]
    shifts = {name: 0.01 * rng.standard_t(1, n_datasets) for name in ("a", "b")}
    return bc.from_arrays(
        {**{name: [b + shift[i] + rng.normal(0, 0.01, n_splits) for i, b in enumerate(base)]
            for name, shift in shifts.items()},
         "c": [b + rng.normal(0, 0.01, n_splits) for b in base]},
        n_folds=n_splits, datasets=[f"d{i}" for i in range(n_datasets)])


@pytest.mark.stan
def test_the_joint_fit_is_compare_many_and_so_is_a_refit(analysis, scores, stan_backend):
    """Every fit is compare_many with the seed. On these scores the population is normal,
    nu's posterior lies where baycomp's prior has the heavier tail, and the weights' Pareto
    shape is above 0.7: the other prior is refitted."""
    assert list(analysis.prior_tables) == ["paper", "baycomp"]
    assert set(analysis.prior_fits) | set(analysis.prior_reweighted) == {"paper", "baycomp"}
    for prior, fit in analysis.prior_fits.items():
        direct = bc.compare_many(scores, rope=0.01, seed=SEED, prior=prior,
                                 backend=stan_backend, **SHORT)
        pd.testing.assert_frame_equal(fit.to_frame(), direct.to_frame())
        pd.testing.assert_frame_equal(analysis.prior_tables[prior], direct.to_frame())
    weights = reweighting(analysis.joint.idata.posterior["nu"].values, "paper",
                          bc.PRIORS["paper"], bc.PRIORS["baycomp"])
    assert ("baycomp" in analysis.prior_fits) == (weights.pareto_k > 0.7)


@pytest.mark.stan
def test_the_other_prior_read_off_the_draws_agrees_with_its_own_fit(stan_backend):
    """Two routes to the pair table under baycomp's prior: the joint fit's draws under the
    paper's, reweighted, and baycomp's own fit. Every probability agrees within four Monte
    Carlo errors (the two estimates' errors combined); the report says how it was read."""
    heavy = heavy_tailed()
    analysis = paper_analysis(heavy, rope=0.01, seed=1, backend=stan_backend, **SHORT)
    assert list(analysis.prior_fits) == ["paper"], "the test is of the reweighted table"
    weights = analysis.prior_reweighted["baycomp"]
    assert weights.base == "paper" and weights.pareto_k <= 0.7
    own = bc.compare_many(heavy, rope=0.01, seed=1, prior="baycomp", backend=stan_backend,
                          **SHORT)
    table = analysis.prior_tables["baycomp"]
    post = analysis.joint.idata.posterior
    masses = population_masses(post, analysis.rope), next_dataset_masses(post, analysis.rope)
    for p, row in enumerate(table.itertuples()):
        pair = (row.first, row.second)
        for scope, per_draw, estimate in (("population", masses[0], own.population[pair]),
                                          ("next_dataset", masses[1], own.next_dataset[pair])):
            mine = table.loc[p, [f"{scope}_p_{r}" for r in ("left", "rope", "right")]]
            _, errors = weighted_estimate(per_draw[..., p, :], weights.weights)
            assert np.all(np.abs(mine.to_numpy(dtype=float) - estimate.probabilities)
                          <= 4 * np.hypot(errors, estimate.mcse) + 1e-12), (pair, scope)
    assert "Under the baycomp prior (the same draws, reweighted by importance sampling)" \
        in analysis.paragraph()
    assert f"Pareto k {weights.pareto_k:.2f}" in analysis.to_markdown()
    document = analysis.to_dict()["prior_sensitivity"]
    assert document["reweighted"]["baycomp"]["from"] == "paper"
    assert document["priors"] == ["paper", "baycomp"]


@pytest.mark.stan
def test_equal_weights_give_the_pair_table(analysis):
    """The reweighted table's route with equal weights is the joint fit's own pair table."""
    post = analysis.joint.idata.posterior
    shape = (post.sizes["chain"], post.sizes["draw"])
    table = reweighted_pair_table(analysis.joint, np.full(shape, 1 / np.prod(shape)))
    pd.testing.assert_frame_equal(table, analysis.joint.to_frame(), rtol=1e-10)


# --- the paragraph, parsed back -------------------------------------------------------------

def rounded(value, digits=3):
    return f"{value:.{digits}f}"


def rounded_undecided(value):
    """An undecided pair's probability as the paragraph prints it: 3 decimals, or 4 where 3
    would print it at 0.95 or above."""
    return rounded(value) if float(rounded(value)) < 0.95 else rounded(value, 4)


def margin_of(phrase_note, label, value):
    """The note after an undecided clause: present exactly where the probability reaches
    0.95 (the table's decision then lies within two Monte Carlo errors of it)."""
    if value < 0.95:
        return phrase_note is None
    return phrase_note == f"P({label}) is within 2 Monte Carlo errors of 0.95"


def phrases_of(sentence, opening):
    assert sentence.startswith(opening + ", ") and sentence.endswith(".")
    return sentence[len(opening) + 2:-1].split("; ")


def pair_of(name, table):
    """The row of ``table`` that ``a vs b`` names (in either order)."""
    a, b = name.split(" vs ")
    return table[((table["first"] == a) & (table["second"] == b)) |
                 ((table["first"] == b) & (table["second"] == a))].iloc[0]


def names_of(text):
    """``x``, ``x and y``, ``x, y and z`` read back as a list."""
    return re.split(r", | and (?!.* and )", text)


def check_pair_phrases(phrases, table, scope):
    """The clauses of one question (paper_paragraph.decision_clauses) read back: every pair
    of the table is accounted for once, with its decision and the probabilities it holds."""
    seen = []
    regions = lambda row: {f"{row['first']} better": row[f"{scope}_p_right"],  # noqa: E731
                           "equivalent": row[f"{scope}_p_rope"],
                           f"{row['second']} better": row[f"{scope}_p_left"]}
    undecided_rows = table[table[f"{scope}_decision"] == "undecided"]
    for phrase in phrases:
        winner = re.fullmatch(r"(\S+) is better than (.+)", phrase)
        beaten = re.fullmatch(r"(.+) are better than (\S+)", phrase)
        same = re.fullmatch(r"(\S+) and (\S+) are practically equivalent \(P = ([\d.]+)\)",
                            phrase)
        same_group = re.fullmatch(r"(\d+) pairs are practically equivalent \(P\(equivalent\) "
                                  r"(?:from ([\d.]+) to ([\d.]+)|= ([\d.]+) each)\): (.+)",
                                  phrase)
        undecided = re.fullmatch(r"(\S+) against (\S+) is undecided \(P\((\S+) better\) = "
                                 r"([\d.]+), P\(equivalent\) = ([\d.]+), P\((\S+) better\) = "
                                 r"([\d.]+)\)(?:: its (.+))?", phrase)
        undecided_group = re.fullmatch(r"(the other|all) (\d+) pairs are undecided \(the largest "
                                       r"of their probabilities is P\((.+?)\) = ([\d.]+), "
                                       r"(\S+ vs \S+)\)(?:: that (.+))?", phrase)
        assert winner or beaten or same or same_group or undecided or undecided_group, phrase
        if beaten or winner:
            # one winner and the algorithms it beats, or (grouped by the loser) the winners
            listed = beaten.group(1) if beaten else winner.group(2)
            named = re.findall(r"(\S+) \(P = ([\d.]+)\)", listed)
            items = [f"{name} (P = {p})" for name, p in named]
            assert listed == (items[0] if len(items) == 1 else
                              ", ".join(items[:-1]) + " and " + items[-1])
            assert len(items) > 1 or not beaten   # a loser's clause names two winners or more
            for name, p in named:
                better, other = (name, beaten.group(2)) if beaten else (winner.group(1), name)
                row = pair_of(f"{better} vs {other}", table)
                assert row[f"{scope}_decision"] == f"{better} better"
                assert p == rounded(regions(row)[f"{better} better"])
                seen.append((row["first"], row["second"]))
        elif same:
            row = pair_of(f"{same.group(1)} vs {same.group(2)}", table)
            assert row[f"{scope}_decision"] == "equivalent"
            assert same.group(3) == rounded(row[f"{scope}_p_rope"])
            seen.append((row["first"], row["second"]))
        elif same_group:
            rows = [pair_of(name, table) for name in names_of(same_group.group(5))]
            assert int(same_group.group(1)) == len(rows) > 2
            assert all(row[f"{scope}_decision"] == "equivalent" for row in rows)
            inside = [row[f"{scope}_p_rope"] for row in rows]
            low, high = rounded(min(inside)), rounded(max(inside))
            # one value said once where the two ends round alike, else the range
            assert ((same_group.group(4),) if low == high else
                    (same_group.group(2), same_group.group(3))) == ((low,) if low == high
                                                                    else (low, high))
            seen += [(row["first"], row["second"]) for row in rows]
        elif undecided:
            a, b = undecided.group(1), undecided.group(2)
            row = pair_of(f"{a} vs {b}", table)
            assert row[f"{scope}_decision"] == "undecided" and (a, b) == (row["first"],
                                                                           row["second"])
            p = regions(row)
            assert [undecided.group(i) for i in (4, 5, 7)] == [
                rounded_undecided(p[f"{a} better"]), rounded_undecided(p["equivalent"]),
                rounded_undecided(p[f"{b} better"])]
            top = max(p, key=p.get)
            assert margin_of(undecided.group(8), top, p[top])
            seen.append((a, b))
        else:
            assert int(undecided_group.group(2)) == len(undecided_rows) > 2
            assert (undecided_group.group(1) == "all") == (len(undecided_rows) == len(table))
            largest = max(((label, value, row) for _, row in undecided_rows.iterrows()
                           for label, value in regions(row).items()), key=lambda item: item[1])
            assert undecided_group.group(3) == largest[0]
            assert undecided_group.group(4) == rounded_undecided(largest[1])
            assert undecided_group.group(5) == f"{largest[2]['first']} vs {largest[2]['second']}"
            assert margin_of(undecided_group.group(6), largest[0], largest[1])
            seen += list(zip(undecided_rows["first"], undecided_rows["second"]))
    assert sorted(seen) == sorted(zip(table["first"], table["second"]))


def changes_of(sentence, opening):
    """The decision changes a sensitivity sentence lists, as {(first, second, question,
    label): (before, after)}; {} when it says that every decision stays the same."""
    assert sentence.startswith(opening)
    if sentence.endswith("every decision stays the same."):
        return {}
    found = {}
    for clause in sentence.split("the decisions change: ", 1)[1].removesuffix(".").split("; "):
        match = re.fullmatch(r"(?:at (\S+) times the ROPE, )?on the (population|new dataset), "
                             r"(.+?) becomes (.+?) for (.+)", clause)
        assert match, clause
        for name in names_of(match.group(5)):
            a, b = name.split(" vs ")
            question = "population" if match.group(2) == "population" else "next_dataset"
            found[(a, b, question, match.group(1))] = (match.group(3), match.group(4))
    return found


def check_changes(sentence, opening, base, other):
    """A sensitivity sentence: no change when every decision is the same, else every changed
    decision, with both decisions."""
    changed = {(a["first"], a["second"], scope, None): (a[f"{scope}_decision"],
                                                         b[f"{scope}_decision"])
               for (_, a), (_, b) in zip(base.iterrows(), other.iterrows())
               for scope in ("population", "next_dataset")
               if a[f"{scope}_decision"] != b[f"{scope}_decision"]}
    assert changes_of(sentence, opening) == changed


@pytest.mark.stan
def test_every_number_and_decision_of_the_paragraph_is_the_results(analysis):
    joint, table = analysis.joint, analysis.joint.to_frame()
    assert joint.reliable, "the collection is meant to give a reliable fit"
    sentences = analysis.to_dict()["paragraph"]["sentences"]
    assert " ".join(sentences) == analysis.paragraph()
    opening, best, population, next_dataset, rope, prior, friedman = sentences

    match = re.fullmatch(r"We compared (\d+) algorithms \((.+)\) on (\d+) datasets .*prior "
                         r"(\w+), seed (\d+)\), with a region of practical equivalence \(ROPE\) "
                         r"of \[(\S+), (\S+)\] in the units of the scores\.", opening)
    assert (int(match.group(1)), int(match.group(3))) == (3, 9)
    assert re.split(r", | and ", match.group(2)) == list(NAMES)
    assert (match.group(4), int(match.group(5))) == ("paper", SEED)
    assert (float(match.group(6)), float(match.group(7))) == (-0.01, 0.01)

    ranked = joint.p_best.sort_values(ascending=False)
    if ranked.iloc[0] >= 0.95:
        match = re.match(r"(\S+) is the best algorithm with probability ([\d.]+) ", best)
    else:
        match = re.search(r": (\S+) is the most probably best, P\(best\) = ([\d.]+),", best)
    assert match.group(1) == joint.best == analysis.best == ranked.index[0]
    assert match.group(2) == rounded(ranked.iloc[0])

    check_pair_phrases(phrases_of(population, "On the population of datasets (the mean "
                                              "difference delta0)"), table, "population")
    check_pair_phrases(phrases_of(next_dataset, "On a new dataset"), table, "next_dataset")

    sens = analysis.rope_sensitivity
    widths = re.findall(r"\[(\S+), (\S+)\] \((\S+) times\)", rope)
    assert [(float(lo), float(hi), float(f)) for lo, hi, f in widths] == [
        (-0.01 * f, 0.01 * f, f) for f in (0.5, 2.0)]
    # every decision that differs from the pair table's, with both decisions
    base = table.set_index(["first", "second"])
    expected = {(r["first"], r["second"], scope, f"{r['factor']:g}"):
                (base.loc[(r["first"], r["second"]), f"{scope}_decision"],
                 r[f"{scope}_decision"])
                for _, r in sens[sens.factor != 1].iterrows()
                for scope in ("population", "next_dataset")
                if r[f"{scope}_decision"] != base.loc[(r["first"], r["second"]),
                                                      f"{scope}_decision"]}
    assert changes_of(rope, "Read from the same posterior draws") == expected

    check_changes(prior, "Under the baycomp prior (the same draws, reweighted by importance "
                  "sampling), " if "baycomp" in analysis.prior_reweighted else
                  "Refitted under the baycomp prior (same seed), ", table,
                  analysis.prior_tables["baycomp"])

    f = analysis.friedman
    match = re.search(r"the Friedman test (rejects|does not reject) equal average ranks at "
                      r"alpha = ([\d.]+) \(chi2 = ([\d.e+]+), p = ([\d.e-]+); average ranks "
                      r"(.+?)\)", friedman)
    assert (match.group(1) == "rejects") == (f.p_value < f.alpha) and float(match.group(2)) == f.alpha
    assert float(match.group(3)) == pytest.approx(f.statistic, rel=5e-4)
    assert float(match.group(4)) == pytest.approx(f.p_value, rel=5e-4)
    ranks = dict(item.rsplit(" ", 1) for item in match.group(5).split(", "))
    assert {a: float(r) for a, r in ranks.items()} == pytest.approx(
        dict(zip(f.algorithms, f.average_ranks)), rel=5e-4)
    significant = re.findall(r"(\S+) against (\S+) \(p [=<] [\d.]+\)", friedman)
    assert significant == [(r.first, r.second) for r in f.pairwise.itertuples()
                           if r.holm_significant]


def test_decision_clauses_group_many_pairs_and_keep_every_probability():
    """Ten pairs of five algorithms: a winner's clause names all it beats, three equivalent
    pairs are counted and named with their range, two undecided ones each keep their three
    probabilities; three undecided pairs alone are counted with the largest probability."""
    from bayescomp.presentation.paper_paragraph import decision_clauses

    pairs = [("a", "b"), ("a", "c"), ("a", "d"), ("a", "e"), ("b", "c"), ("b", "d"),
             ("b", "e"), ("c", "d"), ("c", "e"), ("d", "e")]
    rows = pd.DataFrame({
        "first": [a for a, _ in pairs], "second": [b for _, b in pairs],
        "population_p_left": [0.01, 0.02, 0.0, 0.99, 0.01, 0.30, 0.98, 0.5, 0.97, 0.9991],
        "population_p_rope": [0.03, 0.96, 0.97, 0.01, 0.99, 0.45, 0.02, 0.1, 0.03, 0.0009],
        "population_p_right": [0.96, 0.02, 0.03, 0.0, 0.0, 0.25, 0.0, 0.4, 0.0, 0.0],
        "population_decision": ["a better", "equivalent", "equivalent", "e better",
                                "equivalent", "undecided", "e better", "undecided",
                                "e better", "e better"]})
    clauses = decision_clauses(rows, "population", 0.95)
    assert clauses == [
        "a is better than b (P = 0.960)",
        "e is better than a (P = 0.990), b (P = 0.980), c (P = 0.970) and d (P = 0.999)",
        "3 pairs are practically equivalent (P(equivalent) from 0.960 to 0.990): a vs c, "
        "a vs d and b vs c",
        "b against d is undecided (P(b better) = 0.250, P(equivalent) = 0.450, P(d better) = "
        "0.300)",
        "c against d is undecided (P(c better) = 0.400, P(equivalent) = 0.100, P(d better) = "
        "0.500)"]
    check_pair_phrases(clauses, rows, "population")   # the parser reads back every kind

    undecided = rows.iloc[[5, 7]].copy()
    undecided = pd.concat([undecided, rows.iloc[[1]].assign(population_decision="undecided")])
    clauses = decision_clauses(undecided, "population", 0.95)
    # undecided at 0.96: within two Monte Carlo errors of the threshold, which the clause says
    assert clauses == ["all 3 pairs are undecided (the largest of their probabilities is "
                       "P(equivalent) = 0.9600, a vs c): that P(equivalent) is within 2 Monte "
                       "Carlo errors of 0.95"]
    check_pair_phrases(clauses, undecided, "population")
    # the AutoML benchmark's tunedrandomforest vs tpot (seed 1): P(equivalent) 0.9502 was
    # undecided; at 0.9496 (which 3 decimals print as 0.950) there is nothing to explain,
    # and 4 decimals show it below the threshold
    near = rows.iloc[[5, 7]].copy()
    near["population_p_left"], near["population_p_rope"], near["population_p_right"] = (
        [0.0498, 0.0504], [0.9502, 0.9496], [0.0, 0.0])
    clauses = decision_clauses(near, "population", 0.95)
    assert clauses == [
        "b against d is undecided (P(b better) = 0.000, P(equivalent) = 0.9502, P(d better) "
        "= 0.050): its P(equivalent) is within 2 Monte Carlo errors of 0.95",
        "c against d is undecided (P(c better) = 0.000, P(equivalent) = 0.9496, P(d better) "
        "= 0.050)"]
    check_pair_phrases(clauses, near, "population")
    # the AutoML report (seed 1): six frameworks each beat constantpredictor, one clause by
    # the loser rather than six by the winners
    base = pd.DataFrame({"first": ["c"] * 3 + ["a"], "second": ["a", "b", "d", "b"],
                         "population_p_left": [0.9999, 0.998, 0.97, 0.3],
                         "population_p_rope": [0.0001, 0.002, 0.03, 0.4],
                         "population_p_right": [0.0, 0.0, 0.0, 0.3],
                         "population_decision": ["a better", "b better", "d better",
                                                 "undecided"]})
    clauses = decision_clauses(base, "population", 0.95)
    assert clauses[0] == "a (P = 1.000), b (P = 0.998) and d (P = 0.970) are better than c"
    check_pair_phrases(clauses, base, "population")
    # the trees' report (seed 1): four equivalent pairs at 0.9997-1.0000 all print as 1.000,
    # said once rather than as a range from 1.000 to 1.000
    alike = rows.iloc[[1, 2, 4]].copy()
    alike["population_p_rope"] = [0.9997, 1.0, 0.99981]
    clauses = decision_clauses(alike, "population", 0.95)
    assert clauses == ["3 pairs are practically equivalent (P(equivalent) = 1.000 each): a vs c, "
                       "a vs d and b vs c"]
    check_pair_phrases(clauses, alike, "population")


def test_change_clauses_group_the_pairs_of_one_change():
    """Two pairs that go from equivalent to undecided on the population share a clause; a
    change on the new dataset has its own; the sentence parser reads them all back."""
    from bayescomp.presentation.paper_paragraph import change_clauses, changes

    base = pd.DataFrame({"first": ["a", "a", "b"], "second": ["b", "c", "c"],
                         "population_decision": ["equivalent", "equivalent", "c better"],
                         "next_dataset_decision": ["undecided", "undecided", "undecided"]})
    other = base.assign(population_decision=["undecided", "undecided", "c better"],
                        next_dataset_decision=["undecided", "undecided", "c better"])
    clauses = change_clauses(changes(base, other), "at 0.5 times the ROPE")
    assert clauses == [
        "at 0.5 times the ROPE, on the population, equivalent becomes undecided for a vs b "
        "and a vs c",
        "at 0.5 times the ROPE, on the new dataset, undecided becomes c better for b vs c"]
    sentence = "Read from the same draws, the decisions change: " + "; ".join(clauses) + "."
    assert changes_of(sentence, "Read") == {
        ("a", "b", "population", "0.5"): ("equivalent", "undecided"),
        ("a", "c", "population", "0.5"): ("equivalent", "undecided"),
        ("b", "c", "next_dataset", "0.5"): ("undecided", "c better")}


@pytest.mark.stan
def test_every_number_in_the_paragraph_is_in_report_json(cli_run):
    document = cli_run["document"]
    text = document["paragraph"]["text"]
    pool = np.array(leaves({k: v for k, v in document.items() if k != "paragraph"}))
    for token in re.findall(r"(?<![<\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", text):
        decimals = len(token.split("e")[0].split(".")[1]) if "." in token else 0
        exponent = int(token.split("e")[1]) if "e" in token else 0
        tolerance = 0.5 * 10.0 ** (exponent - decimals) * 1.001 + 1e-12
        # a number written with 4 significant digits (chi2, p-values) is within its last digit
        tolerance = max(tolerance, 5e-4 * abs(float(token)))
        assert np.any(np.abs(pool - float(token)) <= tolerance), token


def leaves(document):
    if isinstance(document, dict):
        return [v for value in document.values() for v in leaves(value)]
    if isinstance(document, list):
        return [v for value in document for v in leaves(value)]
    if isinstance(document, (int, float)) and not isinstance(document, bool):
        return [float(document)]
    return []


# --- the LaTeX table, the ROPE and the best against the others -------------------------------

@pytest.mark.stan
def test_latex_rows_are_the_pair_table(cli_run, analysis):
    tex = (cli_run["out"] / "report.tex").read_text()
    body = tex.split("\\midrule\n")[1].split("\n\\bottomrule")[0]
    rows = [line.removesuffix(" \\\\").split(" & ") for line in body.splitlines()]
    frame = analysis.joint.to_frame()
    assert len(rows) == len(frame)
    columns = ["first", "second", "delta0_mean", "delta0_hdi_low", "delta0_hdi_high",
               *(f"{scope}_{c}" for scope in ("population", "next_dataset")
                 for c in ("p_right", "p_rope", "p_left", "decision"))]
    for cells, (_, row) in zip(rows, frame.iterrows()):
        assert len(cells) == len(columns)
        for cell, column in zip(cells, columns):
            value = row[column]
            if isinstance(value, str):
                assert cell == value.replace("_", "\\_"), column
            elif "_p_" in column:   # probabilities: 4 decimals
                assert cell == f"{value:.4f}", column
            else:                    # numbers: 4 significant digits
                assert float(cell) == pytest.approx(value, rel=5e-4), column


@pytest.mark.stan
def test_rope_sensitivity_is_the_pair_table_at_1x_and_the_draws_elsewhere(analysis):
    table, sens = analysis.joint.to_frame(), analysis.rope_sensitivity
    assert sorted(set(sens.factor)) == [0.5, 1.0, 2.0]
    at_one = sens[sens.factor == 1].reset_index(drop=True)
    compared = [c for c in table.columns if c in ("first", "second") or "_p_" in c
                or c.endswith("decision")]
    assert len(compared) == 10
    for column in compared:   # the same numbers, not close ones: the same draws, the same code
        assert at_one[column].tolist() == table[column].tolist(), column
    effects, names = analysis.joint.population_draws, list(analysis.joint.algorithms)
    for row in table.itertuples():
        delta0 = effects[:, names.index(row.first)] - effects[:, names.index(row.second)]
        rope_p = []
        for factor in (0.5, 1.0, 2.0):
            r = sens[(sens.factor == factor) & (sens["first"] == row.first) &
                     (sens["second"] == row.second)].iloc[0]
            assert (r.rope_low, r.rope_high) == (-0.01 * factor, 0.01 * factor)
            # P(equivalent) of delta0: the share of its draws (every draw's copies of delta0)
            # inside the scaled ROPE
            inside = np.mean(np.abs(delta0) <= 0.01 * factor)
            assert r.population_p_rope == pytest.approx(inside, abs=1e-12)
            rope_p.append(r.next_dataset_p_rope)
        assert rope_p == sorted(rope_p)   # a wider ROPE holds more of every distribution


@pytest.mark.stan
def test_best_against_each_other_reads_best_minus_other(analysis, scores):
    best, table = analysis.best, analysis.joint.to_frame()
    assert list(analysis.best_pairs["first"]) == [best, best]
    for pair in analysis.best_pairs.itertuples():
        row = table[(table["first"].isin([best, pair.second])) &
                    (table["second"].isin([best, pair.second]))].iloc[0]
        sign = 1 if row["first"] == best else -1
        assert pair.delta0_mean == sign * row["delta0_mean"]
        estimate = analysis.joint.next_dataset[(row["first"], row["second"])]
        assert pair.next_mean == sign * estimate.mean
        assert (pair.next_hdi_low, pair.next_hdi_high) == (
            (estimate.hdi_low, estimate.hdi_high) if sign == 1 else
            (-estimate.hdi_high, -estimate.hdi_low))
        regions = ("p_right", "p_left") if sign == 1 else ("p_left", "p_right")
        assert pair.population_p_right == row[f"population_{regions[0]}"]
        assert pair.next_dataset_p_left == row[f"next_dataset_{regions[1]}"]
        assert pair.population_decision == row["population_decision"]
        rows = analysis.best_datasets[analysis.best_datasets["second"] == pair.second]
        for dataset in rows.itertuples():
            values = scores.dataset(dataset.dataset).values
            raw = values[scores.algorithm_index(best)] - values[scores.algorithm_index(pair.second)]
            assert dataset.mean == pytest.approx(raw.mean(), abs=1e-12)
            assert dataset.delta_hdi_low <= dataset.delta_mean <= dataset.delta_hdi_high
            assert dataset.ttest_hdi_low < raw.mean() < dataset.ttest_hdi_high


# --- unreliable fits and faults --------------------------------------------------------------

@pytest.mark.stan
def test_an_unreliable_fit_gives_no_verdict_and_exits_1(scores, tmp_path, stan_backend):
    path = write_csv(scores, tmp_path / "scores.csv")
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["report", path, "--out", out, "--backend", stan_backend,
                                    "--chains", "2", "--iter-warmup", "20", "--iter-sampling",
                                    "20", "--retries", "0", "--no-prior-sensitivity"])
    document = json.loads((out / "report.json").read_text())
    assert code == 1 and document["reliable"] is False
    assert "bayescomp: UNRELIABLE: the joint model (paper prior) failed" in stderr
    report = (out / "report.md").read_text()
    assert report.startswith("# Comparison of 3 algorithms on 9 datasets (UNRELIABLE)")
    assert "What to do: run longer" in report and "Not checked (--no-prior-sensitivity)" in report
    text = document["paragraph"]["text"]
    assert "names no best algorithm and decides no pair" in text
    assert " is better than " not in text and "is the best algorithm" not in text
    assert document["prior_sensitivity"] is None
    decisions = {p[scope]["decision"] for p in document["joint"]["pairs"]
                 for scope in ("population", "next_dataset")}
    assert decisions == {"unreliable (sampling problems)"}


def one_line_error(args, tmp_path):
    """The one error line of a command that exits 2 having written nothing (a warning on
    the input, one line of its own, may come before it)."""
    code, stdout, stderr = run_cli(args)
    lines = stderr.strip().splitlines()
    assert code == 2 and lines[-1].startswith("bayescomp: error: "), stderr
    assert all(line.startswith("warning: ") for line in lines[:-1]), stderr
    assert stdout == "" and not (tmp_path / "out").exists()
    return lines[-1]


def test_faults_are_one_line_before_any_fit(tmp_path):
    scores = simulated(n_datasets=3, n_splits=10)
    path = write_csv(scores, tmp_path / "scores.csv")
    out = ["--out", tmp_path / "out"]
    line = one_line_error(["report", path, *out, "--algorithms", "knn,zzz"], tmp_path)
    assert line.startswith(f"bayescomp: error: {path}: ") and "'zzz'" in line
    line = one_line_error(["report", path, *out, "--algorithms", "knn,svm"], tmp_path)
    assert "at least 3 algorithms" in line and "['knn', 'svm']" in line
    assert line.endswith("for two, use bayescomp.hierarchical (bayescomp compare)")
    one = write_csv(scores.subset(datasets=["d0"]), tmp_path / "one.csv")
    line = one_line_error(["report", one, *out], tmp_path)
    assert line.endswith("the joint model needs at least 2 datasets, got 1")
    # the joint model needs at least 3 splits on every dataset: d1 has 2
    with pytest.warns(bc.exceptions.InputWarning, match="'d1' \\(2 scores\\)"):
        short = bc.from_arrays({a: [d.values[i][: 2 if d.name == "d1" else 10]
                                    for d in scores.datasets] for i, a in enumerate(NAMES)},
                               n_folds=5, datasets=list(scores.dataset_names))
    path = write_csv(short, tmp_path / "short.csv")
    line = one_line_error(["report", path, *out], tmp_path)
    assert "at least 3 splits" in line and "1 of 3 have 2 ('d1')" in line
    assert "d0" not in line
    line = one_line_error(["report", path, *out, "--prior", "gaussian"], tmp_path)
    assert "Student-t prior" in line
    assert one_line_error(["report", path], tmp_path).endswith("report needs --out DIR: the "
                                                               "report is the files written there")


@pytest.mark.parametrize("seconds", [["c", "c"], ["c", "b"]])
def test_rows_turned_to_read_best_minus_other(seconds):
    """best - other: where the best is the second algorithm the difference changes sign, its
    interval turns round and P(left) and P(right) swap; where it is first nothing moves.
    Every row flipping (the best the last algorithm) once gave both regions the same value:
    pandas handed back a view of the block being written."""
    from bayescomp.models.paper_analysis import _oriented

    table = pd.DataFrame(dict(first=["a", "c"] if seconds[1] == "b" else ["a", "b"],
                              second=seconds, p_left=[0.1, 0.2], p_rope=[0.3, 0.3],
                              p_right=[0.6, 0.5], delta_mean=[1.0, 2.0],
                              delta_hdi_low=[0.5, 1.5], delta_hdi_high=[1.5, 2.5]))
    turned = _oriented(table, "c")
    assert list(turned["first"]) == ["c", "c"]
    flipped = (table["second"] == "c").to_numpy()
    for row, flip in enumerate(flipped):
        original = table.iloc[row]
        expected = ([original.p_right, original.p_rope, original.p_left,
                     -original.delta_mean, -original.delta_hdi_high, -original.delta_hdi_low]
                    if flip else [original.p_left, original.p_rope, original.p_right,
                                  original.delta_mean, original.delta_hdi_low,
                                  original.delta_hdi_high])
        assert turned.iloc[row][["p_left", "p_rope", "p_right", "delta_mean", "delta_hdi_low",
                                 "delta_hdi_high"]].tolist() == pytest.approx(expected)
