"""Evaluate admission rules in a forked child with a CPU-time and a memory budget.

The `cel` library is native code without cost tracking: an expression that loops for minutes or
doubles a list in every variable cannot be interrupted from Python, and a native crash would take
the whole process with it. So one child process per rule set does the evaluating: forked from the
parent (no start-up cost: the rule set and the library are already loaded), it receives a list of
objects over a pipe (a whole check at once, `RuleSet.evaluate_all`) and sends back their outcomes.

- Each CEL call runs under a CPU-time timer (``ITIMER_PROF`` left at its default action, which
  ends the process even inside native code) of at most ``limits.CALL_CPU_SECONDS`` and what is left
  of ``limits.OBJECT_CPU_SECONDS`` for the object; a second timer (``ITIMER_VIRTUAL``) bounds the
  whole object, converting values to CEL included; the address space may grow by at most
  ``limits.EVAL_MEMORY_BYTES``. The child's stderr is /dev/null: a native panic prints nothing.
- Before each compile and each call the child writes the expression into a shared page. When the
  child dies, the parent reads which expression it was, remembers it as over budget (``over_budget``,
  for the rest of the evaluation round, ``forget_run_verdicts``; a compile crash for the process)
  and evaluates the object again in a fresh child, where that expression fails at once with the
  reason: the API server's outcome for an expression that runs out of cost budget (an error, denied
  under ``failurePolicy: Fail``), or, for one that crashed the library's compiler, a rule not
  evaluated.
- A worker may be started ahead of its first request (``start``) with a ``prime`` step list: the
  child then compiles the rule set's expressions right after the fork, each compile under the same
  CPU timer an object's evaluation has, while the parent goes on (`check` loads and renders the
  stack meanwhile). A child that dies while priming is restarted without priming, and the
  expression it was compiling is remembered as any other. ``send`` hands the child a request
  without waiting; ``evaluate`` of the same request object then only reads the answer.
"""
from __future__ import annotations

import atexit
import fcntl
import gc
import mmap
import os
import pickle
import resource
import select
import signal
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from . import limits

ROOT = Path(__file__).resolve().parents[2]   # the folder holding the `policies` package
PROGRESS_BYTES = 8 + 4 * limits.MAX_CODE_POINTS + 64
MAX_DEATHS_PER_REQUEST = 8
STUCK_SECONDS = 1.5    # a child asleep this long without using CPU time is deadlocked
WALL_SECONDS = 60.0    # whatever the load, no object takes longer
EXIT_MEMORY = 86
COMPILE, RUN = b"C", b"R"
PRIMING_AT = PROGRESS_BYTES - 1   # a byte `note` never writes: "P" while the child primes
_NOTHING = object()              # no request sent ahead
REQUEST_PIPE_BYTES = 1 << 20     # Linux's default most for an unprivileged process

over_budget: dict[str, str] = {}   # CEL source -> why it is not run again (compile crashes: "C:" prefixed)


class _Child:
    """What the engine needs to know inside the child (set only there)."""

    progress: mmap.mmap | None = None
    object_started = 0.0
    last: str | None = None


CHILD = _Child()


def note(stage: bytes, source: str) -> None:
    """Record the expression about to be compiled or run (in the child only)."""
    if CHILD.progress is None or (CHILD.last is source and stage == RUN):
        return
    data = source.encode("utf-8", "replace")[:PROGRESS_BYTES - 8]
    CHILD.progress[0:5 + len(data)] = stage + struct.pack("<I", len(data)) + data
    CHILD.last = source if stage == RUN else None


def start_object() -> None:
    """One object's evaluation starts (in the child only): its CPU budget, and a timer over the
    whole of it (converting values to CEL too, not only the calls)."""
    if CHILD.progress is not None:
        CHILD.object_started = time.process_time()
        signal.setitimer(signal.ITIMER_VIRTUAL, limits.OBJECT_CPU_SECONDS + limits.CALL_CPU_SECONDS)


def end_object() -> None:
    if CHILD.progress is not None:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def start_call() -> float:
    """Arm the CPU timer for one CEL call; the seconds it allows (0: the object's budget is spent)."""
    if CHILD.progress is None:
        return limits.CALL_CPU_SECONDS
    left = limits.OBJECT_CPU_SECONDS - (time.process_time() - CHILD.object_started)
    seconds = min(limits.CALL_CPU_SECONDS, left)
    if seconds > 0:
        signal.setitimer(signal.ITIMER_PROF, seconds)
    return max(seconds, 0.0)


def end_call() -> None:
    if CHILD.progress is not None:
        signal.setitimer(signal.ITIMER_PROF, 0)


def _frame(value: Any) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return struct.pack("<Q", len(data)) + data


def _send(fd: int, value: Any) -> None:
    view = memoryview(_frame(value))
    while view:
        view = view[os.write(fd, view):]


def _send_now(fd: int, data: bytes) -> bool:
    """Write ``data`` whole without waiting (the pipe holds it while the child is busy); False when
    it did not fit. Then nothing was written, or a part (the caller stops that child)."""
    os.set_blocking(fd, False)
    try:
        written = os.write(fd, data)
    except BlockingIOError:
        return False
    finally:
        os.set_blocking(fd, True)
    if written != len(data):
        raise BlockingIOError("partly written")
    return True


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _recv(fd: int) -> Any:
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    body = _read_exactly(fd, struct.unpack("<Q", head)[0])
    return None if body is None else pickle.loads(body)


def _cpu_and_state(pid: int) -> tuple[int | None, str]:
    """A child's CPU ticks so far and its state letter, from /proc; (None, "") once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None, ""
    if fields[0] in "ZX":
        return None, ""
    return int(fields[11]) + int(fields[12]), fields[0]


def _memory_limit() -> int:
    """The child's address-space limit: what the process maps now plus the evaluation budget, never
    above a limit already set."""
    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        mapped = 2**31
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    wanted = mapped + limits.EVAL_MEMORY_BYTES
    return wanted if soft == resource.RLIM_INFINITY else min(soft, wanted)


def _prime(steps: Iterator[Any]) -> None:
    """Run the priming steps (each compiles one expression), each under the CPU timer an object's
    evaluation has; stop early after ``limits.OBJECT_CPU_SECONDS`` in all (the rest compiles when
    used). A fault in our own code only ends the priming."""
    started = time.process_time()
    try:
        while time.process_time() - started < limits.OBJECT_CPU_SECONDS:
            signal.setitimer(signal.ITIMER_VIRTUAL, limits.OBJECT_CPU_SECONDS + limits.CALL_CPU_SECONDS)
            try:
                next(steps)
            except StopIteration:
                break
    except MemoryError:
        os._exit(EXIT_MEMORY)
    except Exception:   # noqa: BLE001 - best effort: what is not compiled now is compiled when used
        pass
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def _child_loop(evaluate: Callable[[Any], list], requests: int, replies: int, progress: mmap.mmap,
                prime: Callable[[], Iterator[Any]] | None = None) -> None:
    for sig in (signal.SIGINT, signal.SIGALRM, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL if sig == signal.SIGTERM else signal.SIG_IGN)
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    limit = _memory_limit()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    CHILD.progress = progress
    if prime is not None:
        progress[PRIMING_AT:PRIMING_AT + 1] = b"P"
        _prime(prime())
        progress[PRIMING_AT:PRIMING_AT + 1] = b"\0"
    while (request := _recv(requests)) is not None:
        progress[0:1] = b"\0"
        CHILD.last = None
        try:
            reply = ("ok", evaluate(request))
        except MemoryError:
            os._exit(EXIT_MEMORY)
        except Exception as exc:   # a fault in our own code: the parent raises it as before
            reply = ("error", f"{type(exc).__name__}: {exc}")
        end_object()
        _send(replies, reply)


# The parent's ends of every live worker's pipes: a forked child closes them all (see _fork).
_PARENT_ENDS: set[int] = set()
# Every worker whose child runs: stopped and reaped when the parent exits, however it exits (a
# return, an error, SIGINT or SIGTERM turned into an exception by the CLI), so no child outlives
# the command and none is left a zombie for a PID 1 that does not reap.
_LIVE: set["Worker"] = set()


# The signals the CLI turns into an exception: held while a child is forked and recorded in _LIVE
# (else one arriving between the fork and the record leaves a child nobody reaps) and while the
# children are stopped at exit.
_HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@atexit.register
def stop_all() -> None:
    """Stop and reap every child still running (at exit; tests call it too)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        for worker in list(_LIVE):
            worker.stop()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def forget_run_verdicts() -> bool:
    """Forget the expressions remembered as over budget while running on some object (compile
    crashes stay: they are the expression's own). Such a verdict belongs to the object it ran on, so
    it lasts one evaluation round (one `check`), never the life of the process; children that
    inherited it are stopped and start again without it. Whether anything was forgotten."""
    stale = [key for key in over_budget if not key.startswith("C:")]
    for key in stale:
        del over_budget[key]
    if stale:
        stop_all()
    return bool(stale)


class Worker:
    """One forked child evaluating ``evaluate(request)`` for the parent, restarted after it dies."""

    def __init__(self, evaluate: Callable[[Any], list], setup: Any = None,
                 prime: Callable[[], Iterator[Any]] | None = None):
        """``evaluate`` answers a request in a forked child; a spawned child first receives ``setup``
        and answers with ``spawned_evaluator(setup)``. ``prime``: steps a forked child runs before
        its first request (a spawned one does not prime)."""
        self._evaluate = evaluate
        self._setup = setup
        self._prime = prime
        self._ahead: Any = _NOTHING   # the request sent with ``send`` whose answer is unread
        self._room = 0                # what the request pipe holds
        self._spawned_with: Any = None
        self.stalled = False
        self.pid = 0
        self._requests = self._replies = -1
        self._progress: mmap.mmap | None = None
        self._mask: set = set()   # the signal mask a forked child restores (see _start)

    def _start(self) -> None:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            self._start_held(held)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def _start_held(self, mask: set) -> None:
        """``_start`` with the CLI's signals held (``mask``: the caller's, which a child restores)."""
        self._mask = mask
        requests_r, requests_w = os.pipe()
        try:   # room for a whole check's objects, so that ``send`` never waits on a busy child
            fcntl.fcntl(requests_w, fcntl.F_SETPIPE_SZ, REQUEST_PIPE_BYTES)
        except OSError:   # over the user's pipe allowance: the default size
            pass
        try:
            self._room = fcntl.fcntl(requests_w, fcntl.F_GETPIPE_SZ)
        except OSError:
            self._room = 0
        replies_r, replies_w = os.pipe()
        shared = os.memfd_create("trainstack-cel-progress")
        os.ftruncate(shared, PROGRESS_BYTES)
        progress = mmap.mmap(shared, PROGRESS_BYTES)
        self._ahead = _NOTHING
        if threading.active_count() == 1:
            pid, self._spawned_with = self._fork(requests_r, replies_w, progress, (requests_w, replies_r)), None
        else:
            pid, self._spawned_with = self._spawn(requests_r, replies_w, shared), self._setup
        os.close(shared)
        os.close(requests_r)
        os.close(replies_w)
        self.pid, self._requests, self._replies, self._progress = pid, requests_w, replies_r, progress
        _PARENT_ENDS.update((requests_w, replies_r))
        _LIVE.add(self)

    def _fork(self, requests: int, replies: int, progress: mmap.mmap, parent_ends: tuple[int, int]) -> int:
        gc.freeze()   # the child's collections then leave the parent's objects (and their pages) alone
        pid = os.fork()
        if pid == 0:   # the child: never returns into the caller's code
            code = 0
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
                # Keep no write end of any request pipe (its own parent's, or another worker's): when
                # the parent exits the child then reads EOF and ends, instead of waiting forever (and
                # keeping a stdin it inherited, or another worker's child, alive).
                for fd in (*parent_ends, *_PARENT_ENDS):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                gc.disable()   # short-lived, and bounded by the memory budget
                _child_loop(self._evaluate, requests, replies, progress, self._prime)
            except BaseException:   # noqa: BLE001 - the parent sees the exit status
                code = 70
            finally:
                os._exit(code)
        gc.unfreeze()
        return pid

    def _spawn(self, requests: int, replies: int, shared: int) -> int:
        """A fresh interpreter: forking a process whose other threads run (the pack's gRPC server)
        lets their libraries' fork handlers crash the child."""
        import subprocess   # only a process with threads spawns

        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        process = subprocess.Popen([sys.executable, "-m", "policies.admission.worker", str(requests), str(replies),
                                    str(shared)], pass_fds=(requests, replies, shared), env=env, cwd=str(ROOT),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        process.returncode = 0   # reaped by _reap (os.waitpid), never by the Popen object
        return process.pid

    def start(self) -> None:
        """Start the child now (it primes meanwhile), not at the first request."""
        if not self.pid:
            self._start()
            if self._spawned_with is not None:
                _send(self._requests, (self._spawned_with, dict(over_budget)))

    def send(self, request: Any) -> None:
        """Hand ``request`` to the child and return at once; ``evaluate(request)`` (the same object)
        reads its answer. A failure to send is left to ``evaluate``, which sends again."""
        if self._ahead is not _NOTHING:
            return   # one request ahead at a time
        data = _frame(request)
        try:
            self.start()
            if len(data) > self._room:   # it would wait for the child: ``evaluate`` sends it, watching
                return
            sent = _send_now(self._requests, data)
        except OSError:   # the child is gone, or part of the request is in its pipe: start afresh
            self.stop()
            return
        if sent:
            self._ahead = request

    def stop(self) -> None:
        if not self.pid:
            return
        self._close_pipes()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self._reap()

    def _close_pipes(self) -> None:
        """The parent's ends of the child's two pipes (a forked child no longer closes them)."""
        for fd in (self._requests, self._replies):
            _PARENT_ENDS.discard(fd)
            try:
                os.close(fd)
            except OSError:
                pass

    def _reap(self) -> int:
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        self.pid = 0
        _LIVE.discard(self)
        return status

    def _answers(self) -> bool:
        """Wait for the child's reply; False when it died, or sleeps without using CPU time for
        ``STUCK_SECONDS`` (a native deadlock after a failed allocation: no CPU timer fires then) or
        runs past ``WALL_SECONDS`` (it is then killed; ``_death`` says why)."""
        started = last_change = time.monotonic()
        last_cpu = -1
        while True:
            ready, _, _ = select.select([self._replies], [], [], 0.2)
            if ready:
                return True
            now = time.monotonic()
            cpu, state = _cpu_and_state(self.pid)
            if cpu is None:
                return False
            if cpu != last_cpu:
                last_cpu, last_change = cpu, now
            if (state in "SD" and now - last_change > STUCK_SECONDS) or now - started > WALL_SECONDS:
                self.stalled = True
                os.kill(self.pid, signal.SIGKILL)
                return False

    def _death(self) -> tuple[bytes, str, str, bool]:
        """The stage and expression the child was in when it died, why it died, and whether it was
        still priming (then no request of the parent's was running)."""
        self._close_pipes()
        status = self._reap()
        progress = self._progress
        stage, size = progress[0:1], struct.unpack("<I", progress[1:5])[0]
        source = progress[5:5 + size].decode("utf-8", "replace") if stage in (COMPILE, RUN) else ""
        priming = progress[PRIMING_AT:PRIMING_AT + 1] == b"P"
        progress.close()
        signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        stalled, self.stalled = self.stalled, False
        if stalled:
            why = (f"ran out of the memory budget ({limits.EVAL_MEMORY_BYTES // 2**20} MiB per evaluation) and made "
                   f"no progress for {STUCK_SECONDS:g} s (the library deadlocked), so it was stopped")
        elif signum in (signal.SIGPROF, signal.SIGVTALRM):
            why = (f"ran out of the runtime budget ({limits.CALL_CPU_SECONDS:g} s of CPU time per expression, "
                   f"{limits.OBJECT_CPU_SECONDS:g} s per object: the API server's per-call and per-object CEL cost "
                   f"limits) and was stopped")
        elif signum in (signal.SIGABRT, signal.SIGKILL, signal.SIGBUS) or os.WIFEXITED(status) and \
                os.WEXITSTATUS(status) == EXIT_MEMORY:
            why = (f"ran out of the memory budget ({limits.EVAL_MEMORY_BYTES // 2**20} MiB per evaluation; the "
                   "API server's cost limits stop such an expression) and was stopped")
        else:
            code = f"signal {signum}" if signum else f"exit status {os.WEXITSTATUS(status)}"
            why = f"crashed the CEL library ({code}) and was stopped"
        return stage, source, why, priming

    def evaluate(self, request: Any) -> list | None:
        """The child's answer for ``request``; None when it died on something not an expression."""
        for _ in range(MAX_DEATHS_PER_REQUEST):
            other = False   # reading the answer to another request sent ahead, no longer wanted
            try:
                self.start()
                if self._ahead is not _NOTHING and self._ahead is not request:
                    other = True
                    if not self._answers() or _recv(self._replies) is None:
                        raise BrokenPipeError
                    other, self._ahead = False, _NOTHING
                if self._ahead is not request:
                    _send(self._requests, request)
                self._ahead = _NOTHING
                reply = _recv(self._replies) if self._answers() else None
            except BrokenPipeError:
                reply = None
            except BaseException:
                self.stop()   # interrupted mid-request: the child's state is unknown
                raise
            if reply is not None:
                if reply[0] == "error":
                    raise RuntimeError(reply[1])
                return reply[1]
            stage, source, why, priming = self._death()
            key = ("C:" if stage == COMPILE else "") + source
            if priming or other:   # not this request's death: remember the expression, start again
                if priming:
                    self._prime = None
                if source:
                    over_budget.setdefault(key, why)
                continue
            if not source or key in over_budget:
                return None
            over_budget[key] = why
        return None


def _spawned_main(argv: list[str]) -> None:
    """A spawned child: read the rule set's index, then answer requests as a forked child does."""
    requests, replies, shared = (int(a) for a in argv)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)   # held by the parent while it started us
    progress = mmap.mmap(shared, PROGRESS_BYTES)
    setup = _recv(requests)
    if setup is None:
        return
    index, known = setup
    over_budget.update(known)
    from .engine import RuleSet   # the engine imports this module

    _child_loop(RuleSet(index)._child_evaluate, requests, replies, progress)


if __name__ == "__main__":
    code = 0
    try:   # the package's module, not this __main__ copy: the engine records progress there
        from policies.admission import worker as package_worker

        package_worker._spawned_main(sys.argv[1:])
    except BaseException:   # noqa: BLE001 - the parent sees the exit status
        code = 70
    os._exit(code)
