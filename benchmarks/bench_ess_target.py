# Run: python benchmarks/bench_ess_target.py ["dict(iter_sampling=300)"] (options of bc.hierarchical)
"""Time and reported ESS of bc.hierarchical: built-in example (forest - tree) and a
near-identical collection (54 datasets), 3 seeds each, cmdstanpy."""
import sys, time, warnings
import arviz as az
import bayescomp as bc
from bayescomp.validation.simulate import near_identical_collection

NAMES = ("delta0", "delta_next", "sigma0", "nu", "delta")
def ess(idata):
    names = [n for n in NAMES if n in idata.posterior]
    return [min(float(az.ess(idata, var_names=names, method=m)[n].min()) for n in names) for m in ("bulk", "tail")]

options = dict(eval(sys.argv[1])) if len(sys.argv) > 1 else {}
cases = {"example forest-tree": (bc.datasets.load_classifiers(), "forest", "tree"),
         "near-identical 54": (near_identical_collection(54, seed=2).scores, "a", "b")}
bc.hierarchical(*cases["example forest-tree"], seed=1, baselines=False, backend="cmdstanpy")  # warm
for label, (scores, a, b) in cases.items():
    for seed in (1, 2, 3):
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = bc.hierarchical(scores, a, b, seed=seed, baselines=False, backend="cmdstanpy", **options)
        dt = time.perf_counter() - t
        bulk, tail = ess(r.idata)
        print(f"{label:20s} seed {seed}: {dt:5.2f} s, draws/chain {r.idata.posterior.sizes['draw']}, "
              f"attempts {len(r.settings['attempts'])}, ESS bulk {bulk:.0f} tail {tail:.0f}, "
              f"reliable {r.reliable}, P(rope) next {r.next_dataset.probabilities[1]:.3f}", flush=True)
