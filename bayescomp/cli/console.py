"""What the command line prints on stderr besides errors: warnings and progress.

Warnings are shown in the command line's own format, ``warning: <message>`` on one line,
each message once, without Python's file names and line numbers; deprecation notices of
the libraries underneath (e.g. ArviZ's FutureWarning about its refactor) are not shown,
since a user of the command line can do nothing about them. Progress bars (tqdm) cover the
compile of a Stan program, each long fit and the pairs of ``all-pairs``; they are drawn
when stderr is a terminal, or when ``--progress`` asks for them.
"""
from __future__ import annotations

import contextlib
import re
import sys
import threading
import warnings

#: categories of third-party warnings a command-line user cannot act on
_HIDDEN = (FutureWarning, DeprecationWarning, PendingDeprecationWarning)
#: a compile that has not finished after this long is a real build, not a cache hit
COMPILE_NOTICE_SECONDS = 1.0


def one_line(text) -> str:
    """``text`` with its lines joined and blanks collapsed."""
    return " ".join(str(text).split())


class Console:
    """The command line's stderr: one-line warnings (each once) and progress bars."""

    def __init__(self, progress: bool | None = None, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        tty = getattr(self.stream, "isatty", lambda: False)()
        self.progress = tty if progress is None else bool(progress)
        self.seen: set[str] = set()
        self.shown: list[str] = []

    # --- warnings ---------------------------------------------------------------------------

    def write(self, line: str) -> None:
        """Print ``line`` on stderr without breaking a progress bar that is drawn."""
        from tqdm import tqdm

        tqdm.write(line, file=self.stream)
        self.stream.flush()

    def show_warning(self, message, category, filename, lineno, file=None, line=None):
        """Replacement of :func:`warnings.showwarning`: one line, once per message."""
        from bayescomp.exceptions import BayescompWarning

        if issubclass(category, _HIDDEN) and not issubclass(category, BayescompWarning):
            return
        text = one_line(message)
        if text.startswith("bayescomp: "):   # engines prefix their own warnings
            text = text[len("bayescomp: "):]
        if text in self.seen:
            return
        self.seen.add(text)
        self.shown.append(text)
        self.write(f"warning: {text}")

    @contextlib.contextmanager
    def capturing_warnings(self):
        """Route every warning raised inside to :meth:`show_warning`."""
        with warnings.catch_warnings():
            # every occurrence reaches show_warning, which keeps one per message; Python's
            # own once-per-place rule would drop a second pair's identical message instead
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing",
                                    category=FutureWarning)
            warnings.showwarning = self.show_warning
            yield

    # --- progress ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def phase(self, description: str):
        """A bar with the elapsed time while something of unknown length runs."""
        if not self.progress:
            yield
            return
        from tqdm import tqdm

        bar = tqdm(total=None, desc=description, file=self.stream, leave=False,
                   bar_format="{desc}: {elapsed}")
        done = threading.Event()

        def tick():
            while not done.wait(0.5):
                bar.refresh()

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
            bar.close()

    @contextlib.contextmanager
    def counting(self, total: int, description: str):
        """A bar of ``total`` steps; yields a function to call with each finished step's name."""
        if not self.progress:
            yield lambda name=None: None
            return
        from tqdm import tqdm

        bar = tqdm(total=total, desc=description, file=self.stream, unit="fit",
                   mininterval=0, miniters=1)

        def step(name=None):
            if name:
                bar.set_postfix_str(str(name), refresh=False)
            bar.update(1)

        try:
            yield step
        finally:
            bar.close()

    def compile_stan(self, program: str, backend: str) -> None:
        """Compile ``program`` for ``backend`` unless it is cached, announcing a real build.

        The engine's cache answers quickly when the program is there; a compile that runs
        longer than :data:`COMPILE_NOTICE_SECONDS` is a first build, so the user is told
        what happens and that it happens once, and a bar shows the time it takes.
        """
        try:
            from bayescomp.sampling import engine, program_code
        except ImportError:   # an engine without a separate compile step
            return
        name, code = program_code(program)
        chosen = engine(backend)
        outcome: dict = {}

        def build():
            try:
                chosen.compile(name, code)
            except BaseException as error:   # re-raised in the calling thread
                outcome["error"] = error

        worker = threading.Thread(target=build, daemon=True, name="bayescomp-compile")
        worker.start()
        worker.join(COMPILE_NOTICE_SECONDS)
        if worker.is_alive():
            self.write(f"bayescomp: compiling the Stan program {name!r} for {chosen.name}: "
                       "this happens once (1 to 4 minutes); later runs reuse it from the cache")
            with self.phase(f"compiling {name}"):
                while worker.is_alive():
                    worker.join(0.2)
        if "error" in outcome:
            raise outcome["error"]


class PairProgress:
    """A stand-in for stderr during :func:`bayescomp.compare_all`: its documented
    ``fit k/N: first vs second`` lines advance a bar; anything else goes through."""

    _LINE = re.compile(r"^fit (\d+)/(\d+): (.*)$")

    def __init__(self, console: Console, step):
        self.console, self.step, self._pending = console, step, ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            match = self._LINE.match(line)
            if match:
                self.step(match.group(3))
            elif line.strip():
                self.console.write(line)
        return len(text)

    def flush(self) -> None:
        self.console.stream.flush()

    def isatty(self) -> bool:
        return False
