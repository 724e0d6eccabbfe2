"""A lean PyStan sampling path: httpstan's compiled services module, called directly.

``stan.build(...).sample(...)`` goes through httpstan's HTTP server: every chain's output
(draws *and* the diagnostic writer's copy of them) is gzip-compressed into httpstan's fit
cache, sent over HTTP, decompressed and parsed by pystan. For cheap models that costs several
times the sampling itself. :func:`sample_direct` does what httpstan's ``services_stub.call``
does, minus all of that:

* the chains run in httpstan's own process pool (``httpstan.services_stub.executor``) through
  the same lazy wrapper httpstan uses, with the arguments pystan would send (the same
  ``random_seed`` for every chain, ``chain`` numbered 1..chains, httpstan's defaults for the
  rest), so a seed gives the very same draws as the public route;
* each chain writes to its own Unix socket in a private temporary directory; the C++ side
  connects four times (logger, init, sample and diagnostic writers) and sends
  newline-delimited JSON. The calling thread reads every connection with ``selectors`` (no
  asyncio, so this works inside a running event loop and from several threads at once),
  drops the diagnostic writer's connection unread, and parses only the draws;
* nothing is written to httpstan's fit cache or to the working directory.

It relies on httpstan internals (``services_stub.executor``,
``services_stub._make_lazy_function_wrapper_helper``, the extension module's
``hmc_nuts_diag_e_adapt_wrapper`` signature and the writers' message format), checked with
httpstan 4.13; :func:`bayescomp.backends._sample_pystan_public` is the public-API equivalent.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import selectors
import shutil
import socket
import sys
import tempfile
import threading
import time

import numpy as np

_FUNCTION = "hmc_nuts_diag_e_adapt"
# The socket writers' messages, as rapidjson writes them (no spaces).
_LOGGER = b'{"version":1,"topic":"logger",'
_DIAGNOSTIC = b'{"version":1,"topic":"diagnostic",'
_DRAW = b'{"version":1,"topic":"sample","values":{'  # a draw; adaptation info has a list
_CLASSIFY_AFTER = 64  # bytes enough to read a message's topic
_RECV_BYTES = 1 << 18
# After reading, let the writers fill the socket buffers a little: ~30% fewer wake-ups.
_BATCH_SECONDS = 0.001
_TOTAL_TIME = re.compile(r"([0-9.eE+-]+) seconds \(Total\)")
_STAT_NAMES = {
    "lp__": "lp", "accept_stat__": "acceptance_rate", "stepsize__": "step_size",
    "treedepth__": "tree_depth", "n_leapfrog__": "n_steps", "divergent__": "diverging",
    "energy__": "energy",
}
_STAT_DTYPES = {"divergent__": bool, "n_leapfrog__": np.int64, "treedepth__": np.int64}
# Forking httpstan's pool while another thread dlopens a model crashes the children: our
# own threads fill the pool and load the module one at a time.
_LOAD_LOCK = threading.Lock()


def sample_direct(name, code, data, *, chains, iter_warmup, iter_sampling, seed, adapt_delta,
                  max_treedepth, inits, show_progress):
    """Sample like :func:`bayescomp.backends._sample_pystan_public`, without the HTTP round trip.

    ``data`` comes from ``backends._to_stan_data``; ``inits`` is None, an init radius or one
    dict per chain. Returns ``(arviz.InferenceData, stan_version)`` with the groups, names,
    shapes and dtypes of ``az.from_pystan(posterior=fit, posterior_model=model)``.
    """
    from bayescomp import backends
    import httpstan.models
    import httpstan.services.arguments as arguments
    import httpstan.services_stub as stub

    backends._pystan_compile(name, code, show_progress)
    model_name = httpstan.models.calculate_model_name(code)
    with _LOAD_LOCK:
        backends.prespawn_pystan_pool()
        module = httpstan.models.import_services_extension_module(model_name)
    backends._shut_pystan_pool_at_exit()

    try:  # the data are checked here, as pystan's build does (e.g. a reject() in transformed data)
        param_names = list(module.get_param_names(data))
        dims = [list(d) for d in module.get_dims(data)]
        constrained_names = list(module.constrained_param_names(data))
    except Exception as exc:
        raise RuntimeError(f"Stan program {name!r} refused the data: {exc}") from None

    # What httpstan fills in for arguments pystan does not send, then what pystan sends.
    settings = {}
    for arg in arguments.function_arguments(_FUNCTION, module):
        try:
            settings[arg] = arguments.lookup_default(arguments.Method.SAMPLE, arg)
        except ValueError:  # data and init have no default
            pass
    if not 0 <= int(seed) <= 2**31 - 1:  # pystan's route fails too, less clearly
        raise RuntimeError(f"httpstan's sampler takes a seed in [0, 2**31 - 1] (a C int), got {seed}")
    settings.update(random_seed=int(seed), num_warmup=int(iter_warmup),
                    num_samples=int(iter_sampling), delta=float(adapt_delta),
                    max_depth=int(max_treedepth))
    chain_inits = _chain_inits(inits, chains, settings)

    wrapper = functools.partial(stub._make_lazy_function_wrapper_helper, _FUNCTION, model_name)
    calls = [functools.partial(wrapper, data=data, init=chain_inits[c - 1], **dict(settings, chain=c))
             for c in range(1, chains + 1)]
    columns, draws, messages, failures = _run(stub.executor, calls, show_progress)
    if failures:
        raise RuntimeError(_failure_message(name, failures))

    idata = _assemble(name, code, columns, draws, messages, settings, param_names, dims,
                      constrained_names, model_name)
    return idata, backends._pystan_stan_version()


def _assemble(name, code, columns, draws, messages, settings, param_names, dims,
              constrained_names, model_name):
    """InferenceData from each chain's draws and logger messages, after checking their shape."""
    num_samples_saved = -(-settings["num_samples"] // settings["num_thin"])
    if settings["save_warmup"]:
        num_samples_saved += -(-settings["num_warmup"] // settings["num_thin"])
    for number, chain_draws in enumerate(draws, 1):
        if chain_draws.shape[0] != num_samples_saved:
            raise RuntimeError(f"chain {number} of Stan program {name!r} returned "
                               f"{chain_draws.shape[0]} draws, expected {num_samples_saved}")
    if columns is None:
        raise RuntimeError(f"Stan program {name!r} returned no draws")
    stats = [c for c in columns if c.endswith("__")]
    if columns[len(stats):] != constrained_names:
        raise RuntimeError(f"Stan program {name!r}: unexpected draw columns {columns}, "
                           f"expected sampler statistics then {constrained_names}")
    attrs = dict(num_chains=len(draws), num_samples=settings["num_samples"],
                 num_thin=settings["num_thin"], num_warmup=settings["num_warmup"],
                 save_warmup=settings["save_warmup"], model_name=model_name, program_code=code,
                 random_seed=settings["random_seed"])
    seconds = [_stan_seconds(chain_messages) for chain_messages in messages]
    if all(t is not None for t in seconds):
        # the sampler's own time per chain (warm-up and sampling), without this interface
        attrs["stan_seconds"] = seconds
    return _inference_data(code, np.stack(draws), stats, param_names, dims, attrs)


def _chain_inits(inits, chains, settings) -> list[dict]:
    """One init dict per chain (empty: Stan draws them); a number sets ``init_radius``."""
    from bayescomp import backends

    if isinstance(inits, (int, float)) and not isinstance(inits, bool):
        settings["init_radius"] = float(inits)
        inits = None
    if inits is None:
        return [{} for _ in range(chains)]
    chain_inits = [backends._to_stan_data(i) for i in inits]
    if len(chain_inits) != chains:
        raise ValueError(f"inits has {len(chain_inits)} entries for {chains} chains")
    return chain_inits


def _stan_seconds(messages):
    """Stan's reported total time of one chain ("... seconds (Total)"), or None."""
    for message in messages:
        match = _TOTAL_TIME.search(message)
        if match:
            return float(match.group(1))
    return None


# --- running the chains -------------------------------------------------------------------

class _Chain:
    """One chain's socket, its writers' connections, and what they sent."""

    def __init__(self, number: int, directory: str, selector: selectors.BaseSelector):
        self.number = number
        self.path = os.path.join(directory, f"chain-{number}.sock")
        self.selector = selector
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(4)  # one logger and three writers
        self.listener.setblocking(False)
        selector.register(self.listener, selectors.EVENT_READ, (self, None))
        self.connections: dict[socket.socket, list] = {}  # socket -> [kind, bytearray]
        self.kept: list[bytearray] = []  # contents of the closed init and sample connections
        self.messages: list[str] = []  # logger messages, e.g. "info:Iteration: ..."
        self.future = None
        self.columns = None
        self.draws = None

    def close(self):
        for sock in [*self.connections, self.listener]:
            if sock.fileno() >= 0:
                with contextlib.suppress(KeyError, ValueError):
                    self.selector.unregister(sock)
                sock.close()
        self.connections.clear()

    def accept(self) -> bool:
        """Accept a writer's connection; False when none is waiting."""
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return False
        conn.setblocking(True)
        self.connections[conn] = [None, bytearray()]
        self.selector.register(conn, selectors.EVENT_READ, (self, conn))
        return True

    def receive(self, conn, show_progress: bool):
        state = self.connections[conn]
        chunk = conn.recv(_RECV_BYTES)
        if not chunk:  # the writer closed its end
            del self.connections[conn]
            self.selector.unregister(conn)
            conn.close()
            if state[0] is None:
                self._classify(state, final=True)
            if state[0] == "logger":
                self._log_lines(state, show_progress, final=True)
            elif state[0] == "other":
                self.kept.append(state[1])
            return
        if state[0] == "diagnostic":  # a full copy of the draws we do not need: dropped unread
            return
        state[1] += chunk
        if state[0] is None:
            self._classify(state)
        if state[0] == "logger":
            self._log_lines(state, show_progress)

    def _classify(self, state, final=False):
        buffer = state[1]
        if len(buffer) < _CLASSIFY_AFTER and b"\n" not in buffer and not final:
            return
        if buffer.startswith(_DIAGNOSTIC):
            state[0] = "diagnostic"
            buffer.clear()
        elif buffer.startswith(_LOGGER):
            state[0] = "logger"
        else:
            state[0] = "other"

    def _log_lines(self, state, show_progress, final=False):
        buffer = state[1]
        end = len(buffer) if final else buffer.rfind(b"\n") + 1
        if not end:
            return
        lines = bytes(buffer[:end]).split(b"\n")
        del buffer[:end]
        for line in lines:
            if not line:
                continue
            try:
                values = json.loads(line)["values"]
            except (ValueError, KeyError, TypeError):
                continue
            for text in values if isinstance(values, list) else [values]:
                text = str(text)
                self.messages.append(text)
                if show_progress:
                    shown = text.split(":", 1)[-1]
                    if shown.strip():
                        sys.stderr.write(f"chain {self.number}: {shown}\n")

    def parse(self):
        """The draws (num_draws, columns) and column names from the sample writer's messages."""
        rows, logger_lines = [], []
        for buffer in self.kept:
            for line in bytes(buffer).split(b"\n"):
                if line.startswith(_DRAW):
                    rows.append(line)
                elif line.startswith(_LOGGER):  # not expected: the logger has its own connection
                    logger_lines.append(line)
        self.kept = []
        for line in logger_lines:
            self.messages.extend(json.loads(line)["values"])
        if not rows:
            self.draws = np.empty((0, 0))
            return
        # One json.loads for the whole chain; Stan's NaN and Infinity are valid for Python's json.
        parsed = json.loads(b"[" + b",".join(rows) + b"]")
        first = parsed[0]["values"]
        self.columns = list(first)
        width = len(self.columns)
        values = [list(message["values"].values()) for message in parsed]
        if any(len(row) != width for row in values):
            raise RuntimeError(f"chain {self.number}: draws with differing numbers of columns")
        self.draws = np.array(values, dtype=np.float64).reshape(len(values), width)


def _run(executor, calls, show_progress):
    """Run ``calls`` (one per chain) in ``executor``; read their sockets until all are done.

    Returns (columns, [draws per chain], [logger messages per chain], failures), failures a
    list of (chain, exception or
    return code, logger messages); after a failure the remaining chains are abandoned.
    """
    directory = tempfile.mkdtemp(prefix="bayescomp-stan-")
    if len(os.path.join(directory, f"chain-{len(calls)}.sock").encode()) > 100:
        # a Unix socket's path must fit in 108 bytes: a long TMPDIR would not do
        os.rmdir(directory)
        directory = tempfile.mkdtemp(prefix="bayescomp-stan-", dir="/tmp")
    chains: list[_Chain] = []
    selector = selectors.DefaultSelector()  # epoll: no FD_SETSIZE limit on descriptor numbers
    wake_read, wake_write = socket.socketpair()
    wake_write.setblocking(False)
    selector.register(wake_read, selectors.EVENT_READ, None)

    def wake(_future):
        try:
            wake_write.send(b"\0")
        except OSError:  # full (a wake-up is pending anyway) or already closed
            pass

    failures = []
    try:
        for number, call in enumerate(calls, 1):
            chain = _Chain(number, directory, selector)
            chains.append(chain)
            chain.future = executor.submit(functools.partial(call, chain.path))
            chain.future.add_done_callback(wake)
        running = list(chains)
        while running:
            got_data = False
            for key, _ in selector.select(timeout=1.0):
                if key.data is None:
                    wake_read.recv(4096)
                    continue
                chain, conn = key.data
                if conn is None:
                    chain.accept()
                else:
                    chain.receive(conn, show_progress)
                    got_data = True
            if got_data:
                time.sleep(_BATCH_SECONDS)
            for chain in list(running):
                if not chain.future.done() or chain.connections:
                    continue
                if chain.accept():
                    continue  # a writer connected after the last select: read it first
                running.remove(chain)
                chain.close()
                error = chain.future.exception()
                if error is None and chain.future.result() != 0:
                    error = chain.future.result()
                if error is None:
                    chain.parse()
                else:
                    failures.append((chain.number, error, chain.messages))
            if failures:
                break
    finally:
        # On an error (or KeyboardInterrupt) the other chains are abandoned: those not started
        # are cancelled, running ones fail on their next write to a closed socket and free
        # their worker.
        for chain in chains:
            if chain.future is not None:
                chain.future.cancel()
            chain.close()
        selector.close()
        wake_write.close()
        wake_read.close()
        shutil.rmtree(directory, ignore_errors=True)
    if failures:
        return None, [], [], failures
    columns = next((c.columns for c in chains if c.columns is not None), None)
    for chain in chains:
        if chain.columns is not None and chain.columns != columns:
            raise RuntimeError(f"chain {chain.number} returned columns {chain.columns}, "
                               f"chain 1 {columns}")
    return columns, [c.draws for c in chains], [c.messages for c in chains], []


def _failure_message(name, failures, max_lines=8):
    """Like httpstan's: Stan's error and warning messages, else its other notes, and the exception."""
    number, error, messages = min(failures, key=lambda failure: failure[0])
    problems = [m.split(":", 1)[1].strip() for m in messages
                if m.startswith(("error:", "warn:")) and m.split(":", 1)[1].strip()]
    if not problems:  # e.g. "Rejecting initial value: ..." is logged as info
        problems = [m.split(":", 1)[1].strip() for m in messages
                    if m.startswith("info:") and m.split(":", 1)[1].strip()
                    and not m.startswith(("info:Iteration:", "info: Elapsed Time:", "info:" + " " * 15))]
    unique = list(dict.fromkeys(problems))
    if len(unique) > max_lines:
        unique = unique[:max_lines] + [f"... ({len(unique) - max_lines} more messages)"]
    if isinstance(error, BaseException):
        what = f"{type(error).__name__}: {error}"
    else:
        what = f"return code {error}"
    text = f"Stan sampling of {name!r} failed on chain {number} ({what})"
    return text + (":\n  " + "\n  ".join(unique) if unique else "")


# --- InferenceData ------------------------------------------------------------------------

def _inference_data(code, draws, stats, param_names, dims, attrs):
    """az.from_pystan's output for draws of shape (chains, num_draws, columns)."""
    import arviz as az

    try:  # what az.from_pystan uses to keep integer generated quantities integers
        from arviz.data.base import infer_stan_dtypes
    except ImportError:
        infer_stan_dtypes = lambda code: {}  # noqa: E731

    try:
        import stan as library
    except ImportError:  # attrs then lack inference_library (pystan's route always has it)
        library = None
    log_likelihood = az.rcParams["data.log_likelihood"]
    log_lik_names = ["log_lik"] if log_likelihood is True and "log_lik" in param_names else []
    dtypes = {k: v for k, v in infer_stan_dtypes(code).items() if k in param_names}

    def variable(offset, shape, dtype=None):
        size = int(np.prod(shape)) if shape else 1
        block = draws[:, :, offset:offset + size]
        # Stan flattens column-major: the last index varies slowest
        block = block.reshape(*block.shape[:2], *reversed(shape))
        block = block.transpose(0, 1, *range(block.ndim - 1, 1, -1))
        return block.astype(dtype)

    posterior, log_lik = {}, {}
    offset = len(stats)
    for var, shape in zip(param_names, dims):
        size = int(np.prod(shape)) if shape else 1
        if size:
            (log_lik if var in log_lik_names else posterior)[var] = variable(offset, shape, dtypes.get(var))
        offset += size
    sample_stats = {}
    for index, stat in enumerate(stats):
        if stat != "lp__":
            name = _STAT_NAMES.get(stat, stat.removesuffix("__"))
            sample_stats[name] = draws[:, :, index].astype(_STAT_DTYPES.get(stat))
    if "lp__" in stats:
        sample_stats["lp"] = draws[:, :, stats.index("lp__")].astype(None)

    groups = {
        "posterior": _dataset(posterior, library, attrs),
        "sample_stats": _dataset(sample_stats, library, attrs),
    }
    if log_lik_names:
        groups["log_likelihood"] = _dataset(log_lik, library)
    return az.InferenceData(**groups)


def _dataset(variables: dict, library, attrs=None):
    """``az.dict_to_dataset(variables, library=library, attrs=attrs)``, built in one step.

    ArviZ builds and aligns one DataArray per variable: 15 ms per group, a tenth of a whole
    fit of the 54-dataset benchmark. The tests check that the result is identical.
    """
    import arviz as az
    import xarray as xr
    from arviz.data.base import make_attrs

    origin = az.rcParams["data.index_origin"]
    data_vars, coords = {}, {}
    for name, values in variables.items():
        dims = ["chain", "draw"] + [f"{name}_dim_{i}" for i in range(values.ndim - 2)]
        for axis, (dim, size) in enumerate(zip(dims, values.shape)):
            coords[dim] = np.arange(size) if axis < 2 else np.arange(origin, origin + size)
        data_vars[name] = (dims, values)
    return xr.Dataset(data_vars, coords=coords, attrs=make_attrs(attrs=attrs, library=library))
