// course-sandbox: runs one command of student code confined by Landlock, the Linux security
// module any unprivileged process can apply to itself (kernel 5.13 or newer). The command and
// everything it starts may write only in the folders given with -w (and /dev and /proc, which
// the GPU driver needs), may read everything but the folders given with -h (except the folders
// given with -R or -w inside them), and may open no TCP connection (kernel 6.7 or newer). tools/grade-submission compiles it and puts it in front
// of every test command, so that ctest itself, its reports and the build tree stay out of reach.
//
//   course-sandbox [-w DIR]... [-R DIR]... [-h DIR]... [-f FILE] [-r] -- COMMAND [ARGUMENT]...
//
// -f FILE: more options, one per line ("-w DIR", "-R DIR", "-h DIR" or "-r"), so that a grader can change
// them per submission without rebuilding the test list that names this command. -r: refuse to run (exit status 3) where Landlock is not available; without it the command
// then runs unconfined after a warning. The same rules as tools/course_grading/sandbox.py, in C
// so that starting a test costs a millisecond, not a Python interpreter.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// The kernel's ABI (include/uapi/linux/landlock.h), spelled out so that old headers build it.
enum { kCreateRuleset = 444, kAddRule = 445, kRestrictSelf = 446, kRulePathBeneath = 1, kVersionFlag = 1 };
enum {
  kExecute = 1 << 0, kWriteFile = 1 << 1, kReadFile = 1 << 2, kReadDir = 1 << 3,
  kAbi1All = (1 << 13) - 1, kRefer = 1 << 13, kTruncate = 1 << 14,
  kFileRights = kExecute | kWriteFile | kReadFile | kTruncate,
  kBindTcp = 1 << 0, kConnectTcp = 1 << 1,
};
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
};
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
static int ruleset = -1;
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
  DIR* listing = opendir(folder);
  if (!listing) return;
  struct dirent* entry;
  while ((entry = readdir(listing)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", strcmp(folder, "/") == 0 ? "" : folder, entry->d_name);
    const int state = hidden_state(path);
    if (state == 2) continue;
    struct stat info;
    if (state == 1 && lstat(path, &info) == 0 && S_ISDIR(info.st_mode))
      allow_reading(path);
    else
      allow(path, kExecute | kReadFile | kReadDir);
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
  return 0;
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
      if (strcmp(argv[at], "-r") != 0) ++at;
    } else {
      fprintf(stderr, "usage: course-sandbox [-w DIR]... [-R DIR]... [-h DIR]... [-f FILE] [-r] -- COMMAND [ARG]...\n");
      return 2;
    }
  }
  if (at + 1 >= argc) {
    fprintf(stderr, "course-sandbox: no command\n");
    return 2;
  }
  char** command = argv + at + 1;

  const long abi = syscall(kCreateRuleset, NULL, 0, kVersionFlag);
  if (abi <= 0) {
    if (require) {
      fprintf(stderr, "course-sandbox: Landlock is not available here; refusing to run student code unconfined\n");
      return 3;
    }
    fprintf(stderr, "course-sandbox: Landlock is not available here; student code runs unconfined\n");
  } else {
    handled = kAbi1All | (abi >= 2 ? kRefer : 0) | (abi >= 3 ? kTruncate : 0);
    // IOCTL_DEV (ABI 5) stays unhandled: the GPU driver is driven through ioctl.
    struct RulesetAttr attr = {handled, abi >= 4 ? (kBindTcp | kConnectTcp) : 0};
    ruleset = (int)syscall(kCreateRuleset, &attr, abi >= 4 ? sizeof attr : sizeof attr.handled_access_fs, 0);
    if (ruleset < 0) fail("landlock_create_ruleset");
    allow_reading("/");
    // The CUDA driver writes under /proc (cudaErrorOperatingSystem without it).
    allow("/dev", handled);
    allow("/proc", handled);
    for (int i = 0; i < readable_count; ++i) allow(readable[i], kExecute | kReadFile | kReadDir);
    for (int i = 0; i < writable_count; ++i) allow(writable[i], handled);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
    if (syscall(kRestrictSelf, ruleset, 0) != 0) fail("landlock_restrict_self");
    close(ruleset);
  }
  execvp(command[0], command);
  fprintf(stderr, "course-sandbox: cannot run %s: %s\n", command[0], strerror(errno));
  return 127;
}
