"""``bayescomp cache``: where the compiled Stan programs are, how big, in what state; ``--clear``.

Registered by :func:`bayescomp.cli.main.build_parser` through :func:`add_parser`. Built on
:func:`bayescomp.sampling.cache_info` and :func:`bayescomp.sampling.clear_cache`; no Stan
program is compiled or loaded.
"""
from __future__ import annotations

import argparse

EXIT_OK = 0


def add_parser(subparsers):
    """Add the ``cache`` subcommand to ``subparsers`` (an argparse subparsers action)."""
    cache = subparsers.add_parser(
        "cache", help="show (or --clear) the cache of compiled Stan programs",
        description="The cache of compiled Stan programs: its path ($BAYESCOMP_CACHE_DIR, else "
        "the per-user cache directory), size and entries per engine and program, with their "
        "state (a damaged entry is rebuilt by the next run that needs it). pystan's public "
        "route uses httpstan's cache; only bayescomp's programs there are listed and cleared.")
    cache.add_argument("--clear", action="store_true",
                       help="remove every compiled program (the next run compiles again)")
    cache.add_argument("--json", metavar="FILE",
                       help="write the listing as JSON ('-': stdout)")
    cache.add_argument("--progress", action="store_true", default=None, help=argparse.SUPPRESS)
    cache.set_defaults(handler=run, out=None, csv=None, overwrite=False)
    return cache


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def listing(info: dict) -> str:
    """The text ``bayescomp cache`` prints for ``info`` (:func:`~bayescomp.sampling.cache_info`)."""
    lines = [f"bayescomp's cache: {info['path']} ({_megabytes(info['size'])})"]
    if info["httpstan_path"] is not None:
        lines.append(f"httpstan's cache (pystan's public route): {info['httpstan_path']}")
    entries = info["entries"]
    if not entries:
        lines.append("no compiled Stan programs")
        return "\n".join(lines)
    rows = [("engine", "route", "program", "size", "status", "path")] + [
        (e["engine"], e["route"], e["program"], _megabytes(e["size"]), e["status"], e["path"])
        for e in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  "
                     + row[5])
    return "\n".join(lines)


def run(args, console) -> int:
    """Run ``bayescomp cache`` with parsed ``args``; the exit code (0).

    ``console`` is the command line's :class:`~bayescomp.cli.console.Console`:
    the lines meant for stderr, and the warnings the JSON lists.
    """
    from pathlib import Path

    from bayescomp.cli.export import envelope, to_json
    from bayescomp.sampling import cache_info, clear_cache

    cleared = None
    if args.clear:
        cleared = clear_cache()
        if args.json != "-":
            print(f"removed {cleared['removed']} compiled Stan programs "
                  f"({_megabytes(cleared['freed'])})")
        for path in cleared["skipped"]:
            console.write(f"bayescomp: left {path}: another process is building it")
    info = cache_info()
    if args.json != "-":
        print(listing(info))
    if args.json is not None:
        from bayescomp.cli.io import Outputs

        parts = {"cache": info} if cleared is None else {"cleared": cleared, "cache": info}
        with Outputs() as outputs:
            outputs.write_text(Path(args.json),
                               to_json(envelope("cache", EXIT_OK, console.shown, **parts)))
            outputs.commit()
    return EXIT_OK
