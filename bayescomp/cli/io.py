"""What the command line reads and writes: checked before any work, written all or nothing.

The input must be a readable, non-empty file; ``--out`` a directory that exists and can be
written, or that can be created; ``--json`` and ``--csv`` files whose directory can be
written. These checks run before the analysis, so that a user never waits for a fit to
learn that its result cannot be saved. A ``--out`` directory that holds another analysis
(a ``report.md``) is refused unless ``--overwrite``; then exactly that analysis's files (the
report and the files its last line lists, :func:`report_text`) are replaced or removed, and
nothing else there. Outputs are first written to hidden staging files next to their targets
and moved into place only when everything has been written: an interrupt, a full disk or
any other failure leaves no partial output behind. What is created has the modes the
user's umask gives, as any file the user writes (co-authors can read a shared report).
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path


class CliError(Exception):
    """An ordinary failure the user can fix: printed as one line, exit code 2."""


#: advice by errno for failures to write, so that the one line says what to do
_WRITE_ADVICE = {
    errno.ENOSPC: "no space left on the device; free some space or write elsewhere",
    errno.EDQUOT: "disk quota exceeded; free some space or write elsewhere",
    errno.EROFS: "the file system is read-only; write elsewhere",
    errno.EACCES: "permission denied; write elsewhere or change the permissions",
    errno.EPERM: "permission denied; write elsewhere or change the permissions",
}


def os_error_line(error: OSError, what: str = "") -> str:
    """One line for an OSError: the file it concerns, what happened and what to do."""
    name = error.filename or what
    advice = _WRITE_ADVICE.get(error.errno)
    reason = advice or (error.strerror or str(error)).lower()
    return f"{name}: {reason}" if name else reason


def check_input(path: str) -> Path:
    """The input file, after checking that it can be read and is not empty.

    Raises
    ------
    CliError
        The file is missing, a directory, unreadable or empty; the message names it.
    """
    file = Path(path)
    if not file.exists():
        raise CliError(f"{file}: no such file; give the CSV file of scores")
    if file.is_dir():
        raise CliError(f"{file} is a directory, not a file; give the CSV file of scores")
    try:
        with open(file, "rb") as fh:
            head = fh.read(4096)
    except OSError as error:
        raise CliError(f"{file}: cannot be read ({(error.strerror or str(error)).lower()}); "
                       "check its permissions") from None
    if not head.strip():
        raise CliError(f"{file} is empty; expected a CSV file of scores with a header line "
                       "(e.g. dataset,algorithm,run,fold,score)")
    return file


def _probe_directory(directory: Path, what: str) -> None:
    """Raise CliError unless a file can really be created in ``directory``.

    Creating a file is the only reliable test: permission bits do not bind root, and a
    read-only mount or an ACL are invisible to them.
    """
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".bayescomp-probe-"):
            pass
    except OSError as error:
        raise CliError(f"{what} {directory}: cannot write there "
                       f"({os_error_line(error).split(': ', 1)[-1]})") from None


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists():
        path = path.parent
    return path


#: the last line of every report.md the command line writes: the files of that analysis
_ANALYSIS_FILES = re.compile(r"^<!-- bayescomp analysis: (.*) -->$", re.M)


def report_text(markdown: str, figures: list[str], others=()) -> str:
    """The ``report.md`` of an analysis: ``markdown``, the ``figures`` shown as images, and a
    last line (an HTML comment, invisible when rendered) listing the analysis's files (the
    figures and ``others`` written beside them), so that ``--overwrite`` later replaces
    exactly those."""
    images = "\n".join(f"![{name}]({name})" for name in figures)
    files = ", ".join(["report.md", *figures, *others])
    return f"{markdown}\n\n{images}\n\n<!-- bayescomp analysis: {files} -->\n"


def earlier_analysis(directory: Path) -> list[str]:
    """The files of the analysis written in ``directory`` before, as names in it: its
    ``report.md`` and the files that report's last line lists (see :func:`report_text`);
    empty when there is no ``report.md``."""
    report = Path(directory) / "report.md"
    if not report.is_file():
        return []
    try:
        listed = _ANALYSIS_FILES.findall(report.read_text(encoding="utf-8", errors="replace"))
    except OSError:   # unreadable: the report alone is known to be there
        listed = []
    names = ["report.md"] + (listed[-1].split(", ") if listed else [])
    # plain names only: a doctored list must not reach outside the directory
    return list(dict.fromkeys(n for n in names if n == Path(n).name and n not in ("", ".", "..")
                              and (Path(directory) / n).is_file()))


def check_output_dir(path: str | None, overwrite: bool = False) -> Path | None:
    """``--out``: a writable directory, or a path where one can be created (not yet made).

    Raises
    ------
    CliError
        Not a directory, not writable, or it holds another analysis and ``overwrite`` is
        False.
    """
    if path is None:
        return None
    out = Path(path)
    if out.exists():
        if not out.is_dir():
            raise CliError(f"--out {out}: exists and is not a directory; give a directory "
                           "(it is created if missing)")
        _probe_directory(out, "--out")
        earlier = earlier_analysis(out)
        if earlier and not overwrite:
            raise CliError(f"--out {out}: holds another analysis ({', '.join(earlier)}); give "
                           "a new directory, or --overwrite to replace that analysis")
        return out
    ancestor = _nearest_existing(out)
    if not ancestor.is_dir():
        raise CliError(f"--out {out}: cannot be created, {ancestor} is a file")
    _probe_directory(ancestor, f"--out {out}: its parent")
    return out


def check_output_file(path: str | None, option: str) -> Path | None:
    """``--json`` / ``--csv``: ``-`` (standard output), a special file such as /dev/stdout,
    or a regular file that can be written or created."""
    if path is None or path == "-":
        return None if path is None else Path("-")
    file = Path(path)
    if file.is_dir():
        raise CliError(f"{option} {file}: is a directory; give a file name")
    if file.exists() and not file.is_file():
        return file   # a device or pipe, written in place
    ancestor = _nearest_existing(file.parent)
    if not ancestor.is_dir():
        raise CliError(f"{option} {file}: cannot be created, {ancestor} is a file")
    _probe_directory(ancestor, f"{option} {file}: its directory")
    return file


def _umask() -> int:
    """The process's umask. Linux shows it in /proc (since 4.7); elsewhere it can only be
    read by setting it, which is briefly visible to other threads."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


class Outputs:
    """Every file a command writes, staged and then moved into place together.

    Use :meth:`directory` (a context) for the ``--out`` staging directory and :meth:`write_text` for
    single files, then :meth:`commit`; :meth:`discard` (also on any exception inside a
    ``with`` block) removes whatever was staged and the directories made for it. After
    :meth:`commit`, :attr:`replaced` holds the files of an earlier analysis that a
    directory staged with ``replace=True`` held (replaced or removed).
    """

    def __init__(self):
        self._moves: list[tuple[Path, Path]] = []   # (staged, final)
        self._direct: list[tuple[Path | None, str]] = []   # stdout or devices, at commit
        self._created: list[Path] = []
        self._staging_dirs: list[Path] = []
        self._replacing: set[Path] = set()
        self.replaced: list[str] = []

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            self.discard()
        return False

    def _make_parents(self, directory: Path) -> None:
        missing = []
        for parent in [directory, *directory.parents]:
            if parent.exists():
                break
            missing.append(parent)
        directory.mkdir(parents=True, exist_ok=True)
        self._created.extend(missing)   # deepest first, as they must be removed

    @contextlib.contextmanager
    def directory(self, final: Path, replace: bool = False):
        """A staging directory, as a context, whose files end up in ``final`` at
        :meth:`commit`; with ``replace``, the files of an earlier analysis there
        (:func:`earlier_analysis`) that this one does not rewrite are removed then. A
        failure to write inside it (e.g. a full disk, whose error names no file) is
        reported against ``final``."""
        final = Path(final)
        try:
            if final.is_dir():
                staging = Path(tempfile.mkdtemp(dir=final, prefix=".bayescomp-partial-"))
            else:
                self._make_parents(final.parent)
                staging = Path(tempfile.mkdtemp(dir=final.parent,
                                                prefix=f".{final.name}.partial-"))
                # mkdtemp makes it private (0700); renamed into place it is the user's --out
                staging.chmod(0o777 & ~_umask())
            if replace:
                self._replacing.add(final)
            self._moves.append((staging, final))
            self._staging_dirs.append(staging)
            yield staging
        except OSError as error:
            # staged names hold ".partial-"; the user knows only ``final``
            if error.filename is None or ".partial-" in str(error.filename):
                raise OSError(error.errno, error.strerror, str(final)) from None
            raise

    def write_text(self, final: Path, text: str) -> None:
        """Stage ``text`` for ``final`` (``-`` is standard output, a device is written at
        commit)."""
        final = Path(final)
        if str(final) == "-" or (final.exists() and not final.is_file()):
            self._direct.append((None if str(final) == "-" else final, text))
            return
        self._make_parents(final.parent)
        handle, name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.partial-")
        staged = Path(name)
        self._moves.append((staged, final))
        try:
            # mkstemp makes it private (0600); renamed into place it is the user's file
            os.fchmod(handle, 0o666 & ~_umask())
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as error:   # name the file the user asked for, not the staging one
            raise OSError(error.errno, error.strerror, str(final)) from None

    def commit(self) -> None:
        """Move every staged output into place, then write to stdout and devices."""
        for target, text in self._direct:
            if target is None:
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                try:
                    with open(target, "w", encoding="utf-8") as fh:
                        fh.write(text)
                except OSError as error:   # a write error carries no file name: add it
                    raise OSError(error.errno, error.strerror, str(target)) from None
        for staged, final in self._moves:
            if staged.is_dir() and final.is_dir():   # into an existing directory
                earlier = earlier_analysis(final) if final in self._replacing else []
                written = set()
                for item in staged.iterdir():
                    os.replace(item, final / item.name)
                    written.add(item.name)
                staged.rmdir()
                for name in earlier:   # the earlier analysis's files this one did not rewrite
                    if name not in written:
                        (final / name).unlink(missing_ok=True)
                self.replaced += earlier
            else:
                os.replace(staged, final)
        self._moves.clear()
        self._created.clear()

    def discard(self) -> None:
        """Remove everything staged and the directories made for it."""
        for staged, _ in self._moves:
            if staged.is_dir():
                shutil.rmtree(staged, ignore_errors=True)
            else:
                try:
                    staged.unlink()
                except OSError:
                    pass
        self._moves.clear()
        for directory in self._created:
            try:
                directory.rmdir()
            except OSError:   # not empty: someone else wrote there meanwhile
                pass
        self._created.clear()


#: the columns ``--column KEY=NAME`` can rename
COLUMN_KEYS = ("dataset", "algorithm", "run", "fold", "score")


def positive_int(text: str) -> int:
    """An option's value that must be a whole number of at least 1 (argparse's ``type``)."""
    import argparse

    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def add_input_arguments(parser) -> None:
    """The arguments naming a CSV of scores and its layout, shared by the commands that
    read one (``compare``, ``all-pairs``, ``rank``)."""
    parser.add_argument("file", help="CSV of scores. long: columns dataset, algorithm, run, "
                        "fold, score; wide: dataset, run, fold and one column per algorithm; "
                        "either may have a column rho (one value per dataset), which "
                        "--n-folds and --rho override")
    parser.add_argument("--format", choices=["auto", "long", "wide"], default="auto",
                        help="layout of the CSV (default auto: long when the file has the "
                        "columns algorithm and score, or those given by --column, else wide)")
    parser.add_argument("--column", action="append", metavar="KEY=NAME",
                        help="name of a column in the file, e.g. --column dataset=DB "
                        f"(KEY: {', '.join(COLUMN_KEYS)}); repeatable")


def add_algorithms_argument(parser) -> None:
    """``--algorithms``, for the commands that compare every algorithm of the file."""
    parser.add_argument("--algorithms", metavar="A,B,...",
                        help="compare these algorithms only, in this order (default: all); "
                        "the others' scores are not read, so they may be missing or NaN")


def chosen_algorithms(args) -> list[str] | None:
    """The names that ``--algorithms`` gives, None without it (or a command without it)."""
    text = getattr(args, "algorithms", None)
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise CliError(f"--algorithms expects names separated by commas, got {text!r}")
    return names


def read_scores(args, algorithms=None):
    """The scores of the CSV that :func:`add_input_arguments` names, read with its layout,
    its ``--column`` names and, where the command has them, ``--n-folds`` or ``--rho``:
    only the scores of ``algorithms`` (default: those of ``--algorithms``, else all)."""
    from bayescomp.data.readers import read_csv

    options = {"format": args.format}
    if algorithms is None:
        algorithms = chosen_algorithms(args)
    if algorithms is not None:
        options["algorithms"] = algorithms
    for item in args.column or []:
        key, _, name = item.partition("=")
        if key not in COLUMN_KEYS or not name:
            raise CliError(f"--column expects KEY=NAME with KEY in {', '.join(COLUMN_KEYS)}; "
                           f"got {item!r}")
        options[key] = name
    for option in ("n_folds", "rho"):
        if getattr(args, option, None) is not None:
            options[option] = getattr(args, option)
    return read_csv(args.file, **options)


def add_overwrite_argument(parser) -> None:
    """``--overwrite``, shared by the commands with ``--out``."""
    parser.add_argument("--overwrite", action="store_true",
                        help="let --out replace the files of an earlier analysis in DIR "
                        "(without it, such a DIR is refused); other files there stay")
