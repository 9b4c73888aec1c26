"""What the worker that runs a submission can see and do, asked from inside it.

A probe module's function tries each forbidden thing and returns what happened, as plain data through the
same proxy the graded checks use. Where Linux namespaces are available the worker must be confined; where
they are not, those tests skip with the reason, and the fallback is tested instead.
"""
from __future__ import annotations

import csv
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.boundary import confine, zygote
from grader.boundary.session import Session
from grader.grading.runner import protect_key
from kit import HW, MODES, in_process, mode_env, run_check

PROBE = textwrap.dedent('''
    import ctypes, os, socket, subprocess, sys


    def probe(kit_root, port):
        def attempt(f):
            try:
                return "ok: " + str(f())[:200]
            except BaseException as exc:
                return "refused: " + type(exc).__name__

        libc = ctypes.CDLL(None, use_errno=True)
        return {
            "read_solutions": attempt(lambda: os.listdir(os.path.join(kit_root, "solutions"))),
            "read_kit_readme": attempt(lambda: open(os.path.join(kit_root, "README.md")).read(10)),
            "read_checks": attempt(lambda: sorted(os.listdir(os.path.join(kit_root, "tests",
                                                                          "s6-hw00-rl-foundations")))),
            "read_check_file": attempt(lambda: open(os.path.join(kit_root, "tests", "s6-hw00-rl-foundations",
                                                                 "test_ppo.py")).read(10)),
            "read_key": attempt(lambda: open(os.path.join(kit_root, "tests", "s6-hw00-rl-foundations", "key",
                                                          "ppo.py")).read(10)),
            "import_key": attempt(lambda: __import__("importlib").import_module("key.ppo")),
            "read_shared": attempt(lambda: os.listdir(os.path.join(kit_root, "tests", "s6-hw00-rl-foundations",
                                                                   "shared"))),
            "write_grader": attempt(lambda: open(os.path.join(kit_root, "grader", "grading", "checks.py"),
                                                 "a").close()),
            "remount_grader_rw": attempt(lambda: 1 / (libc.mount(None, os.path.join(kit_root, "grader").encode(),
                                                                 None, 32 | 4096, None) + 1)),
            "loopback": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close()),
            "processes": sorted(p for p in os.listdir("/proc") if p.isdigit()),
            "commands": [attempt(lambda: open(f"/proc/{p}/cmdline", "rb").read().replace(b"\\0", b" ").decode())
                         for p in sorted(p for p in os.listdir("/proc") if p.isdigit())],
            "capabilities": [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")][0],
            "tmp": sorted(os.listdir("/tmp")),
            "cwd_files": sorted(os.listdir(".")),
            "environment": sorted(os.environ),
            "fork": attempt(lambda: os.waitpid(os.fork() or os._exit(0), 0)),
            "subprocess": attempt(lambda: __import__("subprocess").run(["/bin/true"]).returncode),
            "thread": attempt(lambda: [t.start() or t.join() for t in [__import__("threading").Thread()]]),
            "nested_user_namespace": attempt(lambda: 1 / (libc.unshare(0x10000000) + 1)),
            "write_cwd": attempt(lambda: open("written.bin", "wb").write(b"x")),
            "fill_tmp": attempt(lambda: [open(f"/tmp/fill{i}", "wb").write(bytes(40 << 20)) for i in range(3)]),
            # folders their owner cannot list (0o300) with a file in each, one near the top and one 1 100 folders down
            # (past Python's recursion limit): the red team's channel to its next grade
            "locked_tmp": attempt(lambda: [os.makedirs("/tmp/fill-locked/" + "d/" * 1100), os.mkdir(
                "/tmp/fill-locked/t", 0o300), os.mkdir("/tmp/fill-locked/" + "d/" * 1100 + "t", 0o300)] + [
                open(f, "w").write("x") for f in ("/tmp/fill-locked/t/x", "/tmp/fill-locked/" + "d/" * 1100 + "t/x")]),
            "unix_socket": attempt(lambda: socket.socket(socket.AF_UNIX).close()),
            # a System V segment outlives the worker (a channel to a classmate graded later); io_uring makes sockets
            # without socket()
            "sysv_shm": attempt(lambda: 1 / (libc.shmget(0, 4096, 0o1000 | 0o666) + 1)),
            "io_uring": attempt(lambda: 1 / (libc.syscall(425, 8, ctypes.create_string_buffer(120)) + 1)),
            # a key in the user's or a persistent keyring outlives the worker too (the second red team's channel)
            "add_key": attempt(lambda: 1 / (libc.syscall({"x86_64": 248, "aarch64": 217}.get(
                __import__("platform").machine(), -1), b"user", b"hwkit-probe", b"x", 1, -4) + 1)),
            "socketpair": attempt(lambda: [s.close() for s in socket.socketpair()]),
            "uid": os.getuid(),
            "threads_made": threads(),
        }


    def threads():
        import threading

        started, stop = [], threading.Event()
        try:
            for _ in range(1000):
                t = threading.Thread(target=stop.wait)
                t.start()
                started.append(t)
        except RuntimeError:
            pass
        stop.set()
        for t in started:
            t.join()
        return len(started)


    def td_errors(rewards, values, last_value, gamma):
        raise NotImplementedError
''')


@pytest.fixture(scope="module")
def listener():
    """A server on the loopback (the only address a kit test may use), counting connections it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    accepted = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                continue

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    stop.set()
    server.close()


@pytest.fixture(scope="module", params=MODES)
def probed(request, tmp_path_factory, listener):
    """(the worker's confinement level, what the probe saw, the session) in each mode a grade is given in."""
    folder = tmp_path_factory.mktemp("probe")
    (folder / "ppo.py").write_text(PROBE, encoding="utf-8")
    hw = homeworks.load(HW)
    with in_process(request.param):  # while the session chooses its confinement and its worker starts
        # as the grader does before every grading (grader.grading.runner.run_parts): in a fresh clone no grading has
        # closed the key, the reference and the kit's tests to other users yet when this module runs first
        protect_key(hw)
        session = Session(hw, folder, 20)
        seen = session.module("ppo").probe(str(ROOT), listener[0])
    try:
        yield session.level, seen, session  # the level the worker reported when it started
    finally:
        session.close()


namespaces = pytest.mark.skipif(not confine.namespaces_available(),
                                reason="пространства имён Linux недоступны на этой машине: изоляция файловой системы, "
                                       "сети и процессов не проверяется (ограничения ресурсов проверены ниже)")


def test_the_self_probe_connects_on_the_host(listener):
    """The listener works: a connection from this process is accepted (so a refusal below means something)."""
    port, accepted = listener
    before = len(accepted)
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    for _ in range(50):
        if len(accepted) > before:
            break
        threading.Event().wait(0.05)
    assert len(accepted) > before


def test_worker_cannot_read_the_solutions_the_checks_the_answer_key_or_the_kit_root(probed):
    level, seen, session = probed
    assert (ROOT / "solutions").is_dir()  # they exist, the worker just does not see them
    assert seen["read_solutions"].startswith("refused"), seen
    # nor the instructor's answer key (#26): the oracles, the secret of the hidden inputs
    assert (ROOT / "tests" / "s6-hw00-rl-foundations" / "key" / "ppo.py").is_file()
    assert seen["read_key"].startswith("refused") and seen["import_key"].startswith("refused"), seen
    if not session.confined:  # a user of its own reads what every user may: the checks are the student's copy's
        assert level.startswith(confine.SEPARATE_USER.split("(")[0]) and seen["uid"] >= confine.UID_BASE, level
        return
    assert level.startswith(confine.NAMESPACES), level
    assert seen["read_kit_readme"].startswith("refused"), seen
    # of the homework's checks only the modules they share with the worker (the test environments' classes) and the
    # list of parts
    assert seen["read_checks"] == "ok: ['parts.toml', 'shared']", seen
    assert seen["read_check_file"].startswith("refused"), seen
    assert "control_envs.py" in seen["read_shared"], seen


def test_worker_cannot_change_the_kit_even_by_remounting(probed):
    _, seen, _ = probed
    assert seen["write_grader"].startswith("refused"), seen
    assert seen["remount_grader_rw"].startswith("refused"), seen
    assert int(seen["capabilities"], 16) == 0, seen


def test_worker_has_no_network(probed, listener):
    _, seen, _ = probed
    port, accepted = listener
    assert seen["loopback"].startswith("refused"), seen
    assert seen["unix_socket"].startswith("refused") and seen["socketpair"].startswith("refused"), seen
    assert seen["io_uring"].startswith("refused"), seen
    assert not accepted or all(c.getpeername()[0] == "127.0.0.1" for c in accepted)


def test_worker_leaves_no_ipc_object_behind(probed):
    _, seen, _ = probed
    assert seen["sysv_shm"].startswith("refused") and seen["add_key"].startswith("refused"), seen


@namespaces
def test_worker_sees_no_other_process_nor_other_files(probed):
    _, seen, session = probed
    if not session.confined:
        pytest.skip("a view of its own is the namespaces' (a user of its own sees the machine's processes and files)")
    # itself, and the zygote that forked it as the first process of its namespace (where workers are forked):
    # nothing of the grader's, of the machine's or of another submission's
    # (pids in its namespace go on from earlier workers of the same zygote: only how many, and the zygote as 1)
    assert seen["processes"][0] == "1" and len(seen["processes"]) <= 2, seen["processes"]
    assert all("grader.boundary.worker import" in command for command in seen["commands"]), seen["commands"]
    # a private /tmp: only the way to its own scratch folder (and to the kit or Python, when they live in /tmp)
    shown = [Path(p) for p in zygote.visible(session.hw)] + [session.tmp]
    allowed = {p.relative_to("/tmp").parts[0] for p in shown if p.is_relative_to("/tmp") and p != Path("/tmp")}
    assert set(seen["tmp"]) <= allowed and session.tmp.relative_to("/tmp").parts[0] in seen["tmp"], seen["tmp"]
    hw = homeworks.load(HW)
    provided = [p.name for p in hw.homework_dir.glob("*.py") if p.stem not in hw.modules]  # envs.py, plots.py, ...
    assert seen["cwd_files"] == sorted(["ppo.py", *provided]), seen["cwd_files"]


def test_worker_environment_is_clean(probed):
    _, seen, _ = probed
    assert set(seen["environment"]) <= {"PATH", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
                                        "PYTHONIOENCODING", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "MKL_NUM_THREADS", confine.MARKER, "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                        "LD_LIBRARY_PATH", "TMPDIR", "SYSTEMROOT"}, seen["environment"]


def test_without_namespaces_grading_still_works_and_says_so(tmp_path):
    out = tmp_path / "r.json"
    proc = run_check(HW, "ppo::test_td_errors_courier", "--solutions", "--json", str(out),
                     env_extra={"HWKIT_CONFINE": "off"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "без пространств имён" in proc.stdout
    import json

    assert json.loads(out.read_text(encoding="utf-8"))["extra_data"]["confinement"].startswith("без пространств имён")


@namespaces
def test_the_report_says_the_worker_was_confined(tmp_path):
    proc = run_check(HW, "ppo::test_td_errors_courier", "--solutions")
    assert "пространства имён Linux" in proc.stdout, proc.stdout


@pytest.mark.parametrize("user", ["own", "same"])
def test_resource_limits_apply_without_namespaces(tmp_path, user):
    """Without namespaces, as a user of the submission's own (a root grader) or as the grader's own user (where it
    cannot change user, or is told not to: HWKIT_SEPARATE_USER=off): the limits hold, and the report says whose
    files the code could read."""
    folder = tmp_path / "hog"
    folder.mkdir()
    (folder / "ppo.py").write_text(textwrap.dedent('''
        import resource

        def limits():
            return {name: resource.getrlimit(getattr(resource, name))[0]
                    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE")}

        def capabilities():
            return [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")][0]

        def td_errors(rewards, values, last_value, gamma):
            return bytearray(8 * 2**30)  # more memory than the worker may have
    '''), encoding="utf-8")
    with in_process("user" if user == "own" else "same"):
        session = Session(homeworks.load(HW), folder, 20)
        assert not session.confined
        got = session.module("ppo").limits()
        assert got == {"RLIMIT_AS": confine.MEMORY_BYTES, "RLIMIT_CPU": confine.CPU_SECONDS,
                       "RLIMIT_FSIZE": confine.FILE_BYTES, "RLIMIT_NOFILE": confine.OPEN_FILES, "RLIMIT_CORE": 0}
        if sys.platform.startswith("linux"):  # without namespaces no capability either, whoever the user
            assert int(session.module("ppo").capabilities(), 16) == 0
        said = "отдельный пользователь (uid" if user == "own" else confine.SAME_USER
        assert said in session.level, session.level  # the report says whose files the code could read
        with pytest.raises(MemoryError):
            session.module("ppo").td_errors([1.0], [1.0], 0.0, 0.9)
        session.close()


@pytest.mark.parametrize("zygote", ["off", "on"])
def test_a_module_named_like_a_library_in_the_submission_never_runs_before_confinement(tmp_path, zygote):
    folder = tmp_path / "student"
    folder.mkdir()
    shutil.copy(ROOT / "homework" / HW / "ppo.py", folder / "ppo.py")
    mark = tmp_path / "mark"
    for name in ("numpy", "sitecustomize", "pickle", "socket"):
        (folder / f"{name}.py").write_text(f"open({str(mark)!r}, 'a').write('{name}\\n')\nraise ImportError\n",
                                           encoding="utf-8")
    proc = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(folder), env_extra={"HWKIT_ZYGOTE": zygote})
    assert proc.returncode == 1 and "не реализовано" in proc.stdout, proc.stdout + proc.stderr
    assert not mark.exists(), f"ran before the worker confined itself: {mark.read_text()}"


def test_worker_makes_threads_but_no_process_and_no_namespace(probed):
    _, seen, session = probed
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("a seccomp filter is available on Linux x86_64 and aarch64 only")
    assert seen["thread"].startswith("ok"), seen["thread"]
    for what in ("fork", "subprocess", "nested_user_namespace"):
        assert seen[what].startswith("refused"), (what, seen[what])
    if os.geteuid() == 0 and confine.separate_user_available():  # a root grader gives the code a user of its own
        # (in either mode: with namespaces, as their root outside them), whose threads the kernel bounds (it does not
        # bound root's: the red team's 3000 threads)
        assert session.link.uid is not None and f"uid {session.link.uid}" in session.level, session.level
        assert 0 < seen["threads_made"] <= confine.THREADS, seen["threads_made"]


def test_what_a_worker_writes_goes_to_a_small_private_tmp_never_to_the_host_disk(probed):
    _, seen, session = probed
    if not session.confined:  # a user of its own writes its scratch folder and the shared temporary folders only
        assert seen["write_cwd"].startswith("ok") and seen["write_grader"].startswith("refused"), seen
        uid = seen["uid"]
        assert any(p.stat().st_uid == uid for p in Path("/tmp").glob("fill*")), "the probe left nothing to remove"
        assert seen["locked_tmp"].startswith("ok") and (Path("/tmp/fill-locked").stat().st_uid == uid), seen
        confine.end_user(uid)  # what the grader does when the submission's grading ends
        assert not [p for p in Path("/tmp").glob("fill*") if p.stat().st_uid == uid]
        return
    assert seen["write_cwd"].startswith("refused"), seen["write_cwd"]  # its scratch folder is read-only
    assert seen["fill_tmp"].startswith("refused"), seen["fill_tmp"]  # 120 MB > the private /tmp's 64 MB
    assert not list(session.tmp.rglob("written.bin"))


WRITES_THE_KIT = textwrap.dedent('''
    import os, sys

    for folder in sys.path:  # the kit's root is on the worker's import path
        for owner in ("homework", "solutions"):
            path = os.path.join(folder, owner, "s6-hw00-rl-foundations", "envs.py")
            try:
                with open(path, "a") as f:
                    f.write("\\nPOISONED = True\\n")
            except OSError:
                pass
''')


@pytest.mark.slow  # grades a whole homework and a batch
@pytest.mark.parametrize("layer", ["namespaces", "limits-only"])
def test_a_kit_that_a_worker_changed_grades_nobody(tmp_path, layer):
    """The checking process imports the kit's provided modules and checks: where no namespace keeps the kit
    read-only to the worker (a kit others may write), the command line sees the kit's digest change and gives
    no grade, for this submission and every later one, instead of grading with a poisoned kit."""
    if layer == "namespaces" and not confine.namespaces_available():
        pytest.skip("no Linux namespaces on this machine")
    kit = Path(tempfile.mkdtemp(prefix="kit-copy-"))  # a copy of the kit, reachable by the worker's user
    try:
        for name in ("grader", "homework", f"tests/{HW}", f"solutions/{HW}"):
            shutil.copytree(ROOT / name, kit / name, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(ROOT / "pyproject.toml", kit / "pyproject.toml")
        for path in [kit, *kit.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        for owner in ("homework", "solutions"):
            os.chmod(kit / owner / HW / "envs.py", 0o666)
        submission = tmp_path / "work"
        shutil.copytree(ROOT / "homework" / HW, submission, ignore=shutil.ignore_patterns("__pycache__"))
        (submission / "dp.py").write_text((submission / "dp.py").read_text() + WRITES_THE_KIT)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   **({"HWKIT_CONFINE": "off"} if layer == "limits-only" else {}))
        check = [sys.executable, str(kit / "homework" / "check.py"), HW, "dp", "mc_td", "--jobs", "1"]
        solo = subprocess.run([*check, "--dir", str(submission)], capture_output=True, text=True, env=env,
                              timeout=300)
        (kit / "solutions" / HW / "envs.py").write_bytes((ROOT / "solutions" / HW / "envs.py").read_bytes())
        (kit / "homework" / HW / "envs.py").write_bytes((ROOT / "homework" / HW / "envs.py").read_bytes())
        batch = tmp_path / "class"
        shutil.copytree(submission, batch / "a_first")  # graded first: it changes the kit again
        shutil.copytree(ROOT / "solutions" / HW, batch / "b_second", ignore=shutil.ignore_patterns("__pycache__"))
        scores = tmp_path / "scores.csv"
        subprocess.run([*check, "--batch", str(batch), "--csv", str(scores)], capture_output=True, text=True,
                       env=env, timeout=300)
        rows = {row["submission"]: row for row in csv.DictReader(scores.open(encoding="utf-8"))}
        # a user of its own cannot reach solutions/ (closed to others while it runs), but the kit's copy in
        # homework/ is writable to every user here
        changed = any("POISONED" in (kit / owner / HW / "envs.py").read_text() for owner in ("homework", "solutions"))
        if layer == "namespaces":
            assert not changed and "оценка не выставлена" not in solo.stdout, solo.stdout
            assert float(rows["b_second"]["total"]) == 30 and not rows["b_second"]["error"], rows
        else:
            assert changed, "the copy of the kit was not writable to the worker: the test proves nothing"
            assert solo.returncode != 0 and "изменились с начала проверки: оценка не выставлена" in solo.stdout, \
                solo.stdout
            assert float(rows["b_second"]["total"]) == 0 and rows["b_second"]["error"], rows  # no grade, and why
    finally:
        shutil.rmtree(kit, ignore_errors=True)


def test_the_kit_digest_covers_every_file_the_checking_process_reads_or_pytest_configures_it_with():
    from grader.grading import kit_digest

    hw = homeworks.load(HW)
    files = set(kit_digest.kit_files(hw))
    expected = {*(ROOT / "grader").rglob("*.py"), *hw.tests_dir.glob("*.py"), *hw.tests_dir.glob("*.toml"),
                ROOT / "pyproject.toml", ROOT / "homework" / "check.py",
                *(p for p in (ROOT / "conftest.py", ROOT / "tests" / "conftest.py") if p.is_file())}
    assert expected <= files, sorted(map(str, expected - files))


@pytest.mark.skipif(not (zygote.available() and hasattr(os, "sched_setaffinity")
                         and os.path.exists("/proc/self/schedstat")),
                    reason="needs the zygote, CPU affinity and the kernel's scheduler statistics")
def test_a_machine_busy_with_others_costs_a_check_neither_its_cpu_limit_nor_its_waiting_budget(tmp_path,
                                                                                                 monkeypatch):
    """Two spinning processes share the worker's only CPU: its 1 s of work takes about 3 s of wall-clock time, the
    call still passes its 2 s limit, and the time it spent queued for the CPU is not charged as waiting."""
    (tmp_path / "ppo.py").write_text(textwrap.dedent('''
        import time


        def td_errors(rewards, values, last_value, gamma):
            end = time.process_time() + 1.0
            while time.process_time() < end:
                pass
            return [0.0]
    '''), encoding="utf-8")
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    hw, hogs, own = homeworks.load(HW), [], []
    # a zygote of its own, started below, so that it and its workers inherit this process's one CPU
    monkeypatch.setattr(zygote, "for_session", lambda hw, confined, hidden=False: own.append(
        zygote.Zygote(hw, confined, "busy", uid=confine.worker_uid())) or own[-1])
    try:
        os.sched_setaffinity(0, {cpu})
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        for hog in hogs:
            os.sched_setaffinity(hog.pid, {cpu})
        session = Session(hw, tmp_path, 2)
        try:
            session.begin_check("starved", "starved", 0)
            started = time.monotonic()
            assert session.module("ppo").td_errors([1.0], [1.0], 0.0, 0.9) == [0.0]
            took = time.monotonic() - started
            assert took > 1.8, f"the worker was not slowed down ({took:.1f} s): the test proves nothing"
            assert session.slack > 2 * confine.WALL_FACTOR - 0.5, session.slack  # queued is not waiting
        finally:
            session.close()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for z in own:
            z.remove()
        os.sched_setaffinity(0, before)


READS_EVERYTHING = textwrap.dedent('''
    import os, stat, sys, time, zlib

    SKIP = ("/proc", "/sys", "/dev")
    KITS = [os.path.realpath(p) for p in sys.path if os.path.isdir(os.path.join(p, "grader"))]
    FOUND = []


    def _wanted(path):
        """The kit's instructor-only files, a secret's file anywhere, the submission's own decoy."""
        name = os.path.basename(path)
        if ("decoy" in name and path.startswith(os.getcwd())) or (name.startswith("secret") and "." not in name):
            return True
        return any(path.startswith(os.path.join(kit, rel)) for kit in KITS
                   for rel in ("solutions/", "tests/s6-hw00-rl-foundations/key/", "tests/kit/", ".git/"))


    def _look(path, seen):
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):  # a FIFO would block the walk
                return
            with open(path, "rb") as f:
                data = f.read(1 << 16)
        except OSError:
            return
        seen[0] += 1
        if "/.git/objects/" in path:
            try:
                data = zlib.decompress(data)
            except zlib.error:
                pass
        if _wanted(path):  # the feedback shows a message's first few hundred characters: the decoy first
            FOUND.insert(0 if "decoy" in path else len(FOUND), path + " = " + data[:60].decode("utf-8", "replace"))


    def _walk():
        """Every file this process can reach, the likeliest places first, for 5 s."""
        deadline, seen = time.monotonic() + 5, [0]
        for kit in KITS:  # where the instructor's files would be, asked by name (a folder may refuse its listing)
            for rel in ("tests/s6-hw00-rl-foundations/key/secret", "tests/s6-hw00-rl-foundations/key/ppo.py",
                        "solutions/s6-hw00-rl-foundations/ppo.py", ".git/HEAD", ".git/config",
                        "tests/kit/variants/s6-hw00-rl-foundations/loop_heavy/ppo.py"):
                _look(os.path.join(kit, rel), seen)
        tops = [os.getcwd(), *KITS, os.getcwd() + "/../..", "/tmp", "/var/tmp", "/dev/shm", "/run", "/root",
                "/home", "/autograder", "/work", "/opt", "/srv", "/mnt", "/"]
        done = set()
        for top in tops:
            for folder, dirs, files in os.walk(os.path.realpath(top)):
                if time.monotonic() > deadline:
                    return seen[0]
                dirs[:] = [d for d in dirs if os.path.join(folder, d) not in SKIP and not
                           (folder == sys.prefix and d == "lib")]
                if folder in done:
                    dirs[:] = []
                    continue
                done.add(folder)
                for name in files:
                    _look(os.path.join(folder, name), seen)
        return seen[0]


    def td_errors(rewards, values, last_value, gamma):
        if not FOUND:
            n = _walk()
            FOUND.insert(0, f"read {n} files")
        raise ValueError(" | ".join(FOUND)[:1900])
''')


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_submission_that_reads_every_file_it_can_reach_gets_nothing_of_the_key_the_secret_or_solutions(
        tmp_path, mode):
    """In each confinement a grade for the record is given under, a submission walks every file it can reach (the
    instructor's by name first) and raises what it found into its own feedback: the secret, the answer key, the
    reference solutions and the kit's own tests (correct variants, typical mistakes) are not there; a decoy of its own
    is, and the count of files it read says it walked."""
    env = mode_env(mode)
    hw = homeworks.load(HW)
    secret_text = "reach-test-" + os.urandom(12).hex()
    secret_file = hw.tests_dir / "key" / f"secret-reach-{os.getpid()}"  # where an instructor's secret lives
    secret_file.write_text(secret_text + "\n", encoding="utf-8")
    folder = tmp_path / "walker"
    folder.mkdir()
    (folder / "ppo.py").write_text(READS_EVERYTHING, encoding="utf-8")
    decoy = "decoy-" + os.urandom(8).hex()
    (folder / "decoy_module.py").write_text(f"# {decoy}\n", encoding="utf-8")  # staged with the submission
    out = tmp_path / "r.json"
    try:
        proc = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(folder), "--json", str(out), "-v",
                         env_extra={**env, "HWKIT_SECRET_FILE": str(secret_file)})
    finally:
        secret_file.unlink()
    said = proc.stdout + proc.stderr + (out.read_text(encoding="utf-8") if out.is_file() else "")
    assert decoy in said, f"the walker's report did not reach the feedback: the test proves nothing\n{said[-3000:]}"
    walked = int(said.split("read ", 1)[1].split(" files", 1)[0])
    assert walked > 1000, f"the walker read {walked} files only: the test proves nothing"
    assert secret_text not in said
    for closed in (ROOT / "solutions", hw.tests_dir / "key", ROOT / "tests" / "kit", ROOT / ".git"):
        assert f"{closed.resolve()}/" not in said.replace("\\/", "/"), f"{closed} reached the feedback"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, to be refused as root")
def test_a_grade_for_the_record_is_refused_where_nothing_confines_the_code(tmp_path):
    """Root without namespaces and told not to change user (as where no uid of its own can run this Python): a batch
    is refused, says why and writes nothing; --allow-unconfined grades it, warning that nothing confines the code."""
    (tmp_path / "class" / "alice").mkdir(parents=True)
    shutil.copy(ROOT / "homework" / HW / "ppo.py", tmp_path / "class" / "alice" / "ppo.py")
    scores = tmp_path / "scores.csv"
    env = {"HWKIT_CONFINE": "off", confine.SEPARATE_ENV: "off", confine.ALLOW_ENV: "0"}
    refused = run_check(HW, "ppo", "--batch", str(tmp_path / "class"), "--csv", str(scores), env_extra=env)
    assert refused.returncode == 2 and "оценка для ведомости не выставляется" in refused.stderr, refused.stderr
    assert "--allow-unconfined" in refused.stderr and not scores.exists()
    allowed = run_check(HW, "ppo", "--batch", str(tmp_path / "class"), "--csv", str(scores), "--allow-unconfined",
                        env_extra=env)
    assert scores.is_file() and "без изоляции" in allowed.stderr, allowed.stdout + allowed.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, to drop to another user")
def test_a_grader_that_is_not_root_and_has_no_namespaces_refuses_a_grade_for_the_record(tmp_path):
    """Dropped to another uid, without namespaces, the grader cannot give the code a user of its own: a batch is
    refused, and the reason says so."""
    mode_env("user")  # this uid must reach Python and the kit, as a worker's does
    (tmp_path / "class" / "alice").mkdir(parents=True)
    for path in [tmp_path, *tmp_path.rglob("*")]:
        os.chown(path, confine.PROBE_UID, confine.PROBE_UID)
    env = {**{k: v for k, v in os.environ.items() if k != confine.ALLOW_ENV}, "HWKIT_CONFINE": "off",
           "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(ROOT / "homework" / "check.py"), HW, "ppo", "--batch",
                           str(tmp_path / "class"), "--csv", str(tmp_path / "s.csv")], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=120, user=confine.PROBE_UID, group=confine.PROBE_UID,
                          extra_groups=[])
    assert proc.returncode == 2 and "не от root" in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "s.csv").exists()


DESCRIBES_ITS_WORLD = textwrap.dedent('''
    import hashlib, json, os, re, sys


    def td_errors(rewards, values, last_value, gamma):
        """What the code can tell of where it runs, each a digest (the scratch folders' random names aside)."""
        env = {k: v for k, v in os.environ.items() if k != "HWKIT_WORKER"}  # the run's marker: a new one each run
        with open("/proc/self/limits") as f:
            limits = f.read()
        with open("/proc/self/status") as f:
            status = [line for line in f if line.split(":")[0] in ("CapEff", "Seccomp", "NoNewPrivs")]
        umask = os.umask(0o022)
        world = {"path": sys.path, "cwd": os.getcwd(), "env": env, "uid": os.getuid(), "gid": os.getgid(),
                 "groups": os.getgroups(), "host": os.uname().nodename, "argv": sys.argv, "exe": sys.executable,
                 "files": sorted(os.listdir(".")), "umask": umask, "limits": limits, "status": status,
                 "marker": sorted(os.environ)}
        said = {k: re.sub(r"(hwgrade|session|work)-[a-z0-9_]{8}", lambda m: m.group(1) + "-*",
                          json.dumps(v, sort_keys=True))
                for k, v in world.items()}
        raise ValueError("мир: " + " ".join(f"{k}={hashlib.sha256(v.encode()).hexdigest()[:8]}"
                                            for k, v in sorted(said.items())))
''')


@pytest.mark.parametrize("mode", MODES)
def test_the_code_sees_the_same_world_in_the_self_check_and_in_the_grade(tmp_path, mode):
    """On one machine and in one mode, --public and the grade give the code the same paths, working folder (its
    name's pattern), environment, user, host name, limits and privileges: nothing tells it which one it is in."""
    env = mode_env(mode)
    (tmp_path / "ppo.py").write_text(DESCRIBES_ITS_WORLD, encoding="utf-8")
    seen = []
    for public in ([], ["--public"]):
        proc = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(tmp_path), *public, env_extra=env)
        told = [line.split("мир: ", 1)[1].split(" (", 1)[0] for line in proc.stdout.splitlines() if "мир: " in line]
        assert told, proc.stdout + proc.stderr
        seen.append(dict(item.split("=") for item in told[0].split()))
    grade, self_check = seen
    assert len(grade) == 14 and grade == self_check, {k: (grade[k], self_check.get(k)) for k in grade
                                                      if grade[k] != self_check.get(k)}


def test_a_named_pipe_or_a_huge_sparse_file_in_the_submission_is_not_staged(tmp_path):
    """The red team's package held a named pipe (copying it failed every check, blaming the answer) and a sparse
    file of 300 MB (written out in full, as root, into the grader's scratch copy): neither is staged, and the
    submission is graded as if they were not there."""
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "solutions" / HW, folder, ignore=shutil.ignore_patterns("__pycache__"))
    package = folder / "junk"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    os.mkfifo(package / "pipe")
    with open(package / "big.py", "wb") as f:
        f.truncate(300 * 2**20)  # no block on disk
    os.mkfifo(folder / "pipe.py")
    proc = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(folder))
    assert proc.returncode == 0 and "1/1" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="a root grader's outputs")
def test_a_root_graders_outputs_are_its_own_only(tmp_path):
    """The second red team read a grade's --json (0644) from a later grading's code: a root grader writes its outputs
    for its owner only (a submission's code runs as another user)."""
    out, scores = tmp_path / "r.json", tmp_path / "s.csv"
    proc = run_check(HW, "ppo::test_td_errors_courier", "--solutions", "--json", str(out), "--csv", str(scores))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {oct(p.stat().st_mode & 0o777) for p in (out, scores)} == {"0o600"}
