"""What `import bayescomp` loads, and that arviz's refactor notice does not reach users.

Known answers, not timings (benchmarks/bench_startup.py measures the times).
"""
import os
import subprocess
import sys
from pathlib import Path

import bayescomp

ROOT = Path(bayescomp.__file__).resolve().parents[1]


def run(code: str, **env) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path), **env)
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def test_import_loads_neither_plotting_nor_arviz_nor_joblib():
    out = run("import sys, bayescomp\n"
              "heavy = ['matplotlib', 'matplotlib.pyplot', 'arviz', 'xarray', 'joblib', "
              "'sklearn', 'cmdstanpy', 'stan']\n"
              "print(sorted(m for m in heavy if m in sys.modules))").stdout
    assert out.strip() == "[]"


def test_lazy_names_resolve_to_the_defining_modules():
    out = run("import bayescomp as bc\n"
              "from bayescomp.models.hierarchical import hierarchical\n"
              "from bayescomp.models.compare import compare_all\n"
              "assert bc.hierarchical is hierarchical and bc.compare_all is compare_all\n"
              "assert bc.plots.plot_all_pairs.__module__ == 'bayescomp.presentation.plots.pairs'\n"
              "assert set(bc.__all__) <= set(dir(bc))\n"
              "missing = [n for n in bc.__all__ if getattr(bc, n, None) is None]\n"
              "print(missing)").stdout
    # every public name resolves, and the function hierarchical is not hidden by the
    # module of the same name once that is imported
    assert out.strip() == "[]"


def test_arviz_refactor_warning_is_not_shown(tmp_path):
    # a fresh cache directory: arviz's once-a-day stamp is absent, so it would warn
    result = run("import warnings; warnings.simplefilter('default')\n"
                 "import bayescomp as bc\n"
                 "bc.HierarchicalResult\n"
                 "import arviz\n"
                 "print('ok')", XDG_CACHE_HOME=str(tmp_path), HOME=str(tmp_path))
    assert result.stdout.strip() == "ok"
    assert "ArviZ is undergoing" not in result.stderr
    # and without bayescomp the same fresh start does warn: the test sees the real notice
    plain = run("import warnings; warnings.simplefilter('default')\nimport arviz",
                XDG_CACHE_HOME=str(tmp_path / "other"), HOME=str(tmp_path / "other"))
    assert "ArviZ is undergoing" in plain.stderr
