#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CFerrySystem.h"

#include <errno.h>
#ifdef __linux__
#include <fcntl.h>
#endif

int ferry_start_writeback(int descriptor, int64_t offset, int64_t length) {
#ifdef __linux__
    return sync_file_range(descriptor, offset, length, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)descriptor;
    (void)offset;
    (void)length;
    return 0;
#endif
}
