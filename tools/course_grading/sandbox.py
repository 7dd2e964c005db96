"""Runs a command (and everything it starts) in a Landlock sandbox: it may write only in the
folders it is given (and /dev and /proc, which the GPU driver needs), and may not read the folders it must not see (the instructor's
checkout with solutions/, other students' work). Landlock is a Linux security module that any
unprivileged process can apply to itself (kernel 5.13 or newer); nothing is installed for it.

    python3 -m course_grading.sandbox --write DIR [--write DIR...] [--hide DIR...] [--require] -- CMD...

Without Landlock (an older kernel, a container that disables it) the command runs unconfined
after a warning on stderr, or not at all with --require (exit status 3).
"""
import argparse
import ctypes
import os
import stat
import sys

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_ALL = (1 << 13) - 1  # execute ... make_sym
REFER, TRUNCATE = 1 << 13, 1 << 14
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a file (not a folder) may carry


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi_version():
    """Landlock's ABI version here, or 0 when it is not available."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _handled(abi):
    rights = _ABI1_ALL
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights  # IOCTL_DEV (ABI 5) is left unhandled: the GPU driver is driven through ioctl


def _readable_roots(hidden, root="/"):
    """Paths whose whole trees may be read: everything but the hidden trees (and the folders on
    the way to them, whose other entries are listed one by one)."""
    hidden = [os.path.realpath(h) for h in hidden]
    roots = []

    def walk(folder):
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            return
        for entry in entries:
            path = os.path.join(folder, entry)
            if path in hidden:
                continue
            if any(h.startswith(path + os.sep) for h in hidden) and os.path.isdir(path) and not os.path.islink(path):
                walk(path)
            else:
                roots.append(path)

    walk(root)
    return roots


def confine(writable, hidden):
    """Confines this process and its future children. Returns the Landlock ABI used (0: none)."""
    abi = abi_version()
    if abi == 0:
        return 0
    handled = _handled(abi)
    attr = ctypes.c_uint64(handled)  # struct landlock_ruleset_attr, ABI 1 layout: handled_access_fs only
    ruleset = _libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")

    def allow(path, rights):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a dangling link or a vanished entry: nothing to allow
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= FILE_ONLY
            rule = _PathBeneath(rights & handled, fd)
            if _libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                             ctypes.c_uint32(0)) < 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        finally:
            os.close(fd)

    for path in _readable_roots(hidden):
        allow(path, EXECUTE | READ_FILE | READ_DIR)
    # The CUDA driver writes under /proc (cudaErrorOperatingSystem without it). Landlock cannot
    # carve /proc/sys out of /proc, so grade as an unprivileged user, whom /proc/sys refuses anyway.
    for path in ["/dev", "/proc", *writable]:
        allow(path, handled)
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if _libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)
    return abi


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="append", default=[], help="a folder the command may write in")
    parser.add_argument("--hide", action="append", default=[], help="a folder the command may not read")
    parser.add_argument("--require", action="store_true", help="refuse to run without Landlock")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    abi = confine([os.path.realpath(w) for w in args.write], args.hide)
    if abi == 0:
        if args.require:
            print("sandbox: Landlock is not available here; refusing to run student code unconfined", file=sys.stderr)
            return 3
        print("sandbox: Landlock is not available here; student code runs unconfined", file=sys.stderr)
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
