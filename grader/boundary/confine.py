"""Confinement of the worker that runs a submission's code, in layers, as far as the platform allows.

Everywhere: a clean environment, a scratch working folder holding only the submission's modules and the
kit's provided ones, resource limits (address space, CPU seconds, file size, open files, core dumps), no way
to gain privileges by exec, and its own session, killed whole when grading ends (with any process still
carrying the run's marker). A grader running as root runs the worker as ``nobody``.

On Linux, where unprivileged user namespaces work (``unshare --user --map-root-user --pid --fork
--mount-proc --net --mount``), the worker also gets: no network (an empty network namespace), no view of
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

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

NAMESPACES = "пространства имён Linux: без сети, без solutions/ и чужих файлов"
LIMITS_ONLY = "без пространств имён: только чистое окружение, своя папка и ограничения ресурсов"

UNSHARE = ["--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--net", "--mount", "--kill-child"]
MEMORY_BYTES = 3 * 2**30  # address space of the worker
CPU_SECONDS = 900  # a backstop: the grading process ends a call long before
# a check's time limit is the CPU time of the worker (its own threads included): a machine busy with other
# submissions slows a check down but does not fail it; a check that waits (sleeps, blocks) ends past this
# multiple of the limit in wall-clock time
WALL_FACTOR = 4.0
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


_PROBE_LOCK = threading.Lock()
_PROBE = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
          "assert libc.mount(None, b'/', None, (1 << 14) | (1 << 18), None) == 0; print('ok')")


def command(python_args: list[str], confined: bool) -> list[str]:
    if confined:
        return [shutil.which("unshare"), *UNSHARE, "--", sys.executable, *python_args]
    return [sys.executable, *python_args]


def environment(run_token: str) -> dict[str, str]:
    """The worker's environment: nothing of the grader's but what Python and BLAS need."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", MARKER: run_token}
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT", "LD_LIBRARY_PATH", "TMPDIR"):
        if name in os.environ:  # how this machine's BLAS must run; Windows needs SYSTEMROOT
            env[name] = os.environ[name]
    return env


def reap(token: str) -> None:
    """Kill every process of this user still carrying the marker ``token``, or a marker under it
    (``token.<session>``: a grading run's token reaps the workers of all its sessions, a session's only its own;
    Linux; elsewhere nothing to scan)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    needle = f"{MARKER}={token}".encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(v == needle or v.startswith(needle + b".")
                   for v in (entry / "environ").read_bytes().split(b"\0")):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


# ---- inside the worker ------------------------------------------------------------------------------

def enter(config: dict) -> str:
    """Apply the confinement the grading process chose; called by the worker before any student code."""
    level = NAMESPACES if config["confined"] else LIMITS_ONLY
    if config["confined"]:
        _private_root(config)
    elif hasattr(os, "geteuid") and os.geteuid() == 0 and _others_can_run(config):
        _become_nobody()  # without namespaces, never run a submission as root (when nobody can run Python)
        level += "; от имени nobody"
    elif hasattr(os, "geteuid"):  # the report says what the code could reach
        level += ("; от имени того же пользователя, что и проверка" + (" (root)" if os.geteuid() == 0 else "")
                  + ": код может читать и менять его файлы")
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


NOBODY = 65534


def _others_can_run(config: dict) -> bool:
    """Whether a user other than the owner can read Python, its packages and the kit (a Python under /root, as
    pyenv installs it, cannot be run by nobody)."""
    import stat

    for path in list(config["visible"]) + [config["scratch"]]:
        current = os.path.abspath(path)
        while True:
            try:
                mode = os.stat(current).st_mode
            except OSError:
                return False
            if stat.S_ISDIR(mode) and mode & 0o005 != 0o005:
                return False
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return True


def _become_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


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
    if os.getuid() != 0:
        wanted["RLIMIT_NPROC"] = _user_processes() + 64
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


def _user_processes() -> int:
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    uid, n = os.getuid(), 0
    for entry in proc.iterdir():
        try:
            n += entry.name.isdigit() and entry.stat().st_uid == uid
        except OSError:
            continue
    return n


# ---- no processes of its own: a seccomp filter ---------------------------------------------------------------

# the syscalls that make a process or a namespace: x86_64 and aarch64 numbers; clone3 is answered ENOSYS (glibc
# then makes its threads with clone, whose flags a filter can read), a clone without CLONE_THREAD EPERM
_SYSCALLS = {"x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "clone3": 435, "unshare": 272,
                                     "setns": 308}),
             "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435, "unshare": 97, "setns": 268})}
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


def no_new_processes() -> bool:
    """From now on this process can start threads but no process and no namespace (fork, clone without
    CLONE_THREAD, unshare, setns fail with EPERM): a submission cannot fill the process table, nor nest user
    namespaces. False where no filter can be had (not Linux, another architecture)."""
    import ctypes
    import platform

    if not sys.platform.startswith("linux") or platform.machine() not in _SYSCALLS:
        return False
    arch, numbers = _SYSCALLS[platform.machine()]
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


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
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
