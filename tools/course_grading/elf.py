"""Reads relocatable objects, static archives and shared libraries (ELF64, little-endian) as plain
bytes: their sections, symbols and relocations. No tool of the machine parses student objects.

Only what the code policy needs (tools/course_grading/policy.py): x86-64 and AArch64, the two
hosts CUDA ships for. Anything malformed raises ElfError with what was wrong.
"""
import struct
from dataclasses import dataclass, field

# Section types and flags (System V ABI).
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 2, 3, 4, 8, 9, 11
SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY, SHT_GROUP, SHT_SYMTAB_SHNDX = 14, 15, 16, 17, 18
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
SHN_UNDEF, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xFFF1, 0xFFF2, 0xFFFF
STB_LOCAL, STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 0, 1, 2, 10
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE, STT_COMMON, STT_TLS, STT_GNU_IFUNC = 0, 1, 2, 3, 4, 5, 6, 10
EM_X86_64, EM_AARCH64 = 62, 183


class ElfError(ValueError):
    pass


@dataclass
class Section:
    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int
    data: bytes = b""

    @property
    def executable(self):
        return bool(self.flags & SHF_EXECINSTR)


@dataclass
class Symbol:
    index: int
    name: str
    bind: int
    type: int
    visibility: int
    shndx: int
    value: int
    size: int

    @property
    def defined(self):
        return self.shndx != SHN_UNDEF

    @property
    def local(self):
        return self.bind == STB_LOCAL

    @property
    def weak(self):
        return self.bind == STB_WEAK


@dataclass
class Relocation:
    offset: int
    type: int
    symbol: Symbol
    addend: int


@dataclass
class ElfFile:
    name: str
    machine: int
    sections: list
    symbols: list  # .symtab (objects) or .dynsym (shared libraries)
    relocations: dict = field(default_factory=dict)  # section index -> [Relocation] applied to it

    def section(self, index):
        return self.sections[index] if 0 <= index < len(self.sections) else None

    def functions_in(self, section_index):
        """The function symbols defined in a section, sorted by address."""
        found = [s for s in self.symbols if s.shndx == section_index and s.type in (STT_FUNC, STT_GNU_IFUNC)]
        return sorted(found, key=lambda s: s.value)

    def function_at(self, section_index, offset):
        """The function symbol whose range holds `offset` in a section (the nearest before it when
        sizes are missing), or None."""
        best = None
        for symbol in self.functions_in(section_index):
            if symbol.value <= offset and (symbol.size == 0 or offset < symbol.value + symbol.size):
                best = symbol
            elif symbol.value > offset:
                break
        return best


def _cstring(table, offset):
    if offset >= len(table):
        raise ElfError(f"string offset {offset} outside its table")
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", errors="replace")


def parse_elf(data, name="<object>"):
    """An ElfFile from the bytes of one ELF64 little-endian file."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ElfError(f"{name}: not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError(f"{name}: not a 64-bit little-endian ELF file")
    (_, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = struct.unpack_from(
        "<HHIQQQIHHHHHH", data, 16)
    if shoff == 0:
        raise ElfError(f"{name}: no section table")
    if shentsize != 64 or shoff + 64 > len(data):
        raise ElfError(f"{name}: malformed section table")
    first = struct.unpack_from("<IIQQQQIIQQ", data, shoff)
    if shnum == 0:
        shnum = first[5]
    if shstrndx == SHN_XINDEX:
        shstrndx = first[6]
    if shoff + shnum * 64 > len(data):
        raise ElfError(f"{name}: section table past the end of the file")
    raw = []
    for i in range(shnum):
        sh_name, sh_type, sh_flags, _, sh_offset, sh_size, sh_link, sh_info, _, sh_entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + 64 * i)
        if sh_type != SHT_NOBITS and sh_offset + sh_size > len(data):
            raise ElfError(f"{name}: section {i} past the end of the file")
        raw.append((sh_name, sh_type, sh_flags, sh_offset, sh_size, sh_link, sh_info, sh_entsize))
    if not 0 <= shstrndx < shnum:
        raise ElfError(f"{name}: no section name table")
    names = data[raw[shstrndx][3]:raw[shstrndx][3] + raw[shstrndx][4]]
    sections = []
    for i, (sh_name, sh_type, sh_flags, sh_offset, sh_size, sh_link, sh_info, sh_entsize) in enumerate(raw):
        body = b"" if sh_type == SHT_NOBITS else data[sh_offset:sh_offset + sh_size]
        sections.append(Section(i, _cstring(names, sh_name) if i else "", sh_type, sh_flags, sh_offset, sh_size,
                                sh_link, sh_info, sh_entsize, body))

    # The symbol table: .symtab in objects, .dynsym in shared libraries (stripped of .symtab).
    table = next((s for s in sections if s.type == SHT_SYMTAB), None) or \
        next((s for s in sections if s.type == SHT_DYNSYM), None)
    symbols = []
    if table is not None:
        strings = sections[table.link].data if 0 <= table.link < len(sections) else b""
        extended = next((s for s in sections if s.type == SHT_SYMTAB_SHNDX and s.link == table.index), None)
        for i in range(len(table.data) // 24):
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", table.data, 24 * i)
            if st_shndx == SHN_XINDEX and extended is not None:
                st_shndx = struct.unpack_from("<I", extended.data, 4 * i)[0]
            symbol_name = _cstring(strings, st_name) if st_name else ""
            symbols.append(Symbol(i, symbol_name, st_info >> 4, st_info & 0xF, st_other & 3, st_shndx, st_value,
                                  st_size))
        for symbol in symbols:  # a section symbol is named after its section
            if symbol.type == STT_SECTION and not symbol.name and 0 < symbol.shndx < len(sections):
                symbol.name = sections[symbol.shndx].name

    elf = ElfFile(name, machine, sections, symbols)
    for section in sections:
        if section.type not in (SHT_RELA, SHT_REL) or table is None or section.link != table.index:
            continue
        entry = 24 if section.type == SHT_RELA else 16
        relocations = []
        for i in range(len(section.data) // entry):
            if section.type == SHT_RELA:
                r_offset, r_info, r_addend = struct.unpack_from("<QQq", section.data, entry * i)
            else:
                (r_offset, r_info), r_addend = struct.unpack_from("<QQ", section.data, entry * i), 0
            index = r_info >> 32
            if index >= len(symbols):
                raise ElfError(f"{name}: relocation to symbol {index} of {len(symbols)}")
            relocations.append(Relocation(r_offset, r_info & 0xFFFFFFFF, symbols[index], r_addend))
        elf.relocations.setdefault(section.info, []).extend(relocations)
    return elf


def archive_members(data, name="<archive>"):
    """[(member name, bytes)] of a System V / GNU `ar` archive, without its symbol index and
    long-name table."""
    if not data.startswith(b"!<arch>\n"):
        if data.startswith(b"!<thin>\n"):
            raise ElfError(f"{name}: a thin archive (its members live elsewhere)")
        raise ElfError(f"{name}: not an ar archive")
    members, long_names, at = [], b"", 8
    while at + 60 <= len(data):
        header = data[at:at + 60]
        if header[58:60] != b"`\n":
            raise ElfError(f"{name}: malformed member header at byte {at}")
        raw_name = header[0:16].decode("ascii", errors="replace").rstrip()
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError:
            raise ElfError(f"{name}: malformed member size at byte {at}") from None
        body = data[at + 60:at + 60 + size]
        if len(body) != size:
            raise ElfError(f"{name}: member at byte {at} past the end of the archive")
        at += 60 + size + (size & 1)
        if raw_name in ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            continue
        if raw_name == "//":
            long_names = body
            continue
        if raw_name.startswith("/") and raw_name[1:].isdigit():
            offset = int(raw_name[1:])
            end = long_names.find(b"/\n", offset)
            member_name = long_names[offset:end if end >= 0 else len(long_names)].decode("utf-8", errors="replace")
        elif raw_name.startswith("#1/"):  # BSD long name: the name precedes the data
            length = int(raw_name[3:])
            member_name, body = body[:length].rstrip(b"\0").decode("utf-8", errors="replace"), body[length:]
        else:
            member_name = raw_name[:-1] if raw_name.endswith("/") else raw_name
        members.append((member_name, body))
    return members


def read_objects(path):
    """[ElfFile] of an object file, or of every ELF member of an archive."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(b"!<arch>\n") or data.startswith(b"!<thin>\n"):
        return [parse_elf(body, member) for member, body in archive_members(data, str(path))
                if body.startswith(b"\x7fELF")]
    return [parse_elf(data, str(path))]


def defined_globals(elf):
    """Names of the symbols an ELF file defines and exports (global, weak or unique)."""
    return {s.name for s in elf.symbols if s.defined and not s.local and s.name and s.type != STT_SECTION}


def undefined(elf):
    """Names of the symbols an ELF file references without defining them (weak ones too)."""
    return {s.name for s in elf.symbols if not s.defined and s.name and s.index != 0}
