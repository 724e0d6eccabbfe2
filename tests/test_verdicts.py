"""Verdict sentences, the number formatter and the JSON-ready dictionaries: known answers."""
import json

import numpy as np
import pytest

import bayescomp as bc
from bayescomp.rope import Rope
from bayescomp.formatting import effective_draws, equals, format_number
from bayescomp.presentation.verdicts import verdict, verdict_dict


@pytest.mark.parametrize("value, kind, text", [
    (-0.0, "number", "0"), (2.927e-17, "number", "0"), (-3e-13, "number", "0"),
    (0.0123456, "number", "0.01235"), (-0.5, "number", "-0.5"), (123456.7, "number", "123457"),
    (1234567.0, "number", "1.235e+6"), (3.1e-7, "number", "3.100e-7"),
    (np.float64(np.nan), "number", "n/a"), (None, "number", "n/a"), (np.inf, "number", "inf"),
    (np.int64(7), "number", "7"), (np.bool_(True), "number", "True"),
    (-0.0, "probability", "0.0000"), (-1e-12, "probability", "0.0000"),
    (1 + 1e-12, "probability", "1.0000"), (0.88, "probability", "0.8800"),
    (2.9e-17, "p_value", "< 0.0001"), (0.0312, "p_value", "0.0312"), (1.0, "p_value", "1"),
])
def test_format_number(value, kind, text):
    assert format_number(value, kind) == text


def test_equals_reads_after_a_name():
    assert f"p {equals(0.03125)}" == "p = 0.03125" and f"p {equals(1e-9)}" == "p < 0.0001"


def test_verdict_sentences_name_the_algorithms_and_the_threshold():
    rope = Rope(-0.01, 0.01)
    assert verdict([0.01, 0.11, 0.88], "hnb", "nbc", scope="On the population (delta0)") == \
        "On the population (delta0): undecided, P(hnb better) = 0.8800 < 0.95."
    assert verdict([0.97, 0.03, 0.0], "hnb", "nbc") == \
        "nbc is better than hnb, P(nbc better) = 0.9700 >= 0.95."
    assert verdict([0.0, 0.997, 0.003], "a", "b", rope=rope, threshold=0.99) == \
        "a and b are practically equivalent (ROPE [-0.01, 0.01]), P(equivalent) = 0.9970 >= 0.99."
    assert verdict([0.2, 0.3, 0.5], "a", "b", scope="x", reliable=False) == \
        "x: no verdict, the sampler failed its diagnostics (unreliable)."
    data = verdict_dict([0.01, 0.11, 0.88], "hnb", "nbc")
    assert data["probabilities"] == {"nbc better": 0.01, "equivalent": 0.11, "hnb better": 0.88}
    assert data["decision"] == "undecided" and data["threshold"] == 0.95


def test_correlated_ttest_states_its_verdict_and_dict_is_json():
    rng = np.random.default_rng(3)
    a = rng.normal(0.85, 0.02, 100)
    scores = bc.from_arrays({"hnb": a + 0.03, "nbc": a + rng.normal(0, 0.01, 100)},
                            n_folds=10, datasets=["iris"])
    result = bc.correlated_ttest(scores, "hnb", "nbc", rope=0.01)
    p = result.probabilities
    assert p[2] >= 0.95  # hnb clearly better: 3 points on a 1-point ROPE
    sentence = f"On dataset 'iris': hnb is better than nbc, P(hnb better) = {p[2]:.4f} >= 0.95."
    assert result.verdicts() == [sentence]
    assert result.summary().splitlines()[1] == sentence
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdict"]["sentence"] == sentence
    assert data["verdict"]["probabilities"] == dict(zip(result.labels, p.tolist()))
    assert data["nadeau_bengio"]["p_value"] == result.nb_p_value
    assert data["nadeau_bengio"]["p_hnb_better"] == result.nb_p_greater
    assert data["hdi_95"] == list(result.interval())


def test_constant_differences_never_print_negative_zero():
    scores = bc.from_arrays({"x": [[0.8] * 10], "y": [[0.8] * 10]}, rho=0.1)
    with pytest.warns(bc.ConstantDifferencesWarning):
        result = bc.correlated_ttest(scores, "x", "y", rope=0.01)
    text = (result.summary() + result.to_markdown()).replace("[-0.01, 0.01]", "ROPE")
    assert "-0" not in text and "e-1" not in text and "np.float64" not in text
    assert "P(equivalent) = 1.0000 >= 0.95" in text


def test_baselines_are_reproducible_under_a_seed():
    scores = bc.simulate.collection(10, 20, delta0=0.01, sigma0=0.01, seed=2).scores
    first, second = bc.baselines(scores, "a", "b"), bc.baselines(scores, "a", "b")
    np.testing.assert_array_equal(first.bayesian_sign.samples, second.bayesian_sign.samples)
    np.testing.assert_array_equal(first.bayesian_signed_rank.samples,
                                  second.bayesian_signed_rank.samples)
    other = bc.baselines(scores, "a", "b", seed=5)
    np.testing.assert_array_equal(other.bayesian_sign.samples,
                                  bc.baselines(scores, "a", "b", seed=5).bayesian_sign.samples)
    assert not np.array_equal(other.bayesian_sign.samples, first.bayesian_sign.samples)
    data = json.loads(json.dumps(first.to_dict()))
    assert data["tests"]["wilcoxon"]["p_value"] == first.wilcoxon.p_value
    assert data["tests"]["bayesian_signed_rank"]["verdict"]["probabilities"] == dict(
        zip(first.bayesian_signed_rank.labels, first.bayesian_signed_rank.mean_masses.tolist()))


def test_all_pairs_verdicts_and_dict():
    rng = np.random.default_rng(1)
    scores = bc.from_arrays({name: [rng.normal(0.8 + shift, 0.02, 100)]
                             for name, shift in (("x", 0.0), ("y", 0.0), ("z", -0.03))},
                            n_folds=10)
    result = bc.compare_all(scores, rope=0.01, seed=1)
    rows = result.table
    assert result.verdicts() == [verdict(r[["dataset_p_left", "dataset_p_rope", "dataset_p_right"]], r["first"],
                                         r["second"], scope=f"{r['first']} vs {r['second']}",
                                         rope=result.rope) for _, r in rows.iterrows()]
    summary = result.summary()
    for sentence in result.verdicts():
        assert sentence in summary
    header = summary.splitlines()[2 + len(rows)].split()
    assert header[:2] == ["first", "second"] and "P(equivalent)" in header
    data = json.loads(json.dumps(result.to_dict()))
    assert [p["dataset"]["probabilities"]["equivalent"] for p in data["pairs"]] == \
        rows.dataset_p_rope.tolist()
    assert data["pairs"][1]["dataset"]["probabilities"]["x better"] == rows.dataset_p_right[1]


def test_all_pairs_verdicts_take_their_threshold():
    rng = np.random.default_rng(1)
    scores = bc.from_arrays({name: [rng.normal(0.8 + shift, 0.02, 100)]
                             for name, shift in (("x", 0.0), ("z", -0.008))}, n_folds=10)
    result = bc.compare_all(scores, rope=0.01, seed=1)
    p = result.table.loc[0, ["dataset_p_left", "dataset_p_rope", "dataset_p_right"]].to_numpy(float)
    for threshold in (0.6, 0.95):
        assert result.verdicts(threshold) == [verdict(p, "x", "z", threshold=threshold,
                                                      scope="x vs z", rope=result.rope)]
    assert result.verdicts() == result.verdicts(0.95)


def test_the_ess_phrase_says_what_a_pooled_ess_over_modes_counts():
    ess = dict(target=1000, bulk=11.4, tail=32.0)
    assert effective_draws(ess) == "11 bulk, 32 tail (target 1000)"
    assert effective_draws(ess, modes=True) == (
        "11 bulk, 32 tail (target 1000; over chains read as modes it counts their crossings, "
        "not the precision of each mode's probabilities, whose Monte Carlo errors are shown "
        "with them)")
    # where the quadrature answered, nothing reported is read off the draws
    assert effective_draws(ess, modes=True, quadrature=True) == (
        "11 bulk, 32 tail (target 1000; of the draws that did not mix, which no number "
        "reported here is read from)")
