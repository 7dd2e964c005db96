// course-sandbox: runs one command of student code confined by Landlock, the Linux security
// module any unprivileged process can apply to itself (kernel 5.13 or newer). The command and
// everything it starts may write only in the folders given with -w (and the GPU driver's device
// files, /dev/null and the like; /proc too without -s, see below), may read everything but the folders given with -h (except the folders
// given with -R or -w inside them), and may open no TCP connection (kernel 6.7 or newer). tools/grade-submission compiles it and puts it in front
// of every test command, so that ctest itself, its reports and the build tree stay out of reach.
//
//   course-sandbox [-w DIR]... [-R DIR]... [-h DIR]... [-s MODE:LOG] [-u UID:GID] [-f FILE] [-r] [-p] -- COMMAND [ARGUMENT]...
//
// -p: the command sees the node's /proc; without it, where this runs as root, a /proc of its own
// (own_proc: no process of another user, no file lock of the node).
//
// -u UID:GID: the command runs under that user and group (not 0), with no supplementary group, where
// this runs as root (the GPU machines' graders): no file is its own but what the grader gave that
// uid (the scratch folder), so root's files (/etc/shadow, /root/.ssh) are closed to it by the
// kernel's permissions, not by a list, and so is every folder of mode 0700 or 0750 that is not its
// own: another grading's scratch folder and workspace, which Landlock hides from opens but not
// from stat and readlink (an adversarial review, 2026-11-28: a channel between two gradings). The
// supervisor stays root, outside.
//
// -s enforce:LOG or -s learn:LOG: system calls limited by the kernel (seccomp). The command runs in
// a child under a filter that allows the system calls a test program, the CUDA runtime and the
// judge need (kAllowed below; threads but no processes, signals only to itself, no sockets but the
// driver's own local one (answer_socket), no exec after its own); any other call is sent to this
// process, the supervisor, which the command
// cannot reach: it refuses the call (EPERM) with enforce, or lets it run with learn (to find what
// a new CUDA release needs), and when the command ends appends "<number> <times> <command>" to
// LOG for each such call. With -s, /proc is read-only for the command (Landlock): no write
// through /proc/<pid>/mem, which the kernel lets through page protections and seals, and none to
// any other process file. The CUDA driver names its threads by writing /proc/<pid>/task/<tid>/comm
// and fails to start (cudaErrorOperatingSystem) when it cannot open that file: such an open is
// sent to the supervisor, which answers it with a descriptor of /dev/null (the names are lost;
// nothing else changes). An open that would make a set-user-ID or set-group-ID file is refused
// (answer_open). Every other open for writing runs on, under Landlock. A file's mode and
// times, which Landlock does not cover, change inside the -w folders only: fchmod and utimensat
// are made by the supervisor, on a file it holds (answer_metadata_change).
//
// -f FILE: more options, one per line ("-w DIR", "-R DIR", "-h DIR", "-r" or "-p"), so that a grader can change
// them per submission without rebuilding the test list that names this command. -r: refuse to run (exit status 3) where Landlock is not available; without it the command
// then runs unconfined after a warning. The same rules as tools/course_grading/sandbox.py, in C
// so that starting a test costs a millisecond, not a Python interpreter.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

// The kernel's ABI (include/uapi/linux/landlock.h), spelled out so that old headers build it.
enum { kCreateRuleset = 444, kAddRule = 445, kRestrictSelf = 446, kRulePathBeneath = 1, kVersionFlag = 1 };
enum {
  kExecute = 1 << 0, kWriteFile = 1 << 1, kReadFile = 1 << 2, kReadDir = 1 << 3,
  kAbi1All = (1 << 13) - 1, kRefer = 1 << 13, kTruncate = 1 << 14, kIoctlDev = 1 << 15,
  kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev,
  kBindTcp = 1 << 0, kConnectTcp = 1 << 1,
};
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;  // ABI 6: what may not reach outside the sandbox (signals: kScopeSignal)
};
enum { kScopeAbstractUnixSocket = 1 << 0, kScopeSignal = 1 << 1 };
struct PathBeneath {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

enum { kMaxPaths = 64 };
static const char* hidden[kMaxPaths];
static int hidden_count;
static const char* writable[kMaxPaths];
static int writable_count;
static const char* readable[kMaxPaths];
static int readable_count;
static int require;
static int node_proc;  // -p: the node's /proc, not one of the command's own (own_proc)
static const char* syscall_mode;  // "enforce" or "learn" (-s), or NULL: no filter
static const char* syscall_log;
static int ruleset = -1;
static long long run_as_uid = -1, run_as_gid = -1;  // -u UID:GID, or -1: the caller's
static pid_t supervisor;  // with -s, in the command's process: the supervisor's pid
static uint64_t handled;

static void fail(const char* what) {
  fprintf(stderr, "course-sandbox: %s: %s\n", what, strerror(errno));
  exit(3);
}

static void allow(const char* path, uint64_t rights) {
  const int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return;  // a dangling link or a vanished entry: nothing to allow
  struct stat info;
  if (fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode)) rights &= kFileRights;
  struct PathBeneath rule = {rights & handled, fd};
  if (syscall(kAddRule, ruleset, kRulePathBeneath, &rule, 0) != 0) fail(path);
  close(fd);
}

// Whether `path` is a hidden folder, or a folder on the way to one (1), or neither (0).
static int hidden_state(const char* path) {
  const size_t length = strlen(path);
  int on_the_way = 0;
  for (int i = 0; i < hidden_count; ++i) {
    if (strcmp(hidden[i], path) == 0) return 2;
    if (strncmp(hidden[i], path, length) == 0 && (hidden[i][length] == '/' || length == 1)) on_the_way = 1;
  }
  return on_the_way;
}

// Allows reading every entry of `folder` but the hidden ones; goes into the folders that lead to
// a hidden one and allows their other entries one by one.
static void allow_reading(const char* folder) {
  const int folder_fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);  // (not a link put there since)
  DIR* listing = folder_fd < 0 ? NULL : fdopendir(folder_fd);
  if (!listing) {
    if (folder_fd >= 0) close(folder_fd);
    return;
  }
  struct dirent* entry;
  while ((entry = readdir(listing)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", strcmp(folder, "/") == 0 ? "" : folder, entry->d_name);
    const int state = hidden_state(path);
    if (state == 2) continue;
    // The entry itself, not what it points to (O_NOFOLLOW; one open, no lstat then open to race):
    // allow() follows a link, so a link here to a hidden folder, planted by anyone who can write
    // /tmp, put the read rule on the hidden folder (an adversarial review, 2026-11-28). A link is
    // skipped: Landlock checks a path through a link at the file it leads to, which another rule
    // grants already unless it is hidden (/lib -> usr/lib is read through /usr's). So is a file of
    // more than one name: a rule on a file is on its inode, and a hard link here may be a hidden
    // file's (skipped: it stays readable by no name). Folders have no hard links.
    const int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // (a vanished entry)
    struct stat info;
    if (fstat(fd, &info) != 0 || S_ISLNK(info.st_mode) || (!S_ISDIR(info.st_mode) && info.st_nlink > 1)) {
      close(fd);
      continue;
    }
    if (state == 1 && S_ISDIR(info.st_mode)) {
      allow_reading(path);
    } else {
      struct PathBeneath rule = {(kExecute | kReadFile | kReadDir) & (S_ISDIR(info.st_mode) ? ~0ull : kFileRights) & handled, fd};
      if (syscall(kAddRule, ruleset, kRulePathBeneath, &rule, 0) != 0) fail(path);
    }
    close(fd);
  }
  closedir(listing);
}

// Takes one option: -w DIR, -R DIR, -h DIR or -r. Returns 0 on anything else.
static int take_option(const char* flag, const char* value) {
  if ((strcmp(flag, "-w") == 0 || strcmp(flag, "-R") == 0 || strcmp(flag, "-h") == 0) && value != NULL) {
    char* resolved = realpath(value, NULL);
    const char* path = resolved ? resolved : strdup(value);
    if (flag[1] == 'w' && writable_count < kMaxPaths) writable[writable_count++] = path;
    if (flag[1] == 'R' && readable_count < kMaxPaths) readable[readable_count++] = path;
    if (flag[1] == 'h' && hidden_count < kMaxPaths) hidden[hidden_count++] = path;
    return 1;
  }
  if (strcmp(flag, "-r") == 0) {
    require = 1;
    return 1;
  }
  if (strcmp(flag, "-p") == 0) {
    node_proc = 1;
    return 1;
  }
  if (strcmp(flag, "-u") == 0 && value != NULL) {  // UID:GID, both numbers, neither 0 (root's)
    char* end = NULL;
    errno = 0;
    const unsigned long long uid = strtoull(value, &end, 10);
    if (errno || end == value || *end != ':' || uid == 0 || uid >= 4294967295ULL) return 0;
    const char* group = end + 1;
    const unsigned long long gid = strtoull(group, &end, 10);
    if (errno || end == group || *end != '\0' || gid == 0 || gid >= 4294967295ULL) return 0;
    run_as_uid = (long long)uid;
    run_as_gid = (long long)gid;
    return 1;
  }
  if (strcmp(flag, "-s") == 0 && value != NULL) {
    const char* colon = strchr(value, ':');
    if (!colon || colon[1] == '\0') return 0;
    syscall_mode = strndup(value, (size_t)(colon - value));
    syscall_log = strdup(colon + 1);
    return strcmp(syscall_mode, "enforce") == 0 || strcmp(syscall_mode, "learn") == 0;
  }
  return 0;
}

// ---------------------------------------------------------------- system calls (seccomp)

// What a test program needs from the kernel once it runs: memory, files (Landlock decides which),
// the GPU driver's ioctls, threads and their synchronisation, time, signals to itself. clone,
// kill and tgkill are allowed with conditions below; clone3 answers ENOSYS (glibc then uses clone,
// whose flags a filter can read).
static const int kAllowed[] = {
    SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_pwrite64, SYS_preadv, SYS_pwritev,
    SYS_open, SYS_openat, SYS_close, SYS_close_range, SYS_fstat, SYS_stat, SYS_lstat, SYS_newfstatat, SYS_statx,
    SYS_statfs, SYS_fstatfs, SYS_lseek, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise, SYS_brk,
    SYS_msync, SYS_mlock, SYS_munlock, SYS_mincore, SYS_ioctl, SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6,
    SYS_futex, SYS_set_robust_list, SYS_rseq, SYS_sched_yield, SYS_sched_get_priority_max,
    SYS_sched_get_priority_min, SYS_getpid, SYS_gettid, SYS_getppid, SYS_getpgrp, SYS_getuid, SYS_geteuid,
    SYS_getgid, SYS_getegid, SYS_getresuid, SYS_getresgid, SYS_getgroups, SYS_uname, SYS_readlink,
    SYS_readlinkat, SYS_access, SYS_faccessat, SYS_faccessat2, SYS_getcwd, SYS_getdents64, SYS_fcntl, SYS_dup,
    SYS_dup2, SYS_dup3, SYS_pipe, SYS_pipe2, SYS_eventfd2, SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_wait,
    SYS_epoll_pwait, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_rt_sigsuspend,
    SYS_rt_sigtimedwait, SYS_sigaltstack, SYS_set_tid_address, SYS_arch_prctl, SYS_exit,
    SYS_exit_group, SYS_getrandom, SYS_getrlimit, SYS_clock_gettime, SYS_clock_getres,
    SYS_clock_nanosleep, SYS_nanosleep, SYS_gettimeofday, SYS_time, SYS_times, SYS_getrusage, SYS_sysinfo,
    SYS_get_mempolicy, SYS_set_mempolicy, SYS_mbind, SYS_getcpu, SYS_membarrier, SYS_memfd_create,
    SYS_ftruncate, SYS_fallocate, SYS_flock, SYS_fsync, SYS_fdatasync, SYS_umask,
    SYS_timerfd_create, SYS_timerfd_settime, SYS_timerfd_gettime, SYS_restart_syscall,
    462,  // mseal (Linux 6.10): the judge seals its relocation table (it only takes rights away)
    // What the CUDA driver does in every program as it starts (seen with --syscalls learn on the
    // H100, driver 580): symbolic links (kFolderChanges), and a local socket it listens on; socket()
    // is allowed for AF_UNIX only (below), Landlock refuses TCP, and bind and connect go to the
    // supervisor (answer_socket), which makes only the driver's own.
    SYS_setsockopt, SYS_getsockopt, SYS_listen, SYS_getsockname,
};

// Calls that change a folder: allowed too, but through the supervisor, which lets them run on
// (Landlock decides) and logs those under /dev and /proc (answer_folder_change).
static const int kFolderChanges[] = {SYS_mkdir, SYS_mkdirat, SYS_rmdir, SYS_unlink, SYS_unlinkat, SYS_rename,
                                     SYS_renameat, SYS_renameat2, SYS_symlink, SYS_symlinkat};

// Calls that change a file's metadata, which Landlock does not cover: fchmod and utimensat (and
// glibc's futimens, which is utimensat with no path). Made by the supervisor, on a file it holds,
// inside a -w folder only (answer_metadata_change). chmod, fchmodat, utime, utimes, futimesat, the
// chown calls and the xattr ones are outside the list: refused (enforce) and counted.
static int changes_metadata(int nr) { return nr == SYS_fchmod || nr == SYS_utimensat; }

static int changes_a_folder(int nr) {
  for (size_t i = 0; i < sizeof kFolderChanges / sizeof kFolderChanges[0]; ++i)
    if (kFolderChanges[i] == nr) return 1;
  return 0;
}

static void add(struct sock_filter* program, int* length, struct sock_filter instruction) {
  program[(*length)++] = instruction;
}

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, field))
#define LOAD_ARG_LOW(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, args[i]))
#define LOAD_ARG0_LOW LOAD_ARG_LOW(0)
#define RETURN(value) BPF_STMT(BPF_RET | BPF_K, (value))

// Installs the filter on this process (the child, just before it runs the command); returns the
// listener descriptor the supervisor answers on (the supervisor takes a copy with pidfd_getfd).
static int install_filter(void) {
  struct sock_filter program[512];
  int n = 0;
  const uint32_t self = (uint32_t)getpid();
  add(program, &n, (struct sock_filter)LOAD(arch));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_KILL_PROCESS));
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // x32 numbers
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_KILL_PROCESS));
  // open and openat that may write (O_WRONLY, O_RDWR, O_CREAT or O_TRUNC in the flags): to the
  // supervisor, which hands a thread-name file under /proc a /dev/null and lets every other run on
  // (Landlock decides).
  const uint32_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 4));
  add(program, &n, (struct sock_filter)LOAD_ARG_LOW(2));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writes, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_USER_NOTIF));
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 4));
  add(program, &n, (struct sock_filter)LOAD_ARG_LOW(1));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writes, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_USER_NOTIF));
  // ioctl, but not a terminal's TIOCSTI (characters pushed into another terminal's input, which
  // a shell outside then runs), TIOCLINUX or TIOCCONS, nor the socket ioctls of network devices
  // (0x89xx: an interface's flags or MTU, through any socket): to the supervisor, which refuses
  // them (an adversarial review, 2026-11-27). The GPU driver's ioctls are of its own type ('F').
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 12));
  add(program, &n, (struct sock_filter)LOAD_ARG_LOW(1));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x5412 /* TIOCSTI */, 9, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x541C /* TIOCLINUX */, 8, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x541D /* TIOCCONS */, 7, 0));
  add(program, &n, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xFFFFFF00u));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8900 /* SIOC... */, 5, 0));
  // Nor a file system's ioctls, by their type: 'f' (chattr's FS_IOC_SETFLAGS, fs-verity, encryption
  // policies), 'v' (FS_IOC_SETVERSION), 'X' (FS_IOC_FSSETXATTR) and btrfs's. Several need only the
  // file's owner, not a descriptor open for writing: a test program running as root set the flags
  // and the inode generation of the turn files and the course copy (two adversarial reviews,
  // 2026-11-28). The GPU driver's are of its own types ('F', and nvidia-uvm's plain numbers).
  add(program, &n, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xFF00u));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x6600 /* 'f' */, 3, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x7600 /* 'v' */, 2, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x5800 /* 'X' */, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x9400 /* btrfs */, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_USER_NOTIF));
  // fcntl, but not F_SETLEASE (a lease on a file the program may only read stalls every other
  // process that opens it for writing, up to the kernel's lease-break time) or F_NOTIFY; and its
  // record locks (F_GETLK, F_SETLK, F_SETLKW and their OFD forms) to the supervisor, which lets
  // them run on the program's own files only (answer_record_lock).
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, 10));
  add(program, &n, (struct sock_filter)LOAD_ARG_LOW(1));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1024 /* F_SETLEASE */, 7, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1026 /* F_NOTIFY */, 6, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_GETLK, 5, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETLK, 4, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETLKW, 3, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 36 /* F_OFD_GETLK */, 2, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 37 /* F_OFD_SETLK */, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 38 /* F_OFD_SETLKW */, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_USER_NOTIF));
  add(program, &n, (struct sock_filter)LOAD(nr));
  for (size_t i = 0; i < sizeof kAllowed / sizeof kAllowed[0]; ++i) {
    add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)kAllowed[i], 0, 1));
    add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  }
  // socket(AF_UNIX, ...): a local socket (the driver's); no other family.
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3));
  add(program, &n, (struct sock_filter)LOAD_ARG0_LOW);
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1 /* AF_UNIX */, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ERRNO | ENOSYS));
  // clone: a thread (CLONE_THREAD in its flags), not a process.
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3));
  add(program, &n, (struct sock_filter)LOAD_ARG0_LOW);
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x00010000u /* CLONE_THREAD */, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  // kill(self, ...) and tgkill(self, ...): abort() and raise() signal the process itself.
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 3));
  add(program, &n, (struct sock_filter)LOAD_ARG0_LOW);
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  // prlimit64 and sched_setaffinity on this process only (pid 0 or its own): not on the
  // supervisor or another grading's programs.
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prlimit64, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setaffinity, 0, 4));
  add(program, &n, (struct sock_filter)LOAD_ARG0_LOW);
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  // sched_getaffinity, sched_getparam, sched_getscheduler and get_robust_list on this process (pid 0
  // or its own); on any other pid, to the supervisor (answer_process_query), which lets a thread of
  // the program's own through: on every pid of the node they listed the node's processes, and read
  // another program's CPU affinity, set on itself, as a channel (an adversarial review, 2026-11-28).
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_getaffinity, 3, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_getparam, 2, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_getscheduler, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_get_robust_list, 0, 4));
  add(program, &n, (struct sock_filter)LOAD_ARG0_LOW);
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  // prctl, but not the options that would undo the sandbox: a parent-death signal cleared (the
  // program would outlive its supervisor), a filter of its own stacked (refusals unlogged), the
  // memory map's fields, a ptracer named.
  add(program, &n, (struct sock_filter)LOAD(nr));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 7));
  add(program, &n, (struct sock_filter)LOAD_ARG0_LOW);
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1 /* PR_SET_PDEATHSIG */, 3, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 22 /* PR_SET_SECCOMP */, 2, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 35 /* PR_SET_MM */, 1, 0));
  add(program, &n, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x59616d61 /* PR_SET_PTRACER */, 0, 1));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_USER_NOTIF));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_ALLOW));
  add(program, &n, (struct sock_filter)RETURN(SECCOMP_RET_USER_NOTIF));  // everything else: the supervisor
  struct sock_fprog filter = {(unsigned short)n, program};
  const long listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &filter);
  if (listener < 0) fail("seccomp");
  return (int)listener;
}

// No capability survives into the command: a grader that runs as root (the GPU machines' default)
// would otherwise hand student code CAP_SYS_ADMIN (TIOCSTI into any terminal, the GPU driver's
// privileged controls), CAP_NET_ADMIN (the node's network interfaces through any socket),
// CAP_LEASE, CAP_DAC_OVERRIDE (every user's files, where Landlock allows a path) and the rest.
// The bounding set is emptied too, so the command's exec gains none back (root's rule).
static void drop_capabilities(void) {
  for (int cap = 0; cap < 64; ++cap)  // (not without CAP_SETPCAP: a user who has no capability anyway)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;  // past the last one
  (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  // -u: the user and group (after the bounding set, which needs CAP_SETPCAP; before the rest is
  // dropped, since this needs CAP_SETUID and CAP_SETGID). Group first: a process that is no longer
  // root may not change its groups.
  if (run_as_uid > 0) {
    if (setgroups(0, NULL) != 0) fail("setgroups (-u needs root)");
    if (setresgid((gid_t)run_as_gid, (gid_t)run_as_gid, (gid_t)run_as_gid) != 0) fail("setresgid (-u needs root)");
    if (setresuid((uid_t)run_as_uid, (uid_t)run_as_uid, (uid_t)run_as_uid) != 0) fail("setresuid (-u needs root)");
  }
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct none[2];
  memset(none, 0, sizeof none);
  if (syscall(SYS_capset, &header, none) != 0) fail("capset");
}

// The supervisor's copy of the child's listener descriptor `fd` (pidfd_getfd, Linux 5.6: the
// parent may take its child's descriptors), or -1.
static int take_descriptor(pid_t child, int fd) {
  const int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
  if (pidfd < 0) return -1;
  const int copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  close(pidfd);
  return copy;
}

// The same from thread `tid`'s table (PIDFD_THREAD, Linux 6.9), else its process's: a process
// whose first thread has ended has none there, and its other threads go on (an adversarial review,
// 2026-11-28: a lock check that could not copy the descriptor let the call run).
static int take_thread_descriptor(pid_t tid, pid_t process, int fd) {
  const int pidfd = (int)syscall(SYS_pidfd_open, tid, 0x80 /* PIDFD_THREAD (O_EXCL) */);
  if (pidfd >= 0) {
    const int copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    close(pidfd);
    if (copy >= 0) return copy;
  }
  return process < 0 ? -1 : take_descriptor(process, fd);
}

// The path an open of the command's names (up to PATH_MAX bytes, read once from its memory), or
// "" when it cannot be read.
static void read_path(pid_t pid, uint64_t address, char* path, size_t size) {
  size_t have = 0;
  path[0] = '\0';
  while (have + 1 < size) {  // in pieces that stop at a page's end: the string may end just before an unmapped one
    const size_t page_left = 4096 - ((address + have) & 4095);
    size_t want = size - 1 - have < page_left ? size - 1 - have : page_left;
    struct iovec local = {path + have, want}, remote = {(void*)(uintptr_t)(address + have), want};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) break;
    path[have + (size_t)got] = '\0';
    if (memchr(path + have, '\0', (size_t)got)) return;
    have += (size_t)got;
  }
  path[have] = '\0';
}

// A thread-name file: /proc/.../comm.
static int names_a_thread(const char* path) {
  const size_t length = strlen(path);
  return strncmp(path, "/proc/", 6) == 0 && length > 11 && strcmp(path + length - 5, "/comm") == 0;
}

// An open for writing: a thread's name file under /proc gets a new descriptor of /dev/null in the
// command (the open's answer); any other open runs on as the command asked, under Landlock, which
// keeps /proc read-only, so a path changed after it was read here gains nothing.
// The device files the command may write: the GPU driver's (/dev/nvidia*, MIG's /dev/nvidia-caps),
// the usual sinks and sources. Not the rest of /dev: a grader running as root must not hand student
// code the disks (/dev/sda, /dev/nvme*) or /dev/mem. Nor /dev/shm: it is one folder for the whole
// node, a channel between two gradings and memory nobody charges to the grading; a test program
// needs no named shared memory (memfd_create gives a private one), and an attempt is logged.
static const char* const kWritableDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

// The folder of the GPU driver's device files. A test build names a temporary folder instead
// (cc -DCOURSE_SANDBOX_DEVICES=...): /dev is the machine's, and a CPU machine has no /dev/nvidia*,
// so the unit tests check the rights below on a fake /dev/nvidia-caps of their own.
#ifndef COURSE_SANDBOX_DEVICES
#define COURSE_SANDBOX_DEVICES "/dev"
#endif

// The files that allow_devices lets the command write, as Landlock knows them: their inodes (a
// link followed), and the folders among them. A name is not enough: where the container's
// /dev/nvidiactl is a link to /dev/char/195:255, the driver's open of it resolves to the latter
// (seen_path), which Landlock allows (H100, 2026-11-28: every reference's report named three
// such opens as refused, 42 times each). Noted once, before the command starts.
enum { kDevicesNoted = 64 };
static struct stat writable_devices[kDevicesNoted];
static int writable_device_count;
static char* writable_device_folders[8];

static void note_writable_device(const char* path) {
  struct stat info;
  if (stat(path, &info) != 0) return;
  if (S_ISDIR(info.st_mode)) {
    for (size_t i = 0; i < sizeof writable_device_folders / sizeof writable_device_folders[0]; ++i)
      if (!writable_device_folders[i]) {
        writable_device_folders[i] = realpath(path, NULL);
        break;
      }
  } else if (writable_device_count < kDevicesNoted) {
    writable_devices[writable_device_count++] = info;
  }
}

// Calls `visit` with each of the GPU driver's entries in the device folder (/dev/nvidia*).
static void for_each_gpu_device(void (*visit)(const char* path)) {
  DIR* listing = opendir(COURSE_SANDBOX_DEVICES);
  if (!listing) return;
  struct dirent* entry;
  while ((entry = readdir(listing)) != NULL) {
    if (strncmp(entry->d_name, "nvidia", 6) != 0) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", COURSE_SANDBOX_DEVICES, entry->d_name);
    visit(path);
  }
  closedir(listing);
}

static void note_writable_devices(void) {
  for (size_t i = 0; i < sizeof kWritableDevices / sizeof kWritableDevices[0]; ++i) note_writable_device(kWritableDevices[i]);
  for_each_gpu_device(note_writable_device);
}

static int inside(const char* path, const char* folder);

static int device_writable(const char* path) {
  if (strncmp(path, "/dev/nvidia", 11) == 0) return 1;
  for (size_t i = 0; i < sizeof kWritableDevices / sizeof kWritableDevices[0]; ++i)
    if (strcmp(path, kWritableDevices[i]) == 0) return 1;
  for (size_t i = 0; i < sizeof writable_device_folders / sizeof writable_device_folders[0]; ++i)
    if (writable_device_folders[i] && inside(path, writable_device_folders[i])) return 1;
  struct stat info;
  if (stat(path, &info) != 0) return 0;
  for (int i = 0; i < writable_device_count; ++i) {
    if (writable_devices[i].st_dev == info.st_dev && writable_devices[i].st_ino == info.st_ino) return 1;
    // Another node of the same character device (/dev/char/195:255 where the container made one
    // of its own for /dev/nvidiactl): for the log, the device the command may write.
    if (S_ISCHR(info.st_mode) && S_ISCHR(writable_devices[i].st_mode) && writable_devices[i].st_rdev == info.st_rdev) return 1;
  }
  return 0;
}

// A device file: read and write (allow keeps a file's rights). A folder (MIG's nvidia-caps): its
// listing and the devices in it, but nothing made, removed or renamed there: the whole set of
// rights would let student code put files of its own among the driver's (an adversarial review,
// 2026-11-28).
static void allow_gpu_device(const char* path) { allow(path, kReadDir | kFileRights); }

static void allow_devices(void) {
  for (size_t i = 0; i < sizeof kWritableDevices / sizeof kWritableDevices[0]; ++i) allow(kWritableDevices[i], handled);
  for_each_gpu_device(allow_gpu_device);
}

// Other opens for writing under /proc and /dev (Landlock refuses them) are logged, the first few
// paths once each: "refused-write <path>" lines in LOG, for whoever finds a new driver failing to
// start. So are the calls that change a folder there (mkdir, symlink, rename, unlink, rmdir), which
// Landlock refuses too. The log is information: Landlock is the boundary, whatever it says.
enum { kRefusedWritesLogged = 16 };
static char* refused_writes[kRefusedWritesLogged];
// The files whose mode or times the supervisor refused to change ("refused-metadata <path>").
static char* refused_metadata[kRefusedWritesLogged];
// The files made set-user-ID or set-group-ID that the supervisor refused ("refused-setid <path>").
static char* refused_setid[kRefusedWritesLogged];

// Refused like the others but not logged: what the CUDA driver opens for writing in every program
// and does without (H100, driver 580.159, 2026-11-27: every verdict as before), so that a report's
// system-call note names what the code under test did, not the driver.
// So is a link that the driver makes for each of its devices (H100 and H200, driver 580.159,
// 2026-11-28, once per program): /dev/char/<major>:<minor> (udev's name for a character device),
// the numbers those of a device the command may write.
static int drivers_own_refused_write(const char* path) {
  if (strcmp(path, "/dev/shm/cuda_injection_path_shm") == 0) return 1;
  unsigned major_number, minor_number;
  int end = 0;
  if (sscanf(path, "/dev/char/%u:%u%n", &major_number, &minor_number, &end) != 2 || path[end] != '\0') return 0;
  for (int i = 0; i < writable_device_count; ++i)
    if (S_ISCHR(writable_devices[i].st_mode) && major(writable_devices[i].st_rdev) == major_number &&
        minor(writable_devices[i].st_rdev) == minor_number)
      return 1;
  return 0;
}

// Whether `path` is `folder` or inside it.
static int inside(const char* path, const char* folder) {
  const size_t length = strlen(folder);
  return strncmp(path, folder, length) == 0 && (path[length] == '\0' || path[length] == '/' || strcmp(folder, "/") == 0);
}

// Notes `path` in `list` (kRefusedWritesLogged entries), once, as one word of a log line.
static void remember(char** list, const char* path) {
  char word[PATH_MAX];
  snprintf(word, sizeof word, "%s", path);
  for (char* c = word; *c; ++c)  // one line of the log, one word of it: no byte of UTF-8's line separators
    if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f) *c = '?';  // either (U+2028: e2 80 a8)
  for (int i = 0; i < kRefusedWritesLogged; ++i) {
    if (list[i] && strcmp(list[i], word) == 0) return;
    if (!list[i]) {
      list[i] = strdup(word);
      return;
    }
  }
}

// Logs `path` (resolved, see seen_path) where Landlock refuses to write it: under /proc, or under
// /dev but for the devices the command may write (`opening`: an open; 0: a folder changed, which
// no device allows), and not inside a -w folder.
static int own_proc_made;  // (own_proc's result: 3 where /proc/locks is /dev/null for the command)

static void note_refused_write(const char* path, int opening) {
  const int in_devices = inside(path, "/dev") || inside(path, COURSE_SANDBOX_DEVICES);
  if (!inside(path, "/proc") && !(in_devices && !(opening && device_writable(path)))) return;
  // In the command's own /proc (own_proc) /proc/locks is /dev/null, which it may write: no refusal
  // (an adversarial review, 2026-11-28: the log named one, a false fault in the report).
  if (own_proc_made == 3 && strcmp(path, "/proc/locks") == 0) return;
  if (drivers_own_refused_write(path)) return;
  for (int i = 0; i < writable_count; ++i)
    if (inside(path, writable[i])) return;
  remember(refused_writes, path);
}

// The process (thread group) of thread `tid`, or -1.
static pid_t process_of(pid_t tid) {
  char name[64], line[256];
  snprintf(name, sizeof name, "/proc/%d/status", (int)tid);
  FILE* status = fopen(name, "re");
  pid_t process = -1;
  while (status && fgets(line, sizeof line, status))
    if (sscanf(line, "Tgid: %d", &process) == 1) break;
  if (status) fclose(status);
  return process;
}

// The file `given` names for thread `tid` (a call's path, relative to its descriptor `dirfd` or
// AT_FDCWD), as the kernel would resolve it: against the thread's working folder or descriptor,
// with "//", "." and "..", /proc/self and /proc/thread-self as that thread's, and symbolic links
// followed one component at a time (the last one too with `follow_last`; at most 40). So that
// /dev/../dev/kmsg, a name relative to a descriptor of /dev or /dev/fd/N are logged as what they
// are. A magic link (/proc/<pid>/fd/N, cwd, root, ...) leads where the kernel says it does; a last
// one that leads to no path (a pipe, a socket, a memfd) or to one outside /proc and /dev opens no
// file that Landlock keeps read-only. Returns 1 with the path in `out`, 0 for such a file (nothing
// to log), -1 where it cannot tell (the caller logs the path as given). Everything here reads the
// program's state once, racing it: the log may be wrong, the open is not (Landlock decides).
// With `follow_magic`, a last magic link that leads to a path outside /proc and /dev is followed
// to that path instead (returns 2 then): the file a metadata change names (answer_metadata_change).
static int seen_path_through(pid_t tid, int dirfd, const char* given, int follow_last, int follow_magic, char* out,
                             size_t size) {
  int followed_magic = 0;
  char rest[2 * PATH_MAX + 2], link[PATH_MAX], done[PATH_MAX] = "", where[64];
  pid_t process = 0;  // (read once it is needed: /proc/self)
  if (given[0] == '\0') return -1;
  if (given[0] == '/') {
    snprintf(rest, sizeof rest, "%s", given);
  } else {
    if (dirfd == AT_FDCWD)
      snprintf(where, sizeof where, "/proc/%d/cwd", (int)tid);
    else
      snprintf(where, sizeof where, "/proc/%d/fd/%d", (int)tid, dirfd);
    const ssize_t length = readlink(where, link, sizeof link - 1);
    if (length <= 0) return -1;
    link[length] = '\0';
    if (link[0] != '/') return -1;  // a descriptor of no folder: the call fails (ENOTDIR)
    snprintf(rest, sizeof rest, "%s/%s", link, given);
  }
  int hops = 0;
  for (const char* at = rest; *at;) {
    while (*at == '/') ++at;
    if (*at == '\0') break;
    const char* end = strchrnul(at, '/');
    char name[NAME_MAX + 1];
    if ((size_t)(end - at) > NAME_MAX) return -1;
    memcpy(name, at, (size_t)(end - at));
    name[end - at] = '\0';
    at = end;
    const int last = at[strspn(at, "/")] == '\0';
    if (strcmp(name, ".") == 0) continue;
    if (strcmp(name, "..") == 0) {
      char* slash = strrchr(done, '/');
      if (slash) *slash = '\0';
      continue;
    }
    const size_t had = strlen(done);
    if (strcmp(done, "/proc") == 0 && (strcmp(name, "self") == 0 || strcmp(name, "thread-self") == 0) && process == 0)
      process = process_of(tid);
    if (process < 0) return -1;
    int written;
    if (strcmp(done, "/proc") == 0 && strcmp(name, "self") == 0)
      written = snprintf(done + had, sizeof done - had, "/%d", (int)process);
    else if (strcmp(done, "/proc") == 0 && strcmp(name, "thread-self") == 0)
      written = snprintf(done + had, sizeof done - had, "/%d/task/%d", (int)process, (int)tid);
    else
      written = snprintf(done + had, sizeof done - had, "/%s", name);
    if (written < 0 || (size_t)written >= sizeof done - had) return -1;
    struct stat info;
    if ((last && !follow_last) || lstat(done, &info) != 0 || !S_ISLNK(info.st_mode)) continue;
    if (++hops > 40) return -1;  // (the kernel stops there too: ELOOP)
    const ssize_t length = readlink(done, link, sizeof link - 1);
    if (length < 0) return -1;
    link[length] = '\0';
    // Under /proc/<pid>/, every link is magic; /proc's own (mounts, net) are ordinary ones.
    const int magic = strncmp(done, "/proc/", 6) == 0 && strchr(done + 6, '/') != NULL;
    if (magic && (link[0] != '/' || strncmp(link, "/memfd:", 7) == 0)) return 0;  // pipe:[..], anon_inode:..., a memfd
    if (magic && last && !inside(link, "/proc") && !inside(link, "/dev")) {  // a file elsewhere
      if (!follow_magic) return 0;
      followed_magic = 1;
    }
    if (link[0] == '/') {
      done[0] = '\0';
    } else {
      char* slash = strrchr(done, '/');  // relative to the link's folder
      if (slash) *slash = '\0';
    }
    char next[sizeof rest];
    if (snprintf(next, sizeof next, "%s/%s", link, at) >= (int)sizeof next) return -1;
    memcpy(rest, next, sizeof rest);
    at = rest;
  }
  snprintf(out, size, "%s", done[0] ? done : "/");
  return followed_magic ? 2 : 1;
}

static int seen_path(pid_t tid, int dirfd, const char* given, int follow_last, char* out, size_t size) {
  return seen_path_through(tid, dirfd, given, follow_last, 0, out, size);
}

// Whether an open with `flags` of `path` (as seen_path gave it) writes: write access, a new file
// (O_CREAT) or a regular one emptied (O_TRUNC, which needs Landlock's truncate right).
static int opens_for_writing(const char* path, int flags) {
  if (flags & (O_WRONLY | O_RDWR)) return 1;
  struct stat info;
  if (stat(path, &info) != 0) return (flags & O_CREAT) != 0;
  return (flags & O_TRUNC) && S_ISREG(info.st_mode);
}

// Logs what `given` (a call's path, read once) names for the calling thread, relative to `dirfd`.
static void note_path(const struct seccomp_notif* request, int dirfd, const char* given, int opening, int flags) {
  char seen[PATH_MAX];
  const int follow_last = !opening || (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL)) ? 0 : 1;
  const int resolved = seen_path((pid_t)request->pid, dirfd, given, follow_last, seen, sizeof seen);
  if (resolved == 0) return;
  const char* path = resolved > 0 ? seen : given;
  if (!inside(path, "/proc") && !inside(path, "/dev") && !inside(path, COURSE_SANDBOX_DEVICES)) return;  // (no stat of any other path)
  if (!opening || opens_for_writing(path, flags)) note_refused_write(path, opening);
}

// mkdir, symlink, rename, unlink and rmdir (and their ...at forms): run on, under Landlock, which
// refuses them under /dev and /proc; logged there (the new name of a symlink, both of a rename).
static void answer_folder_change(int listener, const struct seccomp_notif* request, struct seccomp_notif_resp* response) {
  const __u64* a = request->data.args;
  int dirfd[2] = {AT_FDCWD, AT_FDCWD};  // the one or two names the call changes
  uint64_t address[2] = {a[0], 0};
  switch (request->data.nr) {
    case SYS_mkdirat: case SYS_unlinkat: dirfd[0] = (int)a[0]; address[0] = a[1]; break;
    case SYS_symlink: address[0] = a[1]; break;
    case SYS_symlinkat: dirfd[0] = (int)a[1]; address[0] = a[2]; break;
    case SYS_rename: address[1] = a[1]; break;
    case SYS_renameat: case SYS_renameat2:
      dirfd[0] = (int)a[0], address[0] = a[1], dirfd[1] = (int)a[2], address[1] = a[3];
      break;
    default: break;  // mkdir, unlink, rmdir
  }
  for (int i = 0; i < 2 && address[i]; ++i) {
    char given[PATH_MAX];
    read_path((pid_t)request->pid, address[i], given, sizeof given);
    note_path(request, dirfd[i], given, 0, 0);
  }
  response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
}

// Whether the supervisor may change the metadata of `path` (where a file it holds lies): inside a
// -w folder, where the command may write the file anyway.
static int metadata_writable(const char* path) {
  for (int i = 0; i < writable_count; ++i)
    if (path[0] == '/' && inside(path, writable[i])) return 1;
  return 0;
}

// Whether the mount numbered `mount` is one of those /proc/<pid>/mountinfo lists (pid 0: this
// process's own).
static int lists_mount(pid_t pid, int mount) {
  char name[64], line[4096];
  if (pid > 0) snprintf(name, sizeof name, "/proc/%d/mountinfo", (int)pid);
  FILE* mounts = fopen(pid > 0 ? name : "/proc/self/mountinfo", "re");
  if (!mounts) return 1;  // (unknown: taken as a mounted file system, so refused)
  int found = 0, id;
  while (!found && fgets(line, sizeof line, mounts))  // (a longer line's rest may match too: refused then)
    found = sscanf(line, "%d", &id) == 1 && id == mount;
  fclose(mounts);
  return found;
}

// Whether the object the supervisor holds as `fd` lies in no mounted file system, so that no path
// names it: a pipe, a socket, a memfd, an anonymous inode (the kernel's internal mounts). Its mount
// (mnt_id in fdinfo, a number unique on the node) is none of this process's mounts and none of the
// command's (`process`): the command has a mount namespace of its own where the supervisor could
// give it one (own_proc), so a file it opened lies in a copy of a mount, numbered anew.
// Such an object is the program's own (a pipe, a memfd it made, its standard output), not a file
// another grading can name: its mode and times may change (an adversarial review, 2026-11-28:
// fchmod of a memfd was refused and logged, a false fault).
static int names_no_path(int fd, pid_t process) {
  char name[64], line[4096];
  snprintf(name, sizeof name, "/proc/self/fdinfo/%d", fd);
  FILE* info = fopen(name, "re");
  int mount = -1;
  while (info && fgets(line, sizeof line, info))
    if (sscanf(line, "mnt_id: %d", &mount) == 1) break;
  if (info) fclose(info);
  if (mount < 0 || process <= 0) return 0;
  return !lists_mount(0, mount) && !lists_mount(process, mount);
}

// fchmod and utimensat (see changes_metadata): Landlock does not cover a file's mode and times, so
// a program allowed them could set those of a file it may only read (a class's GPU turn files,
// given with -R: a channel between two gradings) or, by path, of any file it can name, hidden ones
// too where the grader runs as root (an adversarial review, 2026-11-28). The supervisor makes the
// call itself on an object it holds: a copy of the program's descriptor (pidfd_getfd), or the
// file the path names as the program sees it, opened here (O_PATH); it changes that object only
// where it lies inside a -w folder (its path as the kernel gives it for the held object, so a
// thread that changes the descriptor table or the path after the check gains nothing), or in no
// mounted file system (names_no_path: a pipe, a memfd, which no path names), with the
// times read once from the program's memory. Anything else is refused (EPERM) and logged; with
// learn, let run. Returns nothing: it answers.
static void answer_metadata_change(int listener, int enforce, const struct seccomp_notif* request,
                                   struct seccomp_notif_resp* response) {
  const __u64* a = request->data.args;
  const pid_t tid = (pid_t)request->pid;
  const pid_t process = process_of(tid);  // (pidfd_open takes a process, the notification names a thread)
  int error = 0, held = -1, by_path = 0, flags = 0;
  char where[PATH_MAX] = "";  // what the refusal names
  struct timespec times[2];
  const int now = request->data.nr == SYS_utimensat && a[2] == 0;  // times NULL: both now
  if (request->data.nr == SYS_utimensat && !now) {
    struct iovec local = {times, sizeof times}, remote = {(void*)(uintptr_t)a[2], sizeof times};
    if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof times) error = EFAULT;
  }
  if (request->data.nr == SYS_fchmod) {
    held = process < 0 ? -1 : take_descriptor(process, (int)a[0]);
    if (held < 0) error = EBADF;
  } else if (!error) {
    const int dirfd = (int)a[0];
    flags = (int)a[3];
    char given[PATH_MAX] = "", first;
    if (a[1] != 0) read_path(tid, a[1], given, sizeof given);
    struct iovec local = {&first, 1}, remote = {(void*)(uintptr_t)a[1], 1};  // ("" or unreadable?)
    if (a[1] == 0 ? dirfd == AT_FDCWD : given[0] == '\0' && process_vm_readv(tid, &local, 1, &remote, 1, 0) != 1) {
      error = EFAULT;  // (as the kernel answers a path it cannot read, or no path and no descriptor)
    } else if ((a[1] == 0 && flags != 0) || (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))) {
      error = EINVAL;
    } else if (a[1] == 0 || (given[0] == '\0' && (flags & AT_EMPTY_PATH) && dirfd != AT_FDCWD)) {
      held = process < 0 ? -1 : take_descriptor(process, dirfd);  // futimens, or the descriptor's own file
      if (held < 0) error = EBADF;
      by_path = a[1] != 0;
    } else if (given[0] == '\0' && !(flags & AT_EMPTY_PATH)) {
      error = ENOENT;
    } else {
      by_path = 1;
      const int follow = !(flags & AT_SYMLINK_NOFOLLOW);
      char seen[PATH_MAX];
      // A magic link (/proc/self/fd/N of a file in scratch, say) is followed to the path it leads
      // to, then all goes on as for that path: opened here, checked where the held object lies
      // (an adversarial review, 2026-11-28: such a call was refused). Refused, it is logged as
      // named.
      const int resolved = seen_path_through(tid, dirfd, given[0] ? given : ".", follow, 1, seen, sizeof seen);
      snprintf(where, sizeof where, "%s", resolved == 1 ? seen : given);
      const int descriptor = resolved < 0 && given[0] != '/' && dirfd != AT_FDCWD && process >= 0
                                 ? take_descriptor(process, dirfd) : -2;  // (is there such a descriptor?)
      if (descriptor >= 0) close(descriptor);
      if (descriptor == -1) {
        error = EBADF;
        where[0] = '\0';
      } else if (resolved <= 0 || !metadata_writable(seen)) {  // (no file outside the -w folders opened here)
        error = EPERM;
      } else {
        held = open(seen, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
        if (held < 0) error = errno;
      }
    }
  }
  // The thread still waits in its call, so its id named this process when process_of read it (a
  // thread that died meanwhile could have had its id given to another process: an adversarial
  // review, 2026-11-28). Otherwise nothing is done, and nobody waits for an answer.
  if (held >= 0 && ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &request->id) != 0) {
    close(held);
    return;
  }
  if (held >= 0) {  // where the held object lies, as the kernel says
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", held);
    const ssize_t length = readlink(link, where, sizeof where - 1);
    where[length > 0 ? length : 0] = '\0';
    const int private_object = names_no_path(held, process);
    if (!metadata_writable(where) && !private_object) error = EPERM;
    // ... but for the one inode that every eventfd, epoll and timerfd descriptor of the node
    // shares (anon_inode:...): refused, as the kernel refuses a program without root's uid, and
    // not logged (no file named).
    if (private_object && strncmp(where, "anon_inode:", 11) == 0) {
      error = EPERM;
      where[0] = '\0';
    }
    // No set-user-ID or set-group-ID file: the supervisor may be root, and the scratch folder
    // outlives the grading; a test program needs none.
    if (request->data.nr == SYS_fchmod && (a[1] & (S_ISUID | S_ISGID))) error = EPERM;
  }
  if (!error && request->data.nr == SYS_fchmod) {
    error = fchmod(held, (mode_t)a[1]) == 0 ? 0 : errno;
  } else if (!error) {
    const int done = by_path ? utimensat(held, "", now ? NULL : times, AT_EMPTY_PATH | (flags & AT_SYMLINK_NOFOLLOW))
                             : futimens(held, now ? NULL : times);  // (EBADF for an O_PATH descriptor, as before)
    error = done == 0 ? 0 : errno;
  }
  if (held >= 0) close(held);
  response->error = -error;
  if (error == EPERM && where[0]) {
    remember(refused_metadata, where);
    if (!enforce) {
      response->error = 0;  // (the kernel takes CONTINUE only with no error and no value)
      response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    }
  }
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
}

static void answer_open(int listener, struct seccomp_notif* request, struct seccomp_notif_resp* response) {
  char path[PATH_MAX];
  const int at = request->data.nr == SYS_openat ? 1 : 0;
  read_path((pid_t)request->pid, request->data.args[at], path, sizeof path);
  const int flags = (int)request->data.args[at + 1];
  // No set-user-ID or set-group-ID file made (O_CREAT, or O_TMPFILE, with such a mode): the grader
  // may run as root, and the scratch folder outlives the grading (an adversarial review,
  // 2026-11-28); a test program needs none. The mode is a register, read once: no race. Refused
  // with learn too (no CUDA release needs one), and logged. (creat is outside the list: refused.)
  const int creates = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
  if (creates && (request->data.args[at + 2] & (S_ISUID | S_ISGID))) {
    char seen[PATH_MAX];
    const int follow = (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL)) ? 0 : 1;
    const int resolved = seen_path((pid_t)request->pid, at ? (int)request->data.args[0] : AT_FDCWD, path, follow,
                                   seen, sizeof seen);
    remember(refused_setid, resolved > 0 ? seen : path);
    response->error = -EPERM;
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
    return;
  }
  const int thread_name = names_a_thread(path) && (flags & (O_WRONLY | O_RDWR));  // (answered below, not refused)
  if (!thread_name) note_path(request, at ? (int)request->data.args[0] : AT_FDCWD, path, 1, flags);
  if (thread_name && ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &request->id) == 0) {
    const int sink = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (sink >= 0) {
      struct seccomp_notif_addfd add = {0};
      add.id = request->id;
      add.flags = SECCOMP_ADDFD_FLAG_SEND;  // the new descriptor is the open's answer (Linux 5.14)
      add.srcfd = (uint32_t)sink;
      add.newfd_flags = (uint32_t)(flags & O_CLOEXEC);
      const int sent = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
      close(sink);
      if (sent >= 0 || errno == ENOENT) return;  // answered (or its caller gave up)
    }
  }
  response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
}

// ---------------------------------------------------------------- local sockets
//
// The CUDA driver makes two socket calls in every program (seen on the H100, driver 580.159): it
// asks whether an MPS daemon runs (connect to <pipe folder>/control, CUDA_MPS_PIPE_DIRECTORY or
// /tmp/nvidia-mps) and it listens on an abstract socket named cuda-uvmfd-<namespace>-<its pid>.
// Nothing else of a test program needs a socket, and one that reaches a daemon of the node (D-Bus,
// munge, docker, another grading's program) is out of the sandbox. So bind and connect come here:
// - connect is never made. The MPS probe is answered ENOENT, as when no daemon runs (the course
//   is graded without MPS): a supervisor that connected by path, unconfined, would follow a
//   symbolic link that anyone who can write /tmp put there, to any socket of the node (an
//   adversarial review, 2026-11-27). Any other connect is refused (EPERM) and logged.
// - bind is made by the supervisor itself, on the program's own socket (a copy of its descriptor:
//   pidfd_getfd), with the address it read once and checked: the driver's abstract name, with
//   the program's pid, or an automatic one. A thread that changes the address after the check
//   changes nothing, and no program takes the name of another's. Any other bind is refused and
//   logged.
// Abstract sockets made outside the sandbox are out of reach from inside it anyway (Landlock ABI
// 6, kScopeAbstractUnixSocket), and sendto, sendmsg, accept and socketpair are outside the list.

enum SocketAnswer { kRefuse, kNoDaemon, kBindHere };

// What to do with a bind or connect to `address` (length bytes as the call gave them).
static enum SocketAnswer socket_answer(int nr, const struct sockaddr_un* address, size_t length, pid_t program) {
  const size_t path_at = offsetof(struct sockaddr_un, sun_path);
  if (length < path_at || address->sun_family != AF_UNIX) return kRefuse;
  const char* path = address->sun_path;
  const size_t path_length = length - path_at;
  if (nr == SYS_connect) {
    if (path_length == 0 || path[0] == '\0') return kRefuse;  // abstract: never
    const char* folder = getenv("CUDA_MPS_PIPE_DIRECTORY");  // (the supervisor's: the program cannot set it)
    char control[sizeof address->sun_path + 1];
    snprintf(control, sizeof control, "%s/control", folder && folder[0] ? folder : "/tmp/nvidia-mps");
    return strnlen(path, path_length) == strlen(control) && strncmp(path, control, path_length) == 0 ? kNoDaemon
                                                                                                    : kRefuse;
  }
  if (path_length == 0) return kBindHere;  // bind with no name: the kernel picks an abstract one
  if (path[0] != '\0') return kRefuse;  // a name in the file system: the driver makes none
  char name[sizeof address->sun_path];
  memcpy(name, path + 1, path_length - 1);
  name[path_length - 1] = '\0';
  char tail[32];
  snprintf(tail, sizeof tail, "-%d", (int)program);
  const size_t name_length = strnlen(name, path_length - 1), tail_length = strlen(tail);
  for (size_t i = name_length; i < path_length - 1; ++i)  // (a name given with the whole sun_path: zeros after it)
    if (name[i] != '\0') return kRefuse;
  if (strncmp(name, "cuda-uvmfd-", 11) != 0 || name_length <= 11 + tail_length ||
      strcmp(name + name_length - tail_length, tail) != 0)
    return kRefuse;
  // The middle is the driver's namespace (its pid namespace's inode; 4026531836 on a host's
  // own): one of the program's namespaces, not any text. Any text made each bind a message that
  // another grading's program read from /proc/net/unix, megabytes a second (an adversarial
  // review, 2026-11-28); now a program has at most seven such names, each bound once.
  name[name_length - tail_length] = '\0';
  const char* middle = name + 11;
  static const char* const kNamespaces[] = {"pid", "net", "mnt", "ipc", "uts", "user", "cgroup"};
  for (size_t i = 0; i < sizeof kNamespaces / sizeof kNamespaces[0]; ++i) {
    char where[64], inode[32];
    struct stat info;
    snprintf(where, sizeof where, "/proc/%d/ns/%s", (int)program, kNamespaces[i]);
    if (stat(where, &info) != 0) continue;
    snprintf(inode, sizeof inode, "%llu", (unsigned long long)info.st_ino);
    if (strcmp(middle, inode) == 0) return kBindHere;
  }
  return kRefuse;
}

// bind or connect (see above): answered here, or refused (with learn: let run). Returns whether it
// was outside what the driver does (the caller counts it).
static int answer_socket(int listener, pid_t program, int enforce, struct seccomp_notif* request,
                         struct seccomp_notif_resp* response) {
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  const uint64_t length = request->data.args[2];
  enum SocketAnswer answer = kRefuse;
  if (length <= sizeof address) {
    struct iovec local = {&address, (size_t)length}, remote = {(void*)(uintptr_t)request->data.args[1], (size_t)length};
    if (length == 0 || process_vm_readv((pid_t)request->pid, &local, 1, &remote, 1, 0) == (ssize_t)length)
      answer = socket_answer(request->data.nr, &address, (size_t)length, program);
  }
  response->error = answer == kNoDaemon ? -ENOENT : -EPERM;
  if (answer == kRefuse && !enforce) {
    response->error = 0;  // (the kernel takes CONTINUE only with no error and no value)
    response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  }
  if (answer == kBindHere) {
    const int pidfd = (int)syscall(SYS_pidfd_open, program, 0);
    const int socket_fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, (int)request->data.args[0], 0);
    if (pidfd >= 0) close(pidfd);
    if (socket_fd < 0) {
      response->error = -EBADF;
    } else {
      response->error = bind(socket_fd, (const struct sockaddr*)&address, (socklen_t)length) == 0 ? 0 : -errno;
      close(socket_fd);
    }
  }
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
  return answer == kRefuse;
}

// The supervisor: answers the filter's notifications until the command's last thread is gone,
// then ends as the command ended (the same exit status, or the same signal).
// Answers a call checked here: let run where `allowed` (or with learn), else refused with `error`.
// Returns whether it was refused (counted among the calls outside the list).
static int answer_checked(int listener, int enforce, struct seccomp_notif_resp* response, int allowed, int error) {
  if (allowed || !enforce) {
    response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    response->error = -error;
  }
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
  return !allowed;
}

// A call that reads another process's scheduling (sched_getaffinity, sched_getparam,
// sched_getscheduler) or robust futex list, or sets its CPUs (sched_setaffinity: a thread of its
// own, pthread_setaffinity_np, OpenMP's thread binding, was refused), by its pid, where the pid is
// not 0 or the program's own (the filter lets those through).
static int asks_about_a_process(int nr) {
  return nr == SYS_sched_getaffinity || nr == SYS_sched_getparam || nr == SYS_sched_getscheduler ||
         nr == SYS_get_robust_list || nr == SYS_sched_setaffinity;
}

// Such a call runs where the pid is a thread of the calling program's own (pthread_getaffinity_np
// names a thread so), checked while the calling thread still waits in it; on any other it is
// answered as for a process that is not there (ESRCH) with enforce, let run with learn, and
// counted among the calls outside the list either way. Returns whether it was counted.
static int answer_process_query(int listener, int enforce, const struct seccomp_notif* request,
                                struct seccomp_notif_resp* response) {
  const pid_t asked = (pid_t)request->data.args[0];
  const pid_t own = process_of((pid_t)request->pid);
  // (a negative pid names no process: the kernel's EINVAL, as without the sandbox)
  const int allowed = asked < 0 || (asked > 0 && own > 0 && process_of(asked) == own &&
                                    ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &request->id) == 0);
  return answer_checked(listener, enforce, response, allowed, ESRCH);
}

// fcntl's record locks (F_GETLK, F_SETLK, F_SETLKW, F_OFD_*), sent here by the filter (its other
// commands but F_SETLEASE and F_NOTIFY run at once).
static int takes_a_record_lock(const struct seccomp_notif* request) {
  const int command = (int)request->data.args[1];
  return request->data.nr == SYS_fcntl && (command == F_GETLK || command == F_SETLK || command == F_SETLKW ||
                                           command == 36 || command == 37 || command == 38);
}

// A record lock, placed or asked about, runs on a file inside a -w folder or on an object that no
// path names (a memfd): the program's own. On any other file it read, and let a program read, the
// node's locks: any program can place one on a file it may read, and another program's locks,
// with their ranges and holders, read with F_GETLK, were a channel between two gradings (an
// adversarial review, 2026-11-28). Refused (EPERM) with enforce, let run with learn, and counted
// among the calls outside the list either way; returns whether it was. The kernel runs an allowed
// call itself (a lock that waits, waits in the program), so a thread that puts another file under
// the descriptor between this check and then locks that file: a check, not a boundary.
static int answer_record_lock(int listener, int enforce, const struct seccomp_notif* request,
                              struct seccomp_notif_resp* response) {
  const pid_t tid = (pid_t)request->pid, process = process_of(tid);
  const int held = take_thread_descriptor(tid, process, (int)request->data.args[0]);
  int allowed = 0;
  // No copy, no call: where the descriptor could not be had (none by that number, a program that
  // made itself undumpable for a grader without root's privileges), it is refused, not let run (the
  // third adversarial review of 2026-11-28 placed locks so, by the three ways this had let through).
  if (held >= 0) {
    char link[64], where[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", held);
    const ssize_t length = readlink(link, where, sizeof where - 1);
    where[length > 0 ? length : 0] = '\0';
    allowed = metadata_writable(where) || (names_no_path(held, process) && strncmp(where, "anon_inode:", 11) != 0);
    close(held);
    allowed = allowed && ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &request->id) == 0;
  }
  return answer_checked(listener, enforce, response, allowed, EPERM);
}

static int supervise(pid_t child, int listener, const char* command) {
  const int log = open(syscall_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  enum { kCalls = 1024 };
  static long calls[kCalls];  // how often each call outside the list was made (x86-64 numbers are below 512)
  const int enforce = strcmp(syscall_mode, "enforce") == 0;
  int execs = 0;
  struct seccomp_notif_sizes sizes;
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) fail("seccomp(SECCOMP_GET_NOTIF_SIZES)");
  struct seccomp_notif* request = calloc(1, sizes.seccomp_notif > sizeof *request ? sizes.seccomp_notif : sizeof *request);
  struct seccomp_notif_resp* response =
      calloc(1, sizes.seccomp_notif_resp > sizeof *response ? sizes.seccomp_notif_resp : sizeof *response);
  for (;;) {
    struct pollfd wait_for = {listener, POLLIN, 0};
    if (poll(&wait_for, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (wait_for.revents & POLLIN) {
      memset(request, 0, sizes.seccomp_notif);
      if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, request) != 0) continue;  // (its caller gave up)
      memset(response, 0, sizes.seccomp_notif_resp);
      response->id = request->id;
      const int nr = request->data.nr;
      if (nr == SYS_openat || nr == SYS_open) {
        answer_open(listener, request, response);  // (it answers)
        continue;
      }
      if (changes_metadata(nr)) {
        answer_metadata_change(listener, enforce, request, response);  // (it answers)
        continue;
      }
      if (changes_a_folder(nr)) {
        answer_folder_change(listener, request, response);  // (it answers)
        continue;
      }
      if (nr == SYS_bind || nr == SYS_connect) {
        if (answer_socket(listener, child, enforce, request, response)) ++calls[nr];  // (it answers)
        continue;
      }
      if (takes_a_record_lock(request)) {
        if (answer_record_lock(listener, enforce, request, response)) ++calls[nr];  // (it answers)
        continue;
      }
      if (asks_about_a_process(nr)) {
        if (answer_process_query(listener, enforce, request, response)) ++calls[nr];  // (it answers)
        continue;
      }
      // The command's own execve, the first one, runs; every later one is judged like any call.
      if (nr == SYS_execve && request->pid == (uint32_t)child && execs++ == 0) {
        response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      } else {
        if (nr >= 0 && nr < kCalls) ++calls[nr];  // counted here, written once at the end (a flood is one line)
        if (enforce) {
          response->error = -EPERM;
        } else {
          response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        }
      }
      ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response);
    } else if (wait_for.revents & (POLLHUP | POLLERR)) {
      break;  // no thread of the command is left
    }
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  for (int nr = 0; nr < kCalls; ++nr)
    if (calls[nr] > 0 && log >= 0) dprintf(log, "%d %ld %s\n", nr, calls[nr], command);
  for (int i = 0; i < kRefusedWritesLogged && refused_writes[i]; ++i)
    if (log >= 0) dprintf(log, "refused-write %s %s\n", refused_writes[i], command);
  for (int i = 0; i < kRefusedWritesLogged && refused_metadata[i]; ++i)
    if (log >= 0) dprintf(log, "refused-metadata %s %s\n", refused_metadata[i], command);
  for (int i = 0; i < kRefusedWritesLogged && refused_setid[i]; ++i)
    if (log >= 0) dprintf(log, "refused-setid %s %s\n", refused_setid[i], command);
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    kill(getpid(), WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The command's path as execvp would find it, so that the child needs exactly one execve.
static char* resolve(const char* name) {
  if (strchr(name, '/')) return strdup(name);
  const char* path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  char candidate[PATH_MAX];
  for (const char* at = path; *at;) {
    const char* end = strchr(at, ':');
    const size_t length = end ? (size_t)(end - at) : strlen(at);
    snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, length ? at : ".", name);
    if (access(candidate, X_OK) == 0) return strdup(candidate);
    if (!end) break;
    at = end + 1;
  }
  return strdup(name);
}

static int take_options_file(const char* file) {
  FILE* input = fopen(file, "r");
  if (!input) return 0;
  char line[PATH_MAX + 8];
  while (fgets(line, sizeof line, input)) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') continue;
    char* value = strchr(line, ' ');
    if (value) *value++ = '\0';
    if (!take_option(line, value)) {
      fclose(input);
      return 0;
    }
  }
  fclose(input);
  return 1;
}

// No descriptor crosses into the command but its output and errors: ctest gives each test its own
// log (descriptor 3, open for writing, outside the scratch folder) and its standard input (a
// terminal, where the grader was started from one), and Landlock checks only what is opened
// afterwards: a program wrote lines into ctest's log and could have read an administrator's typing
// (an adversarial review, 2026-11-28). Standard input becomes /dev/null; 3 and up close at exec.
static void leave_nothing_open(void) {
  const int nothing = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (nothing < 0 || dup2(nothing, 0) != 0) fail("standard input from /dev/null");
  close(nothing);
  if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0) {  // (Linux 5.11; else one by one)
    for (int fd = 3; fd < 65536; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
}

// A /proc of the command's own, where this runs as root: a mount namespace of its own (a copy of
// the node's mounts, which follows their changes: MS_SLAVE), where a new instance of proc is
// mounted over /proc with hidepid=2, and /proc/locks reads empty. Under a test user of its own
// (-u), a process of another user is then not there at all: another grading's test programs, the
// grader's, the node's, with their command lines and thread names, which two gradings' programs
// used as a channel (an adversarial review, 2026-11-28); and the node's file locks, which any
// program can place on a file it may read, are not shown (/dev/null bound over /proc/locks: the
// same review read a classmate's locks there at 0.5 MB/s). A proc mount has options of its own
// since Linux 5.8 (before, a new one changed the node's /proc: called only where Landlock, 5.13,
// is). Where the namespace or a mount cannot be had (a container without CAP_SYS_ADMIN, as a
// Gradescope autograder), the command sees the node's /proc, as before: the grader's sandbox
// check says which (grading.check_test_sandbox). Returns how far it got: 0 nothing, 1 the
// namespace, 2 and the proc mount, 3 and /proc/locks empty.
static int own_proc(void) {
  if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0) return 0;
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) return 1;  // (nothing mounted here goes out)
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") != 0) return 1;
  if (mount("/dev/null", "/proc/locks", NULL, MS_BIND, NULL) != 0) return 2;
  return 3;
}

// Files of the node that no test program reads and that a program running as root could (their
// owner is its uid): hidden whatever the grader says (an adversarial review, 2026-11-28). The
// root cause, a test program with the grader's uid, is in grading/threat-model.md.
static const char* const kAlwaysHidden[] = {"/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/ssl/private", "/root/.ssh"};

int main(int argc, char** argv) {
  int at = 1;
  for (; at < argc && strcmp(argv[at], "--") != 0; ++at) {
    const char* value = at + 1 < argc ? argv[at + 1] : NULL;
    if (strcmp(argv[at], "-f") == 0 && value != NULL) {
      if (!take_options_file(value)) {
        fprintf(stderr, "course-sandbox: cannot read the options in %s\n", value);
        return 2;
      }
      ++at;
    } else if (take_option(argv[at], value)) {
      if (strcmp(argv[at], "-r") != 0 && strcmp(argv[at], "-p") != 0) ++at;
    } else {
      fprintf(stderr, "usage: course-sandbox [-w DIR]... [-R DIR]... [-h DIR]... [-s enforce|learn:LOG] [-u UID:GID] [-f FILE] [-r] [-p] -- "
                      "COMMAND [ARG]...\n");
      return 2;
    }
  }
  if (at + 1 >= argc) {
    fprintf(stderr, "course-sandbox: no command\n");
    return 2;
  }
  char** command = argv + at + 1;

  // Whoever started this (ctest, the grader) ends: so does this, and with it the command (without
  // -s, the command itself: the signal stays across exec). A grader killed with SIGKILL left a
  // ctest and its programs running as the test user, which the next grading could be given (an
  // adversarial review, 2026-11-28); its ctest now dies with it, and so do these.
  const pid_t starter = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail("prctl(PR_SET_PDEATHSIG)");
  if (getppid() != starter) return 3;

  // With -s: the supervisor stays outside (unconfined, out of the command's reach) and the command
  // runs in a child, confined by Landlock and the filter.
  // Two pipes: the child says which descriptor its listener is, the supervisor takes a copy and
  // says go (the child needs no call outside its filter's list for this).
  int told[2] = {-1, -1}, go[2] = {-1, -1};
  pid_t child = 0;
  if (syscall_mode) {
    note_writable_devices();  // (for the supervisor's log: what the command may write under /dev)
    if (pipe2(told, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) fail("pipe2");
    child = fork();
    if (child < 0) fail("fork");
    if (child > 0) {
      close(told[1]);
      close(go[0]);
      int said[2] = {-1, 0}, listener = -1;  // the listener's number, and own_proc's result (what /proc it sees)
      if (read(told[0], said, sizeof said) == (ssize_t)sizeof said) listener = take_descriptor(child, said[0]);
      own_proc_made = said[1];
      close(told[0]);
      const char ok = listener >= 0 ? 'y' : 'n';
      if (write(go[1], &ok, 1) != 1) listener = -1;
      close(go[1]);
      if (listener < 0) {
        int status = 0;
        waitpid(child, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 3;  // the child said why
      }
      char line[1024] = "";  // the command as the log names it: the program and its arguments (a test's filter)
      for (char** word = command; *word && strlen(line) + strlen(*word) + 2 < sizeof line; ++word) {
        if (word != command) strcat(line, " ");
        strcat(line, *word);
      }
      return supervise(child, listener, line);
    }
    close(told[0]);
    close(go[1]);
    supervisor = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail("prctl(PR_SET_PDEATHSIG)");  // the supervisor killed: so is this
  }

  const long abi = syscall(kCreateRuleset, NULL, 0, kVersionFlag);
  if (abi <= 0) {
    if (require) {
      fprintf(stderr, "course-sandbox: Landlock is not available here; refusing to run student code unconfined\n");
      return 3;
    }
    fprintf(stderr, "course-sandbox: Landlock is not available here; student code runs unconfined\n");
  } else {
    if (!node_proc) own_proc_made = own_proc();  // (before the rules: the read rule on /proc is then on the new instance)
    handled = kAbi1All | (abi >= 2 ? kRefer : 0) | (abi >= 3 ? kTruncate : 0) | (abi >= 5 ? kIoctlDev : 0);
    // IOCTL_DEV (ABI 5): ioctl on a device file opened here only where allowed, the GPU driver's
    // (allow_devices); a terminal, a disk or a loop device gets none.
    // ABI 6: no signal to a process outside the sandbox (the supervisor, ctest, another grading),
    // also not through a file's owner (fcntl F_SETOWN, SIGIO), which needs no kill(); and no
    // connection to an abstract local socket made outside it (a daemon's, another grading's).
    struct RulesetAttr attr = {handled, abi >= 4 ? (kBindTcp | kConnectTcp) : 0,
                               abi >= 6 ? (kScopeSignal | kScopeAbstractUnixSocket) : 0};
    const size_t attr_size = abi >= 6 ? sizeof attr : abi >= 4 ? offsetof(struct RulesetAttr, scoped)
                                                               : sizeof attr.handled_access_fs;
    ruleset = (int)syscall(kCreateRuleset, &attr, attr_size, 0);
    if (ruleset < 0) fail("landlock_create_ruleset");
    // /dev as a hidden folder, but for the files allow_devices names: the rest of it is the
    // machine's devices, which a test program running as root (without capabilities) could open
    // for reading, since their owner is its uid: a disk read raw (every hidden file), another
    // grading's loop device detached, a terminal's input read (an adversarial review, 2026-11-28).
    // A link there (/dev/stdout, /dev/fd) leads to /proc, which stays readable.
    if (hidden_count < kMaxPaths) hidden[hidden_count++] = "/dev";
    for (size_t i = 0; i < sizeof kAlwaysHidden / sizeof kAlwaysHidden[0]; ++i)
      if (hidden_count < kMaxPaths) hidden[hidden_count++] = kAlwaysHidden[i];
    allow_reading("/");
    allow_devices();
    // /proc stays read-only with -s: the driver's one write there, a thread's name, is answered by
    // the supervisor (answer_open). Without -s the driver must write it (cudaErrorOperatingSystem
    // otherwise), and /proc/<pid>/mem is writable too.
    if (!syscall_mode) allow("/proc", handled);
    for (int i = 0; i < readable_count; ++i) allow(readable[i], kExecute | kReadFile | kReadDir);
    for (int i = 0; i < writable_count; ++i) allow(writable[i], handled);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
    if (syscall(kRestrictSelf, ruleset, 0) != 0) fail("landlock_restrict_self");
    close(ruleset);
  }
  drop_capabilities();
  if (syscall_mode) {
    // A change of user or group (-u) clears the parent-death signal (the kernel's commit_creds): set
    // again, then the supervisor checked to be alive still (an adversarial review, 2026-11-28: under
    // -u a program outlived a supervisor killed with SIGKILL, as the next grading's test user).
    if (run_as_uid > 0) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail("prctl(PR_SET_PDEATHSIG)");
      if (getppid() != supervisor) return 3;
    }
    char* path = resolve(command[0]);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
    const int listener = install_filter();
    char ok = 'n';
    const int said[2] = {listener, own_proc_made};
    if (write(told[1], said, sizeof said) != (ssize_t)sizeof said || read(go[0], &ok, 1) != 1 ||
        ok != 'y') {
      fprintf(stderr, "course-sandbox: the supervisor could not take the filter's listener\n");
      return 3;
    }
    close(listener);
    close(told[1]);
    close(go[0]);
    leave_nothing_open();
    execv(path, command);
    fprintf(stderr, "course-sandbox: cannot run %s: %s\n", command[0], strerror(errno));
    return 127;
  }
  leave_nothing_open();
  execvp(command[0], command);
  fprintf(stderr, "course-sandbox: cannot run %s: %s\n", command[0], strerror(errno));
  return 127;
}
