"""Faults done for real to the command line, in a child process as a user would meet them:
each ends in one line on stderr and the documented exit code, and leaves no partial output."""
import ctypes
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import bayescomp as bc

NOBODY = 65534
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2   # linux/prctl.h, capability.h


@pytest.fixture
def shared_dir():
    """A directory every user can enter (pytest's tmp_path is private to its owner), so that
    a child process running as nobody can read the inputs."""
    directory = Path(tempfile.mkdtemp(prefix="bayescomp-faults-"))
    directory.chmod(0o777)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def scores_csv(shared_dir, write_long_csv):
    sim = bc.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1, seed=4)
    path = write_long_csv(sim.scores, shared_dir / "scores.csv")
    path.chmod(0o644)
    return path


def run(args, unprivileged=False, env=None, **kwargs):
    """The command line in a child process (without root's power over permissions when
    ``unprivileged``), in a scratch working directory that must stay empty."""
    cwd = Path(tempfile.mkdtemp(prefix="bayescomp-cwd-"))
    cwd.chmod(0o777)
    scratch = cwd / ".home"   # caches of matplotlib and arviz, kept out of the user's home
    environment = dict(os.environ, MPLCONFIGDIR=str(scratch / "mpl"), **(env or {}))
    if unprivileged:
        environment.update(HOME=str(scratch), XDG_CACHE_HOME=str(scratch / "cache"))
        kwargs.update(without_root_privilege())
    try:
        done = subprocess.run([sys.executable, "-m", "bayescomp", *map(str, args)], cwd=cwd,
                              capture_output=True, text=True, env=environment,
                              timeout=600, **kwargs)
        leftovers = [p.name for p in cwd.iterdir() if p.name != ".home"]
        assert leftovers == [], f"written to the working directory: {leftovers}"
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    return done


def one_error_line(done, code=2):
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("bayescomp: error: ") and "Traceback" not in done.stderr
    return lines[0]


COMPARE = ["compare", "--first", "a", "--second", "b", "--no-stan"]


def test_a_directory_as_input(shared_dir):
    line = one_error_line(run([*COMPARE, shared_dir]))
    assert line == f"bayescomp: error: {shared_dir} is a directory, not a file; give the CSV " \
        "file of scores"


def test_an_empty_input_file(shared_dir):
    empty = shared_dir / "empty.csv"
    empty.write_text("\n")
    line = one_error_line(run([*COMPARE, empty]))
    assert f"{empty} is empty" in line


@pytest.mark.parametrize("name, expected", [("scores.csv", "not a text CSV file"),
                                            ("scores.csv.gz", "cannot be read as a CSV file")])
def test_a_binary_input_file_names_file(shared_dir, name, expected):
    binary = shared_dir / name   # pandas decompresses .gz: a damaged archive
    binary.write_bytes(b"\x1f\x8b\x08\x00\xff\xfe\x00\x01" * 64)
    line = one_error_line(run([*COMPARE, binary]))
    assert str(binary) in line and expected in line


def test_a_malformed_line_names_file_line_and_column(shared_dir):
    bad = shared_dir / "bad.csv"
    bad.write_text("dataset,algorithm,run,fold,score\nd,a,0,0,0.5\nd,b,0,0,oops\n")
    line = one_error_line(run([*COMPARE, bad]))
    assert str(bad) in line and "line 3, column 'score'" in line


def test_report_faults_of_the_input_name_it_in_one_line(scores_csv, shared_dir):
    out = shared_dir / "report"
    line = one_error_line(run(["report", scores_csv, "--out", out, "--algorithms", "a,zz"]))
    # the file's names, as compare gives them (its algorithms are read, not the file's)
    assert line == (f"bayescomp: error: {scores_csv}: unknown algorithm 'zz'; the scores hold "
                    "['a', 'b']")
    assert not out.exists()


def drop_permission_override():
    """Take CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of the bounding set before exec:
    a root child then has every other power but obeys permission bits like any user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")


def without_root_privilege():
    """subprocess.run arguments that make a permission fault real: none for an ordinary
    user; for root, a child that obeys permission bits (dropped capabilities, or else user
    nobody). Skips only when neither works here."""
    if os.geteuid() != 0:
        return {}
    with tempfile.NamedTemporaryFile() as locked:
        os.chmod(locked.name, 0)
        probe = [sys.executable, "-c", f"open({locked.name!r}).close()"]
        for how in ({"preexec_fn": drop_permission_override}, {"user": NOBODY}):
            try:
                done = subprocess.run(probe, cwd="/", capture_output=True, **how)
            except (KeyError, OSError, subprocess.SubprocessError):
                continue
            # only root's override can open a file of mode 000: refused means it is gone
            if b"PermissionError" in done.stderr:
                return how
    pytest.skip("running as root, and neither dropping CAP_DAC_OVERRIDE nor user nobody "
                f"can run {sys.executable} without root's power over permissions")


def test_an_unreadable_input_file(scores_csv):
    scores_csv.chmod(0)
    line = one_error_line(run([*COMPARE, scores_csv], unprivileged=True))
    assert line == f"bayescomp: error: {scores_csv}: cannot be read (permission denied); " \
        "check its permissions"


def test_a_read_only_output_directory_fails_before_any_work(scores_csv, shared_dir):
    out = shared_dir / "read-only"
    out.mkdir()
    out.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH
              | stat.S_IXOTH)
    done = run([*COMPARE, scores_csv, "--out", out / "report"], unprivileged=True)
    line = one_error_line(done)
    assert line == (f"bayescomp: error: --out {out / 'report'}: its parent {out}: cannot write "
                    "there (permission denied; write elsewhere or change the permissions)")
    assert done.stdout == ""   # nothing analysed: the check comes first
    assert list(out.iterdir()) == []


def test_an_output_in_a_directory_nobody_may_write(scores_csv):
    # sysfs refuses new files to every user, root included
    done = run([*COMPARE, scores_csv, "--out", "/sys/bayescomp-report"])
    assert one_error_line(done) == ("bayescomp: error: --out /sys/bayescomp-report: its parent "
                                    "/sys: cannot write there (permission denied; write "
                                    "elsewhere or change the permissions)")
    assert done.stdout == ""


def test_an_output_that_is_a_file(scores_csv):
    line = one_error_line(run([*COMPARE, scores_csv, "--out", scores_csv]))
    assert line == (f"bayescomp: error: --out {scores_csv}: exists and is not a directory; "
                    "give a directory (it is created if missing)")


def test_a_full_disk_leaves_no_partial_output(scores_csv, shared_dir):
    out = shared_dir / "new" / "report"
    done = run([*COMPARE, scores_csv, "--out", out, "--json", "/dev/full"])
    assert one_error_line(done) == ("bayescomp: error: /dev/full: no space left on the "
                                    "device; free some space or write elsewhere")
    assert list(shared_dir.iterdir()) == [scores_csv]   # neither report nor its parent


@pytest.fixture
def full_disk():
    """A real file system with no space left: a 64 KiB tmpfs, filled. Mounting needs root
    (CAP_SYS_ADMIN); elsewhere the test skips and /dev/full above still checks the line."""
    mountpoint = Path(tempfile.mkdtemp(prefix="bayescomp-full-"))
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                                  str(mountpoint)], capture_output=True, text=True, timeout=60)
        refused = mounted.stderr.strip() if mounted.returncode != 0 else None
    except (OSError, subprocess.SubprocessError) as error:   # no mount command
        refused = str(error)
    if refused is not None or not os.path.ismount(mountpoint):
        mountpoint.rmdir()
        pytest.skip(f"cannot mount a small tmpfs here: {refused}")
    try:
        with pytest.raises(OSError, match="No space left"), open(mountpoint / "filler",
                                                                  "wb") as fh:
            for _ in range(64):
                fh.write(b"\0" * 4096)
                fh.flush()
        yield mountpoint
    finally:
        # lazily: a file still open elsewhere must not turn a passed test into an error
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, timeout=60)
        if not os.path.ismount(mountpoint):
            mountpoint.rmdir()


def test_a_full_file_system_gives_one_line_and_leaves_nothing(scores_csv, full_disk):
    out = full_disk / "report"
    done = run([*COMPARE, scores_csv, "--out", out])
    assert one_error_line(done) == (f"bayescomp: error: {out}: no space left on the device; "
                                    "free some space or write elsewhere")
    assert [p.name for p in full_disk.iterdir()] == ["filler"]   # no staging left behind


def test_outputs_appear_together_and_nothing_else(scores_csv, shared_dir):
    out, target = shared_dir / "a" / "report", shared_dir / "a" / "result.json"
    done = run([*COMPARE, scores_csv, "--out", out, "--json", target])
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["report", "result.json"]


def test_a_reader_that_closes_stdout_ends_the_command_quietly(shared_dir):
    # as `bayescomp demo --no-stan | head -1`, without the race: the reader is gone before
    # the first line is written, so the write must fail however short the output
    child = subprocess.Popen([sys.executable, "-m", "bayescomp", "demo", "--no-stan", "--json",
                              shared_dir / "demo.json"], cwd=shared_dir,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, MPLCONFIGDIR=str(shared_dir / "mpl")))
    child.stdout.close()
    stderr = child.stderr.read()
    assert (child.wait(timeout=600), stderr) == (141, b"")   # 128 + SIGPIPE, as Unix tools
    assert not (shared_dir / "demo.json").exists()   # stopped before its outputs


# --- with Stan ------------------------------------------------------------------------------

@pytest.mark.stan
def test_a_missing_compiler_is_one_line(scores_csv, shared_dir, cmdstanpy_backend):
    # the system's tools without a C++ compiler on PATH, and an empty cache, so the program
    # must be built
    tools = shared_dir / "bin"
    tools.mkdir()
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for tool in Path(directory).iterdir():
            compiler = any(c in tool.name for c in ("g++", "gcc", "clang")) or \
                tool.name in ("c++", "cc")
            if not compiler and not (tools / tool.name).exists():
                (tools / tool.name).symlink_to(tool)
    done = run(["compare", scores_csv, "--first", "a", "--second", "b", "--backend",
                "cmdstanpy", "--out", shared_dir / "report"],
               env={"PATH": str(tools), "XDG_CACHE_HOME": str(shared_dir / "cache"),
                    "BAYESCOMP_CACHE_DIR": str(shared_dir / "cache" / "bayescomp")})
    line = one_error_line(done)
    assert "could not compile Stan program 'hierarchical'" in line
    assert "Is a C++ compiler (g++ or clang++) installed and on PATH?" in line
    details = Path(line.rsplit("The full message is in ", 1)[1].rstrip("."))
    # CmdStan's makefiles fail on the empty compiler variable; the full output is kept
    assert details.is_file() and "Failed to compile Stan model" in details.read_text()
    details.unlink()
    assert not (shared_dir / "report").exists()


@pytest.mark.stan
def test_ctrl_c_during_sampling_exits_130_with_no_output(scores_csv, shared_dir,
                                                         cmdstanpy_backend):
    out, target = shared_dir / "report", shared_dir / "result.json"
    # a fit long enough to be interrupted; --progress announces when sampling starts
    child = subprocess.Popen(
        [sys.executable, "-m", "bayescomp", "compare", str(scores_csv), "--first", "a",
         "--second", "b", "--backend", "cmdstanpy", "--iter-sampling", "200000", "--retries",
         "0", "--progress", "--out", str(out), "--json", str(target)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=shared_dir,
        start_new_session=True, env=dict(os.environ, MPLCONFIGDIR=str(shared_dir / "mpl")))
    seen = b""
    while b"sampling the hierarchical model" not in seen:
        chunk = os.read(child.stderr.fileno(), 4096)
        assert chunk, f"the child ended first: {seen!r}"
        seen += chunk
    time.sleep(1)   # into the chains (waiting only; nothing is timed)
    os.killpg(child.pid, signal.SIGINT)   # as Ctrl-C does: the whole foreground group
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, (seen + stderr).decode()
    assert stderr.decode().strip().splitlines()[-1] == \
        "bayescomp: interrupted; nothing was written (exit code 130)"
    assert "Traceback" not in stderr.decode()
    assert sorted(p.name for p in shared_dir.iterdir()) == ["mpl", "scores.csv"]
