#include "course/seal.h"

#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace course {
namespace {
#ifndef SYS_mseal
#define SYS_mseal 462  // the same on x86-64 and AArch64
#endif
uintptr_t page_size() { return static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)); }
}  // namespace

bool kernel_can_seal() {
  static const bool can = [] {
    void* probe = mmap(nullptr, page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED) return false;
    const bool sealed = syscall(SYS_mseal, probe, page_size(), 0) == 0;
    if (!sealed) munmap(probe, page_size());  // (a sealed probe page stays: one page)
    return sealed;
  }();
  return can;
}

bool seal_pages(const void* start, std::size_t bytes) {
  const uintptr_t page = page_size();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(start) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(start) + bytes + page - 1) & ~(page - 1);
  return end > begin && syscall(SYS_mseal, begin, end - begin, 0) == 0;
}

void seal_loaded_objects() {
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void*) {
        const uintptr_t page = page_size();
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = object->dlpi_phdr[i];
          const uintptr_t begin = object->dlpi_addr + segment.p_vaddr;
          uintptr_t start = 0, end = 0;
          if (segment.p_type == PT_GNU_RELRO) {
            // The pages the loader made read-only (it rounds the end down, as glibc does).
            start = begin & ~(page - 1);
            end = (begin + segment.p_memsz) & ~(page - 1);
          } else if (segment.p_type == PT_LOAD && !(segment.p_flags & PF_W)) {
            start = begin & ~(page - 1);  // code and constants: whole pages
            end = (begin + segment.p_memsz + page - 1) & ~(page - 1);
          }
          // (A range with a gap the loader left unmapped is refused whole, ENOMEM: the rest stays.)
          if (end > start) (void)syscall(SYS_mseal, start, end - start, 0);
        }
        return 0;  // every object
      },
      nullptr);
}

}  // namespace course
