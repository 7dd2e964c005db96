#!/usr/bin/env python3
"""The code policy of a submission, checked on the object code its starter files compiled to,
before any of it runs. Three rules, each a ctest test of every chapter
(<role>.<chapter>.CodePolicy.<rule>):

  CallsOnlyWhatTheCourseAllows        every symbol the code references (weak ones too) is on the
                                      list of grading/code-policy.txt, and none is denied there;
                                      some only where nvcc's own code uses them
  DefinesOnlyTheContractGlobally      global symbols: the contract's functions and what nvcc
                                      makes for kernels; inline functions and template instances
                                      (weak) unless they replace a library's or the judge's; never
                                      a function of the CUDA runtime, a library or the tests
  RunsNothingOutsideTheContractCalls  nothing runs when the program starts or ends (static
                                      constructors and destructors, .init_array entries other than
                                      nvcc's registration, indirect-function resolvers), and the
                                      host code holds no system-call instruction

Start-up code is judged by all it can reach: every entry of .preinit_array, .init_array, .ctors,
.fini_array and .dtors (only .init_array may hold any: nvcc's registration, policy `initialiser`,
and start-up code that uses no more than the C++ library's own, `initialiser-may-use`), every
indirect function (STT_GNU_IFUNC, IRELATIVE), and the relocations of the whole section of each
start-up function and, transitively, of every section those reach: a call within one section
needs no relocation, so a helper beside a constructor (section ".text.startup") is read too.
(The test programs are linked with full RELRO, tools/check-relro.py: the GOT that the judge's
library calls go through is read-only before main.)

    policy.py --rule RULE --library LIB.a [--given MEMBER.o ...] [--status-dir DIR]
              [--judge FILE ...] [--shared-library FILE ...] [--policy grading/code-policy.txt]

--given: archive members that are the chapter's given code (course code, not checked).
--judge: the course's own objects and archives linked into the same program (the tests, the
support library, GoogleTest); with the libraries they say which names the contract's functions
are (what the tests and the given code call and nobody else defines) and which names a submission
may not define. Prints a GoogleTest-like report; exit status 1 when the rule is broken.
Reads every file as plain bytes (tools/course_grading/elf.py): nothing of the submission runs.
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from course_grading import elf as E  # noqa: E402

RULES = {
    "imports": "CallsOnlyWhatTheCourseAllows",
    "definitions": "DefinesOnlyTheContractGlobally",
    "startup": "RunsNothingOutsideTheContractCalls",
}
DEFAULT_POLICY = pathlib.Path(__file__).resolve().parent.parent.parent / "grading" / "code-policy.txt"

# System-call instructions. x86-64: syscall, sysenter, int 0x80 (looked for at every byte
# offset, so that one hidden inside another instruction is found too; none occurs in the
# course's own code). AArch64: svc, on instruction boundaries.
_X86_SYSCALLS = {b"\x0f\x05": "syscall", b"\x0f\x34": "sysenter", b"\xcd\x80": "int 0x80"}


@dataclass
class Rule:
    kind: str
    patterns: list
    text: str
    line: int


class Policy:
    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.rules = []
        arity = {"deny": 1, "allow": 1, "only-from": 2, "initialiser": 1, "initialiser-may-use": 1}
        for number, raw in enumerate(self.path.read_text().splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            head, _, text = line.partition(" -- ")
            fields = head.split()
            if not fields or fields[0] not in arity or len(fields) != 1 + arity[fields[0]]:
                raise ValueError(f"{self.path}:{number}: not a rule: {raw}")
            try:
                patterns = [re.compile(f) for f in fields[1:]]
            except re.error as error:
                raise ValueError(f"{self.path}:{number}: {error}") from None
            self.rules.append(Rule(fields[0], patterns, text.strip(), number))

    def of(self, kind):
        return [r for r in self.rules if r.kind == kind]

    def matches(self, kind, name):
        return next((r for r in self.of(kind) if r.patterns[0].fullmatch(name)), None)

    def mentions(self, name):
        """Whether any import rule names `name` (then it is not a contract function)."""
        return any(r.patterns[0].fullmatch(name) for r in self.rules if r.kind in ("deny", "allow", "only-from"))


def demangle(names):
    """{mangled: readable} with c++filt where it exists (our own names only, never run on input)."""
    names = sorted(set(names))
    tool = shutil.which("c++filt")
    if not names or not tool:
        return {n: n for n in names}
    try:
        out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, timeout=30).stdout
        readable = out.splitlines()
        if len(readable) == len(names):
            return dict(zip(names, readable))
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {n: n for n in names}


def source_name(member):
    return member[:-2] if member.endswith(".o") else member


# ---------------------------------------------------------------- the three rules

def check_imports(objects, library_defined, policy):
    """[(object, symbol, message)] for every reference the policy does not allow."""
    found = []
    for obj in objects:
        for name in sorted(E.undefined(obj)):
            if name in library_defined:
                continue  # defined by another file of the same chapter
            restricted = [r for r in policy.of("only-from") if r.patterns[0].fullmatch(name)]
            if restricted:  # before the deny lines: e.g. atexit, which only nvcc's code may call
                stand_ins = _device_stand_ins(obj)
                for where in _referencing_functions(obj, name):
                    if where is None or not any(r.patterns[1].pattern == STAND_IN and where in stand_ins
                                                or r.patterns[1].fullmatch(where) for r in restricted):
                        place = f"{{{where}}}" if where else "data (a pointer to it)"
                        denied = policy.matches("deny", name)
                        why = f"{denied.text}; " if denied else ""
                        found.append((obj, name, f"{{{name}}} is used by {place}: {why}only {restricted[0].text}"))
                        break
                continue
            denied = policy.matches("deny", name)
            if denied:
                found.append((obj, name, f"{{{name}}}: {denied.text}"))
                continue
            if not policy.matches("allow", name):
                found.append((obj, name, f"{{{name}}} is not on the course's list of what a submission may call "
                                         f"({policy.path.name}): another library, the operating system or the "
                                         f"judge's own code"))
    return found


STAND_IN = "@device-stand-in"


def _device_stand_ins(obj):
    """Host functions nvcc writes in place of __device__ functions: a body that only calls
    exit (int volatile ___ = 1; ::exit(___);), or, folded by the compiler, another such body."""
    candidates = {}
    for symbol in obj.symbols:
        if symbol.defined and symbol.type == E.STT_FUNC and 0 < symbol.size <= 64:
            section = obj.section(symbol.shndx)
            if section is not None and section.executable:
                targets = {r.symbol.name for r in obj.relocations.get(symbol.shndx, [])
                           if symbol.value <= r.offset < symbol.value + symbol.size}
                candidates[symbol.name] = targets
    stand_ins = {n for n, targets in candidates.items() if targets == {"exit"}}
    grew = True
    while grew:
        grew = False
        for name, targets in candidates.items():
            if name not in stand_ins and targets and targets <= stand_ins | {"exit"}:
                stand_ins.add(name)
                grew = True
    return stand_ins


def _referencing_functions(obj, name):
    """The function (or None, outside code) of every relocation that refers to `name`."""
    places = []
    for target, relocations in obj.relocations.items():
        section = obj.section(target)
        for r in relocations:
            if r.symbol.name != name or r.symbol.defined:
                continue
            if section is None or not section.executable:
                if section is not None and section.name.startswith((".debug", ".eh_frame", ".note", ".comment")):
                    continue
                places.append(None)
            else:
                function = obj.function_at(target, r.offset)
                places.append(function.name if function else None)
    return places


def _kernel_names(obj):
    """Global names nvcc makes for a kernel K (not in a template): the host function K, and its
    stub __device_stub_K (mangled _Z<n>__device_stub_K<parameters>)."""
    defined = {s.name for s in obj.symbols if s.defined and s.name}
    kernels, stubs = set(), set()
    for name in defined:
        match = re.match(r"_Z(\d+)__device_stub_", name)
        if not match:
            continue
        identifier = name[2 + len(match.group(1)):2 + len(match.group(1)) + int(match.group(1))]
        kernel = identifier[len("__device_stub_"):]
        if kernel in defined:
            kernels.add(kernel)
            stubs.add(name)
    return kernels | stubs


def check_definitions(objects, policy, contract, judge_defined, judge_undefined, exports):
    found = []
    for obj in objects:
        kernel_names = _kernel_names(obj) | _device_stand_ins(obj)
        for symbol in obj.symbols:
            if not symbol.defined or symbol.local or not symbol.name or symbol.type in (E.STT_SECTION, E.STT_FILE):
                continue
            name = symbol.name
            if name in contract or any(v in contract for v in _structor_variants(name)):
                continue
            inline_of_the_library = (symbol.weak or symbol.bind == E.STB_GNU_UNIQUE) and _CXX_LIBRARY.match(name)
            if name in exports and not inline_of_the_library:
                found.append((obj, name, f"defines {{{name}}}, which {exports[name]} defines: a submission may not "
                                         f"replace a function of the CUDA runtime or of a library"))
            elif policy.matches("deny", name):
                found.append((obj, name, f"defines {{{name}}}: {policy.matches('deny', name).text}"))
            elif symbol.weak or symbol.bind == E.STB_GNU_UNIQUE:
                # Inline functions and template instances. The judge's own copies are linked first
                # and win; only a name the judge expects from a library may not be given here.
                if name in judge_undefined and name not in judge_defined:
                    found.append((obj, name, f"defines {{{name}}}, which the course's tests call: a submission may "
                                             f"not replace the judge's code"))
            elif name in judge_defined or name in judge_undefined:
                found.append((obj, name, f"defines {{{name}}}, which the course's tests define or call: a "
                                         f"submission may not replace the judge's code"))
            elif name in kernel_names or "_GLOBAL__N_" in name:
                continue  # a kernel, or a name in the file's own anonymous namespace (nvcc makes those global)
            else:
                found.append((obj, name, f"defines {{{name}}} as a global symbol: only the contract's functions "
                                         f"may be global. Make it `static`, or put it in an anonymous namespace"))
    return found


# The C++ library's names: a weak definition of one is an inline function or template instance
# of its headers (std::endl instantiates std::ctype<char>::do_widen, which libstdc++ exports
# too). The judge's own copies are linked first; a strong definition is still a replacement.
_CXX_LIBRARY = re.compile(r"_Z(T[ISVT])?N?K?(St|Sa|Sb|Ss|Si|So|Sd|9__gnu_cxx)")


def _structor_variants(name):
    """The other names of a constructor or destructor (complete, base and allocating objects:
    C1/C2/C3, D0/D1/D2), one of which the tests may call."""
    variants = set()
    for match in re.finditer(r"(?<=[0-9A-Za-z_])(C[123]|D[012])(?=E|I)", name):
        for other in (("C1", "C2", "C3") if match.group(1)[0] == "C" else ("D0", "D1", "D2")):
            variants.add(name[:match.start()] + other + name[match.end():])
    return variants - {name}


# The arrays of functions that run before main or after it: (name, ELF type, when, how code gets
# there besides a function pointer put in it by hand). Only .init_array holds entries of the
# course's own (nvcc's registration, the C++ library's start-up code), judged by what they can reach.
_STARTUP_ARRAYS = [(".init_array", E.SHT_INIT_ARRAY, "starts", "a global object with a constructor, "
                                                              "__attribute__((constructor)), or "),
                   (".preinit_array", E.SHT_PREINIT_ARRAY, "starts, before any constructor", ""),
                   (".ctors", None, "starts", ""), (".dtors", None, "ends", ""),
                   (".fini_array", E.SHT_FINI_ARRAY, "ends", "__attribute__((destructor)), or ")]
_IRELATIVE = {E.EM_X86_64: 37, E.EM_AARCH64: 1032}


def check_startup(objects, policy):
    """What runs before main or after it: every entry of the start-up and exit arrays, every
    indirect function's resolver, and all the code those can reach (see _reached_uses)."""
    found = []
    for obj in objects:
        for section in obj.sections:
            name = section.name
            array = next((a for a in _STARTUP_ARRAYS if section.type == a[1] or name.startswith(a[0])), None)
            if array is not None and array[0] == ".init_array":
                found += [(obj, name, message) for message in _startup_entries(obj, section, policy, array[3])]
            elif array is not None:
                entries = ", ".join(_entry_names(obj, section)) or "code"
                found.append((obj, name, f"has a {name} section: {entries} runs when the program {array[2]} "
                                         f"({array[3]}a function pointer put in {name})"))
            elif name in (".init", ".fini"):
                found.append((obj, name, f"has a {name} section: code of its own that runs when the program "
                                         f"starts or ends"))
            if section.executable:
                found += [(obj, name, message) for message in _system_calls(obj, section)]
        for symbol in obj.symbols:
            if symbol.defined and symbol.type == E.STT_GNU_IFUNC:
                resolver = next((s for s in obj.functions_in(symbol.shndx)
                                 if s.value == symbol.value and s.type == E.STT_FUNC), None)
                by = f" {{{resolver.name}}}" if resolver else ""
                found.append((obj, symbol.name, f"defines {{{symbol.name}}} as an indirect function "
                                                f"(__attribute__((ifunc))): its resolver{by} runs when the "
                                                f"program starts"))
        if any(r.type == _IRELATIVE.get(obj.machine) for rs in obj.relocations.values() for r in rs):
            found.append((obj, "IRELATIVE", "has an IRELATIVE relocation: an indirect function's resolver "
                                            "runs when the program starts"))
    return found


def _entry_target(obj, relocation):
    """(function, offset in its section) an array entry points at; function None if not one's start."""
    symbol = relocation.symbol
    offset = relocation.addend + (0 if symbol.type == E.STT_SECTION else symbol.value)
    function = obj.function_at(symbol.shndx, offset) if symbol.defined else None
    return (function if function is not None and function.value == offset else None), offset


def _entry_names(obj, section):
    names = []
    for r in obj.relocations.get(section.index, []):
        function, _ = _entry_target(obj, r)
        names.append(f"{{{function.name if function else r.symbol.name}}}")
    return names


def _startup_entries(obj, section, policy, how):
    relocations = obj.relocations.get(section.index, [])
    if len(relocations) < section.size // 8:
        yield f"has {section.size // 8} start-up entries in {section.name}, some with a fixed address"
    for r in relocations:
        function, offset = _entry_target(obj, r)
        if function is None:
            target = obj.section(r.symbol.shndx) if r.symbol.defined else None
            yield f"runs code at {target.name if target else r.symbol.name}+{offset:#x} when the program starts"
            continue
        if policy.matches("initialiser", function.name):
            continue
        problem = _reached_uses(obj, function, policy)
        if not problem and obj.machine == E.EM_X86_64:
            odd = _startup_code_beyond_the_library(obj, function)
            if odd:
                what = "the constructors of its global objects" if function.name.startswith("_GLOBAL__sub_I_") \
                    else f"{{{function.name}}} (an entry of {section.name})"
                yield (f"runs {what} when the program starts; that code does more than set up the C++ "
                       f"library's <iostream> object (std::ios_base::Init): {odd} ({how}a function pointer "
                       f"put in {section.name}). Code of a submission runs only inside the contract's calls")
                continue
        if problem:
            what = "the constructors of its global objects" if function.name.startswith("_GLOBAL__sub_I_") \
                else f"{{{function.name}}} (an entry of {section.name})"
            yield (f"runs {what} when the program starts; that code, or code it can reach, uses {problem} "
                   f"({how}a function pointer put in {section.name}). Code of a submission runs only inside "
                   f"the contract's calls")


def _reached_uses(obj, function, policy):
    """What a start-up function, the rest of its section and every section their relocations reach
    (transitively) refer to besides what the C++ library's own start-up code may use (policy
    `initialiser-may-use`) and zero-initialised data of the file: named symbols first, the
    function's own first of all, then data (", "-joined, at most three), or None if nothing. A
    whole section is read, not one function's range: a call within a section needs no relocation.
    nvcc's registration (policy `initialiser`) is left out: the imports rule says what it may call."""
    trusted = [(f.shndx, f.value, f.value + f.size) for f in obj.symbols
               if f.defined and f.type == E.STT_FUNC and policy.matches("initialiser", f.name)]
    queue, reached, named, data = [function.shndx], [function.shndx], [], []
    while queue:
        index = queue.pop(0)
        own = range(function.value, function.value + function.size) if index == function.shndx else range(0)
        for r in sorted(obj.relocations.get(index, []), key=lambda r: r.offset not in own):
            if any(shndx == index and low <= r.offset < high for shndx, low, high in trusted):
                continue
            symbol = r.symbol
            target = obj.section(symbol.shndx) if symbol.defined else None
            if target is not None and target.index not in reached and target.type != E.SHT_NOBITS:
                reached.append(target.index)
                queue.append(target.index)
            if symbol.defined and symbol.local and target is not None and target.type == E.SHT_NOBITS:
                continue
            if not symbol.defined and policy.matches("initialiser-may-use", symbol.name):
                continue
            if symbol.type == E.STT_SECTION or symbol.name.startswith(".L"):
                data.append(f"{'code' if target is not None and target.executable else 'data'} in "
                            f"{target.name if target else symbol.name}")
            elif "{" + symbol.name + "}" not in named:
                named.append("{" + symbol.name + "}")
    found = named + sorted(set(data))
    return ", ".join(found[:3]) if found else None


# The instructions that the C++ library's own start-up code is made of (GCC's constructor of
# <iostream>'s std::ios_base::Init object, optimised or not): references to a symbol go through a
# relocation, which _reached_uses judges; a relocation-free start-up function (a computed call, a
# store through a pointer, a loop) is not one of the library's, whatever it refers to.
_X86_FIXED = [bytes.fromhex(h) for h in (
    "f30f1efa", "53", "5b", "55", "5d", "c9", "c3", "90", "6690", "4889e5", "4889df", "4889de", "4889c7",
    "4889c2", "4889c6", "0f1f00", "0f1f4000", "0f1f440000", "660f1f440000", "0f1f8000000000",
    "0f1f840000000000", "660f1f840000000000", "662e0f1f840000000000")]


def _startup_code_beyond_the_library(obj, function):
    """Where a start-up function, or a function of its file that it calls without a relocation,
    holds an instruction other than those of the C++ library's start-up code (x86-64), or None."""
    section = obj.section(function.shndx)
    relocated = {r.offset for r in obj.relocations.get(function.shndx, [])}
    data = section.data
    queue, seen = [function], set()
    while queue:
        current = queue.pop(0)
        if current.value in seen:
            continue
        seen.add(current.value)
        low, high = current.value, current.value + (current.size or len(data) - current.value)
        at, last = low, None
        while at < high:
            here = at
            while data[at:at + 1] == b"\x66" and data[at:at + 2] != b"\x66\x90" \
                    and not data[at:at + 3] == b"\x66\x0f\x1f" and not data[at:at + 3] == b"\x66\x2e\x0f":
                at += 1  # data16 prefixes of a padding nop
            fixed = next((f for f in _X86_FIXED if data.startswith(f, at)), None)
            op = data[at:at + 3]
            if fixed is not None:
                last, at = fixed, at + len(fixed)
            elif len(op) == 3 and op[0] in (0x48, 0x4C) and op[1] in (0x8D, 0x8B) and op[2] & 0xC7 == 0x05 \
                    and at + 3 in relocated:
                last, at = b"lea", at + 7  # lea/mov SYMBOL(%rip), %reg
            elif op[:1] in (b"\xe8", b"\xe9"):
                if at + 1 not in relocated:
                    target = at + 5 + int.from_bytes(data[at + 1:at + 5], "little", signed=True)
                    callee = obj.function_at(function.shndx, target)
                    if callee is not None and callee.value == target:
                        queue.append(callee)
                    elif not (op[0] == 0xE9 and low <= target < high):
                        return f"a call to {section.name}+{target:#x}, which is no function's start"
                last, at = (b"ret" if op[0] == 0xE9 else b"call"), at + 5
            elif op[:2] == b"\x48\x83" and op[2] in (0xEC, 0xC4):
                last, at = b"rsp", at + 4  # sub/add $imm8, %rsp
            elif op[:1] in (b"\xbe", b"\xbf"):
                last, at = b"imm", at + 5  # mov $imm32, %esi/%edi
            elif op[:1] == b"\x89" and op[1:2] in (b"\x7d", b"\x75"):
                last, at = b"frame", at + 3  # mov %edi/%esi, disp8(%rbp)
            elif op[:2] == b"\x83\x7d":
                last, at = b"cmp", at + 4  # cmpl $imm8, disp8(%rbp)
            elif op[:2] == b"\x81\x7d":
                last, at = b"cmp", at + 7  # cmpl $imm32, disp8(%rbp)
            elif op[:1] in (b"\x74", b"\x75") and len(op) >= 2:
                target = at + 2 + int.from_bytes(op[1:2], "little", signed=True)
                if not low <= target < high:
                    return f"a jump out of {{{current.name}}}"
                last, at = b"jcc", at + 2
            else:
                return f"{{{current.name}}}+{here - low:#x} holds {data[here:here + 8].hex(' ')}"
            if last in (b"\xc3", b"ret") and current.size == 0:
                break
        if last not in (b"\xc3", b"ret") and not (last is not None and last[:1] in (b"\x90", b"\x0f", b"\x66")):
            return f"{{{current.name}}} does not end in a return"
    return None


def _system_calls(obj, section):
    data = section.data
    if obj.machine == E.EM_X86_64:
        for pattern, instruction in _X86_SYSCALLS.items():
            at = data.find(pattern)
            if at >= 0:
                function = obj.function_at(section.index, at)
                where = f"{{{function.name}}}" if function else f"{section.name}+{at:#x}"
                yield f"holds a system-call instruction ({instruction}) in {where}: host code goes through the " \
                      f"C library, not straight to the kernel"
    elif obj.machine == E.EM_AARCH64:
        for at in range(0, len(data) - 3, 4):
            word = int.from_bytes(data[at:at + 4], "little")
            if word & 0xFFE0001F == 0xD4000001:
                function = obj.function_at(section.index, at)
                where = f"{{{function.name}}}" if function else f"{section.name}+{at:#x}"
                yield f"holds a system-call instruction (svc) in {where}: host code goes through the C library"
                break


# ---------------------------------------------------------------- inputs and report

def library_exports(paths):
    """{name: library} of what the shared libraries and archives of the program define."""
    exports = {}
    for path in paths:
        try:
            objects = E.read_objects(path)
        except (OSError, E.ElfError):
            continue  # a library that is not there or not ELF64 (a linker script): nothing to learn
        label = pathlib.Path(path).name
        for obj in objects:
            for name in E.defined_globals(obj):
                exports.setdefault(name, label)
    return exports


def judge_names(paths, given):
    defined, referenced = set(), set()
    for obj in [o for p in paths for o in E.read_objects(p)] + given:
        defined |= E.defined_globals(obj)
        referenced |= E.undefined(obj)
    return defined, referenced


def contract_names(test_objects, given, judge_defined, exports, policy):
    """What the tests and the given code call and nobody else defines: the contract's functions."""
    wanted = set()
    for obj in test_objects + given:
        wanted |= E.undefined(obj)
    return {n for n in wanted if n not in judge_defined and n not in exports and not policy.mentions(n)}


def report(case, violations, library, names):
    readable = demangle([n for _, n, _ in violations] + [m for _, _, msg in violations
                                                          for m in re.findall(r"\{([^}]*)\}", msg)])
    print(f"[ RUN      ] CodePolicy.{case}")
    if not violations:
        print(f"[       OK ] CodePolicy.{case}: {pathlib.Path(library).name} follows the course's code policy")
        return 0
    print("policy: Failure")
    seen = set()
    for obj, _, message in violations:
        text = re.sub(r"\{([^}]*)\}", lambda m: readable.get(m.group(1), m.group(1)), message)
        line = f"{source_name(obj.name)} {text}"
        if line not in seen:
            seen.add(line)
            print(line)
    print(f"(the code policy: {names})")
    print(f"[  FAILED  ] CodePolicy.{case}")
    return 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rule", choices=sorted(RULES), required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--given", action="append", default=[], help="an archive member that is given code")
    parser.add_argument("--status-dir", help="where the build launchers report student code that did not build")
    parser.add_argument("--judge", action="append", default=[], help="the tests' objects, the support library, ...")
    parser.add_argument("--judge-tests", action="append", default=[], help="the chapter's test objects")
    parser.add_argument("--shared-library", action="append", default=[])
    parser.add_argument("--policy", default=str(DEFAULT_POLICY))
    args = parser.parse_args(argv)
    case = RULES[args.rule]
    if args.status_dir and list(pathlib.Path(args.status_dir).glob("*.log")):
        print(f"[ RUN      ] CodePolicy.{case}\npolicy: Failure\nThe exercise code did not build (see the "
              f"Build.Compiles test), so its object code was not checked.\n[  FAILED  ] CodePolicy.{case}")
        return 1
    policy = Policy(args.policy)
    members = E.read_objects(args.library)
    given_names = set(args.given)
    given = [o for o in members if o.name in given_names]
    mine = [o for o in members if o.name not in given_names]
    if args.rule == "imports":
        library_defined = set().union(*(E.defined_globals(o) for o in members)) if members else set()
        violations = check_imports(mine, library_defined, policy)
    elif args.rule == "startup":
        violations = check_startup(mine, policy)
    else:
        exports = library_exports(args.shared_library)
        test_objects = [o for p in args.judge_tests for o in E.read_objects(p)]
        judge_defined, judge_undefined = judge_names(args.judge + args.judge_tests, given)
        contract = contract_names(test_objects, given, judge_defined, exports, policy)
        violations = check_definitions(mine, policy, contract, judge_defined, judge_undefined, exports)
    return report(case, violations, args.library, policy.path.name)


if __name__ == "__main__":
    sys.exit(main())
