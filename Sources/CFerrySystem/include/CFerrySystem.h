// System calls Swift's Glibc module does not expose (they need _GNU_SOURCE). FerrySecurity wraps them.
#ifndef CFERRY_SYSTEM_H
#define CFERRY_SYSTEM_H

#include <stdint.h>

/// Starts writing the dirty pages of `length` bytes at `offset` of a file to its disk, without waiting for them
/// (Linux's sync_file_range with SYNC_FILE_RANGE_WRITE; a length of 0 means to the end of the file). Returns 0, or
/// the errno of a failure. Elsewhere it does nothing and returns 0.
int ferry_start_writeback(int descriptor, int64_t offset, int64_t length);

#endif
