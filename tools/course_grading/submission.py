"""A student submission: unpacked, and its starter files taken as plain bytes.

Nothing of a submission is followed or run outside the sandbox: a git repository is cloned by a
sandboxed git, archives are read member by member (no links, no devices, no paths outside the
archive, a size limit), and a starter file is taken only if every folder on its way from the
submission's root is a real folder and the file a regular file. A symbolic link anywhere on that
way refuses the submission (Refused), whatever it points to.
"""
import os
import pathlib
import shutil
import stat
import subprocess
import tarfile
import zipfile

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip", ".bundle")
STARTER_LIMIT = 1 << 20  # bytes of one starter file
ARCHIVE_LIMIT = 512 << 20  # bytes of an unpacked archive


class Refused(ValueError):
    """A submission that is not graded, and why (a symbolic link on the way to a starter file)."""


def starter_files(course):
    """The files a student may edit, relative to the course root, listed from the course itself."""
    files = []
    for chapter in sorted((course / "chapters").iterdir()):
        if not chapter.is_dir():
            continue
        files += [p.relative_to(course) for p in sorted(chapter.glob("*.cu"))]
        if (chapter / "architectures.cmake").exists():
            files.append((chapter / "architectures.cmake").relative_to(course))
    return files


def graded_chapters(course, points, wanted=()):
    """The chapters to grade: `wanted` (checked against the course), else those that count in
    the points file."""
    present = sorted(p.name for p in (course / "chapters").iterdir() if p.is_dir())
    if wanted:
        unknown = [c for c in wanted if c not in present]
        if unknown:
            raise ValueError(f"no such chapter: {', '.join(unknown)}")
        return list(wanted)
    chapters = points.get("chapters", {})
    return [c for c in present if chapters.get(c, {}).get("counts", False)]


def student_name(path):
    """A submission's name in a class: its file or folder name without the archive suffix."""
    name = pathlib.Path(path).name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _safe_members(names, root):
    """Refuses archive members that would land outside the extraction folder."""
    for name in names:
        target = (root / name).resolve()
        if root.resolve() not in target.parents and target != root.resolve():
            raise Refused(f"archive member {name!r} points outside the archive")


def unpack(submission, into, confine=()):
    """Returns the folder holding the submission's files (a folder is used where it is).
    `confine` is the sandbox command git runs in (it may write only `into`)."""
    path = pathlib.Path(submission)
    if path.is_symlink():
        raise Refused(f"{path.name} is a symbolic link")
    if path.is_dir() and not (path / ".git").exists():
        return path
    into.mkdir(parents=True, exist_ok=True)
    if path.is_dir() or path.suffix == ".bundle":
        # --no-local: objects come through git's own protocol, not as copied files (a repository's
        # symbolic links inside .git are never followed); hooks and config of the submission are
        # not run or read by the clone.
        clone = [*confine, "git", "-c", "protocol.file.allow=always", "-c", "core.symlinks=true", "clone", "-q",
                 "--no-local", str(path.resolve()), str(into / "repo")]
        done = subprocess.run(clone, capture_output=True, text=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0",
                                                                         "GIT_CONFIG_NOSYSTEM": "1"})
        if done.returncode != 0:
            raise ValueError(f"git could not clone the submission: {done.stderr.strip()[-300:]}")
        return into / "repo"
    if path.name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path) as archive:
            members = archive.getmembers()
            _safe_members([m.name for m in members], into)
            if any(m.issym() or m.islnk() or m.isdev() or m.isfifo() for m in members):
                raise Refused("the archive holds links or device files")
            if sum(m.size for m in members) > ARCHIVE_LIMIT:
                raise Refused(f"the archive unpacks to more than {ARCHIVE_LIMIT >> 20} MiB")
            archive.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        return into
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            _safe_members(archive.namelist(), into)
            if sum(i.file_size for i in archive.infolist()) > ARCHIVE_LIMIT:
                raise Refused(f"the archive unpacks to more than {ARCHIVE_LIMIT >> 20} MiB")
            archive.extractall(into)  # a link in a zip becomes a plain file holding its target's name
        return into
    raise ValueError(f"{submission}: not a folder, .tar.gz, .zip or git repository")


def _real_folder(path):
    """Whether `path` is a folder and no symbolic link (Refused if it is a link)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{path} is a symbolic link")
    return stat.S_ISDIR(info.st_mode)


def course_root_in(folder):
    """The folder of the submission that holds chapters/ (it may be one level down), or the
    folder itself when the student uploaded loose files (take_starters finds them by name)."""
    if _real_folder(folder / "chapters"):
        return folder
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_symlink() and entry.is_dir():
                raise Refused(f"{entry.name} is a symbolic link to a folder")
            if entry.is_dir(follow_symlinks=False) and _real_folder(pathlib.Path(entry.path) / "chapters"):
                found.append(pathlib.Path(entry.path))
    if len(found) > 1:
        raise ValueError("the submission has several chapters/ folders")
    return found[0] if found else folder


def read_regular_file(root, relative):
    """The bytes of root/relative, or None if it is not there. Refused when a folder on the way, or
    the file, is a symbolic link, or the file is not a regular file or too large."""
    path = root
    for part in relative.parts[:-1]:
        path = path / part
        if not _real_folder(path):
            return None
    target = root / relative
    try:
        handle = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        if os.path.islink(target):
            raise Refused(f"{relative} is a symbolic link") from None
        raise Refused(f"{relative} cannot be read: {error.strerror}") from None
    with os.fdopen(handle, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{relative} is not a regular file")
        if info.st_size > STARTER_LIMIT:
            raise Refused(f"{relative} is larger than {STARTER_LIMIT >> 10} KiB")
        return file.read(STARTER_LIMIT + 1)


def _loose_files(folder, name):
    """Every file called `name` under `folder`, without following a symbolic link (Refused if a
    link has that name)."""
    found, pending = [], [pathlib.Path(folder)]
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.is_symlink():
                    if entry.name == name or entry.is_dir():
                        raise Refused(f"{pathlib.Path(entry.path).relative_to(folder)} is a symbolic link")
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(pathlib.Path(entry.path))
                elif entry.name == name:
                    found.append(pathlib.Path(entry.path).relative_to(folder))
    return found


def take_starters(course, submission, clean):
    """Copies the submission's starter files, as bytes, over the clean copy's. Returns (taken,
    missing). A submission without chapters/ (files uploaded one by one, as Gradescope allows)
    gives each starter file by its name, wherever it lies, if the name is the course's only file
    of that name and the submission's only file of that name. A file whose content is already
    there is left alone (its build stays valid)."""
    taken, missing = [], []
    starters = starter_files(course)
    loose = not _real_folder(submission / "chapters")
    names = [p.name for p in starters]
    for relative in starters:
        source = relative
        if loose and names.count(relative.name) == 1:
            candidates = _loose_files(submission, relative.name)
            source = candidates[0] if len(candidates) == 1 else relative
        content = read_regular_file(submission, source)
        if content is None:
            missing.append(relative)
            continue
        target = clean / relative
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
        taken.append(relative)
    return taken, missing


PRIVATE = ("solutions", "tools/fixtures", "tools/check-fixtures.py")


def clean_copy(course, into):
    """The committed course, without solutions/ and the maintainers' fixtures, in `into`.
    GoogleTest sources carried in .deps/ (maintainers' GPU machines) come along."""
    if (course / ".git").exists():
        archive = subprocess.run(["git", "-C", str(course), "archive", "--format=tar", "HEAD"], check=True,
                                 capture_output=True).stdout
        into.mkdir(parents=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    else:
        shutil.copytree(course, into, symlinks=True,
                        ignore=shutil.ignore_patterns("build", "build-*", ".deps", "__pycache__"))
    for private in PRIVATE:
        target = into / private
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    if (course / ".deps").is_dir():
        shutil.copytree(course / ".deps", into / ".deps", symlinks=True)
    return into


def restore_starters(pristine, clean):
    """Puts the course's own starter files back in the clean copy (before the next submission of
    a reused copy), leaving alone those already the same."""
    for relative in starter_files(pristine):
        content = (pristine / relative).read_bytes()
        target = clean / relative
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
