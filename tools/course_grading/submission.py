"""A student submission: unpacked, and its starter files put into a clean copy of the course."""
import pathlib
import shutil
import subprocess
import tarfile
import zipfile

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip", ".bundle")


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
            raise ValueError(f"archive member {name!r} points outside the archive")


def unpack(submission, into):
    """Returns the folder holding the submission's files (a folder is used where it is)."""
    path = pathlib.Path(submission)
    if path.is_dir() and not (path / ".git").exists():
        return path
    into.mkdir(parents=True, exist_ok=True)
    if path.is_dir() or path.suffix == ".bundle":
        subprocess.run(["git", "clone", "-q", str(path), str(into / "repo")], check=True, capture_output=True)
        return into / "repo"
    if path.name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path) as archive:
            _safe_members(archive.getnames(), into)
            if any(m.issym() or m.islnk() or m.isdev() for m in archive.getmembers()):
                raise ValueError("the archive holds links or device files")
            archive.extractall(into)
        return into
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            _safe_members(archive.namelist(), into)
            archive.extractall(into)
        return into
    raise ValueError(f"{submission}: not a folder, .tar.gz, .zip or git repository")


def course_root_in(folder):
    """The folder of the submission that holds chapters/ (it may be one level down), or the
    folder itself when the student uploaded loose files (take_starters finds them by name)."""
    if (folder / "chapters").is_dir():
        return folder
    found = [p.parent for p in folder.glob("*/chapters") if p.is_dir()]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise ValueError("the submission has several chapters/ folders")
    return folder


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


def take_starters(course, submission, clean):
    """Copies the submission's starter files over the clean copy's. Returns (taken, missing).
    A submission without chapters/ (files uploaded one by one, as Gradescope allows) gives each
    starter file by its name, wherever it lies, if the name is the course's only file of that name
    and the submission's only file of that name."""
    taken, missing = [], []
    starters = starter_files(course)
    loose = not (submission / "chapters").is_dir()
    names = [p.name for p in starters]
    for relative in starters:
        source = submission / relative
        if loose and names.count(relative.name) == 1:
            candidates = [p for p in submission.rglob(relative.name) if p.is_file() and not p.is_symlink()]
            source = candidates[0] if len(candidates) == 1 else submission / relative
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, clean / relative)
            taken.append(relative)
        else:
            missing.append(relative)
    return taken, missing
