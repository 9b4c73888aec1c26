"""Confinement of the worker that runs a submission's code, in layers, as far as the platform allows.

Everywhere: a clean environment, a scratch working folder holding only the submission's modules and the
kit's provided ones, resource limits (address space, CPU seconds, file size, open files, core dumps), no way
to gain privileges by exec, and its own session, killed whole when grading ends (with any process still
carrying the run's marker); on Linux x86_64 and aarch64 a seccomp filter leaving it threads only: no process, no
namespace, no socket, no IPC object or keyring (:func:`no_new_processes`). A grader running as root runs the worker
as a uid of the submission's own (:class:`Lease`; with namespaces, their root is that user outside them), which
cannot read the answer key, the secret, ``solutions/`` or the grader's outputs, and whose processes and files in the
shared temporary folders end with the submission (:func:`end_user`); a grader that can give the code neither
namespaces nor such a user refuses a grade for the record (:func:`unconfined_refused`).

On Linux, where unprivileged user namespaces work (``unshare --user --map-root-user --pid --fork
--mount-proc --net --mount --ipc``), the worker also gets: no network (an empty network namespace), no view of
other processes (a PID namespace of its own, or, for workers forked by a zygote, of its zygote and the other
parts' workers of the same submission: when the first process ends, every process in it ends too), and a
file system of its own: a fresh root (pivot_root, the old one detached) holding read-only views of the system
and Python folders, the kit's ``grader/`` and the homework's tests, a private ``/tmp``, and the scratch folder
(the zygote's: the scratch folders of the submission's parts); everything else — ``solutions/``, other
submissions, the grader's output folders, homes — is simply not there. Once the view is built, every
capability is dropped, so nothing can be remounted.

``HWKIT_CONFINE=off`` turns the namespace layer off (the kit's tests use it to try the fallback); the grader's
command line sets ``on`` or ``off`` for its checking processes after probing once.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

NAMESPACES = "пространства имён Linux: без сети, без solutions/ и чужих файлов"
LIMITS_ONLY = "без пространств имён: только чистое окружение, своя папка и ограничения ресурсов"
SEPARATE_USER = ("без пространств имён: отдельный пользователь (uid {uid}), чистое окружение, своя папка и ограничения "
                 "ресурсов; память и диск на работу в целом не ограничены (cgroups не используются)")
SAME_USER = "от имени того же пользователя, что и проверка"

UNSHARE = ["--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--net", "--mount", "--ipc", "--kill-child"]
MEMORY_BYTES = 3 * 2**30  # address space of the worker
CPU_SECONDS = 900  # a backstop: the grading process ends a call long before
# a check's time limit is the CPU time of the worker (its own threads included): a machine busy with other
# submissions slows a check down but does not fail it; a check that waits (sleeps, blocks) ends past this
# multiple of the limit in wall-clock time
WALL_FACTOR = 4.0
THREADS = 64  # the threads and processes a worker may add to its user's count (RLIMIT_NPROC)
FILE_BYTES = 64 * 2**20  # the largest file the student's code may write
OPEN_FILES = 256
TMP_SIZE = "64m"  # the worker's private /tmp
MARKER = "HWKIT_WORKER"  # an environment variable naming the grading run, to find stray processes

_probed: bool | None = None


def namespaces_available() -> bool:
    """Whether unprivileged user, PID, network and mount namespaces can be had here (probed once)."""
    global _probed
    setting = os.environ.get("HWKIT_CONFINE", "").lower()
    if setting in ("off", "0", "no"):
        return False
    if setting == "on" and shutil.which("unshare"):  # the grader's command line probed already
        return True
    with _PROBE_LOCK:  # the grader's threads ask at once; the first one probes
        if _probed is None:
            _probed = _probe()
    return _probed


def _probe() -> bool:
    """Whether ``unshare`` with the worker's flags runs a program: it makes every namespace, mounts a fresh /proc
    and makes the mounts private (fails otherwise). ``true`` costs nothing; Python's probe, where there is no
    ``true``, 50 ms."""
    unshare = shutil.which("unshare")
    if not (sys.platform.startswith("linux") and unshare):
        return False
    true = shutil.which("true")
    program = [true] if true else [sys.executable, "-I", "-S", "-c", _PROBE]
    try:
        probe = subprocess.run([unshare, *UNSHARE, "--", *program], capture_output=True, timeout=20,
                               env=environment("probe"))
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0 and (true is not None or probe.stdout.strip() == b"ok")


_PROBE_LOCK = threading.RLock()  # worker_uid() probes under it too
_PROBE = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
          "assert libc.mount(None, b'/', None, (1 << 14) | (1 << 18), None) == 0; print('ok')")


# ---- without namespaces: a user of the submission's own ----------------------------------------------------------

UID_BASE, UID_SLOTS = 61000, 1000  # uids no account has: root can become any number, no account is created
PROBE_UID = UID_BASE + UID_SLOTS  # the probe's: never leased
# a leased uid's twin, for the workers of the submission's hidden checks (grader.grading.hidden): held by the same
# lease, so a hidden worker never shares a user with a public one, its own submission's included
HIDDEN_OFFSET = UID_SLOTS + 1
UID_ENV = "HWKIT_WORKER_UID"  # the uid the command line leased for the submission graded now
SEPARATE_ENV = "HWKIT_SEPARATE_USER"  # "on" / "off": the command line probed already
ALLOW_ENV = "HWKIT_ALLOW_UNCONFINED"  # "1": as --allow-unconfined (the kit's own tests set it)
_LOCKS = ("/run/hwkit-uids", "/var/run/hwkit-uids")  # root's only: one lock file a leased uid
_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")  # where a user of no account can
# leave files
_separate: dict[bool, bool] = {}  # with namespaces or without: whether a uid of its own can run the worker
_lease: dict = {}  # this process's own lease, when no command line leased one for it


def separate_user_available(namespaces: bool | None = None) -> bool:
    """Whether the worker can run under a uid of the submission's own here: this process is root on Linux, and a probe
    under a spare uid runs this Python and imports the worker's modules, inside the namespaces where there are
    (probed once for each: ``namespaces``, or whether they are available). With namespaces that uid is their root, so
    the kernel bounds its threads (it never bounds root's); without them it is what keeps the key and the secret from
    the code."""
    setting = os.environ.get(SEPARATE_ENV, "").lower()
    if setting in ("on", "off"):
        return setting == "on"
    if not (sys.platform.startswith("linux") and hasattr(os, "geteuid") and os.geteuid() == 0):
        return False
    inside = namespaces_available() if namespaces is None else namespaces
    with _PROBE_LOCK:
        if inside not in _separate:
            _separate[inside] = _probe_user(inside) and _lock_folder() is not None
    return _separate[inside]


def _probe_user(inside: bool) -> bool:
    from grader.base.homeworks import ROOT

    # this kit's grader (not one an installed package points to) and the modules its checks share with the worker
    code = (f"import glob, os, sys; root = {str(ROOT)!r}; sys.path[:0] = [root]; import numpy, grader.boundary.worker; "
            "assert grader.boundary.worker.__file__.startswith(os.path.join(root, 'grader')); "
            "[os.listdir(p) for p in glob.glob(os.path.join(root, 'tests', '*', 'shared'))]; print('ok')")
    cmd = [sys.executable, "-s", "-B", "-c", code]
    if inside:
        cmd = [shutil.which("unshare"), *UNSHARE, "--", *cmd]
    try:
        probe = subprocess.run(cmd, capture_output=True, timeout=60, cwd="/", env=environment("probe"),
                               **as_user(PROBE_UID))
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0 and probe.stdout.strip() == b"ok"


def as_user(uid: int) -> dict:
    """What subprocess.Popen takes to start a process as ``uid``, its group the same number and no other."""
    return {"user": uid, "group": uid, "extra_groups": []}


def mode() -> str:
    """"namespaces", "user" (a uid of the submission's own) or "none": the confinement a worker started here gets."""
    if namespaces_available():
        return "namespaces"
    return "user" if separate_user_available() else "none"


UNCONFINED_REFUSED = (
    "оценка для ведомости не выставляется: здесь нет ни пространств имён Linux, ни отдельного пользователя для кода "
    "работ ({why}), и код студента выполнялся бы от имени проверки, с доступом к ключу ответов, секрету и solutions/. "
    "Проверяйте от root на Linux (в контейнере Docker, как на Gradescope, — тоже) так, чтобы Python и набор были "
    "доступны другим пользователям на чтение; или, осознанно, --allow-unconfined")


def unconfined_refused(allow: bool = False) -> str | None:
    """Why a grade for the record is refused here (no confinement that keeps the key from the worker), or None."""
    if allow or os.environ.get(ALLOW_ENV) == "1" or mode() != "none":
        return None
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        why = "проверка запущена не от root, а сменить пользователя может только root"
    elif not sys.platform.startswith("linux"):
        why = "это не Linux"
    else:
        why = "пользователь без учётной записи не может запустить этот Python или прочитать набор"
    return UNCONFINED_REFUSED.format(why=why)


def _lock_folder() -> str | None:
    """A folder only root can write, for the leases' lock files (made here when missing)."""
    import stat

    for folder in _LOCKS:
        if not os.path.isdir(os.path.dirname(folder)):
            continue
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and info.st_mode & 0o022 == 0:
            return folder
    return None


class Lease:
    """A uid of the range held by this process (an exclusive lock on its file) until :meth:`release`: no other
    grading on this machine runs a submission under it meanwhile. Taking it ends whatever a run that died left
    under that uid."""

    def __init__(self):
        import fcntl

        self.uid, self.fd = -1, None
        folder = _lock_folder()
        if folder is None:
            raise OSError("no folder for the uids' locks")
        for uid in range(UID_BASE, UID_BASE + UID_SLOTS):
            fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            if not _has_account(uid) and not _has_account(hidden_uid(uid)):
                self.uid, self.fd = uid, fd
                end_user(uid)  # a run killed before it could
                end_user(hidden_uid(uid))
                return
            os.close(fd)
        raise OSError("every uid of the range is in use")

    def release(self) -> None:
        """End every process of the uid and of its hidden twin and remove what they left in the shared temporary
        folders; then free them."""
        if self.fd is not None:
            end_user(self.uid)
            end_user(hidden_uid(self.uid))
            os.close(self.fd)
            self.fd = None


def _has_account(uid: int) -> bool:
    try:
        import pwd

        pwd.getpwuid(uid)
        return True
    except (ImportError, KeyError):
        return False


@contextlib.contextmanager
def lease(uid: int | None = None):
    """The uid the workers of one submission run under: ``uid`` when the caller leased it, a new lease held for the
    block otherwise, None where workers do not change user (namespaces, or no separate user here)."""
    if uid is not None or not separate_user_available():
        yield uid
        return
    held = Lease()
    try:
        yield held.uid
    finally:
        held.release()


def worker_uid() -> int | None:
    """The uid this process's workers run under: the one the command line leased (``HWKIT_WORKER_UID``), or one this
    process leases for its lifetime; None where workers do not change user."""
    given = os.environ.get(UID_ENV, "")
    if given.isdigit() and UID_BASE <= int(given) < UID_BASE + UID_SLOTS:
        return int(given)
    if not separate_user_available():
        return None
    with _PROBE_LOCK:
        if "lease" not in _lease:
            _lease["lease"] = Lease()
            atexit.register(_lease["lease"].release)
    return _lease["lease"].uid


def hidden_uid(uid: int | None) -> int | None:
    """The uid the workers of hidden checks run under, when the public ones run as ``uid`` (None: none changes
    user). It is leased with ``uid`` (:class:`Lease`), and no public worker of any submission runs as it."""
    return None if uid is None else uid + HIDDEN_OFFSET


def end_user(uid: int) -> None:
    """Kill every process of ``uid``, then remove its files from the folders every user can write (Linux). The
    removal runs as ``uid`` itself, never as root: a link it swapped in for one of its folders while a classmate's
    grading ended (a race) then leads the removal only where that user could delete anyway."""
    if not os.path.isdir("/proc"):
        return
    for _ in range(100):  # a process may be forking while it is killed (the zygote): until none is left
        found = _processes_of(uid)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
    folders = sorted({*_WRITABLE, os.environ.get("TMPDIR") or "/tmp"})
    try:
        subprocess.run([sys.executable, "-I", "-S", "-c", _REMOVE_OWN, *folders], cwd="/", timeout=60,
                       env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       **as_user(uid))
    except (OSError, subprocess.SubprocessError):
        pass


def _processes_of(uid: int) -> list[int]:
    """The live processes of ``uid`` (a zombie, already dead, waits only for its parent to read its status)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                fields = dict(line.split(b":", 1) for line in f if b":" in line)
        except OSError:
            continue
        if str(uid).encode() in fields.get(b"Uid", b"").split() and fields.get(b"State", b"").split()[:1] != [b"Z"]:
            found.append(int(entry.name))
    return found


# run as the user whose files it removes: what that user owns in the folders every user may write (and in the
# folders there others may write, where it could have written too), never following a link
_REMOVE_OWN = """
import os, stat, sys
me = os.getuid()
def remove_tree(top):
    # the user's folder top and all in it, a folder at a time by chdir: no recursion and no long path, so a chain
    # thousands of folders deep goes too (run as the user, it reaches nothing the user could not remove). Each folder
    # is opened to the user first: one it made unreadable (mode 0o300: files made in it, none listed) would keep what
    # is in it, a channel to the user's next grade (the red team's). Links are never followed.
    names, done = [], set()
    try:
        os.chmod(top, 0o700)
        os.chdir(top)
    except OSError:
        return
    while True:
        sub = None
        try:
            with os.scandir(".") as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISDIR(info.st_mode):
                        try:
                            os.unlink(entry.name)
                        except OSError:
                            pass
                    elif info.st_uid == me and (info.st_dev, info.st_ino) not in done:
                        sub = entry.name, (info.st_dev, info.st_ino)
                        break
        except OSError:
            pass
        if sub is not None:
            try:
                os.chmod(sub[0], 0o700)
                os.chdir(sub[0])
                names.append(sub[0])
            except OSError:
                done.add(sub[1])
            continue
        here = os.stat(".")
        done.add((here.st_dev, here.st_ino))
        if not names:
            break
        os.chdir("..")
        try:
            os.rmdir(names.pop())
        except OSError:
            pass
    os.chdir("/")
    try:
        os.rmdir(top)
    except OSError:
        pass
def walk(folder, depth):
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == me:
            if stat.S_ISDIR(info.st_mode):
                try:
                    remove_tree(entry.path)
                except Exception:
                    os.chdir("/")
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002 and depth < 8:
            walk(entry.path, depth + 1)
for folder in sys.argv[1:]:
    walk(folder, 0)
"""


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def own_outputs() -> None:
    """Whatever a root grader's process writes from now on is its owner's only (umask 077; the folders and files a
    worker must reach are opened to it explicitly: the zygote's and session's folders, the scratch folder)."""
    if _root():
        os.umask(0o077)


def private(path: Path | str) -> None:
    """An output of a root grader (a CSV, a feedback folder) readable by its owner only: a submission's code, run as
    another user of this machine (now, or by a later grading without namespaces), never reads a classmate's grade."""
    if _root():
        os.chmod(path, 0o700 if os.path.isdir(path) else 0o600)


@contextlib.contextmanager
def closed_to_workers(folder: Path | str):
    """What a root grader creates while the block runs its owner's only (umask 077: the CSV, the feedback, the
    records, written while later submissions run), and, where workers run as users of their own, ``folder`` (the
    class's) closed to other users, as it was afterwards: a worker never reads another submission or a classmate's
    grade (the grader stages each one's modules for it, and opens to it explicitly what it must reach)."""
    if not _root():
        yield
        return
    before = os.stat(folder).st_mode & 0o7777
    closing = mode() == "user"
    if closing:
        os.chmod(folder, before & 0o700)
    mask = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(mask)
        if closing:
            os.chmod(folder, before)


def become(uid: int) -> None:
    """This process runs as ``uid`` from now on, its group the same number and no other."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def command(python_args: list[str], confined: bool) -> list[str]:
    if confined:
        return [shutil.which("unshare"), *UNSHARE, "--", sys.executable, *python_args]
    return [sys.executable, *python_args]


ROOM_ENV = "HWKIT_ROOM"  # in a template's environment: room for a forked child's own marker (:func:`remark`)


def remark(env: dict[str, str]) -> bool:
    """This process's environment as other processes read it (/proc/PID/environ: :func:`marked` finds a run's
    processes by their marker) rewritten in place to ``env``, which ``os.environ`` then holds too: for a process forked
    from a template (grader.boundary.template) without exec, whose block is still the template's. Written within the
    block's bounds (the template's ``HWKIT_ROOM`` leaves room); False where it cannot be (no /proc, no room)."""
    import ctypes

    os.environ.clear()  # libc's environment no longer points into the block (setenv copies each value)
    os.environ.update(env)
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end: fields 50 and 51
    except (OSError, ValueError, IndexError):
        return False
    block = b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items())
    if not 0 < len(block) <= end - start:
        return False
    ctypes.memmove(start, block.ljust(end - start, b"\0"), end - start)
    return True


_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (0x20000, 0x8000000, 0x10000000,
                                                                              0x20000000, 0x40000000)


def unshare_here(uid: int | None) -> None:
    """What ``unshare`` with :data:`UNSHARE`'s flags does before it runs its program, done in this process, forked
    single-threaded from the worker template (grader.boundary.template) instead of started by exec: as ``uid`` (where
    given: as subprocess's ``user`` would make it, before the namespaces, so that it is their root), new user, mount,
    PID, network and IPC namespaces, root mapped to this user, mounts made private; then a fork (``--fork``): this
    process waits for its child and exits with its code, the child (the first process of the PID namespace, killed
    when this one ends: ``--kill-child``) mounts its own /proc (``--mount-proc``) and returns. OSError when the
    kernel refuses."""
    libc = _libc()
    if uid is not None and os.geteuid() == 0:
        become(uid)
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: a change of user left /proc/self root's; its maps are written below
    euid, egid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC) != 0:
        raise OSError(_errno(), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {euid} 1"), ("gid_map", f"0 {egid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
    pid = os.fork()
    if pid:
        import resource

        os.closerange(0, resource.getrlimit(resource.RLIMIT_NOFILE)[0])  # the child's descriptors are its own
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG (a parent already gone: its group is killed whole)
    _mount("none", "/proc", None, _MS_REC | _MS_PRIVATE)
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)


def environment(run_token: str) -> dict[str, str]:
    """The worker's environment: nothing of the grader's but what Python and BLAS need."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", MARKER: run_token}
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT", "LD_LIBRARY_PATH", "TMPDIR"):
        if name in os.environ:  # how this machine's BLAS must run; Windows needs SYSTEMROOT
            env[name] = os.environ[name]
    return env


def marked(token: str) -> list[int]:
    """The processes (other than this one) carrying the marker ``token``, or a marker under it (``token.<session>``:
    a grading run's token finds the workers of all its sessions, a session's only its own); Linux: elsewhere none."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    needle, found = f"{MARKER}={token}".encode(), []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(v == needle or v.startswith(needle + b".") for v in (entry / "environ").read_bytes().split(b"\0")):
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def reap(token: str) -> None:
    """Kill every process still carrying the marker ``token`` (:func:`marked`)."""
    for pid in marked(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


# ---- inside the worker ------------------------------------------------------------------------------

def enter(config: dict) -> str:
    """Apply the confinement the grading process chose; called by the worker before any student code."""
    level = NAMESPACES if config["confined"] else LIMITS_ONLY
    uid = config.get("uid")
    if config["confined"]:
        _private_root(config)  # started as ``uid`` where given: the namespaces' root is that user outside them
        level += f"; отдельный пользователь (uid {uid})" if uid is not None else ""
    elif uid is not None:
        if os.geteuid() == 0:
            become(uid)  # without namespaces, a submission runs as a user of its own, never as root
        level = SEPARATE_USER.format(uid=uid)
    elif hasattr(os, "geteuid"):  # the report says what the code could reach
        level += ("; " + SAME_USER + (" (root)" if os.geteuid() == 0 else "") + ": код может читать и менять его "
                  "файлы")
    if config["confined"]:
        _drop_capabilities()  # root of its namespaces only while it builds them: no remounting them afterwards
    elif sys.platform.startswith("linux"):
        try:
            _drop_capabilities()  # root without namespaces keeps no capability either (no ptrace, no kill, no mount)
        except OSError:
            pass
    _no_new_privileges()
    _limits(config)
    return level


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _no_new_privileges() -> None:
    if sys.platform.startswith("linux"):
        _libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no exec can gain privileges


def not_dumpable() -> None:
    """Keep other processes of this user out of this one (/proc/PID/fd, /proc/PID/mem, ptrace): for the
    processes that decide and record the grade."""
    if sys.platform.startswith("linux"):
        _libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0


def _drop_capabilities() -> None:
    """Every capability gone, for good: the bounding set emptied (an exec cannot bring them back), the ambient
    set cleared, and the effective, permitted and inheritable sets zeroed."""
    import ctypes

    libc = _libc()
    for cap in range(64):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP; EINVAL past the last capability
            break
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _limits(config: dict) -> None:
    try:
        import resource
    except ImportError:  # Windows
        return
    wanted = {"RLIMIT_AS": config.get("memory_bytes", MEMORY_BYTES), "RLIMIT_CPU": CPU_SECONDS,
              "RLIMIT_FSIZE": FILE_BYTES, "RLIMIT_NOFILE": OPEN_FILES, "RLIMIT_CORE": 0}
    if os.getuid() != 0 or config.get("uid") is not None:  # the kernel bounds any user's but root's (outside)
        wanted["RLIMIT_NPROC"] = _user_tasks() + THREADS
    for name, value in wanted.items():
        limit = getattr(resource, name, None)
        if limit is None:
            continue
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def _user_tasks() -> int:
    """How many processes and threads this process's user has now (what RLIMIT_NPROC counts)."""
    uid, n = os.getuid(), 0
    for pid in _processes_of(uid) if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{pid}/status", "rb") as f:
                n += int(next(line for line in f if line.startswith(b"Threads:")).split()[1])
        except (OSError, StopIteration, ValueError):
            n += 1
    return n


# ---- no processes of its own: a seccomp filter ---------------------------------------------------------------

# the syscalls that make a process or a namespace: x86_64 and aarch64 numbers; clone3 is answered ENOSYS (glibc
# then makes its threads with clone, whose flags a filter can read), a clone without CLONE_THREAD EPERM
# socket and socketpair fail too, for every family (AF_UNIX included), and io_uring, which makes sockets without
# them: without a network namespace there is nothing else between the worker and the network; and System V IPC,
# POSIX message queues and the kernel's keyrings, which outlive the worker and are no file its user's cleanup finds
# (a channel between submissions)
_IPC = {"x86_64": {"shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67,
                   "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220, "mq_open": 240,
                   "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
                   "mq_getsetattr": 245},
        "aarch64": {"mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184,
                    "mq_getsetattr": 185, "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190,
                    "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196,
                    "shmdt": 197}}
_IO_URING = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
_KEYS = {"x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250},  # the kernel's keyrings: a channel too
         "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219}}
_SYSCALLS = {"x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "clone3": 435, "unshare": 272,
                                     "setns": 308, "socket": 41, "socketpair": 53, **_IPC["x86_64"], **_IO_URING,
                                     **_KEYS["x86_64"]}),
             "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435, "unshare": 97, "setns": 268, "socket": 198,
                                      "socketpair": 199, **_IPC["aarch64"], **_IO_URING,
                                      **_KEYS["aarch64"]})}
# a worker of hidden checks (grader.grading.hidden) creates everything under umask 077 (worker._serve) and may not widen
# it: no chmod, no umask, no extended attribute (an ACL would open a file to other users), no symbolic link (its target
# is text every user reads, whatever the umask): nothing it leaves is readable by another user (the public workers' own,
# without namespaces). fchmodat2 (Linux 6.6), setxattrat and removexattrat (6.13) have the numbers every architecture
# shares from 424 on
_NEW = {"fchmodat2": 452, "setxattrat": 463, "removexattrat": 466}
_HIDDEN = {"x86_64": {"chmod": 90, "fchmod": 91, "fchmodat": 268, "umask": 95, "setxattr": 188, "lsetxattr": 189,
                      "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "symlink": 88,
                      "symlinkat": 266, **_NEW},
           "aarch64": {"fchmod": 52, "fchmodat": 53, "umask": 166, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7,
                       "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16, "symlinkat": 36, **_NEW}}
_CLONE_THREAD, _EPERM, _ENOSYS = 0x10000, 1, 38
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000


def _filter(arch: int, numbers: dict[str, int]) -> list[tuple[int, int, int, int]]:
    """The BPF program: (code, jump if true, jump if false, k) each."""
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JSET|K, BPF_RET|K
    denied = [n for name, n in numbers.items() if name not in ("clone", "clone3")]
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, _RET_ERRNO | _EPERM),  # another ABI (int 0x80): no
            (ld, 0, 0, 0),
            (jeq, 0, 1, numbers["clone3"]), (ret, 0, 0, _RET_ERRNO | _ENOSYS)]
    for n in denied:
        prog += [(jeq, 0, 1, n), (ret, 0, 0, _RET_ERRNO | _EPERM)]
    prog += [(jeq, 0, 3, numbers["clone"]), (ld, 0, 0, 16),  # clone's flags: args[0], its low 32 bits
             (jset, 1, 0, _CLONE_THREAD), (ret, 0, 0, _RET_ERRNO | _EPERM),
             (ret, 0, 0, _RET_ALLOW)]
    return prog


def no_new_processes(hidden: bool = False) -> bool:
    """From now on this process can start threads but no process, no namespace, no socket and no IPC object (fork,
    clone without CLONE_THREAD, unshare, setns, socket, socketpair, io_uring, System V IPC and POSIX message queues
    fail with EPERM): a submission cannot fill the process table, nest user namespaces, reach a network or leave a
    channel to another submission. ``hidden`` (a worker of hidden checks, its umask 077 already): no chmod, umask,
    extended attribute or symbolic link either (:data:`_HIDDEN`). False where no filter can be had (not Linux,
    another architecture)."""
    import ctypes
    import platform

    if not sys.platform.startswith("linux") or platform.machine() not in _SYSCALLS:
        return False
    arch, numbers = _SYSCALLS[platform.machine()]
    if hidden:
        numbers = {**numbers, **_HIDDEN[platform.machine()]}
    prog = _filter(arch, numbers)

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

    instructions = (Instruction * len(prog))(*[Instruction(*i) for i in prog])
    program = Program(len(prog), instructions)
    libc = _libc()
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: required for an unprivileged filter
    return libc.prctl(22, 2, ctypes.byref(program), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (1, 2, 4, 8, 32, 4096,
                                                                                    16384, 1 << 18)
_SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
_ETC = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group", "nsswitch.conf"]
_DEVICES = ["null", "zero", "full", "random", "urandom"]


def _mount(source, target, fstype=None, flags=0, data=None) -> None:
    def enc(text):
        return text.encode() if text is not None else None

    if _libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        errno = _errno()
        raise OSError(errno, f"mount {source} → {target}: {os.strerror(errno)}")


def _private_root(config: dict) -> None:
    """A new root: read-only views of what Python needs and the scratch folder (writable); then chroot."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    root = config["root_dir"]
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4m,mode=755")
    for fresh in ("/tmp", "/dev/shm"):
        os.makedirs(root + fresh, exist_ok=True)
        _mount("tmpfs", root + fresh, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={TMP_SIZE},mode=1777")
    for device in _DEVICES:
        if os.path.exists(f"/dev/{device}"):
            _bind(f"/dev/{device}", root, writable=True)
    _bind("/proc", root)
    readable = [p for p in _SYSTEM] + [f"/etc/{name}" for name in _ETC] + list(config["visible"])
    done: list[str] = []
    for path in sorted({os.path.abspath(p) for p in readable}, key=len):
        if not os.path.lexists(path) or any(path == d or path.startswith(d + "/") for d in done):
            continue
        if os.path.islink(path) and path in _SYSTEM:  # /lib -> usr/lib on merged-/usr systems
            os.symlink(os.readlink(path), root + path)
            continue
        _bind(path, root)
        done.append(path)
    _bind(config["scratch"], root)  # read-only: what a submission writes goes to its private /tmp (RAM, limited)
    _mount(None, root, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "size=4m,mode=755")
    _pivot(root)


_PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203, "ppc64": 203,
               "s390x": 217, "i686": 217, "i386": 217, "armv7l": 218}


def _pivot(root: str) -> None:
    """Make ``root`` the root and detach the old one: unlike chroot, nothing leads back out of it."""
    import platform

    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError("pivot_root: unknown architecture")
    libc = _libc()
    os.chdir(root)
    if libc.syscall(number, b".", b".") != 0:
        raise OSError(_errno(), "pivot_root")
    if libc.umount2(b".", 2) != 0:  # MNT_DETACH: the old root stacked on top of the new one goes away
        raise OSError(_errno(), "umount old root")
    os.chdir("/")


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def _bind(path: str, root: str, writable: bool = False) -> None:
    target = root + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    _mount(path, target, None, _MS_BIND | _MS_REC)
    if not writable:
        _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID)
