"""Mutants of the reference solutions (tools/mutate.py): one small change at one site of a
starter-named file of solutions/<chapter>/, as a student's honest bug would make it.

The mutator is the course's own and works on tokens of the source as written (nvcc sources in
the course's style: clang-format, spaces around binary operators). Comments, string and
character literals, preprocessor lines (#include, #define, #pragma, ...) and the code that only
the calibration build compiles (#ifdef COURSE_REFERENCE_VARIANTS) are never mutated.

Operators (OPERATORS lists them with one line each):
    narrow       a 64-bit declaration (size_t, std::size_t, long long, int64_t, ptrdiff_t, ...
                 with an initialiser) becomes int; static_cast<size_t>( / (size_t) casts become int
    guard-true   the condition of an if that does not leave (a bounds check) becomes true, as does
                 the parenthesised condition of a ?: (a guarded load)
    guard-drop   the condition of an if that leaves (return, continue, break: an early-return
                 guard) becomes false: the guard is gone, the code after it runs
    guard-part   one comparison of an && chain (in if, while, for, ?:) becomes true, or one
                 comparison of an || chain of a leaving if becomes false
    off-by-one   < and <=, > and >= swapped (comparisons written with spaces); "- 1" and "+ 1"
                 dropped
    clamp        std::min / min / std::max / max / fminf / fmaxf (two arguments) becomes one of its
                 arguments (k = 0: the first, 1: the second)
    literal      an integer literal 0 becomes 1 (not in a launch configuration)
    swap-args    two adjacent arguments of a call that are both plain names are swapped
    no-check     an error check dropped: the condition of an if that tests a CUDA status against
                 cudaSuccess (or throws) becomes false (or true where it tests == cudaSuccess),
                 and a checking wrapper (CUDA_CHECK, check, keep, ...) around a call is unwrapped
    no-free      a release dropped: cudaFree / cudaFreeHost / cudaFreeAsync / cudaFreeArray /
                 cudaEventDestroy / cudaStreamDestroy / cudaGraph*Destroy call becomes cudaSuccess
    stream0      the stream of a launch configuration or of a call argument (a name that says
                 stream) becomes 0 (the legacy default stream); streams[i] becomes streams[0]
    no-sync      a barrier or wait removed: __syncthreads(), __syncwarp(...), __threadfence*(),
                 pipeline consumer_wait(), cuda::pipeline_consumer_wait_prior<..>(..),
                 .arrive_and_wait(), .wait(..), fence_proxy_async(..) become (void)0;
                 cudaStreamWaitEvent / cudaEventRecord / cudaStreamSynchronize /
                 cudaEventSynchronize / cudaDeviceSynchronize become cudaSuccess
    static       a local declaration with an initialiser at the top level of a host function
                 becomes static (an answer kept across calls)
    arith        a binary + becomes -, - becomes +, * becomes / (written with spaces)
    logic        && becomes ||, || becomes &&
    dim-swap     .x and .y of threadIdx / blockIdx / blockDim / gridDim swapped

A mutant's id: <chapter>/<file>:<line>:<operator>:<k>:<hash>, where k counts the operator's
sites (and variants) on that line from the left and hash is a short hash of the original line:
a list of equivalent mutants (tools/mutation/equivalent.txt) stays valid while the line is
unchanged (and is matched without the line number when the line moved).
"""
import hashlib
import pathlib
import random
import re
from dataclasses import dataclass

OPERATORS = {
    "narrow": "64- to 32-bit narrowing (size_t, long long, int64_t declarations and casts become int)",
    "guard-true": "a bounds check's condition (an if that does not leave, a ?: guard) becomes true",
    "guard-drop": "an early-return guard's condition (if ... return/continue/break) becomes false",
    "guard-part": "one comparison of an && chain becomes true (|| chain of a leaving if: false)",
    "off-by-one": "< and <=, > and >= swapped; '- 1' and '+ 1' dropped",
    "clamp": "std::min/std::max/min/max/fminf/fmaxf replaced by one of its arguments",
    "literal": "an integer literal 0 becomes 1",
    "swap-args": "two adjacent plain-name arguments of a call swapped",
    "no-check": "an error check dropped (if on a CUDA status becomes false; CUDA_CHECK/check/keep unwrapped)",
    "no-free": "a release dropped (cudaFree*, cudaEventDestroy, cudaStreamDestroy, cudaGraph*Destroy)",
    "stream0": "a stream argument becomes 0 (the default stream); streams[i] becomes streams[0]",
    "no-sync": "a barrier or wait removed (__syncthreads, __syncwarp, pipeline waits, events, stream waits)",
    "static": "a local declaration of a host function becomes static (kept across calls)",
    "arith": "binary + and - swapped, * becomes /",
    "logic": "&& and || swapped",
    "dim-swap": ".x and .y of threadIdx/blockIdx/blockDim/gridDim swapped",
}

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "static_assert", "catch",
            "defined", "throw", "new", "delete", "__launch_bounds__", "alignas", "noexcept"}
COMMUTATIVE = {"min", "max", "fminf", "fmaxf", "fmin", "fmax", "swap", "exchange"}
CHECK_WRAPPERS = ("CUDA_CHECK", "CHECK_CUDA", "cuda_check", "check", "keep", "CUDA_CHECK_LAUNCH")
FREES = r"cudaFree|cudaFreeHost|cudaFreeAsync|cudaFreeArray|cudaEventDestroy|cudaStreamDestroy|" \
        r"cudaGraphDestroy|cudaGraphExecDestroy"
HOST_WAITS = r"cudaStreamWaitEvent|cudaEventRecord|cudaStreamSynchronize|cudaEventSynchronize|cudaDeviceSynchronize"
COMPARISON = re.compile(r"(?<![<>=!-])(<=|>=|==|!=|<|>)(?![<>=])")
IDENT = re.compile(r"[A-Za-z_]\w*$")
DEAD_MACRO = "COURSE_REFERENCE_VARIANTS"


@dataclass
class Mutant:
    chapter: str
    file: str
    line: int
    operator: str
    k: int
    digest: str
    start: int
    end: int
    replacement: str
    before: str
    after: str

    @property
    def id(self):
        return f"{self.chapter}/{self.file}:{self.line}:{self.operator}:{self.k}:{self.digest}"

    @property
    def loose_id(self):
        """The id without its line number (matches a listed mutant whose line moved)."""
        return f"{self.chapter}/{self.file}:{self.operator}:{self.k}:{self.digest}"

    @property
    def student(self):
        """A submission's name made of safe characters, unique per id."""
        stem = pathlib.PurePath(self.file).stem
        name = f"m-{self.chapter}-{stem}-L{self.line}-{self.operator}-{self.k}-{self.digest}"
        return re.sub(r"[^A-Za-z0-9._-]", "_", name)

    def apply(self, text):
        return text[:self.start] + self.replacement + text[self.end:]

    def as_dict(self):
        return {"id": self.id, "chapter": self.chapter, "file": self.file, "line": self.line,
                "operator": self.operator, "k": self.k, "before": self.before, "after": self.after}


def line_digest(line):
    return hashlib.sha1(line.strip().encode()).hexdigest()[:6]


# ------------------------------------------------------------------ masking

def mask(text):
    """The text with comments, string and character literals, preprocessor lines and the code
    of #ifdef COURSE_REFERENCE_VARIANTS blocks replaced by spaces (newlines kept): offsets in the
    mask are offsets in the text, and nothing masked is ever matched."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def blank(a, b):
        for j in range(a, b):
            if out[j] != "\n":
                out[j] = " "

    while i < n:
        c = text[i]
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while True:  # the directive with its continuation lines (and comments on it)
                end = text.find("\n", j)
                end = n if end < 0 else end
                if end > 0 and text[end - 1] == "\\" and end < n:
                    j = end + 1
                    continue
                break
            block = text[i:end]
            if "/*" in block and "*/" not in block[block.index("/*"):]:
                close = text.find("*/", end)
                end = n if close < 0 else close + 2
            blank(i, end)
            i = end
            line_start = False
            continue
        line_start = False
        if c == "\n":
            line_start = True
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            if c == '"' and i > 0 and text[i - 1] == "R":  # a raw string R"d(...)d"
                open_paren = text.find("(", i)
                delimiter = text[i + 1:open_paren]
                end = text.find(")" + delimiter + '"', open_paren)
                end = n if end < 0 else end + len(delimiter) + 2
            else:
                j = i + 1
                while j < n and text[j] != c and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                end = min(n, j + 1)
            blank(i, end)
            i = end
        else:
            i += 1
    masked = "".join(out)
    return _mask_dead(text, masked)


def _mask_dead(text, masked):
    """Blanks the lines that only the calibration build compiles (#ifdef COURSE_REFERENCE_VARIANTS
    and #if defined(...) blocks, the #else of #ifndef ...)."""
    lines = text.split("\n")
    out = masked.split("\n")
    stack = []  # per open #if: whether this branch is dead
    for index, line in enumerate(lines):
        directive = re.match(r"\s*#\s*(\w+)(.*)", line)
        if directive:
            word, rest = directive.group(1), directive.group(2)
            if word in ("if", "ifdef", "ifndef"):
                about = DEAD_MACRO in rest and "&&" not in rest and "||" not in rest
                negated = word == "ifndef" or re.search(r"!\s*defined", rest) is not None
                stack.append("dead" if about and not negated else "live-else-dead" if about else "other")
            elif word in ("else", "elif") and stack:
                stack[-1] = {"dead": "live", "live-else-dead": "dead"}.get(stack[-1], stack[-1])
            elif word == "endif" and stack:
                stack.pop()
            continue
        if "dead" in stack:
            out[index] = " " * len(out[index])
    return "\n".join(out)


def matching(masked, open_index):
    """The index of the bracket that closes the one at open_index (-1 if none)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener = masked[open_index]
    closer = pairs[opener]
    depth = 0
    for j in range(open_index, len(masked)):
        if masked[j] == opener:
            depth += 1
        elif masked[j] == closer:
            depth -= 1
            if depth == 0:
                return j
    return -1


def split_top(masked, start, end, separator=","):
    """Spans (a, b) of the parts of masked[start:end] separated by `separator` at bracket depth 0."""
    parts, depth, a, j = [], 0, start, start
    width = len(separator)
    while j < end:
        c = masked[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and masked.startswith(separator, j):
            parts.append((a, j))
            a = j + width
            j += width
            continue
        j += 1
    parts.append((a, end))
    return parts


def trimmed(masked, a, b):
    while a < b and masked[a].isspace():
        a += 1
    while b > a and masked[b - 1].isspace():
        b -= 1
    return a, b


# ------------------------------------------------------------------ sites

def _calls(masked):
    """(name start, name, open paren, close paren) of every call or macro use (not keywords, not
    declarations' parameter lists: their arguments are not plain expressions anyway)."""
    for found in re.finditer(r"([A-Za-z_][\w:]*)\s*(?:<[^;{}()]*?>\s*)?\(", masked):
        name = found.group(1)
        if name.split("::")[-1] in KEYWORDS:
            continue
        open_index = found.end() - 1
        close = matching(masked, open_index)
        if close > 0:
            yield found.start(), name, open_index, close


def _conditions(masked):
    """(keyword, open paren, close paren) of every if / while / for header."""
    for found in re.finditer(r"\b(if|while|for)\s*\(", masked):
        open_index = found.end() - 1
        close = matching(masked, open_index)
        if close > 0:
            yield found.group(1), open_index, close


def _body_leaves(masked, close):
    """Whether the statement (or block) after an if header returns, throws, continues or breaks."""
    j = close + 1
    while j < len(masked) and masked[j].isspace():
        j += 1
    if j < len(masked) and masked[j] == "{":
        end = matching(masked, j)
        body = masked[j:end]
    else:
        end = masked.find(";", j)
        body = masked[j:end]
    return re.search(r"\b(return|throw|continue|break)\b", body) is not None


def _ternary_conditions(masked):
    """(open, close) of a parenthesised condition directly followed by ?."""
    for found in re.finditer(r"\)\s*\?", masked):
        close = found.start()
        depth, j = 0, close
        while j >= 0:
            if masked[j] == ")":
                depth += 1
            elif masked[j] == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        if j >= 0 and not re.search(r"[\w\]]\s*$", masked[:j]):  # not a call's argument list
            yield j, close


def _function_kinds(masked):
    """(open brace, close brace, kind) of every function body, kind 'host' or 'device' (lambdas,
    blocks, namespaces and classes are not listed)."""
    bodies, stack, boundary, parens = [], [], 0, 0
    for j, c in enumerate(masked):
        if c == "(":
            parens += 1
        elif c == ")":
            parens = max(0, parens - 1)
        elif c == "{":
            header = masked[boundary:j]
            if re.search(r"\b(if|for|while|switch|else|do|namespace|struct|class|union|enum|try)\b", header) \
                    or ")" not in header or re.search(r"=\s*$", header):
                kind = "other"
            elif re.search(r"\]\s*(\([^)]*\))?\s*(mutable\s*)?(->[^{]*)?$", header.strip()) or "](" in header:
                kind = "lambda"
            elif re.search(r"__global__|__device__", header) and "__host__" not in header:
                kind = "device"
            else:
                kind = "host"
            stack.append((j, kind))
            boundary = j + 1
        elif c == "}":
            if stack:
                open_index, kind = stack.pop()
                if kind in ("host", "device"):
                    bodies.append((open_index, j, kind))
            boundary = j + 1
        elif c == ";" and parens == 0:  # (not the ; of a for header)
            boundary = j + 1
    return bodies


def sites(text):
    """Every (start, end, replacement, operator) of the text, in no particular order."""
    masked = mask(text)
    found = []

    def add(a, b, replacement, operator):
        if text[a:b] != replacement:
            found.append((a, b, replacement, operator))

    # narrow
    for m in re.finditer(r"\b(?:(?:std::)?(?:size_t|u?int64_t|ptrdiff_t)|unsigned\s+long\s+long|long\s+long)\b"
                         r"(?=\s+[A-Za-z_]\w*\s*=[^=])", masked):
        add(m.start(), m.end(), "unsigned" if m.group(0).startswith("unsigned") else "int", "narrow")
    for m in re.finditer(r"static_cast<\s*((?:std::)?(?:size_t|u?int64_t|ptrdiff_t)|(?:unsigned\s+)?long\s+long)\s*>",
                         masked):
        add(m.start(1), m.end(1), "unsigned" if "unsigned" in m.group(1) else "int", "narrow")
    for m in re.finditer(r"\(\s*((?:std::)?size_t|long\s+long)\s*\)(?=\s*[\w(])", masked):
        add(m.start(1), m.end(1), "int", "narrow")

    # guards and checks on if / while / for headers
    for keyword, open_index, close in _conditions(masked):
        condition = masked[open_index + 1:close]
        if keyword == "if":
            leaves = _body_leaves(masked, close)
            a, b = trimmed(masked, open_index + 1, close)
            if "cudaSuccess" in condition or re.search(r"\bthrow\b", masked[close:masked.find(";", close)]):
                add(a, b, "true" if "== cudaSuccess" in condition and not leaves else "false", "no-check")
            elif leaves:
                add(a, b, "false", "guard-drop")
            elif COMPARISON.search(condition) or "&&" in condition:
                add(a, b, "true", "guard-true")
            if leaves:
                parts = split_top(masked, open_index + 1, close, "||")
                if len(parts) > 1:
                    for p, q in parts:
                        p, q = trimmed(masked, p, q)
                        add(p, q, "false", "guard-part")
        if keyword == "for":
            pieces = split_top(masked, open_index + 1, close, ";")
            if len(pieces) != 3:
                continue
            cond_start, cond_end = pieces[1]
        else:
            cond_start, cond_end = open_index + 1, close
        parts = split_top(masked, cond_start, cond_end, "&&")
        if len(parts) > 1:
            for p, q in parts:
                p, q = trimmed(masked, p, q)
                if COMPARISON.search(masked[p:q]):
                    add(p, q, "true", "guard-part")
    for open_index, close in _ternary_conditions(masked):
        a, b = trimmed(masked, open_index + 1, close)
        condition = masked[a:b]
        if COMPARISON.search(condition):
            add(a, b, "true", "guard-true")
            parts = split_top(masked, a, b, "&&")
            if len(parts) > 1:
                for p, q in parts:
                    p, q = trimmed(masked, p, q)
                    add(p, q, "true", "guard-part")

    # off-by-one
    swaps = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
    for m in re.finditer(r"(?<=\s)(<=|>=|<|>)(?=\s)", masked):
        add(m.start(), m.end(), swaps[m.group(1)], "off-by-one")
    for m in re.finditer(r"\s[+-]\s+1(?![\w.'])", masked):
        add(m.start(), m.end(), "", "off-by-one")

    # calls: clamps, swapped arguments, checks, frees, syncs, streams
    launches = [(m.start(), masked.find(">>>", m.end())) for m in re.finditer(r"<<<", masked)]
    for name_start, name, open_index, close in _calls(masked):
        args = [] if not masked[open_index + 1:close].strip() else \
            [trimmed(masked, a, b) for a, b in split_top(masked, open_index + 1, close)]
        short = name.split("::")[-1]
        if short in ("min", "max", "fminf", "fmaxf", "fmin", "fmax") and len(args) == 2:
            for a, b in args:
                add(name_start, close + 1, text[a:b], "clamp")
        if short in CHECK_WRAPPERS and args:
            inner = args[0]
            if re.match(r"[A-Za-z_][\w:]*\s*\(", masked[inner[0]:inner[1]]):
                add(name_start, close + 1, text[inner[0]:inner[1]], "no-check")
        if re.fullmatch(FREES, short):
            add(name_start, close + 1, "cudaSuccess", "no-free")
        if re.fullmatch(HOST_WAITS, short):
            add(name_start, close + 1, "cudaSuccess", "no-sync")
        if short in ("__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "__threadfence_system",
                     "pipeline_consumer_wait_prior", "fence_proxy_async"):
            add(name_start, close + 1, "(void)0", "no-sync")
        if short not in COMMUTATIVE and not short.endswith("_cast"):
            for (a1, b1), (a2, b2) in zip(args, args[1:]):
                first, second = masked[a1:b1], masked[a2:b2]
                # (not a stream or a CUDA constant: swapped with anything else it does not compile)
                if IDENT.match(first) and IDENT.match(second) and first != second and \
                        not {first, second} & {"nullptr", "true", "false", "this"} and \
                        not any("stream" in w.lower() or w.startswith("cuda") for w in (first, second)):
                    add(a1, b2, text[a2:b2] + text[b1:a2] + text[a1:b1], "swap-args")
        for a, b in args:
            _stream_site(text, masked, a, b, add)
    for open_index, close in launches:
        if close < 0:
            continue
        for a, b in split_top(masked, open_index + 3, close):
            a, b = trimmed(masked, a, b)
            _stream_site(text, masked, a, b, add)
    for m in re.finditer(r"(\.|->)\s*(consumer_wait|arrive_and_wait|wait)\s*\(", masked):
        close = matching(masked, m.end() - 1)
        start = m.start()
        while start > 0 and (masked[start - 1].isalnum() or masked[start - 1] in "_.[]"):
            start -= 1
        if close > 0:
            add(start, close + 1, "(void)0", "no-sync")

    for m in re.finditer(r"\b\w*streams\w*\s*\[", masked, re.IGNORECASE):
        close = matching(masked, m.end() - 1)
        if close > 0 and masked[m.end():close].strip() != "0":
            add(m.end(), close, "0", "stream0")

    # literal 0 -> 1 (not in launch configurations)
    for m in re.finditer(r"(?<![\w.'])0(?![\w.'])", masked):
        if any(a < m.start() < b for a, b in launches):
            continue
        add(m.start(), m.end(), "1", "literal")

    # arithmetic and logic
    for m in re.finditer(r"(?<=[\w)\]] )([+\-*])(?= [\w(])", masked):
        if "std::string" in masked[masked.rfind("\n", 0, m.start()) + 1:masked.find("\n", m.start())]:
            continue  # a message put together: - does not compile
        add(m.start(), m.end(), {"+": "-", "-": "+", "*": "/"}[m.group(1)], "arith")
    for m in re.finditer(r"(?<= )(&&|\|\|)(?= )", masked):
        add(m.start(), m.end(), "||" if m.group(1) == "&&" else "&&", "logic")
    if re.search(r"\b(threadIdx|blockIdx|blockDim|gridDim)\.y\b", masked):
        for m in re.finditer(r"\b(?:threadIdx|blockIdx|blockDim|gridDim)\.([xy])\b", masked):
            add(m.start(1), m.end(1), "y" if m.group(1) == "x" else "x", "dim-swap")

    # static: a declaration with an initialiser at the top level of a host function
    for open_index, close, kind in _function_kinds(masked):
        if kind != "host":
            continue
        depth, boundary = 0, open_index + 1
        for j in range(open_index + 1, close):
            c = masked[j]
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
                if depth == 0 and c == "}":
                    boundary = j + 1
            elif c == ";" and depth == 0:
                statement = masked[boundary:j]
                declared = re.match(r"\s*((?:const\s+)?(?:[A-Za-z_][\w:]*)(?:<[^;=]*>)?[\s*&]+[A-Za-z_]\w*\s*=[^=])",
                                    statement)
                if declared and not re.match(r"\s*(return|static|constexpr|using|typedef|throw|delete|goto|else)\b",
                                             statement):
                    a = boundary + len(statement) - len(statement.lstrip())
                    add(a, a, "static ", "static")
                boundary = j + 1
    return found


def _stream_site(text, masked, a, b, add):
    """A call's or launch's argument that names one stream (stream, p.stream, copy_stream_)."""
    arg = masked[a:b]
    if re.fullmatch(r"(?:[A-Za-z_]\w*(?:\.|->))*\w*stream_?", arg, re.IGNORECASE) and \
            not re.fullmatch(r"cuda\w+", arg):
        add(a, b, "0", "stream0")


def mutants_of(text, chapter, file):
    """The mutants of one file, in the order of their lines, one per distinct mutated text."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(offset):
        lo, hi = 0, len(lines) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    found = sorted(set(sites(text)), key=lambda s: (line_of(s[0]), s[3], s[0], s[1], s[2]))
    result, seen, counters = [], set(), {}
    for a, b, replacement, operator in found:
        first, last = line_of(a), line_of(max(a, b - 1))
        key = (first, operator)
        k = counters.get(key, 0)
        counters[key] = k + 1
        mutated = text[:a] + replacement + text[b:]
        if mutated in seen:
            continue
        seen.add(mutated)
        before = "\n".join(lines[first:last + 1])
        after = mutated[starts[first]:starts[last + 1] - 1 + len(mutated) - len(text)]
        result.append(Mutant(chapter, file, first + 1, operator, k, line_digest(lines[first]), a, b, replacement,
                             before, after))
    return result


# ------------------------------------------------------------------ the course

def mutated_files(course):
    """[(chapter, file name)] of the reference files that are starter files."""
    found = []
    for chapter in sorted(p for p in (course / "chapters").iterdir() if p.is_dir()):
        for starter in sorted(chapter.glob("*.cu")):
            if (course / "solutions" / chapter.name / starter.name).is_file():
                found.append((chapter.name, starter.name))
    return found


def course_mutants(course, chapters=None):
    """Every mutant of the course's references (of `chapters`, all when None)."""
    result = []
    for chapter, name in mutated_files(course):
        if chapters and chapter not in chapters:
            continue
        text = (course / "solutions" / chapter / name).read_text()
        result += mutants_of(text, chapter, name)
    return result


def read_equivalent(path):
    """{id: reason} of a list of equivalent mutants: lines `id  reason` (# comments, blank lines)."""
    listed = {}
    path = pathlib.Path(path)
    if not path.exists():
        return listed
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        mutant_id, _, reason = line.partition(" ")
        listed[mutant_id] = reason.strip()
    return listed


def loose(mutant_id):
    """An id without its line number."""
    parts = mutant_id.split(":")
    return ":".join([parts[0], *parts[2:]]) if len(parts) == 5 else mutant_id


def equivalent_reason(mutant_id, listed):
    """The listed reason of an equivalent mutant, or None: by id, else by id without the line
    number (the line moved) when exactly one listed id matches that way."""
    if mutant_id in listed:
        return listed[mutant_id]
    matches = [reason for listed_id, reason in listed.items() if loose(listed_id) == loose(mutant_id)]
    return matches[0] if len(matches) == 1 else None


def sample(mutants, per_chapter, seed, excluded=()):
    """Up to `per_chapter` mutants of each chapter, stratified by operator (each operator in
    turn, in an order drawn for the chapter, takes its next mutant from its own shuffled list),
    deterministic for a seed; mutants whose id is in `excluded` are not drawn."""
    by_chapter = {}
    for m in mutants:
        if m.id in excluded:
            continue
        by_chapter.setdefault(m.chapter, {}).setdefault(m.operator, []).append(m)
    chosen = []
    for chapter in sorted(by_chapter):
        groups = by_chapter[chapter]
        operators = sorted(groups)
        random.Random(f"{seed}:{chapter}").shuffle(operators)
        queues = {}
        for operator in operators:
            members = sorted(groups[operator], key=lambda m: m.id)
            random.Random(f"{seed}:{chapter}:{operator}").shuffle(members)
            queues[operator] = members
        taken = []
        while len(taken) < per_chapter and any(queues.values()):
            for operator in operators:
                if queues[operator] and len(taken) < per_chapter:
                    taken.append(queues[operator].pop(0))
        chosen += sorted(taken, key=lambda m: (m.file, m.line, m.operator, m.k))
    return chosen
