"""Whether this kernel offers Landlock, the Linux security module that confines student code
(kernel 5.13 or newer; nothing to install). The confinement itself is course-sandbox
(tools/course_grading/sandbox.c), which tools/course_grading/grading.py compiles and puts in
front of the build and of every test program.
"""
import ctypes

_SYS_CREATE_RULESET = 444  # the same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi_version():
    """Landlock's ABI version here, or 0 when it is not available."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)
