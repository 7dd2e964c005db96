/// @file guards.h
/// @brief Guard zones around every buffer the tests hand to student code, so that a write past
/// either end is caught on the spot and named ("wrote 31 elements past the end of out").
///
/// DeviceBuffer and PinnedHostBuffer allocate kGuardBytes more on each side, fill both zones
/// with kGuardByte and register themselves here; CUDA_CHECK_LAUNCH (and the timing helpers)
/// check every live zone after each call of student code.
#pragma once

#include <cstddef>
#include <string>

namespace course {

/// Bytes of guard on each side of a buffer: a multiple of 256, so the data keeps the
/// alignment of cudaMalloc; 1 MiB holds a whole stray tile row of the largest test shapes.
constexpr std::size_t kGuardBytes = std::size_t{1} << 20;
/// What a guard zone holds: not the 0xFF poison of unwritten outputs, and not a plausible value.
constexpr unsigned char kGuardByte = 0xC3;

/// Allocates `data_bytes` (cudaMalloc on the device, else cudaMallocHost) between two guard
/// zones and registers them; returns the data's address (nullptr for 0 bytes).
void* guarded_allocate(std::size_t data_bytes, std::size_t element_bytes, bool on_device, const std::string& name);
/// Unregisters and frees what guarded_allocate returned (never throws; nullptr is ignored).
void guarded_free(void* data, bool on_device) noexcept;

/// Registers the buffer whose data (data_bytes) starts kGuardBytes into the allocation at
/// `base`, and fills its guard zones. `element_bytes` is the size of one element (messages
/// count elements); `on_device` says whether base is device or host memory.
void guard_register(void* base, std::size_t data_bytes, std::size_t element_bytes, bool on_device,
                    std::string name);
/// Forgets the buffer at `base` (before it is freed).
void guard_unregister(void* base);
/// Renames the registered buffer at `base` (what messages call it).
void guard_rename(void* base, std::string name);

/// Checks every registered buffer's guard zones; returns "" when intact, else one line per
/// damaged buffer, e.g. "wrote 31 elements past the end of out (a buffer of 3000000 floats;
/// first at element 3000000, i.e. offset 0 past the end)". Damaged zones are refilled, so that
/// a later check reports only new damage. The device must be idle (synchronise first).
std::string guard_check_all();

/// The text of one damaged guard zone (CPU only; used by guard_check_all and unit tests).
/// `zone` holds the zone's bytes; `after_end` tells which side it is.
std::string describe_guard_damage(const unsigned char* zone, std::size_t zone_bytes, std::size_t data_bytes,
                                  std::size_t element_bytes, bool after_end, const std::string& name);

}  // namespace course
