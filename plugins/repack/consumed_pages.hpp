// Gives the pages of a source tensor back as the repack moves past them.
//
// While a tensor is repacked, its source (mapped from the input file) and its whole output are
// resident together: for a 70 MB Q8_0 embedding that is 140 MB. Reader views drop their pages
// only when released, after the writer is done. Dropping each piece as soon as it is consumed
// keeps the peak near the output's size alone.
//
// Only pages of a read-only, file-backed mapping are dropped: for those MADV_DONTNEED is
// invisible (a later access faults the same bytes in again from the page cache). Anything else
// (an upstream transform's buffer, where it would zero the memory) is left alone.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <span>

namespace ck::repack {

class ConsumedPages {
  public:
    explicit ConsumedPages(std::span<const std::byte> source)
        : begin_(reinterpret_cast<std::uintptr_t>(source.data())),
          end_(begin_ + source.size()),
          released_(begin_),
          page_(static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE))) {
        droppable_ = !source.empty() && in_read_only_file_mapping();
    }

    // Drops the whole pages below `consumed_up_to` not dropped yet.
    void release_before(const std::byte* consumed_up_to) {
        if (!droppable_) return;
        const auto limit = reinterpret_cast<std::uintptr_t>(consumed_up_to) / page_ * page_;
        const std::uintptr_t from = released_ / page_ * page_;
        if (limit <= from) return;
        ::madvise(reinterpret_cast<void*>(from), limit - from, MADV_DONTNEED);
        released_ = limit;
    }

  private:
    bool in_read_only_file_mapping() const {
        std::FILE* maps = std::fopen("/proc/self/maps", "r");
        if (!maps) return false;
        bool found = false;
        char line[4096];
        while (!found && std::fgets(line, sizeof line, maps)) {
            std::uintmax_t start = 0, end = 0, offset = 0, inode = 0;
            char perms[5] = {};
            unsigned major = 0, minor = 0;
            if (std::sscanf(line, "%jx-%jx %4s %jx %x:%x %ju", &start, &end, perms, &offset, &major,
                            &minor, &inode) != 7)
                continue;
            if (start <= begin_ && end_ <= end)
                found = perms[0] == 'r' && perms[1] == '-' && inode != 0;
            if (start <= begin_ && begin_ < end) break;  // the mapping that holds the source
        }
        std::fclose(maps);
        return found;
    }

    std::uintptr_t begin_, end_, released_, page_;
    bool droppable_ = false;
};

}  // namespace ck::repack
