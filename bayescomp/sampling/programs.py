"""Where the Stan programs shipped with bayescomp are, and their code with ``#include`` lines
inlined: what :func:`bayescomp.sampling.sample` compiles and what the compiled-program cache
(:mod:`bayescomp.sampling.cache`) hashes."""
from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

#: stanc's flags for every program the package builds itself: CmdStan's executables
#: (cmdstanpy) and the pystan engine's native modules, which get the same C++ from the same
#: stanc (2.35), so that both engines give the same draws for a seed. --O1 makes a vector
#: one node of reverse-mode autodiff instead of one per element: through CmdStan a fit of
#: the hierarchical model took 0.8x the time on 54 datasets and 0.75x on 400, with the same
#: posterior; the native route's fits took about as long with it as without
#: (benchmarks/results/stan_program.md). pystan's public route runs httpstan's stanc with
#: fixed arguments, without it: the same model, but draws that part from the other routes'
#: in rounding.
STANC_FLAGS = ("--O1",)


def _find_stan(filename: str) -> Path:
    candidates = []
    try:
        candidates.append(Path(str(importlib.resources.files("bayescomp") / "stan" / filename)))
    except (ModuleNotFoundError, TypeError):  # namespace package or odd loader: use the checkout
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "stan" / filename)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"Stan file {filename!r} not found; looked in: "
                            + ", ".join(map(str, candidates)))


def stan_file(name: str) -> Path:
    """Path of the Stan program ``<name>.stan`` shipped with bayescomp.

    Parameters
    ----------
    name : str
        Program name without extension, e.g. ``"correlated"``.

    Returns
    -------
    pathlib.Path
        From the installed package (``bayescomp/stan/``), else from the repository's
        ``stan/`` in a source checkout.

    Raises
    ------
    FileNotFoundError
        If neither place has it.
    """
    return _find_stan(f"{name}.stan")


_INCLUDE = re.compile(r'^[ \t]*#include[ \t]+[<"]?([^<>"\s]+)[>"]?[ \t]*$', re.M)


def _expand_includes(code: str, _seen: tuple = ()) -> str:
    # Inlined here rather than by stanc: the engines compile copies of the code elsewhere,
    # where no include path leads back to stan/; and the cache keys (hashes of the code)
    # then change when an included file does.
    def inline(match):
        filename = match.group(1)
        if filename in _seen:
            raise ValueError(f"circular #include of {filename!r}")
        return _expand_includes(_find_stan(filename).read_text(), _seen + (filename,))

    return _INCLUDE.sub(inline, code)


def program_code(program: str) -> tuple[str, str]:
    """(name, Stan code) of a program, with its ``#include`` lines inlined.

    Parameters
    ----------
    program : str
        A bare identifier names a program shipped in ``stan/``; anything else is Stan code
        (then named ``"model"``).

    Returns
    -------
    tuple of str
    """
    if re.fullmatch(r"[A-Za-z_]\w*", program):
        return program, _expand_includes(stan_file(program).read_text())
    return "model", _expand_includes(program)
