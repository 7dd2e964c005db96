#pragma once
/// \file
/// Memory sealed with mseal (Linux 6.10 and newer): pages whose protection no later mprotect,
/// munmap or mremap can change. The judge seals its settings and every loaded object's code,
/// constants and relocation table, so that code under test can neither write them nor make them
/// writable again, even through the C library's own code (grading/threat-model.md).
#include <cstddef>

namespace course {

/// Whether this kernel has mseal (it answers ENOSYS before Linux 6.10).
bool kernel_can_seal();

/// Seals the whole pages of [start, start + bytes); false where the kernel refused or has no mseal.
bool seal_pages(const void* start, std::size_t bytes);

/// Seals the code, constants (read-only PT_LOAD segments) and RELRO pages of every object loaded
/// now: the program, its libraries, the vDSO and those loaded since (the CUDA driver once the
/// runtime has started, CUPTI once it records). Sealing what is sealed already changes nothing,
/// so it is called again whenever more may have been loaded. A sealed library cannot be unmapped:
/// dlclose leaves it mapped (the course's programs unload none before they exit).
void seal_loaded_objects();

}  // namespace course
